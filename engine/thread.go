package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/weakmap"
	"github.com/weftlang/weft/store"
)

// Threads runs workflows in durable threads kept in a Store: every step of
// a run is committed as one record before the next step starts, so a run
// survives its process, waits for a person with no process waiting, and a
// thread's runs share their state (a conversation's messages accumulate).
//
// A thread's log starts with a snapshot record (the whole state), then
// holds one step record per completed task: the cells it changed (appends
// to a List as the appended elements), the control state (the tasks ready
// and waiting, O(threads of control)) and the nodes started. The state is
// the last snapshot folded with the step records after it. A new snapshot
// is written when the records since the last one add up to its size, so
// the bytes stored per step stay flat however long the thread, and
// loading a thread reads at most about twice its state.
//
// Each record is appended with the next sequence number of the thread: a
// record is written exactly once, and a second process working on the
// same thread gets a *store.ConflictError instead of interleaving.
// Transient store errors (a restarting PostgreSQL server) are retried for
// RetryFor; a full or read-only store (store.ErrFull, store.ErrReadOnly)
// fails the run at once.
//
// Threads is safe for concurrent use by many runs on different threads.
type Threads struct {
	// Runner carries out the runs. Required.
	Runner *Runner
	// Store keeps the threads. Required.
	Store store.Store
	// RetryFor is how long a transient store error is retried before the
	// run fails; 0 means 30s, a negative value no retry.
	RetryFor time.Duration
	// Durability says when step records reach the store: Sync (the zero
	// value) commits each before the run goes on, Async batches them in
	// the background. See Durability.
	Durability Durability
	// Owner names this driver in the leases it takes on threads of a
	// store that is a store.Leaser (and in the errors of the drivers
	// they refuse); empty means a random id, chosen once.
	Owner string
	// LeaseTTL, when positive and the store is a store.Leaser, makes
	// Run and Resume drive the thread under a lease of this length (see
	// store.Leaser): a second driver is refused, and a stalled one that
	// lost its lease writes nothing more. A run renews the lease every
	// LeaseTTL/3 while it runs; a driver that stops (a killed process)
	// holds the thread at most this long. 0 means no lease: a claim, a
	// release and a heartbeat cost a run two more store transactions
	// (+85% for a ten-step run on SQLite, BenchmarkS4Checkpointed), so a
	// process that shares threads with others (weft run, a server, a
	// worker) turns it on; an unleased append is still refused while
	// another driver holds the thread's lease (store.ErrLeaseHeld).
	LeaseTTL time.Duration
	// ClaimWait is how long Run and Resume retry a claim refused because
	// another driver holds the thread's lease, before they give up with
	// store.ErrLeaseHeld: a process that resumes the thread of one that
	// was killed waits for the killed one's lease to run out. 0 means
	// no retry.
	ClaimWait time.Duration
	// Cache, when set, keeps the states Load, Run and Resume decode, to
	// be decoded again only when the thread's log changed (see
	// StateCache); several Threads on one store may share one.
	Cache *StateCache

	ownerOnce sync.Once
	owner     string

	// plans keeps each plan's planInfo while the plan is reachable, so a
	// server that compiles plan after plan does not keep them all.
	plans weakmap.Map[flow.Plan, *planInfo]
}

// planInfo is what the records of a plan's runs repeat, computed once per
// plan. It must not refer to the plan (see weakmap.Map).
type planInfo struct {
	fp    string // Fingerprint
	names []byte // "cells":[...],"nodes":[...] of snapshots
}

func (th *Threads) info(plan *flow.Plan) *planInfo {
	if pi, ok := th.plans.Load(plan); ok {
		return pi
	}
	cells, nodes := cellInfos(plan)
	names, _ := json.Marshal(struct {
		Cells []CellInfo `json:"cells"`
		Nodes []string   `json:"nodes"`
	}{cells, nodes}) // names and small ints always encode
	pi := &planInfo{fp: Fingerprint(plan), names: names[1 : len(names)-1]}
	pi, _ = th.plans.LoadOrStore(plan, pi)
	return pi
}

// fingerprint returns Fingerprint(plan), computed once per plan.
func (th *Threads) fingerprint(plan *flow.Plan) string { return th.info(plan).fp }

// Answer is a person's answer to a question a waiting run asks.
type Answer struct {
	// ID is the question's id (Pending.ID, Task.QuestionID); empty when
	// the run asks one question only.
	ID string
	// Outputs are the human node's outputs, by name.
	Outputs map[string]flow.Value
}

// ThreadState is a thread's state as its log holds it: the current run and
// the machine state, with the names to read it by.
type ThreadState struct {
	Thread    string
	Run       string      // the id of the thread's last run, "" before any
	RunNumber int         // 1 for the thread's first run, 0 before any
	Plan      string      // the fingerprint of the plan the run follows
	Cells     []CellInfo  // the plan's cells, by index
	Nodes     []string    // the plan's node names, by index
	State     *State      // nil before any run
	Seq       int64       // the last record folded
	Forked    *ForkOrigin // where the thread was forked from, if it was
	// Paused names the nodes whose tasks a breakpoint held back when
	// the last run stopped at one (Breakpoints): its status is Running,
	// and Resume without answers continues it. Nil otherwise.
	Paused []string

	snapBytes  int // size of the last snapshot record
	bytesSince int // bytes of the step records after it
	recsSince  int // their number

	// created is the Created of the row of run createdOf, as a drive of
	// this process wrote it with the records this state was folded up
	// to (StateCache.extend); zero when not known so.
	createdOf string
	created   time.Time
}

// CellInfo names a cell of a thread's state.
type CellInfo struct {
	Name string        `json:"name"`
	Kind flow.CellKind `json:"kind"`
}

// ForkOrigin is the thread and record a thread was forked from.
type ForkOrigin struct {
	Thread string `json:"thread"`
	Seq    int64  `json:"seq"`
}

// Status returns the status of the thread's last run; Completed for a
// thread with no run yet.
func (ts *ThreadState) Status() Status {
	if ts.State == nil {
		return Completed
	}
	return ts.State.Control.Status
}

// Value returns the value of the variable, slot, parameter or node cell
// ("node.output") called name in the thread's state.
func (ts *ThreadState) Value(name string) (flow.Value, bool) {
	for i, c := range ts.Cells {
		if c.Name == name {
			return ts.cell(i), true
		}
	}
	return flow.Null, false
}

func (ts *ThreadState) cell(i int) flow.Value {
	if ts.State == nil {
		return flow.Null
	}
	j, ok := slices.BinarySearchFunc(ts.State.Cells, i, func(c CellValue, cell int) int { return c.Cell - cell })
	if !ok {
		return flow.Null
	}
	return ts.State.Cells[j].Value
}

