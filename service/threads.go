package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// HistoryKind says what a record of a thread's log is.
type HistoryKind string

// The kinds of history records.
const (
	// HistorySnapshot is a snapshot of the whole state: the one a
	// thread starts with, or one its log was compacted to.
	HistorySnapshot HistoryKind = "snapshot"
	// HistoryStart is the record that starts a run.
	HistoryStart HistoryKind = "start"
	// HistoryStep is a step in which a node's task completed.
	HistoryStep HistoryKind = "step"
	// HistoryAnswer is a step in which a person's answer completed a
	// human node's task.
	HistoryAnswer HistoryKind = "answer"
	// HistoryEnd is a step that completed no task: the run ended (or
	// failed) there.
	HistoryEnd HistoryKind = "end"
)

// Change is a cell a step wrote.
type Change struct {
	Name  string     `json:"name"`
	Value flow.Value `json:"value"`
	// Append: Value holds the elements appended to a List.
	Append bool `json:"append,omitempty"`
}

// HistoryEntry is one record of a thread's log, as `weft threads history
// --json` prints it and a server sends it. Its JSON form:
//
//	{"seq": 3, "run": 1, "step": 2, "kind": "step", "node": "ask",
//	 "item": 2, "answer": true, "error": "...",
//	 "changes": [{"name": "x", "value": 1, "append": true}],
//	 "next": ["b"], "status": "waiting", "time": "2026-11-26T06:00:00Z",
//	 "bytes": 512, "forked_from": {"thread": "t", "seq": 7}}
//
// node, item, answer, error, append and forked_from are left out when
// empty; changes and next are [] rather than null.
type HistoryEntry struct {
	// Seq is the record's number in the thread: what Fork takes.
	Seq int64 `json:"seq"`
	// Run is the run's number in the thread; Step the run's step (0 for
	// the record that starts a run).
	Run  int         `json:"run"`
	Step int         `json:"step"`
	Kind HistoryKind `json:"kind"`
	// Node is the node whose task completed; Item its map element (0 if
	// none); Answer is set when a person's answer completed it.
	Node   string `json:"node,omitempty"`
	Item   int    `json:"item,omitempty"`
	Answer bool   `json:"answer,omitempty"`
	// Error is the task's error, or the run's.
	Error string `json:"error,omitempty"`
	// Changes are the cells the step wrote; Next the nodes whose tasks it
	// made ready.
	Changes []Change `json:"changes"`
	Next    []string `json:"next"`
	// Status is the run's status after the record.
	Status engine.Status `json:"status"`
	// Time is when the record was written; Bytes the size of its data.
	Time  time.Time `json:"time"`
	Bytes int       `json:"bytes"`
	// Forked is, on the snapshot a forked thread starts with, where it
	// was forked from.
	Forked *engine.ForkOrigin `json:"forked_from,omitempty"`
	// RestoredTo is, on a snapshot that restored an earlier state
	// (a rollback), the record whose state it restored.
	RestoredTo *int64 `json:"restored_to,omitempty"`
}

// NewHistoryEntry converts an engine history entry: lists empty, never
// null.
func NewHistoryEntry(h engine.HistoryEntry) HistoryEntry {
	out := HistoryEntry{
		Seq: h.Seq, Run: h.Run, Step: h.Step, Kind: historyKind(h), Node: h.Node, Item: h.Item,
		Answer: h.Answer, Error: h.Error, Changes: make([]Change, 0, len(h.Changes)), Next: h.Next,
		Status: h.Status, Time: h.Time, Bytes: h.Bytes, Forked: h.Forked,
	}
	if out.Next == nil {
		out.Next = []string{}
	}
	if h.Restored {
		to := h.To
		out.RestoredTo = &to
	}
	for _, c := range h.Changes {
		out.Changes = append(out.Changes, Change{Name: c.Name, Value: c.Value, Append: c.Append})
	}
	return out
}

func historyKind(h engine.HistoryEntry) HistoryKind {
	switch {
	case h.Kind == store.Snapshot:
		return HistorySnapshot
	case h.Start:
		return HistoryStart
	case h.Answer:
		return HistoryAnswer
	case h.Node == "":
		return HistoryEnd
	}
	return HistoryStep
}

// History returns a thread's log from record from on (1 for all), oldest
// first; an empty log is an empty slice. It reads the store only: a
// thread without a run spec, or whose components cannot be built here,
// has a history too.
func (s *Service) History(ctx context.Context, thread string, from int64) ([]HistoryEntry, error) {
	th := &engine.Threads{Store: s.opts.Store}
	hist, err := th.History(ctx, thread, from)
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, len(hist))
	for _, h := range hist {
		out = append(out, NewHistoryEntry(h))
	}
	return out, nil
}

// StatusNew is State.Status of a thread that has no run yet.
const StatusNew = "new"

