package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/weftlang/weft/store"
)

var _ store.RunEvents = (*Store)(nil)

// Run events live in the table run_events (schema version 9), deleted
// with their job by the foreign key's cascade. An append is a
// transaction that begins IMMEDIATE and reads the job's last seq first,
// so two appenders, in this process or others, are serialised by
// SQLite's write lock: one wins, the other finds the seq taken.
//
// WaitRunEvents is woken at once by this Store's own appends; SQLite
// cannot tell it of another process's, so it also reads again, first
// after firstEventPoll, then at intervals doubling up to maxEventPoll.

// How long WaitRunEvents first waits before reading again, and the most
// it waits between reads.
const (
	firstEventPoll = 100 * time.Millisecond
	maxEventPoll   = time.Second
)

// AppendRunEvents appends events of a job in one transaction; see
// store.RunEvents.
func (s *Store) AppendRunEvents(ctx context.Context, job string, evs []*store.RunEvent) error {
	for _, e := range evs {
		if err := store.CheckRunEvent(job, e); err != nil {
			return fmt.Errorf("sqlite store: append run events: %w", err)
		}
	}
	if len(evs) == 0 {
		if _, err := s.RunEvents(ctx, job, 0, 1); err != nil {
			return err
		}
		return nil
	}
	for i, e := range evs[1:] {
		if e.Seq != evs[i].Seq+1 {
			return &store.RunEventConflictError{Job: job, Want: e.Seq, Got: evs[i].Seq}
		}
	}
	if s.w.insertEvent == nil {
		return fmt.Errorf("sqlite store: run events at schema %d: %w", s.schema, store.ErrInvalid)
	}
	var t time.Time
	err := s.stmtTx(ctx, func() error {
		bg := context.Background()
		var last int64
		err := s.w.lastEvent.QueryRowContext(bg, job).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("job", job)
		}
		if err != nil {
			return err
		}
		if evs[0].Seq != last+1 {
			return &store.RunEventConflictError{Job: job, Want: evs[0].Seq, Got: last}
		}
		t = now()
		for _, e := range evs {
			at := e.Time
			if at.IsZero() {
				at = t
			}
			if _, err := s.w.insertEvent.ExecContext(bg, job, e.Seq, e.Attempt, e.N, e.Event, nonNil(e.Data), unix(at)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		var ce *store.RunEventConflictError
		if errors.As(err, &ce) || errors.Is(err, store.ErrNotFound) {
			return err
		}
		return fmt.Errorf("sqlite store: append run events of job %s at %d: %w", job, evs[0].Seq, err)
	}
	for _, e := range evs {
		if e.Time.IsZero() {
			e.Time = t
		}
	}
	s.wakeRunEvents(job)
	return nil
}

// evWaiters are this process's waiters of one job's events: the channel
// they wait on, closed and replaced by an append, and how many they are
// (the entry goes when the last leaves).
type evWaiters struct {
	ch chan struct{}
	n  int
}

// wakeRunEvents wakes this process's waiters of job.
func (s *Store) wakeRunEvents(job string) {
	s.evMu.Lock()
	defer s.evMu.Unlock()
	if w, ok := s.evWake[job]; ok {
		close(w.ch)
		w.ch = make(chan struct{})
	}
}

// waitRunEvents counts a waiter of job in; the channel of job's waiters
// is read with w.ch under evMu, and leave counts the waiter out.
func (s *Store) waitRunEvents(job string) (w *evWaiters, leave func()) {
	s.evMu.Lock()
	defer s.evMu.Unlock()
	if w = s.evWake[job]; w == nil {
		w = &evWaiters{ch: make(chan struct{})}
		s.evWake[job] = w
	}
	w.n++
	return w, func() {
		s.evMu.Lock()
		defer s.evMu.Unlock()
		if w.n--; w.n == 0 {
			delete(s.evWake, job)
		}
	}
}

// RunEvents returns a job's events after a Seq; see store.RunEvents.
func (s *Store) RunEvents(ctx context.Context, job string, after int64, limit int) ([]*store.RunEvent, error) {
	if limit < 0 {
		return nil, fmt.Errorf("sqlite store: run events of job %s: limit %d: negative: %w", job, limit, store.ErrInvalid)
	}
	if s.r.runEvents == nil {
		return nil, fmt.Errorf("sqlite store: run events at schema %d: %w", s.schema, store.ErrInvalid)
	}
	l := int64(-1)
	if limit > 0 {
		l = int64(limit)
	}
	out, err := s.readRunEvents(ctx, job, after, l)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: run events of job %s: %w", job, err)
	}
	if len(out) == 0 {
		// None: say whether the job exists.
		var st string
		err := s.r.jobStatus.QueryRowContext(ctx, job).Scan(&st)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound("job", job)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite store: run events of job %s: %w", job, err)
		}
	}
	return out, nil
}

func (s *Store) readRunEvents(ctx context.Context, job string, after, limit int64) ([]*store.RunEvent, error) {
	rows, err := s.r.runEvents.QueryContext(ctx, job, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*store.RunEvent{}
	for rows.Next() {
		var (
			e  store.RunEvent
			at int64
		)
		if err := rows.Scan(&e.Seq, &e.Attempt, &e.N, &e.Event, &e.Data, &at); err != nil {
			return nil, err
		}
		if len(e.Data) == 0 {
			e.Data = nil
		}
		e.Time = fromUnix(at)
		out = append(out, &e)
	}
	return out, rows.Err()
}

// WaitRunEvents returns a job's events after a Seq, waiting for one;
// see store.RunEvents. This Store's appends wake it at once; other
// processes' are seen by reading again, at most maxEventPoll apart.
func (s *Store) WaitRunEvents(ctx context.Context, job string, after int64, limit int) ([]*store.RunEvent, error) {
	wait := firstEventPoll
	w, leave := s.waitRunEvents(job)
	defer leave()
	for {
		// The channel is taken before reading, so that an append
		// between the read and the wait is not missed.
		s.evMu.Lock()
		ch := w.ch
		s.evMu.Unlock()
		out, err := s.RunEvents(ctx, job, after, limit)
		if err != nil || len(out) > 0 {
			return out, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ch:
			wait = firstEventPoll
		case <-t.C:
			wait = min(2*wait, maxEventPoll)
		case <-s.closed:
			t.Stop()
			return nil, fmt.Errorf("sqlite store: run events of job %s: %w", job, store.ErrClosed)
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
	}
}

// PruneRunEvents deletes the events of ended jobs; see store.RunEvents.
func (s *Store) PruneRunEvents(ctx context.Context, before time.Time) (int, error) {
	if s.w.pruneEvents == nil {
		return 0, fmt.Errorf("sqlite store: run events at schema %d: %w", s.schema, store.ErrInvalid)
	}
	var res sql.Result
	err := s.write(ctx, func() (err error) {
		res, err = s.w.pruneEvents.ExecContext(ctx, unix(before))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite store: prune run events: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite store: prune run events: %w", err)
	}
	return int(n), nil
}
