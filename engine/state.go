package engine

import (
	"fmt"
	"slices"

	"github.com/weftlang/weft/flow"
)

// State is the whole state of a Machine as plain data that encodes to JSON
// and back without loss: the non-null cells, and the control state (the
// tasks ready, running or waiting, the threads of control and parallel
// branches they belong to, the step counter and the path). A store keeps
// it as a snapshot; between snapshots it keeps deltas (Machine.Delta), and
// Fold rebuilds the State from both.
type State struct {
	Workflow string      `json:"workflow"`
	Cells    []CellValue `json:"cells"` // sorted by cell, null cells left out
	Control  Control     `json:"control"`
}

// CellValue is the value of one cell. In a delta, Append says that Value
// lists the elements appended to the cell's List (a variable with an
// append reducer, such as a conversation's messages), so a step that adds
// one message records one message, not the whole history.
type CellValue struct {
	Cell   int        `json:"c"`
	Value  flow.Value `json:"v"`
	Append bool       `json:"a,omitempty"`
}

// Control is a machine's control state. It is small: O(threads of control),
// not O(state).
type Control struct {
	Status Status `json:"status"`
	Err    string `json:"error,omitempty"` // the message of a failed run
	Step   int    `json:"step"`
	NextID int    `json:"next_id"`
	// Events is the number of events the run has recorded (the Seq of
	// the last), so that a restored run numbers its events on. Records
	// without it (kept before it existed) restore as 0: the run's
	// events are numbered from 1 again.
	Events  int64         `json:"events,omitempty"`
	Path    []int         `json:"path,omitempty"` // in a delta, only the nodes started since the last one
	Final   int           `json:"final"`          // the final node that ended the run, -1 if none
	Outputs []flow.Value  `json:"outputs,omitempty"`
	Tasks   []TaskState   `json:"tasks,omitempty"`
	Tokens  []TokenState  `json:"tokens,omitempty"`
	Frames  []FrameState  `json:"frames,omitempty"` // frame 0 is the root and is not listed
	Fanouts []FanoutState `json:"fanouts,omitempty"`
	// Notices are the run's notices; in a delta, only those of the steps
	// since the last one (Fold appends them).
	Notices []Notice `json:"notices,omitempty"`
}

// TaskState is a task that was ready, running (it runs again after a
// restore) or waiting for a person.
type TaskState struct {
	ID      int          `json:"id"`
	Token   int          `json:"token"`
	Step    int          `json:"step"`
	Item    int          `json:"item,omitempty"`
	Inputs  []flow.Value `json:"inputs,omitempty"`
	Waiting bool         `json:"waiting,omitempty"`
	// Path is the node's path in the run ("outer/inner"), for a waiting
	// task of a subworkflow frame (ThreadState.NodeOf).
	Path string `json:"path,omitempty"`
	// Sub is the frame of a WORKFLOW node's task: its subworkflow in
	// the middle of its run. Records from before frames have none.
	Sub *SubState `json:"sub,omitempty"`
}

// TokenState is a thread of control: the node it is at and its frame.
type TokenState struct {
	Node  int       `json:"node"`
	Frame int       `json:"frame"`
	Step  int       `json:"step"`
	Map   *MapState `json:"map,omitempty"`
}

// MapState is a map node in the middle of its elements. In a State, and
// in the first delta that shows the map, it is whole: Items, and Inputs
// and Outs parallel to them. In the deltas after that it is Partial: Elems
// lists only the elements started or finished since the last delta, so
// each record of a map costs O(what changed), not O(items). Fold merges a
// partial MapState into the whole one of the token at the same Step.
type MapState struct {
	Items   []flow.Value   `json:"items,omitempty"`
	Inputs  [][]flow.Value `json:"inputs,omitempty"`
	Outs    [][]flow.Value `json:"outs,omitempty"`
	Elems   []MapElem      `json:"elems,omitempty"`
	Partial bool           `json:"partial,omitempty"`
	Next    int            `json:"next"`
	Done    int            `json:"done"`
	Failed  bool           `json:"failed,omitempty"`
}

// MapElem is one element of a map in a partial MapState: its index, its
// inputs once started and its outputs once finished.
type MapElem struct {
	I   int          `json:"i"`
	In  []flow.Value `json:"in,omitempty"`
	Out []flow.Value `json:"out,omitempty"`
}

// FrameState is a parallel branch's frame: its parent and its writes.
type FrameState struct {
	Parent int         `json:"parent"`
	Fanout int         `json:"fanout"`
	Raw    []CellValue `json:"raw,omitempty"`
}

