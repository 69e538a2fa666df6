package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// parseCheckpoint reads a checkpoint id: the seq of a record of the
// thread's log.
func parseCheckpoint(path, id string) (int64, error) {
	seq, err := strconv.ParseInt(id, 10, 64)
	if err != nil || seq < 1 {
		return 0, invalid(path, "%q is not a checkpoint id of this server (a checkpoint id is the number of a record of the thread's log)", id)
	}
	return seq, nil
}

// checkpointRef reads the forms a checkpoint is named in: an id string,
// {"checkpoint_id": ...}, or a config {"configurable": {"checkpoint_id":
// ...}}. "" when raw names none.
func checkpointRef(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		CheckpointID string `json:"checkpoint_id"`
		Configurable struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"configurable"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if obj.CheckpointID != "" {
			return obj.CheckpointID
		}
		return obj.Configurable.CheckpointID
	}
	return ""
}

// checkpointMeta is a checkpoint's metadata, as LangGraph's: its source,
// its step, plus weft's run number and node.
func checkpointMeta(thr *store.Thread, cp *engine.Checkpoint) map[string]any {
	md := metaOf(thr.Meta)
	md["source"], md["step"], md["parents"] = cp.Source, cp.Step, map[string]any{}
	md["thread_id"], md["run"] = thr.ID, cp.Run
	if cp.Node != "" {
		md["node"] = cp.Node
	}
	return md
}

// stateAt is the JSON of a thread's state at a checkpoint.
func (s *Server) stateAt(ctx context.Context, thr *store.Thread, cp *engine.Checkpoint) (*stateJSON, error) {
	var qs []interruptJSON
	ts := cp.State
	if ts != nil && ts.Status() == engine.Waiting {
		var err error
		if qs, err = s.interrupts(ctx, thr); err != nil {
			return nil, err
		}
	}
	st, err := s.stateOf(thr, ts, qs, cp.Time, checkpointMeta(thr, cp))
	if err != nil {
		return nil, err
	}
	st.Checkpoint = &checkpointJSON{ThreadID: thr.ID, CheckpointID: checkpointID(cp.Seq)}
	st.ParentCheckpoint = nil
	if cp.Parent > 0 {
		st.ParentCheckpoint = &checkpointJSON{ThreadID: thr.ID, CheckpointID: checkpointID(cp.Parent)}
	}
	return st, nil
}

// checkpoint finds one checkpoint of a thread.
func (s *Server) checkpoint(ctx context.Context, thread string, seq int64) (*store.Thread, *engine.Checkpoint, error) {
	thr, err := s.opts.Store.Thread(ctx, thread)
	if err != nil {
		return nil, nil, threadErr(thread, err)
	}
	th := &engine.Threads{Store: s.opts.Store}
	cps, err := th.Checkpoints(ctx, thread, engine.CheckpointOptions{Before: seq + 1, Limit: 1})
	if err != nil {
		return nil, nil, err
	}
	if len(cps) == 0 || cps[0].Seq != seq {
		return nil, nil, notFound("checkpoint", checkpointID(seq))
	}
	return thr, &cps[0], nil
}

// getStateAt is GET /threads/{id}/state/{checkpoint_id}.
func (s *Server) getStateAt(w http.ResponseWriter, r *http.Request) error {
	seq, err := parseCheckpoint("checkpoint_id", r.PathValue("cp"))
	if err != nil {
		return err
	}
	return s.replyStateAt(w, r, r.PathValue("id"), seq)
}

