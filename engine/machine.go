package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/weftlang/weft/flow"
)

// Status is the state of a run.
type Status uint8

// The run statuses.
const (
	Running   Status = iota // tasks are pending or running
	Waiting                 // suspended at one or more human nodes
	Completed               // a final node ran
	Failed                  // an error ended the run
	Cancelled               // the run was stopped for good (Machine.Cancel)
)

var statusNames = [...]string{"running", "waiting", "completed", "failed", "cancelled"}

// Ended reports whether a run with this status is over: Completed, Failed
// or Cancelled.
func (s Status) Ended() bool { return s >= Completed }

// String returns "running", "waiting", "completed", "failed" or
// "cancelled".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText encodes the status by name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a status from its name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("engine: unknown status %q", b)
}

// Task is one action call the Machine asks its driver to carry out.
type Task struct {
	ID   int            // unique within the run, subworkflow frames included
	Node *flow.PlanNode // the node to run
	// Name is the node's name with the path of the WORKFLOW nodes whose
	// subworkflow it runs in: "outer/inner" ("a/b/c" nested); Node.Name
	// for a node of the run's own plan.
	Name   string
	Step   int          // the node execution it belongs to
	Item   int          // 1-based element of a map node, 0 otherwise
	Inputs []flow.Value // resolved inputs, parallel to Node.Inputs
	tok    *token
}

// stale reports whether t is an element of a map that failed, done late:
// its token went on (its error edge) without it, to another step, or
// left the map (a branch that arrived at its join).
func (t *Task) stale() bool {
	return t.Item > 0 && (t.tok.mp == nil || t.tok.step != t.Step)
}

// Input returns the input called name, or null.
func (t *Task) Input(name string) flow.Value {
	for i, in := range t.Node.Inputs {
		if in.Name == name {
			return t.Inputs[i]
		}
	}
	return flow.Null
}

// Machine is the engine core: a pure, deterministic state machine that runs
// one Plan. It does no I/O, starts no goroutines and reads no clock. A
// driver (Runner, or a test) asks it for Ready tasks, carries them out,
// and reports each result with Complete; the Machine routes, applies
// updates and reducers, and records events. A Machine is not safe for
// concurrent use: the driver serialises its calls.
type Machine struct {
	plan    *flow.Plan
	cells   []flow.Value
	root    *frame
	ready   []*Task
	spare   []*Task // the other half of the ready double buffer
	running []*Task
	waiting []*Task
	nextID  int
	step    int
	status  Status
	err     error
	final   *flow.PlanNode
	outputs []flow.Value
	path    []int
	notices []Notice // the run's, in order (Notice)
	// shadowNotices is the length of notices at the delta baseline.
	shadowNotices int
	trace         bool
	gen           uint64 // Readys acknowledged (Advance)
	events        []Event
	seq           int64        // events recorded, with those a Runner adds (Event.Seq)
	shadow        []flow.Value // cells as of the delta baseline (the last Delta or Advance)
	// shadowPath is the length of path at the delta baseline.
	shadowPath int
	// scratch of controlInto
	ctlFrames []*frame
	ctlTokens []*token

	// rootFrame and tok0 are the root frame and the first token, kept in
	// the Machine so that a run's setup allocates them once with it (and
	// not at all when the Machine comes from machinePool).
	rootFrame frame
	tok0      token
	fanFree   []*fanBlock // fan-out blocks free for reuse

	// Subworkflow frames (see subflow.go). A frame is a Machine of its
	// own (plan, cells, tokens, step count) whose tasks live in the
	// lists of the run's machine, top.
	top     *Machine   // the run's machine; nil for the run's machine itself
	up      *Machine   // the machine whose WORKFLOW node this frame runs
	owner   *Task      // that node's task, which the frame completes
	prefix  string     // the path of the frame's nodes: "outer/" ("a/b/" nested)
	names   []string   // the frame's node names with prefix, by node index, made as needed
	attempt int        // the frame's attempt, from 1 (the WORKFLOW node's retries)
	subs    []*Machine // the frames open for this machine's WORKFLOW nodes
	// listed is set once a record (a delta, or a Ready acknowledged)
	// showed the frame whole: the deltas after show what changed since.
	listed bool
	marks  []frameMark // the run's: frames shown by the Ready being made
}

// machinePool keeps Machines of finished runs for later runs: a Machine
// with its cells, path and task buffers is most of what a short run
// allocates. A Machine goes back only when nothing can reach it any more
// (see release); sync.Pool drops what is not reused.
var machinePool sync.Pool

// getMachine returns a Machine ready for a run of plan: from the pool,
// its buffers kept and emptied, or new.
func getMachine(plan *flow.Plan, trace bool) *Machine {
	m, _ := machinePool.Get().(*Machine)
	if m == nil {
		m = &Machine{}
	}
	cells := m.cells
	if cap(cells) >= len(plan.Cells) {
		cells = cells[:len(plan.Cells)]
		clear(cells)
	} else {
		cells = make([]flow.Value, len(plan.Cells))
	}
	path := m.path[:0]
	if cap(path) < len(plan.Nodes) {
		path = make([]int, 0, len(plan.Nodes))
	}
	inbuf := m.tok0.inbuf[:0]
	*m = Machine{
		plan: plan, cells: cells, trace: trace, path: path,
		ready: m.ready[:0], spare: m.spare[:0], running: m.running[:0], waiting: m.waiting[:0],
		ctlFrames: m.ctlFrames[:0], ctlTokens: m.ctlTokens[:0], fanFree: m.fanFree,
		gen: m.gen, // a Ready of the machine's earlier run stays stale
	}
	m.rootFrame = frame{m: m}
	m.root = &m.rootFrame
	m.tok0.inbuf = inbuf
	return m
}

