package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/storetest"
)

// CorruptRecord flips a byte of a stored record's Data, for
// storetest.Corrupter.
func (s *Store) CorruptRecord(ctx context.Context, threadID string, seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.thread(threadID)
	if err != nil {
		return err
	}
	for _, r := range th.records {
		if r.Seq == seq && len(r.Data) > 0 {
			r.Data[len(r.Data)/2] ^= 0x20
			return nil
		}
	}
	return fmt.Errorf("thread %s has no record %d with data", threadID, seq)
}

var _ storetest.Corrupter = (*Store)(nil)

// DeleteRecord removes a stored record behind the store's back, for
// storetest.Deleter.
func (s *Store) DeleteRecord(ctx context.Context, threadID string, seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.thread(threadID)
	if err != nil {
		return err
	}
	for i, r := range th.records {
		if r.Seq == seq {
			th.records = append(th.records[:i:i], th.records[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("thread %s has no record %d", threadID, seq)
}

var _ storetest.Deleter = (*Store)(nil)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := New()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestClosed(t *testing.T) {
	s := New()
	s.Close()
	if _, err := s.Thread(t.Context(), "x"); err != ErrClosed || !errors.Is(err, store.ErrClosed) {
		t.Errorf("Thread after Close: %v, want ErrClosed (store.ErrClosed)", err)
	}
}

// TestLeaseClock: expiry is decided by the store's clock, which WithClock
// injects: a lease lives until the clock passes Expires, whatever the
// wall clock says.
func TestLeaseClock(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := New(WithClock(func() time.Time { return at }))
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Claim(ctx, "t", "A", time.Minute)
	if err != nil || a.Fence != 1 || !a.Expires.Equal(at.Add(time.Minute)) {
		t.Fatalf("Claim = %+v, %v; want fence 1 expiring at %v", a, err, at.Add(time.Minute))
	}
	at = at.Add(time.Minute - time.Nanosecond)
	if _, err := s.Claim(ctx, "t", "B", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("Claim a nanosecond before expiry: %v, want ErrLeaseHeld", err)
	}
	if err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 1, Kind: store.Step, Fence: a.Fence}); err != nil {
		t.Fatalf("Append a nanosecond before expiry: %v", err)
	}
	at = at.Add(time.Nanosecond) // Expires itself is past
	err = s.Append(ctx, &store.Record{ThreadID: "t", Seq: 2, Kind: store.Step, Fence: a.Fence})
	var le *store.LeaseError
	if !errors.As(err, &le) || le.Err != store.ErrLeaseLost || le.Holder != "" || le.HolderFence != 1 {
		t.Fatalf("Append at expiry: %v, want ErrLeaseLost with no holder", err)
	}
	b, err := s.Claim(ctx, "t", "B", time.Second)
	if err != nil || b.Fence != 2 || !b.Expires.Equal(at.Add(time.Second)) {
		t.Fatalf("Claim at expiry = %+v, %v; want fence 2", b, err)
	}
	at = at.Add(time.Second / 2)
	if b, err = s.Heartbeat(ctx, b, time.Second); err != nil || !b.Expires.Equal(at.Add(time.Second)) {
		t.Fatalf("Heartbeat = %+v, %v; want expiry %v", b, err, at.Add(time.Second))
	}
	if recs, err := s.Records(ctx, "t", 1); err != nil || len(recs) != 1 || recs[0].Fence != 1 || !recs[0].Time.Equal(at.Add(-time.Second/2-time.Nanosecond)) {
		t.Fatalf("Records = %+v, %v; want record 1 of fence 1 at the store's time", recs, err)
	}
}

// TestRunEventWaitersForgotten: a waiter that leaves (woken, or its
// context ended) leaves nothing behind in the store's map of waiters.
func TestRunEventWaitersForgotten(t *testing.T) {
	ctx := t.Context()
	s := New()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
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
	s.mu.Lock()
	n := len(s.evWake)
	s.mu.Unlock()
	if n != 0 {
		t.Errorf("%d jobs left in the map of waiters, want 0", n)
	}
}
