package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// HistoryEntry is one record of a thread's log, as a person reads it.
type HistoryEntry struct {
	Seq     int64      // the record's number in the thread: what Fork takes
	Run     int        // the run's number in the thread
	Step    int        // the run's step; 0 for the record that starts a run
	Kind    store.Kind // store.Step or store.Snapshot
	Start   bool       // a run starts here
	Node    string     // the node whose task completed, or an update's AsNode ("" for a start or another snapshot)
	Item    int        // its map element, 0 if none
	Answer  bool       // the task was a person's answer
	Error   string     // the task's error, or the run's
	Changes []Change   // the cells the step wrote
	Next    []string   // the nodes whose tasks the step made ready
	Status  Status     // the run's status after the record
	Time    time.Time
	Bytes   int         // size of the record's data
	Forked  *ForkOrigin // for the snapshot a forked thread starts with
	Update  bool        // a snapshot Threads.Update wrote
	// Restored marks a snapshot Threads.Restore (or a rolled-back run)
	// wrote: the state after record To again.
	Restored bool
	To       int64
}

// Change is a cell written by a step.
type Change struct {
	Name   string
	Value  flow.Value
	Append bool // Value holds the elements appended to a List
}

// History returns a thread's log from record from on (1 for all), oldest
// first.
func (th *Threads) History(ctx context.Context, threadID string, from int64) ([]HistoryEntry, error) {
	if _, err := th.Store.Thread(ctx, threadID); err != nil {
		return nil, err
	}
	recs, err := th.Store.Records(ctx, threadID, 1)
	if err != nil {
		return nil, err
	}
	ts := &ThreadState{Thread: threadID}
	var out []HistoryEntry
	for _, r := range recs {
		a, err := ts.apply(r)
		if err != nil {
			return nil, err
		}
		if r.Seq < from || ts.State == nil {
			continue
		}
		e := HistoryEntry{Seq: r.Seq, Run: ts.RunNumber, Step: r.Step, Kind: r.Kind, Time: r.Time, Bytes: len(r.Data), Status: ts.State.Control.Status}
		switch r.Kind {
		case store.Snapshot:
			e.Forked, e.Update, e.Node, e.Restored, e.To = a.snap.From, a.snap.Update, a.snap.Node, a.snap.Restored, a.snap.To
		case store.Step:
			sd := a.step
			e.Start, e.Node, e.Item, e.Answer, e.Error = sd.Start != nil, sd.Node, sd.Item, sd.Answer, sd.Error
			for _, d := range sd.Delta {
				e.Changes = append(e.Changes, Change{Name: ts.Cells[d.Cell].Name, Value: d.Value, Append: d.Append})
			}
			// The nodes the step started: its part of the path.
			for _, n := range sd.Control.Path {
				if n >= 0 && n < len(ts.Nodes) {
					e.Next = append(e.Next, ts.Nodes[n])
				}
			}
		default:
			continue
		}
		if r.Kind == store.Snapshot {
			for _, t := range ts.State.Control.Tasks {
				e.Next = append(e.Next, ts.NodeOf(t))
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// ForkOptions are the optional settings of Threads.Fork.
type ForkOptions struct {
	// Set edits variables, slots or parameters of the forked state, by
	// name. The edits apply from the next node on: a task already ready
	// keeps the inputs it was given.
	Set map[string]flow.Value
	// Plan, when it is the plan the state follows, types the values of
	// Set (a value that does not conform is an error).
	Plan *flow.Plan
	// Meta labels the new thread (the source thread's labels otherwise).
	Meta map[string]string
}

// Fork makes a new thread whose state is the source thread's right after
// record at (see History): time travel. A run that was in the middle of its
// steps there continues with Resume; one that was waiting takes its answer
// with Resume; one that had ended is followed by a new Run. The source
// thread is not changed.
func (th *Threads) Fork(ctx context.Context, from string, at int64, to string, opts *ForkOptions) (*ThreadState, error) {
	if opts == nil {
		opts = &ForkOptions{}
	}
	src, err := th.Store.Thread(ctx, from)
	if err != nil {
		return nil, missingThread(from, err)
	}
	recs, err := th.Store.Records(ctx, from, 1)
	if err != nil {
		return nil, err
	}
	ts, err := foldAt(from, recs, at, " to fork from")
	if err != nil {
		return nil, err
	}
	for name, v := range opts.Set {
		i := slices.IndexFunc(ts.Cells, func(c CellInfo) bool { return c.Name == name })
		if i < 0 || ts.Cells[i].Kind != flow.CellVar && ts.Cells[i].Kind != flow.CellSlot && ts.Cells[i].Kind != flow.CellParam {
			var names []string
			for _, c := range ts.Cells {
				if c.Kind == flow.CellVar || c.Kind == flow.CellSlot || c.Kind == flow.CellParam {
					names = append(names, c.Name)
				}
			}
			return nil, &ThreadError{Thread: from, Kind: KindInvalidInput, Detail: fmt.Sprintf("fork: %q is not a variable, slot or parameter%s", name, flow.Suggest(name, names))}
		}
		if p := opts.Plan; p != nil && Fingerprint(p) == ts.Plan {
			cv, err := flow.Conform(v, p.Cells[i].Type)
			if err != nil {
				return nil, &ThreadError{Thread: from, Kind: KindInvalidInput, Detail: fmt.Sprintf("fork: %s: %v", name, err), Err: err}
			}
			v = cv
		}
		ts.State.setCell(i, v)
	}
	meta := opts.Meta
	if meta == nil {
		meta = maps.Clone(src.Meta)
	}
	if meta == nil {
		meta = map[string]string{}
	}
	meta["forked_from"] = fmt.Sprintf("%s@%d", from, at)
	if err := th.Store.CreateThread(ctx, &store.Thread{ID: to, Workflow: src.Workflow, Source: src.Source, Spec: src.Spec, Meta: meta}); err != nil {
		return nil, fmt.Errorf("fork of %s into %s: %w", from, to, err)
	}
	origin := &ForkOrigin{Thread: from, Seq: at}
	sd := &snapshotData{runInfo: runInfo{ID: newRunID(), Number: ts.RunNumber, Plan: ts.Plan}, Cells: ts.Cells, Nodes: ts.Nodes, From: origin, State: ts.State}
	data, err := json.Marshal(sd)
	if err != nil {
		return nil, err
	}
	rec := &store.Record{ThreadID: to, RunID: sd.ID, Seq: 1, Step: ts.State.Control.Step, Kind: store.Snapshot, Data: data}
	written, err := keepPaused(rec, ts.Paused) // a fork of a stop at a breakpoint is stopped there too
	if err != nil {
		return nil, err
	}
	if err := th.appendRetry(ctx, written...); err != nil {
		return nil, fmt.Errorf("fork of %s into %s: %w", from, to, err)
	}
	nts := &ThreadState{Thread: to}
	for _, r := range written {
		if _, err := nts.apply(r); err != nil {
			return nil, err
		}
	}
	// The new thread's run, as Runs lists it (a later Resume updates it):
	// the store's list of runs agrees with the state Load gives.
	now := time.Now()
	if err := th.Store.PutRun(ctx, &store.Run{ID: sd.ID, ThreadID: to, Number: nts.RunNumber, Status: storeStatus(nts.Status()), Created: now, Updated: now}); err != nil {
		return nil, fmt.Errorf("fork of %s into %s: %w", from, to, err)
	}
	if err := th.forkPending(ctx, nts, sd.ID, opts.Plan); err != nil {
		return nil, err
	}
	return nts, nil
}

// forkPending records the questions of a forked waiting run; with the
// run's plan, their text too.
func (th *Threads) forkPending(ctx context.Context, ts *ThreadState, runID string, plan *flow.Plan) error {
	var m *Machine
	if plan != nil && Fingerprint(plan) == ts.Plan {
		m, _ = RestoreMachine(plan, ts.State, false)
	}
	for _, t := range ts.Waiting() {
		q := flow.Null
		if m != nil {
			for _, mt := range m.Waiting() {
				if mt.ID == t.ID {
					q = question(mt)
				}
			}
		}
		qj, err := json.Marshal(q)
		if err != nil {
			return err
		}
		p := &store.Pending{ID: fmt.Sprint(t.ID), ThreadID: ts.Thread, RunID: runID, Node: ts.NodeOf(t), Question: qj, Created: time.Now()}
		if err := th.Store.PutPending(ctx, p); err != nil && !errors.Is(err, store.ErrExists) {
			return err
		}
	}
	return nil
}
