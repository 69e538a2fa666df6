package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/sqlite"
)

// TestResumeAnswerAfterAnotherProcessAnswered: a `weft resume --answer`
// that comes after another process answered the question and went on
// with the run (here: it stopped right after the answer, as a process
// still at work or killed would leave it) is told that another process
// advanced the thread and holds it, not to resume without --answer.
func TestResumeAnswerAfterAnotherProcessAnswered(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	stubs := "testdata/intentqa_unclear.yaml"
	r := weft(t, []string{"run", intentQA, "--stubs", stubs, "--input", "hmm", "--thread", "q1", "--store", db})
	r.wantCode(t, exitWaiting)

	// The other process: it answers, and is still in the next node.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg, err := builtin.New()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Options{Store: st, Components: reg, LeaseTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	view, err := svc.Thread(ctx, "q1")
	if err != nil || len(view.State.Waiting()) != 1 {
		t.Fatalf("load: %v, %v", view, err)
	}
	q := view.State.Waiting()[0]
	asks := view.State.NodeOf(q)
	obs := engine.ObserverFunc(func(ev engine.Event) {
		if ev.Type == engine.NodeStarted && ev.Node != asks {
			cancel() // the process stops here, its answer recorded
		}
	})
	if _, err := svc.Resume(ctx, service.ResumeRequest{Thread: "q1", Answers: []service.Answer{{ID: q.QuestionID(), Text: "net income 2023"}}, Observer: obs}); err == nil {
		t.Fatal("the other process's resume did not stop")
	}
	th := &engine.Threads{Store: st}
	if ts, err := th.Load(context.Background(), "q1"); err != nil || ts.Status() != engine.Running {
		t.Fatalf("after the other process's answer: %v, %v", ts.Status(), err)
	}

	// show does not tell to resume a run another process may be running.
	r = weft(t, []string{"threads", "show", "q1", "--store", db})
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stdout, "another process may be running it; if none is, continue it with: weft resume q1") {
		t.Errorf("threads show of a running thread:\n%s", r.stdout)
	}

	r = weft(t, []string{"resume", "q1", "--store", db, "--answer", "net income 2022"})
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "another process advanced the thread") || !strings.Contains(r.stderr, "holds the thread") || strings.Contains(r.stderr, "resume it without --answer") {
		t.Errorf("stderr = %q, want it to say another process answered and holds the thread", r.stderr)
	}
}
