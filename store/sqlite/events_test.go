package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/storetest"
)

// TestMigrateFromV8RunEvents opens a database written at schema version
// 8 (before run events) holding a job: Open migrates it, the job takes
// events, reads run from the index, and deleting the job deletes them.
func TestMigrateFromV8RunEvents(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v8.db")
	old, err := openAt(ctx, path, migrations()[:8])
	if err != nil {
		t.Fatal(err)
	}
	if err := old.CreateThread(ctx, &store.Thread{ID: "t1", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := old.CreateJob(ctx, &store.Job{ID: "j1", ThreadID: "t1", Status: store.JobRunning}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.RunEvents(ctx, "j1", 0, 0); err == nil {
		t.Errorf("RunEvents at schema 8: no error")
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a v8 database: %v", err)
	}
	defer s.Close()
	if v, _ := version(ctx, s.writer); v != SchemaVersion {
		t.Fatalf("after Open, version %d, want %d", v, SchemaVersion)
	}
	checkSchema(t, s)
	if err := s.AppendRunEvents(ctx, "j1", []*store.RunEvent{{Seq: 1, Attempt: "a", Event: "metadata", Data: []byte(`{}`)}, {Seq: 2, Attempt: "a", N: 1, Event: "end"}}); err != nil {
		t.Fatalf("AppendRunEvents after migration: %v", err)
	}
	evs, err := s.RunEvents(ctx, "j1", 1, 0)
	if err != nil || len(evs) != 1 || evs[0].Seq != 2 || evs[0].Event != "end" {
		t.Fatalf("RunEvents after migration = %+v, %v; want event 2", evs, err)
	}
	var detail string
	var id, parent, unused int
	if err := s.reader.QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT seq, attempt, n, event, data, time FROM run_events
			WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ? + 0`, "j1", 0, -1).Scan(&id, &parent, &unused, &detail); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(detail, "USING INDEX run_events_key") {
		t.Errorf("run events' plan: %q, want the index run_events_key", detail)
	}
	if err := s.DeleteJob(ctx, "j1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM run_events`).Scan(&n); err != nil || n != 0 {
		t.Errorf("run_events rows after DeleteJob: %d (%v), want 0", n, err)
	}
}

// TestRunEventsAcrossStores: a WaitRunEvents on one Store is woken by an
// append through another Store on the same file (another process's, as
// far as the waiter can tell), by its poll: within maxEventPoll and a
// margin.
func TestRunEventsAcrossStores(t *testing.T) {
	a, path := openTemp(t)
	b, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	storetest.RunEventsAcross(t, a, b, maxEventPoll+250*time.Millisecond)
}

// TestWaitRunEventsClosed: Close ends a WaitRunEvents with an error.
func TestWaitRunEventsClosed(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t1", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, &store.Job{ID: "j1", ThreadID: "t1"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.WaitRunEvents(ctx, "j1", 0, 0)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("WaitRunEvents on a closed store: %v; want store.ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("WaitRunEvents not ended by Close")
	}
}

// TestRunEventWaitersForgotten: a waiter that leaves (woken, or its
// context ended) leaves nothing behind in the store's map of waiters.
func TestRunEventWaitersForgotten(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"j1", "j2"} {
		if err := s.CreateJob(ctx, &store.Job{ID: id, ThreadID: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.WaitRunEvents(cctx, "j1", 0, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitRunEvents = %v, want its deadline", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.WaitRunEvents(ctx, "j2", 0, 0)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := s.AppendRunEvents(ctx, "j2", []*store.RunEvent{{Seq: 1, Event: "e"}}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.evMu.Lock()
	n := len(s.evWake)
	s.evMu.Unlock()
	if n != 0 {
		t.Errorf("%d jobs left in the map of waiters, want 0", n)
	}
}
