package flow

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// CellKind says what a state cell holds.
type CellKind uint8

// The cell kinds.
const (
	CellParam  CellKind = iota // a run parameter (input_text is cell 0)
	CellVar                    // a variable
	CellSlot                   // a slot, set by edge overrides
	CellInput                  // the last resolved input of a node
	CellOutput                 // the last output of a node
	CellError                  // the last error message of a node
	CellItem                   // the current element of a map node
)

// Cell describes one cell of run state.
type Cell struct {
	Name    string // as the user reads it: "rephraseCount", "retrieve.query"
	Kind    CellKind
	Type    Type
	Node    int        // owning node index for node cells, -1 otherwise
	Reducer Reducer    // for variables and slots
	Red     ReducerRef // which reducer Reducer is (ReduceReplace when none was declared)
}

// Reducer combines the current value of a variable with a written value.
type Reducer func(old, update Value) (Value, error)

// Plan is a checked, compiled workflow: what the engine runs. A Plan is
// immutable and safe for concurrent use by many runs.
type Plan struct {
	Workflow *Workflow
	Cells    []Cell
	Params   []PlanVar // cell 0 is input_text
	Vars     []PlanVar
	Slots    []PlanVar // declared and implicit slots; Default is set for declared ones only
	Nodes    []*PlanNode
	Initial  int
	MaxSteps int
	MaxTime  time.Duration
	Warnings Diagnostics // what Compile warned about
}

// Param returns the parameter called name, or nil.
func (p *Plan) Param(name string) *PlanVar { return findPlanVar(p.Params, name) }

// Var returns the variable called name, or nil.
func (p *Plan) Var(name string) *PlanVar { return findPlanVar(p.Vars, name) }

func findPlanVar(vs []PlanVar, name string) *PlanVar {
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return nil
}

// PlanVar is a compiled parameter or variable.
type PlanVar struct {
	Name    string
	Cell    int
	Type    Type
	Default *Program // nil: null, or required for a parameter
}

// PlanNode is a compiled node.
type PlanNode struct {
	Index    int
	Name     string
	Node     *Node
	Inputs   []PlanInput
	Outputs  []PlanOutput
	ErrCell  int
	Set      []PlanAssign
	Edges    []*PlanEdge // routing edges, in declaration order
	OnError  []*PlanEdge // error edges, in declaration order
	Final    bool
	Map      *Program // nil unless a map node
	ItemCell int      // cell of the map element, -1 if none
	Sub      *Plan    // for WORKFLOW nodes
	// Fallback, when not nil, is what the node completes with when it
	// fails after its retries: the workflow asked for it.
	Fallback *PlanFallback
}

// PlanInput is a compiled node input.
type PlanInput struct {
	Name string
	Cell int // the node field cell recording the last value
	Prog *Program
}

// PlanOutput is a node output and the cell that records it.
type PlanOutput struct {
	Name string
	Type Type // the declared type (for a map node, the per-element type)
	Cell int
}

// PlanAssign is a compiled write to a variable or slot.
type PlanAssign struct {
	Name string
	Cell int
	Prog *Program
}

// PlanEdge is a compiled edge.
type PlanEdge struct {
	Index     int // index in Workflow.Edges
	Edge      *Edge
	From      int
	To        []int
	Join      int // -1 unless a fan-out
	Cond      *Program
	Updates   []PlanAssign
	Overrides []PlanAssign
}

// CompileOptions adjust Compile.
type CompileOptions struct {
	// HasAction reports whether an action name can be carried out; nil
	// skips the check. Actions bound in Workflow.Bindings always exist.
	HasAction func(name string) bool
	// Reducers adds named reducers to the built-in ones; a variable
	// declared with one has a ReduceCustom reducer. A name here that is
	// also a built-in's replaces the built-in.
	Reducers map[string]Reducer
	// Functions adds expression functions to the built-in ones (a
	// built-in of the same name wins).
	Functions map[string]*ExprFunc
	// BindingReads returns the names a binding's templates read: the
	// placeholders of an LLM prompt, such as "question" or
	// "retrieve.query". A name that a node calling the binding does not
	// declare as an input (nor as an output) becomes an implicit input of
	// that node, evaluated in the node's scope as if it were declared
	// `name: name`, so a prompt can read the run's values (input_text, a
	// variable, another node's field) without the node passing them. A
	// name that resolves to nothing is an error at the binding's position.
	// Nil adds no inputs.
	BindingReads func(b *Binding) []string
	// OutputsFromInputs reports whether an action sets a node's outputs
	// from its inputs, in order: the first output takes the first input,
	// and so on (the built-in "pass", action.OutputsFromInputs). A node
	// calling such an action (not bound in source) is then checked: it
	// needs an input for each output, and each input's static type must
	// be assignable to its output's declared type. Nil: no action does.
	OutputsFromInputs func(action string) bool
}