// release returns a Machine whose run has ended, and which nothing holds
// any more, to machinePool. It drops the references its buffers keep.
func (m *Machine) release() {
	for _, b := range [][]*Task{m.ready, m.spare, m.running, m.waiting} {
		clear(b[:cap(b)])
	}
	clear(m.ctlFrames[:cap(m.ctlFrames)])
	clear(m.ctlTokens[:cap(m.ctlTokens)])
	clear(m.tok0.inbuf[:cap(m.tok0.inbuf)])
	clear(m.cells)
	m.plan, m.err, m.final, m.outputs, m.events, m.shadow, m.notices = nil, nil, nil, nil, nil, nil, nil
	clear(m.subs)
	m.subs = nil
	m.rootFrame, m.root = frame{}, nil
	m.tok0 = token{inbuf: m.tok0.inbuf[:0]}
	m.gen++ // a Ready not acknowledged is stale
	machinePool.Put(m)
}

// token is a thread of control: the node it is at and the frame it sees.
// A token moves from node to node; its task and input buffer are reused at
// every step, so a sequential run allocates almost nothing per step.
type token struct {
	node  *flow.PlanNode
	frame *frame
	step  int
	mp    *mapRun
	task  Task
	inbuf []flow.Value
}

// mapRun tracks the elements of a map node in flight.
type mapRun struct {
	items  []flow.Value
	inputs [][]flow.Value // per element
	outs   [][]flow.Value // per element, parallel to node outputs
	next   int
	done   int
	failed bool
	slab   []flow.Value // room for the elements' outputs, cut by keep
	listed bool         // the map is in a record already: dirty is tracked (see mapRun.state)
	dirty  []int        // elements started or finished since the last record
	seen   bool         // eachMap's mark
	// tracked is set once a Ready showed the map: changes are tracked
	// from then on, for the deltas after its Advance.
	tracked bool
}

// touch notes element i as changed for the next record, once the map is
// in one (a run that records nothing tracks nothing).
func (mp *mapRun) touch(i int) {
	if mp.listed || mp.tracked {
		mp.dirty = append(mp.dirty, i)
	}
}

// keep copies one element's outputs into the map's slab, allocating the
// slab (items × outputs values) on first use, so a map keeps its results in
// one allocation and never aliases a caller's buffer. BenchmarkMapRun
// (1,000 elements, two outputs): 2,022 allocations a run, against 3,022
// with a copy per element; TestMapResultsByValue checks the values under
// -race.
func (mp *mapRun) keep(outputs []flow.Value) []flow.Value {
	n := len(outputs)
	if n == 0 {
		return nil
	}
	if len(mp.slab) < n {
		mp.slab = make([]flow.Value, n*(len(mp.items)-mp.done))
	}
	row := mp.slab[:n:n]
	copy(row, outputs)
	mp.slab = mp.slab[n:]
	return row
}

// frame is the state a token sees. The root frame is the run's cells;
// each branch of a fan-out gets a child frame that overlays the variables
// and slots it wrote, so siblings do not see each other's writes until the
// join merges them, in branch order, through the reducers.
type frame struct {
	m      *Machine
	parent *frame
	local  []cellValue // current values of cells written in this frame
	raw    []cellValue // the writes as made, for the merge at the join
	fan    *fanout
}

type cellValue struct {
	cell int
	v    flow.Value
}

type fanout struct {
	edge     *flow.PlanEdge
	parent   *frame
	branches []*frame
	pending  int
	blk      *fanBlock // the memory it lives in; nil for one restored from a state
}

// fanBlock is the memory of one fan-out: the fanout and its branches'
// frames and tokens, made at once. Once the branches have joined nothing
// refers to it, and the machine keeps it for its next fan-out (and, with
// the machine, for later runs), so a fan-out in a loop or a service
// allocates nothing for its branches after the first.
type fanBlock struct {
	fo     fanout
	frames []frame
	toks   []token
	raws   []cellValue
	ptrs   []*frame
}

// maxFanFree bounds the fan-out blocks a machine keeps.
const maxFanFree = 4

// fanBlock returns a block for a fan-out of n branches: a kept one that is
// large enough, or a new one.
func (m *Machine) fanBlock(n int) *fanBlock {
	for i, b := range m.fanFree {
		if cap(b.frames) >= n {
			last := len(m.fanFree) - 1
			m.fanFree[i] = m.fanFree[last]
			m.fanFree[last] = nil
			m.fanFree = m.fanFree[:last]
			b.frames, b.toks, b.raws, b.ptrs = b.frames[:n], b.toks[:n], b.raws[:n], b.ptrs[:n]
			return b
		}
	}
	return &fanBlock{frames: make([]frame, n), toks: make([]token, n), raws: make([]cellValue, n), ptrs: make([]*frame, n)}
}

