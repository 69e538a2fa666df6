package server_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/sqlite"
)

// TestInterruptBeforeAfter: interrupt_before stops a run before the node
// (an interrupt without questions; the thread interrupted, next naming
// the node, its task with no interrupts), a run with input null continues
// it, interrupt_after stops after the node, and a name that is not a node
// is a 422 naming the item.
func TestInterruptBeforeAfter(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"bp"}`, 200, nil)
	resp, evs := f.stream("/threads/bp/runs/stream", `{"assistant_id":"Approval","input":{"input_text":"doc B"},"interrupt_before":["draft"],"stream_mode":["values","updates"]}`)
	runID := strings.TrimPrefix(resp.Header.Get("Content-Location"), "/threads/bp/runs/")
	epoch, _, _ := strings.Cut(evs[0].ID, "-")
	var got []string
	for _, e := range evs {
		got = append(got, strings.TrimPrefix(e.ID, epoch+"-")+" "+e.Event+" "+string(e.Data))
	}
	want := []string{
		`0 metadata {"attempt":1,"run_id":"` + runID + `"}`,
		`1 values {"input_text":"doc B","rounds":0}`,
		`2 updates {"__interrupt__":[]}`,
		`3 values {"__interrupt__":[]}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stream:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	type state struct {
		Values json.RawMessage `json:"values"`
		Next   []string        `json:"next"`
		Tasks  []struct {
			Name       string `json:"name"`
			Interrupts []any  `json:"interrupts"`
		} `json:"tasks"`
	}
	var st state
	f.json("GET", "/threads/bp/state", "", 200, &st)
	if string(st.Values) != `{"input_text":"doc B","rounds":0}` || len(st.Next) != 1 || st.Next[0] != "draft" || len(st.Tasks) != 1 || st.Tasks[0].Name != "draft" || len(st.Tasks[0].Interrupts) != 0 {
		t.Fatalf("state stopped before draft: %+v (values %s)", st, st.Values)
	}
	var th map[string]any
	f.json("GET", "/threads/bp", "", 200, &th)
	if th["status"] != "interrupted" {
		t.Fatalf("thread stopped before draft: %v", th["status"])
	}
	if got := f.runStatus("bp", runID); got != "success" {
		t.Fatalf("the run stopped before draft: %s", got)
	}

	// Continue (input null) with interrupt_after draft: draft runs, the
	// run stops before review.
	code, body := f.do("POST", "/threads/bp/runs/wait", `{"assistant_id":"Approval","input":null,"interrupt_after":["draft"]}`)
	if code != 200 || strings.TrimSpace(body) != `{"__interrupt__":[]}` {
		t.Fatalf("continue, interrupt_after draft: %d %s", code, body)
	}
	f.json("GET", "/threads/bp/state", "", 200, &st)
	if string(st.Values) != `{"input_text":"doc B","rounds":0,"draft":{"body":"doc B"}}` || len(st.Next) != 1 || st.Next[0] != "review" || len(st.Tasks[0].Interrupts) != 0 {
		t.Fatalf("state stopped after draft: %+v (values %s)", st, st.Values)
	}
	// Continue: review asks, and its answer ends the run.
	code, body = f.do("POST", "/threads/bp/runs/wait", `{"assistant_id":"Approval"}`)
	if code != 200 || !strings.Contains(body, `"__interrupt__":[{"id":`) || !strings.Contains(body, "Approve this draft?") {
		t.Fatalf("continue to review: %d %s", code, body)
	}
	code, body = f.do("POST", "/threads/bp/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`)
	if code != 200 || !strings.Contains(body, `"publish":{"published":"doc B"`) {
		t.Fatalf("answered: %d %s", code, body)
	}
	var runs []map[string]any
	f.json("GET", "/threads/bp/runs", "", 200, &runs)
	if len(runs) != 4 {
		t.Fatalf("runs: %v", runs)
	}
	for _, r := range runs {
		if r["status"] != "success" {
			t.Errorf("run %v: %v; want success", r["run_id"], r["status"])
		}
	}

	// "*" stops before the first node; a new run with input starts over.
	code, body = f.do("POST", "/threads/bp/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc C"},"interrupt_before":"*"}`)
	if code != 200 || strings.TrimSpace(body) != `{"__interrupt__":[]}` {
		t.Fatalf("interrupt_before *: %d %s", code, body)
	}
	code, body = f.do("POST", "/threads/bp/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc D"}}`)
	if code != 200 || !strings.Contains(body, "Approve this draft?") {
		t.Fatalf("a new run over the stopped one: %d %s", code, body)
	}
	f.json("GET", "/threads/bp/state", "", 200, &st)
	if !strings.Contains(string(st.Values), `"draft":{"body":"doc D"}`) || len(st.Next) != 1 || st.Next[0] != "review" {
		t.Fatalf("state of the new run: %+v (values %s)", st, st.Values)
	}

	for _, c := range []struct{ body, path string }{
		{`{"assistant_id":"Approval","input":{"input_text":"x"},"interrupt_before":["draft","reveiw"]}`, `$.interrupt_before[1]`},
		{`{"assistant_id":"Approval","input":{"input_text":"x"},"interrupt_after":["nope"]}`, `$.interrupt_after[0]`},
	} {
		code, body := f.do("POST", "/threads/bp2/runs/wait", c.body)
		if code != 422 || !strings.Contains(body, c.path) {
			t.Errorf("%s: %d %s; want 422 naming %s", c.body, code, body, c.path)
		}
	}
}

// TestInterruptBeforeSurvivesRestart: the stop at a breakpoint is in the
// store: a second server on it shows the thread interrupted before the
// node, and continues it.
func TestInterruptBeforeSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weft.db")
	ctx := context.Background()
	approval := func() *fixture {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		svc, err := service.New(service.Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		wf, err := svc.Open(ctx, service.Source{Name: "testdata/approval.wf"})
		if err != nil {
			t.Fatal(err)
		}
		return serve(t, svc, st, wf, nil)
	}
	f1 := approval()
	f1.json("POST", "/threads", `{"thread_id":"k"}`, 200, nil)
	if code, body := f1.do("POST", "/threads/k/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc K"},"interrupt_after":["draft"]}`); code != 200 || strings.TrimSpace(body) != `{"__interrupt__":[]}` {
		t.Fatalf("interrupt_after draft: %d %s", code, body)
	}
	if err := f1.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	f1.svc.Close()
	f1.st.Close()

	f2 := approval()
	var th map[string]any
	f2.json("GET", "/threads/k", "", 200, &th)
	if th["status"] != "interrupted" {
		t.Fatalf("thread on the second server: %v", th["status"])
	}
	var st struct {
		Next []string `json:"next"`
	}
	f2.json("GET", "/threads/k/state", "", 200, &st)
	if len(st.Next) != 1 || st.Next[0] != "review" {
		t.Fatalf("next on the second server: %v", st.Next)
	}
	code, body := f2.do("POST", "/threads/k/runs/wait", `{"assistant_id":"Approval","input":null}`)
	if code != 200 || !strings.Contains(body, "Approve this draft?") {
		t.Fatalf("continued on the second server: %d %s", code, body)
	}
}
