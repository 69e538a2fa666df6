package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// ErrRunRolledBack, as the cause of a run's context
// (context.WithCancelCause), cancels the run for good as ErrRunCancelled
// does (it wraps it), and then restores its thread to the state it had
// before the drive began: before the run's start, or, for a run resumed
// with answers, before the answers (the run waits for them again). The
// run's records stay in the log; a snapshot after them holds the state
// restored (see Threads.Restore). LangGraph's multitask_strategy
// "rollback".
var ErrRunRolledBack = fmt.Errorf("engine: run rolled back: %w", ErrRunCancelled)

// RestoreOptions are the optional settings of Threads.Restore.
type RestoreOptions struct {
	// Plan is the plan of the state restored. It is needed when that
	// state waits for people, to ask its questions again; it must be
	// the plan the state follows (a *ThreadError of KindMismatch
	// otherwise).
	Plan *flow.Plan
}

// Restore makes a thread's state the one right after its record seq
// again, by appending a snapshot record of that state (the thread's next
// Seq); seq 0 restores the thread as before its first record, with no
// state. The records after seq stay in the log, and Checkpoints no longer
// lists them: the thread's history goes from the restored state to the
// records up to seq. Run numbers go on from the highest the thread used.
// The thread's pending questions become those of the restored state
// (asked again when it waits; a restored state that does not wait has
// none), and when the restored state is of the thread's last run, that
// run's row takes its status again. Restoring the state the thread has
// writes nothing.
//
// It is written under the thread's lease, as Update is: while another
// process drives the thread it is a *ThreadError of KindConflict. A seq
// the log does not hold (pruned, or beyond its last record) is of
// KindNotFound; a restored state that waits, without its plan in opts,
// is of KindInvalidInput.
func (th *Threads) Restore(ctx context.Context, threadID string, seq int64, opts *RestoreOptions) (*ThreadState, error) {
	var plan *flow.Plan
	if opts != nil {
		plan = opts.Plan
	}
	var ts *ThreadState
	_, err := th.leased(ctx, threadID, nil, func(hl *heldLease) (*Result, error) {
		var err error
		ts, err = th.restore(ctx, threadID, seq, plan, hl.fence())
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return ts, nil
}

func (th *Threads) restore(ctx context.Context, threadID string, seq int64, plan *flow.Plan, fence int64) (*ThreadState, error) {
	if _, err := th.Store.Thread(ctx, threadID); err != nil {
		return nil, missingThread(threadID, err)
	}
	recs, err := th.Store.Records(ctx, threadID, 1)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, &ThreadError{Thread: threadID, Kind: KindNotFound, Err: store.ErrNotFound, Detail: "has no run yet: there is no state to restore"}
	}
	head, err := foldAt(threadID, recs, recs[len(recs)-1].Seq, "")
	if err != nil && !(errors.Is(err, store.ErrNotFound) && isCleared(recs[len(recs)-1])) {
		return nil, err
	}
	if head == nil {
		// The log ends with a restore to no state.
		head = &ThreadState{Thread: threadID}
		if _, err := head.apply(recs[len(recs)-1]); err != nil {
			return nil, err
		}
	}
	if seq == head.Seq {
		return head, nil
	}
	var target *ThreadState
	if seq != 0 {
		if target, err = foldAt(threadID, recs, seq, " to restore"); err != nil {
			return nil, err
		}
	} else if recs[0].Seq != 1 {
		return nil, noRecord(threadID, recs, seq, " to restore")
	}
	sd := &snapshotData{runInfo: runInfo{ID: head.Run, Number: head.RunNumber, Plan: head.Plan}, Cells: head.Cells, Nodes: head.Nodes, Restored: true, To: seq}
	step := 0
	var waiting []*Task
	if target != nil {
		sd.ID, sd.Plan, sd.Cells, sd.Nodes, sd.State = target.Run, target.Plan, target.Cells, target.Nodes, target.State
		sd.Number = max(head.RunNumber, target.RunNumber)
		step = target.State.Control.Step
		if target.Status() == Waiting {
			if plan == nil {
				return nil, &ThreadError{Thread: threadID, Run: target.RunNumber, Status: Waiting, Kind: KindInvalidInput,
					Detail: fmt.Sprintf("restore to record %d: that state waits for people, and asking its questions again needs its plan", seq)}
			}
			if fp := th.fingerprint(plan); fp != target.Plan {
				return nil, &ThreadError{Thread: threadID, Run: target.RunNumber, Status: Waiting, Kind: KindMismatch,
					Detail: fmt.Sprintf("restore to record %d: that state follows plan %s, not workflow %s's plan %s", seq, target.Plan, plan.Workflow.Name, fp)}
			}
			m, err := RestoreMachine(plan, target.State.clone(), false)
			if err != nil {
				return nil, err
			}
			waiting = m.Waiting()
		}
	}
	data, err := json.Marshal(sd)
	if err != nil {
		return nil, err
	}
	rec := &store.Record{ThreadID: threadID, RunID: sd.ID, Seq: head.Seq + 1, Step: step, Kind: store.Snapshot, Data: data, Fence: fence}
	var paused []string
	if target != nil {
		paused = target.Paused // a stop at a breakpoint restored stays one
	}
	if recs, err = keepPaused(rec, paused); err != nil {
		return nil, err
	}
	if err := th.appendRetry(ctx, recs...); err != nil {
		var ce *store.ConflictError
		if errors.As(err, &ce) || errors.Is(err, store.ErrLeaseHeld) || errors.Is(err, store.ErrLeaseLost) {
			return nil, &ThreadError{Thread: threadID, Run: head.RunNumber, Status: head.Status(), Kind: KindConflict, Err: err,
				Detail: fmt.Sprintf("restore to record %d, as record %d: another process drives the thread or wrote to it first: %v; nothing was restored", seq, rec.Seq, err)}
		}
		return nil, fmt.Errorf("thread %s: restore to record %d, as record %d: %w", threadID, seq, rec.Seq, err)
	}
	if err := th.askAgain(ctx, threadID, sd.ID, waiting, fence); err != nil {
		return nil, fmt.Errorf("thread %s: restore to record %d: its questions: %w", threadID, seq, err)
	}
	if target != nil && target.Run == head.Run && target.Run != "" {
		// The run restored is the thread's last: its row says how the
		// restored state left it.
		r, err := th.Store.Run(ctx, target.Run)
		switch {
		case errors.Is(err, store.ErrNotFound):
			r = &store.Run{ID: target.Run, ThreadID: threadID, Number: target.RunNumber, Created: time.Now()}
		case err != nil:
			return nil, err
		}
		r.Status, r.Error, r.Updated, r.Fence = storeStatus(target.Status()), "", time.Now(), fence
		if err := th.Store.PutRun(ctx, r); err != nil {
			return nil, fmt.Errorf("thread %s: restore to record %d: recording run %d's status: %w", threadID, seq, target.RunNumber, err)
		}
	}
	nts := &ThreadState{Thread: threadID, Forked: head.Forked}
	for _, r := range recs {
		if _, err := nts.apply(r); err != nil {
			return nil, err
		}
	}
	return nts, nil
}

// isCleared reports whether r is a snapshot that restored a thread to no
// state.
func isCleared(r *store.Record) bool {
	if r.Kind != store.Snapshot {
		return false
	}
	var sd struct {
		Restored bool            `json:"restored"`
		To       int64           `json:"to"`
		State    json.RawMessage `json:"state"`
	}
	return json.Unmarshal(r.Data, &sd) == nil && sd.Restored && sd.To == 0 && (len(sd.State) == 0 || string(sd.State) == "null")
}

// askAgain makes the thread's pending questions those of the waiting
// tasks (of run runID): the others are removed.
func (th *Threads) askAgain(ctx context.Context, threadID, runID string, waiting []*Task, fence int64) error {
	have, err := th.Store.Pending(ctx, threadID)
	if err != nil {
		return err
	}
	want := map[string]*Task{}
	for _, t := range waiting {
		want[t.QuestionID()] = t
	}
	for _, p := range have {
		if t, ok := want[p.ID]; ok && p.RunID == runID && p.Node == t.Name {
			delete(want, p.ID)
			continue
		}
		if err := th.Store.DeletePending(ctx, threadID, p.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	for id, t := range want {
		q, err := json.Marshal(question(t))
		if err != nil {
			return err
		}
		p := &store.Pending{ID: id, ThreadID: threadID, RunID: runID, Node: t.Name, Question: q, Created: time.Now(), Fence: fence}
		if err := th.Store.PutPending(ctx, p); err != nil && !errors.Is(err, store.ErrExists) {
			return err
		}
	}
	return nil
}

// driveOrigin is, for a run whose process stopped mid-drive, the thread's
// last record before that drive began: before the record that started
// the run, or before the answers it resumed with; after an update or a
// restore, which come between drives, or the stop at a breakpoint that
// the drive continued.
func (th *Threads) driveOrigin(ctx context.Context, threadID string) (int64, error) {
	recs, err := th.Store.Records(ctx, threadID, 1)
	if err != nil {
		return 0, err
	}
	inAnswers := false
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		switch r.Kind {
		case store.Snapshot:
			var sd struct {
				Run      string `json:"run"`
				Update   bool   `json:"update"`
				Restored bool   `json:"restored"`
			}
			if err := json.Unmarshal(r.Data, &sd); err != nil {
				return 0, &store.CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "data", Detail: err.Error()}
			}
			switch {
			case inAnswers:
				return r.Seq, nil
			case sd.Update || sd.Restored:
				return r.Seq, nil
			case i == 0 || recs[i-1].RunID != r.RunID:
				return r.Seq - 1, nil // the run's first record
			}
		case store.Event:
			if isPause(r) != nil {
				return r.Seq, nil
			}
		case store.Step:
			var sd struct {
				Start  *runInfo `json:"start"`
				Answer bool     `json:"answer"`
			}
			if err := json.Unmarshal(r.Data, &sd); err != nil {
				return 0, &store.CorruptError{ThreadID: threadID, Seq: r.Seq, Step: r.Step, Field: "data", Detail: err.Error()}
			}
			switch {
			case sd.Answer:
				inAnswers = true
			case inAnswers:
				return r.Seq, nil
			case sd.Start != nil:
				return r.Seq - 1, nil
			}
		}
	}
	if len(recs) > 0 {
		return recs[0].Seq - 1, nil
	}
	return 0, nil
}