// Get implements flow.Env.
func (f *frame) Get(cell int) flow.Value {
	if f.parent == nil {
		return f.m.cells[cell]
	}
	for _, l := range f.local {
		if l.cell == cell {
			return l.v
		}
	}
	wrote := false
	for _, w := range f.raw {
		if w.cell == cell {
			wrote = true
			break
		}
	}
	if !wrote {
		return f.parent.Get(cell)
	}
	// The branch's view of a cell it wrote: the parent's value folded with
	// the branch's writes, computed when first read, then kept.
	v := f.parent.Get(cell)
	for _, w := range f.raw {
		if w.cell == cell {
			v = f.m.reduce(cell, v, w.v)
		}
	}
	f.local = append(f.local, cellValue{cell, v})
	return v
}

// NewMachine prepares a run of plan with the given parameters (input_text
// among them). Unknown parameters, missing required ones and values of the
// wrong type are *InputError. Set trace to record events.
func NewMachine(plan *flow.Plan, params map[string]flow.Value, trace bool) (*Machine, error) {
	return newMachine(plan, params, trace, nil, nil)
}

// NewMachineWith is NewMachine with the starting values of variables
// given by opts.Init and updates by opts.Update (RunOptions); opts may be
// nil. A name in Init or Update that is not a variable, or a value of the
// wrong type, is an *InputError with Variable set.
func NewMachineWith(plan *flow.Plan, params map[string]flow.Value, trace bool, opts *RunOptions) (*Machine, error) {
	return newMachine(plan, params, trace, nil, opts)
}

// Carries reports whether a new run in a thread starts with the value a
// variable or slot had at the end of the thread's previous run: all do,
// except those that start from an initial value and have no reducer (a
// per-question counter such as seed 000's rephraseCount). So a variable
// with an append reducer (a conversation's messages) accumulates over the
// thread's runs, and a variable or slot without an initial value (seed
// 003's prior query and page offset) keeps its last value. Parameters and
// node cells never carry.
func Carries(c flow.Cell, hasInitial bool) bool {
	if c.Kind != flow.CellVar && c.Kind != flow.CellSlot {
		return false
	}
	return !hasInitial || !c.Red.IsReplace()
}

// newMachine starts a run; prev, when not nil, holds the cells of the
// thread's state at the end of its previous run (indexed like plan.Cells):
// the variables and slots that Carries start from it, and the first Delta
// is taken against it. opts.Init gives variables their starting values (in
// place of the initial or carried ones) and opts.Update is written to
// variables through their reducers before the first step; opts may be nil.
func newMachine(plan *flow.Plan, params map[string]flow.Value, trace bool, prev []flow.Value, opts *RunOptions) (*Machine, error) {
	var init, updates map[string]flow.Value
	if opts != nil {
		init, updates = opts.Init, opts.Update
	}
	if err := checkVarNames(plan, init, ""); err != nil {
		return nil, err
	}
	if err := checkVarNames(plan, updates, "update"); err != nil {
		return nil, err
	}
	m := getMachine(plan, trace)
	if err := m.setup(params, prev, init, updates); err != nil {
		return nil, err
	}
	m.emit(Event{Type: RunStarted, Changes: m.startValues()})
	m.tok0.node, m.tok0.frame = plan.Nodes[plan.Initial], m.root
	m.start(&m.tok0)
	return m, nil
}

// startValues lists the parameters, variables and slots a new run starts
// with (those not null), for its RunStarted event; nil when m records no
// events.
func (m *Machine) startValues() []NamedValue {
	if !m.trace || m.top != nil {
		return nil
	}
	var out []NamedValue
	for i, c := range m.plan.Cells {
		if c.Kind != flow.CellParam && c.Kind != flow.CellVar && c.Kind != flow.CellSlot {
			continue
		}
		if v := m.cells[i]; v.Kind() != flow.KindNull {
			out = append(out, NamedValue{Name: c.Name, Value: v})
		}
	}
	return out
}

// setup sets the cells of a new run of m.plan: the parameters, and the
// variables and slots (see newMachine).
func (m *Machine) setup(params map[string]flow.Value, prev []flow.Value, init, updates map[string]flow.Value) error {
	plan := m.plan
	for name := range params {
		found := false
		for _, p := range plan.Params {
			if p.Name == name {
				found = true
			}
		}
		if !found {
			var names []string
			for _, p := range plan.Params {
				names = append(names, p.Name)
			}
			return &InputError{Param: name, Err: fmt.Errorf("not a parameter of workflow %s%s", plan.Workflow.Name, flow.Suggest(name, names))}
		}
	}
	for _, p := range plan.Params {
		v, given := params[p.Name]
		switch {
		case given:
		case p.Default != nil:
			var err error
			if v, err = p.Default.Eval(m.root); err != nil {
				return &InputError{Param: p.Name, Err: err}
			}
		case p.Name == flow.InputText:
			v = flow.StringValue("")
		default:
			return &InputError{Param: p.Name, Err: fmt.Errorf("required (type %s) and not given", p.Type)}
		}
		cv, err := flow.Conform(v, p.Type)
		if err != nil {
			return &InputError{Param: p.Name, Err: err}
		}
		m.cells[p.Cell] = cv
	}
	for i := range len(plan.Vars) + len(plan.Slots) {
		var v *flow.PlanVar
		if i < len(plan.Vars) {
			v = &plan.Vars[i]
		} else {
			v = &plan.Slots[i-len(plan.Vars)]
		}
		if x, ok := init[v.Name]; ok && i < len(plan.Vars) {
			cx, err := flow.Conform(x, v.Type)
			if err != nil {
				return &InputError{Param: v.Name, Variable: true, Err: fmt.Errorf("initial value: %w", err)}
			}
			m.cells[v.Cell] = cx
			continue
		}
		if prev != nil && Carries(plan.Cells[v.Cell], v.Default != nil) && !prev[v.Cell].IsNull() {
			m.cells[v.Cell] = prev[v.Cell]
			continue
		}
		if v.Default == nil {
			continue
		}
		x, err := v.Default.Eval(m.root)
		if err != nil {
			return &InputError{Param: v.Name, Err: fmt.Errorf("initial value: %w", err)}
		}
		if x, err = flow.Conform(x, v.Type); err != nil {
			return &InputError{Param: v.Name, Err: fmt.Errorf("initial value: %w", err)}
		}
		m.cells[v.Cell] = x
	}
	for i := range plan.Vars {
		v := &plan.Vars[i]
		if u, ok := updates[v.Name]; ok {
			if _, err := m.write(m.root, v.Cell, u); err != nil {
				return &InputError{Param: v.Name, Variable: true, Err: fmt.Errorf("update: %w", err)}
			}
		}
	}
	if prev != nil {
		m.shadow = slices.Clone(prev)
	}
	return nil
}

