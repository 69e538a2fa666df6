package server

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/weftlang/weft/engine"
)

// recorder turns a run's engine events into the frames of the stream
// modes the run asked for. It is the run's engine.Observer: the engine
// calls it in order, from one goroutine at a time.
type recorder struct {
	st        *runStream
	modes     map[string]bool
	subgraphs bool
	meta      map[string]any // the metadata of messages and events frames
	values    *Values        // the thread's state as the run goes
	runID     string

	// The step whose frames wait for the edges it takes (their
	// updates belong to it): flushed at the next node or the run's end.
	pending     bool
	pendingNode string
	update      *Values
	// Messages in progress (legacy "messages" mode), by node.
	partial map[string]*strings.Builder
	msgIDs  map[string]string
}

// newRecorder records into st the modes of a run that starts from values.
func newRecorder(st *runStream, modes []string, subgraphs bool, values *Values, runID string, meta map[string]any) *recorder {
	r := &recorder{st: st, modes: map[string]bool{}, subgraphs: subgraphs, values: values, runID: runID, meta: meta, partial: map[string]*strings.Builder{}, msgIDs: map[string]string{}}
	for _, m := range modes {
		r.modes[m] = true
	}
	return r
}

// start emits the values a resumed run starts from: the thread's state
// (a new run's RunStarted event does this for it).
func (r *recorder) start() {
	if r.modes["values"] {
		r.emit("values", "", r.values)
	}
}

// emit adds a frame of mode, named "mode|ns" for a subworkflow's.
func (r *recorder) emit(mode, ns string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": "EncodingError", "message": err.Error()})
		mode = "error"
	}
	if ns != "" {
		mode += "|" + ns
	}
	r.st.add(mode, data)
}

// split cuts a node path "outer/inner" into its namespace and name.
func split(path string) (ns, node string) {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return strings.ReplaceAll(path[:i], "/", "|"), path[i+1:]
	}
	return "", path
}

// rawOf is the JSON of a value, or null.
func rawOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// namedObject is the JSON object of named values, in order.
func namedObject(nvs []engine.NamedValue) *Values {
	out := &Values{}
	for _, nv := range nvs {
		out.set(nv.Name, rawOf(nv.Value))
	}
	return out
}

// Observe maps one event.
func (r *recorder) Observe(ev engine.Event) {
	ns, node := split(ev.Node)
	if ns != "" && !r.subgraphs && ev.Type != engine.ActionEvent {
		return // a subworkflow's inner steps show only with stream_subgraphs
	}
	switch ev.Type {
	case engine.RunStarted:
		for _, c := range ev.Changes {
			r.values.set(c.Name, rawOf(c.Value))
		}
		if r.modes["values"] {
			r.emit("values", "", r.values)
		}
	case engine.NodeStarted:
		r.flush()
		task := map[string]any{"id": taskID(ev), "name": node, "input": namedObject(ev.Inputs), "triggers": []string{"branch:to:" + node}}
		if r.modes["tasks"] {
			r.emit("tasks", ns, task)
		}
		if r.modes["debug"] {
			r.emit("debug", ns, map[string]any{"type": "task", "timestamp": ev.Time, "step": ev.Step, "payload": task})
		}
		if r.modes["events"] {
			r.emit("events", ns, r.chainEvent("on_chain_start", node, ev, map[string]any{"input": namedObject(ev.Inputs)}))
		}
	case engine.NodeFinished:
		r.flush()
		if ev.Item > 0 {
			return // a map element: its node's outputs come when the map ends
		}
		outs := namedObject(ev.Outputs)
		if ns == "" {
			r.values.set(node, rawOf(outs))
			for _, c := range ev.Changes {
				r.values.set(c.Name, rawOf(c.Value))
			}
		}
		up := namedObject(ev.Outputs)
		for _, c := range ev.Changes {
			up.set(c.Name, rawOf(c.Value))
		}
		r.pending, r.pendingNode, r.update = true, ev.Node, up
		result := map[string]any{"id": taskID(ev), "name": node, "error": nil, "result": outs, "interrupts": []any{}}
		if r.modes["tasks"] {
			r.emit("tasks", ns, result)
		}
		if r.modes["debug"] {
			r.emit("debug", ns, map[string]any{"type": "task_result", "timestamp": ev.Time, "step": ev.Step, "payload": result})
		}
		if r.modes["events"] {
			r.emit("events", ns, r.chainEvent("on_chain_end", node, ev, map[string]any{"output": outs}))
		}
		if b := r.partial[ev.Node]; b != nil && r.modes["messages"] {
			r.emit("messages/complete", ns, []any{r.message(ev.Node, b.String(), "ai")})
			delete(r.partial, ev.Node)
		}
	case engine.NodeFailed:
		r.flush()
		if r.modes["tasks"] {
			r.emit("tasks", ns, map[string]any{"id": taskID(ev), "name": node, "error": ev.Error, "result": nil, "interrupts": []any{}})
		}
	case engine.EdgeTaken:
		for _, c := range ev.Changes {
			if ns == "" {
				r.values.set(c.Name, rawOf(c.Value))
			}
			if r.pending {
				r.update.set(c.Name, rawOf(c.Value))
			}
		}
	case engine.ActionEvent:
		r.action(ev, ns, node)
	case engine.RunWaiting, engine.RunFinished, engine.RunFailed, engine.RunCancelled:
		r.flush()
	}
}