// FanoutState is a fan-out whose join has not run yet.
type FanoutState struct {
	Edge     int   `json:"edge"` // index in Workflow.Edges
	Parent   int   `json:"parent"`
	Branches []int `json:"branches"`
	Pending  int   `json:"pending"`
}

// StateError is a State that does not fit the plan it is restored into.
type StateError struct {
	Field  string // e.g. "control.tasks[2].token"
	Detail string
}

// Error names the field.
func (e *StateError) Error() string { return "engine: state, " + e.Field + ": " + e.Detail }

// Snapshot returns the machine's whole state. Running tasks are recorded as
// ready: restored, they run again. It has no side effects: the next Delta
// (or Ready) is what it would have been without it. A driver that keeps a
// snapshot in place of a step's delta takes it between Ready and Advance,
// so that the deltas after it start where it ends.
func (m *Machine) Snapshot() *State {
	st := &State{Workflow: m.plan.Workflow.Name}
	m.controlInto(&st.Control, 0, true, ctlSnapshot)
	for i, v := range m.cells {
		if !v.IsNull() {
			st.Cells = append(st.Cells, CellValue{Cell: i, Value: v})
		}
	}
	st.Control.Notices = slices.Clone(m.notices)
	return st
}

// rebase moves the delta baseline to the machine's current state, as if a
// delta of everything had been taken: the next delta lists only what
// changes from now on.
func (m *Machine) rebase() {
	m.shadow = append(m.shadow[:0], m.cells...)
	m.shadowPath = len(m.path)
	m.shadowNotices = len(m.notices)
	m.eachMap(func(mp *mapRun) {
		mp.listed = true
		mp.dirty = mp.dirty[:0]
	})
	m.eachFrame((*Machine).rebaseFrame)
}

// eachMap calls f for every map node in flight (once per map).
func (m *Machine) eachMap(f func(*mapRun)) {
	var last *mapRun
	var owners []*Task // of frames: a map over a WORKFLOW node has no task in the lists
	if len(m.subs) > 0 {
		m.eachFrame(func(cm *Machine) { owners = append(owners, cm.owner) })
	}
	for _, l := range [4][]*Task{m.running, m.ready, m.waiting, owners} {
		for _, t := range l {
			if mp := t.tok.mp; mp != nil && mp != last {
				last = mp
				if !mp.seen {
					mp.seen = true
					f(mp)
				}
			}
		}
	}
	for _, l := range [4][]*Task{m.running, m.ready, m.waiting, owners} {
		for _, t := range l {
			if mp := t.tok.mp; mp != nil {
				mp.seen = false
			}
		}
	}
}

// Delta returns what changed since the last Delta or Advance (since the
// machine started or was restored, the first time), and moves the delta
// baseline to now: the cells written, with appends to a
// List recorded as the appended elements, and the control state, whose
// Path lists only the nodes started since. It is what a store keeps for
// one step; State.Fold applies it.
func (m *Machine) Delta() ([]CellValue, Control) {
	var ctl Control
	changed := m.deltaInto(nil, &ctl, true)
	return changed, ctl
}

// deltaInto is Delta appending the changed cells to changed and writing
// the control state into *ctl, reusing its slices. Unless clone is set, the
// control state shares the machine's memory and is valid only until the
// machine moves on: for encoding at once.
func (m *Machine) deltaInto(changed []CellValue, ctl *Control, clone bool) []CellValue {
	changed = m.diff(changed, nil)
	m.controlInto(ctl, m.shadowPath, clone, ctlDelta)
	m.shadowPath = len(m.path)
	if len(m.notices) > m.shadowNotices {
		ctl.Notices = m.notices[m.shadowNotices:]
		m.shadowNotices = len(m.notices)
	}
	return changed
}

// diff appends the cells changed since the delta baseline to changed. With
// whole nil it moves the baseline of those cells to now; else it leaves
// the baseline and appends their current values to *whole, for Advance.
func (m *Machine) diff(changed []CellValue, whole *[]cellValue) []CellValue {
	if m.shadow == nil {
		m.shadow = make([]flow.Value, len(m.cells))
	}
	for i, v := range m.cells {
		old := m.shadow[i]
		if v.Same(old) {
			continue
		}
		if tail, ok := appended(old, v); ok {
			changed = append(changed, CellValue{Cell: i, Value: tail, Append: true})
		} else {
			changed = append(changed, CellValue{Cell: i, Value: v})
		}
		if whole == nil {
			m.shadow[i] = v
		} else {
			*whole = append(*whole, cellValue{i, v})
		}
	}
	return changed
}