// Compile checks w and compiles it into a Plan. It returns every problem it
// finds; the Plan is nil when any is an error. Warnings are also kept in
// Plan.Warnings.
func Compile(w *Workflow, opts *CompileOptions) (*Plan, Diagnostics) {
	return compileWith(w, opts, nil)
}

// compileWith compiles w inside the workflows of outer (for WORKFLOW nodes),
// which it must not contain.
func compileWith(w *Workflow, opts *CompileOptions, outer []*Workflow) (*Plan, Diagnostics) {
	if opts == nil {
		opts = &CompileOptions{}
	}
	c := &planner{w: w, opts: opts, p: &Plan{Workflow: w}, nodeIdx: map[string]int{}, names: map[string]int{}, outer: outer}
	c.compile()
	c.diags.Sort()
	if c.diags.HasErrors() {
		return nil, c.diags
	}
	c.p.Warnings = c.diags.Warnings()
	return c.p, c.diags
}

type planner struct {
	w       *Workflow
	opts    *CompileOptions
	p       *Plan
	diags   Diagnostics
	nodeIdx map[string]int
	names   map[string]int               // variable, parameter and slot names -> cell
	outer   []*Workflow                  // the workflows this one is a subworkflow of
	reads   map[*PlanNode]map[string]Pos // implicit inputs read by bindings' templates (addReads), and where
}

func (c *planner) errorf(at Pos, code, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: at, Severity: Error, Code: code, Msg: fmt.Sprintf(format, args...)})
}

func (c *planner) warnf(at Pos, code, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: at, Severity: Warning, Code: code, Msg: fmt.Sprintf(format, args...)})
}

func (c *planner) cell(cl Cell) int {
	c.p.Cells = append(c.p.Cells, cl)
	return len(c.p.Cells) - 1
}

// reducer resolves a variable's reducer: a name in CompileOptions.Reducers
// is that reducer (even the name of a built-in), any other name must be a
// built-in whose type rule the variable's type t meets.
func (c *planner) reducer(ref ReducerRef, t Type, at Pos, owner string) (Reducer, ReducerRef) {
	name := ref.String()
	if r, ok := c.opts.Reducers[name]; ok && name != "" {
		return r, CustomReducer(name)
	}
	if !ref.Kind.Builtin() {
		c.errorf(at, "unknown-name", "%s: unknown reducer %q%s", owner, name, suggest(name, BuiltinReducerNames()))
		return replaceReducer, ref
	}
	if !ref.Kind.Accepts(t) {
		c.errorf(at, "type-mismatch", "%s: reducer %s needs %s, not %s", owner, ref.Kind, builtinReducers[ref.Kind].needs, t)
	}
	return builtinReducers[ref.Kind].fn, ReducerRef{Kind: ref.Kind}
}

func (c *planner) declare(v *Var, kind CellKind, what string) int {
	if v.Name == "" {
		c.errorf(v.Pos, "syntax", "%s without a name", what)
		return -1
	}
	if prev, ok := c.names[v.Name]; ok {
		c.errorf(v.Pos, "duplicate", "%s %q is already declared as a %s", what, v.Name, kindWord(c.p.Cells[prev].Kind))
		return -1
	}
	if _, clash := c.nodeIdx[v.Name]; clash {
		c.errorf(v.Pos, "duplicate", "%s %q has the name of a node; %s.x would be ambiguous", what, v.Name, v.Name)
	}
	t := v.Type
	if t.IsZero() {
		t = TAny
	}
	red, ref := c.reducer(v.Reducer, t, v.Pos, what+" "+v.Name)
	id := c.cell(Cell{Name: v.Name, Kind: kind, Type: t, Node: -1, Reducer: red, Red: ref})
	c.names[v.Name] = id
	return id
}

func kindWord(k CellKind) string {
	switch k {
	case CellParam:
		return "parameter"
	case CellVar:
		return "variable"
	case CellSlot:
		return "slot"
	}
	return "node field"
}

