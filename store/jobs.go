package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Jobs is implemented by a store that keeps the runs of the LangGraph
// Server API, which weft calls jobs: a request queued on a thread and
// executed there by a worker, driving (starting or resuming) one weft
// Run. The memory, SQLite and PostgreSQL stores implement it; callers
// type-assert a Store to it. DeleteThread deletes the thread's jobs.
//
// A worker takes a job from PendingJobs and claims it with SetJob from
// JobPending to JobRunning: of several workers racing for one job, one
// wins and the others get a *JobConflictError. A cancel settles its race
// with the worker the same way.
type Jobs interface {
	// CreateJob stores a new job on an existing thread (else
	// ErrNotFound); an existing ID is ErrExists. A zero Status is
	// JobPending; zero Created and Updated are set to the store's time
	// (Updated to Created), and written back into j. A job CheckJob
	// refuses wraps ErrInvalid.
	CreateJob(ctx context.Context, j *Job) error
	// Job returns a job, or ErrNotFound.
	Job(ctx context.Context, id string) (*Job, error)
	// Jobs lists the jobs q selects, newest first (Created descending,
	// then ID). A q.ThreadID naming no thread is ErrNotFound.
	Jobs(ctx context.Context, q JobQuery) ([]*Job, error)
	// DeleteJob removes a job, or returns ErrNotFound.
	DeleteJob(ctx context.Context, id string) error
	// SetJob moves job id to status to, atomically, only if its current
	// status is one of from; it also sets Run to run and Error to
	// errText when they are not empty, and Updated to the store's time,
	// and returns the job as it now is. A current status not in from is
	// a *JobConflictError (errors.Is finds ErrConflict) carrying it, and
	// nothing changes; a missing job is ErrNotFound; an empty from or a
	// status that is not a JobStatus wraps ErrInvalid.
	SetJob(ctx context.Context, id string, from []JobStatus, to JobStatus, run, errText string) (*Job, error)
	// PendingJobs lists the jobs a worker pool starts next: of each
	// thread with no JobRunning job, its oldest JobPending job (by
	// Created, then ID); those oldest first, at most limit (0: no
	// limit; negative wraps ErrInvalid).
	PendingJobs(ctx context.Context, limit int) ([]*Job, error)
}

// Job is a run as the LangGraph Server API sees it: a request queued on
// a thread, which drives one weft Run when it executes.
type Job struct {
	ID        string
	ThreadID  string
	Assistant string // the assistant (workflow) it runs
	Status    JobStatus
	// Run is the ID of the weft store.Run the job drove, "" until it
	// starts one.
	Run string
	// Strategy is the multitask strategy, as the request gave it.
	Strategy string
	// Request is the request body the server keeps (JSON or empty),
	// opaque to the store.
	Request json.RawMessage
	// Meta is the job's metadata (JSON or empty), opaque to the store.
	Meta    json.RawMessage
	Error   string // why it ended in error
	Created time.Time
	Updated time.Time
}

// JobStatus is a job's status: one of the constants below, LangGraph's
// run statuses. A write with any other value wraps ErrInvalid; a stored
// one reads back as a *CorruptError of Field "status".
type JobStatus string

// The job statuses.
const (
	JobPending     JobStatus = "pending"     // queued, not started
	JobRunning     JobStatus = "running"     // a worker drives it
	JobSuccess     JobStatus = "success"     // it ended well
	JobError       JobStatus = "error"       // it failed
	JobInterrupted JobStatus = "interrupted" // it stopped at a question, or was cancelled
	JobTimeout     JobStatus = "timeout"     // it ran out of time
)

// Valid reports whether s is one of the job statuses.
func (s JobStatus) Valid() bool {
	switch s {
	case JobPending, JobRunning, JobSuccess, JobError, JobInterrupted, JobTimeout:
		return true
	}
	return false
}