// Vars returns the thread's variables and slots, in declaration order.
func (ts *ThreadState) Vars() []NamedValue {
	var out []NamedValue
	for i, c := range ts.Cells {
		if c.Kind == flow.CellVar || c.Kind == flow.CellSlot {
			out = append(out, NamedValue{Name: c.Name, Value: ts.cell(i)})
		}
	}
	return out
}

// Waiting returns the questions the thread's last run waits on, those of
// its subworkflow frames included (their Path names their node).
func (ts *ThreadState) Waiting() []TaskState {
	if ts.State == nil {
		return nil
	}
	var out []TaskState
	var walk func(tasks []TaskState)
	walk = func(tasks []TaskState) {
		for _, t := range tasks {
			if t.Waiting {
				out = append(out, t)
			}
			if t.Sub != nil {
				walk(t.Sub.Control.Tasks)
			}
		}
	}
	walk(ts.State.Control.Tasks)
	slices.SortFunc(out, func(a, b TaskState) int { return a.ID - b.ID })
	return out
}

// NodeOf returns the node name of a task of the state: its path
// ("outer/inner") for a task of a subworkflow frame.
func (ts *ThreadState) NodeOf(t TaskState) string {
	if t.Path != "" {
		return t.Path
	}
	tokens := ts.State.Control.Tokens
	if t.Token < 0 || t.Token >= len(tokens) || tokens[t.Token].Node >= len(ts.Nodes) {
		return ""
	}
	return ts.Nodes[tokens[t.Token].Node]
}

// ThreadError is a thread that cannot do what was asked in its state: a
// new run while the last one waits or did not finish, a resume with
// nothing to resume, a workflow other than the thread's.
type ThreadError struct {
	Thread string
	Run    int    // the run concerned, 0 if none
	Status Status // its status
	Kind   Kind   // what went wrong, for programs (see KindOf)
	Detail string
	Err    error // the cause, if any: ErrThreadAdvanced for answers another process gave first, ErrWaiting for a run waiting for answers none were given for
}

// Error names the thread and the run.
func (e *ThreadError) Error() string {
	if e.Run == 0 {
		return fmt.Sprintf("thread %s: %s", e.Thread, e.Detail)
	}
	return fmt.Sprintf("thread %s, run %d (%s): %s", e.Thread, e.Run, e.Status, e.Detail)
}

// Unwrap returns the cause.
func (e *ThreadError) Unwrap() error { return e.Err }

// Is reports a thread whose lease another driver holds (store.ErrLeaseHeld)
// as ErrThreadAdvanced too: another process drives the thread. It matches
// the sentinel of its kind (ErrEnded for KindEnded, ...).
func (e *ThreadError) Is(target error) bool {
	return target == ErrThreadAdvanced && errors.Is(e.Err, store.ErrLeaseHeld) || target == e.errorKind().Sentinel()
}

// ErrWaiting is matched (errors.Is) by the *ThreadError of a call that
// needs answers the thread's run waits for and did not get: a new Run in
// a thread whose run is waiting, or a Resume without answers. Answer the
// questions with Resume.
var ErrWaiting error = &kindSentinel{KindWaiting, "the run waits for an answer"}

// ErrThreadAdvanced is matched (errors.Is) by the error of a run or
// resume that met another process's work on its thread: a record the
// other process appended first (a *CheckpointError over a
// *store.ConflictError: this process's step was not recorded, and its run
// stops), or an answer the other process gave first, while the run it
// resumed has not ended (a *ThreadError). The other process holds the
// thread; nothing of this process's was recorded after the point where
// they met. With a store that grants leases (store.Leaser), a Run or
// Resume refused because another driver holds the thread's lease matches
// it too, as well as store.ErrLeaseHeld.
//
// It is of KindConflict: errors.Is(err, ErrConflict) holds too.
var ErrThreadAdvanced error = &kindSentinel{KindConflict, "another process advanced the thread"}

// PlanChangedError is a run resumed with a workflow whose structure
// differs from the one it started with: its state cannot be read by the
// new plan.
type PlanChangedError struct {
	Thread    string
	Run       int
	Was, Now  string // plan fingerprints
	Workflow  string
	Different string // what differs, when known
}

// Error says what to do.
func (e *PlanChangedError) Error() string {
	return fmt.Sprintf("thread %s, run %d: workflow %s changed since the run started (plan %s, now %s); resume it with the workflow it started with, or start a new run", e.Thread, e.Run, e.Workflow, e.Was, e.Now)
}

// CheckpointError is a step the store could not record. The run stops:
// its state in the store is the last step recorded, from which it can be
// resumed.
type CheckpointError struct {
	Thread string
	Run    int
	Seq    int64
	Step   int
	Node   string
	Err    error
}

// Error names the step; when another process appended first, it says so.
func (e *CheckpointError) Error() string {
	var ce *store.ConflictError
	if errors.As(e.Err, &ce) {
		return fmt.Sprintf("thread %s, run %d: %v (it wrote record %d first, up to record %d): it holds the thread; step %d (%s) was not recorded here, and this run stopped",
			e.Thread, e.Run, ErrThreadAdvanced, e.Seq, ce.Got, e.Step, e.Node)
	}
	return fmt.Sprintf("thread %s, run %d: recording step %d (%s) as record %d: %v", e.Thread, e.Run, e.Step, e.Node, e.Seq, e.Err)
}

// Unwrap returns the store's error.
func (e *CheckpointError) Unwrap() error { return e.Err }

// Is reports a checkpoint that met another process's record as
// ErrThreadAdvanced, and matches the sentinel of its kind (ErrConflict,
// ErrInternal; see KindOf).
func (e *CheckpointError) Is(target error) bool {
	var ce *store.ConflictError
	return target == ErrThreadAdvanced && errors.As(e.Err, &ce) || target == e.errorKind().Sentinel()
}

// The records' data.
type (
	runInfo struct {
		ID     string `json:"run"`
		Number int    `json:"number"`
		Plan   string `json:"plan"`
	}
	snapshotData struct {
		runInfo
		Cells []CellInfo  `json:"cells"`
		Nodes []string    `json:"nodes"`
		From  *ForkOrigin `json:"from,omitempty"`
		// Update marks a snapshot Threads.Update wrote; Node is the
		// node it is attributed to (UpdateOptions.AsNode).
		Update bool   `json:"update,omitempty"`
		Node   string `json:"node,omitempty"`
		// Restored marks a snapshot Threads.Restore (or a rolled-back
		// run) wrote: the state right after record To, or, with To 0,
		// no state at all (State nil: the thread as before its first
		// run).
		Restored bool   `json:"restored,omitempty"`
		To       int64  `json:"to,omitempty"`
		State    *State `json:"state"`
		names    []byte // Cells and Nodes, encoded (see planInfo)
	}
	stepData struct {
		Start   *runInfo    `json:"start,omitempty"` // a run starts here
		Task    int         `json:"task,omitempty"`
		Node    string      `json:"node,omitempty"`
		Item    int         `json:"item,omitempty"`
		Answer  bool        `json:"answer,omitempty"` // completed by a person's answer
		Error   string      `json:"error,omitempty"`
		Delta   []CellValue `json:"delta,omitempty"`
		Control Control     `json:"control"`
	}
)

