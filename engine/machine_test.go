package engine_test

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

var update = flag.Bool("update", false, "rewrite the want sections of engine/testdata/*.txt")

// TestMachine runs the data-driven cases in testdata/machine: each file
// holds a workflow (-- wf --), optional parameters (-- params --, JSON), a
// script that plays the driver (-- script --), and the expected trace
// (-- want --). Script lines:
//
//	complete NODE[#ITEM] {json outputs}   report success of the running task
//	fail NODE[#ITEM] message              report failure
//	interrupt NODE question               the action asks a person
//	resume NODE {json outputs}            the person answers
//	late NODE[#ITEM] {json outputs}       complete, late, a task the run forgot
//	                                      (gone after a restore: then nothing)
//
// The machine is driven directly: no goroutines, no clock, so the order of
// completions, and so the trace, is exactly what the script says.
func TestMachine(t *testing.T) {
	files, err := filepath.Glob("testdata/machine/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			sections, order := readSections(t, file)
			got := runScript(t, file, sections, scriptPlain)
			if *update {
				sections["want"] = got
				writeSections(t, file, sections, order)
				return
			}
			if want := sections["want"]; got != want {
				t.Errorf("trace mismatch\n--- got ---\n%s--- want ---\n%s", got, want)
			}
		})
	}
}

func readSections(t *testing.T, file string) (map[string]string, []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	var order []string
	cur := ""
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(strings.TrimSpace(line), " --") {
			cur = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "-- "), " --")
			order = append(order, cur)
			sections[cur] = ""
			continue
		}
		if cur != "" {
			sections[cur] += line
		}
	}
	if !slices.Contains(order, "want") {
		order = append(order, "want")
	}
	return sections, order
}

func writeSections(t *testing.T, file string, sections map[string]string, order []string) {
	t.Helper()
	var b strings.Builder
	for _, name := range order {
		fmt.Fprintf(&b, "-- %s --\n%s", name, sections[name])
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func compile(t testing.TB, name, src string) *flow.Plan {
	t.Helper()
	m, ds := lang.LoadSource(name, []byte(src), nil)
	if ds.HasErrors() {
		t.Fatalf("workflow does not load:\n%v", ds)
	}
	plan, ds := flow.Compile(m.Main(), nil)
	if ds.HasErrors() {
		t.Fatalf("workflow does not compile:\n%v", ds)
	}
	return plan
}

// TestMachineRestore runs every data-driven case again, but after each
// script line it snapshots the machine, encodes the snapshot as JSON,
// decodes it and goes on with a machine restored from it: the trace must
// be the same. It also folds the per-step deltas onto the first snapshot
// and checks the result equals a fresh snapshot.
func TestMachineRestore(t *testing.T) {
	files, _ := filepath.Glob("testdata/machine/*.txt")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			sections, _ := readSections(t, file)
			if got, want := runScript(t, file, sections, scriptRestore), sections["want"]; got != want {
				t.Errorf("trace after restores differs\n--- got ---\n%s--- want ---\n%s", got, want)
			}
		})
	}
}

// TestMachineReady drives every data-driven case with Ready and Advance,
// the script's results reported between a Ready and its Advance: the trace
// is the same, and the Readys' deltas folded from an empty State equal a
// snapshot after every Ready.
func TestMachineReady(t *testing.T) {
	files, _ := filepath.Glob("testdata/machine/*.txt")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			sections, _ := readSections(t, file)
			if got, want := runScript(t, file, sections, scriptReady), sections["want"]; got != want {
				t.Errorf("trace with Ready differs\n--- got ---\n%s--- want ---\n%s", got, want)
			}
		})
	}
}

// TestSnapshotPure runs every data-driven case with a Snapshot taken (and
// dropped) before each Delta: looking at the state must not move the
// delta baseline, so the deltas folded onto the first snapshot still equal
// a fresh snapshot after every script line, and the trace is unchanged.
func TestSnapshotPure(t *testing.T) {
	files, _ := filepath.Glob("testdata/machine/*.txt")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			sections, _ := readSections(t, file)
			if got, want := runScript(t, file, sections, scriptPeek), sections["want"]; got != want {
				t.Errorf("trace with snapshots differs\n--- got ---\n%s--- want ---\n%s", got, want)
			}
		})
	}
}

// scriptMode says what runScript does after each script line.
type scriptMode int

const (
	scriptPlain   scriptMode = iota // nothing
	scriptRestore                   // fold the delta, compare with a snapshot, restore from it
	scriptPeek                      // take a snapshot, then fold the delta and compare with another
	scriptReady                     // drive with Ready and Advance, folding each Ready's delta
)