// State is a thread's state as `weft threads show --json` prints it and a
// server sends it: its last run, variables and pending questions.
type State struct {
	ID string `json:"id"`
	// Workflow is the name of the workflow the thread runs, Source the
	// digest of its canonical source ("" for a thread without a spec).
	Workflow string `json:"workflow"`
	Source   string `json:"source,omitempty"`
	// Run is the number of the thread's last run (0 before any); Status
	// its status ("running", "waiting", "completed", "failed",
	// "cancelled"), or StatusNew before any run.
	Run    int    `json:"run"`
	Status string `json:"status"`
	// Records is the number of the last record of the thread's log.
	Records int64 `json:"records"`
	// Vars are the variables and slots.
	Vars Values `json:"vars"`
	// Pending are the questions the run waits on ([] when none).
	Pending []Question `json:"pending"`
	// Forked is where the thread was forked from, if it was.
	Forked *engine.ForkOrigin `json:"forked_from,omitempty"`
	// Meta are the thread's labels.
	Meta map[string]string `json:"meta,omitempty"`
}

// State reads a thread's state from the store. Like History it needs
// neither the thread's run spec nor its workflow. A thread that does not
// exist is an error that errors.Is finds store.ErrNotFound.
func (s *Service) State(ctx context.Context, thread string) (*State, error) {
	st := s.opts.Store
	thr, err := st.Thread(ctx, thread)
	if err != nil {
		return nil, err
	}
	ts, err := (&engine.Threads{Store: st}).Load(ctx, thread)
	if err != nil {
		return nil, err
	}
	pend, err := st.Pending(ctx, thread)
	if err != nil {
		return nil, err
	}
	out := &State{
		ID: thr.ID, Workflow: thr.Workflow, Source: thr.Source, Run: ts.RunNumber, Status: ts.Status().String(),
		Records: ts.Seq, Vars: Values(ts.Vars()), Pending: make([]Question, 0, len(pend)), Forked: ts.Forked, Meta: thr.Meta,
	}
	if ts.State == nil {
		out.Status = StatusNew
	}
	for _, p := range pend {
		var q flow.Value
		if err := json.Unmarshal(p.Question, &q); err != nil {
			q = flow.StringValue(string(p.Question))
		}
		out.Pending = append(out.Pending, Question{ID: p.ID, Node: p.Node, Question: q})
	}
	return out, nil
}

// ForkRequest asks for a new thread from a record of a thread, with edits.
type ForkRequest struct {
	// Thread is the thread to fork; At the record (HistoryEntry.Seq)
	// whose state the new thread starts from.
	Thread string
	At     int64
	// To is the new thread's id; "" makes a random one.
	To string
	// Set sets variables, slots and parameters to values, conformed to
	// their declared types.
	Set map[string]flow.Value
	// SetText sets them to text parsed against their declared types, as
	// ParseValue does (a String takes the text as is, an Int "3"); for a
	// name the workflow does not declare, or a thread whose workflow is
	// not known, JSON when the text parses as JSON, else the text.
	SetText map[string]string
	// Workflow types the edits of a thread that keeps no run spec (one an
	// older weft recorded); nil: none. A thread with a spec uses the
	// workflow its spec names, whose source the store keeps.
	Workflow *Workflow
}

// ForkResult is a fork's outcome, as `weft threads fork --json` prints it.
type ForkResult struct {
	// Thread is the new thread, From and At where it was forked from.
	Thread string `json:"thread"`
	From   string `json:"from"`
	At     int64  `json:"at"`
	// Status is the status of the new thread's run: running when the
	// run was in the middle of its steps at record At, waiting when it
	// waited for a person, an ended status when it had ended.
	Status engine.Status `json:"status"`
}

// EditError is a fork's edit that does not fit the cell it sets.
type EditError struct {
	Name string // the variable, slot or parameter
	Err  error
}

// Error names the cell.
func (e *EditError) Error() string { return fmt.Sprintf("%s: %v", e.Name, e.Err) }

// Unwrap returns the conversion's error.
func (e *EditError) Unwrap() error { return e.Err }

// Is reports the mismatch kind (engine.KindOf): the value does not fit.
func (e *EditError) Is(target error) bool { return target == engine.ErrMismatch }

