package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	. "github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
)

// noteWF keeps a String and an Int variable and asks a person.
const noteWF = `workflow Note {
  variables {
    note: String = ""
    n: Int = 0
  }
  nodes {
    node ask {
      type: HUMAN
      question: "Which fiscal year?"
      outputs { year: Int }
    }
  }
  initial: ask
  finals: [ ask ]
}
`

// startNote starts a thread of noteWF with a Service whose registry has
// tool.probe, a component the Services of the tests do not know.
func startNote(t *testing.T, st store.Store, thread string) {
	t.Helper()
	ctx := context.Background()
	counts := &probeCounts{open: map[string]int{}, closed: map[string]int{}}
	reg := component.NewRegistry()
	if err := reg.Register(component.Module{ID: "tool.probe", Doc: "counts", New: func() component.Component { return &probe{counts: counts} }}); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Store: st, Components: reg, LeaseTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	wf, err := a.Open(ctx, Bytes("note.wf", []byte(noteWF)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Start(ctx, StartRequest{Workflow: wf, Thread: thread, Components: []component.Spec{{ID: "tool.probe", Config: json.RawMessage(`{"name":"a"}`)}}})
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("start: %v %+v", err, res)
	}
}

// Fork reads the store only: a process that cannot build the thread's
// components forks it, and types text edits against the workflow whose
// source the store keeps (a String takes "2019" as text, an Int "3" as a
// number).
func TestForkNeedsNoComponents(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	startNote(t, st, "y")
	b := newService(t, st, nil) // builtin components only: no tool.probe
	fr, err := b.Fork(ctx, ForkRequest{Thread: "y", At: 1, To: "y2", SetText: map[string]string{"note": "2019", "n": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(fr)
	if want := `{"thread":"y2","from":"y","at":1,"status":"running"}`; string(out) != want {
		t.Errorf("fork result %s, want %s", out, want)
	}
	state, err := b.State(ctx, "y2")
	if err != nil {
		t.Fatal(err)
	}
	if note, n := state.Vars.Get("note"), state.Vars.Get("n"); note.Kind() != flow.KindString || note.Str() != "2019" || n.Kind() != flow.KindInt || n.Int() != 3 {
		t.Errorf("after fork: note %v (%v), n %v (%v)", note, note.Kind(), n, n.Kind())
	}
	if state.Forked == nil || state.Forked.Thread != "y" || state.Forked.Seq != 1 {
		t.Errorf("forked from %+v", state.Forked)
	}

	// A value that does not fit its type is an *EditError of kind
	// mismatch, and makes no thread.
	_, err = b.Fork(ctx, ForkRequest{Thread: "y", At: 1, To: "y3", SetText: map[string]string{"n": "three"}})
	var ee *EditError
	if !errors.As(err, &ee) || ee.Name != "n" || engine.KindOf(err) != engine.KindMismatch {
		t.Errorf("n=three: %v (kind %s)", err, engine.KindOf(err))
	}
	_, err = b.Fork(ctx, ForkRequest{Thread: "y", At: 1, To: "y3", Set: map[string]flow.Value{"n": flow.IntValue(1)}, SetText: map[string]string{"n": "2"}})
	if !errors.As(err, &ee) || ee.Name != "n" {
		t.Errorf("n set twice: %v", err)
	}
	// A name the workflow does not declare: invalid input, with a
	// suggestion.
	_, err = b.Fork(ctx, ForkRequest{Thread: "y", At: 1, To: "y3", SetText: map[string]string{"nte": "x"}})
	if engine.KindOf(err) != engine.KindInvalidInput || !regexp.MustCompile(`note`).MatchString(err.Error()) {
		t.Errorf("nte=x: %v (kind %s)", err, engine.KindOf(err))
	}
	if _, err := st.Thread(ctx, "y3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused fork made thread y3: %v", err)
	}
	// A record the thread does not have: not found.
	if _, err := b.Fork(ctx, ForkRequest{Thread: "y", At: 99}); engine.KindOf(err) != engine.KindNotFound {
		t.Errorf("at 99: %v (kind %s)", err, engine.KindOf(err))
	}
}

var timeRE = regexp.MustCompile(`"time":"[^"]+"`)

// History's entries have a stable JSON form (`weft threads history
// --json`), read from the store alone.
func TestHistoryJSON(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	startNote(t, st, "h")
	b := newService(t, st, nil)
	if _, err := b.Fork(ctx, ForkRequest{Thread: "h", At: 1, To: "h2", Set: map[string]flow.Value{"note": flow.StringValue("hi")}}); err != nil {
		t.Fatal(err)
	}
	for thread, want := range map[string]string{
		"h": `[{"seq":1,"run":1,"step":1,"kind":"snapshot","changes":[],"next":["ask"],"status":"running","time":T,"bytes":B},` +
			`{"seq":2,"run":1,"step":1,"kind":"step","node":"ask","changes":[],"next":[],"status":"waiting","time":T,"bytes":B}]`,
		"h2": `[{"seq":1,"run":1,"step":1,"kind":"snapshot","changes":[],"next":["ask"],"status":"running","time":T,"bytes":B,"forked_from":{"thread":"h","seq":1}}]`,
	} {
		hist, err := b.History(ctx, thread, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hist {
			if h.Time.IsZero() || h.Bytes <= 0 {
				t.Errorf("%s #%d: time %v, %d bytes", thread, h.Seq, h.Time, h.Bytes)
			}
		}
		out, err := json.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		got := regexp.MustCompile(`"bytes":\d+`).ReplaceAllString(timeRE.ReplaceAllString(string(out), `"time":T`), `"bytes":B`)
		if got != want {
			t.Errorf("history of %s:\n got %s\nwant %s", thread, got, want)
		}
	}
	if _, err := b.History(ctx, "nope", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("history of a missing thread: %v", err)
	}
}

// State reads a thread's state from the store alone, a thread without a
// run spec or a run included.
func TestState(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	startNote(t, st, "s")
	b := newService(t, st, nil)
	state, err := b.State(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(state)
	want := `{"id":"s","workflow":"Note","source":"` + state.Source + `","run":1,"status":"waiting","records":2,"vars":{"note":"","n":0},"pending":[{"id":"` + state.Pending[0].ID + `","node":"ask","question":"Which fiscal year?"}]}`
	if string(out) != want || state.Source == "" {
		t.Errorf("state\n got %s\nwant %s", out, want)
	}
	// A thread an older weft made: no spec, no run yet.
	if err := st.CreateThread(ctx, &store.Thread{ID: "old", Workflow: "W", Meta: map[string]string{"file": "w.wf"}}); err != nil {
		t.Fatal(err)
	}
	state, err = b.State(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	out, _ = json.Marshal(state)
	if want := `{"id":"old","workflow":"W","run":0,"status":"new","records":0,"vars":{},"pending":[],"meta":{"file":"w.wf"}}`; string(out) != want {
		t.Errorf("state of a thread without a run\n got %s\nwant %s", out, want)
	}
	if hist, err := b.History(ctx, "old", 1); err != nil || hist == nil || len(hist) != 0 {
		t.Errorf("history of a thread without a run: %#v %v", hist, err)
	}
	if _, err := b.State(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("state of a missing thread: %v", err)
	}
}

// Prune takes a policy: one that bounds nothing is refused; without a
// thread it deletes whole threads not updated since Before.
func TestPrunePolicy(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	startNote(t, st, "p1")
	startNote(t, st, "p2")
	b := newService(t, st, nil)
	if _, err := b.Prune(ctx, PrunePolicy{Thread: "p1"}); !errors.Is(err, ErrNoPolicy) || !errors.Is(err, engine.ErrInvalidInput) {
		t.Errorf("empty policy: %v", err)
	}
	res, err := b.Prune(ctx, PrunePolicy{Thread: "p1", KeepRuns: 1})
	if err != nil || *res != (PruneResult{}) {
		t.Errorf("keep 1 of 1 run: %+v %v", res, err)
	}
	if _, err := b.Prune(ctx, PrunePolicy{Thread: "nope", KeepRuns: 1}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("prune of a missing thread: %v", err)
	}
	res, err = b.Prune(ctx, PrunePolicy{Before: time.Now().Add(time.Hour)})
	if err != nil || *res != (PruneResult{ThreadsDeleted: 2}) {
		t.Errorf("prune everything: %+v %v", res, err)
	}
	out, _ := json.Marshal(res)
	if want := `{"threads_pruned":0,"records_removed":0,"threads_deleted":2}`; string(out) != want {
		t.Errorf("JSON %s, want %s", out, want)
	}
	if ths, err := b.Threads(ctx, store.ListOptions{}); err != nil || len(ths) != 0 {
		t.Errorf("threads left: %+v %v", ths, err)
	}
}
