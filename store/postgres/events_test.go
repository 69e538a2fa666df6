package postgres

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/storetest"
)

// openTwo opens two Stores (two pools, as two processes would have) on
// one fresh database.
func openTwo(t *testing.T) (a, b *Store) {
	t.Helper()
	db := pgtest.New(t)
	for _, p := range []**Store{&a, &b} {
		s, err := Open(context.Background(), db.DSN)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		*p = s
	}
	return a, b
}

// TestRunEventsAcrossStores: an append through one Store wakes a
// WaitRunEvents on another through LISTEN/NOTIFY, well before the
// fallback read a second later.
func TestRunEventsAcrossStores(t *testing.T) {
	a, b := openTwo(t)
	if slowest := storetest.RunEventsAcross(t, a, b, 500*time.Millisecond); slowest >= fallbackPoll/2 {
		t.Errorf("slowest wake %v: not by a notification", slowest)
	}
}

// listenerPID returns the backend pid of s's LISTEN connection, waiting
// up to 5 s for it to listen.
func listenerPID(t *testing.T, s *Store, not int32) int32 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var pid int32
		err := s.pool.QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid != $1`, not).Scan(&pid)
		s.listener.mu.Lock()
		on := s.listener.listening
		s.listener.mu.Unlock()
		if err == nil && on {
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the listener did not LISTEN within 5 s")
	return 0
}

// TestRunEventsListenAgain: after the listener's connection is
// terminated by the server, the listener LISTENs again on a new one, and
// appends wake waiters by notification again.
func TestRunEventsListenAgain(t *testing.T) {
	a, b := openTwo(t)
	ctx := t.Context()
	if err := a.CreateThread(ctx, &store.Thread{ID: "t1", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateJob(ctx, &store.Job{ID: "j1", ThreadID: "t1"}); err != nil {
		t.Fatal(err)
	}
	waitOne := func(after int64) (time.Duration, error) {
		type result struct {
			evs []*store.RunEvent
			err error
			at  time.Time
		}
		ch := make(chan result, 1)
		go func() {
			evs, err := b.WaitRunEvents(ctx, "j1", after, 0)
			ch <- result{evs, err, time.Now()}
		}()
		time.Sleep(150 * time.Millisecond)
		start := time.Now()
		if err := a.AppendRunEvents(ctx, "j1", []*store.RunEvent{{Seq: after + 1, Event: "values"}}); err != nil {
			t.Fatal(err)
		}
		r := <-ch
		if r.err == nil && (len(r.evs) != 1 || r.evs[0].Seq != after+1) {
			t.Errorf("WaitRunEvents after %d = %+v", after, r.evs)
		}
		return r.at.Sub(start), r.err
	}
	if d, err := waitOne(0); err != nil || d > 500*time.Millisecond {
		t.Fatalf("first wake: %v, %v", d, err)
	}
	pid := listenerPID(t, b, 0)
	var ok bool
	if err := a.pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
	// While it reconnects, a waiter is still woken (by the listener
	// waking all when it LISTENs again, or by the fallback read).
	if d, err := waitOne(1); err != nil || d > fallbackPoll+500*time.Millisecond {
		t.Fatalf("wake while the listener reconnects: %v, %v", d, err)
	}
	if again := listenerPID(t, b, pid); again == pid {
		t.Fatalf("listener pid %d after terminating it", again)
	}
	for i := range 3 {
		if d, err := waitOne(int64(2 + i)); err != nil || d > 500*time.Millisecond {
			t.Errorf("wake %d after the listener came back: %v, %v; want a notification (< 500 ms)", i, d, err)
		}
	}
	b.listener.mu.Lock()
	left := len(b.listener.waiters)
	b.listener.mu.Unlock()
	if left != 0 {
		t.Errorf("%d jobs left in the listener's map of waiters, want 0", left)
	}
}

// TestRunEventsCloseStopsListener: Close ends the waiters and the
// listening goroutine, and a Store never waited on starts none.
func TestRunEventsCloseStopsListener(t *testing.T) {
	db := pgtest.New(t)
	ctx := t.Context()
	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateThread(ctx, &store.Thread{ID: "t1", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, &store.Job{ID: "j1", ThreadID: "t1"}); err != nil {
		t.Fatal(err)
	}
	if s.listener.started {
		t.Fatal("the listener started before any waiter")
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := s.WaitRunEvents(ctx, "j1", 0, 0)
			errs <- err
		}()
	}
	listenerPID(t, s, 0)
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("Close did not return within 5 s:\n%s", buf[:runtime.Stack(buf, true)])
	}
	for range 3 {
		select {
		case err := <-errs:
			if !errors.Is(err, store.ErrClosed) {
				t.Errorf("WaitRunEvents ended by Close: %v; want store.ErrClosed", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("a WaitRunEvents still waits after Close")
		}
	}
	select {
	case <-s.listener.exited:
	default:
		t.Fatal("the listening goroutine still runs after Close")
	}
	// exited is closed by run's deferred call, a moment before the
	// goroutine is gone from the stacks: give it that moment.
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(2 * time.Second); ; {
		st := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(st, "(*listener).run") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("a listener goroutine is left 2 s after Close:\n%s", st)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := s.WaitRunEvents(context.Background(), "j1", 0, 0); err == nil {
		t.Errorf("WaitRunEvents after Close: no error")
	}
}

// A call on a closed store fails with store.ErrClosed, not the pool's own
// error: a wait that Close ends between its subscription and its read
// (TestRunEventsCloseStopsListener's race) says the store closed.
func TestCallsAfterCloseSayClosed(t *testing.T) {
	db := pgtest.New(t)
	ctx := t.Context()
	s, err := Open(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateThread(ctx, &store.Thread{ID: "t1", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Thread(ctx, "t1"); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Thread after Close: %v; want store.ErrClosed", err)
	}
	if _, err := s.RunEvents(ctx, "j1", 0, 0); !errors.Is(err, store.ErrClosed) {
		t.Errorf("RunEvents after Close: %v; want store.ErrClosed", err)
	}
	if _, err := s.WaitRunEvents(ctx, "j1", 0, 0); !errors.Is(err, store.ErrClosed) {
		t.Errorf("WaitRunEvents after Close: %v; want store.ErrClosed", err)
	}
}
