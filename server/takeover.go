package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// A run taken over by another process (its process died, or stopped)
// goes on there from the thread's last record, in a new attempt whose
// frames follow the earlier attempt's in every reader's stream. The
// frames a step makes are logged apart from its record, a moment after
// it: a process that dies in that moment leaves steps recorded whose
// updates no reader was sent. The process that takes over finds them
// from the marks of the log (startMark, stepMark) and sends their frames
// (updates and values, derived from the thread's checkpoints) before its
// own: a reader sees each root step's update once. (A step in flight at
// the death runs again, and its tokens, custom and task frames come
// again; checkpoints and debug frames of the missed steps are not
// derived.)

// startMarkJSON is a start mark's data.
type startMarkJSON struct {
	Seq int64 `json:"seq"`
	Run int   `json:"run"` // the thread's last run's number then (0: none)
}

// stepMarkJSON is a step mark's data.
type stepMarkJSON struct {
	Step int    `json:"step"`
	Node string `json:"node"`
}

// stepKey names a root step: its number and node (a map's elements
// share them).
type stepKey struct {
	step int
	node string
}

// markStart logs the start mark of a run's first attempt, from the
// thread's state before it (nil: none).
func markStart(st *runStream, ts *engine.ThreadState) {
	if st.log == nil {
		return
	}
	var m startMarkJSON
	if ts != nil {
		m.Seq, m.Run = ts.Seq, ts.RunNumber
	}
	b, _ := json.Marshal(m)
	st.log.mark(startMark, b)
}

// priorMarks reads job's log: its first start mark (ok false when the log
// has none: no earlier attempt's frame reached a reader) and the steps
// marked.
func (s *Server) priorMarks(ctx context.Context, job string) (start startMarkJSON, ok bool, marked map[stepKey]bool, err error) {
	marked = map[stepKey]bool{}
	var after int64
	for {
		evs, err := s.events.RunEvents(ctx, job, after, 1024)
		if err != nil {
			return start, false, nil, err
		}
		if len(evs) == 0 {
			return start, ok, marked, nil
		}
		for _, e := range evs {
			after = e.Seq
			switch e.Event {
			case startMark:
				var m startMarkJSON
				if err := json.Unmarshal(e.Data, &m); err != nil {
					return start, false, nil, fmt.Errorf("run %s: event %d: a start mark: %w", job, e.Seq, err)
				}
				if !ok {
					start, ok = m, true
				}
			case stepMark:
				var m stepMarkJSON
				if err := json.Unmarshal(e.Data, &m); err != nil {
					return start, false, nil, fmt.Errorf("run %s: event %d: a step mark: %w", job, e.Seq, err)
				}
				marked[stepKey{m.Step, m.Node}] = true
			}
		}
	}
}