// checkVarNames returns an *InputError for the first name of vals, in
// sorted order, that is not a variable of plan, listing the variables (and
// saying so when the name is a parameter). what, when not empty, prefixes
// the message ("update").
func checkVarNames(plan *flow.Plan, vals map[string]flow.Value, what string) error {
	if len(vals) == 0 {
		return nil
	}
	var names []string
	for _, v := range plan.Vars {
		names = append(names, v.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		if slices.Contains(names, name) {
			continue
		}
		known := "it has none"
		if len(names) > 0 {
			known = "variables: " + strings.Join(names, ", ")
		}
		var msg string
		if slices.ContainsFunc(plan.Params, func(p flow.PlanVar) bool { return p.Name == name }) {
			msg = fmt.Sprintf("not a variable of workflow %s (%s); %s is a parameter", plan.Workflow.Name, known, name)
		} else {
			msg = fmt.Sprintf("not a variable of workflow %s%s (%s)", plan.Workflow.Name, flow.Suggest(name, names), known)
		}
		if what != "" {
			msg = what + ": " + msg
		}
		return &InputError{Param: name, Variable: true, Err: errors.New(msg)}
	}
	return nil
}

// Plan returns the plan the machine runs.
func (m *Machine) Plan() *flow.Plan { return m.plan }

// Status returns the run's status.
func (m *Machine) Status() Status { return m.status }

// Err returns why the run failed, or nil.
func (m *Machine) Err() error { return m.err }

// Steps returns the number of node executions so far.
func (m *Machine) Steps() int { return m.step }

// Final returns the final node that ended the run and its outputs (nil
// unless Completed).
func (m *Machine) Final() (*flow.PlanNode, []flow.Value) { return m.final, m.outputs }

// Notices returns the run's notices so far, in order (nil if none).
func (m *Machine) Notices() []Notice { return slices.Clip(m.notices) }

// Path returns the names of the nodes executed, in order.
func (m *Machine) Path() []string {
	out := make([]string, len(m.path))
	for i, n := range m.path {
		out[i] = m.plan.Nodes[n].Name
	}
	return out
}

// Value returns the current value of a root-frame variable, parameter or
// slot by name.
func (m *Machine) Value(name string) (flow.Value, bool) {
	for i, c := range m.plan.Cells {
		if c.Name == name && c.Kind <= flow.CellSlot {
			return m.cells[i], true
		}
	}
	return flow.Null, false
}

// Vars returns the variables' current values, in declaration order.
func (m *Machine) Vars() []NamedValue {
	out := make([]NamedValue, len(m.plan.Vars))
	for i, v := range m.plan.Vars {
		out[i] = NamedValue{Name: v.Name, Value: m.cells[v.Cell]}
	}
	return out
}

// TakeTasks returns the tasks to carry out now and forgets them; each must
// be reported back with Complete. The returned slice is valid until the
// next call of TakeTasks or Ready. It is the part of Ready a driver that
// keeps no records needs (Runner's, without Threads): it computes no delta.
func (m *Machine) TakeTasks() []*Task {
	r := m.ready
	m.ready = m.spare[:0]
	m.spare = r
	m.running = append(m.running, r...)
	return r
}

// Waiting returns the tasks suspended by an Interrupt, in the order they
// suspended.
func (m *Machine) Waiting() []*Task { return m.waiting }

// Events returns the events recorded since the last call and forgets them.
func (m *Machine) Events() []Event {
	ev := m.events
	m.events = nil
	return ev
}

// Busy reports whether tasks are ready or running.
func (m *Machine) Busy() bool { return len(m.ready) > 0 || len(m.running) > 0 }

func (m *Machine) emit(e Event) {
	if m.top != nil {
		m.frameEvent(e)
		return
	}
	if !m.trace {
		return
	}
	m.seq++
	e.Seq = m.seq
	m.events = append(m.events, e)
}

func (m *Machine) fail(err error) {
	m.end(Failed, err, RunFailed)
}

// end ends a run that has not ended with status s and error err, and
// records the event of type et.
func (m *Machine) end(s Status, err error, et EventType) {
	if m.status.Ended() {
		return
	}
	m.status = s
	m.err = err
	m.ready = m.ready[:0]
	m.emit(Event{Type: et, Step: m.step, Error: err.Error()})
	m.closeFramesOf(nil)
	if m.up != nil {
		m.up.frameEnded(m)
	}
}

func named(names []string, vals []flow.Value) []NamedValue {
	out := make([]NamedValue, len(vals))
	for i, v := range vals {
		out[i] = NamedValue{Name: names[i], Value: v}
	}
	return out
}

func inputNames(pn *flow.PlanNode) []string {
	out := make([]string, len(pn.Inputs))
	for i, in := range pn.Inputs {
		out[i] = in.Name
	}
	return out
}

func outputNames(pn *flow.PlanNode) []string {
	out := make([]string, len(pn.Outputs))
	for i, o := range pn.Outputs {
		out[i] = o.Name
	}
	return out
}

// start dispatches the node a token is at.
func (m *Machine) start(t *token) {
	if m.status != Running {
		return
	}
	pn := t.node
	if m.step >= m.plan.MaxSteps {
		m.fail(&LimitError{Limit: LimitMaxSteps, Value: strconv.Itoa(m.plan.MaxSteps), Node: pn.Name, Step: m.step + 1})
		return
	}
	m.step++
	t.step = m.step
	m.path = append(m.path, pn.Index)
	if pn.Node.Type == flow.End {
		m.emit(Event{Type: NodeStarted, Step: t.step, Node: pn.Name})
		m.succeed(t, nil)
		return
	}
	if pn.Map == nil {
		in, err := m.inputs(t, pn)
		if err != nil {
			m.nodeFailed(t, 0, err)
			return
		}
		m.dispatch(t, 0, in)
		return
	}
	lv, err := pn.Map.Eval(t.frame)
	if err != nil {
		m.nodeFailed(t, 0, fmt.Errorf("map: %w", err))
		return
	}
	if lv.Kind() != flow.KindList && !lv.IsNull() {
		m.nodeFailed(t, 0, fmt.Errorf("map: %s is %s, not a List", pn.Map.Expr, lv.Kind()))
		return
	}
	items := lv.List()
	t.mp = &mapRun{items: items, inputs: make([][]flow.Value, len(items)), outs: make([][]flow.Value, len(items))}
	m.emit(Event{Type: NodeStarted, Step: t.step, Node: pn.Name, Inputs: []NamedValue{{Name: "map", Value: lv}}})
	if len(items) == 0 {
		m.finishMap(t)
		return
	}
	m.fillMap(t)
}

// fillMap dispatches map elements up to the node's parallelism.
func (m *Machine) fillMap(t *token) {
	pn, mp := t.node, t.mp
	limit := pn.Node.Parallelism
	if limit <= 0 {
		limit = 8
	}
	for mp.next < len(mp.items) && mp.next-mp.done < limit && !mp.failed {
		i := mp.next
		mp.next++
		m.cells[pn.ItemCell] = mp.items[i]
		in, err := m.inputs(t, pn)
		if err != nil {
			mp.failed = true
			m.closeFramesOf(t)
			m.nodeFailed(t, i+1, err)
			return
		}
		mp.inputs[i] = in
		mp.touch(i)
		m.dispatch(t, i+1, in)
	}
}

func (m *Machine) inputs(t *token, pn *flow.PlanNode) ([]flow.Value, error) {
	f := t.frame
	var in []flow.Value
	if pn.Map == nil && cap(t.inbuf) >= len(pn.Inputs) {
		in = t.inbuf[:len(pn.Inputs)]
	} else {
		in = make([]flow.Value, len(pn.Inputs))
		if pn.Map == nil {
			t.inbuf = in
		}
	}
	for i, x := range pn.Inputs {
		v, err := x.Prog.Eval(f)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", x.Name, err)
		}
		in[i] = v
		if pn.Map == nil {
			m.cells[x.Cell] = v
		}
	}
	return in, nil
}