// Snapshot policy: a snapshot follows when the step records since the last
// one add up to its size, and after at least minSince of them. So a
// thread's snapshots never cost more than its step records, even when the
// state is large and each step small (a map of many elements, a long
// conversation), and loading reads at most about twice the state. (A
// snapshot forced after a fixed count of records made a map of n elements
// write O(n²) bytes.)
const minSince = 16

// Load reads a thread's state. A thread that does not exist is
// store.ErrNotFound; a record that does not decode is a
// *store.CorruptError naming the thread, the record and the field.
func (th *Threads) Load(ctx context.Context, threadID string) (*ThreadState, error) {
	if ts, ok, err := th.cached(ctx, threadID); ok {
		return ts, err
	}
	snap, err := th.Store.LastSnapshot(ctx, threadID)
	if errors.Is(err, store.ErrNotFound) {
		if err := th.noSnapshot(ctx, threadID); err != nil {
			return nil, missingThread(threadID, err)
		}
		return &ThreadState{Thread: threadID}, nil
	}
	if err != nil {
		return nil, err
	}
	return th.loadFrom(ctx, threadID, snap)
}

// noSnapshot checks a thread without a snapshot: it must have no record
// either (every thread's log starts with a snapshot), else its log lost
// the snapshot, which is a *store.CorruptError. A missing thread is
// store.ErrNotFound.
func (th *Threads) noSnapshot(ctx context.Context, threadID string) error {
	recs, err := th.Store.Records(ctx, threadID, 1)
	if err != nil {
		return err
	}
	// A log that starts with a snapshot was written since the caller
	// found none: another process created the thread, and the caller's
	// first append will meet its records.
	if len(recs) > 0 && recs[0].Kind != store.Snapshot {
		r := recs[0]
		return &store.CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "kind", Detail: "the log has no snapshot to start from"}
	}
	return nil
}

