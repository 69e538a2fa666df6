package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

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
	thread    string
	// seed names the weft run in the task ids: its thread and number,
	// so that the jobs that start and resume one run agree on them.
	seed string

	// The step whose frames wait for the edges it takes (their
	// updates belong to it): flushed at the next node or the run's end.
	// retried counts, by node execution (keyOf), the attempts that
	// failed and were retried: its task result says how many attempts
	// it took (weft's "attempts", beside LangGraph's keys).
	retried map[string]int
	// tasks are the start frames of the tasks under way, by node
	// execution (keyOf): a retry sends its task's start again, with the
	// attempt that follows.
	tasks map[string]map[string]any
	// seen says the run's readers have its state (a run taken over):
	// start sends no values.
	seen bool
	// sent are the root steps whose frames an earlier attempt sent but
	// did not record: run again, they are not sent twice.
	sent        map[stepKey]bool
	pending     bool
	pendingNode string
	pendingStep int
	update      *Values
	// Messages in progress (legacy "messages" mode), by node.
	partial map[string]*strings.Builder
	msgIDs  map[string]string
	// The step of each node execution under way, by its key (its path,
	// with "[item]" for a map element's), which a namespace names; and
	// the namespaces made so far, by path.
	steps map[string]int
	nss   map[string]string

	// Checkpoints (checkpoints and debug modes): the one whose frames
	// wait for the tasks that start after it (its next), those tasks'
	// start events, and where its id comes from.
	cp     *pendingCheckpoint
	starts []engine.Event
	log    checkpointLog   // where checkpoint ids are found; nil: none
	ctx    context.Context // of the run, for log reads
	run    int             // the weft run's number in the thread, from its events
	parent *checkpointJSON
	// The checkpoints the run added, as the engine handed them to the
	// store (checkpointed): its start's, and each step's newest, with
	// the checkpoint before each (0: look it up in the log).
	cpMu    sync.Mutex
	cpStart cpSeqs
	cpSteps map[int]cpSeqs
	cpLast  int64
}

// cpSeqs are a checkpoint's seq and its parent's.
type cpSeqs struct{ seq, parent int64 }

// checkpointed is the run's engine.RunOptions.OnCheckpoint: it keeps the
// seqs that name the checkpoints the run streams.
func (r *recorder) checkpointed(ref engine.CheckpointRef) {
	r.cpMu.Lock()
	defer r.cpMu.Unlock()
	c := cpSeqs{seq: ref.Seq, parent: r.cpLast}
	r.cpLast = ref.Seq
	switch {
	case ref.Start:
		r.cpStart = c
	case ref.Node != "":
		if r.cpSteps == nil {
			r.cpSteps = map[int]cpSeqs{}
		}
		r.cpSteps[ref.Step] = c
	}
}

// checkpointLog lists a thread's checkpoints (engine.Threads.Checkpoints),
// to name those a run streams as the thread's history names them.
type checkpointLog func(ctx context.Context, threadID string, opts engine.CheckpointOptions) ([]engine.Checkpoint, error)

// pendingCheckpoint is a checkpoint whose frames wait for its next tasks.
type pendingCheckpoint struct {
	source string
	step   int // the run's step of its record (0: the run's start)
	values json.RawMessage
	time   time.Time
}

// newRecorder records into st the modes of a run that starts from values.
func newRecorder(st *runStream, modes []string, subgraphs bool, values *Values, runID string, meta map[string]any) *recorder {
	r := &recorder{st: st, modes: map[string]bool{}, subgraphs: subgraphs, values: values, runID: runID, meta: meta, partial: map[string]*strings.Builder{}, msgIDs: map[string]string{}, steps: map[string]int{}, nss: map[string]string{}}
	r.thread, _ = meta["thread_id"].(string)
	for _, m := range modes {
		r.modes[m] = true
	}
	return r
}

// resumeFrom takes the executions under way in the state a run resumes
// from: a WORKFLOW node's task whose frame goes on (its question being
// answered, or the run cut short in it) does not start again, and its
// subworkflow's namespace keeps the task id its start gave it.
func (r *recorder) resumeFrom(ts *engine.ThreadState) {
	if ts == nil || ts.State == nil {
		return
	}
	for _, t := range ts.State.Control.Tasks {
		if t.Sub == nil {
			continue
		}
		key := ts.NodeOf(t)
		if t.Item > 0 {
			key += "[" + strconv.Itoa(t.Item) + "]"
		}
		r.steps[key] = t.Step
	}
}

