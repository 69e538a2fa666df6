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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
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

// RunEnd is what a RunEnder writes in one transaction when a run stops
// (it ends, or waits for a person): the thread's pending questions made
// those the run waits on, the run's row, and the lease the run held
// released.
type RunEnd struct {
	// Thread is the run's thread; every part below is of it.
	Thread string
	// Records, when not empty, are appended first, as Append appends
	// them (each the thread's next Seq, fenced by its Fence; a wrong Seq
	// is a *ConflictError and nothing is written). Append sets their
	// Checksum and Time.
	Records []*Record
	// Answered are the IDs of pending questions removed, as
	// DeletePending removes them; an ID the thread does not have is
	// skipped (not an error).
	Answered []string
	// Pending are the questions put, as PutPending puts them (fenced by
	// their Fence); Created is set when zero.
	Pending []*Pending
	// Run, when not nil, is put after them, as PutRun puts it (fenced by
	// its Fence).
	Run *Run
	// Job, when not nil, changes a job's status after the run's row,
	// as Jobs.SetJob changes it, on a store that is also a Jobs (on
	// another, EndRun wraps ErrInvalid). A job that does not exist or
	// whose status is not one of Job.From is left as it is, which is
	// not an error: EndRun sets Job.Done when it made the change.
	Job *JobChange
	// Release, when not nil, is the lease released last, as Release
	// releases it: a lost lease is a *LeaseError wrapping ErrLeaseLost,
	// and then nothing is written.
	Release *Lease
}

// JobChange is a job's status change that a RunEnd carries: the job ID
// moves from one of From to To, and takes Run and Error when they are
// not empty, as Jobs.SetJob does.
type JobChange struct {
	ID    string
	From  []JobStatus
	To    JobStatus
	Run   string
	Error string
	// Done is set by EndRun: the change was made (false: the job was
	// missing, or not in one of From).
	Done bool
}

// RunEnder is implemented by a store that writes a RunEnd in one
// transaction: all of it or nothing, with the errors of the methods it
// stands for. engine.Threads uses it to record a run's end (questions,
// row, lease) with one commit instead of one for each; with a store
// without it, it makes those writes one by one. The memory, SQLite and
// PostgreSQL stores implement it.
type RunEnder interface {
	EndRun(ctx context.Context, e *RunEnd) error
}

// CheckRunEnd checks a RunEnd for EndRun: a thread, every part of it
// (questions with IDs, a run CheckRun accepts, a lease of it); anything
// else wraps ErrInvalid.
func CheckRunEnd(e *RunEnd) error {
	if e == nil || e.Thread == "" {
		return fmt.Errorf("run end without a thread: %w", ErrInvalid)
	}
	for _, p := range e.Pending {
		if p == nil || p.ID == "" || p.ThreadID != e.Thread {
			return fmt.Errorf("run end of thread %s: a question without an ID or of another thread: %w", e.Thread, ErrInvalid)
		}
	}
	if e.Run != nil {
		if err := CheckRun(e.Run); err != nil {
			return err
		}
		if e.Run.ThreadID != e.Thread {
			return fmt.Errorf("run end of thread %s: run %s of thread %s: %w", e.Thread, e.Run.ID, e.Run.ThreadID, ErrInvalid)
		}
	}
	for _, r := range e.Records {
		if r == nil || r.ThreadID != e.Thread {
			return fmt.Errorf("run end of thread %s: a record of another thread: %w", e.Thread, ErrInvalid)
		}
	}
	if j := e.Job; j != nil {
		if j.ID == "" || len(j.From) == 0 {
			return fmt.Errorf("run end of thread %s: a job change without a job ID or a status to move from: %w", e.Thread, ErrInvalid)
		}
		for _, s := range append([]JobStatus{j.To}, j.From...) {
			if !s.Valid() {
				return fmt.Errorf("run end of thread %s: job %s: status %q is not a job status: %w", e.Thread, j.ID, s, ErrInvalid)
			}
		}
	}
	if e.Release != nil && e.Release.Thread != e.Thread {
		return fmt.Errorf("run end of thread %s: a lease of thread %s: %w", e.Thread, e.Release.Thread, ErrInvalid)
	}
	return nil
}