func (c *planner) compile() {
	w, p := c.w, c.p
	// Cell 0: the workflow input.
	p.Params = append(p.Params, PlanVar{Name: InputText, Cell: c.declare(&Var{Name: InputText, Type: TString}, CellParam, "parameter"), Type: TString})
	for _, v := range w.Params {
		if v.Name == InputText {
			if !v.Type.IsZero() && v.Type.Kind != KindString {
				c.errorf(v.Pos, "type-mismatch", "parameter input_text is the workflow input and must be a String, not %s", v.Type)
			}
			continue
		}
		if id := c.declare(v, CellParam, "parameter"); id >= 0 {
			p.Params = append(p.Params, PlanVar{Name: v.Name, Cell: id, Type: c.p.Cells[id].Type})
		}
	}
	for _, v := range w.Vars {
		if id := c.declare(v, CellVar, "variable"); id >= 0 {
			p.Vars = append(p.Vars, PlanVar{Name: v.Name, Cell: id, Type: c.p.Cells[id].Type})
		}
	}
	for _, v := range w.Slots {
		if id := c.declare(v, CellSlot, "slot"); id >= 0 {
			p.Slots = append(p.Slots, PlanVar{Name: v.Name, Cell: id, Type: c.p.Cells[id].Type})
		}
	}

	// Nodes and their field cells. A duplicate node is left out of the plan,
	// so plan indices (i) count the nodes kept, not w.Nodes.
	for _, n := range w.Nodes {
		if n.Name == "" {
			c.errorf(n.Pos, "syntax", "node without a name")
		}
		if _, dup := c.nodeIdx[n.Name]; dup {
			if n.Name != "" {
				c.errorf(n.Pos, "duplicate", "node %q is declared twice", n.Name)
			}
			continue
		}
		i := len(p.Nodes)
		if id, clash := c.names[n.Name]; clash {
			c.errorf(n.Pos, "duplicate", "node %q has the name of a %s; node fields (%s.x) would be ambiguous", n.Name, kindWord(c.p.Cells[id].Kind), n.Name)
		}
		c.nodeIdx[n.Name] = i
		pn := &PlanNode{Index: i, Name: n.Name, Node: n, ItemCell: -1}
		p.Nodes = append(p.Nodes, pn)
		seen := map[string]bool{}
		for _, in := range n.Inputs {
			if seen[in.Name] {
				c.errorf(in.Pos, "duplicate", "node %s: input %q is given twice", n.Name, in.Name)
				continue
			}
			seen[in.Name] = true
			pn.Inputs = append(pn.Inputs, PlanInput{Name: in.Name, Cell: c.cell(Cell{Name: n.Name + "." + in.Name, Kind: CellInput, Type: TAny, Node: i})})
		}
		c.addReads(pn, seen)
		outSeen := map[string]bool{}
		for _, out := range n.Outputs {
			if outSeen[out.Name] {
				c.errorf(out.Pos, "duplicate", "node %s: output %q is declared twice", n.Name, out.Name)
				continue
			}
			outSeen[out.Name] = true
			if seen[out.Name] {
				c.errorf(out.Pos, "duplicate", "node %s: %q is both an input and an output; %s.%s would be ambiguous", n.Name, out.Name, n.Name, out.Name)
			}
			t := out.Type
			if t.IsZero() {
				t = TAny
			}
			ct := t
			if n.Map != nil {
				ct = ListOf(t)
			}
			pn.Outputs = append(pn.Outputs, PlanOutput{Name: out.Name, Type: t, Cell: c.cell(Cell{Name: n.Name + "." + out.Name, Kind: CellOutput, Type: ct, Node: i})})
		}
		pn.ErrCell = c.cell(Cell{Name: n.Name + ".error", Kind: CellError, Type: TString, Node: i})
		if n.Map != nil {
			as := n.As
			if as == "" {
				as = "item"
			}
			pn.ItemCell = c.cell(Cell{Name: as, Kind: CellItem, Type: TAny, Node: i})
		}
	}

	// Initial node: it receives the workflow input.
	if w.Initial == "" {
		if len(w.Nodes) > 0 {
			c.errorf(w.Pos, "missing", "workflow %s has no initial node", w.Name)
		} else {
			c.errorf(w.Pos, "missing", "workflow %s has no nodes", w.Name)
		}
	} else if i, ok := c.nodeIdx[w.Initial]; !ok {
		c.errorf(w.InitialPos, "unknown-name", "initial node %q is not declared%s", w.Initial, suggest(w.Initial, c.nodeNames()))
	} else {
		p.Initial = i
		pn := p.Nodes[i]
		if !slices.ContainsFunc(pn.Inputs, func(in PlanInput) bool { return in.Name == InputText }) {
			pn.Inputs = append(pn.Inputs, PlanInput{Name: InputText, Cell: c.cell(Cell{Name: pn.Name + "." + InputText, Kind: CellInput, Type: TString, Node: i})})
		}
	}
	for i, f := range w.Finals {
		at := w.Pos
		if i < len(w.FinalsPos) {
			at = w.FinalsPos[i]
		}
		if j, ok := c.nodeIdx[f]; ok {
			p.Nodes[j].Final = true
		} else {
			c.errorf(at, "unknown-name", "final node %q is not declared%s", f, suggest(f, c.nodeNames()))
		}
	}
	for _, pn := range p.Nodes {
		if pn.Node.Type == End {
			pn.Final = true
		}
	}

	c.declareImplicitSlots()
	c.compileVars()
	c.compileNodes()
	c.compileEdges()
	c.compileFallbacks()
	p.MaxSteps = w.Limits.MaxSteps
	if p.MaxSteps <= 0 {
		p.MaxSteps = DefaultMaxSteps
	}
	p.MaxTime = w.Limits.MaxTime
	if c.diags.HasErrors() {
		return
	}
	c.checkGraph()
}

