package owf

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
)

// load loads a document from JSON text, failing the test on an error.
func load(t *testing.T, src string) *Document {
	t.Helper()
	doc, err := Load("test.json", []byte(src), nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return doc
}

// run runs src with opts and input (nil for none).
func run(t *testing.T, src string, input *string, opts Options) (string, *engine.Result, error) {
	t.Helper()
	doc := load(t, src)
	x, err := NewExecutor(opts)
	if err != nil {
		t.Fatal(err)
	}
	return x.Execute(context.Background(), doc, input, nil)
}

// mustRun runs src and fails the test unless it succeeds.
func mustRun(t *testing.T, src string, opts Options) (string, *engine.Result) {
	t.Helper()
	out, res, err := run(t, src, nil, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out, res
}

// wantWorkflowError checks that err is the reference's run error msg.
func wantWorkflowError(t *testing.T, err error, msg string) {
	t.Helper()
	var we *WorkflowError
	if !errors.As(err, &we) {
		t.Fatalf("error = %v (%T), want a *WorkflowError %q", err, err, msg)
	}
	if got := we.Error(); got != "Workflow execution failed: "+msg {
		t.Fatalf("error = %q, want %q", got, "Workflow execution failed: "+msg)
	}
}

// stack returns the rendered entries of stack key at the end of a run.
func stack(t *testing.T, res *engine.Result, key string) []string {
	t.Helper()
	if res == nil {
		t.Fatal("no result")
	}
	for _, v := range res.Vars {
		if v.Name != varStacks {
			continue
		}
		s, ok := v.Value.Object()[key]
		if !ok {
			return nil
		}
		out := []string{}
		for _, e := range s.List() {
			en, ok := entryOf(e)
			if !ok {
				t.Fatalf("stack %s holds %v, not an entry", key, e)
			}
			out = append(out, en.Text)
		}
		return out
	}
	t.Fatalf("no stacks variable in %v", res.Vars)
	return nil
}

// cacheEntry returns the cache entry key at the end of a run.
func cacheEntry(t *testing.T, res *engine.Result, key string) (Entry, bool) {
	t.Helper()
	for _, v := range res.Vars {
		if v.Name == varCache {
			x, ok := v.Value.Object()[key]
			if !ok {
				return Entry{}, false
			}
			e, ok := entryOf(x)
			if !ok {
				t.Fatalf("cache %s holds %v", key, x)
			}
			return e, true
		}
	}
	t.Fatal("no cache variable")
	return Entry{}, false
}

// task writes a task object; msgs are user messages.
func task(id, op string, msgs []string, inputs, outputs string) string {
	var ms []string
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		ms = append(ms, `{"role":"user","content":`+string(b)+`}`)
	}
	if inputs == "" {
		inputs = "[]"
	}
	if outputs == "" {
		outputs = "[]"
	}
	return `{"id":"` + id + `","operator":"` + op + `","messages":[` + strings.Join(ms, ",") + `],"inputs":` + inputs + `,"outputs":` + outputs + `}`
}

// path returns the nodes a run executed.
func path(res *engine.Result) string { return strings.Join(res.Path, " ") }