// appended reports whether v is the List old with elements appended, and
// returns those elements.
func appended(old, v flow.Value) (flow.Value, bool) {
	if old.Kind() != flow.KindList || v.Kind() != flow.KindList {
		return flow.Null, false
	}
	ol, nl := old.List(), v.List()
	if len(ol) == 0 || len(nl) <= len(ol) {
		return flow.Null, false
	}
	if &ol[0] != &nl[0] {
		for i := range ol {
			if !ol[i].Same(nl[i]) {
				return flow.Null, false
			}
		}
	}
	return flow.ListValue(nl[len(ol):]...), true
}

// Fold applies a delta (from Machine.Delta) to a State. A partial map
// state that does not fit the State (no map at its step, an element out
// of range) is a *StateError; st is then not to be used.
func (st *State) Fold(delta []CellValue, ctl Control) error {
	for i := range ctl.Tasks {
		if ss := ctl.Tasks[i].Sub; ss != nil && ss.Partial {
			whole, err := st.foldSub(ctl.Tasks[i].ID, ss)
			if err != nil {
				return err
			}
			ctl.Tasks[i].Sub = whole
		}
	}
	for i := range ctl.Tokens {
		if mp := ctl.Tokens[i].Map; mp != nil && mp.Partial {
			whole, err := st.mergeMap(i, &ctl.Tokens[i])
			if err != nil {
				return err
			}
			ctl.Tokens[i].Map = whole
		}
	}
	for _, d := range delta {
		i, found := slices.BinarySearchFunc(st.Cells, d.Cell, func(c CellValue, cell int) int { return c.Cell - cell })
		switch {
		case d.Append && found:
			old := st.Cells[i].Value.List()
			st.Cells[i].Value = flow.ListValue(append(slices.Clip(old), d.Value.List()...)...)
		case d.Append:
			st.Cells = slices.Insert(st.Cells, i, CellValue{Cell: d.Cell, Value: d.Value})
		default:
			st.setCell(d.Cell, d.Value)
		}
	}
	path := append(st.Control.Path, ctl.Path...)
	notices := st.Control.Notices
	if len(ctl.Notices) > 0 {
		notices = append(slices.Clip(notices), ctl.Notices...)
	}
	st.Control = ctl
	st.Control.Path = path
	st.Control.Notices = notices
	return nil
}

// mergeMap returns the whole map state of a token of a delta whose map
// state is partial: the map of st's token at the same step (a map node's
// token is the only one started at its step) with the delta's elements
// set. It reuses the older state's element lists: Fold replaces that
// state.
func (st *State) mergeMap(i int, tk *TokenState) (*MapState, error) {
	d := tk.Map
	field := func(f string) string { return fmt.Sprintf("control.tokens[%d].map%s", i, f) }
	var whole *MapState
	for _, old := range st.Control.Tokens {
		if old.Step == tk.Step && old.Node == tk.Node && old.Map != nil {
			whole = old.Map
			break
		}
	}
	if whole == nil {
		return nil, &StateError{Field: field(""), Detail: fmt.Sprintf("a partial map state at step %d with no map before it", tk.Step)}
	}
	if len(whole.Inputs) != len(whole.Items) || len(whole.Outs) != len(whole.Items) {
		return nil, &StateError{Field: field(""), Detail: "element lists of different lengths"}
	}
	for j, e := range d.Elems {
		if e.I < 0 || e.I >= len(whole.Items) {
			return nil, &StateError{Field: field(fmt.Sprintf(".elems[%d].i", j)), Detail: fmt.Sprintf("element %d out of range (the map has %d)", e.I, len(whole.Items))}
		}
		if e.In != nil {
			whole.Inputs[e.I] = e.In
		}
		if e.Out != nil {
			whole.Outs[e.I] = e.Out
		}
	}
	whole.Next, whole.Done, whole.Failed = d.Next, d.Done, d.Failed
	return whole, nil
}

// setCell sets a cell's value, keeping Cells sorted and without nulls.
func (st *State) setCell(cell int, v flow.Value) {
	i, found := slices.BinarySearchFunc(st.Cells, cell, func(c CellValue, cell int) int { return c.Cell - cell })
	switch {
	case found && v.IsNull():
		st.Cells = slices.Delete(st.Cells, i, i+1)
	case found:
		st.Cells[i].Value = v
	case !v.IsNull():
		st.Cells = slices.Insert(st.Cells, i, CellValue{Cell: cell, Value: v})
	}
}

