package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weftlang/weft/store"
)

// Group commit.
//
// Every write of the store goes through the writer's one connection, one at
// a time. A write that finds the writer busy queues, and the write that
// holds it next (the leader) takes the whole queue and commits it as one
// transaction: each queued write runs inside it (a write of several
// statements inside a savepoint of its own, so that its failure undoes only
// its own statements), then one COMMIT makes them all durable at once, and
// each caller returns only after that COMMIT, with its own write's result.
// In WAL mode a commit appends every page the transaction changed to the
// log; writes committed together write the pages they share (the right edge
// of an index, a thread's row) once, take SQLite's file locks once and
// reach the next checkpoint later. A write that finds the writer free runs
// alone, as before, so that a lone client pays nothing for it. A leader
// commits one group (at most maxGroup writes) and lets go of the writer; a
// write still queued then takes it and leads the next group, so no caller
// runs more than one group of other callers' writes.
//
// The result of a grouped write is the one it would have had alone: the
// writes of a group run in the order they queued, each sees those before
// it, and anything that fails the group as a whole (another process's
// lock, a full disk, a failed COMMIT) makes the leader roll the group back
// and run each of its writes again alone (a write may run more than once:
// see write).

// maxGroup bounds the writes one transaction commits together, so that a
// long queue is committed in steps and no caller waits for all of it.
const maxGroup = 64

// writeKind says how a queued write may be grouped.
type writeKind uint8

const (
	// single: fn runs one statement, which SQLite undoes by itself when it
	// fails; alone it runs in autocommit mode.
	single writeKind = iota
	// multi: fn runs several statements of the writer's prepared
	// statements; alone it runs in a transaction of its own (stmtTx), in a
	// group inside a savepoint.
	multi
	// alone: fn begins and ends a database/sql transaction itself (tx),
	// so it never runs inside a group.
	alone
)

// writeReq is one caller's write, queued for the writer.
type writeReq struct {
	ctx  context.Context
	fn   func() error
	kind writeKind
	err  error
	done chan struct{} // closed when err is final
}

// writeQueue holds the writes waiting for the writer (Store.queue).
type writeQueue struct {
	mu   sync.Mutex
	reqs []*writeReq
}

// remove takes r out of the queue, reporting whether it was there (not
// yet taken by a leader).
func (q *writeQueue) remove(r *writeReq) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.reqs, r)
	if i < 0 {
		return false
	}
	q.reqs = slices.Delete(q.reqs, i, i+1)
	return true
}

// take returns up to maxGroup queued writes, oldest first, removing them.
func (q *writeQueue) take() []*writeReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.reqs), maxGroup)
	batch := slices.Clone(q.reqs[:n])
	q.reqs = slices.Delete(q.reqs, 0, n)
	return batch
}

// submit runs fn holding the writer, alone or committed with other writes
// queued meanwhile, and returns its result once it is durable (or failed).
// See write for what fn must be.
func (s *Store) submit(ctx context.Context, kind writeKind, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// The fast path: the writer is free and nobody queues.
	select {
	case s.wlock <- struct{}{}:
		err := s.alone(ctx, kind, fn)
		<-s.wlock // a queued write takes it and leads
		return err
	default:
	}
	r := &writeReq{ctx: ctx, fn: fn, kind: kind, done: make(chan struct{})}
	s.queue.mu.Lock()
	s.queue.reqs = append(s.queue.reqs, r)
	s.queue.mu.Unlock()
	for {
		select {
		case <-r.done:
			return r.err
		case s.wlock <- struct{}{}:
			select {
			case <-r.done: // run by the leader before us
				<-s.wlock
				return r.err
			default:
			}
			// Not done, so still queued (a leader closes done before it
			// lets go of the writer): lead the queue, which holds r.
			s.runQueue()
			<-s.wlock
		case <-ctx.Done():
			if s.queue.remove(r) {
				return ctx.Err()
			}
			// A leader took r: its result comes soon (the leader checks
			// ctx before running it).
			<-r.done
			return r.err
		}
	}
}

