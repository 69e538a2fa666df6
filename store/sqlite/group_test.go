package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// queued waits until n writes are queued for the writer.
func queued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.queue.mu.Lock()
		got := len(s.queue.reqs)
		s.queue.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// shortRun writes what a short run on a new thread writes: the thread, a
// lease, and one EndRun with two records, a question, the run's row and
// the release. It returns the lease's fence.
func shortRun(ctx context.Context, s *Store, id string) error {
	if err := s.CreateThread(ctx, &store.Thread{ID: id, Meta: map[string]string{"owner": id}}); err != nil {
		return err
	}
	l, err := s.Claim(ctx, id, "me", time.Minute)
	if err != nil {
		return err
	}
	at := time.Now()
	recs := []*store.Record{record300(1), record300(2)}
	for i, r := range recs {
		r.ThreadID, r.RunID, r.Fence = id, "r-"+id, l.Fence
		r.Data = fmt.Appendf(nil, `{"thread":%q,"n":%d}`, id, i+1)
	}
	return s.EndRun(ctx, &store.RunEnd{Thread: id, Records: recs,
		Pending: []*store.Pending{{ID: "q", ThreadID: id, RunID: "r-" + id, Node: "ask", Question: fmt.Appendf(nil, `{"to":%q}`, id), Fence: l.Fence}},
		Run:     &store.Run{ID: "r-" + id, ThreadID: id, Number: 1, Status: store.Waiting, Created: at, Updated: at, Fence: l.Fence},
		Release: &l})
}

// checkShortRun checks that the thread holds exactly what shortRun wrote
// for it, nobody else's values.
func checkShortRun(ctx context.Context, s *Store, id string) error {
	th, err := s.Thread(ctx, id)
	if err != nil {
		return err
	}
	if th.Meta["owner"] != id {
		return fmt.Errorf("thread %s: meta %v", id, th.Meta)
	}
	recs, err := s.Records(ctx, id, 0)
	if err != nil {
		return err
	}
	if len(recs) != 2 {
		return fmt.Errorf("thread %s: %d records, want 2", id, len(recs))
	}
	for i, r := range recs {
		if want := fmt.Sprintf(`{"thread":%q,"n":%d}`, id, i+1); string(r.Data) != want || r.Seq != int64(i+1) || r.RunID != "r-"+id {
			return fmt.Errorf("thread %s: record %d is %d %s %s, want %s", id, i, r.Seq, r.RunID, r.Data, want)
		}
	}
	pend, err := s.Pending(ctx, id)
	if err != nil {
		return err
	}
	if len(pend) != 1 || string(pend[0].Question) != fmt.Sprintf(`{"to":%q}`, id) {
		return fmt.Errorf("thread %s: pending %+v", id, pend)
	}
	run, err := s.Run(ctx, "r-"+id)
	if err != nil {
		return err
	}
	if run.ThreadID != id || run.Status != store.Waiting {
		return fmt.Errorf("thread %s: run %+v", id, run)
	}
	if st, err := s.lease(id); err != nil || st.Owner != "" {
		return fmt.Errorf("thread %s: lease %+v not released (%v)", id, st, err)
	}
	return nil
}

