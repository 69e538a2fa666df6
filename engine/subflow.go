package engine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/weftlang/weft/flow"
)

// Subworkflows run as frames inside the run's Machine. When a WORKFLOW
// node's task starts, the machine opens a frame for it: a Machine of the
// subworkflow's plan, with its own cells (the parameters from the node's
// inputs, its variables and slots), tokens and step count, keyed by the
// node's task (so a map over a WORKFLOW node, or parallel branches, have
// several frames at once). The frame's tasks are the run's: they go in
// the lists of the run's machine (the "top"), take their ids from its
// count, and Ready hands them out like any other, named by their path
// ("outer/inner"). When the frame reaches a final node, its outputs, by
// name, are the WORKFLOW node's, and the parent goes on; when it fails,
// the node fails with the frame's error, its node named by its path, and
// the node's retries (each opens a new frame, at once: the machine reads
// no clock), fallback and error edges apply as to any node. A frame is
// part of the state (TaskState.Sub): a run restored in the middle of one
// goes on inside it.

// openFrame opens the frame of a WORKFLOW node's task, its attempt-th.
func (m *Machine) openFrame(task *Task, attempt int) {
	pn := task.Node
	if pn.Sub == nil {
		m.complete(task, nil, fmt.Errorf("node %s: subworkflow was not compiled", pn.Name))
		return
	}
	cm := m.newFrame(task, attempt)
	params := make(map[string]flow.Value, len(task.Inputs))
	for i, in := range pn.Inputs {
		params[in.Name] = task.Inputs[i]
	}
	if err := cm.setup(params, nil, nil, nil); err != nil {
		m.frameFailed(task, attempt, fmt.Errorf("subworkflow %s: %w", pn.Sub.Workflow.Name, err))
		return
	}
	m.subs = append(m.subs, cm)
	cm.tok0.node, cm.tok0.frame = pn.Sub.Nodes[pn.Sub.Initial], cm.root
	cm.start(&cm.tok0)
}

// newFrame returns the frame machine of a WORKFLOW node's task, empty.
func (m *Machine) newFrame(task *Task, attempt int) *Machine {
	tm := m.top
	if tm == nil {
		tm = m
	}
	sub := task.Node.Sub
	cm := &Machine{plan: sub, cells: make([]flow.Value, len(sub.Cells)), trace: tm.trace,
		top: tm, up: m, owner: task, prefix: task.Name + "/", attempt: attempt}
	if task.Item > 0 {
		// A map element's frame: "outer[2]/inner".
		cm.prefix = task.Name + "[" + strconv.Itoa(task.Item) + "]/"
	}
	cm.rootFrame = frame{m: cm}
	cm.root = &cm.rootFrame
	return cm
}

// frameEnded takes the end of frame cm, one of m's: its outputs complete
// the WORKFLOW node's task, or its failure fails it.
func (m *Machine) frameEnded(cm *Machine) {
	i := slices.Index(m.subs, cm)
	if i < 0 {
		return
	}
	m.subs = slices.Delete(m.subs, i, i+1)
	cm.close()
	if m.status.Ended() {
		return
	}
	task, sub := cm.owner, cm.plan
	if cm.status != Completed {
		m.frameFailed(task, cm.attempt, fmt.Errorf("subworkflow %s: %w", sub.Workflow.Name, framePath(cm.prefix, cm.err)))
		return
	}
	outs := make([]flow.Value, len(task.Node.Outputs))
	for j, o := range task.Node.Outputs {
		k := slices.IndexFunc(cm.final.Outputs, func(fo flow.PlanOutput) bool { return fo.Name == o.Name })
		if k < 0 || cm.outputs[k].IsNull() {
			err := &OutputError{Node: task.Name, Field: o.Name, Err: fmt.Errorf("subworkflow %s ended at %s, which has no output %s", sub.Workflow.Name, cm.final.Name, o.Name)}
			m.frameFailed(task, cm.attempt, err)
			return
		}
		outs[j] = cm.outputs[k]
	}
	m.complete(task, outs, nil)
}