// JobQuery selects jobs for Jobs; the filters all apply.
type JobQuery struct {
	// ThreadID lists the jobs of this thread; "": of every thread.
	ThreadID string
	// ThreadKnown says the caller knows ThreadID names a thread (it
	// just read it): a store may then skip checking that it exists,
	// and list none where it would be ErrNotFound.
	ThreadKnown bool
	// Status lists the jobs with one of these statuses; empty: any.
	Status []JobStatus
	// Limit is the most jobs listed; 0: no limit. Offset skips this
	// many first. Negative is ErrInvalid.
	Limit, Offset int
}

// Check checks the query: known statuses, a limit and an offset not
// negative; anything else wraps ErrInvalid.
func (q JobQuery) Check() error {
	for _, s := range q.Status {
		if !s.Valid() {
			return fmt.Errorf("status: %q is not a job status: %w", s, ErrInvalid)
		}
	}
	if q.Limit < 0 || q.Offset < 0 {
		return fmt.Errorf("limit %d, offset %d: negative: %w", q.Limit, q.Offset, ErrInvalid)
	}
	return nil
}

// Match reports whether j passes the filters of q.
func (q JobQuery) Match(j *Job) bool {
	return (q.ThreadID == "" || j.ThreadID == q.ThreadID) && (len(q.Status) == 0 || slices.Contains(q.Status, j.Status))
}

// CompareJobs orders jobs as Jobs lists them: Created descending, then
// ID.
func CompareJobs(a, b *Job) int {
	if c := b.Created.Compare(a.Created); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// CheckJob checks a job for CreateJob (after a zero Status is made
// JobPending): an ID, a thread, a valid Status, and a Request and Meta
// that are empty or JSON; anything else wraps ErrInvalid, naming the
// field.
func CheckJob(j *Job) error {
	switch {
	case j == nil || j.ID == "":
		return fmt.Errorf("id: job without an ID: %w", ErrInvalid)
	case j.ThreadID == "":
		return fmt.Errorf("thread_id: job %s without a thread: %w", j.ID, ErrInvalid)
	case !j.Status.Valid():
		return fmt.Errorf("status: job %s: %q is not a job status: %w", j.ID, j.Status, ErrInvalid)
	case len(j.Request) > 0 && !json.Valid(j.Request):
		return fmt.Errorf("request: job %s: not JSON: %w", j.ID, ErrInvalid)
	case len(j.Meta) > 0 && !json.Valid(j.Meta):
		return fmt.Errorf("meta: job %s: not JSON: %w", j.ID, ErrInvalid)
	}
	return nil
}

// CheckSetJob checks SetJob's arguments: an ID, at least one from
// status, and valid statuses; anything else wraps ErrInvalid.
func CheckSetJob(id string, from []JobStatus, to JobStatus) error {
	if id == "" {
		return fmt.Errorf("id: set job without an ID: %w", ErrInvalid)
	}
	if len(from) == 0 {
		return fmt.Errorf("from: set job %s from no status: %w", id, ErrInvalid)
	}
	for _, s := range append(slices.Clip(from), to) {
		if !s.Valid() {
			return fmt.Errorf("status: set job %s: %q is not a job status: %w", id, s, ErrInvalid)
		}
	}
	return nil
}

// CheckJobStatus checks a job status read back from storage: nil, or a
// *CorruptError of Field "status" naming the thread and the job.
func CheckJobStatus(threadID, jobID string, s JobStatus) error {
	if s.Valid() {
		return nil
	}
	return &CorruptError{ThreadID: threadID, Field: "status", Detail: fmt.Sprintf("job %s has status %q, not a job status", jobID, s)}
}

// ErrConflict is found by errors.Is in a write refused because the state
// it expected is not the stored one: a *JobConflictError, and an
// Append's *ConflictError.
var ErrConflict = errors.New("store: conflict")

// JobConflictError is a SetJob refused: the job's status was Status, not
// one of From.
type JobConflictError struct {
	ID     string
	Status JobStatus // the job's current status
	From   []JobStatus
	To     JobStatus
}

// Error names the job, its status and the move refused.
func (e *JobConflictError) Error() string {
	return fmt.Sprintf("store: job %s is %s, not %v: cannot move it to %s", e.ID, e.Status, e.From, e.To)
}

// Unwrap returns ErrConflict.
func (e *JobConflictError) Unwrap() error { return ErrConflict }