// flush emits the frames of the step that waited for its edges.
func (r *recorder) flush() {
	if !r.pending {
		return
	}
	r.pending = false
	ns, node := split(r.pendingNode)
	if r.modes["updates"] {
		r.emit("updates", ns, map[string]any{node: r.update})
	}
	if ns == "" && r.modes["values"] {
		r.emit("values", "", r.values)
	}
	if ns == "" && r.modes["checkpoints"] {
		r.emit("checkpoints", "", map[string]any{"values": r.values, "metadata": map[string]any{"source": "loop", "writes": map[string]any{node: r.update}}, "next": []string{}, "tasks": []any{}})
	}
}

// action maps an action's progress: tokens to messages, the rest to
// custom frames.
func (r *recorder) action(ev engine.Event, ns, node string) {
	if ev.Kind == "token" {
		tok := ev.Data.Text()
		if r.modes["messages-tuple"] {
			md := make(map[string]any, len(r.meta)+4)
			for k, v := range r.meta {
				md[k] = v
			}
			md["langgraph_node"], md["langgraph_step"] = node, ev.Step
			md["langgraph_path"] = []string{"__pregel_pull", node}
			md["langgraph_triggers"] = []string{"branch:to:" + node}
			md["langgraph_checkpoint_ns"], md["checkpoint_ns"] = ns, ns
			md["tags"] = []string{}
			md["name"] = node
			r.emit("messages", ns, []any{r.chunk(ev.Node, tok), md})
		}
		if r.modes["messages"] {
			b := r.partial[ev.Node]
			if b == nil {
				b = &strings.Builder{}
				r.partial[ev.Node] = b
				r.emit("messages/metadata", ns, map[string]any{r.msgID(ev.Node): map[string]any{"metadata": r.meta}})
			}
			b.WriteString(tok)
			r.emit("messages/partial", ns, []any{r.message(ev.Node, b.String(), "ai")})
		}
		if r.modes["events"] {
			r.emit("events", ns, r.chainEvent("on_chat_model_stream", node, ev, map[string]any{"chunk": r.chunk(ev.Node, tok)}))
		}
		return
	}
	if r.modes["custom"] {
		r.emit("custom", ns, map[string]any{"kind": ev.Kind, "node": node, "data": ev.Data})
	}
}

// msgID is the id of the message a node's tokens make.
func (r *recorder) msgID(node string) string {
	id := r.msgIDs[node]
	if id == "" {
		id = "run-" + r.runID + "-" + strconv.Itoa(len(r.msgIDs)+1)
		r.msgIDs[node] = id
	}
	return id
}

// chunk is an AI message chunk of one token, as LangChain writes it.
func (r *recorder) chunk(node, tok string) map[string]any {
	return map[string]any{"content": tok, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}, "type": "AIMessageChunk", "name": nil, "id": r.msgID(node), "example": false, "tool_calls": []any{}, "invalid_tool_calls": []any{}, "usage_metadata": nil, "tool_call_chunks": []any{}}
}

// message is a whole AI message.
func (r *recorder) message(node, content, typ string) map[string]any {
	return map[string]any{"content": content, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}, "type": typ, "name": nil, "id": r.msgID(node), "tool_calls": []any{}, "invalid_tool_calls": []any{}}
}

// chainEvent is an astream_events event.
func (r *recorder) chainEvent(kind, node string, ev engine.Event, data map[string]any) map[string]any {
	return map[string]any{"event": kind, "name": node, "run_id": r.runID + "-" + taskID(ev), "tags": []string{}, "metadata": r.meta, "data": data, "parent_ids": []string{r.runID}}
}

// taskID names an event's task.
func taskID(ev engine.Event) string {
	id := strconv.Itoa(ev.Task)
	if ev.Item > 0 {
		id += "." + strconv.Itoa(ev.Item)
	}
	return id
}
