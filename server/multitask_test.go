package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/napper"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// sleepyFixture serves testdata/sleepy.wf over st with the napper.
func sleepyFixture(t *testing.T, st store.Store, n *napper.Napper) *fixture {
	t.Helper()
	svc, err := service.New(service.Options{Store: st, Actions: n.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(context.Background(), service.Source{Name: "testdata/sleepy.wf"})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, svc, st, wf, nil)
}

// runStatus reads a run's status.
func (f *fixture) runStatus(thread, run string) string {
	var r map[string]any
	f.json("GET", "/threads/"+thread+"/runs/"+run, "", 200, &r)
	return r["status"].(string)
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: not after 10 s", what)
}

func TestMultitask(t *testing.T) {
	n := napper.New()
	f := sleepyFixture(t, memory.New(), n)
	f.json("POST", "/threads", `{"thread_id":"m"}`, 200, nil)
	var a map[string]any
	f.json("POST", "/threads/m/runs", `{"assistant_id":"Sleepy","input":{"input_text":"a"}}`, 200, &a)
	if a["status"] != "pending" || a["multitask_strategy"] != "enqueue" {
		t.Fatalf("run a = %v", a)
	}
	aid := a["run_id"].(string)
	n.WaitStarted(t, "a")
	var th map[string]any
	f.json("GET", "/threads/m", "", 200, &th)
	if th["status"] != "busy" {
		t.Fatalf("thread while a runs: %v", th["status"])
	}
	code, body := f.do("POST", "/threads/m/runs", `{"assistant_id":"Sleepy","input":{"input_text":"r"},"multitask_strategy":"reject"}`)
	if code != 422 || !strings.Contains(body, "Thread is already running a task") {
		t.Fatalf("reject: %d %s", code, body)
	}
	var b map[string]any
	f.json("POST", "/threads/m/runs", `{"assistant_id":"Sleepy","input":{"input_text":"b"}}`, 200, &b)
	bid := b["run_id"].(string)
	if got := f.runStatus("m", bid); got != "pending" {
		t.Fatalf("enqueued b: %s", got)
	}
	n.Gate <- struct{}{} // a ends; b starts
	n.WaitStarted(t, "b")
	if got := f.runStatus("m", aid); got != "success" {
		t.Fatalf("a after its end: %s", got)
	}
	// c interrupts b: b ends interrupted, c runs and its wait answers.
	done := make(chan string)
	go func() {
		_, body := f.do("POST", "/threads/m/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"c"},"multitask_strategy":"interrupt"}`)
		done <- body
	}()
	n.WaitStarted(t, "c")
	if got := f.runStatus("m", bid); got != "interrupted" {
		t.Fatalf("b after c interrupted it: %s", got)
	}
	n.Gate <- struct{}{}
	if body := <-done; body != `{"input_text":"c","nap":{"out":"slept c"}}` {
		t.Fatalf("c's wait = %s", body)
	}
	var runs []map[string]any
	f.json("GET", "/threads/m/runs", "", 200, &runs)
	if len(runs) != 3 {
		t.Fatalf("runs = %v", runs)
	}
}

func TestCancelRun(t *testing.T) {
	n := napper.New()
	f := sleepyFixture(t, memory.New(), n)
	f.json("POST", "/threads", `{"thread_id":"c"}`, 200, nil)
	var a map[string]any
	f.json("POST", "/threads/c/runs", `{"assistant_id":"Sleepy","input":{"input_text":"a"}}`, 200, &a)
	aid := a["run_id"].(string)
	n.WaitStarted(t, "a")
	if code, body := f.do("POST", "/threads/c/runs/"+aid+"/cancel?wait=1", ""); code != 204 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	if got := f.runStatus("c", aid); got != "interrupted" {
		t.Fatalf("cancelled run: %s", got)
	}
	var th map[string]any
	f.json("GET", "/threads/c", "", 200, &th)
	if th["status"] != "idle" {
		t.Fatalf("thread after cancel: %v", th["status"])
	}
	// The thread takes a new run.
	go func() { n.WaitStarted(t, "b"); n.Gate <- struct{}{} }()
	if code, body := f.do("POST", "/threads/c/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"b"}}`); code != 200 || !strings.Contains(body, "slept b") {
		t.Fatalf("run after cancel: %d %s", code, body)
	}
	if code, _ := f.do("POST", "/threads/c/runs/nope/cancel", ""); code != 404 {
		t.Fatalf("cancel of an unknown run: %d", code)
	}
}

// A server that stops mid-run leaves the run pending, every step it took
// recorded; the next server on the store finishes it, once.
func TestRunSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	open := sqliteOpener(t)
	n1 := napper.New()
	st1 := open()
	f1 := sleepyFixture(t, st1, n1)
	f1.json("POST", "/threads", `{"thread_id":"r"}`, 200, nil)
	var a map[string]any
	f1.json("POST", "/threads/r/runs", `{"assistant_id":"Sleepy","input":{"input_text":"a"}}`, 200, &a)
	aid := a["run_id"].(string)
	n1.WaitStarted(t, "a")
	if err := f1.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f1.runStatus("r", aid); got != "pending" {
		t.Fatalf("run after its server stopped: %s", got)
	}
	st1.Close()

	n2 := napper.New()
	close(n2.Gate)
	f2 := sleepyFixture(t, open(), n2)
	n2.WaitStarted(t, "a")
	eventually(t, "the run ends on the second server", func() bool { return f2.runStatus("r", aid) == "success" })
	code, body := f2.do("GET", "/threads/r/runs/"+aid+"/join", "")
	if code != 200 || body != `{"input_text":"a","nap":{"out":"slept a"}}` {
		t.Fatalf("join after restart: %d %s", code, body)
	}
}

// TestRunCreatedClaimedSurvivesKill: a run the in-process pool could
// start at once is stored already running; a process killed right after
// that write, before the run began, leaves that job running with no run
// of its thread; the next server on the store runs it, once.
func TestRunCreatedClaimedSurvivesKill(t *testing.T) {
	ctx := context.Background()
	open := sqliteOpener(t)
	st1 := open()
	if err := st1.CreateThread(ctx, &store.Thread{ID: "k"}); err != nil {
		t.Fatal(err)
	}
	// What the killed process left: the job, created running.
	id := "0b0b5f0e-8f0a-4c55-9d3e-4a1c2b3d4e5f"
	job := &store.Job{ID: id, ThreadID: "k", Assistant: server.AssistantID("Sleepy"), Status: store.JobRunning, Strategy: "enqueue",
		Request: json.RawMessage(`{"assistant_id":"Sleepy","input":{"input_text":"a"},"multitask_strategy":"enqueue"}`)}
	if err := st1.(store.Jobs).CreateJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	st1.Close()

	n := napper.New()
	close(n.Gate)
	f := sleepyFixture(t, open(), n)
	n.WaitStarted(t, "a")
	eventually(t, "the run ends on the next server", func() bool { return f.runStatus("k", id) == "success" })
	code, body := f.do("GET", "/threads/k/runs/"+id+"/join", "")
	if code != 200 || body != `{"input_text":"a","nap":{"out":"slept a"}}` {
		t.Fatalf("join after the kill: %d %s", code, body)
	}
}

// TestRollback: a run rolled back (cancel action=rollback, or a newer
// run's multitask_strategy rollback) is deleted, and its thread is as it
// was before the run began: its state, its history's newest checkpoint,
// its status; the next run goes on from there.
func TestRollback(t *testing.T) {
	n := napper.New()
	f := sleepyFixture(t, memory.New(), n)
	f.json("POST", "/threads", `{"thread_id":"r"}`, 200, nil)
	go func() { n.WaitStarted(t, "a"); n.Gate <- struct{}{} }()
	if code, body := f.do("POST", "/threads/r/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"a"}}`); code != 200 || body != `{"input_text":"a","nap":{"out":"slept a"}}` {
		t.Fatalf("run a: %d %s", code, body)
	}
	const afterA = `{"input_text":"a","nap":{"out":"slept a"}}`
	checkState := func(what string) {
		t.Helper()
		var st struct {
			Values json.RawMessage `json:"values"`
			Next   []string        `json:"next"`
		}
		f.json("GET", "/threads/r/state", "", 200, &st)
		if string(st.Values) != afterA || len(st.Next) != 0 {
			t.Fatalf("%s: state %s next %v; want %s", what, st.Values, st.Next, afterA)
		}
		var hist []struct {
			Values json.RawMessage `json:"values"`
		}
		f.json("POST", "/threads/r/history", `{}`, 200, &hist)
		if len(hist) == 0 || string(hist[0].Values) != afterA {
			t.Fatalf("%s: history %v", what, hist)
		}
		for _, h := range hist {
			if strings.Contains(string(h.Values), `"b"`) || strings.Contains(string(h.Values), `"c"`) {
				t.Fatalf("%s: history still shows a rolled-back run: %s", what, h.Values)
			}
		}
		var th map[string]any
		f.json("GET", "/threads/r", "", 200, &th)
		if th["status"] != "idle" {
			t.Fatalf("%s: thread %v", what, th["status"])
		}
	}
	var b map[string]any
	// b's steps are written as they complete ("sync"), so that its state
	// read while it runs is its own checkpoint (with the default, async,
	// it may not be written yet): the rollback must make it unknown.
	f.json("POST", "/threads/r/runs", `{"assistant_id":"Sleepy","input":{"input_text":"b"},"durability":"sync"}`, 200, &b)
	bid := b["run_id"].(string)
	n.WaitStarted(t, "b")
	var during struct {
		Checkpoint struct {
			ID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	f.json("GET", "/threads/r/state", "", 200, &during)
	if code, body := f.do("POST", "/threads/r/runs/"+bid+"/cancel?wait=1&action=rollback", ""); code != 204 {
		t.Fatalf("cancel b with rollback: %d %s", code, body)
	}
	if code, _ := f.do("GET", "/threads/r/runs/"+bid, ""); code != 404 {
		t.Fatalf("b after its rollback: %d; want 404", code)
	}
	checkState("after b's rollback")
	if code, body := f.do("GET", "/threads/r/state/"+during.Checkpoint.ID, ""); code != 404 {
		t.Fatalf("state at b's checkpoint %s after its rollback: %d %s; want 404", during.Checkpoint.ID, code, body)
	}

	// c is rolled back by d: d starts from a's end.
	f.json("POST", "/threads/r/runs", `{"assistant_id":"Sleepy","input":{"input_text":"c"}}`, 200, nil)
	n.WaitStarted(t, "c")
	done := make(chan string)
	go func() {
		_, body := f.do("POST", "/threads/r/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"d"},"multitask_strategy":"rollback"}`)
		done <- body
	}()
	n.WaitStarted(t, "d")
	var runs []map[string]any
	f.json("GET", "/threads/r/runs", "", 200, &runs)
	if len(runs) != 2 {
		t.Fatalf("runs while d runs: %v; want a and d", runs)
	}
	n.Gate <- struct{}{}
	if body := <-done; body != `{"input_text":"d","nap":{"out":"slept d"}}` {
		t.Fatalf("d's wait = %s", body)
	}
	var hist []struct {
		Values json.RawMessage `json:"values"`
	}
	f.json("POST", "/threads/r/history", `{}`, 200, &hist)
	for _, h := range hist {
		if strings.Contains(string(h.Values), `"c"`) {
			t.Fatalf("history after d still shows c: %s", h.Values)
		}
	}
}

// TestRollbackFirstRun: the first run of a thread rolled back leaves it
// as it was made: no values, no history; its next run starts afresh.
func TestRollbackFirstRun(t *testing.T) {
	n := napper.New()
	f := sleepyFixture(t, memory.New(), n)
	f.json("POST", "/threads", `{"thread_id":"r0"}`, 200, nil)
	var x map[string]any
	f.json("POST", "/threads/r0/runs", `{"assistant_id":"Sleepy","input":{"input_text":"x"}}`, 200, &x)
	n.WaitStarted(t, "x")
	if code, body := f.do("POST", "/threads/r0/runs/"+x["run_id"].(string)+"/cancel?wait=1&action=rollback", ""); code != 204 {
		t.Fatalf("cancel x with rollback: %d %s", code, body)
	}
	var st struct {
		Values     json.RawMessage `json:"values"`
		Checkpoint any             `json:"checkpoint"`
	}
	f.json("GET", "/threads/r0/state", "", 200, &st)
	if string(st.Values) != `{}` || st.Checkpoint != nil {
		t.Fatalf("state after the first run's rollback: %s, checkpoint %v", st.Values, st.Checkpoint)
	}
	var hist []any
	f.json("POST", "/threads/r0/history", `{}`, 200, &hist)
	if len(hist) != 0 {
		t.Fatalf("history after the first run's rollback: %v", hist)
	}
	var th map[string]any
	f.json("GET", "/threads/r0", "", 200, &th)
	if th["status"] != "idle" {
		t.Fatalf("thread after the first run's rollback: %v", th["status"])
	}
	go func() { n.WaitStarted(t, "y"); n.Gate <- struct{}{} }()
	if code, body := f.do("POST", "/threads/r0/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"y"}}`); code != 200 || body != `{"input_text":"y","nap":{"out":"slept y"}}` {
		t.Fatalf("run after the rollback: %d %s", code, body)
	}
	var hist2 []struct {
		Values map[string]any `json:"values"`
	}
	f.json("POST", "/threads/r0/history", `{}`, 200, &hist2)
	for _, h := range hist2 {
		if h.Values["input_text"] == "x" {
			t.Fatalf("history shows the rolled-back run: %v", hist2)
		}
	}
	if len(hist2) == 0 || hist2[0].Values["input_text"] != "y" {
		t.Fatalf("history after y: %v", hist2)
	}
}