// HeadReader is a Store that reads the last record of a thread's log
// without its data, in one cheap indexed read: engine.StateCache checks a
// thread state it keeps against it, so that a state is decoded from the
// log only when the log has changed since.
type HeadReader interface {
	// Head returns the seq and Time of the thread's last record; seq 0
	// for a thread with no record yet. A thread that does not exist is
	// ErrNotFound.
	Head(ctx context.Context, threadID string) (seq int64, at time.Time, err error)
}

// Store keeps threads, runs, records and pending questions. Implementations
// are safe for concurrent use.
type Store interface {
	// CreateThread stores a new thread; an existing ID is ErrExists. A
	// thread that names a Source must name one PutSource stored: a
	// source the store does not hold is ErrNotFound.
	CreateThread(ctx context.Context, t *Thread) error
	// Thread returns a thread, or ErrNotFound.
	Thread(ctx context.Context, id string) (*Thread, error)
	// UpdateThread replaces the Workflow, Source, Spec and Meta of an
	// existing thread (else ErrNotFound), and sets its Updated to
	// t.Updated, or to the store's time when zero (then written back
	// into t). Created stays. A Source not stored is ErrNotFound, as in
	// CreateThread.
	UpdateThread(ctx context.Context, t *Thread) error
	// Threads lists the threads opts selects, in its Order (most
	// recently updated first by default), each with its latest run's
	// Number and Status, in one query.
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

	// PutSource stores a workflow's canonical source under its digest,
	// "sha256:" and the lowercase hex SHA-256 of src (see Digest), so
	// that any process sharing the store can load the exact workflow a
	// thread runs. The store computes the digest itself: a digest that
	// does not match src is a *DigestError, and nothing is stored.
	// Putting a source again is not an error (the digest names the
	// content). Sources are never removed by Prune or DeleteThread:
	// they are small, content-addressed and shared by threads.
	PutSource(ctx context.Context, digest string, src []byte) error
	// Source returns the source stored under digest, or ErrNotFound.
	Source(ctx context.Context, digest string) ([]byte, error)

	// Close releases the store's resources.
	Close() error
}

// Digest returns the content digest of a workflow source, as PutSource
// keys it: "sha256:" followed by 64 lowercase hex digits.
func Digest(src []byte) string {
	sum := sha256.Sum256(src)
	return digestPrefix + hex.EncodeToString(sum[:])
}

const digestPrefix = "sha256:"

// ErrDigestMismatch is wrapped by the *DigestError of a PutSource whose
// digest is not the source's.
var ErrDigestMismatch = errors.New("store: digest does not match the source")

// DigestError is a PutSource refused: Digest is what the caller gave,
// Actual the digest of the source it gave with it.
type DigestError struct {
	Digest string
	Actual string
}

// Error names both digests.
func (e *DigestError) Error() string {
	return fmt.Sprintf("store: source digest %q, but the source's digest is %s", e.Digest, e.Actual)
}

// Unwrap returns ErrDigestMismatch.
func (e *DigestError) Unwrap() error { return ErrDigestMismatch }

// CheckSource checks PutSource's arguments: nil if digest is
// Digest(src), else a *DigestError. Implementations call it first.
func CheckSource(digest string, src []byte) error {
	if d := Digest(src); d != digest {
		return &DigestError{Digest: digest, Actual: d}
	}
	return nil
}

// CheckThread checks a thread for CreateThread and UpdateThread: an ID,
// a Source that is empty or a well-formed digest, and a Spec that is
// empty or JSON; anything else wraps ErrInvalid.
func CheckThread(t *Thread) error {
	switch {
	case t == nil || t.ID == "":
		return fmt.Errorf("thread without an ID: %w", ErrInvalid)
	case t.Source != "" && !validDigest(t.Source):
		return fmt.Errorf("thread %s: source %q is not a digest (sha256:<64 hex digits>): %w", t.ID, t.Source, ErrInvalid)
	case len(t.Spec) > 0 && !json.Valid(t.Spec):
		return fmt.Errorf("thread %s: spec is not JSON: %w", t.ID, ErrInvalid)
	}
	return nil
}

