package memory

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/weftlang/weft/store"
)

var _ store.RunEvents = (*Store)(nil)

func copyRunEvent(e *store.RunEvent) *store.RunEvent {
	c := *e
	c.Data = bytes.Clone(e.Data)
	return &c
}

// evWaiters are the waiters of one job's events: the channel they wait
// on, closed and replaced by an append, and how many they are (the entry
// goes when the last leaves).
type evWaiters struct {
	ch chan struct{}
	n  int
}

// wakeRunEvents wakes the waiters of job (s.mu held).
func (s *Store) wakeRunEvents(job string) {
	if w, ok := s.evWake[job]; ok {
		close(w.ch)
		w.ch = make(chan struct{})
	}
}

// AppendRunEvents appends events of a job; see store.RunEvents.
func (s *Store) AppendRunEvents(ctx context.Context, job string, evs []*store.RunEvent) error {
	for _, e := range evs {
		if err := store.CheckRunEvent(job, e); err != nil {
			return fmt.Errorf("memory store: append run events: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, ok := s.jobs[job]; !ok {
		return fmt.Errorf("memory store: job %s: %w", job, store.ErrNotFound)
	}
	if len(evs) == 0 {
		return nil
	}
	old := s.events[job]
	last := int64(0)
	if len(old) > 0 {
		last = old[len(old)-1].Seq
	}
	if evs[0].Seq != last+1 {
		return &store.RunEventConflictError{Job: job, Want: evs[0].Seq, Got: last}
	}
	for i, e := range evs[1:] {
		if e.Seq != evs[i].Seq+1 {
			return &store.RunEventConflictError{Job: job, Want: e.Seq, Got: evs[i].Seq}
		}
	}
	n := s.clock()
	for _, e := range evs {
		if e.Time.IsZero() {
			e.Time = n
		}
		old = append(old, copyRunEvent(e))
	}
	s.events[job] = old
	s.wakeRunEvents(job)
	return nil
}

// runEvents returns copies of job's events after after, at most limit
// (s.mu held).
func (s *Store) runEvents(job string, after int64, limit int) ([]*store.RunEvent, error) {
	if _, ok := s.jobs[job]; !ok {
		return nil, fmt.Errorf("memory store: job %s: %w", job, store.ErrNotFound)
	}
	all := s.events[job]
	i := 0
	if len(all) > 0 {
		// Seqs are contiguous from all[0].Seq.
		i = int(min(max(after-all[0].Seq+1, 0), int64(len(all))))
	}
	out := []*store.RunEvent{}
	for _, e := range all[i:] {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, copyRunEvent(e))
	}
	return out, nil
}

// RunEvents returns a job's events after a Seq; see store.RunEvents.
func (s *Store) RunEvents(ctx context.Context, job string, after int64, limit int) ([]*store.RunEvent, error) {
	if limit < 0 {
		return nil, fmt.Errorf("memory store: run events of job %s: limit %d: negative: %w", job, limit, store.ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.runEvents(job, after, limit)
}

// WaitRunEvents returns a job's events after a Seq, waiting for one;
// see store.RunEvents. An append wakes the waiters of its job at once.
func (s *Store) WaitRunEvents(ctx context.Context, job string, after int64, limit int) ([]*store.RunEvent, error) {
	if limit < 0 {
		return nil, fmt.Errorf("memory store: run events of job %s: limit %d: negative: %w", job, limit, store.ErrInvalid)
	}
	var w *evWaiters
	defer func() {
		if w != nil {
			s.mu.Lock()
			if w.n--; w.n == 0 && s.evWake[job] == w {
				delete(s.evWake, job)
			}
			s.mu.Unlock()
		}
	}()
	for {
		s.mu.Lock()
		if err := s.check(ctx); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		out, err := s.runEvents(job, after, limit)
		if err != nil || len(out) > 0 {
			s.mu.Unlock()
			return out, err
		}
		if w == nil {
			if w = s.evWake[job]; w == nil {
				w = &evWaiters{ch: make(chan struct{})}
				s.evWake[job] = w
			}
			w.n++
		}
		ch := w.ch
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// PruneRunEvents deletes the events of ended jobs; see store.RunEvents.
func (s *Store) PruneRunEvents(ctx context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	n := 0
	for id, evs := range s.events {
		j, ok := s.jobs[id]
		if !ok || (j.Status != store.JobPending && j.Status != store.JobRunning && j.Updated.Before(before)) {
			n += len(evs)
			delete(s.events, id)
		}
	}
	return n, nil
}

// dropRunEvents deletes job's events and wakes its waiters, who find it
// gone (s.mu held).
func (s *Store) dropRunEvents(job string) {
	delete(s.events, job)
	s.wakeRunEvents(job)
}
