package engine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// TestQuestionIDOneType checks that a question has one id everywhere: the
// id a waiting Result's Pending reports is the key Runner.Resume takes,
// the id the store keeps the question under, and the Answer.ID that
// Threads.Resume takes; an answer to an id no question has is a
// *QuestionError naming it and the ids asked, and changes nothing.
func TestQuestionIDOneType(t *testing.T) {
	ctx := context.Background()
	plan := compile(t, "ask.wf", yearWF)
	r := askRunner(t)

	// In memory: Pending.ID keys the answers.
	res, err := r.Run(ctx, plan, nil, nil)
	if err != nil || res.Status != engine.Waiting || len(res.Waiting) != 1 {
		t.Fatalf("run: %v, %+v, %v", res.Status, res.Waiting, err)
	}
	id := res.Waiting[0].ID
	if id == "" {
		t.Fatalf("Pending.ID is empty")
	}
	_, err = r.Resume(ctx, res, map[string]map[string]flow.Value{"review/3": {"year": flow.IntValue(1)}}, nil)
	var qe *engine.QuestionError
	if !errors.As(err, &qe) || qe.ID != "review/3" || !slices.Equal(qe.Waiting, []string{id}) {
		t.Fatalf("Resume with an unknown id: %v, want a *QuestionError for review/3 listing %s", err, id)
	}
	done, err := r.Resume(ctx, res, map[string]map[string]flow.Value{id: {"year": flow.IntValue(2019)}}, nil)
	if err != nil || done.Output("text").Str() != "revenue in 2019" {
		t.Fatalf("Resume by Pending.ID: %v, %v; want revenue in 2019", done.Outputs, err)
	}

	// In a thread: the store keeps the question under the same id, and
	// an Answer naming the stored id resumes the run.
	st := memory.New()
	th := &engine.Threads{Runner: r, Store: st}
	tres, err := th.Run(ctx, plan, "t", nil, nil, nil)
	if err != nil || tres.Status != engine.Waiting || len(tres.Waiting) != 1 {
		t.Fatalf("thread run: %v, %v", tres.Status, err)
	}
	pend, err := st.Pending(ctx, "t")
	if err != nil || len(pend) != 1 || pend[0].ID != tres.Waiting[0].ID {
		t.Fatalf("stored questions %+v, %v; want one with id %s", pend, err, tres.Waiting[0].ID)
	}
	ts, err := th.Load(ctx, "t")
	if err != nil || len(ts.Waiting()) != 1 || ts.Waiting()[0].QuestionID() != pend[0].ID {
		t.Fatalf("thread state waits on %+v, %v; want question %s", ts.Waiting(), err, pend[0].ID)
	}
	_, err = th.Resume(ctx, plan, "t", []engine.Answer{{ID: "nope", Outputs: map[string]flow.Value{"year": flow.IntValue(1)}}}, nil)
	if !errors.As(err, &qe) || qe.ID != "nope" || !slices.Equal(qe.Waiting, []string{pend[0].ID}) {
		t.Fatalf("thread Resume with an unknown id: %v, want a *QuestionError for nope listing %s", err, pend[0].ID)
	}
	out, err := th.Resume(ctx, plan, "t", []engine.Answer{{ID: pend[0].ID, Outputs: map[string]flow.Value{"year": flow.IntValue(2020)}}}, nil)
	if err != nil || out.Output("text").Str() != "revenue in 2020" {
		t.Fatalf("thread Resume by the stored id: %v, %v; want revenue in 2020", out.Outputs, err)
	}
	if pend, err := st.Pending(ctx, "t"); err != nil || len(pend) != 0 {
		t.Errorf("questions after the answer: %+v, %v; want none", pend, err)
	}
}

// TestForkKeepsSource checks that a fork names the source and keeps the
// run spec of the thread it was forked from: it runs the same workflow.
func TestForkKeepsSource(t *testing.T) {
	ctx := context.Background()
	plan := compile(t, "ask.wf", yearWF)
	st := memory.New()
	th := &engine.Threads{Runner: askRunner(t), Store: st}
	if _, err := th.Run(ctx, plan, "src", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	wf := []byte(yearWF)
	d := store.Digest(wf)
	if err := st.PutSource(ctx, d, wf); err != nil {
		t.Fatal(err)
	}
	thr, err := st.Thread(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	thr.Source, thr.Spec = d, []byte(`{"workflow":"`+d+`"}`)
	if err := st.UpdateThread(ctx, thr); err != nil {
		t.Fatal(err)
	}
	ts, err := th.Load(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := th.Fork(ctx, "src", ts.Seq, "dst", nil); err != nil {
		t.Fatalf("Fork: %v", err)
	}
	got, err := st.Thread(ctx, "dst")
	if err != nil || got.Source != d || string(got.Spec) != string(thr.Spec) {
		t.Errorf("forked thread names source %q, spec %s (%v); want %s, %s", got.Source, got.Spec, err, d, thr.Spec)
	}
}