// ctlMode says what control state controlInto writes.
type ctlMode uint8

const (
	ctlSnapshot ctlMode = iota // whole map states; nothing changes
	ctlDelta                   // partial map states, and the next delta's start from now
	ctlReady                   // partial map states; the next delta's start at Advance
)

// controlInto writes the control state into *c, with the path from index
// from on. A whole control state (a snapshot's) has whole map states; a
// delta's has partial ones, listing the elements changed since the last.
func (m *Machine) controlInto(c *Control, from int, clone bool, mode ctlMode) {
	*c = Control{Status: m.status, Step: m.step, NextID: m.nextID, Events: m.seq, Path: m.path[from:], Final: -1,
		Tasks: c.Tasks[:0], Tokens: c.Tokens[:0]}
	if clone {
		c.Path = slices.Clone(c.Path)
	}
	if len(c.Path) == 0 {
		c.Path = nil
	}
	if m.err != nil {
		c.Err = m.err.Error()
	}
	if m.final != nil {
		c.Final = m.final.Index
		c.Outputs = slices.Clone(m.outputs)
	}
	// Lookups are linear: there are as many frames, fan-outs and tokens
	// as parallel branches in flight, usually none or one.
	frames := append(m.ctlFrames[:0], m.root)
	var fans []*fanout
	var frameOf func(f *frame) int
	frameOf = func(f *frame) int {
		if id := slices.Index(frames, f); id >= 0 {
			return id
		}
		fs := FrameState{Parent: frameOf(f.parent), Fanout: -1}
		for _, w := range f.raw {
			fs.Raw = append(fs.Raw, CellValue{Cell: w.cell, Value: w.v})
		}
		c.Frames = append(c.Frames, fs)
		frames = append(frames, f)
		id := len(c.Frames)
		if f.fan != nil {
			fid := slices.Index(fans, f.fan)
			if fid < 0 {
				fo := f.fan
				fid = len(c.Fanouts)
				fans = append(fans, fo)
				c.Fanouts = append(c.Fanouts, FanoutState{Edge: fo.edge.Index, Pending: fo.pending})
				c.Fanouts[fid].Parent = frameOf(fo.parent)
				for _, b := range fo.branches {
					c.Fanouts[fid].Branches = append(c.Fanouts[fid].Branches, frameOf(b))
				}
			}
			c.Frames[id-1].Fanout = fid
		}
		return id
	}
	tokens := m.ctlTokens[:0]
	add := func(t *Task, waiting bool) {
		if t.stale() {
			return // an element of a map that failed: forgotten
		}
		tid := slices.Index(tokens, t.tok)
		if tid < 0 {
			tk := t.tok
			ts := TokenState{Node: tk.node.Index, Frame: frameOf(tk.frame), Step: tk.step}
			if mp := tk.mp; mp != nil {
				ts.Map = mp.state(clone, mode)
			}
			tid = len(c.Tokens)
			tokens = append(tokens, tk)
			c.Tokens = append(c.Tokens, ts)
		}
		in := t.Inputs
		if clone {
			in = slices.Clone(in)
		}
		c.Tasks = append(c.Tasks, TaskState{ID: t.ID, Token: tid, Step: t.Step, Item: t.Item, Inputs: in, Waiting: waiting})
	}
	tm := m
	if m.top != nil {
		tm = m.top
	}
	for _, t := range tm.running {
		if t.tok.frame.m == m {
			add(t, false)
		}
	}
	for _, t := range tm.ready {
		if t.tok.frame.m == m {
			add(t, false)
		}
	}
	for _, t := range tm.waiting {
		if t.tok.frame.m == m {
			add(t, true)
			if m.top != nil {
				c.Tasks[len(c.Tasks)-1].Path = t.Name
			}
		}
	}
	for _, cm := range m.subs {
		add(cm.owner, false)
		c.Tasks[len(c.Tasks)-1].Sub = cm.subState(mode)
	}
	clear(frames)
	clear(tokens)
	m.ctlFrames, m.ctlTokens = frames[:0], tokens[:0]
	if len(c.Tasks) > 1 {
		slices.SortFunc(c.Tasks, func(a, b TaskState) int { return a.ID - b.ID })
	}
	if len(c.Tasks) == 0 {
		c.Tasks = nil
	}
	if len(c.Tokens) == 0 {
		c.Tokens = nil
	}
}