func (m *Machine) dispatch(t *token, item int, in []flow.Value) {
	tm, name := m, t.node.Name
	if m.top != nil {
		tm, name = m.top, m.nameOf(t.node)
	}
	tm.nextID++
	var task *Task
	if item == 0 {
		task = &t.task
		*task = Task{ID: tm.nextID, Node: t.node, Name: name, Step: t.step, Inputs: in, tok: t}
	} else {
		task = &Task{ID: tm.nextID, Node: t.node, Name: name, Step: t.step, Item: item, Inputs: in, tok: t}
	}
	if m.trace && item == 0 {
		m.emit(Event{Type: NodeStarted, Step: t.step, Node: t.node.Name, Task: task.ID, Inputs: named(inputNames(t.node), in)})
	} else if m.trace {
		m.emit(Event{Type: NodeStarted, Step: t.step, Node: t.node.Name, Task: task.ID, Item: item, Inputs: named(inputNames(t.node), in)})
	}
	if t.node.Node.Type == flow.Subflow {
		m.openFrame(task, 1)
		return
	}
	tm.ready = append(tm.ready, task)
}

// Complete reports the result of a task: its outputs (parallel to the
// node's outputs) or its error. The machine copies what it keeps of
// outputs: the caller may reuse the slice once Complete returns. An
// *Interrupt error suspends the task until Resume. Results for unknown
// tasks, or after the run ended, are ignored and reported as an error.
func (m *Machine) Complete(id int, outputs []flow.Value, err error) error {
	var t *Task
	for i, r := range m.running {
		if r.ID == id {
			t = r
			last := len(m.running) - 1
			m.running[i] = m.running[last]
			m.running[last] = nil
			m.running = m.running[:last]
			break
		}
	}
	if t == nil {
		return newKindError(KindMismatch, fmt.Sprintf("engine: task %d is not running", id))
	}
	// The machine the task is of: m, or a subworkflow frame's, which
	// ended if the frame did (its node failed, say).
	fm := t.tok.frame.m
	if m.status.Ended() || fm.status.Ended() {
		return nil
	}
	if in, ok := isInterrupt(err); ok {
		m.waiting = append(m.waiting, t)
		m.emit(Event{Type: RunWaiting, Step: t.Step, Node: t.Name, Task: t.ID, Item: t.Item, Data: in.Question})
		m.settle()
		return nil
	}
	fm.complete(t, outputs, err)
	m.settle()
	return nil
}