func (c *planner) nodeNames() []string {
	out := make([]string, len(c.w.Nodes))
	for i, n := range c.w.Nodes {
		out[i] = n.Name
	}
	return out
}

// declareImplicitSlots declares the slots that overrides name without a
// slots block, typed by the join of every value assigned to them.
func (c *planner) declareImplicitSlots() {
	var implicit []string
	first := map[string]Pos{}
	for _, e := range c.w.Edges {
		for _, o := range e.Overrides {
			if _, ok := c.names[o.Name]; ok {
				continue // declared; overriding a variable is reported by assign
			}
			if _, ok := first[o.Name]; !ok {
				first[o.Name] = o.Pos
				implicit = append(implicit, o.Name)
			}
		}
	}
	for _, name := range implicit {
		if id := c.declare(&Var{Name: name, Type: TAny, Pos: first[name]}, CellSlot, "slot"); id >= 0 {
			c.p.Slots = append(c.p.Slots, PlanVar{Name: name, Cell: id})
		}
	}
	c.inferSlotTypes(implicit)
	for i := range c.p.Slots {
		c.p.Slots[i].Type = c.p.Cells[c.p.Slots[i].Cell].Type
	}
}

// inferSlotTypes types the implicit slots by what is assigned to them. A
// slot's value may come from a node input that is itself computed from slots
// (seed 000: from_query gets retrieve.query, and retrieve's input query is
// from_query), so slot types, node input types and map element types are
// computed together: from "nothing known yet" (the zero Type, which Join
// ignores) up, until they stop changing. Problems are not reported here:
// every expression is compiled again, and reported, afterwards.
func (c *planner) inferSlotTypes(implicit []string) {
	if len(implicit) == 0 {
		return
	}
	cells := c.p.Cells
	for _, name := range implicit {
		cells[c.names[name]].Type = Type{}
	}
	typeOf := func(e Expr, s Scope) (Type, bool) {
		if e == nil {
			return Type{}, false
		}
		prog, _ := CompileExpr(e, s, Type{})
		if prog == nil {
			return Type{}, false
		}
		return prog.Type, true
	}
	maxRounds := len(implicit) + 3
	for round := 0; ; round++ {
		changed := false
		setType := func(cell int, t Type) {
			if !cells[cell].Type.Equal(t) {
				cells[cell].Type = t
				changed = true
			}
		}
		for _, pn := range c.p.Nodes {
			if pn.Node.Map != nil && pn.ItemCell >= 0 {
				if t, ok := typeOf(pn.Node.Map, c.scope(-1, false, -1)); ok {
					setType(pn.ItemCell, t.ElemType())
				}
			}
			for _, in := range pn.Inputs {
				if e, _ := c.inputExpr(pn, in.Name); e != nil {
					if t, ok := typeOf(e, c.scope(-1, false, pn.Index)); ok {
						setType(in.Cell, t)
					}
				}
			}
		}
		types := map[string]Type{}
		for _, e := range c.w.Edges {
			from, ok := c.nodeIdx[e.From]
			if !ok {
				continue
			}
			for _, o := range e.Overrides {
				if !slices.Contains(implicit, o.Name) {
					continue
				}
				t, ok := typeOf(o.Expr, c.scope(from, e.OnError, -1))
				if !ok {
					t = TAny
				}
				types[o.Name] = Join(types[o.Name], t)
			}
		}
		for _, name := range implicit {
			setType(c.names[name], types[name])
		}
		if !changed {
			break
		}
		if round == maxRounds {
			// No fixed point: a slot built from itself, such as s: [s].
			for _, name := range implicit {
				cells[c.names[name]].Type = TAny
			}
			break
		}
	}
	// Whatever is still unknown is Any: the zero Type stands for "already
	// reported" once expressions compile for real.
	for _, name := range implicit {
		if cells[c.names[name]].Type.IsZero() {
			cells[c.names[name]].Type = TAny
		}
	}
	for _, pn := range c.p.Nodes {
		for _, in := range pn.Inputs {
			if cells[in.Cell].Type.IsZero() {
				cells[in.Cell].Type = TAny
			}
		}
		if pn.ItemCell >= 0 && cells[pn.ItemCell].Type.IsZero() {
			cells[pn.ItemCell].Type = TAny
		}
	}
}