// state returns the map's state for a record: whole for a snapshot and
// for the first delta that shows the map, else partial (the elements
// changed since the last record); for a delta it starts tracking the next
// delta's changes (a snapshot changes nothing). Unless clone is set it
// shares the map's memory.
func (mp *mapRun) state(clone bool, mode ctlMode) *MapState {
	ms := &MapState{Next: mp.next, Done: mp.done, Failed: mp.failed}
	if mode == ctlSnapshot || !mp.listed {
		ms.Items, ms.Inputs, ms.Outs = mp.items, mp.inputs, mp.outs
		if clone {
			ms.Items, ms.Inputs, ms.Outs = slices.Clone(ms.Items), slices.Clone(ms.Inputs), slices.Clone(ms.Outs)
		}
	} else {
		ms.Partial = true
		// Sorted and compacted in place: for a Ready, Advance drops
		// the elements listed here, mp.dirty[:len], and keeps those
		// changed after.
		slices.Sort(mp.dirty)
		mp.dirty = slices.Compact(mp.dirty)
		for _, i := range mp.dirty {
			ms.Elems = append(ms.Elems, MapElem{I: i, In: mp.inputs[i], Out: mp.outs[i]})
		}
	}
	switch mode {
	case ctlDelta:
		mp.listed = true
		mp.dirty = mp.dirty[:0]
	case ctlReady:
		mp.tracked = true // Advance needs the changes made from now on
	}
	return ms
}

// RestoreMachine rebuilds a machine of plan from a State. Tasks that were
// ready or running come back ready (the driver carries them out again);
// waiting tasks come back waiting. A State that does not fit the plan is a
// *StateError.
func RestoreMachine(plan *flow.Plan, st *State, trace bool) (*Machine, error) {
	if st.Workflow != plan.Workflow.Name {
		return nil, &StateError{Field: "workflow", Detail: fmt.Sprintf("state of workflow %q, plan of %q", st.Workflow, plan.Workflow.Name)}
	}
	m := &Machine{plan: plan, cells: make([]flow.Value, len(plan.Cells)), trace: trace}
	m.root = &frame{m: m}
	if err := m.restore(st.Cells, &st.Control, ""); err != nil {
		return nil, err
	}
	m.shadow = slices.Clone(m.cells)
	m.shadowPath = len(m.path)
	m.shadowNotices = len(m.notices)
	return m, nil
}