// frameFailed fails a WORKFLOW node's task whose attempt-th frame failed
// with err: a new frame if the node's retries allow, its fallback if it
// has one, its error edges or the run's failure otherwise.
func (m *Machine) frameFailed(task *Task, attempt int, err error) {
	n := task.Node.Node
	if n.Retry != nil && attempt < n.Retry.MaxAttempts {
		m.emit(Event{Type: NodeRetrying, Step: task.Step, Node: task.Node.Name, Task: task.ID, Item: task.Item, Attempt: attempt, Error: err.Error()})
		m.openFrame(task, attempt+1)
		return
	}
	if attempt > 1 {
		err = fmt.Errorf("after %d attempts: %w", attempt, err)
	}
	if fb := task.Node.Fallback; fb != nil && !errors.Is(err, ErrMisuse) {
		tm := m.top
		if tm == nil {
			tm = m
		}
		n := Notice{Kind: NoticeFallback, Node: task.Name, Step: task.Step, Item: task.Item, Message: err.Error(),
			Values: named(outputNames(task.Node), slices.Clone(fb.Outputs))}
		tm.Note(n)
		m.emit(Event{Type: ActionEvent, Step: task.Step, Node: task.Node.Name, Task: task.ID, Item: task.Item, Kind: string(n.Kind), Data: n.value()})
		m.complete(task, slices.Clone(fb.Outputs), nil)
		return
	}
	m.complete(task, nil, err)
}

// close ends frame m and the frames inside it, whatever their state, and
// drops their ready and waiting tasks from the run's lists; their running
// tasks are ignored when they complete.
func (m *Machine) close() {
	if !m.status.Ended() {
		m.status = Cancelled
	}
	for _, cm := range m.subs {
		cm.close()
	}
	m.subs = nil
	tm := m.top
	if tm == nil {
		return
	}
	gone := func(t *Task) bool { fm := t.tok.frame.m; return fm != tm && fm.status.Ended() }
	tm.ready = slices.DeleteFunc(tm.ready, gone)
	tm.waiting = slices.DeleteFunc(tm.waiting, gone)
}

// closeFramesOf closes m's frames of the WORKFLOW node token t is at (the
// other elements' of a map that failed), or all of m's frames if t is nil.
func (m *Machine) closeFramesOf(t *token) {
	if len(m.subs) == 0 {
		return
	}
	m.subs = slices.DeleteFunc(m.subs, func(cm *Machine) bool {
		if t != nil && cm.owner.tok != t {
			return false
		}
		cm.close()
		return true
	})
}

// frameEvent records an event of frame m in the run's stream, its node
// names prefixed with the frame's path. The frame's own start and end are
// left out: the WORKFLOW node's events report them.
func (m *Machine) frameEvent(e Event) {
	switch e.Type {
	case RunStarted, RunFinished, RunFailed, RunCancelled:
		return
	}
	if !m.top.trace {
		return
	}
	if e.Node != "" {
		e.Node = m.prefix + e.Node
	}
	if e.From != "" {
		e.From = m.prefix + e.From
	}
	for i := range e.To {
		e.To[i] = m.prefix + e.To[i]
	}
	m.top.emit(e)
}

// nameOf returns the path of a node of frame m.
func (m *Machine) nameOf(pn *flow.PlanNode) string {
	if m.names == nil {
		m.names = make([]string, len(m.plan.Nodes))
	}
	if m.names[pn.Index] == "" {
		m.names[pn.Index] = m.prefix + pn.Name
	}
	return m.names[pn.Index]
}

// framePath returns err with the node it names given by its path in the
// run: prefix (the frame's path) and the node's name.
func framePath(prefix string, err error) error {
	switch e := err.(type) {
	case *NodeError:
		c := *e
		c.Node = prefix + c.Node
		return &c
	case *NoRouteError:
		c := *e
		c.Node = prefix + c.Node
		return &c
	case *LimitError:
		c := *e
		c.Node = prefix + c.Node
		return &c
	}
	return err
}

// frameOf returns the machine a task belongs to: the run's, or a frame's.
func (t *Task) frameOf() *Machine { return t.tok.frame.m }

// topStep returns the step of the run's own plan a task belongs to: its
// own, or that of the WORKFLOW node whose frame (or frame within) it runs
// in. It is the step of the task's record.
func (t *Task) topStep() int {
	for t.frameOf().owner != nil {
		t = t.frameOf().owner
	}
	return t.Step
}

// SubState is the state of a subworkflow frame: the WORKFLOW node's task
// it is the frame of lists it (TaskState.Sub), with the frame's cells and
// control state (its tasks are the frame's; their ids are the run's). In a
// State, and in the first delta that shows the frame, it is whole: Cells
// as a State's and Control as a snapshot's. In the deltas after that it is
// Partial, as a delta is: Cells the cells written since the last delta
// (appends as the appended elements), Control with the path since and
// partial map states; Fold applies it to the frame of the same task and
// attempt.
type SubState struct {
	Attempt int         `json:"attempt"` // the frame's attempt, from 1 (the node's retries)
	Cells   []CellValue `json:"cells"`   // sorted by cell, null cells left out (whole)
	Control Control     `json:"control"`
	Partial bool        `json:"partial,omitempty"`
}