// loadFrom folds the records after snap into it.
func (th *Threads) loadFrom(ctx context.Context, threadID string, snap *store.Record) (*ThreadState, error) {
	ts := &ThreadState{Thread: threadID}
	if _, err := ts.apply(snap); err != nil {
		return nil, err
	}
	recs, err := th.Store.Records(ctx, threadID, snap.Seq+1)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if _, err := ts.apply(r); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// applied is the data of a record apply folded: step for a step record,
// snap for a snapshot (whose State the ThreadState now holds).
type applied struct {
	step *stepData
	snap *snapshotData
}

// apply folds one record into the state, and returns the record's data.
// It changes the State in place (its cells, a map's element lists, a
// frame's cells): a State kept from before must be cloned (State.clone).
func (ts *ThreadState) apply(r *store.Record) (applied, error) {
	corrupt := func(field string, err error) error {
		return &store.CorruptError{ThreadID: ts.Thread, Seq: r.Seq, Step: r.Step, Field: field, Detail: err.Error()}
	}
	switch r.Kind {
	case store.Snapshot:
		var sd snapshotData
		if err := json.Unmarshal(r.Data, &sd); err != nil {
			return applied{}, corrupt("data", err)
		}
		if sd.State == nil && !(sd.Restored && sd.To == 0) {
			return applied{}, corrupt("data.state", errors.New("missing"))
		}
		if sd.State != nil {
			if err := checkCells(sd.State.Cells, len(sd.Cells)); err != nil {
				return applied{}, corrupt("data.state.cells", err)
			}
		}
		ts.Run, ts.RunNumber, ts.Plan = sd.ID, sd.Number, sd.Plan
		ts.Cells, ts.Nodes, ts.State = sd.Cells, sd.Nodes, sd.State
		if sd.From != nil {
			ts.Forked = sd.From
		}
		ts.snapBytes, ts.bytesSince, ts.recsSince = len(r.Data), 0, 0
		ts.Seq, ts.Paused = r.Seq, nil
		return applied{snap: &sd}, nil
	case store.Step:
		if ts.State == nil {
			return applied{}, corrupt("kind", errors.New("a step record before any snapshot"))
		}
		var sd stepData
		if err := json.Unmarshal(r.Data, &sd); err != nil {
			return applied{}, corrupt("data", err)
		}
		if err := checkCells(sd.Delta, len(ts.Cells)); err != nil {
			return applied{}, corrupt("data.delta", err)
		}
		if sd.Start != nil {
			ts.Run, ts.RunNumber, ts.Plan = sd.Start.ID, sd.Start.Number, sd.Start.Plan
			ts.State.Control.Path = nil
			ts.State.Control.Notices = nil
		}
		if err := ts.State.Fold(sd.Delta, sd.Control); err != nil {
			return applied{}, corrupt("data.control", err)
		}
		ts.bytesSince += len(r.Data)
		ts.recsSince++
		ts.Seq, ts.Paused = r.Seq, nil
		return applied{step: &sd}, nil
	case store.Event:
		if p := isPause(r); p != nil {
			ts.Paused = p
		}
	default:
		return applied{}, corrupt("kind", fmt.Errorf("unknown kind %q", r.Kind))
	}
	ts.Seq = r.Seq
	return applied{}, nil
}

func checkCells(cvs []CellValue, n int) error {
	for i, cv := range cvs {
		if cv.Cell < 0 || cv.Cell >= n {
			return fmt.Errorf("[%d]: cell %d out of range (the thread's plan has %d)", i, cv.Cell, n)
		}
	}
	return nil
}

// Fingerprint identifies the structure of a plan that a thread's records
// depend on: its cells (names, kinds, types) and nodes (names, edges,
// inputs, outputs). A run can be resumed only by a plan with the same
// fingerprint.
func Fingerprint(plan *flow.Plan) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00", plan.Workflow.Name)
	for _, c := range plan.Cells {
		fmt.Fprintf(h, "c%s\x00%d\x00%s\x00", c.Name, c.Kind, c.Type)
	}
	for _, n := range plan.Nodes {
		fmt.Fprintf(h, "n%s\x00%d\x00%d\x00%d\x00%d\x00", n.Name, len(n.Edges), len(n.OnError), len(n.Inputs), len(n.Outputs))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func cellInfos(plan *flow.Plan) ([]CellInfo, []string) {
	cells := make([]CellInfo, len(plan.Cells))
	for i, c := range plan.Cells {
		cells[i] = CellInfo{Name: c.Name, Kind: c.Kind}
	}
	nodes := make([]string, len(plan.Nodes))
	for i, n := range plan.Nodes {
		nodes[i] = n.Name
	}
	return cells, nodes
}

// carry maps the thread's state onto the cells of plan, by name when the
// plan changed, for a new run to start from.
func (ts *ThreadState) carry(plan *flow.Plan, fp string) []flow.Value {
	prev := make([]flow.Value, len(plan.Cells))
	if fp == ts.Plan {
		for _, cv := range ts.State.Cells {
			prev[cv.Cell] = cv.Value
		}
		return prev
	}
	byName := map[string]int{}
	for i, c := range ts.Cells {
		byName[c.Name] = i
	}
	for i, c := range plan.Cells {
		j, ok := byName[c.Name]
		if !ok || ts.Cells[j].Kind != c.Kind {
			continue
		}
		if v, err := flow.Conform(ts.cell(j), c.Type); err == nil {
			prev[i] = v
		}
	}
	return prev
}

// open loads a thread, creating it when it does not exist.
func (th *Threads) open(ctx context.Context, plan *flow.Plan, threadID string, meta map[string]string, create **store.Thread) (*ThreadState, error) {
	if ts, ok, err := th.cached(ctx, threadID); ok {
		return ts, err
	}
	snap, err := th.Store.LastSnapshot(ctx, threadID)
	if errors.Is(err, store.ErrNotFound) {
		// A new thread, or one whose first record was never written
		// (every thread's log starts with a snapshot). A thread whose
		// log lost its snapshot is refused: its records are checked
		// where the thread turns out to exist, so that a new thread
		// costs no extra read.
		t := &store.Thread{ID: threadID, Workflow: plan.Workflow.Name, Meta: meta}
		if create != nil {
			// The caller creates it with its first records.
			if err := th.noSnapshot(ctx, threadID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			*create = t
			return &ThreadState{Thread: threadID}, nil
		}
		err = th.Store.CreateThread(ctx, t)
		if errors.Is(err, store.ErrExists) {
			err = th.noSnapshot(ctx, threadID)
		}
		if err != nil {
			return nil, err
		}
		return &ThreadState{Thread: threadID}, nil
	}
	if err != nil {
		return nil, err
	}
	return th.loadFrom(ctx, threadID, snap)
}

// RunOptions are the optional settings of Threads.Run and Runner.RunWith.
type RunOptions struct {
	// Meta labels a thread the run creates (the CLI keeps the workflow's
	// file there, so that resume needs only the thread). Runner.RunWith
	// ignores it.
	Meta map[string]string
	// Init gives variables their starting values, by name, in place of
	// their declared initial values (and, in a thread, of the values the
	// previous run carried): seed 000's tests start rephraseCount at 2.
	// The value is checked against the variable's type. A name that is
	// not a variable, or a value of the wrong type, is an *InputError with
	// Variable set. Update, when it names the same variable, is written
	// after it.
	Init map[string]flow.Value
	// Update writes values to variables, by name, through their reducers,
	// once the run has its starting state (the thread's carried values
	// or the initial ones) and before its first step: LangGraph's input
	// as an update, so that a new message appends to the conversation a
	// thread carries. A name that is not a variable, or a value of the
	// wrong type, is an *InputError.
	Update map[string]flow.Value
	// Breakpoints, when set, stop the run once before or after nodes
	// (see Breakpoints). A name that is not a node of the plan is a
	// *ThreadError of KindInvalidInput.
	Breakpoints *Breakpoints
	// Durability, when not DefaultDurability, is the run's in place of
	// the Threads'.
	Durability Durability
	// OnEnd, when set, is called as the run's end is recorded, with the
	// run's status and error: a job change it returns is written in the
	// same transaction (store.RunEnd.Job, on a store.RunEnder), and its
	// Done says whether it was made. It is not called when the end is
	// not recorded that way (the run stopped by its context, a store
	// without RunEnder, a rollback).
	OnEnd func(status Status, err error) *store.JobChange
	// OnCheckpoint, when set, is told of each checkpoint the run adds to
	// its thread's log (a step or snapshot record: Threads.Checkpoints
	// lists it, LoadAt reads it) as the record is handed to the store:
	// with Async or Exit durability before it is written (Run returns
	// only once it is). It is called in order, from the run's
	// goroutines, under the run's lock: it must be quick and must not
	// call the Runner.
	OnCheckpoint func(CheckpointRef)
}

// CheckpointRef names a checkpoint a run adds to its thread's log
// (RunOptions.OnCheckpoint).
type CheckpointRef struct {
	Seq  int64 // the record's number in the thread: Checkpoint.Seq
	Run  int   // the run's number in the thread
	Step int   // the run's step; 0 for the record that starts the run
	// Node is the node whose task the record completed; "" for the
	// start of a run or a snapshot taken in its course.
	Node string
	// Start marks the record that starts the run (Source "input").
	Start bool
}

// ResumeOptions are the optional settings of Threads.ResumeWith.
type ResumeOptions struct {
	// Breakpoints stop the resumed run once before or after nodes (see
	// Breakpoints). The tasks a stop held back, which a resume without
	// answers runs first, do not stop again before their nodes.
	Breakpoints *Breakpoints
	// Durability, OnEnd and OnCheckpoint are as in RunOptions.
	Durability   Durability
	OnEnd        func(status Status, err error) *store.JobChange
	OnCheckpoint func(CheckpointRef)
}

// Run starts a new run of plan in a thread, creating the thread if it does
// not exist, and drives it to its end or until it waits for a person. The
// run starts from the thread's state: variables and slots carry over as
// Carries says. A thread whose last run waits or did not finish is a
// *ThreadError: Resume it first. obs and opts may be nil.
func (th *Threads) Run(ctx context.Context, plan *flow.Plan, threadID string, params map[string]flow.Value, obs Observer, opts *RunOptions) (*Result, error) {
	if threadID == "" {
		return nil, fmt.Errorf("engine: a thread needs an id: %w", store.ErrInvalid)
	}
	var meta map[string]string
	if opts != nil {
		meta = opts.Meta
	}
	return th.leased(ctx, threadID, &store.Thread{ID: threadID, Workflow: plan.Workflow.Name, Meta: meta}, func(hl *heldLease) (*Result, error) {
		return th.run(ctx, plan, threadID, params, obs, opts, meta, hl)
	})
}

func (th *Threads) run(ctx context.Context, plan *flow.Plan, threadID string, params map[string]flow.Value, obs Observer, opts *RunOptions, meta map[string]string, hl *heldLease) (*Result, error) {
	fence := hl.fence()
	// With Async durability and a store that writes batches, a new
	// thread is created with its first records, in one commit (unless
	// the store grants leases: the thread was created to be claimed).
	var create *store.Thread
	lazy := (**store.Thread)(nil)
	dur := th.Durability.of(Sync)
	if opts != nil {
		dur = opts.Durability.of(th.Durability)
	}
	if _, ok := th.Store.(store.BatchWriter); ok && dur != Sync && fence == 0 {
		lazy = &create
	}
	ts, err := th.open(ctx, plan, threadID, meta, lazy)
	if err != nil {
		return nil, err
	}
	if opts != nil {
		if err := opts.Breakpoints.Check(threadID, plan); err != nil {
			return nil, err
		}
	}
	if ts.State != nil && ts.Status() == Running && len(ts.Paused) > 0 {
		// A run stopped at a breakpoint: a new run ends it.
		if err := th.endPaused(ctx, ts, fence); err != nil {
			return nil, err
		}
		ts.State.Control.Status = Cancelled
	}
	if ts.State != nil {
		switch s := ts.Status(); {
		case s == Waiting:
			return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: s, Kind: KindWaiting, Detail: "waits for an answer; answer it with Resume before starting a new run", Err: ErrWaiting}
		case s == Running:
			return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: s, Kind: KindConflict, Detail: "did not finish (its process stopped, or it is running elsewhere); continue it with Resume"}
		case ts.State.Workflow != plan.Workflow.Name:
			return nil, &ThreadError{Thread: threadID, Kind: KindMismatch, Detail: fmt.Sprintf("belongs to workflow %s, not %s", ts.State.Workflow, plan.Workflow.Name)}
		}
	}
	fp := th.fingerprint(plan)
	var prev []flow.Value
	if ts.State != nil {
		prev = ts.carry(plan, fp)
	}
	m, err := newMachine(plan, params, obs != nil, prev, opts)
	if err != nil {
		return &Result{Status: Failed, Err: err}, err
	}
	d := &durable{th: th, ts: ts, fence: fence, lease: hl, created: time.Now(), info: runInfo{ID: newRunID(), Number: ts.RunNumber + 1, Plan: fp}, origin: ts.Seq}
	if dur != Sync {
		d.w = newRecordWriter(ctx, th, dur)
		d.w.create = create
	}
	if opts != nil {
		d.bp = newBreakpoints(opts.Breakpoints, false)
		d.onEnd, d.onCheckpoint = opts.OnEnd, opts.OnCheckpoint
	}
	d.prefix = keyPrefix(threadID, d.info)
	d.starting = true
	if ts.State == nil || ts.Plan != fp {
		err = d.snapshot(ctx, m, nil)
	} else {
		delta, ctl := m.Delta()
		info := d.info
		err = d.append(ctx, store.Step, 0, &stepData{Start: &info, Delta: delta, Control: ctl}, "")
	}
	if err != nil {
		d.settle()
		err = &CheckpointError{Thread: threadID, Run: d.info.Number, Seq: ts.Seq + 1, Node: "(start)", Err: err}
		return &Result{Status: Failed, Err: err}, err
	}
	res, err := th.Runner.driveIn(ctx, m, obs, d, d.resumed)
	res, err = d.finish(ctx, res, err)
	res.detach()
	return res, err
}

// Resume continues a thread's last run in this process: a run waiting for
// people takes their answers (the human nodes complete with them, and no
// earlier node runs again); a run that did not finish (its process died)
// continues with the steps that were in flight, with no answers. plan must
// be the workflow the run started with (a *PlanChangedError otherwise).
func (th *Threads) Resume(ctx context.Context, plan *flow.Plan, threadID string, answers []Answer, obs Observer) (*Result, error) {
	return th.ResumeWith(ctx, plan, threadID, answers, obs, nil)
}

// ResumeWith is Resume with options: breakpoints for the resumed run. A
// run stopped at a breakpoint (ThreadState.Paused) is continued by a
// resume without answers.
func (th *Threads) ResumeWith(ctx context.Context, plan *flow.Plan, threadID string, answers []Answer, obs Observer, opts *ResumeOptions) (*Result, error) {
	if opts != nil {
		if err := opts.Breakpoints.Check(threadID, plan); err != nil {
			return nil, err
		}
	}
	return th.leased(ctx, threadID, nil, func(hl *heldLease) (*Result, error) {
		return th.resume(ctx, plan, threadID, answers, obs, opts, hl)
	})
}

func (th *Threads) resume(ctx context.Context, plan *flow.Plan, threadID string, answers []Answer, obs Observer, opts *ResumeOptions, hl *heldLease) (*Result, error) {
	fence := hl.fence()
	ts, err := th.Load(ctx, threadID)
	if err != nil {
		return nil, err
	}
	if ts.State == nil {
		return nil, &ThreadError{Thread: threadID, Kind: KindNotFound, Detail: "has no run to resume"}
	}
	status := ts.Status()
	switch {
	case status.Ended() && len(answers) > 0:
		return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: status, Kind: KindEnded, Detail: "has ended and asks no question (another process may have answered it and finished the run)"}
	case status.Ended():
		return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: status, Kind: KindEnded, Detail: "has ended; start a new run in the thread instead"}
	case status == Waiting && len(answers) == 0:
		return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: status, Kind: KindWaiting, Detail: "waits for an answer" + questionIDs(ts), Err: ErrWaiting}
	case status == Running && len(answers) > 0:
		// The questions stay pending, and the run's row says it waits,
		// until the run that took their answers waits again or ends:
		// either here means another process answered first. (A run
		// that never waited has no row, or a running one, and no
		// pending question.)
		advanced := false
		if pend, err := th.Store.Pending(ctx, threadID); err != nil {
			return nil, err
		} else if len(pend) > 0 {
			advanced = true
		}
		if r, err := th.Store.Run(ctx, ts.Run); err == nil && r.Status != store.Running {
			advanced = true
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if advanced {
			return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: status, Kind: KindConflict, Err: ErrThreadAdvanced,
				Detail: "asks no question: " + ErrThreadAdvanced.Error() + ", answering its question first; it holds the thread (running the run on, or stopped before the run ended)"}
		}
		return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: status, Kind: KindConflict, Detail: "asks no question (its run did not end: another process runs it, or stopped in the middle of it); resume it without answers"}
	}
	if fp := th.fingerprint(plan); fp != ts.Plan {
		return nil, &PlanChangedError{Thread: threadID, Run: ts.RunNumber, Was: ts.Plan, Now: fp, Workflow: plan.Workflow.Name}
	}
	m, err := RestoreMachine(plan, ts.State, obs != nil)
	if err != nil {
		return nil, err
	}
	d := &durable{th: th, ts: ts, fence: fence, lease: hl, info: runInfo{ID: ts.Run, Number: ts.RunNumber, Plan: ts.Plan}, resumed: true, lastStatus: status, origin: ts.Seq}
	if len(answers) == 0 {
		// A run whose process stopped: its drive began before, with
		// the run's start or the answers it took.
		if d.origin, err = th.driveOrigin(ctx, threadID); err != nil {
			return nil, err
		}
	}
	dur := th.Durability.of(Sync)
	if opts != nil {
		d.bp = newBreakpoints(opts.Breakpoints, len(answers) == 0)
		d.onEnd, d.onCheckpoint = opts.OnEnd, opts.OnCheckpoint
		dur = opts.Durability.of(th.Durability)
	}
	if dur != Sync {
		d.w = newRecordWriter(ctx, th, dur)
	}
	d.prefix = keyPrefix(threadID, d.info)
	switch r, err := th.runOf(ctx, ts); {
	case err == nil:
		d.created = r.Created
	case errors.Is(err, store.ErrNotFound):
		d.created = time.Now() // its process died before the run's row was written
	default:
		return nil, err
	}
	for _, a := range answers {
		t, err := waitingTask(m, ts, a.ID)
		if err != nil {
			return nil, err
		}
		out := make([]flow.Value, len(t.Node.Outputs))
		c := &Call{Node: t.Node, Outputs: out}
		err = c.SetOutputs(a.Outputs)
		if err == nil {
			// An answer that does not fit the node's outputs is refused
			// here, before anything is recorded: the run keeps waiting.
			out, err = m.conform(t.Node, out)
		}
		if err != nil {
			return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: status, Kind: KindMismatch, Detail: fmt.Sprintf("answer to question %d (%s): %v", t.ID, t.Name, err), Err: err}
		}
		name, step, item, id := t.Name, t.topStep(), t.Item, t.ID
		if err := m.Resume(id, out); err != nil {
			return nil, err
		}
		d.commitStep(ctx, m, &stepData{Task: id, Node: name, Item: item, Answer: true}, step)
		if d.err != nil {
			d.settle()
			return &Result{Status: Failed, Err: d.err}, d.err
		}
	}
	res, err := th.Runner.driveIn(ctx, m, obs, d, d.resumed)
	res, err = d.finish(ctx, res, err)
	res.detach()
	return res, err
}