// restore sets m, new, to the state of cells and c: the run's state, or
// a frame's (m.top set), whose tasks go in the run's lists. pre prefixes
// the fields a *StateError names.
func (m *Machine) restore(cells []CellValue, c *Control, pre string) error {
	plan := m.plan
	tm := m
	if m.top != nil {
		tm = m.top
	}
	serr := func(field, detail string) error { return &StateError{Field: pre + field, Detail: detail} }
	for i, cv := range cells {
		if cv.Cell < 0 || cv.Cell >= len(m.cells) {
			return serr(fmt.Sprintf("cells[%d]", i), fmt.Sprintf("cell %d out of range (the plan has %d)", cv.Cell, len(m.cells)))
		}
		m.cells[cv.Cell] = cv.Value
	}
	m.status, m.step, m.nextID, m.seq, m.path = c.Status, c.Step, c.NextID, c.Events, slices.Clone(c.Path)
	m.notices = slices.Clone(c.Notices)
	if c.Err != "" {
		m.err = &RestoredError{Msg: c.Err}
	}
	node := func(field string, i int) (*flow.PlanNode, error) {
		if i < 0 || i >= len(plan.Nodes) {
			return nil, serr(field, fmt.Sprintf("node %d out of range", i))
		}
		return plan.Nodes[i], nil
	}
	for i, n := range m.path {
		if _, err := node(fmt.Sprintf("control.path[%d]", i), n); err != nil {
			return err
		}
	}
	if c.Final >= 0 {
		pn, err := node("control.final", c.Final)
		if err != nil {
			return err
		}
		m.final, m.outputs = pn, slices.Clone(c.Outputs)
	}
	edges := map[int]*flow.PlanEdge{}
	for _, pn := range plan.Nodes {
		for _, e := range pn.Edges {
			edges[e.Index] = e
		}
		for _, e := range pn.OnError {
			edges[e.Index] = e
		}
	}
	frames := make([]*frame, len(c.Frames)+1)
	frames[0] = m.root
	for i := range c.Frames {
		frames[i+1] = &frame{m: m}
	}
	fans := make([]*fanout, len(c.Fanouts))
	for i, fs := range c.Fanouts {
		e, ok := edges[fs.Edge]
		if !ok || len(e.To) < 2 {
			return &StateError{Field: pre + fmt.Sprintf("control.fanouts[%d].edge", i), Detail: fmt.Sprintf("edge %d is not a fan-out of this plan", fs.Edge)}
		}
		if fs.Parent < 0 || fs.Parent >= len(frames) {
			return &StateError{Field: pre + fmt.Sprintf("control.fanouts[%d].parent", i), Detail: "frame out of range"}
		}
		fo := &fanout{edge: e, parent: frames[fs.Parent], pending: fs.Pending}
		for j, b := range fs.Branches {
			if b <= 0 || b >= len(frames) {
				return &StateError{Field: pre + fmt.Sprintf("control.fanouts[%d].branches[%d]", i, j), Detail: "frame out of range"}
			}
			fo.branches = append(fo.branches, frames[b])
		}
		fans[i] = fo
	}
	for i, fs := range c.Frames {
		f := frames[i+1]
		if fs.Parent < 0 || fs.Parent >= len(frames) || fs.Parent == i+1 {
			return &StateError{Field: pre + fmt.Sprintf("control.frames[%d].parent", i), Detail: "frame out of range"}
		}
		f.parent = frames[fs.Parent]
		if fs.Fanout >= 0 {
			if fs.Fanout >= len(fans) {
				return &StateError{Field: pre + fmt.Sprintf("control.frames[%d].fanout", i), Detail: "fan-out out of range"}
			}
			f.fan = fans[fs.Fanout]
		}
		for _, w := range fs.Raw {
			if w.Cell < 0 || w.Cell >= len(m.cells) {
				return &StateError{Field: pre + fmt.Sprintf("control.frames[%d].raw", i), Detail: fmt.Sprintf("cell %d out of range", w.Cell)}
			}
			f.raw = append(f.raw, cellValue{w.Cell, w.Value})
		}
	}
	toks := make([]*token, len(c.Tokens))
	for i, ts := range c.Tokens {
		pn, err := node(fmt.Sprintf("control.tokens[%d].node", i), ts.Node)
		if err != nil {
			return err
		}
		if ts.Frame < 0 || ts.Frame >= len(frames) {
			return &StateError{Field: pre + fmt.Sprintf("control.tokens[%d].frame", i), Detail: "frame out of range"}
		}
		t := &token{node: pn, frame: frames[ts.Frame], step: ts.Step}
		if mp := ts.Map; mp != nil {
			t.mp = &mapRun{items: mp.Items, inputs: mp.Inputs, outs: mp.Outs, next: mp.Next, done: mp.Done, failed: mp.Failed}
			if len(t.mp.inputs) != len(t.mp.items) || len(t.mp.outs) != len(t.mp.items) {
				return &StateError{Field: pre + fmt.Sprintf("control.tokens[%d].map", i), Detail: "element lists of different lengths"}
			}
		}
		toks[i] = t
	}
	for i, ts := range c.Tasks {
		if ts.Token < 0 || ts.Token >= len(toks) {
			return &StateError{Field: pre + fmt.Sprintf("control.tasks[%d].token", i), Detail: "token out of range"}
		}
		tk := toks[ts.Token]
		if len(ts.Inputs) != len(tk.node.Inputs) {
			return &StateError{Field: pre + fmt.Sprintf("control.tasks[%d].inputs", i), Detail: fmt.Sprintf("%d inputs, node %s has %d", len(ts.Inputs), tk.node.Name, len(tk.node.Inputs))}
		}
		var t *Task
		if ts.Item == 0 {
			t = &tk.task
		} else {
			t = &Task{}
		}
		name := tk.node.Name
		if m.top != nil {
			name = m.nameOf(tk.node)
		}
		*t = Task{ID: ts.ID, Node: tk.node, Name: name, Step: ts.Step, Item: ts.Item, Inputs: slices.Clone(ts.Inputs), tok: tk}
		switch {
		case ts.Sub != nil:
			if err := m.restoreFrame(t, ts.Sub, fmt.Sprintf("control.tasks[%d].sub", i)); err != nil {
				return err
			}
		case ts.Waiting:
			tm.waiting = append(tm.waiting, t)
		default:
			tm.ready = append(tm.ready, t)
		}
	}
	return nil
}

// RestoredError is the error of a failed run restored from a State: its
// message, without the original error's type.
type RestoredError struct{ Msg string }

// Error returns the message.
func (e *RestoredError) Error() string { return e.Msg }