// inputExpr returns the expression of a node input and where it was
// written; the initial node's implicit input_text reads the workflow input.
func (c *planner) inputExpr(pn *PlanNode, name string) (Expr, Pos) {
	n := pn.Node
	var e Expr
	var at Pos
	found := false
	for _, x := range n.Inputs {
		if x.Name == name {
			e, at, found = x.Expr, x.Pos, true
		}
	}
	if !found && name == InputText {
		e = &Ident{At: n.Pos, Name: InputText}
	}
	if at2, ok := c.reads[pn][name]; ok && !found {
		e, at = dotted(name, at2), at2
	}
	return e, at
}

// addReads adds to pn the implicit inputs its binding's templates read
// (CompileOptions.BindingReads); declared holds the node's inputs.
func (c *planner) addReads(pn *PlanNode, declared map[string]bool) {
	n := pn.Node
	if c.opts.BindingReads == nil || n.Action == "" {
		return
	}
	b := c.w.Binding(n.Action)
	if b == nil {
		return
	}
	at := b.Pos
	if p, ok := b.ConfigPos["prompt"]; ok {
		at = p
	}
	for _, name := range c.opts.BindingReads(b) {
		if name == "" || declared[name] || slices.ContainsFunc(n.Outputs, func(o *Field) bool { return o.Name == name }) {
			continue
		}
		declared[name] = true
		if c.reads == nil {
			c.reads = map[*PlanNode]map[string]Pos{}
		}
		if c.reads[pn] == nil {
			c.reads[pn] = map[string]Pos{}
		}
		c.reads[pn][name] = at
		pn.Inputs = append(pn.Inputs, PlanInput{Name: name, Cell: c.cell(Cell{Name: n.Name + "." + name, Kind: CellInput, Type: TAny, Node: pn.Index})})
	}
}

// dotted returns the expression of a dotted name: a.b.c is a.b's field c.
func dotted(name string, at Pos) Expr {
	parts := strings.Split(name, ".")
	var e Expr = &Ident{At: at, Name: parts[0]}
	for _, p := range parts[1:] {
		e = &Selector{At: at, X: e, Name: p}
	}
	return e
}

func (c *planner) compileVars() {
	for i := range c.p.Params[1:] {
		pv := &c.p.Params[i+1]
		v := c.findVar(c.w.Params, pv.Name)
		if v != nil && v.Default != nil {
			pv.Default = c.expr(v.Default, c.paramScope(), pv.Type, "default of parameter "+v.Name)
		}
	}
	for i := range c.p.Vars {
		pv := &c.p.Vars[i]
		v := c.findVar(c.w.Vars, pv.Name)
		if v != nil && v.Default != nil {
			pv.Default = c.expr(v.Default, c.paramScope(), pv.Type, "initial value of variable "+v.Name)
		}
	}
	for i := range c.p.Slots {
		pv := &c.p.Slots[i]
		v := c.findVar(c.w.Slots, pv.Name)
		if v != nil && v.Default != nil {
			pv.Default = c.expr(v.Default, c.paramScope(), pv.Type, "initial value of slot "+v.Name)
		}
	}
}

func (c *planner) findVar(vs []*Var, name string) *Var {
	for _, v := range vs {
		if v.Name == name {
			return v
		}
	}
	return nil
}

func (c *planner) expr(e Expr, s Scope, want Type, what string) *Program {
	if e == nil {
		return nil
	}
	prog, ds := CompileExpr(e, s, want)
	for _, d := range ds {
		if what != "" {
			d.Msg = what + ": " + d.Msg
		}
		c.diags = append(c.diags, d)
	}
	return prog
}

func (c *planner) compileNodes() {
	for _, pn := range c.p.Nodes {
		n := pn.Node
		c.checkNodeKind(pn)
		if n.Map != nil {
			pn.Map = c.expr(n.Map, c.scope(-1, false, -1), ListOf(TAny), "node "+n.Name+", map")
			if pn.Map != nil {
				c.p.Cells[pn.ItemCell].Type = pn.Map.Type.ElemType()
			}
		}
		for i := range pn.Inputs {
			in := &pn.Inputs[i]
			e, at := c.inputExpr(pn, in.Name)
			if e == nil {
				c.errorf(at, "syntax", "node %s: input %s has no value", n.Name, in.Name)
				continue
			}
			what := "node " + n.Name + ", input " + in.Name
			if _, implicit := c.reads[pn][in.Name]; implicit {
				what = "node " + n.Name + ", {{" + in.Name + "}} in the prompt of action " + n.Action
			}
			in.Prog = c.expr(e, c.scope(-1, false, pn.Index), Type{}, what)
			if in.Prog != nil {
				c.p.Cells[in.Cell].Type = in.Prog.Type
			}
		}
		c.checkOutputsFromInputs(pn)
		for _, a := range n.Set {
			if pa, ok := c.assign(a, c.scope(pn.Index, false, -1), "node "+n.Name+", set", CellVar); ok {
				pn.Set = append(pn.Set, pa)
			}
		}
		if n.Timeout < 0 {
			c.errorf(n.Pos, "range", "node %s: timeout %s is negative", n.Name, n.Timeout)
		}
		if r := n.Retry; r != nil && (r.MaxAttempts < 0 || r.Backoff < 0 || r.Factor < 0) {
			c.errorf(n.Pos, "range", "node %s: retry settings must not be negative", n.Name)
		}
		if n.Parallelism < 0 {
			c.errorf(n.Pos, "range", "node %s: parallelism %d is negative", n.Name, n.Parallelism)
		}
	}
}

