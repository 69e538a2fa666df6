package wftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

func run(t *testing.T, path string, opts Options) *Report {
	t.Helper()
	rep, err := Run(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Run(%s): %v", path, err)
	}
	return rep
}

func printed(rep *Report, verbose bool) string {
	var b bytes.Buffer
	rep.Print(&b, verbose)
	return b.String()
}

// TestIntentQAExample runs the example suite of seed 000 end to end.
func TestIntentQAExample(t *testing.T) {
	rep := run(t, "../examples/intentqa/intentqa.test.yaml", Options{})
	if rep.Failed != 0 || rep.Passed != 10 {
		t.Fatalf("want 10 passed, 0 failed; got:\n%s", printed(rep, true))
	}
	s := rep.Suites[0]
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	byName := map[string]*CaseResult{}
	for _, c := range s.Cases {
		byName[c.Name] = c
		if c.Result == nil {
			t.Errorf("%s: no Result", c.Name)
		}
	}
	// Spot checks on the Results, beyond what the file asserts.
	if r := byName["four bad retrievals end in an error answer"].Result; r.Steps != 13 || r.Final != "generate" {
		t.Errorf("bad retrievals: steps %d, final %q", r.Steps, r.Final)
	}
	if r := byName["unclear request waits for the user"].Result; r.Status != engine.Waiting || len(r.Waiting) != 1 || r.Waiting[0].Node != "ask_user" {
		t.Errorf("waiting case: %+v", r)
	}
	// The directory form finds the same file.
	if rep := run(t, "../examples/intentqa", Options{}); rep.Passed != 10 || rep.Failed != 0 || len(rep.Suites) != 1 {
		t.Errorf("directory run: %d passed, %d failed, %d suites", rep.Passed, rep.Failed, len(rep.Suites))
	}
}

