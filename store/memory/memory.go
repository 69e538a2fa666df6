// Package memory is a store.Store held in memory: for tests, and for runs
// that need no durability. It copies everything on the way in and out, so
// callers never share memory with it.
package memory

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/weftlang/weft/store"
)

// Store is an in-memory store.Store, safe for concurrent use. The zero
// value is not ready: use New.
type Store struct {
	now     func() time.Time // the store's clock
	mu      sync.RWMutex
	threads map[string]*thread
	runs    map[string]*store.Run // by run ID
	sources map[string][]byte     // by digest
	items   map[itemKey]*store.Item
	jobs    map[string]*store.Job // by job ID
	// events are the jobs' run events, by job ID, in Seq order;
	// evWake the channels their waiters wait on, closed by an append.
	events map[string][]*store.RunEvent
	evWake map[string]*evWaiters
	closed bool
}

type thread struct {
	t       store.Thread
	lastSeq int64
	records []*store.Record // in Seq order; records[0] may be after Seq 1 (pruned)
	pending map[string]*store.Pending
	lease   store.LeaseState
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Leaser = (*Store)(nil)
)

// An Option configures a Store.
type Option func(*Store)

// WithClock makes now the store's clock, for the times it fills in and
// the expiry of leases (tests move it instead of sleeping). It is called
// with the store's lock held, and must not call the store.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{now: time.Now, threads: map[string]*thread{}, runs: map[string]*store.Run{}, sources: map[string][]byte{},
		items: map[itemKey]*store.Item{}, jobs: map[string]*store.Job{},
		events: map[string][]*store.RunEvent{}, evWake: map[string]*evWaiters{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// clock reads the store's clock: UTC, without a monotonic reading.
func (s *Store) clock() time.Time { return s.now().UTC().Round(0) }

// ErrClosed is returned by a Store after Close; errors.Is finds
// store.ErrClosed in it.
var ErrClosed = fmt.Errorf("memory store: %w", store.ErrClosed)

// check checks the context and the store before an operation.
func (s *Store) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed {
		return ErrClosed
	}
	return nil
}

func copyThread(t *store.Thread) *store.Thread {
	c := *t
	c.Meta = maps.Clone(t.Meta)
	c.Spec = bytes.Clone(t.Spec)
	return &c
}

func copyRecord(r *store.Record) *store.Record {
	c := *r
	c.Data = bytes.Clone(r.Data)
	return &c
}

func copyPending(p *store.Pending) *store.Pending {
	c := *p
	c.Question = bytes.Clone(p.Question)
	c.Fence = 0 // not kept
	return &c
}

func copyRun(r *store.Run) *store.Run {
	c := *r
	c.Fence = 0 // not kept
	return &c
}

func (s *Store) thread(id string) (*thread, error) {
	th, ok := s.threads[id]
	if !ok {
		return nil, fmt.Errorf("memory store: thread %s: %w", id, store.ErrNotFound)
	}
	return th, nil
}

