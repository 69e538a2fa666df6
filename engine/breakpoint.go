package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// Breakpoints stop a run of a thread before or after nodes, once:
// LangGraph's interrupt_before and interrupt_after. The run stops as a
// process that stops does, with every step so far recorded and the tasks
// it holds back in flight: its status stays Running, a record of the
// stop says where it stopped (ThreadState.Paused), and Threads.Resume
// without answers continues it, running the tasks held back first
// (a breakpoint before their nodes does not stop them again).
type Breakpoints struct {
	// Before names the nodes the run stops before: when a task of one
	// of them is ready, no task starts; "*" names every node.
	Before []string
	// After names the nodes the run stops after: once a task of one of
	// them completes, no new task starts; "*" names every node.
	After []string
}

// Check reports the first name of b that is neither "*" nor a node of
// plan, as a *ThreadError of KindInvalidInput naming the list and the
// index ("interrupt_before[1]"), with the names it may have meant.
func (b *Breakpoints) Check(threadID string, plan *flow.Plan) error {
	if b == nil {
		return nil
	}
	var names []string
	for _, n := range plan.Nodes {
		names = append(names, n.Name)
	}
	for _, l := range []struct {
		what  string
		nodes []string
	}{{"interrupt_before", b.Before}, {"interrupt_after", b.After}} {
		for i, n := range l.nodes {
			if n != "*" && !slices.Contains(names, n) {
				return &ThreadError{Thread: threadID, Kind: KindInvalidInput, Err: ErrInvalidInput,
					Detail: fmt.Sprintf("%s[%d]: %s has no node %q%s", l.what, i, plan.Workflow.Name, n, flow.Suggest(n, names))}
			}
		}
	}
	return nil
}

// breakpoints is a drive's Breakpoints, as the executor applies them.
type breakpoints struct {
	before, after []string
	// exempt lets the drive's first tasks pass the before points: they
	// were held back by the stop the drive continues.
	exempt bool
	paused bool    // a breakpoint stopped the drive: no task starts
	held   []*Task // the tasks held back, in order
	names  []string
}

func newBreakpoints(b *Breakpoints, exempt bool) *breakpoints {
	if b == nil || len(b.Before) == 0 && len(b.After) == 0 {
		return nil
	}
	return &breakpoints{before: b.Before, after: b.After, exempt: exempt}
}

func matches(list []string, node string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, node)
}

// hold reports whether tasks, just ready, are held back (and holds them):
// after a stop, or when one of the run's own tasks is of a node to stop
// before. top reports whether a task is of the run's own plan (not of a
// subworkflow).
func (bp *breakpoints) hold(tasks []*Task, top func(*Task) bool) bool {
	exempt := bp.exempt
	bp.exempt = false
	if !bp.paused && !exempt {
		for _, t := range tasks {
			if top(t) && matches(bp.before, t.Name) {
				bp.paused = true
				break
			}
		}
	}
	if !bp.paused {
		return false
	}
	for _, t := range tasks {
		bp.held = append(bp.held, t)
		if !slices.Contains(bp.names, t.Name) {
			bp.names = append(bp.names, t.Name)
		}
	}
	return true
}

// completed stops the drive after a task of a node to stop after.
func (bp *breakpoints) completed(node string, top bool) {
	if top && matches(bp.after, node) {
		bp.paused = true
	}
}

// pauseData is the data of the event record of a stop at a breakpoint.
type pauseData struct {
	Pause []string `json:"pause"` // the nodes of the tasks held back
}

// isPause decodes an event record: the nodes a stop held back, or nil.
func isPause(r *store.Record) []string {
	var pd pauseData
	if r.Kind != store.Event || json.Unmarshal(r.Data, &pd) != nil {
		return nil
	}
	return pd.Pause
}

// endPaused ends a run stopped at a breakpoint, as cancelled, for a new
// run to start in its thread: its row says so (its records stay as they
// are: the new run's start follows them).
func (th *Threads) endPaused(ctx context.Context, ts *ThreadState, fence int64) error {
	r, err := th.Store.Run(ctx, ts.Run)
	switch {
	case errors.Is(err, store.ErrNotFound):
		r = &store.Run{ID: ts.Run, ThreadID: ts.Thread, Number: ts.RunNumber, Created: time.Now()}
	case err != nil:
		return err
	}
	r.Status, r.Error, r.Updated, r.Fence = store.Cancelled, "a new run started while it was stopped at a breakpoint", time.Now(), fence
	if err := th.Store.PutRun(ctx, r); err != nil {
		return fmt.Errorf("thread %s, run %d: ending it, stopped at a breakpoint, for a new run: %w", ts.Thread, ts.RunNumber, err)
	}
	return nil
}

// keepPaused returns the records that write snapshot rec of a state
// stopped at a breakpoint at paused (nil: not stopped): rec, then a
// record of the stop, so that the state read back is still stopped there.
func keepPaused(rec *store.Record, paused []string) ([]*store.Record, error) {
	if len(paused) == 0 {
		return []*store.Record{rec}, nil
	}
	pd, err := json.Marshal(&pauseData{Pause: paused})
	if err != nil {
		return nil, err
	}
	return []*store.Record{rec, {ThreadID: rec.ThreadID, RunID: rec.RunID, Seq: rec.Seq + 1, Step: rec.Step, Kind: store.Event, Data: pd, Fence: rec.Fence}}, nil
}
