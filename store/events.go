package store

import (
	"context"
	"fmt"
	"time"
)

// RunEvents is implemented by a store that keeps the event streams of
// jobs (the server-sent events of a LangGraph run), so that a process
// other than the one that executes a job can follow it: the executing
// process appends the events of each attempt at the job as it makes
// them, and readers read them after a position, waiting for more. The
// memory, SQLite and PostgreSQL stores implement it; callers type-assert
// a Store to it. DeleteJob and DeleteThread delete the events of the
// jobs they delete.
type RunEvents interface {
	// AppendRunEvents appends events of job, in order, in one
	// transaction. Each event's Seq must be the job's next (its last
	// Seq plus one; the first is 1), in order; otherwise nothing is
	// written and the error is a *RunEventConflictError (errors.Is finds
	// ErrConflict), as two writers of one job would get. A missing job is
	// ErrNotFound; an event CheckRunEvent refuses wraps ErrInvalid. Time
	// is set to the store's time when zero, and written back.
	AppendRunEvents(ctx context.Context, job string, evs []*RunEvent) error
	// RunEvents returns job's events with Seq > after, in order, at most
	// limit (0: no limit; negative wraps ErrInvalid). A missing job is
	// ErrNotFound; a job with no event after after gives none.
	RunEvents(ctx context.Context, job string, after int64, limit int) ([]*RunEvent, error)
	// WaitRunEvents is RunEvents that waits, when job has no event after
	// after, until it has one (appended by this process or another) or
	// ctx ends (then it returns ctx's error). A store that cannot be
	// told of another process's appends looks again at least every
	// second.
	WaitRunEvents(ctx context.Context, job string, after int64, limit int) ([]*RunEvent, error)
	// PruneRunEvents deletes the events of the jobs that ended (a status
	// other than JobPending and JobRunning) and were last updated before
	// before, and returns how many events it deleted.
	PruneRunEvents(ctx context.Context, before time.Time) (int, error)
}

// RunEvent is one event of a job's stream.
type RunEvent struct {
	// Seq numbers the job's events from 1, across its attempts.
	Seq int64
	// Attempt names the attempt at the job that made the event (its
	// stream's epoch), and N numbers the event in it, from 0; both are
	// opaque to the store.
	Attempt string
	N       int64
	// Event is the event's name (the SSE event), Data its data (opaque
	// bytes, JSON in weft's server).
	Event string
	Data  []byte
	// Time is when it was appended.
	Time time.Time
}

// RunEventConflictError is an AppendRunEvents refused: its first event
// was not the job's next.
type RunEventConflictError struct {
	Job  string
	Want int64 // the Seq the append started at
	Got  int64 // the job's last Seq
}

// Error says what collided.
func (e *RunEventConflictError) Error() string {
	return fmt.Sprintf("store: job %s: events appended at seq %d, but its stream ends at %d", e.Job, e.Want, e.Got)
}

// Is reports whether target is ErrConflict.
func (e *RunEventConflictError) Is(target error) bool { return target == ErrConflict }

// CheckRunEvent checks an event for AppendRunEvents: a Seq from 1, an
// Event name, and an Attempt and N not negative; anything else wraps
// ErrInvalid, naming the field.
func CheckRunEvent(job string, e *RunEvent) error {
	switch {
	case e == nil:
		return fmt.Errorf("job %s: a nil event: %w", job, ErrInvalid)
	case e.Seq < 1:
		return fmt.Errorf("job %s: event seq %d: want 1 or more: %w", job, e.Seq, ErrInvalid)
	case e.Event == "":
		return fmt.Errorf("job %s: event %d: an empty event name: %w", job, e.Seq, ErrInvalid)
	case e.N < 0:
		return fmt.Errorf("job %s: event %d: n %d is negative: %w", job, e.Seq, e.N, ErrInvalid)
	}
	return nil
}