// runQueue runs one batch of queued writes, holding the writer, and
// closes their done channels.
func (s *Store) runQueue() {
	batch := s.queue.take()
	for len(batch) > 0 {
		// Writes that may be grouped, in order, up to the next one that
		// may not.
		n := slices.IndexFunc(batch, func(r *writeReq) bool { return r.kind == alone })
		switch {
		case n == 0:
			r := batch[0]
			r.err = s.alone(r.ctx, r.kind, r.fn)
			close(r.done)
			batch = batch[1:]
			continue
		case n < 0:
			n = len(batch)
		}
		s.group(batch[:n])
		batch = batch[n:]
	}
}

// group runs writes in one transaction, holding the writer, and closes
// their done channels. A write whose context ended is not run.
func (s *Store) group(batch []*writeReq) {
	var live []*writeReq
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			close(r.done)
			continue
		}
		live = append(live, r)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		r := live[0]
		r.err = s.alone(r.ctx, r.kind, r.fn)
		close(r.done)
		return
	}
	if err := s.groupTx(live); err != nil {
		// The group as a whole failed (and was rolled back): each write
		// runs again alone, which says what its own result is.
		for _, r := range live {
			r.err = s.alone(r.ctx, r.kind, r.fn)
		}
	}
	for _, r := range live {
		close(r.done)
	}
}

// groupTx runs the writes in one transaction, setting each one's error. An
// error returned means the group failed as a whole, and nothing of it was
// written; the writes' errors are then meaningless.
func (s *Store) groupTx(live []*writeReq) error {
	bg := context.Background()
	if _, err := s.w.begin.ExecContext(bg); err != nil {
		// Another process holds the lock, or worse: alone, each write
		// waits for it with its own context.
		return err
	}
	fail := s.rollback
	for _, r := range live {
		if r.kind == multi {
			if _, err := s.w.savepoint.ExecContext(bg); err != nil {
				return fail(err)
			}
		}
		r.err = r.fn()
		if r.err != nil && !ownError(r.err) {
			// Busy, full, I/O: the transaction may be gone.
			return fail(r.err)
		}
		if r.kind == multi {
			if r.err != nil {
				if _, err := s.w.rollbackTo.ExecContext(bg); err != nil {
					return fail(err)
				}
			}
			if _, err := s.w.releaseSave.ExecContext(bg); err != nil {
				return fail(err)
			}
		}
	}
	if _, err := s.w.commit.ExecContext(bg); err != nil {
		return fail(err)
	}
	s.grouped.Add(int64(len(live)))
	return nil
}

// ownError reports whether err, returned by a write inside a group, is the
// write's own (a constraint, a refused lease, no row), which the other
// writes of the group do not share. Any other SQLite error fails the group.
func ownError(err error) bool {
	c := code(err)
	return c == 0 || c == sqliteConstraint
}

// alone runs fn by itself holding the writer: a multi write in a
// transaction of its own. While another process holds the database's
// write lock (SQLITE_BUSY: fn did nothing) it waits and runs fn again,
// until BusyTimeout has passed or ctx ends.
func (s *Store) alone(ctx context.Context, kind writeKind, fn func() error) error {
	if kind == multi {
		inner := fn
		fn = func() error { return s.inTx(inner) }
	}
	var deadline time.Time
	wait := firstBusyWait
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := fn()
		switch code(err) {
		case sqliteBusy:
		case sqliteFull:
			return fmt.Errorf("%w: %w", store.ErrFull, err)
		case sqliteReadOnly, sqlitePerm:
			return fmt.Errorf("%w: %w", store.ErrReadOnly, err)
		default:
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(BusyTimeout)
		} else if time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for another process's lock: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, maxBusyWait)
	}
}

// inTx runs fn in a transaction begun and ended by the writer's prepared
// statements; see stmtTx.
func (s *Store) inTx(fn func() error) error {
	bg := context.Background()
	if _, err := s.w.begin.ExecContext(bg); err != nil {
		return err
	}
	err := fn()
	if err == nil {
		if _, err = s.w.commit.ExecContext(bg); err == nil {
			return nil
		}
	}
	return s.rollback(err)
}

// rollback ends the writer's transaction, which err failed, and returns
// err; a ROLLBACK that fails leaves the connection in the transaction,
// so that connection is then closed (database/sql opens another).
func (s *Store) rollback(err error) error {
	if _, rerr := s.w.rollback.ExecContext(context.Background()); rerr != nil && !strings.Contains(rerr.Error(), "no transaction is active") {
		return errors.Join(err, s.dropWriterConn(rerr))
	}
	return err
}
