package service_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
)

// updateCounting counts UpdateThread calls.
type updateCounting struct {
	store.Store
	n atomic.Int32
}

func (s *updateCounting) UpdateThread(ctx context.Context, t *store.Thread) error {
	s.n.Add(1)
	return s.Store.UpdateThread(ctx, t)
}

// TestThreadSpecSavesStartsWrite: a thread given ThreadSpec's workflow,
// source and spec (written by the caller) is what Start keeps, so Start
// writes the thread no more; a Start with other components still
// writes its own spec.
func TestThreadSpecSavesStartsWrite(t *testing.T) {
	ctx := context.Background()
	sq, _ := openStore(t)
	st := &updateCounting{Store: sq}
	s := newService(t, st, nil)
	wf, err := s.Open(ctx, service.Bytes("ask.wf", []byte(askYearWF)))
	if err != nil {
		t.Fatal(err)
	}
	thr := &store.Thread{ID: "t1"}
	if err := st.CreateThread(ctx, thr); err != nil {
		t.Fatal(err)
	}
	if err := s.ThreadSpec(ctx, thr, service.StartRequest{Workflow: wf, ContextTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	if thr.Workflow != wf.Name || thr.Source != wf.Digest {
		t.Fatalf("ThreadSpec: workflow %q, source %q; want %q, %q", thr.Workflow, thr.Source, wf.Name, wf.Digest)
	}
	var spec service.Spec
	if err := json.Unmarshal(thr.Spec, &spec); err != nil || spec.Workflow != wf.Digest || spec.ContextTokens != 1000 {
		t.Fatalf("ThreadSpec: spec %s (%v)", thr.Spec, err)
	}
	if err := st.UpdateThread(ctx, thr); err != nil {
		t.Fatalf("UpdateThread with ThreadSpec's source (stored by it): %v", err)
	}
	st.n.Store(0)
	if _, err := s.Start(ctx, service.StartRequest{Workflow: wf, Thread: "t1", ContextTokens: 1000, Input: map[string]flow.Value{}}); err != nil {
		t.Fatal(err)
	}
	if n := st.n.Load(); n != 0 {
		t.Errorf("Start after ThreadSpec: %d thread writes, want 0", n)
	}
	// Another spec: Start writes it.
	thr2 := &store.Thread{ID: "t2"}
	if err := st.CreateThread(ctx, thr2); err != nil {
		t.Fatal(err)
	}
	if err := s.ThreadSpec(ctx, thr2, service.StartRequest{Workflow: wf}); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateThread(ctx, thr2); err != nil {
		t.Fatal(err)
	}
	st.n.Store(0)
	if _, err := s.Start(ctx, service.StartRequest{Workflow: wf, Thread: "t2", Components: []component.Spec{}, ContextTokens: 7, Input: map[string]flow.Value{}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Thread(ctx, "t2")
	if err != nil || st.n.Load() != 1 || !json.Valid(got.Spec) || json.Unmarshal(got.Spec, &spec) != nil || spec.ContextTokens != 7 {
		t.Errorf("Start with another spec: %d writes, thread %+v, %v", st.n.Load(), got, err)
	}
	if err := s.ThreadSpec(ctx, &store.Thread{}, service.StartRequest{}); err == nil {
		t.Error("ThreadSpec without a workflow: no error")
	}
}