// CreateThread stores a new thread, filling in zero Created and Updated.
func (s *Store) CreateThread(ctx context.Context, t *store.Thread) error {
	if err := store.CheckThread(t); err != nil {
		return fmt.Errorf("memory store: create %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, ok := s.threads[t.ID]; ok {
		return fmt.Errorf("memory store: thread %s: %w", t.ID, store.ErrExists)
	}
	if err := s.sourceExists(t); err != nil {
		return err
	}
	n := s.clock()
	if t.Created.IsZero() {
		t.Created = n
	}
	if t.Updated.IsZero() {
		t.Updated = t.Created
	}
	s.threads[t.ID] = &thread{t: *copyThread(t), pending: map[string]*store.Pending{}}
	return nil
}

// Thread returns a copy of a thread.
func (s *Store) Thread(ctx context.Context, id string) (*store.Thread, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	th, err := s.thread(id)
	if err != nil {
		return nil, err
	}
	return s.withLastRun(&th.t), nil
}

// sourceExists checks that the source a thread names is stored.
func (s *Store) sourceExists(t *store.Thread) error {
	if _, ok := s.sources[t.Source]; t.Source != "" && !ok {
		return fmt.Errorf("memory store: thread %s: source %s: %w", t.ID, t.Source, store.ErrNotFound)
	}
	return nil
}

// UpdateThread replaces a thread's Workflow, Source, Spec and Meta; see
// store.Store.
func (s *Store) UpdateThread(ctx context.Context, t *store.Thread) error {
	if err := store.CheckThread(t); err != nil {
		return fmt.Errorf("memory store: update %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	th, err := s.thread(t.ID)
	if err != nil {
		return err
	}
	if err := s.sourceExists(t); err != nil {
		return err
	}
	if t.Updated.IsZero() {
		t.Updated = s.clock()
	}
	c := copyThread(t)
	c.Created = th.t.Created
	th.t = *c
	t.Created = c.Created
	return nil
}

// PutSource stores a workflow source under its digest; see store.Store.
func (s *Store) PutSource(ctx context.Context, digest string, src []byte) error {
	if err := store.CheckSource(digest, src); err != nil {
		return fmt.Errorf("memory store: put source: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, ok := s.sources[digest]; !ok {
		s.sources[digest] = bytes.Clone(src)
	}
	return nil
}

// Source returns a copy of the source stored under digest.
func (s *Store) Source(ctx context.Context, digest string) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	src, ok := s.sources[digest]
	if !ok {
		return nil, fmt.Errorf("memory store: source %s: %w", digest, store.ErrNotFound)
	}
	return bytes.Clone(src), nil
}

// Threads lists the threads opts selects, in its order, with their
// latest runs; see store.Store.
func (s *Store) Threads(ctx context.Context, opts store.ListOptions) ([]*store.Thread, error) {
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("memory store: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	// The latest run of each thread, in one pass over the runs.
	latest := map[string]*store.Run{}
	for _, r := range s.runs {
		if l, ok := latest[r.ThreadID]; !ok || runOrder(l, r) < 0 {
			latest[r.ThreadID] = r
		}
	}
	// The threads are filtered and sorted as they are stored, without a
	// copy; only those listed are copied. With a limit, only the first
	// k are kept (in order), not every thread sorted.
	var all []*store.Thread
	k := 0
	if opts.Limit > 0 {
		k = opts.Offset + opts.Limit
	}
	for _, th := range s.threads {
		t := &th.t
		if !opts.After.IsZero() && opts.Compare(opts.After, t.Cursor()) >= 0 {
			continue
		}
		var view store.Thread // t's fields Match reads, with the latest run's
		view.ID, view.Workflow, view.Source, view.Meta = t.ID, t.Workflow, t.Source, t.Meta
		if l := latest[t.ID]; l != nil {
			view.LastRun, view.Status = l.Number, l.Status
		}
		if opts.Match(&view) {
			all = keep(all, t, opts, k)
		}
	}
	if k == 0 {
		slices.SortFunc(all, func(a, b *store.Thread) int { return opts.Compare(a.Cursor(), b.Cursor()) })
	}
	all = all[min(opts.Offset, len(all)):]
	if opts.Limit > 0 && opts.Limit < len(all) {
		all = all[:opts.Limit]
	}
	out := make([]*store.Thread, len(all))
	for i, t := range all {
		c := copyThread(t)
		c.LastRun, c.Status = 0, ""
		if l := latest[t.ID]; l != nil {
			c.LastRun, c.Status = l.Number, l.Status
		}
		out[i] = c
	}
	return out, nil
}

// keep adds t to all, the threads listed so far: at the end when k is 0
// (no limit; sorted later), else in order, all kept to the first k.
func keep(all []*store.Thread, t *store.Thread, opts store.ListOptions, k int) []*store.Thread {
	if k == 0 {
		return append(all, t)
	}
	if len(all) == k && opts.Compare(t.Cursor(), all[k-1].Cursor()) >= 0 {
		return all // after the last kept
	}
	i, _ := slices.BinarySearchFunc(all, t, func(a, b *store.Thread) int { return opts.Compare(a.Cursor(), b.Cursor()) })
	if len(all) == k {
		all = all[:k-1]
	}
	return slices.Insert(all, i, t)
}

// withLastRun returns a copy of t with its latest run's Number and
// Status.
func (s *Store) withLastRun(t *store.Thread) *store.Thread {
	c := copyThread(t)
	c.LastRun, c.Status = 0, ""
	if runs := s.runsOf(t.ID); len(runs) > 0 {
		last := runs[len(runs)-1]
		c.LastRun, c.Status = last.Number, last.Status
	}
	return c
}

// DeleteThread removes a thread with its runs, records, questions and
// jobs (with their events).
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, err := s.thread(id); err != nil {
		return err
	}
	delete(s.threads, id)
	for rid, r := range s.runs {
		if r.ThreadID == id {
			delete(s.runs, rid)
		}
	}
	for jid, j := range s.jobs {
		if j.ThreadID == id {
			delete(s.jobs, jid)
			s.dropRunEvents(jid)
		}
	}
	return nil
}

// PutRun creates or updates a run, filling in zero Created and Updated.
// A run cannot move to another thread.
func (s *Store) PutRun(ctx context.Context, r *store.Run) error {
	if err := store.CheckRun(r); err != nil {
		return fmt.Errorf("memory store: put %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	th, err := s.thread(r.ThreadID)
	if err != nil {
		return err
	}
	n := s.clock()
	if err := store.CheckFence(r.ThreadID, "put run", r.Fence, th.lease, n); err != nil {
		return err
	}
	old, ok := s.runs[r.ID]
	if ok && old.ThreadID != r.ThreadID {
		return fmt.Errorf("memory store: run %s belongs to thread %s, not %s: %w", r.ID, old.ThreadID, r.ThreadID, store.ErrInvalid)
	}
	if r.Created.IsZero() {
		if ok {
			r.Created = old.Created
		} else {
			r.Created = n
		}
	}
	if r.Updated.IsZero() {
		r.Updated = n
	}
	s.runs[r.ID] = copyRun(r)
	return nil
}

// Run returns a copy of a run.
func (s *Store) Run(ctx context.Context, id string) (*store.Run, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	r, ok := s.runs[id]
	if !ok {
		return nil, fmt.Errorf("memory store: run %s: %w", id, store.ErrNotFound)
	}
	return copyRun(r), nil
}

// Runs lists a thread's runs by Number, then Created, then ID.
func (s *Store) Runs(ctx context.Context, threadID string) ([]*store.Run, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if _, err := s.thread(threadID); err != nil {
		return nil, err
	}
	return s.runsOf(threadID), nil
}

// runsOf returns copies of a thread's runs, oldest first.
func (s *Store) runsOf(threadID string) []*store.Run {
	var out []*store.Run
	for _, r := range s.runs {
		if r.ThreadID == threadID {
			out = append(out, copyRun(r))
		}
	}
	slices.SortFunc(out, runOrder)
	return out
}

// runOrder orders a thread's runs as Runs lists them: by Number, then
// Created, then ID.
func runOrder(a, b *store.Run) int {
	if c := cmp.Compare(a.Number, b.Number); c != 0 {
		return c
	}
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Append adds records to a thread, all or none; see store.Store.
func (s *Store) Append(ctx context.Context, recs ...*store.Record) error {
	if len(recs) == 0 {
		return ctx.Err()
	}
	if err := store.CheckAppend(recs); err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	id := recs[0].ThreadID
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	th, err := s.thread(id)
	if err != nil {
		return err
	}
	n := s.clock()
	if err := canAppend(th, recs, n); err != nil {
		return err
	}
	appendTo(th, recs, n)
	return nil
}

// canAppend checks, with s.mu held, that recs (which store.CheckAppend
// accepted) may be appended to th at the store's time n: their fence
// (store.CheckFence), then their Seq, the log's next.
func canAppend(th *thread, recs []*store.Record, n time.Time) error {
	id := recs[0].ThreadID
	if err := store.CheckFence(id, "append", recs[0].Fence, th.lease, n); err != nil {
		return err
	}
	if recs[0].Seq != th.lastSeq+1 {
		return &store.ConflictError{ThreadID: id, Want: recs[0].Seq, Got: th.lastSeq}
	}
	return nil
}

// appendTo appends recs, which canAppend accepted, to th at time n,
// setting their Checksum and Time.
func appendTo(th *thread, recs []*store.Record, n time.Time) {
	for _, r := range recs {
		r.Checksum = store.Sum(r.Data)
		r.Time = n
		th.records = append(th.records, copyRecord(r))
	}
	th.lastSeq = recs[len(recs)-1].Seq
	if n.After(th.t.Updated) {
		th.t.Updated = n
	}
}

// verify checks a stored record's checksum.
func verify(r *store.Record) error {
	if !r.Kind.Valid() {
		return &store.CorruptError{ThreadID: r.ThreadID, Seq: r.Seq, Step: r.Step, Field: "kind", Detail: fmt.Sprintf("unknown kind %q", r.Kind)}
	}
	if sum := store.Sum(r.Data); sum != r.Checksum {
		return &store.CorruptError{ThreadID: r.ThreadID, Seq: r.Seq, Step: r.Step, Field: "data",
			Detail: fmt.Sprintf("checksum %08x, stored %08x", sum, r.Checksum)}
	}
	return nil
}

// Records returns copies of a thread's records from Seq from, verified.
func (s *Store) Records(ctx context.Context, threadID string, from int64) ([]*store.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	th, err := s.thread(threadID)
	if err != nil {
		return nil, err
	}
	i, _ := slices.BinarySearchFunc(th.records, from, func(r *store.Record, seq int64) int { return cmp.Compare(r.Seq, seq) })
	first := int64(0)
	if len(th.records) > 0 {
		first = th.records[0].Seq
	}
	if err := store.CheckSeqs(threadID, from, th.records[i:], first, th.lastSeq); err != nil {
		return nil, err
	}
	out := make([]*store.Record, 0, len(th.records)-i)
	for _, r := range th.records[i:] {
		if err := verify(r); err != nil {
			return nil, err
		}
		out = append(out, copyRecord(r))
	}
	return out, nil
}

// LastSnapshot returns a copy of the thread's latest snapshot, verified.
func (s *Store) LastSnapshot(ctx context.Context, threadID string) (*store.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	th, err := s.thread(threadID)
	if err != nil {
		return nil, err
	}
	for _, r := range slices.Backward(th.records) {
		if r.Kind == store.Snapshot {
			if err := verify(r); err != nil {
				return nil, err
			}
			return copyRecord(r), nil
		}
	}
	return nil, fmt.Errorf("memory store: thread %s: no snapshot: %w", threadID, store.ErrNotFound)
}

// Head returns the seq and time of the thread's last record (see
// store.HeadReader); 0 for a thread with none.
func (s *Store) Head(ctx context.Context, threadID string) (int64, time.Time, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return 0, time.Time{}, err
	}
	th, err := s.thread(threadID)
	if err != nil {
		return 0, time.Time{}, err
	}
	if len(th.records) == 0 {
		return 0, time.Time{}, nil
	}
	r := th.records[len(th.records)-1]
	return r.Seq, r.Time, nil
}

// PutPending records or replaces a question, filling in a zero Created.
func (s *Store) PutPending(ctx context.Context, p *store.Pending) error {
	if p == nil || p.ID == "" {
		return fmt.Errorf("memory store: put pending without an ID: %w", store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	th, err := s.thread(p.ThreadID)
	if err != nil {
		return err
	}
	n := s.clock()
	if err := store.CheckFence(p.ThreadID, "put pending", p.Fence, th.lease, n); err != nil {
		return err
	}
	if p.Created.IsZero() {
		p.Created = n
	}
	th.pending[p.ID] = copyPending(p)
	return nil
}

// Pending lists a thread's questions by Created, then ID.
func (s *Store) Pending(ctx context.Context, threadID string) ([]*store.Pending, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	th, err := s.thread(threadID)
	if err != nil {
		return nil, err
	}
	out := make([]*store.Pending, 0, len(th.pending))
	for _, p := range th.pending {
		out = append(out, copyPending(p))
	}
	slices.SortFunc(out, func(a, b *store.Pending) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// DeletePending removes a question.
func (s *Store) DeletePending(ctx context.Context, threadID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	th, err := s.thread(threadID)
	if err != nil {
		return err
	}
	if _, ok := th.pending[id]; !ok {
		return fmt.Errorf("memory store: thread %s: question %s: %w", threadID, id, store.ErrNotFound)
	}
	delete(th.pending, id)
	return nil
}

// EndRun implements store.RunEnder: the records, the questions, the
// run, the job's change and the lease's release, all or nothing.
func (s *Store) EndRun(ctx context.Context, e *store.RunEnd) error {
	if err := store.CheckRunEnd(e); err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	if len(e.Records) > 0 {
		if err := store.CheckAppend(e.Records); err != nil {
			return fmt.Errorf("memory store: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	th, err := s.thread(e.Thread)
	if err != nil {
		return err
	}
	n := s.clock()
	// Every check first: nothing is written unless all pass.
	if len(e.Records) > 0 {
		if err := canAppend(th, e.Records, n); err != nil {
			return err
		}
	}
	for _, p := range e.Pending {
		if err := store.CheckFence(e.Thread, "put pending", p.Fence, th.lease, n); err != nil {
			return err
		}
	}
	r := e.Run
	var old *store.Run
	if r != nil {
		if err := store.CheckFence(e.Thread, "put run", r.Fence, th.lease, n); err != nil {
			return err
		}
		if o, ok := s.runs[r.ID]; ok {
			if o.ThreadID != r.ThreadID {
				return fmt.Errorf("memory store: run %s belongs to thread %s, not %s: %w", r.ID, o.ThreadID, r.ThreadID, store.ErrInvalid)
			}
			old = o
		}
	}
	if e.Release != nil {
		if err := store.CheckLease("release", *e.Release, th.lease, n); err != nil {
			return err
		}
	}
	if len(e.Records) > 0 {
		appendTo(th, e.Records, n)
	}
	for _, id := range e.Answered {
		delete(th.pending, id)
	}
	for _, p := range e.Pending {
		if p.Created.IsZero() {
			p.Created = n
		}
		th.pending[p.ID] = copyPending(p)
	}
	if r != nil {
		if r.Created.IsZero() {
			if old != nil {
				r.Created = old.Created
			} else {
				r.Created = n
			}
		}
		if r.Updated.IsZero() {
			r.Updated = n
		}
		s.runs[r.ID] = copyRun(r)
	}
	if j := e.Job; j != nil {
		// Nothing after it can fail: Done is set with the change.
		_, err := s.setJob(j.ID, j.From, j.To, j.Run, j.Error, n)
		var ce *store.JobConflictError
		switch {
		case err == nil:
			j.Done = true
		case !errors.Is(err, store.ErrNotFound) && !errors.As(err, &ce):
			return err
		}
	}
	if e.Release != nil {
		th.lease = store.LeaseState{Fence: th.lease.Fence}
	}
	return nil
}

// Prune removes the runs of a thread that opts selects, their questions,
// and the records before the snapshot the kept runs fold from; see
// store.Store.
func (s *Store) Prune(ctx context.Context, threadID string, opts store.PruneOptions) (int, error) {
	if opts.KeepRuns < 0 {
		return 0, fmt.Errorf("memory store: prune keeping %d runs: %w", opts.KeepRuns, store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	th, err := s.thread(threadID)
	if err != nil {
		return 0, err
	}
	drop, keep := opts.Select(s.runsOf(threadID))
	if len(drop) == 0 {
		return 0, nil
	}
	kept := map[string]bool{}
	for _, r := range keep {
		kept[r.ID] = true
	}
	// first is the first record the kept runs need: their first record,
	// or the end of the log.
	first := th.lastSeq + 1
	for _, r := range th.records {
		if kept[r.RunID] {
			first = r.Seq
			break
		}
	}
	cut := int64(0) // the seq of the snapshot the kept runs fold from
	for _, r := range th.records {
		if r.Seq > first {
			break
		}
		if r.Kind == store.Snapshot {
			cut = r.Seq
		}
	}
	removed := 0
	if cut > 0 {
		i, _ := slices.BinarySearchFunc(th.records, cut, func(r *store.Record, seq int64) int { return cmp.Compare(r.Seq, seq) })
		removed = i
		th.records = slices.Clone(th.records[i:])
	}
	for _, r := range drop {
		delete(s.runs, r.ID)
		for id, p := range th.pending {
			if p.RunID == r.ID {
				delete(th.pending, id)
			}
		}
	}
	return removed, nil
}

// Close empties the store; later calls fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.threads = nil
	s.runs = nil
	s.sources = nil
	s.items = nil
	s.jobs = nil
	s.events = nil
	for id := range s.evWake {
		s.wakeRunEvents(id) // its waiters find the store closed
	}
	return nil
}

// Claim grants owner a lease on the thread; see store.Leaser.
func (s *Store) Claim(ctx context.Context, threadID, owner string, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckClaim(threadID, owner, ttl); err != nil {
		return store.Lease{}, fmt.Errorf("memory store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return store.Lease{}, err
	}
	th, err := s.thread(threadID)
	if err != nil {
		return store.Lease{}, err
	}
	n := s.clock()
	if th.lease.Held(n) {
		return store.Lease{}, store.CheckFence(threadID, "claim", 0, th.lease, n)
	}
	th.lease = store.LeaseState{Owner: owner, Fence: th.lease.Fence + 1, Expires: n.Add(ttl)}
	return store.Lease{Thread: threadID, Owner: owner, Fence: th.lease.Fence, Expires: th.lease.Expires}, nil
}

// held returns the thread of l, checking at the store's time n that l is
// its current lease; op names the call for the error.
func (s *Store) held(ctx context.Context, op string, l store.Lease, n time.Time) (*thread, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	th, err := s.thread(l.Thread)
	if err != nil {
		return nil, err
	}
	if err := store.CheckLease(op, l, th.lease, n); err != nil {
		return nil, err
	}
	return th, nil
}

// Heartbeat extends a held lease to ttl from now; see store.Leaser.
func (s *Store) Heartbeat(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("memory store: heartbeat of thread %s for %v: %w", l.Thread, ttl, store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.clock()
	th, err := s.held(ctx, "heartbeat", l, n)
	if err != nil {
		return store.Lease{}, err
	}
	th.lease.Expires = n.Add(ttl)
	l.Expires = th.lease.Expires
	return l, nil
}

// Release ends a held lease; see store.Leaser.
func (s *Store) Release(ctx context.Context, l store.Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.held(ctx, "release", l, s.clock())
	if err != nil {
		return err
	}
	th.lease = store.LeaseState{Fence: th.lease.Fence}
	return nil
}