// Fork makes a new thread whose state is req.Thread's right after record
// req.At, with edits; it runs the same workflow with the same components
// (the new thread keeps the same run spec). Fork reads the store only: it
// builds no component, so a thread whose models or tools cannot be
// provisioned here (a secret not set, a file gone) can be forked, and the
// workflow that types the edits is opened from the source the store
// keeps. A record the thread does not have is an error of kind
// not_found; a name that is no variable, slot or parameter, one of kind
// invalid_input; a value that does not fit, an *EditError.
func (s *Service) Fork(ctx context.Context, req ForkRequest) (*ForkResult, error) {
	thr, err := s.opts.Store.Thread(ctx, req.Thread)
	if err != nil {
		return nil, err
	}
	var plan *flow.Plan
	switch {
	case len(req.Set)+len(req.SetText) == 0:
		// No edit to type: the workflow is not needed.
	case len(thr.Spec) > 0:
		spec, err := decodeSpec(thr)
		if err != nil {
			return nil, err
		}
		wf, err := s.workflow(ctx, spec.Workflow)
		if err != nil {
			return nil, err
		}
		plan = wf.Plan
	case req.Workflow != nil:
		plan = req.Workflow.Plan
	}
	set := make(map[string]flow.Value, len(req.Set)+len(req.SetText))
	for name, v := range req.Set {
		set[name] = v
	}
	for name, text := range req.SetText {
		if _, dup := req.Set[name]; dup {
			return nil, &EditError{Name: name, Err: errors.New("set twice, as a value and as text")}
		}
		v, err := parseEdit(plan, name, text)
		if err != nil {
			return nil, &EditError{Name: name, Err: err}
		}
		set[name] = v
	}
	to := req.To
	if to == "" {
		to = NewThreadID()
	}
	th := &engine.Threads{Store: s.opts.Store}
	ts, err := th.Fork(ctx, req.Thread, req.At, to, &engine.ForkOptions{Set: set, Plan: plan})
	if err != nil {
		return nil, err
	}
	return &ForkResult{Thread: to, From: req.Thread, At: req.At, Status: ts.Status()}, nil
}

// parseEdit reads a fork's text value: typed by the plan's cell when
// there is one, else JSON when it parses, else text.
func parseEdit(plan *flow.Plan, name, text string) (flow.Value, error) {
	if plan != nil {
		for _, c := range plan.Cells {
			if c.Name == name && (c.Kind == flow.CellVar || c.Kind == flow.CellSlot || c.Kind == flow.CellParam) {
				return ParseValue(text, c.Type)
			}
		}
	}
	var v flow.Value
	if err := json.Unmarshal([]byte(text), &v); err == nil {
		return v, nil
	}
	return flow.StringValue(text), nil
}

// PrunePolicy says what Prune removes.
type PrunePolicy struct {
	// Thread prunes one thread; "": every thread in the store.
	Thread string
	// KeepRuns keeps each thread's last KeepRuns runs (0: no such bound).
	KeepRuns int
	// Before removes the runs last updated before it and, when Thread is
	// "", whole threads not updated since (zero: no such bound).
	Before time.Time
}

// PruneResult is what Prune removed, as `weft threads prune --json`
// prints it.
type PruneResult struct {
	// ThreadsPruned is the number of threads that lost records;
	// RecordsRemoved the records removed from them.
	ThreadsPruned  int `json:"threads_pruned"`
	RecordsRemoved int `json:"records_removed"`
	// ThreadsDeleted is the number of whole threads deleted.
	ThreadsDeleted int `json:"threads_deleted"`
}

// ErrNoPolicy is a PrunePolicy that bounds nothing: neither KeepRuns nor
// Before. errors.Is finds engine.ErrInvalidInput in it too.
var ErrNoPolicy error = &policyError{}

type policyError struct{}

func (*policyError) Error() string {
	return "service: prune: the policy keeps everything (set KeepRuns or Before)"
}

func (*policyError) Is(target error) bool { return target == engine.ErrInvalidInput }

// Prune removes old runs and the records they alone need (see
// store.Store.Prune), as policy says; a thread's last run, and the
// snapshot its kept records start from, are always kept. Without a
// thread it lists the store's threads in one query and deletes whole
// threads not updated since policy.Before. On an error it returns what
// it removed before it.
func (s *Service) Prune(ctx context.Context, policy PrunePolicy) (*PruneResult, error) {
	if policy.KeepRuns <= 0 && policy.Before.IsZero() {
		return nil, ErrNoPolicy
	}
	st := s.opts.Store
	opts := store.PruneOptions{KeepRuns: max(policy.KeepRuns, 0), Before: policy.Before}
	res := &PruneResult{}
	ids := []string{policy.Thread}
	if policy.Thread == "" {
		all, err := st.Threads(ctx, store.ListOptions{})
		if err != nil {
			return res, err
		}
		ids = ids[:0]
		for _, t := range all {
			if !policy.Before.IsZero() && t.Updated.Before(policy.Before) {
				if err := st.DeleteThread(ctx, t.ID); err != nil {
					return res, err
				}
				res.ThreadsDeleted++
				continue
			}
			ids = append(ids, t.ID)
		}
	}
	for _, id := range ids {
		n, err := st.Prune(ctx, id, opts)
		if err != nil {
			return res, err
		}
		if n > 0 {
			res.ThreadsPruned++
			res.RecordsRemoved += n
		}
	}
	return res, nil
}