// frameMark is a frame shown by a Ready: Advance moves the frame's delta
// baseline to where the Ready saw it.
type frameMark struct {
	m     *Machine
	full  []flow.Value // the cells of a frame shown whole
	whole []cellValue  // the changed cells of a frame shown partial
	path  int          // len(m.path)
}

// subState returns the state of frame m for a record of the given mode:
// whole for a snapshot and until a delta showed the frame, else partial.
// A delta moves the frame's baseline; a Ready notes it for Advance.
func (m *Machine) subState(mode ctlMode) *SubState {
	ss := &SubState{Attempt: m.attempt}
	whole := mode == ctlSnapshot || !m.listed
	var mk frameMark
	if whole {
		m.controlInto(&ss.Control, 0, true, ctlSnapshot)
		for i, v := range m.cells {
			if !v.IsNull() {
				ss.Cells = append(ss.Cells, CellValue{Cell: i, Value: v})
			}
		}
		switch mode {
		case ctlDelta:
			m.shadow = slices.Clone(m.cells)
		case ctlReady:
			mk.full = slices.Clone(m.cells)
		}
	} else {
		ss.Partial = true
		m.controlInto(&ss.Control, m.shadowPath, true, mode)
		if mode == ctlReady {
			ss.Cells = m.diff(nil, &mk.whole)
		} else {
			ss.Cells = m.diff(nil, nil)
		}
	}
	ss.Control.NextID, ss.Control.Events = 0, 0 // the run's
	switch mode {
	case ctlDelta:
		m.shadowPath = len(m.path)
		m.listed = true
	case ctlReady:
		mk.m, mk.path = m, len(m.path)
		m.top.marks = append(m.top.marks, mk)
	}
	return ss
}

// advance moves a frame's delta baseline to where a Ready saw it.
func (mk *frameMark) advance() {
	m := mk.m
	if mk.full != nil {
		m.shadow = mk.full
	} else {
		if m.shadow == nil {
			m.shadow = make([]flow.Value, len(m.cells))
		}
		for _, w := range mk.whole {
			m.shadow[w.cell] = w.v
		}
	}
	m.shadowPath = mk.path
	m.listed = true
}

// rebaseFrame moves frame m's delta baseline to now (Machine.rebase): the
// state just recorded or restored from shows it whole.
func (m *Machine) rebaseFrame() {
	m.shadow = slices.Clone(m.cells)
	m.shadowPath = len(m.path)
	m.listed = true
}

// foldSub returns the whole state of the frame of task id whose delta is
// partial: the frame of st's task id, of the same attempt, with the delta
// applied. It reuses that frame's state: Fold replaces it.
func (st *State) foldSub(id int, ss *SubState) (*SubState, error) {
	var old *SubState
	for _, t := range st.Control.Tasks {
		if t.Sub != nil && t.ID == id {
			old = t.Sub
			break
		}
	}
	if old == nil || old.Attempt != ss.Attempt {
		return nil, &StateError{Field: fmt.Sprintf("control.tasks[id %d].sub", id), Detail: fmt.Sprintf("a partial frame state (attempt %d) with no frame of that attempt before it", ss.Attempt)}
	}
	fs := State{Cells: old.Cells, Control: old.Control}
	if err := fs.Fold(ss.Cells, ss.Control); err != nil {
		return nil, err
	}
	return &SubState{Attempt: ss.Attempt, Cells: fs.Cells, Control: fs.Control}, nil
}

// restoreFrame restores the frame of the WORKFLOW node's task, one of m's,
// from its state; field names it in a *StateError.
func (m *Machine) restoreFrame(task *Task, ss *SubState, field string) error {
	if task.Node.Sub == nil {
		return &StateError{Field: field, Detail: fmt.Sprintf("node %s is not a WORKFLOW node", task.Node.Name)}
	}
	if ss.Attempt < 1 {
		return &StateError{Field: field + ".attempt", Detail: fmt.Sprintf("attempt %d", ss.Attempt)}
	}
	cm := m.newFrame(task, ss.Attempt)
	if ss.Partial {
		return &StateError{Field: field + ".partial", Detail: "a partial frame state in a whole state"}
	}
	if err := cm.restore(ss.Cells, &ss.Control, field+"."); err != nil {
		return err
	}
	cm.rebaseFrame() // the state it comes from shows it whole
	m.subs = append(m.subs, cm)
	return nil
}

// eachFrame calls f for m's frames and the frames inside them.
func (m *Machine) eachFrame(f func(*Machine)) {
	for _, cm := range m.subs {
		f(cm)
		cm.eachFrame(f)
	}
}