// validDigest reports whether d is "sha256:" and 64 lowercase hex digits.
func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, digestPrefix)
	if !ok || len(h) != 2*sha256.Size {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Thread is a conversation: a sequence of runs sharing state.
type Thread struct {
	ID       string
	Workflow string // the workflow's name
	// Source is the digest of the workflow's canonical source, which
	// PutSource stored (see Digest), or "" for a thread that names none.
	// Threads can be listed by it (ListOptions.Source).
	Source string
	// Spec is the thread's run spec, as the layer that runs threads
	// writes it (the workflow's digest, the components a run uses,
	// secrets by reference): JSON, or empty. The store keeps it as is.
	Spec    json.RawMessage
	Created time.Time
	Updated time.Time
	Meta    map[string]string // free-form labels

	// LastRun and Status are the Number and Status of the thread's
	// latest run (the last that Runs lists), or 0 and "" while it has
	// none. Thread and Threads set them; writes ignore them.
	LastRun int
	Status  Status
}

// Cursor returns the thread's position in a listing, for
// ListOptions.After: the next page starts after it.
func (t *Thread) Cursor() Cursor { return Cursor{Updated: t.Updated, ID: t.ID} }

// Run is one run of a workflow in a thread.
type Run struct {
	ID       string
	ThreadID string
	Number   int    // 1 for the thread's first run
	Status   Status // one of the Status constants
	Error    string // why a failed run failed
	Created  time.Time
	Updated  time.Time
	// Fence is the fencing token of the writer's Lease on the thread, or
	// 0 for a writer that holds none: PutRun checks it as Append checks
	// Record.Fence (see Leaser). It is not kept: a run reads back with 0.
	Fence int64
}

// Status is a run's status as the store keeps it: one of the constants
// below. PutRun refuses any other value with ErrInvalid, and a stored
// value that is none of them reads back as a *CorruptError of Field
// "status".
type Status string

// The run statuses.
const (
	Running   Status = "running"   // the run is being driven (or its driver died)
	Waiting   Status = "waiting"   // suspended at questions for a person
	Completed Status = "completed" // a final node ran
	Failed    Status = "failed"    // an error ended the run
	Cancelled Status = "cancelled" // cancelled before it ended
)

// Valid reports whether s is one of the run statuses.
func (s Status) Valid() bool {
	switch s {
	case Running, Waiting, Completed, Failed, Cancelled:
		return true
	}
	return false
}

// CheckRun checks a run for PutRun: an ID and a valid Status; anything
// else wraps ErrInvalid.
func CheckRun(r *Run) error {
	switch {
	case r == nil || r.ID == "":
		return fmt.Errorf("run without an ID: %w", ErrInvalid)
	case !r.Status.Valid():
		return fmt.Errorf("run %s: status %q is not a run status: %w", r.ID, r.Status, ErrInvalid)
	}
	return nil
}

// CheckStatus checks a run status read back from storage: nil, or a
// *CorruptError of Field "status" naming the thread and the run.
func CheckStatus(threadID, runID string, s Status) error {
	if s.Valid() {
		return nil
	}
	return &CorruptError{ThreadID: threadID, Field: "status", Detail: fmt.Sprintf("run %s has status %q, not a run status", runID, s)}
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
	// Fence is the fencing token of the writer's Lease on the thread, or
	// 0 for a writer that holds none; see Leaser. The records of one
	// Append carry one Fence.
	Fence int64
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
	// Fence is the fencing token of the writer's Lease on the thread, or
	// 0 for a writer that holds none: PutPending checks it as Append
	// checks Record.Fence (see Leaser). It is not kept: a question reads
	// back with 0.
	Fence int64
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

// ListOptions select and order the threads Threads lists. The filters
// all apply: a thread is listed when it matches every one that is set.
type ListOptions struct {
	// Status lists the threads whose latest run has one of these
	// statuses (a thread without a run has none); empty: any thread.
	Status []Status
	// Workflow lists the threads of the workflow of this name; "": any.
	Workflow string
	// Source lists the threads that name this source digest; "": any.
	Source string
	// Meta lists the threads whose Meta has every one of these pairs.
	Meta map[string]string
	// Search lists the threads whose ID, or one of whose Meta values
	// (the stored text, not the key), contains it as a substring,
	// ignoring the case of ASCII letters (A-Z matches a-z; any other
	// character, % _ and \ included, matches itself only); "": any.
	// Stores match it in their query (see LikeContains), not by
	// reading every thread.
	Search string
	// Order is the order of the listing.
	Order Order
	// After, when not zero, starts the listing after this position (a
	// listed thread's Cursor), in Order: keyset paging, which does not
	// skip or repeat a thread when others are created or deleted
	// between pages (a thread whose Updated moves meanwhile may).
	After Cursor
	// Limit is the most threads listed; 0: no limit.
	Limit int
	// Offset skips this many threads (after After) first.
	Offset int
}

// Order is the order Threads lists threads in.
type Order int

// The orders of a listing. Ties of Updated go by ID, ascending (bytewise).
const (
	NewestFirst Order = iota // Updated descending, ties by ID ascending: the most recently updated first
	OldestFirst              // Updated ascending, ties by ID descending: NewestFirst's exact reverse
)

// Cursor is a position in a listing of threads: the Updated and ID of
// the thread at it (see Thread.Cursor). The zero Cursor is the start.
type Cursor struct {
	Updated time.Time
	ID      string
}

// IsZero reports whether c is the start of a listing.
func (c Cursor) IsZero() bool { return c.ID == "" && c.Updated.IsZero() }

// Check checks the options: known statuses and order, a Limit and an
// Offset not negative; anything else wraps ErrInvalid.
func (o ListOptions) Check() error {
	for _, s := range o.Status {
		if !s.Valid() {
			return fmt.Errorf("list threads with status %q, not a run status: %w", s, ErrInvalid)
		}
	}
	switch {
	case o.Order != NewestFirst && o.Order != OldestFirst:
		return fmt.Errorf("list threads in order %d: %w", o.Order, ErrInvalid)
	case o.Limit < 0 || o.Offset < 0:
		return fmt.Errorf("list threads with limit %d and offset %d: %w", o.Limit, o.Offset, ErrInvalid)
	}
	return nil
}

// Match reports whether t, with its LastRun and Status set, passes the
// filters of o (Status, Workflow, Source, Meta, Search; not After).
func (o ListOptions) Match(t *Thread) bool {
	if len(o.Status) > 0 && !slices.Contains(o.Status, t.Status) {
		return false
	}
	if o.Workflow != "" && t.Workflow != o.Workflow || o.Source != "" && t.Source != o.Source {
		return false
	}
	for k, v := range o.Meta {
		if got, ok := t.Meta[k]; !ok || got != v {
			return false
		}
	}
	return o.Search == "" || Contains(t, o.Search)
}

// Contains reports whether t's ID or one of its Meta values contains
// term, ignoring the case of ASCII letters: ListOptions.Search.
func Contains(t *Thread, term string) bool {
	if containsFold(t.ID, term) {
		return true
	}
	for _, v := range t.Meta {
		if containsFold(v, term) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains term, A-Z and a-z matching each
// other (bytewise, no other folding), without allocating.
func containsFold(s, term string) bool {
	for i := 0; i+len(term) <= len(s); i++ {
		j := 0
		for j < len(term) && lowerByte(s[i+j]) == lowerByte(term[j]) {
			j++
		}
		if j == len(term) {
			return true
		}
	}
	return false
}

// lowerByte maps A-Z to a-z.
func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiLower maps A-Z to a-z, leaving every other byte as it is (not
// strings.ToLower, which folds other letters too, where SQL stores'
// lower() do not).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}

// LikeContains is the pattern of a SQL LIKE ... ESCAPE '\' that matches
// text containing term, ASCII letters lowered (the text must be lowered
// the same way, ASCII only): term's %, _ and \ are escaped with \ so
// that each matches itself.
func LikeContains(term string) string {
	var b strings.Builder
	b.WriteByte('%')
	for _, c := range []byte(asciiLower(term)) {
		if c == '%' || c == '_' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('%')
	return b.String()
}

// Compare orders two positions (threads' Cursors) as a listing in
// o.Order does: negative when a comes first. The two orders are each
// other's exact reverse, ties included, so that the threads after a
// cursor in one are those before it in the other (a page backwards).
func (o ListOptions) Compare(a, b Cursor) int {
	c := a.Updated.Compare(b.Updated)
	if c == 0 {
		c = -strings.Compare(a.ID, b.ID)
	}
	if o.Order == NewestFirst {
		c = -c
	}
	return c
}

// ErrNotFound is returned for a thread, run, snapshot or question that does
// not exist.
var ErrNotFound = errors.New("store: not found")

// ErrClosed is found by errors.Is in the error of a call to a Store after
// Close, or of a wait (RunEvents.WaitRunEvents) that Close ended.
var ErrClosed = errors.New("store: closed")

// ErrUnavailable is matched (errors.Is) by a store error that says the
// store could not be reached: the connection was refused or lost (a
// database restarting, the network). The same call may succeed later;
// nothing is known to have been written.
var ErrUnavailable = errors.New("store: unavailable")

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

// Is reports whether target is ErrConflict, which every conflict of the
// store matches.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

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
// one record, none nil, all of one non-empty thread and one Fence (not
// negative), each of a valid Kind, and Seqs consecutive from the first. A gap inside the batch is a
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
		case r.Fence != recs[0].Fence:
			return fmt.Errorf("append: thread %s, records with fences %d and %d in one batch: %w", r.ThreadID, recs[0].Fence, r.Fence, ErrInvalid)
		case r.Fence < 0:
			return fmt.Errorf("append: thread %s, record %d has fence %d: %w", r.ThreadID, r.Seq, r.Fence, ErrInvalid)
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

// Leaser is implemented by a store that grants leases on threads, so that
// a thread has one driver at a time. The memory, SQLite and PostgreSQL
// stores implement it.
//
// A driver claims a thread, keeps the lease alive with Heartbeat well
// within its TTL, writes the thread's records with the lease's Fence in
// each Record, and releases it when done:
//
//	l, err := ls.Claim(ctx, threadID, owner, 30*time.Second)
//	if errors.Is(err, store.ErrLeaseHeld) { /* another driver has it */ }
//	...
//	rec.Fence = l.Fence
//	err = s.Append(ctx, rec) // errors.Is(err, store.ErrLeaseLost): stop driving
//	...
//	l, err = ls.Heartbeat(ctx, l, 30*time.Second)
//	...
//	err = ls.Release(ctx, l)
//
// The rules, all decided by the store at its own clock (the memory
// store's, the SQLite file's machine's, the PostgreSQL server's), so that
// drivers on several machines never compare clocks:
//
//   - A lease is held from Claim until its Expires, which Heartbeat moves
//     forward, or until Release. Expiry is checked by the store, never by
//     the caller.
//   - Claim is refused with a *LeaseError wrapping ErrLeaseHeld while
//     another lease on the thread is held, whoever holds it (the same
//     owner too: one claim, one driver). Otherwise it grants a lease whose
//     Fence is one more than any fence the thread had before, even after
//     a Release or an expiry: fences of a thread only grow.
//   - Heartbeat and Release need the thread's current lease, unexpired:
//     a lease that expired, was released or was taken by a later Claim is
//     lost, a *LeaseError wrapping ErrLeaseLost. A holder whose lease
//     expired claims again, and gets a new fence.
//   - Append (and BatchWriter.WriteBatch) with records whose Fence is not
//     zero writes only if that Fence is the thread's current lease, and
//     the lease has not expired; otherwise it writes nothing and returns a
//     *LeaseError wrapping ErrLeaseLost. So a second process that drives
//     the thread, or a stalled driver that wakes after its lease expired,
//     cannot write.
//   - Append with Fence zero (callers that take no lease) writes only
//     while no lease on the thread is held; while one is, it writes
//     nothing and returns a *LeaseError wrapping ErrLeaseHeld.
//
// PutRun and PutPending (Run.Fence, Pending.Fence) are fenced by the same
// rules, with the Op "put run" and "put pending", so a driver that lost
// its lease records neither a run's end nor its questions; the other
// writes (DeletePending among them) are not fenced. The fence a record
// was written under is kept and read back in Record.Fence; a run's or a
// question's is not kept. DeleteThread removes the thread's lease with it; a thread
// created again under the same ID starts its fences again from 1.
type Leaser interface {
	// Claim grants owner (a non-empty name of the driver, for the
	// errors of others) a lease on the thread for ttl (more than zero).
	// A missing thread is ErrNotFound; a held lease, ErrLeaseHeld.
	Claim(ctx context.Context, threadID, owner string, ttl time.Duration) (Lease, error)
	// Heartbeat makes a held lease expire ttl (more than zero) from now,
	// by the store's clock, and returns it with its new Expires; a lost
	// lease is ErrLeaseLost.
	Heartbeat(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)
	// Release ends a held lease, so that another driver may claim the
	// thread at once; a lost lease is ErrLeaseLost.
	Release(ctx context.Context, l Lease) error
}

// Lease is a driver's claim on a thread, as Claim and Heartbeat return it.
type Lease struct {
	Thread string
	Owner  string
	// Fence is the fencing token: set it in every Record the driver
	// appends. It grows with each Claim of the thread.
	Fence int64
	// Expires is when the lease ends unless Heartbeat extends it, by the
	// store's clock.
	Expires time.Time
}

// ErrLeaseHeld is wrapped by the *LeaseError of a Claim, or of an Append
// without a fence, while another lease on the thread is held.
var ErrLeaseHeld = errors.New("store: thread is leased to another driver")

// ErrLeaseLost is wrapped by the *LeaseError of a Heartbeat, Release or
// fenced Append whose lease is no longer the thread's current one: it
// expired, was released, or another driver claimed the thread since.
var ErrLeaseLost = errors.New("store: lease lost")

// LeaseError is a lease refused: Err is ErrLeaseHeld or ErrLeaseLost,
// which errors.Is finds.
type LeaseError struct {
	Thread string
	Op     string // "claim", "heartbeat", "release", "append"
	Fence  int64  // the fence the caller presented (0: none)
	// The thread's current lease, as the store saw it when it refused:
	// Holder is empty when no lease is held.
	Holder      string
	HolderFence int64
	Expires     time.Time
	Err         error
}

// Error says what was refused and who holds the thread.
func (e *LeaseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store: thread %s: %s", e.Thread, e.Op)
	if e.Fence != 0 {
		fmt.Fprintf(&b, " with fence %d", e.Fence)
	}
	if e.Holder != "" {
		fmt.Fprintf(&b, ": leased to %s (fence %d) until %s", e.Holder, e.HolderFence, e.Expires.UTC().Format(time.RFC3339Nano))
	} else if e.HolderFence != 0 {
		fmt.Fprintf(&b, ": the thread's last fence is %d, and no lease is held", e.HolderFence)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns ErrLeaseHeld or ErrLeaseLost.
func (e *LeaseError) Unwrap() error { return e.Err }

// CheckClaim checks Claim's arguments: a thread, an owner and a positive
// ttl; anything else wraps ErrInvalid.
func CheckClaim(threadID, owner string, ttl time.Duration) error {
	switch {
	case threadID == "":
		return fmt.Errorf("claim without a thread: %w", ErrInvalid)
	case owner == "":
		return fmt.Errorf("claim of thread %s without an owner: %w", threadID, ErrInvalid)
	case ttl <= 0:
		return fmt.Errorf("claim of thread %s for %v: %w", threadID, ttl, ErrInvalid)
	}
	return nil
}

// LeaseState is a thread's lease as a store keeps it, for CheckFence.
type LeaseState struct {
	Owner   string // empty when released (or never claimed)
	Fence   int64  // the last fence granted; 0 if never
	Expires time.Time
}

// Held reports whether the lease is held at now.
func (s LeaseState) Held(now time.Time) bool { return s.Owner != "" && now.Before(s.Expires) }

// CheckLease checks that l is the thread's current lease st, held at the
// store's time now, for a Heartbeat or Release (op): nil, or the
// *LeaseError wrapping ErrLeaseLost that refuses it.
func CheckLease(op string, l Lease, st LeaseState, now time.Time) error {
	if l.Fence > 0 && l.Owner == st.Owner && l.Fence == st.Fence && st.Held(now) {
		return nil
	}
	e := &LeaseError{Thread: l.Thread, Op: op, Fence: l.Fence, HolderFence: st.Fence, Err: ErrLeaseLost}
	if st.Held(now) {
		e.Holder, e.Expires = st.Owner, st.Expires
	}
	return e
}

// CheckFence applies the rules of Leaser to an Append or a Claim (op) of
// thread under fence (0: none; always 0 for a Claim), at the store's time
// now, given the thread's lease st: nil if it may go on, or the
// *LeaseError that refuses it.
func CheckFence(thread, op string, fence int64, st LeaseState, now time.Time) error {
	held := st.Held(now)
	var cause error
	switch {
	case fence == 0 && held:
		cause = ErrLeaseHeld
	case fence != 0 && (!held || fence != st.Fence):
		cause = ErrLeaseLost
	default:
		return nil // the common case allocates nothing
	}
	e := &LeaseError{Thread: thread, Op: op, Fence: fence, HolderFence: st.Fence, Err: cause}
	if held {
		e.Holder, e.Expires = st.Owner, st.Expires
	}
	return e
}
