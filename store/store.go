// Package store is where weft keeps threads, runs, checkpoint records and
// pending questions, so that a run survives its process: in memory, in an
// embedded SQLite file (the default), or in PostgreSQL when several
// processes share the work.
//
// A Store knows nothing of workflows: a checkpoint is a Record whose Data
// the engine writes (one record per step: a delta, and now and then a
// snapshot) and folds back into run state. The store keeps records in order,
// exactly once, and checks every record's checksum when it reads it back.
//
// Every implementation runs the conformance suite in store/storetest.
package store

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
)

// Batch is what a BatchWriter writes in one transaction.
type Batch struct {
	// Thread, when not nil, is created first, as CreateThread creates it,
	// unless a thread with its ID exists (which is not an error here).
	Thread *Thread
	// Records are appended as Append appends them: each Seq the thread's
	// next, all or none; Checksum and Time are set.
	Records []*Record
	// Run, when not nil, is put after the records, as PutRun puts it.
	Run *Run
}

// BatchWriter is implemented by a store that can write a Batch in one
// transaction: all of it or nothing, with Append's and PutRun's errors.
// engine.Threads uses it when records are written in the background
// (engine.Async), to create a new thread with its first records and to
// record a run's end with its last ones, a commit each instead of
// several.
type BatchWriter interface {
	WriteBatch(ctx context.Context, b *Batch) error
}

// Store keeps threads, runs, records and pending questions. Implementations
// are safe for concurrent use.
type Store interface {
	// CreateThread stores a new thread; an existing ID is ErrExists.
	CreateThread(ctx context.Context, t *Thread) error
	// Thread returns a thread, or ErrNotFound.
	Thread(ctx context.Context, id string) (*Thread, error)
	// Threads lists threads, most recently updated first.
	Threads(ctx context.Context, opts ListOptions) ([]*Thread, error)
	// DeleteThread removes a thread with its runs, records and pending
	// questions.
	DeleteThread(ctx context.Context, id string) error

	// PutRun creates or updates a run (by ID) of an existing thread.
	PutRun(ctx context.Context, r *Run) error
	// Run returns a run, or ErrNotFound.
	Run(ctx context.Context, id string) (*Run, error)
	// Runs lists the runs of a thread, oldest first.
	Runs(ctx context.Context, threadID string) ([]*Run, error)

	// Append adds records to a thread, atomically: all or none. Each
	// record's Seq must be the thread's next one (the last Seq plus one,
	// in order); otherwise nothing is written and the error is a
	// *ConflictError (another writer got there first, or a step is being
	// recorded twice). Append sets Checksum and Time.
	Append(ctx context.Context, recs ...*Record) error
	// Records returns a thread's records with Seq >= from, in order,
	// verifying each checksum: a mismatch is a *CorruptError naming the
	// thread, the Seq and the field. The log has no gaps (Prune only cuts
	// its start, at a snapshot): a missing, repeated or misplaced record
	// is a *CorruptError of Field "seq" naming the thread and the Seq
	// (see CheckSeqs).
	Records(ctx context.Context, threadID string, from int64) ([]*Record, error)
	// LastSnapshot returns the thread's latest record of Kind Snapshot,
	// or ErrNotFound.
	LastSnapshot(ctx context.Context, threadID string) (*Record, error)

	// PutPending records a question a waiting run asks.
	PutPending(ctx context.Context, p *Pending) error
	// Pending lists the unanswered questions of a thread, oldest first.
	Pending(ctx context.Context, threadID string) ([]*Pending, error)
	// DeletePending removes an answered question.
	DeletePending(ctx context.Context, threadID, id string) error

	// Prune removes old runs of a thread, with their pending questions,
	// and the records that folding the kept runs no longer needs: those
	// before the latest Snapshot at or before the first record of the
	// oldest kept run (with no such snapshot, no record goes). A run goes
	// when it is older than the last opts.KeepRuns runs, or when it was
	// last updated before opts.Before; the thread's last run always stays,
	// and options that set neither limit remove nothing. The log keeps its
	// numbering. Prune returns the number of records removed.
	Prune(ctx context.Context, threadID string, opts PruneOptions) (int, error)

	// Close releases the store's resources.
	Close() error
}

// Thread is a conversation: a sequence of runs sharing state.
type Thread struct {
	ID       string
	Workflow string // the workflow's name
	Created  time.Time
	Updated  time.Time
	Meta     map[string]string // free-form labels
}