// Resume completes a task suspended by an Interrupt with the person's
// answer as the node's outputs (parallel to its declared outputs), which
// it copies as Complete does.
func (m *Machine) Resume(id int, outputs []flow.Value) error {
	for i, t := range m.waiting {
		if t.ID == id {
			m.waiting = append(m.waiting[:i], m.waiting[i+1:]...)
			if m.status == Waiting {
				m.status = Running
			}
			t.tok.frame.m.complete(t, outputs, nil)
			m.settle()
			return nil
		}
	}
	return newKindError(KindMismatch, fmt.Sprintf("engine: task %d is not waiting", id))
}

func (m *Machine) settle() {
	if m.status == Running && len(m.ready) == 0 && len(m.running) == 0 && len(m.waiting) > 0 {
		m.status = Waiting
	}
}

func (m *Machine) complete(task *Task, outputs []flow.Value, err error) {
	t, pn := task.tok, task.Node
	if task.stale() {
		return
	}
	if err == nil {
		outputs, err = m.conform(pn, outputs)
	}
	if t.mp == nil {
		if err != nil {
			m.nodeFailed(t, 0, err)
			return
		}
		m.succeed(t, outputs)
		return
	}
	mp := t.mp
	if mp.failed {
		return
	}
	if err != nil {
		mp.failed = true
		m.closeFramesOf(t) // of the map's other elements
		m.nodeFailed(t, task.Item, err)
		return
	}
	// The caller may reuse outputs once Complete returns (a worker's
	// inline slots are): keep a copy.
	mp.outs[task.Item-1] = mp.keep(outputs)
	mp.touch(task.Item - 1)
	mp.done++
	if m.trace {
		m.emit(Event{Type: NodeFinished, Step: t.step, Node: pn.Name, Task: task.ID, Item: task.Item, Outputs: named(outputNames(pn), outputs)})
	}
	if mp.done == len(mp.items) {
		m.finishMap(t)
		return
	}
	m.fillMap(t)
}

func (m *Machine) conform(pn *flow.PlanNode, outputs []flow.Value) ([]flow.Value, error) {
	if len(outputs) != len(pn.Outputs) {
		return nil, fmt.Errorf("action returned %d outputs, node %s declares %d", len(outputs), pn.Name, len(pn.Outputs))
	}
	for i, o := range pn.Outputs {
		if k := outputs[i].Kind(); k == o.Type.Kind && k != flow.KindList && k != flow.KindNull && k != flow.KindFloat && k != flow.KindObject {
			continue // a scalar of the declared kind: nothing to check (a Float or an Object may hold a NaN)
		}
		v, err := flow.Conform(outputs[i], o.Type)
		if err != nil {
			if outputs[i].IsNull() {
				err = fmt.Errorf("missing (want %s)", o.Type)
			}
			return nil, &OutputError{Node: pn.Name, Field: o.Name, Err: err}
		}
		outputs[i] = v
	}
	return outputs, nil
}

func (m *Machine) finishMap(t *token) {
	pn, mp := t.node, t.mp
	outs := make([]flow.Value, len(pn.Outputs))
	for j := range pn.Outputs {
		col := make([]flow.Value, len(mp.items))
		for i := range mp.items {
			col[i] = mp.outs[i][j]
		}
		outs[j] = flow.ListValue(col...)
	}
	for j, in := range pn.Inputs {
		col := make([]flow.Value, len(mp.items))
		for i := range mp.items {
			col[i] = mp.inputs[i][j]
		}
		m.cells[in.Cell] = flow.ListValue(col...)
	}
	t.mp = nil
	m.succeed(t, outs)
}

