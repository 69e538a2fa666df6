package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	var e env
	p, err := prepare(e, intentQA, &runOptions{stubs: stubs})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	th := &engine.Threads{Runner: &engine.Runner{Registry: p.reg, Bind: p.binder.Bind}, Store: st}
	ts, err := th.Load(ctx, "q1")
	if err != nil || len(ts.Waiting()) != 1 {
		t.Fatalf("load: %v, %v", ts, err)
	}
	q := ts.Waiting()[0]
	pn := service.FindNode(p.plan, ts.NodeOf(q))
	out, err := service.ParseAnswer(pn, "net income 2023")
	if err != nil {
		t.Fatal(err)
	}
	obs := engine.ObserverFunc(func(ev engine.Event) {
		if ev.Type == engine.NodeStarted && ev.Node != pn.Name {
			cancel() // the process stops here, its answer recorded
		}
	})
	if _, err := th.Resume(ctx, p.plan, "q1", []engine.Answer{{ID: strconv.Itoa(q.ID), Outputs: out}}, obs); err == nil {
		t.Fatal("the other process's resume did not stop")
	}
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