// Run is one run of a workflow in a thread.
type Run struct {
	ID       string
	ThreadID string
	Number   int    // 1 for the thread's first run
	Status   string // "running", "waiting", "completed", "failed"
	Error    string // why a failed run failed
	Created  time.Time
	Updated  time.Time
}

// Kind says what a record holds.
type Kind string

// The record kinds. Data is the engine's, opaque to the store.
const (
	Step     Kind = "step"     // the effect of one step: a delta
	Snapshot Kind = "snapshot" // the whole state at a step
	Event    Kind = "event"    // anything else the engine keeps in order (a run's start, an answer)
)

// Valid reports whether k is one of the record kinds above.
func (k Kind) Valid() bool { return k == Step || k == Snapshot || k == Event }

// Record is one entry of a thread's log.
type Record struct {
	ThreadID string
	RunID    string
	Seq      int64 // position in the thread's log, from 1, without gaps
	Step     int   // the run's step the record belongs to (0 if none)
	Kind     Kind
	Data     []byte    // JSON, written and read by the engine
	Checksum uint32    // CRC-32C of Data; set by Append
	Time     time.Time // set by Append
}

// Sum returns the checksum of data that Append stores and Records checks.
func Sum(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Pending is a question a waiting run asks a person.
type Pending struct {
	ID       string // unique within the thread (the engine's task id)
	ThreadID string
	RunID    string
	Node     string
	Question []byte // JSON
	Created  time.Time
}

// PruneOptions say which runs of a thread Prune removes: those matching
// either limit. The thread's last run is never removed.
type PruneOptions struct {
	// KeepRuns keeps the thread's last KeepRuns runs (by Number, then
	// Created, then ID) and removes those before them; 0 sets no limit by
	// count. Negative is ErrInvalid.
	KeepRuns int
	// Before also removes the runs last updated (Run.Updated) before it;
	// the zero time sets no limit by age.
	Before time.Time
}

// ListOptions bound a listing.
type ListOptions struct {
	Limit  int // 0: no limit
	Offset int
}

// ErrNotFound is returned for a thread, run, snapshot or question that does
// not exist.
var ErrNotFound = errors.New("store: not found")

// ErrExists is returned when creating something that exists.
var ErrExists = errors.New("store: already exists")

// ErrInvalid is returned for an argument a store cannot accept: an empty
// ID, a record without a valid Kind, records of several threads in one
// Append, a negative PruneOptions.KeepRuns.
var ErrInvalid = errors.New("store: invalid argument")

// ErrFull is wrapped by the error of a write that failed because the
// store has no room left: the disk, or a size limit of the database
// (SQLite's SQLITE_FULL, PostgreSQL's disk_full). Waiting does not make
// room, so callers do not retry it.
var ErrFull = errors.New("store: no space left (the disk or the database is full)")

// ErrReadOnly is wrapped by the error of a write to a store that only
// reads: a read-only file, directory or transaction, or no permission to
// write (SQLite's SQLITE_READONLY and SQLITE_PERM, PostgreSQL's
// read_only_sql_transaction and insufficient_privilege). Callers do not
// retry it.
var ErrReadOnly = errors.New("store: read-only (no permission to write)")

// ConflictError is an Append whose first record is not the thread's next:
// the log already holds Got records.
type ConflictError struct {
	ThreadID string
	Want     int64 // the Seq the append started at
	Got      int64 // the thread's last Seq
}

// Error says what collided.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("store: thread %s: append at seq %d, but the log ends at %d", e.ThreadID, e.Want, e.Got)
}

// CorruptError is a record that does not read back as it was written.
type CorruptError struct {
	ThreadID string
	Seq      int64
	Step     int
	Field    string // "data", "checksum", "kind", ...
	Detail   string
}

// Error names the thread, the record and the field.
func (e *CorruptError) Error() string {
	var rec string
	switch {
	case e.Seq != 0 && e.Step != 0:
		rec = fmt.Sprintf(", record %d (step %d)", e.Seq, e.Step)
	case e.Seq != 0:
		rec = fmt.Sprintf(", record %d", e.Seq)
	}
	return fmt.Sprintf("store: thread %s%s, field %s: %s", e.ThreadID, rec, e.Field, e.Detail)
}