// checkOutputsFromInputs checks a node whose action sets its outputs from
// its inputs, in order (CompileOptions.OutputsFromInputs): an input for
// each output, of a type assignable to the output's.
func (c *planner) checkOutputsFromInputs(pn *PlanNode) {
	n := pn.Node
	if c.opts.OutputsFromInputs == nil || n.Action == "" || c.w.Binding(n.Action) != nil || !c.opts.OutputsFromInputs(n.Action) {
		return
	}
	if len(pn.Inputs) < len(pn.Outputs) {
		var names []string
		for _, in := range pn.Inputs {
			names = append(names, in.Name)
		}
		list := ""
		if len(names) > 0 {
			list = " (" + strings.Join(names, ", ") + ")"
		}
		c.errorf(n.Pos, "type-mismatch", "node %s: action %q sets its %d outputs from its inputs, in order, but it has %d%s", n.Name, n.Action, len(pn.Outputs), len(pn.Inputs), list)
		return
	}
	for i, out := range pn.Outputs {
		in := pn.Inputs[i]
		if in.Prog == nil || in.Prog.Type.AssignableTo(out.Type) {
			continue
		}
		c.errorf(n.Pos, "type-mismatch", "node %s: action %q sets output %s (%s) from input %s, of type %s", n.Name, n.Action, out.Name, out.Type, in.Name, in.Prog.Type)
	}
}

func (c *planner) checkNodeKind(pn *PlanNode) {
	n := pn.Node
	switch n.Type {
	case Function, LLM, Human, Tool, "":
		if n.Action == "" {
			if _, inlineHTTP := n.Config["url"]; n.Type == Tool && inlineHTTP {
				return // an HTTP call written on the node itself
			}
			if n.Type == Function || n.Type == "" || n.Type == Tool {
				c.errorf(n.Pos, "missing", "node %s: no action; write action: \"name\"", n.Name)
			}
			return
		}
		if c.w.Binding(n.Action) != nil || c.opts.HasAction == nil || c.opts.HasAction(n.Action) {
			return
		}
		c.errorf(n.Pos, "unknown-action", "node %s: unknown action %q; bind it with an action block or register it in Go", n.Name, n.Action)
	case Subflow:
		if n.Subflow == nil {
			c.errorf(n.Pos, "missing", "node %s: WORKFLOW node names no subworkflow", n.Name)
			return
		}
		stack := append(slices.Clone(c.outer), c.w)
		if slices.Contains(stack, n.Subflow) {
			c.errorf(n.Pos, "recursive", "node %s: workflow %s contains itself; a workflow cannot run itself as a subworkflow", n.Name, n.Subflow.Name)
			return
		}
		sub, ds := compileWith(n.Subflow, c.opts, stack)
		name := n.Subflow.Name
		if name == "" {
			name = "of node " + n.Name
		}
		for _, d := range ds {
			d.Msg = "in subworkflow " + name + " (node " + n.Name + "): " + d.Msg
			c.diags = append(c.diags, d)
		}
		pn.Sub = sub
	case End:
	default:
		c.errorf(n.Pos, "unknown-name", "node %s: unknown type %s; want FUNCTION, LLM, HUMAN, TOOL, WORKFLOW or END", n.Name, n.Type)
	}
}

// assign compiles a write to a variable (kind CellVar) or a slot (CellSlot).
func (c *planner) assign(a *Assign, s Scope, what string, kind CellKind) (PlanAssign, bool) {
	id, ok := c.names[a.Name]
	if !ok {
		var cands []string
		for name, cell := range c.names {
			if c.p.Cells[cell].Kind == kind {
				cands = append(cands, name)
			}
		}
		slices.Sort(cands)
		c.errorf(a.Pos, "unknown-name", "%s: %q is not a declared %s%s", what, a.Name, kindWord(kind), suggest(a.Name, cands))
		return PlanAssign{}, false
	}
	cl := c.p.Cells[id]
	if cl.Kind != kind {
		hint := ""
		switch {
		case kind == CellSlot && cl.Kind == CellVar:
			hint = fmt.Sprintf("; change variables with update: { %s = ... }", a.Name)
		case kind == CellVar && cl.Kind == CellSlot:
			hint = "; set slots with override"
		}
		c.errorf(a.Pos, "type-mismatch", "%s: %q is a %s, not a %s%s", what, a.Name, kindWord(cl.Kind), kindWord(kind), hint)
		return PlanAssign{}, false
	}
	// A written value replaces the current one, or is combined with it by
	// a reducer: sum, max, min and merge take values of the variable's type,
	// append an element or a list (checked at run time), reducers from
	// CompileOptions anything.
	want := cl.Type
	if !cl.Red.Kind.WritesVarType() {
		want = Type{}
	}
	prog := c.expr(a.Expr, s, want, what+" "+a.Name)
	if prog == nil {
		return PlanAssign{}, false
	}
	return PlanAssign{Name: a.Name, Cell: id, Prog: prog}, true
}

