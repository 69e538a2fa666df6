package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/weftlang/weft/store"
)

// TestPointReadsCancelled checks that the point reads, which run their
// statements without the context's cancellation, still fail at once with
// a context that is done, and answer with one that is not.
func TestPointReadsCancelled(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t1"}); err != nil {
		t.Fatal(err)
	}
	job := &store.Job{ID: "j1", ThreadID: "t1", Assistant: "a", Request: []byte(`{}`)}
	if err := s.CreateJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	reads := map[string]func(context.Context) error{
		"Thread":       func(c context.Context) error { _, err := s.Thread(c, "t1"); return err },
		"Head":         func(c context.Context) error { _, _, err := s.Head(c, "t1"); return err },
		"Pending":      func(c context.Context) error { _, err := s.Pending(c, "t1"); return err },
		"Job":          func(c context.Context) error { _, err := s.Job(c, "j1"); return err },
		"Jobs":         func(c context.Context) error { _, err := s.Jobs(c, store.JobQuery{ThreadID: "t1"}); return err },
		"threadExists": func(c context.Context) error { return s.threadExists(c, "t1") },
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	live, stop := context.WithCancel(ctx)
	defer stop()
	for name, read := range reads {
		if err := read(done); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", name, err)
		}
		if err := read(live); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The one-row writes, which run their statement without the
	// cancellation too, refuse a done context before writing.
	if err := s.CreateThread(done, &store.Thread{ID: "t2"}); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateThread with a cancelled context: %v", err)
	}
	if _, err := s.Thread(live, "t2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the thread CreateThread refused: %v", err)
	}
	thr, err := s.Thread(live, "t1")
	if err != nil {
		t.Fatal(err)
	}
	thr.Meta = map[string]string{"k": `"v"`}
	if err := s.UpdateThread(done, thr); !errors.Is(err, context.Canceled) {
		t.Errorf("UpdateThread with a cancelled context: %v", err)
	}
	if thr, err := s.Thread(live, "t1"); err != nil || thr.Meta["k"] != "" {
		t.Errorf("the thread UpdateThread refused: %+v, %v", thr, err)
	}
	if err := s.UpdateThread(live, thr); err != nil {
		t.Fatal(err)
	}
	if thr, err := s.Thread(live, "t1"); err != nil || thr.Meta["k"] != `"v"` {
		t.Errorf("the thread updated: %+v, %v", thr, err)
	}
	// A thread that is not there is still not found.
	if _, _, err := s.Head(live, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Head of a missing thread: %v", err)
	}
}