func questionIDs(ts *ThreadState) string {
	w := ts.Waiting()
	if len(w) == 0 {
		return ""
	}
	s := ": questions"
	for _, t := range w {
		s += fmt.Sprintf(" %s (%s)", t.QuestionID(), ts.NodeOf(t))
	}
	return s
}

// waitingTask finds the waiting task an answer is for.
func waitingTask(m *Machine, ts *ThreadState, id string) (*Task, error) {
	w := m.Waiting()
	if id == "" {
		if len(w) == 1 {
			return w[0], nil
		}
		return nil, &ThreadError{Thread: ts.Thread, Run: ts.RunNumber, Status: Waiting, Kind: KindInvalidInput, Detail: "asks several questions; answer each by id" + questionIDs(ts)}
	}
	for _, t := range w {
		if t.QuestionID() == id {
			return t, nil
		}
	}
	return nil, &ThreadError{Thread: ts.Thread, Run: ts.RunNumber, Status: Waiting, Kind: KindMismatch, Detail: fmt.Sprintf("no question %q waits%s", id, questionIDs(ts)), Err: questionError(m, id)}
}

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// durable commits the steps of one run to its thread.
type durable struct {
	th         *Threads
	ts         *ThreadState
	info       runInfo
	prefix     string // of idempotency keys
	fence      int64  // of the run's lease, in every record; 0 without one
	lease      *heldLease
	created    time.Time
	resumed    bool
	lastStatus Status // the status the last record holds
	// origin is the thread's last record before the drive's first (its
	// run's start, or the answers it resumed with): a rollback restores
	// the state right after it (ErrRunRolledBack).
	origin int64
	bp     *breakpoints // the drive's breakpoints, or nil
	err    error        // the first commit that failed
	buf    []byte       // step records are encoded here
	delta  []CellValue
	ctl    Control // its Tasks and Tokens are reused from step to step
	sd     stepData
	w      *recordWriter // Async, Exit: the records not written yet; nil for Sync
	onEnd  func(Status, error) *store.JobChange
	// onCheckpoint is told of each step and snapshot record; starting
	// marks the next as the run's start.
	onCheckpoint func(CheckpointRef)
	starting     bool
	// written are the records of the drive, in order, when its Threads
	// has a Cache: once its end is recorded, the cache keeps them to
	// fold at the next read (StateCache.extend). A drive whose records
	// outgrow what the cache would keep (StateCache.keeps) stops
	// collecting them (unkept), so a long run holds none.
	written      []*store.Record
	writtenBytes int
	unkept       bool
}