func (c *planner) compileEdges() {
	for i, e := range c.w.Edges {
		from, ok := c.nodeIdx[e.From]
		if !ok {
			c.errorf(e.Pos, "unknown-name", "edge from unknown node %q%s", e.From, suggest(e.From, c.nodeNames()))
			continue
		}
		pe := &PlanEdge{Index: i, Edge: e, From: from, Join: -1}
		bad := false
		if len(e.To) == 0 {
			c.errorf(e.Pos, "missing", "edge from %s has no target", e.From)
			bad = true
		}
		for j, t := range e.To {
			at := e.Pos
			if j < len(e.ToPos) {
				at = e.ToPos[j]
			}
			ti, ok := c.nodeIdx[t]
			if !ok {
				c.errorf(at, "unknown-name", "edge from %s to unknown node %q%s", e.From, t, suggest(t, c.nodeNames()))
				bad = true
				continue
			}
			if slices.Contains(pe.To, ti) {
				c.errorf(at, "duplicate", "edge from %s lists %s twice", e.From, t)
			}
			pe.To = append(pe.To, ti)
		}
		if len(e.To) > 1 {
			if e.Join == "" {
				c.errorf(e.Pos, "missing", "parallel edge from %s to %s needs join: the node where the branches meet", e.From, strings.Join(e.To, ", "))
				bad = true
			} else if ji, ok := c.nodeIdx[e.Join]; ok {
				pe.Join = ji
			} else {
				c.errorf(e.Pos, "unknown-name", "edge from %s joins at unknown node %q%s", e.From, e.Join, suggest(e.Join, c.nodeNames()))
				bad = true
			}
		} else if e.Join != "" {
			c.errorf(e.Pos, "syntax", "edge from %s has join %s but only one target; join is for parallel edges", e.From, e.Join)
		}
		s := c.scope(from, e.OnError, -1)
		where := fmt.Sprintf("edge %s -> %s", e.From, strings.Join(e.To, ", "))
		if e.Cond != nil {
			pe.Cond = c.expr(e.Cond, s, TBool, where+", condition")
		}
		for _, a := range e.Updates {
			if pa, ok := c.assign(a, s, where+", update", CellVar); ok {
				pe.Updates = append(pe.Updates, pa)
			}
		}
		for _, a := range e.Overrides {
			if pa, ok := c.assign(a, s, where+", override", CellSlot); ok {
				pe.Overrides = append(pe.Overrides, pa)
			}
		}
		if bad {
			continue
		}
		pn := c.p.Nodes[from]
		if e.OnError {
			pn.OnError = append(pn.OnError, pe)
		} else {
			pn.Edges = append(pn.Edges, pe)
		}
	}
}

// scope returns the name scope for an expression. own >= 0 puts that node's
// outputs first (edge conditions, node set); onError adds `error`; mapNode
// >= 0 makes that node's map element visible.
func (c *planner) scope(own int, onError bool, mapNode int) Scope {
	return &scope{c: c, own: own, onError: onError, mapNode: mapNode}
}

func (c *planner) paramScope() Scope { return &scope{c: c, own: -1, mapNode: -1, paramsOnly: true} }

type scope struct {
	c          *planner
	own        int
	onError    bool
	mapNode    int
	paramsOnly bool
}