// CheckSeqs checks that recs, which Records read for a thread from Seq
// from on, are the thread's log as Append wrote it: without a gap, a
// repeated Seq or one out of order. The log may start after Seq 1 only
// where Prune cut it, at a snapshot: first is the lowest Seq the thread's
// log holds (whether or not it is in recs; 0 for an empty log). last is
// the Seq of the thread's last appended record when the store keeps it
// apart from the records (so that a log cut short is seen), or -1 when it
// does not. A record that is not where it should be is a *CorruptError
// with Field "seq", naming the thread and the missing (or misplaced) Seq.
// Implementations call it on what Records is about to return.
func CheckSeqs(threadID string, from int64, recs []*Record, first, last int64) error {
	from = max(from, 1)
	missing := func(seq int64, format string, args ...any) error {
		return &CorruptError{ThreadID: threadID, Seq: seq, Field: "seq", Detail: "record missing: " + fmt.Sprintf(format, args...)}
	}
	if len(recs) > 0 {
		r := recs[0]
		switch {
		case r.Seq < from:
			return &CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "seq", Detail: fmt.Sprintf("read for records from %d on", from)}
		case r.Seq == from:
		case first < r.Seq:
			return missing(from, "the log goes from a record before %d to record %d", from, r.Seq)
		case r.Kind != Snapshot:
			// Prune leaves a log that starts at a snapshot.
			return missing(r.Seq-1, "the log starts at record %d, a %s record, not a snapshot that Prune would have kept", r.Seq, r.Kind)
		}
	}
	for i := 1; i < len(recs); i++ {
		prev, r := recs[i-1].Seq, recs[i]
		switch {
		case r.Seq == prev+1:
		case r.Seq > prev+1:
			return missing(prev+1, "the log goes from record %d to record %d", prev, r.Seq)
		default:
			return &CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "seq", Detail: fmt.Sprintf("out of order: after record %d", prev)}
		}
	}
	if last < 0 {
		return nil
	}
	switch {
	case len(recs) == 0 && last >= from:
		return missing(from, "the log ends at record %d, but no record from %d on reads back", last, from)
	case len(recs) > 0 && recs[len(recs)-1].Seq < last:
		end := recs[len(recs)-1].Seq
		return missing(end+1, "the log ends at record %d, but it reads back only to record %d", last, end)
	case len(recs) > 0 && recs[len(recs)-1].Seq > last:
		r := recs[len(recs)-1]
		return &CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "seq", Detail: fmt.Sprintf("past the log's end at record %d", last)}
	}
	return nil
}

// CheckAppend checks what an Append can check without the log: at least
// one record, none nil, all of one non-empty thread, each of a valid Kind,
// and Seqs consecutive from the first. A gap inside the batch is a
// *ConflictError (Want is the out-of-order Seq, Got the Seq before it);
// anything else wrong wraps ErrInvalid. Implementations call it first and
// then compare recs[0].Seq with the thread's last Seq.
func CheckAppend(recs []*Record) error {
	if len(recs) == 0 {
		return fmt.Errorf("append of no records: %w", ErrInvalid)
	}
	for i, r := range recs {
		switch {
		case r == nil:
			return fmt.Errorf("append: record %d is nil: %w", i, ErrInvalid)
		case r.ThreadID == "":
			return fmt.Errorf("append: record %d has no thread: %w", i, ErrInvalid)
		case r.ThreadID != recs[0].ThreadID:
			return fmt.Errorf("append: records of threads %s and %s in one batch: %w", recs[0].ThreadID, r.ThreadID, ErrInvalid)
		case !r.Kind.Valid():
			return fmt.Errorf("append: thread %s, record %d has kind %q: %w", r.ThreadID, r.Seq, r.Kind, ErrInvalid)
		case i > 0 && r.Seq != recs[i-1].Seq+1:
			return &ConflictError{ThreadID: r.ThreadID, Want: r.Seq, Got: recs[i-1].Seq}
		}
	}
	return nil
}

// Select splits the runs of a thread, oldest first (as Runs lists them),
// into those Prune removes and those it keeps, by the rules of
// PruneOptions. Implementations call it after checking KeepRuns >= 0.
func (o PruneOptions) Select(runs []*Run) (drop, keep []*Run) {
	n := len(runs)
	for i, r := range runs {
		byCount := o.KeepRuns > 0 && i < n-o.KeepRuns
		byAge := !o.Before.IsZero() && r.Updated.Before(o.Before)
		if i < n-1 && (byCount || byAge) {
			drop = append(drop, r)
		} else {
			keep = append(keep, r)
		}
	}
	return drop, keep
}