// start emits the values a resumed run starts from: the thread's state
// (a new run's RunStarted event does this for it).
func (r *recorder) start() {
	if r.modes["values"] && !r.seen {
		r.emit("values", "", r.values)
	}
	r.rootEvent("on_chain_start", map[string]any{"input": r.values})
}

// emit adds a frame of mode, named "mode|ns" for a subworkflow's.
func (r *recorder) emit(mode, ns string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = errorEvent("EncodingError", err.Error())
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
func (r *recorder) taskUUID(key string) string { return r.taskUUIDAt(key, r.steps[key]) }

// taskUUIDAt is the id of the execution of the node of key at step.
func (r *recorder) taskUUIDAt(key string, step int) string {
	seed := r.seed
	if seed == "" {
		seed = r.runID
	}
	return uuid.NewSHA1(taskSpace, []byte(seed+"\n"+key+"\n"+strconv.Itoa(step))).String()
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
	if r.seed == "" && ev.Thread != "" && ev.Run > 0 {
		r.seed = ev.Thread + "/" + strconv.Itoa(ev.Run)
		r.run = ev.Run
	}
	prefix, node := split(ev.Node)
	if r.cp != nil && ev.Type != engine.EdgeTaken {
		if ev.Type == engine.NodeStarted && prefix == "" {
			// A task after the checkpoint: its frames come after the
			// checkpoint's, which names it.
			r.starts = append(r.starts, ev)
			return
		}
		r.emitCheckpoint()
	}
	r.observe(ev, prefix, node)
}

// observe maps one event of the node prefix/node.
func (r *recorder) observe(ev engine.Event, prefix, node string) {
	// A subworkflow's inner steps show only with stream_subgraphs (in
	// the events mode, always, as LangGraph's).
	inner := prefix != "" && !r.subgraphs
	if inner && ev.Type != engine.ActionEvent && ev.Type != engine.NodeStarted && ev.Type != engine.NodeFinished {
		return
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
		r.rootEvent("on_chain_start", map[string]any{"input": r.values})
		r.checkpoint("input", 0, ev)
	case engine.NodeStarted:
		r.flush()
		key := keyOf(ev)
		if step, ok := r.steps[key]; ok && step != ev.Step {
			clear(r.nss) // a new execution: new namespaces within it
		}
		r.steps[key] = ev.Step
		if r.modes["events"] {
			r.emit("events", ns, r.chainEvent("on_chain_start", node, prefix, ev, map[string]any{"input": namedObject(ev.Inputs)}))
		}
		if inner {
			return
		}
		if r.modes["tasks"] || r.modes["debug"] {
			task := map[string]any{"id": r.taskUUIDAt(key, ev.Step), "name": node, "input": namedObject(ev.Inputs), "triggers": []string{"branch:to:" + node}, "interrupts": []any{}, "metadata": r.meta, "time": ev.Time}
			if r.tasks == nil {
				r.tasks = map[string]map[string]any{}
			}
			r.tasks[key] = task
			if r.modes["tasks"] {
				r.emit("tasks", ns, task)
			}
			if r.modes["debug"] {
				r.emit("debug", ns, map[string]any{"step": ev.Step, "type": "task", "timestamp": ev.Time, "payload": task})
			}
		}
	case engine.NodeFinished:
		r.flush()
		if ev.Item > 0 {
			delete(r.tasks, keyOf(ev))
			return // a map element: its node's outputs come when the map ends
		}
		outs := namedObject(ev.Outputs)
		if r.modes["events"] {
			r.emit("events", ns, r.chainEvent("on_chain_end", node, prefix, ev, map[string]any{"input": namedObject(ev.Inputs), "output": outs}))
		}
		if inner {
			return
		}
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
		r.pending, r.pendingNode, r.pendingStep, r.update = true, ev.Node, ev.Step, up
		if r.modes["tasks"] || r.modes["debug"] {
			result := map[string]any{"id": r.taskUUIDAt(keyOf(ev), ev.Step), "name": node, "result": outs, "interrupts": []any{}, "error": nil, "time": ev.Time}
			r.attempts(result, keyOf(ev))
			if r.modes["tasks"] {
				r.emit("tasks", ns, result)
			}
			if r.modes["debug"] {
				r.emit("debug", ns, map[string]any{"step": ev.Step, "type": "task_result", "timestamp": ev.Time, "payload": result})
			}
		}
		if b := r.partial[ev.Node]; b != nil && r.modes["messages"] {
			r.emit("messages/complete", ns, []any{r.message(ev.Node, b.String(), "ai")})
			delete(r.partial, ev.Node)
		}
		if prefix == "" {
			r.checkpoint("loop", ev.Step, ev)
		}
	case engine.NodeFailed:
		r.flush()
		if r.modes["tasks"] || r.modes["debug"] {
			result := map[string]any{"id": r.taskUUIDAt(keyOf(ev), ev.Step), "name": node, "result": nil, "interrupts": []any{}, "error": ev.Error, "time": ev.Time}
			r.attempts(result, keyOf(ev))
			if r.modes["tasks"] {
				r.emit("tasks", ns, result)
			}
			if r.modes["debug"] {
				r.emit("debug", ns, map[string]any{"step": ev.Step, "type": "task_result", "timestamp": ev.Time, "payload": result})
			}
		}
	case engine.NodeRetrying:
		if r.retried == nil {
			r.retried = map[string]int{}
		}
		r.retried[keyOf(ev)]++
		r.retrying(ev, ns)
	case engine.EdgeTaken:
		for _, c := range ev.Changes {
			if prefix == "" {
				r.values.set(c.Name, rawOf(c.Value))
			}
			if r.pending {
				r.update.set(c.Name, rawOf(c.Value))
			}
		}
		if r.cp != nil && prefix == "" && len(ev.Changes) > 0 {
			r.cp.values = rawOf(r.values) // the step's checkpoint holds its edges' updates
		}
	case engine.ActionEvent:
		if inner {
			ns = ""
		}
		r.action(ev, prefix, ns, node)
	case engine.RunWaiting, engine.RunFinished, engine.RunFailed, engine.RunCancelled:
		r.flush()
		if ev.Type == engine.RunFinished {
			r.rootEvent("on_chain_end", map[string]any{"output": r.values})
		}
	}
}

// attempts adds to a task result how many attempts its execution took,
// when it was retried, and forgets them and the task's start.
func (r *recorder) attempts(result map[string]any, key string) {
	delete(r.tasks, key)
	if n := r.retried[key]; n > 0 {
		result["attempts"] = n + 1
		delete(r.retried, key)
	}
}

// retrying sends, in the tasks and debug modes, the start of a task's
// next attempt when one failed and the node's retry policy gives it
// another: LangGraph's task start frame again (same id, name, input),
// with weft's "attempt" (the one that follows, from 2) and "retry" (the
// failed attempt: its number, error, and the wait before the next, in
// ms) beside "time". LangGraph sends nothing between attempts.
func (r *recorder) retrying(ev engine.Event, ns string) {
	if !r.modes["tasks"] && !r.modes["debug"] {
		return
	}
	started := r.tasks[keyOf(ev)]
	if started == nil {
		return // a task whose start this run's stream did not send
	}
	task := make(map[string]any, len(started)+2)
	for k, v := range started {
		task[k] = v
	}
	task["time"] = ev.Time
	task["attempt"] = ev.Attempt + 1
	task["retry"] = map[string]any{"attempt": ev.Attempt, "error": ev.Error, "delay_ms": float64(ev.Delay) / float64(time.Millisecond)}
	if r.modes["tasks"] {
		r.emit("tasks", ns, task)
	}
	if r.modes["debug"] {
		r.emit("debug", ns, map[string]any{"step": ev.Step, "type": "task", "timestamp": ev.Time, "payload": task})
	}
}

// end emits what waits at the run's end: the last step's frames and
// checkpoint.
func (r *recorder) end() {
	r.flush()
	if r.cp != nil {
		r.emitCheckpoint()
	}
}

// checkpoint makes the checkpoint of the run's start (source "input")
// or of a step ("loop") pending: its frames wait for the tasks that
// start after it.
func (r *recorder) checkpoint(source string, step int, ev engine.Event) {
	if !r.modes["checkpoints"] && !r.modes["debug"] {
		return
	}
	r.cp = &pendingCheckpoint{source: source, step: step, values: rawOf(r.values), time: ev.Time}
}

// emitCheckpoint emits the pending checkpoint's frames, then those of
// the tasks that started after it.
func (r *recorder) emitCheckpoint() {
	cp, starts := r.cp, r.starts
	r.cp, r.starts = nil, nil // a new slice: starts is read below while Observe may append
	r.flush()
	next := make([]string, 0, len(starts))
	tasks := make([]map[string]any, 0, len(starts))
	for _, ev := range starts {
		_, node := split(ev.Node)
		next = append(next, node)
		tasks = append(tasks, map[string]any{"id": r.taskUUIDAt(keyOf(ev), ev.Step), "name": node, "path": []string{"__pregel_pull", node}, "interrupts": []any{}})
	}
	this := &checkpointJSON{ThreadID: r.thread}
	if id, parent, ok := r.checkpointSeq(r.ctx, cp.step); ok {
		this.CheckpointID = checkpointID(id)
		if parent > 0 && (r.parent == nil || r.parent.CheckpointID != checkpointID(parent)) {
			r.parent = &checkpointJSON{ThreadID: r.thread, CheckpointID: checkpointID(parent)}
		}
	}
	var cid any
	if this.CheckpointID != "" {
		cid = this.CheckpointID
	}
	step := cp.step
	if cp.source == "input" {
		step = -1 // as LangGraph numbers the input checkpoint
	}
	payload := map[string]any{
		"config":   r.config(cid),
		"values":   cp.values,
		"metadata": map[string]any{"source": cp.source, "step": step, "parents": map[string]any{}},
		"next":     next,
		"tasks":    tasks,
	}
	if r.parent != nil {
		payload["parent_config"] = r.config(r.parent.CheckpointID)
	}
	if r.modes["checkpoints"] {
		r.emit("checkpoints", "", payload)
	}
	if r.modes["debug"] {
		if this.CheckpointID != "" {
			payload["checkpoint"] = this
		} else {
			payload["checkpoint"] = map[string]any{"thread_id": r.thread, "checkpoint_ns": "", "checkpoint_id": nil, "checkpoint_map": nil}
		}
		payload["parent_checkpoint"] = r.parent
		r.emit("debug", "", map[string]any{"step": step, "type": "checkpoint", "timestamp": cp.time, "payload": payload})
	}
	if this.CheckpointID != "" {
		r.parent = this
	}
	for _, ev := range starts {
		_, node := split(ev.Node)
		r.observe(ev, "", node)
	}
}

// config is a checkpoint's config, as LangGraph's: the run's metadata,
// and the thread and checkpoint in configurable.
func (r *recorder) config(checkpointID any) map[string]any {
	conf := map[string]any{"thread_id": r.thread, "checkpoint_ns": "", "checkpoint_id": checkpointID, "run_id": r.runID}
	for _, k := range []string{"graph_id", "assistant_id"} {
		if v, ok := r.meta[k]; ok {
			conf[k] = v
		}
	}
	return map[string]any{"configurable": conf, "metadata": r.meta, "tags": []string{}}
}

// checkpointSeq finds a checkpoint of the run: its input (step 0) or the
// newest of its step, as GET /threads/{id}/state/{checkpoint_id} and the
// history know them (their record seqs), and the checkpoint before it:
// from what the engine told checkpointed (the record may not be written
// yet, with async durability: it is when the run ends), else among the
// thread's newest checkpoints in the log. When it is not found, the
// checkpoint is not named rather than named wrong.
func (r *recorder) checkpointSeq(ctx context.Context, step int) (seq, parent int64, ok bool) {
	r.cpMu.Lock()
	c, known := r.cpSteps[step]
	if step == 0 {
		c, known = r.cpStart, r.cpStart.seq > 0
	}
	r.cpMu.Unlock()
	if known {
		if c.parent == 0 && r.log != nil {
			// The drive's first: its parent is the thread's checkpoint
			// before it, written before the drive began.
			if cps, err := r.log(ctx, r.thread, engine.CheckpointOptions{Before: c.seq, Limit: 1}); err == nil && len(cps) == 1 {
				c.parent = cps[0].Seq
			}
		}
		return c.seq, c.parent, true
	}
	if r.log == nil || r.run == 0 {
		return 0, 0, false
	}
	cps, err := r.log(ctx, r.thread, engine.CheckpointOptions{Limit: checkpointsLooked})
	if err != nil {
		return 0, 0, false
	}
	for _, cp := range cps { // newest first
		if cp.Run != r.run {
			continue
		}
		if step == 0 && cp.Source == engine.SourceInput || step > 0 && cp.Source == engine.SourceLoop && cp.Step == step && cp.Node != "" {
			return cp.Seq, cp.Parent, true
		}
	}
	return 0, 0, false
}

// checkpointsLooked is how many of a thread's newest checkpoints a
// streamed checkpoint is looked for in.
const checkpointsLooked = 16

// rootEvent emits an event of the run itself (events mode): its start
// or end, named LangGraph as the reference names the graph's.
func (r *recorder) rootEvent(kind string, data map[string]any) {
	if r.modes["events"] {
		r.emit("events", "", map[string]any{"event": kind, "data": data, "name": "LangGraph", "tags": []string{}, "run_id": r.runID, "metadata": r.meta, "parent_ids": []string{}})
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
	if prefix == "" && r.sent[stepKey{r.pendingStep, node}] {
		// Sent by an earlier attempt, which did not record it: run
		// again, it is not sent twice (takeover.go).
		r.markStep(r.pendingStep, node)
		return
	}
	if r.modes["updates"] {
		r.emit("updates", ns, map[string]any{node: r.update})
	}
	if prefix == "" && r.modes["values"] {
		r.emit("values", "", r.values)
	}
	if prefix == "" {
		r.markStep(r.pendingStep, node)
	}
}

// markStep marks, in the store's log of the run's events (with a shared
// executor), the frames of a root step as in.
func (r *recorder) markStep(step int, node string) {
	if r.st.log == nil {
		return
	}
	b, _ := json.Marshal(stepMarkJSON{Step: step, Node: node})
	r.st.log.mark(stepMark, b)
}

// action maps an action's progress: tokens to messages, the rest to
// custom frames.
func (r *recorder) action(ev engine.Event, prefix, ns, node string) {
	if ev.Kind == "token" {
		tok := ev.Data.Text()
		if r.modes["messages-tuple"] {
			md := r.nodeMeta(ev, prefix, node)
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
			r.emit("events", ns, r.chainEvent("on_chat_model_stream", node, prefix, ev, map[string]any{"chunk": r.chunk(ev.Node, tok)}))
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

// nodeMeta is the metadata LangGraph gives the messages and events of a
// node's task: the run's, and the node, step and namespace.
func (r *recorder) nodeMeta(ev engine.Event, prefix, node string) map[string]any {
	md := make(map[string]any, len(r.meta)+8)
	for k, v := range r.meta {
		md[k] = v
	}
	md["langgraph_node"], md["langgraph_step"] = node, ev.Step
	md["langgraph_path"] = []string{"__pregel_pull", node}
	md["langgraph_triggers"] = []string{"branch:to:" + node}
	cns := r.ownNS(ev, prefix)
	md["langgraph_checkpoint_ns"], md["checkpoint_ns"] = cns, cns
	return md
}

// chainEvent is an astream_events (v2) event of a node's task.
func (r *recorder) chainEvent(kind, node, prefix string, ev engine.Event, data map[string]any) map[string]any {
	tags := []string{"graph:step:" + strconv.Itoa(ev.Step)}
	if kind == "on_chat_model_stream" {
		tags = []string{}
	}
	return map[string]any{"event": kind, "data": data, "name": node, "tags": tags, "run_id": r.taskUUIDAt(keyOf(ev), ev.Step), "metadata": r.nodeMeta(ev, prefix, node), "parent_ids": []string{r.runID}}
}