// TestWrongExpectations checks every kind of mismatch message.
func TestWrongExpectations(t *testing.T) {
	rep := run(t, "testdata/wrong.test.yaml", Options{})
	want := map[string][]string{
		"wrong path": {
			"path: step 4: want rephrase, got generate\n" +
				"  want: [identify_intent, retrieve, evaluate, rephrase, retrieve, evaluate, generate]\n" +
				"  got:  [identify_intent, retrieve, evaluate, generate]",
		},
		"path too short": {
			"path: step 3: want end of path, got evaluate\n" +
				"  want: [identify_intent, retrieve]\n" +
				"  got:  [identify_intent, retrieve, evaluate, generate]",
		},
		"wrong output": {
			`output.answer: want "Revenue was $100 billion.", got "Apple's 2019 revenue was $260.2 billion."`,
			`output.confidence: want 0.9, got no such output (outputs: answer)`,
		},
		"wrong calls": {
			`calls.evaluate_relevance[0].chunks: want 2 elements, got 1: want ["chunk", "other"], got ["chunk"]`,
			`calls.generate_answer[0].source: want "ERROR: no relevant chunks after retries", got ["chunk"]`,
			`calls.generate_answer[1]: want a call with {source: "again"}, got only 1 call`,
			`calls.rephrase_query: want no calls, got 1: {query: "What was Apple's 2019 revenue?"}`,
			`calls.retrieve_financial_documents[0].qurey: want "What was Apple's 2019 revenue?", got no such input (inputs: query)`,
			`calls.summarize[0]: want a call with {query: "What was Apple's 2019 revenue?"}, got no calls`,
		},
		"wrong status": {
			"status: want completed, got waiting at ask_user",
		},
		"wrong error": {
			`error: want an error containing "timeout", got: node evaluate (step 3) failed: stub list for action "evaluate_relevance" ran out after 0 calls`,
		},
		"error expected but completed": {
			"status: want failed, got completed",
			`error: want an error containing "boom", got none (status completed)`,
		},
		"wrong vars": {
			"vars.nosuch: want 1, got no such variable (variables: rephraseCount)",
			"vars.rephraseCount: want 5, got 0",
		},
		"wrong waiting node": {
			"waiting.node: want retrieve, got ask_user",
		},
		"wrong waiting question": {
			`waiting.question: want "Which company?", got "Could you clarify your request?"`,
		},
		"misspelt stub": {
			`stubs.evaluate_relevence: no node calls an action "evaluate_relevence", and no node without an action has that name; did you mean "evaluate_relevance"?`,
		},
	}
	// These quote the engine's own error text; only their start is fixed here.
	prefixes := map[string][]string{
		"unexpected failure": {
			`status: want completed, got failed: node identify_intent (step 1) failed: node identify_intent, output intent: value "chitchat"`,
		},
		"unstubbed action": {
			`status: want completed, got failed: node retrieve (step 2) failed: node retrieve: no implementation for action "retrieve_financial_documents"`,
			"path: step 3: want evaluate, got end of run\n" +
				"  want: [identify_intent, retrieve, evaluate, generate]\n" +
				"  got:  [identify_intent, retrieve]",
		},
	}
	if rep.Passed != 0 || rep.Failed != len(want)+len(prefixes) {
		t.Errorf("want 0 passed, %d failed; got %d, %d", len(want)+len(prefixes), rep.Passed, rep.Failed)
	}
	seen := 0
	for _, c := range rep.Suites[0].Cases {
		if c.Passed {
			t.Errorf("%s: passed", c.Name)
		}
		if w, ok := want[c.Name]; ok {
			seen++
			if !slices.Equal(c.Failures, w) {
				t.Errorf("%s: failures\n%s\nwant\n%s", c.Name, strings.Join(c.Failures, "\n"), strings.Join(w, "\n"))
			}
			continue
		}
		w, ok := prefixes[c.Name]
		if !ok {
			t.Errorf("unexpected case %q", c.Name)
			continue
		}
		seen++
		if len(c.Failures) != len(w) {
			t.Errorf("%s: failures\n%s\nwant %d", c.Name, strings.Join(c.Failures, "\n"), len(w))
			continue
		}
		for i := range w {
			if !strings.HasPrefix(c.Failures[i], w[i]) {
				t.Errorf("%s: failure %d is\n%s\nwant a prefix\n%s", c.Name, i, c.Failures[i], w[i])
			}
		}
	}
	if seen != len(want)+len(prefixes) {
		t.Errorf("saw %d of %d cases", seen, len(want)+len(prefixes))
	}
	// Print shows each failing case and its indented failures.
	out := printed(rep, false)
	for _, s := range []string{
		"FAIL wrong path\n    path: step 4: want rephrase, got generate\n      want: [identify_intent,",
		"FAIL wrong vars\n    vars.nosuch: want 1, got no such variable (variables: rephraseCount)\n    vars.rephraseCount: want 5, got 0\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("Print output lacks %q:\n%s", s, out)
		}
	}
	if !strings.HasSuffix(out, "\n0 passed, 13 failed\n") {
		t.Errorf("closing line: %q", out[max(0, len(out)-40):])
	}
}

// TestStubFeatures covers node-name stubs, human nodes, error replies with
// retries and error edges, and unstubbed actions.
func TestStubFeatures(t *testing.T) {
	rep := run(t, "testdata/desk.test.yaml", Options{})
	if rep.Failed != 0 || rep.Passed != 6 {
		t.Fatalf("got:\n%s", printed(rep, true))
	}
}