// Many goroutines write at once: writes meet at the writer and are
// committed in groups, and every write lands on its own thread with its
// own values, while writes that fail (a taken id) fail alone.
func TestGroupCommitKeepsEachWritesValues(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "taken"}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*2)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := shortRun(ctx, s, id); err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
				if err := s.CreateThread(ctx, &store.Thread{ID: "taken"}); !errors.Is(err, store.ErrExists) {
					errs <- fmt.Errorf("%s: creating a taken thread: %v, want ErrExists", id, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range workers {
		for i := range each {
			if err := checkShortRun(ctx, s, fmt.Sprintf("w%d-%d", w, i)); err != nil {
				t.Error(err)
			}
		}
	}
	if n := s.grouped.Load(); n == 0 {
		t.Errorf("no write was committed in a group")
	} else {
		t.Logf("%d of %d writes committed in groups", n, workers*each*4)
	}
}

// hold takes the writer, as a write in progress would, so that writes
// queue behind it; the function returned lets go of it.
func hold(s *Store) func() {
	s.wlock <- struct{}{}
	return func() { <-s.wlock }
}

// A write of a group that fails after some of its statements ran is
// undone, all of it and only it: the writes before and after it in the
// same transaction are committed.
func TestGroupUndoesOnlyTheFailedWrite(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		if err := s.CreateThread(ctx, &store.Thread{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Now()
	if err := s.PutRun(ctx, &store.Run{ID: "run-of-c", ThreadID: "c", Number: 1, Status: store.Completed, Created: at, Updated: at}); err != nil {
		t.Fatal(err)
	}
	end := func(thread, runID string) *store.RunEnd {
		rec := record300(1)
		rec.ThreadID = thread
		return &store.RunEnd{Thread: thread, Records: []*store.Record{rec},
			Pending: []*store.Pending{{ID: "q", ThreadID: thread, RunID: runID, Node: "ask", Question: []byte(`{}`)}},
			Run:     &store.Run{ID: runID, ThreadID: thread, Number: 1, Status: store.Waiting, Created: at, Updated: at}}
	}
	release := hold(s)
	var wg sync.WaitGroup
	results := make([]error, 3)
	// b's run id is c's run: its records and question are written, then
	// its run's row is refused.
	for i, e := range []*store.RunEnd{end("a", "run-of-a"), end("b", "run-of-c"), end("c", "run-of-c2")} {
		wg.Go(func() { results[i] = s.EndRun(ctx, e) })
		queued(t, s, i+1) // in this order
	}
	release()
	wg.Wait()
	if results[0] != nil || results[2] != nil {
		t.Fatalf("a: %v, c: %v; want both to succeed", results[0], results[2])
	}
	if !errors.Is(results[1], store.ErrInvalid) {
		t.Fatalf("b: %v, want ErrInvalid (its run belongs to c)", results[1])
	}
	if n := s.grouped.Load(); n != 3 {
		t.Fatalf("%d writes committed in groups, want the 3", n)
	}
	for id, want := range map[string]int{"a": 1, "b": 0, "c": 1} {
		recs, err := s.Records(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		pend, err := s.Pending(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != want || len(pend) != want {
			t.Errorf("thread %s: %d records and %d questions, want %d of each", id, len(recs), len(pend), want)
		}
	}
}

// While another process holds the write lock, a group cannot begin: each
// of its writes then waits for the lock alone, and all are written once
// the lock is free.
func TestGroupWaitsOutAnotherProcesssLock(t *testing.T) {
	s, path := openTemp(t)
	ctx := t.Context()
	other, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	release := hold(s)
	var wg sync.WaitGroup
	results := make([]error, 4)
	for i := range results {
		wg.Go(func() { results[i] = s.CreateThread(ctx, &store.Thread{ID: fmt.Sprintf("t%d", i)}) })
	}
	queued(t, s, len(results))
	release()
	time.Sleep(50 * time.Millisecond) // the writes wait for the lock
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range results {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
		if _, err := s.Thread(ctx, fmt.Sprintf("t%d", i)); err != nil {
			t.Errorf("thread t%d: %v", i, err)
		}
	}
}

// A queued write whose context ends returns the context's error and
// writes nothing; the writes queued with it are written.
func TestQueuedWriteCancelled(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	release := hold(s)
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var cancelled, kept error
	wg.Go(func() { cancelled = s.CreateThread(cctx, &store.Thread{ID: "gone"}) })
	queued(t, s, 1)
	wg.Go(func() { kept = s.CreateThread(ctx, &store.Thread{ID: "kept"}) })
	queued(t, s, 2)
	cancel()
	for { // the cancelled write leaves the queue by itself
		s.queue.mu.Lock()
		n := len(s.queue.reqs)
		s.queue.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	if !errors.Is(cancelled, context.Canceled) {
		t.Errorf("cancelled write: %v, want context.Canceled", cancelled)
	}
	if kept != nil {
		t.Errorf("kept write: %v", kept)
	}
	if _, err := s.Thread(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the cancelled write's thread: %v, want ErrNotFound", err)
	}
	if _, err := s.Thread(ctx, "kept"); err != nil {
		t.Errorf("the kept write's thread: %v", err)
	}
}
