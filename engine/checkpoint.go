package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// A thread's checkpoints are the step and snapshot records of its log:
// the state right after each is what LoadAt gives and Fork starts from.

// LoadAt reads a thread's state right after its record seq (a Seq of
// History or Checkpoints), as Load reads it after its last record. A
// thread that does not exist is a *ThreadError of KindNotFound over
// store.ErrNotFound; so is a seq its log does not hold (pruned, or beyond
// its last record), naming the records it holds.
func (th *Threads) LoadAt(ctx context.Context, threadID string, seq int64) (*ThreadState, error) {
	if _, err := th.Store.Thread(ctx, threadID); err != nil {
		return nil, missingThread(threadID, err)
	}
	recs, err := th.Store.Records(ctx, threadID, 1)
	if err != nil {
		return nil, err
	}
	return foldAt(threadID, recs, seq, "")
}

// foldAt folds the log recs (Records from 1) up to record seq, starting
// from the last snapshot at or before it, as Load does from the last
// snapshot. what says what the record is for, in the error of a seq the
// log does not hold ("" for a plain read).
func foldAt(threadID string, recs []*store.Record, seq int64, what string) (*ThreadState, error) {
	i, ok := slices.BinarySearchFunc(recs, seq, func(r *store.Record, seq int64) int { return cmpSeq(r.Seq, seq) })
	if !ok {
		return nil, noRecord(threadID, recs, seq, what)
	}
	ts := &ThreadState{Thread: threadID}
	for _, r := range recs[lastSnapshot(recs, i) : i+1] {
		if _, err := ts.apply(r); err != nil {
			return nil, err
		}
	}
	if ts.State == nil {
		return nil, noRecord(threadID, recs, seq, what)
	}
	return ts, nil
}