func (s *scope) Lookup(name string) (Ref, error) {
	p := s.c.p
	ref := func(id int) Ref { return Ref{Cell: id, Type: p.Cells[id].Type, Name: p.Cells[id].Name} }
	if s.own >= 0 {
		pn := p.Nodes[s.own]
		for _, o := range pn.Outputs {
			if o.Name == name {
				return ref(o.Cell), nil
			}
		}
		if s.onError && name == "error" {
			return ref(pn.ErrCell), nil
		}
		if name == "error" && !s.onError {
			if _, ok := s.c.names[name]; !ok {
				return Ref{}, fmt.Errorf("error is only in scope on error edges; write %s.error for the last error of %s", pn.Name, pn.Name)
			}
		}
	}
	if s.mapNode >= 0 {
		if pn := p.Nodes[s.mapNode]; pn.ItemCell >= 0 && p.Cells[pn.ItemCell].Name == name {
			return ref(pn.ItemCell), nil
		}
	}
	if id, ok := s.c.names[name]; ok {
		if s.paramsOnly && p.Cells[id].Kind != CellParam {
			return Ref{}, fmt.Errorf("%s is a %s; initial values may use parameters only", name, kindWord(p.Cells[id].Kind))
		}
		return ref(id), nil
	}
	if s.paramsOnly {
		return Ref{}, fmt.Errorf("unknown name %s%s", name, suggest(name, s.c.paramNames()))
	}
	if i, isNode := s.c.nodeIdx[name]; isNode {
		return Ref{}, fmt.Errorf("%s is a node, not a value; name one of its fields: %s", name, englishList(s.c.fieldNames(i, name), "or"))
	}
	var owners []string
	var found Ref
	for _, pn := range p.Nodes {
		for _, o := range pn.Outputs {
			if o.Name == name {
				owners = append(owners, pn.Name)
				found = ref(o.Cell)
			}
		}
	}
	switch len(owners) {
	case 1:
		return found, nil
	case 0:
		return Ref{}, fmt.Errorf("unknown name %s%s", name, suggest(name, s.candidates()))
	}
	qualified := make([]string, len(owners))
	for i, o := range owners {
		qualified[i] = o + "." + name
	}
	return Ref{}, fmt.Errorf("%s is ambiguous: it is an output of %s; write %s", name, englishList(owners, "and"), englishList(qualified, "or"))
}

// fieldNames lists node.field for every field of node i.
func (c *planner) fieldNames(i int, node string) []string {
	var out []string
	pn := c.p.Nodes[i]
	for _, o := range pn.Outputs {
		out = append(out, node+"."+o.Name)
	}
	for _, in := range pn.Inputs {
		out = append(out, node+"."+in.Name)
	}
	return append(out, node+".error")
}

func (c *planner) paramNames() []string {
	var out []string
	for _, pv := range c.p.Params {
		out = append(out, pv.Name)
	}
	return out
}

func (s *scope) candidates() []string {
	var out []string
	for name := range s.c.names {
		out = append(out, name)
	}
	for _, pn := range s.c.p.Nodes {
		for _, o := range pn.Outputs {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return out
}

func (s *scope) LookupField(node, field string) (Ref, bool, error) {
	i, ok := s.c.nodeIdx[node]
	if !ok {
		if _, isName := s.c.names[node]; isName {
			return Ref{}, false, nil
		}
		if s.mapNode >= 0 && s.c.p.Nodes[s.mapNode].ItemCell >= 0 && s.c.p.Cells[s.c.p.Nodes[s.mapNode].ItemCell].Name == node {
			return Ref{}, false, nil
		}
		if s.own >= 0 {
			for _, o := range s.c.p.Nodes[s.own].Outputs {
				if o.Name == node {
					return Ref{}, false, nil
				}
			}
		}
		// Not a node and not a value in scope: report it as an unknown name.
		if _, err := s.Lookup(node); err != nil {
			return Ref{}, false, fmt.Errorf("unknown name %s (neither a node nor a value)%s", node, suggest(node, append(s.c.nodeNames(), s.candidates()...)))
		}
		return Ref{}, false, nil
	}
	if s.paramsOnly {
		return Ref{}, true, fmt.Errorf("%s.%s is a node field; initial values may use parameters only", node, field)
	}
	pn := s.c.p.Nodes[i]
	p := s.c.p
	ref := func(id int) Ref { return Ref{Cell: id, Type: p.Cells[id].Type, Name: p.Cells[id].Name} }
	var fields []string
	for _, o := range pn.Outputs {
		if o.Name == field {
			return ref(o.Cell), true, nil
		}
		fields = append(fields, o.Name)
	}
	for _, in := range pn.Inputs {
		if in.Name == field {
			return ref(in.Cell), true, nil
		}
		fields = append(fields, in.Name)
	}
	if field == "error" {
		return ref(pn.ErrCell), true, nil
	}
	fields = append(fields, "error")
	return Ref{}, true, fmt.Errorf("node %s has no field %s (its fields: %s)%s", node, field, strings.Join(fields, ", "), suggest(field, fields))
}

// Function implements FunctionScope with CompileOptions.Functions.
func (s *scope) Function(name string) (*ExprFunc, bool) {
	f, ok := s.c.opts.Functions[name]
	return f, ok
}

// FunctionNames implements FunctionScope.
func (s *scope) FunctionNames() []string {
	names := make([]string, 0, len(s.c.opts.Functions))
	for n := range s.c.opts.Functions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
