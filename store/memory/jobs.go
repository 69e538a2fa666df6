package memory

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weftlang/weft/store"
)

var _ store.Jobs = (*Store)(nil)

func copyJob(j *store.Job) *store.Job {
	c := *j
	c.Request = bytes.Clone(j.Request)
	c.Meta = bytes.Clone(j.Meta)
	return &c
}

// CreateJob stores a new job of an existing thread; see store.Jobs.
func (s *Store) CreateJob(ctx context.Context, j *store.Job) error {
	if j != nil && j.Status == "" {
		j.Status = store.JobPending
	}
	if err := store.CheckJob(j); err != nil {
		return fmt.Errorf("memory store: create job: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, err := s.thread(j.ThreadID); err != nil {
		return err
	}
	if _, ok := s.jobs[j.ID]; ok {
		return fmt.Errorf("memory store: job %s: %w", j.ID, store.ErrExists)
	}
	if j.Created.IsZero() {
		j.Created = s.clock()
	}
	if j.Updated.IsZero() {
		j.Updated = j.Created
	}
	s.jobs[j.ID] = copyJob(j)
	return nil
}

// Job returns a copy of a job.
func (s *Store) Job(ctx context.Context, id string) (*store.Job, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("memory store: job %s: %w", id, store.ErrNotFound)
	}
	return copyJob(j), nil
}

// Jobs lists the jobs q selects, newest first; see store.Jobs.
func (s *Store) Jobs(ctx context.Context, q store.JobQuery) ([]*store.Job, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("memory store: jobs: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if q.ThreadID != "" {
		if _, err := s.thread(q.ThreadID); err != nil {
			return nil, err
		}
	}
	var out []*store.Job
	for _, j := range s.jobs {
		if q.Match(j) {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, store.CompareJobs)
	out = out[min(q.Offset, len(out)):]
	if q.Limit > 0 && q.Limit < len(out) {
		out = out[:q.Limit]
	}
	for i, j := range out {
		out[i] = copyJob(j)
	}
	return out, nil
}

// DeleteJob removes a job and its events.
func (s *Store) DeleteJob(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, ok := s.jobs[id]; !ok {
		return fmt.Errorf("memory store: job %s: %w", id, store.ErrNotFound)
	}
	delete(s.jobs, id)
	s.dropRunEvents(id)
	return nil
}

// SetJob moves a job from one of the statuses from to to; see
// store.Jobs.
func (s *Store) SetJob(ctx context.Context, id string, from []store.JobStatus, to store.JobStatus, run, errText string) (*store.Job, error) {
	if err := store.CheckSetJob(id, from, to); err != nil {
		return nil, fmt.Errorf("memory store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.setJob(id, from, to, run, errText, s.clock())
}

// setJob is SetJob's change, with s.mu held, at the store's time n: a
// missing job is store.ErrNotFound, one not in from a
// *store.JobConflictError, and then nothing changes.
func (s *Store) setJob(id string, from []store.JobStatus, to store.JobStatus, run, errText string, n time.Time) (*store.Job, error) {
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("memory store: job %s: %w", id, store.ErrNotFound)
	}
	if !slices.Contains(from, j.Status) {
		return nil, &store.JobConflictError{ID: id, Status: j.Status, From: slices.Clone(from), To: to}
	}
	j.Status = to
	if run != "" {
		j.Run = run
	}
	if errText != "" {
		j.Error = errText
	}
	j.Updated = n
	return copyJob(j), nil
}

// PendingJobs lists the jobs to start next; see store.Jobs.
func (s *Store) PendingJobs(ctx context.Context, limit int) ([]*store.Job, error) {
	if limit < 0 {
		return nil, fmt.Errorf("memory store: pending jobs: limit %d: negative: %w", limit, store.ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	busy := map[string]bool{}
	first := map[string]*store.Job{} // each thread's oldest pending job
	for _, j := range s.jobs {
		switch j.Status {
		case store.JobRunning:
			busy[j.ThreadID] = true
		case store.JobPending:
			if f, ok := first[j.ThreadID]; !ok || oldestFirst(j, f) < 0 {
				first[j.ThreadID] = j
			}
		}
	}
	var out []*store.Job
	for th, j := range first {
		if !busy[th] {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, oldestFirst)
	if limit > 0 && limit < len(out) {
		out = out[:limit]
	}
	for i, j := range out {
		out[i] = copyJob(j)
	}
	return out, nil
}

// oldestFirst orders jobs by Created, then ID.
func oldestFirst(a, b *store.Job) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}