// succeed records a node's outputs, runs its set assignments and routes on.
func (m *Machine) succeed(t *token, outputs []flow.Value) {
	pn := t.node
	for i, o := range pn.Outputs {
		m.cells[o.Cell] = outputs[i]
	}
	m.cells[pn.ErrCell] = flow.Null
	var changes []NamedValue
	if len(pn.Set) > 0 {
		var err error
		if changes, err = m.assign(t.frame, pn.Set, nil); err != nil {
			m.nodeFailed(t, 0, fmt.Errorf("set: %w", err))
			return
		}
	}
	if m.trace {
		m.emit(Event{Type: NodeFinished, Step: t.step, Node: pn.Name, Outputs: named(outputNames(pn), outputs), Changes: changes})
	}
	if pn.Final {
		m.status = Completed
		m.final = pn
		m.outputs = append([]flow.Value(nil), outputs...)
		m.ready = m.ready[:0]
		m.emit(Event{Type: RunFinished, Step: t.step, Node: pn.Name, Outputs: named(outputNames(pn), outputs)})
		m.closeFramesOf(nil) // of branches still at work
		if m.up != nil {
			m.up.frameEnded(m)
		}
		return
	}
	for _, e := range pn.Edges {
		if e.Cond != nil {
			ok, err := e.Cond.EvalBool(t.frame)
			if err != nil {
				m.fail(&NodeError{Node: pn.Name, Step: t.step, Err: fmt.Errorf("condition of edge to %s: %w", targetNames(m.plan, e), err)})
				return
			}
			if !ok {
				continue
			}
		}
		m.take(t, e)
		return
	}
	m.fail(m.noRoute(t))
}

func (m *Machine) noRoute(t *token) error {
	pn := t.node
	e := &NoRouteError{Node: pn.Name, Step: t.step}
	for _, edge := range pn.Edges {
		e.Tried = append(e.Tried, RouteTry{To: targetNames(m.plan, edge), Cond: edge.Cond.Expr.String(), Values: edge.Cond.Explain(t.frame)})
	}
	return e
}

func targetNames(p *flow.Plan, e *flow.PlanEdge) string {
	names := make([]string, len(e.To))
	for i, t := range e.To {
		names[i] = p.Nodes[t].Name
	}
	return strings.Join(names, ", ")
}

// nodeFailed takes the node's first matching error edge, or fails the run.
func (m *Machine) nodeFailed(t *token, item int, cause error) {
	pn := t.node
	m.cells[pn.ErrCell] = flow.StringValue(cause.Error())
	m.emit(Event{Type: NodeFailed, Step: t.step, Node: pn.Name, Item: item, Error: cause.Error()})
	for _, e := range pn.OnError {
		if e.Cond != nil {
			ok, err := e.Cond.EvalBool(t.frame)
			if err != nil {
				m.fail(&NodeError{Node: pn.Name, Step: t.step, Err: fmt.Errorf("condition of error edge to %s: %w", targetNames(m.plan, e), err)})
				return
			}
			if !ok {
				continue
			}
		}
		t.mp = nil
		m.take(t, e)
		return
	}
	m.fail(&NodeError{Node: pn.Name, Step: t.step, Item: item, Err: cause})
}

// assign evaluates every assignment first, then writes them in order, so
// that `a = b; b = a` swaps. It returns the changed values.
func (m *Machine) assign(f *frame, as []flow.PlanAssign, into []NamedValue) ([]NamedValue, error) {
	var buf [4]flow.Value
	vals := buf[:0]
	for _, a := range as {
		v, err := a.Prog.Eval(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name, err)
		}
		vals = append(vals, v)
	}
	for i, a := range as {
		nv, err := m.write(f, a.Cell, vals[i])
		if err != nil {
			return nil, err
		}
		if m.trace {
			into = append(into, NamedValue{Name: a.Name, Value: nv})
		}
	}
	return into, nil
}

// write stores a value through the cell's reducer. The written value is
// checked against the cell's type first (for an append, only what is
// appended), so a growing list is not checked again at every write and a
// reducer never sees a value of the wrong type. In a branch frame the
// write is only recorded; the branch's view is folded when read (see
// frame.Get) and the parent's at the join. It returns the cell's new value
// as the frame sees it, for events.
func (m *Machine) write(f *frame, cell int, v flow.Value) (flow.Value, error) {
	cl := &m.plan.Cells[cell]
	want := cl.Type
	if cl.Red.Kind == flow.ReduceAppend && v.Kind() != flow.KindList {
		want = cl.Type.ElemType()
	}
	if k := v.Kind(); k != want.Kind || k == flow.KindList || k == flow.KindNull || k == flow.KindFloat || k == flow.KindObject {
		var err error
		if v, err = flow.Conform(v, want); err != nil {
			if cl.Red.Kind == flow.ReduceAppend {
				return flow.Null, fmt.Errorf("%s %s: appending: %w", kindName(cl.Kind), cl.Name, err)
			}
			return flow.Null, fmt.Errorf("%s %s: %w", kindName(cl.Kind), cl.Name, err)
		}
	}
	if f.parent != nil {
		if !cl.Red.Kind.Builtin() {
			// A reducer of the caller's may fail (a built-in cannot on a
			// value of the cell's type): find out now, not when the
			// branch's view is folded.
			if _, err := cl.Reducer(f.Get(cell), v); err != nil {
				return flow.Null, fmt.Errorf("%s: %w", cl.Name, err)
			}
		}
		f.raw = append(f.raw, cellValue{cell, v})
		for i, l := range f.local {
			if l.cell == cell {
				f.local = append(f.local[:i], f.local[i+1:]...)
				break
			}
		}
		if m.trace {
			return f.Get(cell), nil
		}
		return v, nil
	}
	nv := v
	if !cl.Red.IsReplace() {
		var err error
		if nv, err = cl.Reducer(m.cells[cell], v); err != nil {
			return flow.Null, fmt.Errorf("%s: %w", cl.Name, err)
		}
	}
	m.cells[cell] = nv
	return nv, nil
}