// runError completes a writer's *CheckpointError with the run's number.
func (d *durable) runError(err error) error {
	if ce, ok := err.(*CheckpointError); ok && ce.Run == 0 {
		c := *ce
		c.Run = d.info.Number
		return &c
	}
	return err
}

// settle waits for the records handed to the writer (Async) and takes
// up its failure as the run's.
func (d *durable) settle() {
	if d.w == nil {
		return
	}
	if err := d.w.flush(); err != nil && d.err == nil {
		d.err = d.runError(err)
	}
}

// keyPrefix returns the start of the idempotency keys of a run's tasks:
// "THREAD/RUN-ID/", RUN the run's number and ID its random id. The id
// makes every run's keys its own, forever: a thread deleted (or pruned)
// and made again, or a fresh store, numbers its runs and steps from 1
// again, and would send a new effect an old key. A resumed run keeps its
// id (it is in its records), so a step run again sends the same key.
func keyPrefix(threadID string, info runInfo) string {
	return threadID + "/" + strconv.Itoa(info.Number) + "-" + info.ID + "/"
}

// key returns a task's idempotency key: the prefix and the task's step
// (and element), "STEP[/ITEM]"; for a task of a subworkflow frame, the
// key of the WORKFLOW node's task and "-STEP[/ITEM]" of the frame's step
// ("3-2", "3/1-2-1" nested), so the frame's attempts share their keys.
func (d *durable) key(t *Task) string {
	if t.frameOf().owner == nil {
		if t.Item > 0 {
			return d.prefix + strconv.Itoa(t.Step) + "/" + strconv.Itoa(t.Item)
		}
		return d.prefix + strconv.Itoa(t.Step)
	}
	return d.prefix + taskKey(t)
}

func taskKey(t *Task) string {
	k := strconv.Itoa(t.Step)
	if t.Item > 0 {
		k += "/" + strconv.Itoa(t.Item)
	}
	if o := t.frameOf().owner; o != nil {
		return taskKey(o) + "-" + k
	}
	return k
}

// commit records a completed task. It runs under the executor's lock, so
// records are in the order the machine saw the results. A failure stops
// the run.
func (d *durable) commit(ctx context.Context, m *Machine, node string, step, item, id int, err error) {
	sd := &d.sd
	*sd = stepData{Task: id, Node: node, Item: item}
	if _, ok := isInterrupt(err); err != nil && !ok {
		sd.Error = err.Error()
	}
	d.commitStep(ctx, m, sd, step)
}