// postStateAt is POST /threads/{id}/state/checkpoint {checkpoint: {...}}.
func (s *Server) postStateAt(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Checkpoint json.RawMessage `json:"checkpoint"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	id := checkpointRef(b.Checkpoint)
	if id == "" {
		return invalid("$.checkpoint.checkpoint_id", "required")
	}
	seq, err := parseCheckpoint("$.checkpoint.checkpoint_id", id)
	if err != nil {
		return err
	}
	return s.replyStateAt(w, r, r.PathValue("id"), seq)
}

func (s *Server) replyStateAt(w http.ResponseWriter, r *http.Request, thread string, seq int64) error {
	thr, cp, err := s.checkpoint(r.Context(), thread, seq)
	if err != nil {
		return err
	}
	st, err := s.stateAt(r.Context(), thr, cp)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// history is POST /threads/{id}/history: the thread's checkpoints, newest
// first.
func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Limit    *int            `json:"limit"`
		Before   json.RawMessage `json:"before"`
		Metadata map[string]any  `json:"metadata"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	opts := engine.CheckpointOptions{Limit: 10}
	if b.Limit != nil {
		if *b.Limit < 0 {
			return invalid("$.limit", "must not be negative")
		}
		opts.Limit = *b.Limit
	}
	if id := checkpointRef(b.Before); id != "" {
		seq, err := parseCheckpoint("$.before", id)
		if err != nil {
			return err
		}
		opts.Before = seq
	}
	ctx := r.Context()
	thread := r.PathValue("id")
	thr, err := s.opts.Store.Thread(ctx, thread)
	if err != nil {
		return threadErr(thread, err)
	}
	if len(b.Metadata) > 0 {
		opts.Limit = 0 // the filter is applied below, then the limit
	}
	th := &engine.Threads{Store: s.opts.Store}
	cps, err := th.Checkpoints(ctx, thread, opts)
	if err != nil {
		return err
	}
	out := []*stateJSON{}
	for i := range cps {
		st, err := s.stateAt(ctx, thr, &cps[i])
		if err != nil {
			return err
		}
		if !metaMatch(st.Metadata, b.Metadata) {
			continue
		}
		if b.Limit != nil && len(out) == *b.Limit || b.Limit == nil && len(out) == 10 {
			break
		}
		out = append(out, st)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// metaMatch reports whether md has each of want's keys with an equal
// value.
func metaMatch(md, want map[string]any) bool {
	for k, v := range want {
		a, _ := json.Marshal(md[k])
		b, _ := json.Marshal(v)
		if _, ok := md[k]; !ok || string(a) != string(b) {
			return false
		}
	}
	return true
}

// updateState is POST /threads/{id}/state: values written as a new
// checkpoint of the thread. Keys are the workflow's parameters,
// variables and slots, and nodes (an object of the node's outputs); with
// as_node, a key may also be an output of that node.
func (s *Server) updateState(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Values       json.RawMessage `json:"values"`
		AsNode       string          `json:"as_node"`
		Checkpoint   json.RawMessage `json:"checkpoint"`
		CheckpointID string          `json:"checkpoint_id"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.CheckpointID != "" || checkpointRef(b.Checkpoint) != "" {
		return invalid("$.checkpoint_id", "updating from an older checkpoint is not supported by weft: copy the thread (or fork it at the checkpoint) first")
	}
	ctx := r.Context()
	thread := r.PathValue("id")
	thr, err := s.opts.Store.Thread(ctx, thread)
	if err != nil {
		return threadErr(thread, err)
	}
	plan := s.planOf(thr)
	if plan == nil {
		return errorf(http.StatusUnprocessableEntity, "thread %s has no graph yet: run it first", thread)
	}
	set, err := updatesOf(plan, b.AsNode, b.Values)
	if err != nil {
		return err
	}
	th := &engine.Threads{Store: s.opts.Store}
	ts, err := th.Update(ctx, thread, set, &engine.UpdateOptions{Plan: plan, AsNode: b.AsNode})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoint": map[string]string{"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": checkpointID(ts.Seq)}})
	return nil
}

// updatesOf maps the values of an update to cell names: "name" for a
// parameter, variable or slot, "node.output" for a node's output.
func updatesOf(plan *flow.Plan, asNode string, raw json.RawMessage) (map[string]flow.Value, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, invalid("$.values", "must be an object of values by name")
	}
	var as *flow.PlanNode
	if asNode != "" {
		for _, pn := range plan.Nodes {
			if pn.Name == asNode {
				as = pn
			}
		}
		if as == nil {
			return nil, invalid("$.as_node", "%s has no node %s", plan.Workflow.Name, asNode)
		}
	}
	isOutput := func(pn *flow.PlanNode, name string) bool {
		for _, o := range pn.Outputs {
			if o.Name == name {
				return true
			}
		}
		return false
	}
	out := map[string]flow.Value{}
	for k, v := range obj {
		path := "$.values." + k
		var fv flow.Value
		if err := json.Unmarshal(v, &fv); err != nil {
			return nil, invalid(path, "%v", err)
		}
		switch {
		case plan.Param(k) != nil || plan.Var(k) != nil || slot(plan, k):
			out[k] = fv
		case as != nil && isOutput(as, k):
			out[as.Name+"."+k] = fv
		default:
			var node *flow.PlanNode
			for _, pn := range plan.Nodes {
				if pn.Name == k {
					node = pn
				}
			}
			if node == nil || fv.Kind() != flow.KindObject {
				return nil, invalid(path, "not a parameter, variable or slot of %s, nor a node with an object of its outputs", plan.Workflow.Name)
			}
			for name, ov := range fv.Object() {
				if !isOutput(node, name) {
					return nil, invalid(path+"."+name, "node %s has no output %s", k, name)
				}
				out[k+"."+name] = ov
			}
		}
	}
	return out, nil
}

// slot reports whether plan has a slot called name.
func slot(plan *flow.Plan, name string) bool {
	for _, s := range plan.Slots {
		if s.Name == name {
			return true
		}
	}
	return false
}