// reduce combines a cell's current value with a written one, for folding
// a branch's view: write has already checked that the reduction succeeds.
func (m *Machine) reduce(cell int, old, v flow.Value) flow.Value {
	cl := &m.plan.Cells[cell]
	if cl.Red.IsReplace() {
		return v
	}
	nv, err := cl.Reducer(old, v)
	if err != nil {
		return old // unreachable: write checked this reduction
	}
	return nv
}

func kindName(k flow.CellKind) string {
	switch k {
	case flow.CellSlot:
		return "slot"
	case flow.CellParam:
		return "parameter"
	}
	return "variable"
}

// take applies an edge's updates and overrides and moves the token on.
func (m *Machine) take(t *token, e *flow.PlanEdge) {
	pn := t.node
	var changes []NamedValue
	var err error
	if len(e.Updates) > 0 {
		if changes, err = m.assign(t.frame, e.Updates, changes); err != nil {
			m.fail(&NodeError{Node: pn.Name, Step: t.step, Err: fmt.Errorf("update on edge to %s: %w", targetNames(m.plan, e), err)})
			return
		}
	}
	if len(e.Overrides) > 0 {
		if changes, err = m.assign(t.frame, e.Overrides, changes); err != nil {
			m.fail(&NodeError{Node: pn.Name, Step: t.step, Err: fmt.Errorf("override on edge to %s: %w", targetNames(m.plan, e), err)})
			return
		}
	}
	if m.trace {
		ev := Event{Type: EdgeTaken, Step: t.step, From: pn.Name, OnError: e.Edge.OnError, Changes: changes}
		for _, to := range e.To {
			ev.To = append(ev.To, m.plan.Nodes[to].Name)
		}
		if e.Cond != nil {
			ev.Cond = e.Cond.Expr.String()
		}
		m.emit(ev)
	}
	if len(e.To) == 1 {
		m.arrive(t, t.frame, m.plan.Nodes[e.To[0]])
		return
	}
	n := len(e.To)
	if m.top == nil {
		m.ready = slices.Grow(m.ready, n) // the branches' tasks, at once
	}
	blk := m.fanBlock(n)
	fo := &blk.fo
	*fo = fanout{edge: e, parent: t.frame, pending: n, branches: blk.ptrs, blk: blk}
	for i := range blk.frames {
		// Room for one write per branch in raws; more grow on their own.
		blk.frames[i] = frame{m: m, parent: t.frame, fan: fo, raw: blk.raws[i : i : i+1]}
		blk.ptrs[i] = &blk.frames[i]
	}
	for i, to := range e.To {
		if m.status != Running {
			return
		}
		m.arrive(&blk.toks[i], blk.ptrs[i], m.plan.Nodes[to])
	}
}

// arrive moves a thread of control in frame f to node pn: into the node,
// or, if pn is the join of f's fan-out, into the join's wait. t is the
// token to move, or nil for a new one.
func (m *Machine) arrive(t *token, f *frame, pn *flow.PlanNode) {
	for g := f; g.fan != nil; g = g.fan.parent {
		if g.fan.edge.Join != pn.Index {
			continue
		}
		// This branch (and any fan-out nested inside it that joins at
		// the same node) is done.
		fo := g.fan
		fo.pending--
		if fo.pending > 0 {
			return
		}
		if err := m.merge(fo); err != nil {
			m.fail(&NodeError{Node: pn.Name, Step: m.step, Err: fmt.Errorf("merging parallel branches: %w", err)})
			return
		}
		parent := fo.parent
		if fo.blk != nil && len(m.fanFree) < maxFanFree {
			// Every branch has arrived: nothing refers to the block.
			m.fanFree = append(m.fanFree, fo.blk)
		}
		m.start(&token{node: pn, frame: parent})
		return
	}
	if t == nil {
		t = &token{}
	}
	t.node, t.frame, t.mp = pn, f, nil
	m.start(t)
}

// merge writes the branches' writes into the fan-out's parent frame, in
// branch declaration order. Appends to one list from many branches are
// gathered and written once, so a join of n branches costs O(n), not O(n²).
func (m *Machine) merge(fo *fanout) error {
	type pending struct {
		cell  int
		elems []flow.Value
	}
	var appends []pending // few cells: a slice beats a map
	for _, b := range fo.branches {
		for _, w := range b.raw {
			if m.plan.Cells[w.cell].Red.Kind != flow.ReduceAppend {
				if _, err := m.write(fo.parent, w.cell, w.v); err != nil {
					return err
				}
				continue
			}
			i := 0
			for i < len(appends) && appends[i].cell != w.cell {
				i++
			}
			if i == len(appends) {
				appends = append(appends, pending{cell: w.cell, elems: make([]flow.Value, 0, len(fo.branches))})
			}
			if w.v.Kind() == flow.KindList {
				appends[i].elems = append(appends[i].elems, w.v.List()...)
			} else {
				appends[i].elems = append(appends[i].elems, w.v)
			}
		}
	}
	for _, p := range appends {
		if _, err := m.write(fo.parent, p.cell, flow.ListValue(p.elems...)); err != nil {
			return err
		}
	}
	return nil
}