func (d *durable) commitStep(ctx context.Context, m *Machine, sd *stepData, step int) {
	if d.err == nil && d.w != nil {
		if err := d.w.failed(); err != nil {
			d.err = d.runError(err)
			m.Fail(d.err)
		}
	}
	if d.err != nil {
		return
	}
	// The delta and control state are encoded at once: they may share the
	// machine's memory and reuse the previous step's buffers.
	sd.Control.Tasks, sd.Control.Tokens = d.ctl.Tasks, d.ctl.Tokens
	sd.Delta = m.deltaInto(d.delta[:0], &sd.Control, false)
	d.delta, d.ctl.Tasks, d.ctl.Tokens = sd.Delta, sd.Control.Tasks, sd.Control.Tokens
	if err := d.append(ctx, store.Step, step, sd, sd.Node); err != nil {
		m.Fail(err)
		return
	}
	ts := d.ts
	if ts.recsSince >= minSince && ts.bytesSince >= ts.snapBytes {
		if err := d.snapshot(ctx, m, nil); err != nil {
			m.Fail(err)
		}
	}
}

// snapshot appends the machine's whole state.
func (d *durable) snapshot(ctx context.Context, m *Machine, from *ForkOrigin) error {
	st := m.Snapshot()
	m.rebase() // the deltas after it start from it
	return d.append(ctx, store.Snapshot, m.step, &snapshotData{runInfo: d.info, From: from, State: st, names: d.th.info(m.plan).names}, "(snapshot)")
}

// append writes one record as the thread's next, retrying transient store
// errors. An append whose outcome was lost (the connection dropped after
// the commit) is recognised on the retry by reading the record back.
func (d *durable) append(ctx context.Context, kind store.Kind, step int, v any, node string) error {
	if d.err != nil {
		return d.err
	}
	var data []byte
	var err error
	if d.buf == nil {
		d.buf = make([]byte, 0, 4096)
	}
	switch x := v.(type) {
	case *stepData:
		d.buf, err = appendStep(d.buf[:0], x)
		data = d.buf
	case *snapshotData:
		d.buf, err = appendSnapshot(d.buf[:0], x)
		data = d.buf
	default:
		data, err = json.Marshal(v)
	}
	if err != nil {
		d.err = &CheckpointError{Thread: d.ts.Thread, Run: d.info.Number, Seq: d.ts.Seq + 1, Step: step, Node: node, Err: err}
		return d.err
	}
	rec := &store.Record{ThreadID: d.ts.Thread, RunID: d.info.ID, Seq: d.ts.Seq + 1, Step: step, Kind: kind, Data: data, Fence: d.fence}
	if d.w != nil {
		// The writer keeps the record until it is written: it gets
		// its own copy of the reused buffer.
		rec.Data = append([]byte(nil), data...)
		if err := d.w.add(pendingRecord{rec: rec, step: step, node: node}); err != nil {
			d.err = d.runError(err)
			return d.err
		}
		if d.collect(len(rec.Data)) {
			d.written = append(d.written, rec)
		}
	} else if err := d.th.appendRetry(ctx, rec); err != nil {
		d.err = &CheckpointError{Thread: d.ts.Thread, Run: d.info.Number, Seq: rec.Seq, Step: step, Node: node, Err: err}
		return d.err
	} else if d.collect(len(data)) {
		// Written (its Time set): a copy apart from the reused buffer.
		kept := *rec
		kept.Data = append([]byte(nil), data...)
		d.written = append(d.written, &kept)
	}
	ts := d.ts
	ts.Seq = rec.Seq
	if d.onCheckpoint != nil && (kind == store.Step || kind == store.Snapshot) {
		ref := CheckpointRef{Seq: rec.Seq, Run: d.info.Number, Step: step, Start: d.starting}
		if sd, ok := v.(*stepData); ok {
			ref.Node = sd.Node
		}
		d.onCheckpoint(ref)
	}
	d.starting = false
	if kind == store.Snapshot {
		ts.snapBytes, ts.bytesSince, ts.recsSince = len(data), 0, 0
		d.lastStatus = v.(*snapshotData).State.Control.Status
	} else if sd, ok := v.(*stepData); ok {
		ts.bytesSince += len(data)
		ts.recsSince++
		d.lastStatus = sd.Control.Status
	}
	return nil
}

// collect reports whether the drive keeps its next record, of n bytes,
// for the cache (see durable.written).
func (d *durable) collect(n int) bool {
	if d.th.Cache == nil || d.unkept {
		return false
	}
	d.writtenBytes += n
	if !d.th.Cache.keeps(d.writtenBytes) {
		d.written, d.unkept = nil, true
		return false
	}
	return true
}

// runOf returns the row of the run ts was last folded into (only its
// Created when the state knows it: see ThreadState.created).
func (th *Threads) runOf(ctx context.Context, ts *ThreadState) (*store.Run, error) {
	if ts.createdOf != "" && ts.createdOf == ts.Run && !ts.created.IsZero() {
		return &store.Run{ID: ts.Run, ThreadID: ts.Thread, Created: ts.created}, nil
	}
	return th.Store.Run(ctx, ts.Run)
}

func (th *Threads) appendRetry(ctx context.Context, recs ...*store.Record) error {
	return th.writeRetry(ctx, recs, func() error { return th.Store.Append(ctx, recs...) })
}

// writeRetry runs write, which appends recs (and perhaps more, in the same
// transaction), retrying transient store errors as appendRetry says.
func (th *Threads) writeRetry(ctx context.Context, recs []*store.Record, write func() error) error {
	retryFor := th.RetryFor
	if retryFor == 0 {
		retryFor = 30 * time.Second
	}
	deadline := time.Now().Add(retryFor)
	delay := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := write()
		if err == nil {
			return nil
		}
		var ce *store.ConflictError
		if errors.As(err, &ce) && len(recs) > 0 {
			rec := recs[0]
			if attempt > 1 && ce.Got >= rec.Seq {
				// An earlier attempt may have committed before its
				// reply was lost (the records of one Append commit
				// together: the first tells).
				if recs, rerr := th.Store.Records(ctx, rec.ThreadID, rec.Seq); rerr == nil && len(recs) > 0 && recs[0].Seq == rec.Seq && bytes.Equal(recs[0].Data, rec.Data) {
					return nil
				}
			}
			return err
		}
		if !transient(err) || ctx.Err() != nil || retryFor < 0 || time.Now().After(deadline) {
			return err
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return err
		}
		delay = min(delay*2, time.Second)
	}
}

// transient reports whether a store error may go away on a retry: any
// error but those that say the request itself is wrong.
func transient(err error) bool {
	var corrupt *store.CorruptError
	switch {
	case errors.Is(err, store.ErrInvalid), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrExists),
		errors.Is(err, store.ErrFull), errors.Is(err, store.ErrReadOnly),
		errors.Is(err, store.ErrLeaseHeld), errors.Is(err, store.ErrLeaseLost), errors.Is(err, store.ErrClosed),
		errors.As(err, &corrupt), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return true
}