// TestRegistryAndNotes: a Go action from Options.Registry is used and
// recorded; stubs override it; unused stubs are notes shown in verbose.
func TestRegistryAndNotes(t *testing.T) {
	base := engine.NewRegistry()
	var cachedCalls int
	base.Register("cached_quote", engine.Func(func(_ context.Context, in map[string]flow.Value) (map[string]flow.Value, error) {
		cachedCalls++
		return map[string]flow.Value{"price": flow.FloatValue(42)}, nil
	}))
	base.Register("classify", engine.Func(func(context.Context, map[string]flow.Value) (map[string]flow.Value, error) {
		return nil, errors.New("the Go classify must be overridden by the stub")
	}))
	wf, err := filepath.Abs("testdata/desk.wf")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "go.test.yaml")
	src := "workflow: " + wf + `
cases:
  - name: Go action on the error edge
    stubs:
      classify: [{kind: quote}]
      fetch_quote: [{error: down}, {error: down}, {error: down}, {price: 1.5}]
    expect:
      path: [route, quote, fallback, done]
      calls:
        cached_quote: [{symbol: AAPL}]
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := run(t, file, Options{Registry: base})
	if rep.Failed != 0 || rep.Passed != 1 {
		t.Fatalf("got:\n%s", printed(rep, true))
	}
	if cachedCalls != 1 {
		t.Errorf("cached_quote called %d times", cachedCalls)
	}
	// The fourth fetch_quote reply is left unused: a note, not a failure.
	c := rep.Suites[0].Cases[0]
	if want := []string{"unused stubs: fetch_quote: 1 of 4 replies left"}; !slices.Equal(c.Notes, want) {
		t.Errorf("notes %q, want %q", c.Notes, want)
	}
	out := printed(rep, true)
	if !strings.Contains(out, "    unused stubs: fetch_quote: 1 of 4 replies left\n") || !strings.Contains(out, "    run: completed after [route, quote, fallback, done]\n") {
		t.Errorf("verbose output:\n%s", out)
	}
	if strings.Contains(printed(rep, false), "unused") {
		t.Errorf("notes shown without verbose")
	}
	// Without the Registry, nothing provides cached_quote: the case fails
	// to compile, with formatted diagnostics.
	rep = run(t, "testdata/unstubbed.test.yaml", Options{})
	f := rep.Suites[0].Cases[0].Failures
	if rep.Failed != 1 || len(f) != 1 || !strings.HasPrefix(f[0], "workflow does not compile") ||
		!strings.Contains(f[0], "testdata/desk.wf:60:5: node fallback: unknown action \"cached_quote\"") ||
		!strings.Contains(f[0], "\n    node fallback {\n    ^") {
		t.Errorf("failures: %q", f)
	}
	if rep.Suites[0].Cases[0].Result != nil {
		t.Errorf("a case that does not compile has a Result")
	}
}

func TestSuiteCompileError(t *testing.T) {
	rep := run(t, "testdata/broken", Options{})
	if rep.Failed != 1 || rep.Passed != 0 || len(rep.Suites) != 1 {
		t.Fatalf("got:\n%s", printed(rep, false))
	}
	var ce *CompileError
	if !errors.As(rep.Suites[0].Err, &ce) {
		t.Fatalf("Err is %T %v", rep.Suites[0].Err, rep.Suites[0].Err)
	}
	want := "testdata/broken/broken.wf:7:11: "
	if !strings.HasPrefix(ce.Error(), want) || !ce.Diagnostics.HasErrors() {
		t.Errorf("error %q, want prefix %q", ce, want)
	}
	out := printed(rep, false)
	if !strings.HasPrefix(out, "FAIL testdata/broken/broken.test.yaml\n    testdata/broken/broken.wf:7:11: ") || !strings.HasSuffix(out, "\n0 passed, 1 failed\n") {
		t.Errorf("output:\n%s", out)
	}
}

func TestYAMLErrors(t *testing.T) {
	tests := []struct{ file, want string }{
		{"unknown_key.yaml", `unknown_key.yaml:7:7: cases[0].expect: unknown field "paht"; did you mean "path"?`},
		{"bad_stubs.yaml", `bad_stubs.yaml:5:17: cases[0].stubs.classify: want a list, got a mapping`},
		{"bad_type.yaml", `bad_type.yaml:4:12: cases[0].input: want a string, got a mapping`},
		{"missing_workflow.yaml", `missing_workflow.yaml:2:11: workflow missing.wf: no such file or directory`},
		{"bad_status.yaml", `bad_status.yaml:4:22: case "x": expect.status: want completed, failed or waiting, got "done"`},
		{"duplicate.yaml", `duplicate.yaml:5:11: case "same" is already defined at line 3`},
		{"error_reply.yaml", `error_reply.yaml:6:12: case "x": stubs.fetch_quote[0]: a reply with error fails the call and can have no other keys`},
		{"syntax.yaml", `syntax.yaml:3:11: sequence end token ']' not found`},
		{"vars_input.yaml", `vars_input.yaml:4:12: case "x": vars: input_text is the workflow input; set it with input:`},
		{"error_status.yaml", `error_status.yaml:4:21: case "x": expect.error checks failed runs, but the status expected is completed`},
		{"no_cases.yaml", `no_cases.yaml:1:1: no cases: write cases: [ {name: ..., input: ..., stubs: ..., expect: ...} ]`},
		{"no_workflow.yaml", `no_workflow.yaml:1:1: missing workflow: the .wf file to test, relative to this file`},
		{"empty.yaml", `empty.yaml:1:1: empty file`},
		{"nonexistent.yaml", `nonexistent.yaml: no such file or directory`},
	}
	for _, tt := range tests {
		path := filepath.Join("testdata", "yaml", tt.file)
		_, err := Load(path)
		if err == nil {
			t.Errorf("%s: no error", tt.file)
			continue
		}
		if got, want := err.Error(), filepath.Join("testdata", "yaml", tt.want); got != want {
			t.Errorf("%s:\n got %s\nwant %s", tt.file, got, want)
		}
		var fe *FileError
		if !errors.As(err, &fe) || fe.File != path {
			t.Errorf("%s: error %T is not a *FileError for the file", tt.file, err)
		}
	}
	// The unknown key's underlying go-yaml error is kept.
	_, err := Load("testdata/yaml/unknown_key.yaml")
	var fe *FileError
	if errors.As(err, &fe); fe == nil || fe.Err == nil || fe.Line != 7 {
		t.Errorf("unknown key: %#v", fe)
	}
	// Run reports a file that does not load as one failing suite.
	rep := run(t, "testdata/yaml/unknown_key.yaml", Options{})
	if rep.Failed != 1 || rep.Suites[0].Err == nil || len(rep.Suites[0].Cases) != 0 {
		t.Errorf("Run on a bad file: %+v", rep)
	}
}

func TestLoad(t *testing.T) {
	s, err := Load("../examples/intentqa/intentqa.test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Workflow != filepath.Join("..", "examples", "intentqa", "intentqa.wf") || len(s.Cases) != 10 {
		t.Fatalf("suite: %q, %d cases", s.Workflow, len(s.Cases))
	}
	c := s.Cases[2]
	if c.Name != "four bad retrievals end in an error answer" || c.Line != 77 {
		t.Errorf("case 3: %q at line %d", c.Name, c.Line)
	}
	if v := c.Expect.Vars["rephraseCount"]; v.Kind() != flow.KindInt || v.Int() != 3 {
		t.Errorf("rephraseCount %v (%s): YAML ints must stay Int", v, v.Kind())
	}
	if n := len(c.Stubs["evaluate_relevance"]); n != 4 {
		t.Errorf("%d evaluate_relevance replies", n)
	}
	// Defaults of status.
	for i, want := range map[int]string{0: StatusCompleted, 5: StatusWaiting, 6: StatusFailed, 8: StatusFailed} {
		if got := s.Cases[i].Expect.Status; got != want {
			t.Errorf("case %d status %q, want %q", i+1, got, want)
		}
	}
	if q := s.Cases[5].Expect.Waiting.Question; q == nil || q.Str() != "Could you clarify your request?" {
		t.Errorf("waiting question %v", q)
	}
	// An empty calls list asserts no call; a missing path is not checked.
	if l, ok := s.Cases[0].Expect.Calls["rephrase_query"]; !ok || l == nil || len(l) != 0 {
		t.Errorf("rephrase_query: %v %v", l, ok)
	}
	if s.Cases[8].Expect.Output != nil {
		t.Errorf("unset output is not nil")
	}
}

func TestRunDirectory(t *testing.T) {
	rep := run(t, "testdata/tree", Options{})
	var paths []string
	for _, s := range rep.Suites {
		paths = append(paths, filepath.ToSlash(s.Path))
	}
	want := []string{"testdata/tree/a_test.yaml", "testdata/tree/b.test.yaml", "testdata/tree/sub/c.test.yaml"}
	if !slices.Equal(paths, want) {
		t.Errorf("suites %q, want %q", paths, want)
	}
	if rep.Passed != 2 || rep.Failed != 1 {
		t.Errorf("%d passed, %d failed", rep.Passed, rep.Failed)
	}
	out := printed(rep, false)
	if !strings.HasPrefix(out, "=== testdata/tree/a_test.yaml\nFAIL a fails\n") || !strings.Contains(out, "=== testdata/tree/sub/c.test.yaml\nok   c passes (") {
		t.Errorf("output:\n%s", out)
	}

	if _, err := Run(context.Background(), "testdata/tree/nothing-here", Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: %v", err)
	}
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "x.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), empty, Options{}); err == nil || !strings.Contains(err.Error(), "no test files") {
		t.Errorf("empty directory: %v", err)
	}
	for name, want := range map[string]bool{"a.test.yaml": true, "a_test.yaml": true, "dir/x.test.yaml": true, "a.yaml": false, "a.test.yml": false, "test.yaml": false} {
		if IsTestFile(name) != want {
			t.Errorf("IsTestFile(%q) != %v", name, want)
		}
	}
}

func TestRunFilterAndObserver(t *testing.T) {
	var mu sync.Mutex
	events := map[string]int{}
	rep := run(t, "../examples/intentqa/intentqa.test.yaml", Options{
		Run: regexp.MustCompile(`^qa answered`),
		Observer: func(suite, name string, e engine.Event) {
			mu.Lock()
			defer mu.Unlock()
			if suite != "../examples/intentqa/intentqa.test.yaml" {
				panic("suite " + suite)
			}
			if e.Type == engine.NodeStarted {
				events[name]++
			}
		},
	})
	if rep.Passed != 2 || rep.Failed != 0 || len(rep.Suites[0].Cases) != 2 {
		t.Fatalf("got:\n%s", printed(rep, false))
	}
	want := map[string]int{"qa answered from the first retrieval": 4, "qa answered after two rephrasings": 10}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("node_started events %v, want %v", events, want)
	}
}

func TestPrint(t *testing.T) {
	rep := &Report{
		Suites: []*SuiteResult{{
			Path: "a.test.yaml",
			Cases: []*CaseResult{
				{Name: "first", Passed: true, Duration: 1234 * time.Microsecond},
				{Name: "second", Failures: []string{"status: want completed, got failed", "path: step 2: want b, got c\n  want: [a, b]\n  got:  [a, c]"}, Duration: time.Millisecond},
				{Name: "slow", Passed: true, Duration: 1500 * time.Millisecond},
			},
		}},
		Passed: 2,
		Failed: 1,
	}
	want := "ok   first (1.2ms)\n" +
		"FAIL second\n" +
		"    status: want completed, got failed\n" +
		"    path: step 2: want b, got c\n" +
		"      want: [a, b]\n" +
		"      got:  [a, c]\n" +
		"ok   slow (1.50s)\n" +
		"2 passed, 1 failed\n"
	if got := printed(rep, false); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	empty := printed(&Report{}, false)
	if empty != "0 passed, 0 failed\n" {
		t.Errorf("empty report: %q", empty)
	}
	// The closing line is alone on the last line, whatever precedes it.
	lines := strings.Split(strings.TrimSuffix(printed(rep, true), "\n"), "\n")
	if !regexp.MustCompile(`^\d+ passed, \d+ failed$`).MatchString(lines[len(lines)-1]) {
		t.Errorf("last line %q", lines[len(lines)-1])
	}
}

// TestRecorderParallel runs a fan-out whose four branches call the same
// stubbed action concurrently, and a Go action wrapped by the Recorder,
// many times; run it with -race.
func TestRecorderParallel(t *testing.T) {
	mod, ds := lang.Load("testdata/parallel.wf")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	parts := []string{"p0", "p1", "p2", "p3"}
	base := engine.NewRegistry()
	base.Register("score", engine.Func(func(_ context.Context, in map[string]flow.Value) (map[string]flow.Value, error) {
		return map[string]flow.Value{"score": flow.IntValue(int64(len(in["notes"].List())))}, nil
	}))
	base.Register("enrich", engine.Func(func(context.Context, map[string]flow.Value) (map[string]flow.Value, error) {
		return nil, errors.New("the stub must replace the Go action")
	}))
	for range 50 {
		reg, rec := NewStubRegistry(base, Stubs{
			"split":  {{"parts": flow.StringList(parts...)}},
			"enrich": {{"note": flow.StringValue("w")}, {"note": flow.StringValue("x")}, {"note": flow.StringValue("y")}, {"note": flow.StringValue("z")}},
		})
		plan, ds := flow.Compile(mod.Main(), &flow.CompileOptions{HasAction: reg.Has})
		if plan == nil {
			t.Fatal(ds)
		}
		var wg sync.WaitGroup
		wg.Go(func() { // read the Recorder while the run writes it
			for range 100 {
				_ = rec.Calls("enrich")
				_ = rec.Remaining()
			}
		})
		res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
		wg.Wait()
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("run: %v %v", res.Status, err)
		}
		if n := len(rec.Calls("split")); n != 1 {
			t.Fatalf("split called %d times", n)
		}
		var texts []string
		for _, c := range rec.Calls("enrich") {
			texts = append(texts, c["text"].Str())
		}
		slices.Sort(texts)
		if !slices.Equal(texts, parts) {
			t.Fatalf("enrich inputs %q", texts)
		}
		score := rec.Calls("score")
		if len(score) != 1 || len(score[0]["notes"].List()) != 4 || res.Output("score").Int() != 4 {
			t.Fatalf("score calls %v, output %v", score, res.Outputs)
		}
		if r := rec.Remaining(); len(r) != 0 {
			t.Fatalf("remaining %v", r)
		}
		if got := rec.Actions(); !slices.Equal(got, []string{"enrich", "score", "split"}) {
			t.Fatalf("actions %q", got)
		}
	}
	rep := run(t, "testdata/parallel.test.yaml", Options{})
	if rep.Failed != 0 {
		t.Fatalf("got:\n%s", printed(rep, true))
	}
}

// TestEngineMapRace runs a map node's elements concurrently through stubs:
// under -race it guards the engine's per-run action cache, which once was
// filled from the element goroutines.
func TestEngineMapRace(t *testing.T) {
	mod, ds := lang.Load("testdata/map.wf")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	parts := make([]string, 32)
	for i := range parts {
		parts[i] = fmt.Sprintf("part-%02d", i)
	}
	base := engine.NewRegistry()
	base.Register("score", engine.Func(func(_ context.Context, in map[string]flow.Value) (map[string]flow.Value, error) {
		return map[string]flow.Value{"score": flow.IntValue(int64(len(in["text"].Str())))}, nil
	}))
	for range 20 {
		reg, rec := NewStubRegistry(base, Stubs{"split": {{"parts": flow.StringList(parts...)}}})
		plan, ds := flow.Compile(mod.Main(), &flow.CompileOptions{HasAction: reg.Has})
		if plan == nil {
			t.Fatal(ds)
		}
		res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("run: %v %v", res.Status, err)
		}
		if n := len(rec.Calls("score")); n != len(parts) {
			t.Fatalf("score called %d times", n)
		}
	}
}

func TestStubRegistry(t *testing.T) {
	base := engine.NewRegistry()
	base.Register("echo", engine.Func(func(_ context.Context, in map[string]flow.Value) (map[string]flow.Value, error) {
		return map[string]flow.Value{"out": in["in"]}, nil
	}))
	base.Register("replaced", engine.Func(func(context.Context, map[string]flow.Value) (map[string]flow.Value, error) {
		return nil, errors.New("not the stub")
	}))
	stubs := Stubs{"replaced": {{"out": flow.IntValue(1)}, {"error": flow.StringValue("boom")}}}
	reg, rec := NewStubRegistry(base, stubs)
	if !reg.Has("echo") || !reg.Has("replaced") || reg.Has("ask_user") {
		t.Fatalf("names %q", reg.Names())
	}
	if len(stubs["replaced"]) != 2 {
		t.Fatal("NewStubRegistry changed the stubs")
	}
	node := &flow.PlanNode{Name: "n", Inputs: []flow.PlanInput{{Name: "in"}}, Outputs: []flow.PlanOutput{{Name: "out"}}}
	call := func(name string, in flow.Value) ([]flow.Value, error) {
		a, _ := reg.Lookup(name)
		c := &engine.Call{Node: node, Action: name, Inputs: []flow.Value{in}, Outputs: make([]flow.Value, 1)}
		err := a.Run(context.Background(), c)
		return c.Outputs, err
	}
	if out, err := call("echo", flow.StringValue("hi")); err != nil || out[0].Str() != "hi" {
		t.Errorf("echo: %v %v", out, err)
	}
	if out, err := call("replaced", flow.IntValue(7)); err != nil || out[0].Int() != 1 {
		t.Errorf("first reply: %v %v", out, err)
	}
	_, err := call("replaced", flow.IntValue(8))
	var se *StubError
	if !errors.As(err, &se) || err.Error() != "boom" || se.Action != "replaced" {
		t.Errorf("error reply: %T %v", err, err)
	}
	_, err = call("replaced", flow.IntValue(9))
	var ee *ExhaustedError
	if !errors.As(err, &ee) || err.Error() != `stub list for action "replaced" ran out after 2 calls` {
		t.Errorf("ran out: %T %v", err, err)
	}
	var got []int64
	for _, c := range rec.Calls("replaced") {
		got = append(got, c["in"].Int())
	}
	if !slices.Equal(got, []int64{7, 8, 9}) {
		t.Errorf("replaced calls %v", got)
	}
	if c := rec.Calls("echo"); len(c) != 1 || c[0]["in"].Str() != "hi" {
		t.Errorf("echo calls %v", c)
	}
	if rec.Calls("nothing") != nil {
		t.Errorf("calls of an action never called")
	}
	// A nil base is fine.
	reg, _ = NewStubRegistry(nil, Stubs{"a": nil})
	if !slices.Equal(reg.Names(), []string{"a"}) {
		t.Errorf("names %q", reg.Names())
	}
}

func TestLoadStubs(t *testing.T) {
	stubs, err := LoadStubs("testdata/stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(stubs) != 2 || len(stubs["fetch_quote"]) != 2 || stubs["classify"][0]["kind"].Str() != "quote" {
		t.Fatalf("stubs %v", stubs)
	}
	if msg, ok := errorReply(stubs["fetch_quote"][0]); !ok || msg != "503 Service Unavailable" {
		t.Errorf("error reply %q %v", msg, ok)
	}
	if v := stubs["fetch_quote"][1]["price"]; v.Kind() != flow.KindFloat || v.Float() != 187.5 {
		t.Errorf("price %v", v)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("stubs:\n  a: [{x: 1}]\nextra: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadStubs(bad); err == nil || err.Error() != bad+`:3:1: unknown field "extra"` {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := LoadStubs("testdata/yaml/empty.yaml"); err == nil {
		t.Errorf("empty stubs file: no error")
	}
}

func TestMatch(t *testing.T) {
	v := func(x any) flow.Value {
		val, err := flow.FromGo(x)
		if err != nil {
			t.Fatal(err)
		}
		return val
	}
	tests := []struct {
		want, got any
		fails     []string
	}{
		{3, 3.0, nil},
		{2.5, 2.5, nil},
		{3, 4, []string{"x: want 3, got 4"}},
		{"5s", 5 * time.Second, nil},
		{map[string]any{"a": 1}, map[string]any{"a": 1, "b": 2}, nil},
		{map[string]any{"a": map[string]any{"b": "c"}}, map[string]any{"a": map[string]any{"b": "d", "e": 1}}, []string{`x.a.b: want "c", got "d"`}},
		{map[string]any{"z": 1}, map[string]any{"a": 1}, []string{`x.z: want 1, got no such key in {a: 1}`}},
		{[]any{map[string]any{"a": 1}}, []any{map[string]any{"a": 1, "b": 2}}, nil},
		{[]any{1, 2}, []any{1, 3}, []string{"x[1]: want 2, got 3"}},
		{[]any{1}, []any{1, 2}, []string{"x: want 1 elements, got 2: want [1], got [1, 2]"}},
		{nil, nil, nil},
		{nil, 0, []string{"x: want null, got 0"}},
		{"a", []any{"a"}, []string{`x: want "a", got ["a"]`}},
		{true, true, nil},
	}
	for _, tt := range tests {
		var f []string
		match(&f, "x", v(tt.want), v(tt.got))
		if !slices.Equal(f, tt.fails) {
			t.Errorf("match(%v, %v) = %q, want %q", tt.want, tt.got, f, tt.fails)
		}
	}
}

// TestCaseVarsErrors: a case's vars naming neither a parameter nor a
// variable, or of the wrong type, fails the case before it runs, naming
// the variable and listing the known names.
func TestCaseVarsErrors(t *testing.T) {
	rep := run(t, "testdata/vars.test.yaml", Options{})
	want := map[string][]string{
		"a variable of the wrong type": {`vars.rephraseCount: variable rephraseCount (Int): want Int, got String "two"`},
		"an unknown name":              {`vars.rephraseCnt: workflow IntentQA has no parameter or variable rephraseCnt; did you mean "rephraseCount"? (parameters: input_text; variables: rephraseCount)`},
	}
	if len(rep.Suites) != 1 || rep.Suites[0].Err != nil {
		t.Fatalf("suites: %+v", rep.Suites)
	}
	for _, c := range rep.Suites[0].Cases {
		if c.Passed || !slices.Equal(c.Failures, want[c.Name]) || c.Result != nil {
			t.Errorf("%s: passed %v, failures %q, ran %v; want failures %q and no run", c.Name, c.Passed, c.Failures, c.Result != nil, want[c.Name])
		}
	}
}

// TestPrintEscapesControlCharacters: what a test file says (case names,
// stub names, values) reaches the report escaped, so an escape sequence or
// a NUL in it is shown, not acted on by the terminal.
func TestPrintEscapesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	wf, err := os.ReadFile("../examples/intentqa/intentqa.wf")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "x.wf"), wf, 0o644)
	os.WriteFile(filepath.Join(dir, "c.test.yaml"), []byte("workflow: x.wf\ncases:\n  - name: \"evil\\e[2J\\x00name\"\n    input: q\n    stubs:\n      \"identify\\e[1m\": []\n"), 0o644)
	rep := run(t, filepath.Join(dir, "c.test.yaml"), Options{})
	for _, verbose := range []bool{false, true} {
		out := printed(rep, verbose)
		if strings.ContainsAny(out, "\x1b\x00") {
			t.Errorf("verbose %v: report holds raw control characters:\n%q", verbose, out)
		}
		for _, want := range []string{`FAIL evil\x1b[2J\x00name`, `stubs.identify\x1b[1m: no node calls`} {
			if !strings.Contains(out, want) {
				t.Errorf("verbose %v: report lacks %q:\n%s", verbose, want, out)
			}
		}
	}
}

// TestUnstubbedLLMActionSaysHowToStub: a case whose LLM action has no
// stub and no model fails saying the action needs a stub, in the test
// file's terms.
func TestUnstubbedLLMActionSaysHowToStub(t *testing.T) {
	rep := run(t, "testdata/unstubbed_llm.test.yaml", Options{})
	if rep.Failed != 1 || len(rep.Suites) != 1 || len(rep.Suites[0].Cases) != 1 {
		t.Fatalf("want 1 failed case; got:\n%s", printed(rep, true))
	}
	c := rep.Suites[0].Cases[0]
	want := "status: want completed, got failed: node hello (step 1) failed: action greet (LLM binding at testdata/greet.wf:1:1): LLM action greet: no LLM provider is configured (stub the action in the case's stubs)"
	if len(c.Failures) != 1 || c.Failures[0] != want {
		t.Errorf("failures:\n%s\nwant\n%s", strings.Join(c.Failures, "\n"), want)
	}
}