func cmpSeq(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// lastSnapshot returns the index of the last snapshot record of recs at or
// before index i; 0 when there is none (folding from there fails as the
// log's damage deserves).
func lastSnapshot(recs []*store.Record, i int) int {
	for ; i > 0; i-- {
		if recs[i].Kind == store.Snapshot {
			return i
		}
	}
	return 0
}

// noRecord is the *ThreadError of a record a thread's log does not hold.
func noRecord(threadID string, recs []*store.Record, seq int64, what string) error {
	held := "no record"
	if len(recs) > 0 {
		held = fmt.Sprintf("records %d..%d", recs[0].Seq, recs[len(recs)-1].Seq)
	}
	return &ThreadError{Thread: threadID, Kind: KindNotFound, Err: store.ErrNotFound,
		Detail: fmt.Sprintf("has no record %d%s (its log holds %s)", seq, what, held)}
}

// CheckpointOptions select the checkpoints Threads.Checkpoints returns.
type CheckpointOptions struct {
	// Before, when positive, keeps only the checkpoints whose Seq is
	// lower: the page after one that ended at Before. 0 means no bound.
	Before int64
	// Limit, when positive, keeps only that many: the newest. 0 means
	// all.
	Limit int
}

// Checkpoint is a thread's state right after one of its step or snapshot
// records: a point of its history that LoadAt reads again and Fork starts
// a new thread from.
type Checkpoint struct {
	Seq    int64  // the record's number in the thread
	Parent int64  // the Seq of the checkpoint before it; 0 for the first the log holds
	Run    int    // the run's number in the thread
	RunID  string // the run's id
	Step   int    // the run's step; 0 for the record that starts a run
	// Node is the node whose task the record completed, or the node an
	// update is attributed to (UpdateOptions.AsNode); "" for the start
	// of a run or a snapshot.
	Node string
	// Source says what wrote the record, with LangGraph's names:
	// "input" (a run starts), "loop" (a step of a run, or a snapshot
	// taken in its course), "update" (Threads.Update, or
	// Threads.Restore) or "fork" (the
	// first record of a thread Threads.Fork made). (A run's first
	// record that is a snapshot is told by its run id, which differs
	// from the record's before it: when Prune left it first in the
	// log, it shows as "loop".)
	Source string
	Time   time.Time
	// State is the thread's state right after the record, as LoadAt
	// gives it: the caller's own, which nothing else changes.
	State *ThreadState
}

// The values of Checkpoint.Source.
const (
	SourceInput  = "input"
	SourceLoop   = "loop"
	SourceUpdate = "update"
	SourceFork   = "fork"
)

// Checkpoints returns a thread's checkpoints, newest first, each with the
// whole state after it: its step and snapshot records (those History
// lists), as opts selects them. It reads the log once and folds it once,
// from the last snapshot before the oldest checkpoint returned; only the
// states returned are copied. A thread that does not exist is a
// *ThreadError of KindNotFound; a negative Before or Limit is of
// KindInvalidInput.
func (th *Threads) Checkpoints(ctx context.Context, threadID string, opts CheckpointOptions) ([]Checkpoint, error) {
	if opts.Before < 0 || opts.Limit < 0 {
		return nil, &ThreadError{Thread: threadID, Kind: KindInvalidInput, Err: store.ErrInvalid,
			Detail: fmt.Sprintf("checkpoints before %d, limit %d: neither may be negative", opts.Before, opts.Limit)}
	}
	if _, err := th.Store.Thread(ctx, threadID); err != nil {
		return nil, missingThread(threadID, err)
	}
	// With a Limit, the log is read from its end: from its last
	// snapshot (or, for a page that ends before it, from a little before
	// the page) on, then from twice as far back while that is not enough
	// (too few checkpoints, no snapshot to fold from before the oldest
	// one, its parent not in it). So the newest checkpoints of a long
	// thread cost what its tail costs, not its whole log.
	from := int64(1)
	if opts.Limit > 0 {
		switch snap, err := th.Store.LastSnapshot(ctx, threadID); {
		case err == nil:
			from = snap.Seq
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
		if opts.Before > 0 && opts.Before <= from {
			from = max(1, opts.Before-1-2*int64(opts.Limit))
		}
	}
	for {
		recs, err := th.Store.Records(ctx, threadID, from)
		if err != nil {
			return nil, err
		}
		// The log read is the whole log from its start (or from where
		// Prune cut it).
		whole := from <= 1 || len(recs) == 0 || recs[0].Seq > from
		out, ok, err := checkpointsOf(threadID, recs, whole, opts)
		if err != nil || ok {
			return out, err
		}
		from = max(1, from-2*(recs[len(recs)-1].Seq-from+1))
	}
}

// checkpointsOf is Checkpoints on the end of a thread's log recs, the
// records from some Seq on (whole: the whole log); ok is false when recs
// do not reach back far enough to tell the checkpoints opts selects.
func checkpointsOf(threadID string, recs []*store.Record, whole bool, opts CheckpointOptions) (out []Checkpoint, ok bool, err error) {
	// Which records are returned is known from their kinds and numbers,
	// before any is decoded: the indexes of the checkpoints, then the
	// newest Limit of them. (A record is undone by a restore snapshot
	// after it, so recs tell which of them are.)
	hidden, err := rolledBack(threadID, recs)
	if err != nil {
		return nil, false, err
	}
	var sel []int
	for i, r := range recs {
		if (r.Kind == store.Step || r.Kind == store.Snapshot) && (opts.Before == 0 || r.Seq < opts.Before) && !hidden(r.Seq) {
			sel = append(sel, i)
		}
	}
	if !whole && (opts.Limit == 0 || len(sel) < opts.Limit) {
		return nil, false, nil
	}
	if opts.Limit > 0 && len(sel) > opts.Limit {
		sel = sel[len(sel)-opts.Limit:]
	}
	out = make([]Checkpoint, len(sel))
	if len(sel) == 0 {
		return out, true, nil
	}
	ts := &ThreadState{Thread: threadID}
	start, last := lastSnapshot(recs, sel[0]), sel[len(sel)-1]
	if !whole && recs[start].Kind != store.Snapshot {
		return nil, false, nil // nothing to fold from
	}
	parent := int64(0) // the Seq of the last checkpoint before the record
	for j := start - 1; j >= 0 && parent == 0; j-- {
		if (recs[j].Kind == store.Step || recs[j].Kind == store.Snapshot) && !hidden(recs[j].Seq) {
			parent = recs[j].Seq
		}
	}
	if !whole && parent == 0 {
		return nil, false, nil // the parent is further back
	}
	k := len(out) - 1 // out is filled from its end: newest first
	for i := start; i <= last; i++ {
		r := recs[i]
		prevRun := ts.Run
		a, err := ts.apply(r)
		if err != nil {
			return nil, false, err
		}
		if a.step == nil && a.snap == nil || hidden(r.Seq) {
			continue // not a checkpoint, or one rolled back
		}
		if k >= 0 && i == sel[len(out)-1-k] {
			c := Checkpoint{Seq: r.Seq, Parent: parent, Run: ts.RunNumber, RunID: ts.Run, Step: r.Step, Time: r.Time, State: ts.clone()}
			switch {
			case a.step != nil && a.step.Start != nil:
				c.Source = SourceInput
			case a.step != nil:
				c.Node, c.Source = a.step.Node, SourceLoop
			case a.snap.Update, a.snap.Restored:
				c.Node, c.Source = a.snap.Node, SourceUpdate
			case a.snap.From != nil:
				c.Source = SourceFork
			case r.Seq == 1 || prevRun != "" && prevRun != ts.Run:
				c.Source = SourceInput // a run's first record, a snapshot
			default:
				c.Source = SourceLoop
			}
			out[k] = c
			k--
		}
		parent = r.Seq
	}
	return out, true, nil
}

// rolledBack reads the restore snapshots of a log (Threads.Restore) and
// returns whether a record is one they undid: after the record restored
// and before the snapshot restoring it, or a snapshot that restored no
// state at all.
func rolledBack(threadID string, recs []*store.Record) (func(seq int64) bool, error) {
	type undone struct {
		from, to int64 // the records from..to-1 are undone; to too when cleared
		cleared  bool
	}
	var us []undone
	for _, r := range recs {
		if r.Kind != store.Snapshot || !bytes.Contains(r.Data, []byte(`"restored":true`)) {
			continue
		}
		var sd struct {
			Restored bool            `json:"restored"`
			To       int64           `json:"to"`
			State    json.RawMessage `json:"state"`
		}
		if err := json.Unmarshal(r.Data, &sd); err != nil {
			return nil, &store.CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "data", Detail: err.Error()}
		}
		if sd.Restored {
			us = append(us, undone{from: sd.To + 1, to: r.Seq, cleared: sd.To == 0 && (len(sd.State) == 0 || string(sd.State) == "null")})
		}
	}
	return func(seq int64) bool {
		for _, u := range us {
			if seq >= u.from && seq < u.to || u.cleared && seq == u.to {
				return true
			}
		}
		return false
	}, nil
}

// clone returns a copy of the thread state that folding more records into
// ts does not change.
func (ts *ThreadState) clone() *ThreadState {
	c := *ts
	if ts.State != nil {
		c.State = ts.State.clone()
	}
	return &c
}

// clone returns a copy of the state that Fold does not change: apply
// changes a State's cells in place, and, through mergeMap and foldSub, the
// element lists of its maps and the cells of its frames. (Values are
// immutable and shared.)
func (st *State) clone() *State {
	return &State{Workflow: st.Workflow, Cells: slices.Clone(st.Cells), Control: st.Control.clone()}
}

func (c Control) clone() Control {
	c.Path = slices.Clip(slices.Clone(c.Path))
	c.Outputs = slices.Clone(c.Outputs)
	c.Notices = slices.Clip(slices.Clone(c.Notices))
	c.Frames = slices.Clone(c.Frames)
	c.Fanouts = slices.Clone(c.Fanouts)
	if c.Tasks != nil {
		tasks := make([]TaskState, len(c.Tasks))
		for i, t := range c.Tasks {
			t.Inputs = slices.Clone(t.Inputs)
			if t.Sub != nil {
				s := *t.Sub
				s.Cells = slices.Clone(s.Cells)
				s.Control = s.Control.clone()
				t.Sub = &s
			}
			tasks[i] = t
		}
		c.Tasks = tasks
	}
	if c.Tokens != nil {
		tokens := make([]TokenState, len(c.Tokens))
		for i, tk := range c.Tokens {
			if tk.Map != nil {
				mp := *tk.Map
				mp.Items = slices.Clone(mp.Items)
				mp.Inputs = slices.Clone(mp.Inputs)
				mp.Outs = slices.Clone(mp.Outs)
				mp.Elems = slices.Clone(mp.Elems)
				tk.Map = &mp
			}
			tokens[i] = tk
		}
		c.Tokens = tokens
	}
	return c
}

// UpdateOptions are the optional settings of Threads.Update.
type UpdateOptions struct {
	// Plan, when given, must be the plan the thread's state follows (a
	// *ThreadError of KindMismatch otherwise); it types the values set
	// (flow.Conform), and a value that does not conform is of
	// KindInvalidInput. Without it the values are kept as given.
	Plan *flow.Plan
	// AsNode is the node the update is attributed to: History and
	// Checkpoints show it as the record's Node (LangGraph's as_node). It
	// must be one of the thread's nodes, or "".
	AsNode string
}

// Update changes cells of a thread's state by appending a snapshot record
// to its log (the thread's next Seq) that holds the state with set
// applied: variables, slots and parameters by name, nodes' outputs by
// their cell name ("node.output", as ThreadState.Value reads them). A
// value replaces the cell's (no reducer applies); flow.Null clears it.
// The run's control state is kept: a waiting run still waits for the same
// answers, a run stopped at a breakpoint stays stopped there, and its Resume, like the thread's next Run after an ended one,
// starts from the new values; a task already ready keeps the inputs it
// was given. It returns the state after the update, as Load then gives
// it.
//
// The update is written under the thread's lease when Run would take one
// (LeaseTTL and a store.Leaser): while another process drives the thread
// it fails with a *ThreadError of KindConflict; so does an update that
// meets a record another process appended first. An update to a thread
// with no run yet is of KindNotFound; a name that is not a variable,
// slot, parameter or node output is of KindInvalidInput, with the names
// it may have meant.
func (th *Threads) Update(ctx context.Context, threadID string, set map[string]flow.Value, opts *UpdateOptions) (*ThreadState, error) {
	if opts == nil {
		opts = &UpdateOptions{}
	}
	var ts *ThreadState
	_, err := th.leased(ctx, threadID, nil, func(hl *heldLease) (*Result, error) {
		var err error
		ts, err = th.update(ctx, threadID, set, opts, hl.fence())
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return ts, nil
}

// settable reports whether Update may set a cell of the kind.
func settable(k flow.CellKind) bool {
	return k == flow.CellVar || k == flow.CellSlot || k == flow.CellParam || k == flow.CellOutput
}

func (th *Threads) update(ctx context.Context, threadID string, set map[string]flow.Value, opts *UpdateOptions, fence int64) (*ThreadState, error) {
	ts, err := th.Load(ctx, threadID)
	if err != nil {
		return nil, err
	}
	if ts.State == nil {
		return nil, &ThreadError{Thread: threadID, Kind: KindNotFound, Detail: "has no run yet: there is no state to update"}
	}
	invalid := func(detail string, err error) error {
		return &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: ts.Status(), Kind: KindInvalidInput, Detail: "update: " + detail, Err: err}
	}
	plan := opts.Plan
	if plan != nil {
		if fp := th.fingerprint(plan); fp != ts.Plan {
			return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: ts.Status(), Kind: KindMismatch,
				Detail: fmt.Sprintf("update: its state follows plan %s, not workflow %s's plan %s", ts.Plan, plan.Workflow.Name, fp)}
		}
	}
	if opts.AsNode != "" && !slices.Contains(ts.Nodes, opts.AsNode) {
		return nil, invalid(fmt.Sprintf("as node %q: the workflow has no such node%s", opts.AsNode, flow.Suggest(opts.AsNode, ts.Nodes)), nil)
	}
	// The names in order, so that the first bad one is always the one
	// reported.
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range set {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		v := set[name]
		i := slices.IndexFunc(ts.Cells, func(c CellInfo) bool { return c.Name == name })
		if i < 0 || !settable(ts.Cells[i].Kind) {
			var cands []string
			for _, c := range ts.Cells {
				if settable(c.Kind) {
					cands = append(cands, c.Name)
				}
			}
			return nil, invalid(fmt.Sprintf("%q is not a variable, slot, parameter or node output%s", name, flow.Suggest(name, cands)), nil)
		}
		if plan != nil {
			cv, err := flow.Conform(v, plan.Cells[i].Type)
			if err != nil {
				return nil, invalid(fmt.Sprintf("%s: %v", name, err), err)
			}
			v = cv
		}
		ts.State.setCell(i, v)
	}
	sd := &snapshotData{runInfo: runInfo{ID: ts.Run, Number: ts.RunNumber, Plan: ts.Plan}, Cells: ts.Cells, Nodes: ts.Nodes,
		Update: true, Node: opts.AsNode, State: ts.State}
	data, err := json.Marshal(sd)
	if err != nil {
		return nil, invalid(err.Error(), err)
	}
	rec := &store.Record{ThreadID: threadID, RunID: ts.Run, Seq: ts.Seq + 1, Step: ts.State.Control.Step, Kind: store.Snapshot, Data: data, Fence: fence}
	recs, err := keepPaused(rec, ts.Paused) // a run stopped at a breakpoint stays stopped there
	if err != nil {
		return nil, invalid(err.Error(), err)
	}
	if err := th.appendRetry(ctx, recs...); err != nil {
		var ce *store.ConflictError
		if errors.As(err, &ce) || errors.Is(err, store.ErrLeaseHeld) || errors.Is(err, store.ErrLeaseLost) {
			return nil, &ThreadError{Thread: threadID, Run: ts.RunNumber, Status: ts.Status(), Kind: KindConflict, Err: err,
				Detail: fmt.Sprintf("update, as record %d: another process drives the thread or wrote to it first: %v; the update was not recorded", rec.Seq, err)}
		}
		return nil, fmt.Errorf("thread %s: update, as record %d: %w", threadID, rec.Seq, err)
	}
	nts := &ThreadState{Thread: threadID, Forked: ts.Forked}
	for _, r := range recs {
		if _, err := nts.apply(r); err != nil {
			return nil, err
		}
	}
	return nts, nil
}