func runScript(t *testing.T, file string, sections map[string]string, mode scriptMode) string {
	restore := mode == scriptRestore || mode == scriptPeek
	plan := compile(t, file+"#wf", sections["wf"])
	params := map[string]flow.Value{}
	if p := strings.TrimSpace(sections["params"]); p != "" {
		var v flow.Value
		if err := json.Unmarshal([]byte(p), &v); err != nil {
			t.Fatalf("params: %v", err)
		}
		params = v.Object()
	}
	var out strings.Builder
	m, err := engine.NewMachine(plan, params, true)
	if err != nil {
		fmt.Fprintf(&out, "start error: %v\n", err)
		return out.String()
	}
	running := map[string]*engine.Task{}
	key := func(tk *engine.Task) string {
		if tk.Item > 0 {
			return tk.Name + "#" + strconv.Itoa(tk.Item)
		}
		return tk.Name
	}
	var folded *engine.State
	flush := func() {
		for _, e := range m.Events() {
			fmt.Fprintf(&out, "%s\n", e)
		}
		for _, tk := range m.TakeTasks() {
			running[key(tk)] = tk
		}
	}
	if mode == scriptReady {
		// The script's Complete calls come between a Ready and its
		// Advance: Advance moves the baseline to the Ready's point.
		folded = &engine.State{Workflow: plan.Workflow.Name}
		var rd engine.Ready
		started := false
		flush = func() {
			if started {
				m.Advance(rd)
				m.Advance(rd) // a Ready acknowledged already is ignored
			}
			started = true
			rd = m.Ready()
			for _, e := range rd.Events {
				fmt.Fprintf(&out, "%s\n", e)
			}
			for _, tk := range rd.Tasks {
				running[key(tk)] = tk
			}
			if rd.Status != m.Status() || rd.Delta.Control.Status != m.Status() {
				t.Fatalf("Ready's status %s (control %s), the machine's %s", rd.Status, rd.Delta.Control.Status, m.Status())
			}
			if err := folded.Fold(rd.Delta.Cells, rd.Delta.Control); err != nil {
				t.Fatalf("folding a Ready's delta: %v", err)
			}
			a, _ := json.Marshal(folded)
			b, _ := json.Marshal(m.Snapshot())
			if string(a) != string(b) {
				t.Fatalf("folded Ready deltas differ from the snapshot\nfolded:   %s\nsnapshot: %s", a, b)
			}
		}
	}
	flush()
	if restore {
		m.Delta() // the deltas start from the snapshot: move the baseline to it
		folded = m.Snapshot()
	}
	sc := bufio.NewScanner(strings.NewReader(sections["script"]))
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		target, arg, _ := strings.Cut(rest, " ")
		tk := running[target]
		if verb == "late" && tk == nil && mode == scriptRestore {
			continue // the restored run does not have it
		}
		if verb == "resume" {
			for _, w := range m.Waiting() {
				if key(w) == target {
					tk = w
				}
			}
		}
		if tk == nil {
			t.Fatalf("script line %d: %q: no task for %s (running: %v)", lineNo, line, target, keys(running))
		}
		delete(running, target)
		var err error
		switch verb {
		case "complete", "resume", "late":
			outs := make([]flow.Value, len(tk.Node.Outputs))
			var v flow.Value
			if strings.TrimSpace(arg) != "" {
				if err := json.Unmarshal([]byte(arg), &v); err != nil {
					t.Fatalf("script line %d: %v", lineNo, err)
				}
			}
			for i, o := range tk.Node.Outputs {
				outs[i] = v.Object()[o.Name]
			}
			if verb == "resume" {
				err = m.Resume(tk.ID, outs)
			} else {
				err = m.Complete(tk.ID, outs, nil)
			}
		case "fail":
			err = m.Complete(tk.ID, nil, fmt.Errorf("%s", arg))
		case "interrupt":
			err = m.Complete(tk.ID, nil, &engine.Interrupt{Question: flow.StringValue(arg)})
		default:
			t.Fatalf("script line %d: unknown verb %q", lineNo, verb)
		}
		if err != nil {
			t.Fatalf("script line %d: %v", lineNo, err)
		}
		flush()
		if restore {
			if mode == scriptPeek {
				m.Snapshot() // must not change what Delta returns
			}
			delta, ctl := m.Delta()
			if err := folded.Fold(delta, ctl); err != nil {
				t.Fatalf("script line %d: folding the delta: %v", lineNo, err)
			}
			snap := m.Snapshot()
			a, _ := json.Marshal(folded)
			b, err := json.Marshal(snap)
			if err != nil {
				t.Fatalf("script line %d: encoding the snapshot: %v", lineNo, err)
			}
			if string(a) != string(b) {
				t.Fatalf("script line %d: folded deltas differ from the snapshot\nfolded:   %s\nsnapshot: %s", lineNo, a, b)
			}
			if mode == scriptPeek {
				continue
			}
			var decoded engine.State
			if err := json.Unmarshal(b, &decoded); err != nil {
				t.Fatalf("script line %d: decoding the snapshot: %v", lineNo, err)
			}
			if m, err = engine.RestoreMachine(plan, &decoded, true); err != nil {
				t.Fatalf("script line %d: restoring: %v", lineNo, err)
			}
			running = map[string]*engine.Task{}
			flush()
		}
	}
	fmt.Fprintf(&out, "status: %s\n", m.Status())
	fmt.Fprintf(&out, "path: %s\n", strings.Join(m.Path(), " "))
	if vs := m.Vars(); len(vs) > 0 {
		var parts []string
		for _, v := range vs {
			parts = append(parts, v.Name+"="+v.Value.String())
		}
		fmt.Fprintf(&out, "vars: %s\n", strings.Join(parts, " "))
	}
	if err := m.Err(); err != nil {
		fmt.Fprintf(&out, "error: %v\n", err)
	}
	if len(running) > 0 {
		fmt.Fprintf(&out, "still running: %v\n", keys(running))
	}
	return out.String()
}

func keys(m map[string]*engine.Task) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
