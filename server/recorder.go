package server

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/uuid"

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
	// The step of each node execution under way, by its key (its path,
	// with "[item]" for a map element's), which a namespace names; and
	// the namespaces made so far, by path.
	steps map[string]int
	nss   map[string]string
}

// newRecorder records into st the modes of a run that starts from values.
func newRecorder(st *runStream, modes []string, subgraphs bool, values *Values, runID string, meta map[string]any) *recorder {
	r := &recorder{st: st, modes: map[string]bool{}, subgraphs: subgraphs, values: values, runID: runID, meta: meta, partial: map[string]*strings.Builder{}, msgIDs: map[string]string{}, steps: map[string]int{}, nss: map[string]string{}}
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

// split cuts a node path "outer/inner" into the path of the
// subworkflow it runs in ("outer") and its name.
func split(path string) (prefix, node string) {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i], path[i+1:]
	}
	return "", path
}

// taskSpace is the namespace of the uuid5 task ids of a run's node
// executions.
var taskSpace = uuid.MustParse("6c1d2a4e-2f4b-5b8e-9a57-7765667420ff")

// taskUUID is the id of the execution of the node whose key (path, with
// "[item]" for a map element's) is key: a uuid5 of the run, the key and
// the execution's step, so the same in every reading of the run's stream
// and in the stream of a server that goes on with the run.
func (r *recorder) taskUUID(key string) string {
	return uuid.NewSHA1(taskSpace, []byte(r.runID+"\n"+key+"\n"+strconv.Itoa(r.steps[key]))).String()
}

// segment is a namespace segment, "<node>:<task id>", of the execution
// of the node whose key is key.
func (r *recorder) segment(key string) string {
	name := key[strings.LastIndexByte(key, '/')+1:]
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	return name + ":" + r.taskUUID(key)
}

// ns is LangGraph's namespace of the subworkflow a node runs in, given
// its path ("" at the top): a segment per enclosing WORKFLOW node
// execution, outermost first, joined by "|".
func (r *recorder) ns(prefix string) string {
	if prefix == "" {
		return ""
	}
	if s, ok := r.nss[prefix]; ok {
		return s
	}
	var b strings.Builder
	for i := 0; i <= len(prefix); i++ {
		if i == len(prefix) || prefix[i] == '/' {
			if b.Len() > 0 {
				b.WriteByte('|')
			}
			b.WriteString(r.segment(prefix[:i]))
		}
	}
	s := b.String()
	r.nss[prefix] = s
	return s
}

// keyOf is the key of an event's node execution.
func keyOf(ev engine.Event) string {
	if ev.Item > 0 {
		return ev.Node + "[" + strconv.Itoa(ev.Item) + "]"
	}
	return ev.Node
}

// ownNS is the namespace of an event's node execution itself (LangGraph's
// checkpoint_ns of the messages it makes): its subworkflow's namespace
// and its own segment.
func (r *recorder) ownNS(ev engine.Event, prefix string) string {
	seg := r.segment(keyOf(ev))
	if ns := r.ns(prefix); ns != "" {
		return ns + "|" + seg
	}
	return seg
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
	prefix, node := split(ev.Node)
	if prefix != "" && !r.subgraphs && ev.Type != engine.ActionEvent {
		return // a subworkflow's inner steps show only with stream_subgraphs
	}
	ns := ""
	if r.subgraphs {
		ns = r.ns(prefix)
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
		key := keyOf(ev)
		if step, ok := r.steps[key]; ok && step != ev.Step {
			clear(r.nss) // a new execution: new namespaces within it
		}
		r.steps[key] = ev.Step
		task := map[string]any{"id": r.taskUUID(key), "name": node, "input": namedObject(ev.Inputs), "triggers": []string{"branch:to:" + node}}
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
		if prefix == "" {
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
		result := map[string]any{"id": r.taskUUID(keyOf(ev)), "name": node, "error": nil, "result": outs, "interrupts": []any{}}
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
			r.emit("tasks", ns, map[string]any{"id": r.taskUUID(keyOf(ev)), "name": node, "error": ev.Error, "result": nil, "interrupts": []any{}})
		}
	case engine.EdgeTaken:
		for _, c := range ev.Changes {
			if prefix == "" {
				r.values.set(c.Name, rawOf(c.Value))
			}
			if r.pending {
				r.update.set(c.Name, rawOf(c.Value))
			}
		}
	case engine.ActionEvent:
		r.action(ev, prefix, ns, node)
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
	prefix, node := split(r.pendingNode)
	ns := r.ns(prefix)
	if r.modes["updates"] {
		r.emit("updates", ns, map[string]any{node: r.update})
	}
	if prefix == "" && r.modes["values"] {
		r.emit("values", "", r.values)
	}
	if prefix == "" && r.modes["checkpoints"] {
		r.emit("checkpoints", "", map[string]any{"values": r.values, "metadata": map[string]any{"source": "loop", "writes": map[string]any{node: r.update}}, "next": []string{}, "tasks": []any{}})
	}
}

// action maps an action's progress: tokens to messages, the rest to
// custom frames.
func (r *recorder) action(ev engine.Event, prefix, ns, node string) {
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
			cns := r.ownNS(ev, prefix)
			md["langgraph_checkpoint_ns"], md["checkpoint_ns"] = cns, cns
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
	return map[string]any{"event": kind, "name": node, "run_id": r.taskUUID(keyOf(ev)), "tags": []string{}, "metadata": r.meta, "data": data, "parent_ids": []string{r.runID}}
}