// finish records how a drive ended: a failure no step recorded (max time),
// the questions of a waiting run, and the run's row.
func (d *durable) finish(ctx context.Context, res *Result, err error) (*Result, error) {
	m := res.m
	res.Thread, res.Run = d.ts.Thread, d.info.Number
	rollback := ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrRunRolledBack)
	if d.bp != nil && d.bp.paused && m.Status() == Running && ctx.Err() == nil {
		// Stopped at a breakpoint: the record of the stop says where.
		if err := d.append(ctx, store.Event, m.step, &pauseData{Pause: d.bp.names}, "(breakpoint)"); err == nil {
			res.Paused = slices.Clone(d.bp.names)
			d.ts.Paused = res.Paused
		}
	}
	if ctx.Err() != nil {
		if !errors.Is(context.Cause(ctx), ErrRunCancelled) {
			// Stopped by the caller: the run stays as its last
			// record left it, to be resumed.
			d.settle()
			return res, err
		}
		// Cancelled for good: recorded as such, with a context that
		// lets the records through.
		ctx = context.WithoutCancel(ctx)
	}
	if s := m.Status(); d.err == nil && (s == Failed || s == Cancelled) && d.lastStatus != s {
		d.commitStep(ctx, m, &stepData{Error: errText(m.Err())}, m.step)
	}
	run := &store.Run{ID: d.info.ID, ThreadID: d.ts.Thread, Number: d.info.Number, Status: storeStatus(m.Status()), Created: d.created, Updated: time.Now(), Fence: d.fence}
	if m.Err() != nil {
		run.Error = m.Err().Error()
	}
	ender, _ := d.th.Store.(store.RunEnder)
	if rollback {
		ender = nil // a rollback still needs the lease after the row
	}
	var recs []*store.Record // the records the run's end writes
	if d.w != nil && d.err == nil {
		if ender != nil && !d.w.creating() {
			var werr error
			if recs, werr = d.w.take(); werr != nil {
				d.err = d.runError(werr)
			}
			d.w = nil // nothing more to write or settle
		} else if d.w.bw != nil && m.Status() != Waiting && !d.resumed && !rollback {
			// A run that ends (no questions to record) hands its row to
			// the writer: it goes in the same commit as the last
			// records (and the thread, when the first create it).
			d.w.setRun(run)
			d.settle()
			if d.err != nil {
				res.Status, res.Err = Failed, d.err
				return res, d.err
			}
			return res, err
		}
	}
	d.settle()
	if d.err != nil {
		res.Status, res.Err = Failed, d.err
		return res, d.err
	}
	if ender != nil {
		// The last records, the questions, the row, the caller's job
		// change and the lease's release in one transaction.
		e := &store.RunEnd{Thread: d.ts.Thread, Records: recs, Run: run}
		if m.Status() == Waiting || d.resumed {
			var perr error
			if e.Answered, e.Pending, perr = d.pendingDiff(ctx, m); perr != nil {
				return res, perr
			}
		}
		if d.lease != nil && d.lease.held {
			e.Release = &d.lease.lease
		}
		if d.onEnd != nil {
			rerr := err
			if rerr == nil {
				rerr = m.Err()
			}
			e.Job = d.onEnd(m.Status(), rerr)
		}
		write := func() error {
			if e.Job != nil {
				e.Job.Done = false
			}
			return ender.EndRun(ctx, e)
		}
		var perr error
		if len(recs) > 0 {
			perr = d.th.writeRetry(ctx, recs, write)
		} else {
			perr = write()
		}
		if perr != nil {
			if len(recs) > 0 {
				ce := &CheckpointError{Thread: d.ts.Thread, Run: d.info.Number, Seq: recs[0].Seq, Node: "(end)", Err: perr}
				res.Status, res.Err = Failed, ce
				return res, ce
			}
			return res, fmt.Errorf("thread %s, run %d: recording its end: %w", d.ts.Thread, d.info.Number, perr)
		}
		if e.Release != nil {
			d.lease.released = true
		}
		if d.th.Cache != nil && len(d.written) > 0 && !d.unkept {
			// The next read of the thread folds what the drive wrote,
			// when the log's head is still its last record, and knows
			// the run's row as written here.
			d.th.Cache.extend(d.ts.Thread, d.written[0].Seq-1, d.written, run.ID, run.Created)
		}
		return res, err
	}
	if m.Status() == Waiting || d.resumed {
		if perr := d.pending(ctx, m); perr != nil {
			return res, perr
		}
	}
	if perr := d.th.Store.PutRun(ctx, run); perr != nil {
		return res, fmt.Errorf("thread %s, run %d: recording its status: %w", d.ts.Thread, d.info.Number, perr)
	}
	if rollback {
		if _, rerr := d.th.restore(ctx, d.ts.Thread, d.origin, m.plan, d.fence); rerr != nil {
			return res, fmt.Errorf("thread %s, run %d: rolling it back to record %d: %w", d.ts.Thread, d.info.Number, d.origin, rerr)
		}
	}
	return res, err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// pending makes the thread's pending questions those the machine waits on.
func (d *durable) pending(ctx context.Context, m *Machine) error {
	answered, put, err := d.pendingDiff(ctx, m)
	if err != nil {
		return err
	}
	for _, id := range answered {
		if err := d.th.Store.DeletePending(ctx, d.ts.Thread, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	for _, p := range put {
		if err := d.th.Store.PutPending(ctx, p); err != nil && !errors.Is(err, store.ErrExists) {
			return err
		}
	}
	return nil
}

// pendingDiff returns what makes the thread's pending questions those
// the machine waits on: the IDs of those to remove, and the new ones.
func (d *durable) pendingDiff(ctx context.Context, m *Machine) (answered []string, put []*store.Pending, err error) {
	var have []*store.Pending
	if d.resumed || d.origin > 0 {
		// (A thread whose log had no record before this drive has no
		// question: a drive writes its questions with or after its
		// records, and a deleted thread's go with it.)
		if have, err = d.th.Store.Pending(ctx, d.ts.Thread); err != nil {
			return nil, nil, err
		}
	}
	waiting := map[string]*Task{}
	for _, t := range m.Waiting() {
		waiting[t.QuestionID()] = t
	}
	for _, p := range have {
		if _, ok := waiting[p.ID]; ok {
			delete(waiting, p.ID)
			continue
		}
		answered = append(answered, p.ID)
	}
	for id, t := range waiting {
		q, err := json.Marshal(question(t))
		if err != nil {
			return nil, nil, err
		}
		put = append(put, &store.Pending{ID: id, ThreadID: d.ts.Thread, RunID: d.info.ID, Node: t.Name, Question: q, Created: time.Now(), Fence: d.fence})
	}
	return answered, put, nil
}

// question is what a waiting task asks.
func question(t *Task) flow.Value {
	q := t.Input("question")
	if q.IsNull() {
		q = t.Node.Node.Config["question"]
	}
	return q
}

// storeStatus is the store's name of a run status; the store refuses a
// status it does not know (store.Status.Valid).
func storeStatus(s Status) store.Status { return store.Status(s.String()) }