// catchUp sends through rec, for a run taken over, the frames of the root
// steps recorded in the thread since the run's first attempt began that
// no earlier attempt logged. It reports whether an earlier attempt's
// frames reached the log (then readers have seen the run's state up to
// where it goes on, and the resumed run does not send it again).
func (s *Server) catchUp(ctx context.Context, job *store.Job, plan *flow.Plan, rec *recorder) (bool, error) {
	sm, ok, marked, err := s.priorMarks(ctx, job.ID)
	if err != nil || !ok {
		return false, err
	}
	start := sm.Seq
	cps, err := s.checkpointsSince(ctx, job.ThreadID, start)
	if err != nil {
		return true, err
	}
	nodes := map[string]bool{}
	for _, pn := range plan.Nodes {
		nodes[pn.Name] = true
	}
	// The last record of each root step (a map's last element's holds
	// the map's outputs).
	last := map[stepKey]int{}
	for i, cp := range cps {
		if prefix, _ := split(cp.Node); cp.Seq > start && cp.Node != "" && prefix == "" {
			last[stepKey{cp.Step, cp.Node}] = i
		}
	}
	// Steps whose frames were logged but whose records were not (the
	// frames of a step went out before its record was written: with
	// async durability, or a slow store) run again: their frames are
	// not sent twice.
	for k := range marked {
		if _, recorded := last[k]; !recorded && k.step > 0 {
			if rec.sent == nil {
				rec.sent = map[stepKey]bool{}
			}
			rec.sent[k] = true
		}
	}
	for i, cp := range cps {
		k := stepKey{cp.Step, cp.Node}
		if j, isLast := last[k]; !isLast || j != i || marked[k] || i == 0 {
			continue
		}
		after, err := ValuesOf(cp.State)
		if err != nil {
			return true, err
		}
		before, err := ValuesOf(cps[i-1].State)
		if err != nil {
			return true, err
		}
		if rec.modes["updates"] {
			up, err := objectValues(after.Get(cp.Node))
			if err != nil {
				return true, fmt.Errorf("the outputs of node %s at checkpoint %d: %w", cp.Node, cp.Seq, err)
			}
			for j, key := range after.keys {
				if !nodes[key] && !bytes.Equal(after.vals[j], before.Get(key)) {
					up.set(key, after.vals[j])
				}
			}
			rec.emit("updates", "", map[string]any{cp.Node: up})
		}
		if rec.modes["values"] {
			rec.emit("values", "", after)
		}
		rec.markStep(cp.Step, cp.Node)
	}
	return true, nil
}

// checkpointsSince returns the thread's checkpoints after seq, oldest
// first, and the one before them (the state they start from).
func (s *Server) checkpointsSince(ctx context.Context, thread string, seq int64) ([]engine.Checkpoint, error) {
	th := &engine.Threads{Store: s.opts.Store}
	var out []engine.Checkpoint
	opts := engine.CheckpointOptions{Limit: 32}
	for {
		page, err := th.Checkpoints(ctx, thread, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) == 0 || page[len(page)-1].Seq <= seq || len(page) < opts.Limit {
			break
		}
		opts.Before = page[len(page)-1].Seq
	}
	slices.SortFunc(out, func(a, b engine.Checkpoint) int { return int(a.Seq - b.Seq) })
	// Keep one at or before seq, the base.
	for len(out) > 1 && out[1].Seq <= seq {
		out = out[1:]
	}
	return out, nil
}

// objectValues decodes a JSON object into Values, keys in order; null or
// nothing is an empty one.
func objectValues(raw json.RawMessage) (*Values, error) {
	out := &Values{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out.set(key, v)
	}
	return out, nil
}

// endedBefore reports whether job's run ended in an earlier attempt whose
// process died before it recorded the job's end (a run's end is mostly
// recorded with it, in one transaction; a cancelled run's is not): the
// thread, now status and not running, has records after the job's first
// start mark, and a new run (a resume goes on with its run: records).
// Such a job ends as its run did, and is not run again.
func (s *Server) endedBefore(ctx context.Context, job *store.Job, ts *engine.ThreadState, status engine.Status, resume bool) (bool, error) {
	if status == engine.Running || ts == nil {
		return false, nil
	}
	sm, ok, _, err := s.priorMarks(ctx, job.ID)
	if err != nil || !ok || ts.Seq <= sm.Seq {
		return false, err
	}
	return ts.RunNumber > sm.Run || resume, nil
}

// endOf is the job status, reply and error text of a run that ended as
// the thread's state ts, status, says.
func (s *Server) endOf(ctx context.Context, job *store.Job, ts *engine.ThreadState, status engine.Status) (store.JobStatus, []byte, string) {
	switch status {
	case engine.Failed:
		msg := ts.State.Control.Err
		return store.JobError, errorReply("RunFailed", msg), msg
	case engine.Cancelled:
		msg := "the run was cancelled"
		return store.JobInterrupted, errorReply("Cancelled", msg), msg
	}
	return store.JobSuccess, s.endedReply(ctx, job), ""
}
