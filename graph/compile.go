package graph

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// RouteOutput is the name of the output through which a node with a
// routing function reports where to go, an Enum of its targets; its
// conditional edges test it (`node.route == "target"`). A node with a routing function cannot also
// write a state field of that name.
const RouteOutput = "route"

// ActionPrefix starts the action names of Go nodes in the IR: node n runs
// action "go:n".
const ActionPrefix = "go:"

// Options adjust Compile.
type Options struct {
	// Registry holds the actions of nodes added with AddFlowNode. Its
	// entries are copied at Compile: later registrations are not seen.
	Registry *engine.Registry
	// Bind makes actions for bindings in flow nodes; see engine.Runner.
	Bind engine.BindFunc
	// MaxSteps bounds the node executions of a run (0: flow.DefaultMaxSteps).
	MaxSteps int
	// MaxTime bounds the wall time of a run (0: none).
	MaxTime time.Duration
}

// Compiled is a checked graph, compiled to the IR and ready to run. It is
// immutable and safe for concurrent use by many runs.
type Compiled[S any] struct {
	wf       *flow.Workflow
	plan     *flow.Plan
	runner   *engine.Runner
	layout   *layout
	warnings flow.Diagnostics
}

// Workflow returns the IR the graph compiled to: the same data a .wf file
// describing this graph would produce. It must not be changed.
func (c *Compiled[S]) Workflow() *flow.Workflow { return c.wf }

// Plan returns the compiled plan the engine runs.
func (c *Compiled[S]) Plan() *flow.Plan { return c.plan }

// Warnings returns what the static checks warned about. Cycles closed by
// a routing function are not reported as unbounded: the check cannot see
// into Go code.
func (c *Compiled[S]) Warnings() flow.Diagnostics { return c.warnings }

// outgoing is the edges that leave one node (or START).
type outgoing[S any] struct {
	plain []edgeDef
	route *routeDef[S]
	join  string // the join of a fan-out
}

// Compile checks the graph and compiles it to the IR: a *flow.Workflow,
// then a *flow.Plan, with one FUNCTION node per Go node whose action is
// registered in a private registry. It reports every problem it finds as
// flow.Diagnostics: mistakes made while building, update types that do not
// fit the state, unknown nodes, fan-outs without a join, and the static
// checks of flow.Compile (among them: parallel branches writing a field
// that has no reducer).
func (g *Graph[S]) Compile(opts Options) (*Compiled[S], error) {
	b := &builder[S]{g: g, l: g.layout, out: map[string]*outgoing[S]{}}
	b.diags = append(b.diags, g.layout.diags...)
	b.diags = append(b.diags, g.diags...)
	b.edges()
	b.fanouts()
	w := b.workflow(opts)
	reg := b.registry(opts.Registry)
	if b.diags.HasErrors() {
		b.diags.Sort()
		return nil, b.diags.Errors()
	}
	plan, ds := flow.Compile(w, &flow.CompileOptions{HasAction: reg.Has})
	if ds.HasErrors() {
		b.hint(ds)
		return nil, ds.Errors()
	}
	if err := b.bind(plan); err != nil {
		return nil, err
	}
	c := &Compiled[S]{wf: w, plan: plan, runner: &engine.Runner{Registry: reg, Bind: opts.Bind}, layout: b.l}
	for _, d := range plan.Warnings {
		if d.Code != "unbounded-cycle" {
			c.warnings = append(c.warnings, d)
		}
	}
	return c, nil
}

// builder carries one Compile.
type builder[S any] struct {
	g       *Graph[S]
	l       *layout
	diags   flow.Diagnostics
	out     map[string]*outgoing[S]
	hasEnd  bool
	entry   string // the initial node of the IR
	start   bool   // a START node is needed (fan-out or routing from START)
	specs   []*nodeSpec
	actions map[string]engine.Action
	used    []bool // per AddJoin: chosen as the join of a fan-out
}

func (b *builder[S]) errorf(at flow.Pos, code, format string, args ...any) {
	b.diags = append(b.diags, flow.Diagnostic{Pos: at, Severity: flow.Error, Code: code, Msg: fmt.Sprintf(format, args...)})
}

func (b *builder[S]) nodeNames() []string {
	names := make([]string, len(b.g.nodes))
	for i, d := range b.g.nodes {
		names[i] = d.name
	}
	return names
}

func (b *builder[S]) outOf(name string) *outgoing[S] {
	o := b.out[name]
	if o == nil {
		o = &outgoing[S]{}
		b.out[name] = o
	}
	return o
}

// checkEnd reports whether name can be the source (from) or the target of
// an edge, reporting it if not.
func (b *builder[S]) checkEnd(at flow.Pos, what, name string, from bool) bool {
	switch {
	case from && name == END:
		b.errorf(at, "syntax", "%s: END cannot be the source of an edge", what)
		return false
	case !from && name == START:
		b.errorf(at, "syntax", "%s: START cannot be the target of an edge", what)
		return false
	case name == START || name == END:
		if name == END {
			b.hasEnd = true
		}
		return true
	case b.g.byName[name] == nil:
		b.errorf(at, "unknown-name", "%s: unknown node %q%s", what, name, flow.Suggest(name, b.nodeNames()))
		return false
	}
	return true
}

// edges checks the edges and routes and groups them by source.
func (b *builder[S]) edges() {
	for _, r := range b.g.routes {
		what := fmt.Sprintf("conditional edges from %s", r.from)
		if !b.checkEnd(r.pos, what, r.from, true) {
			continue
		}
		if r.fn == nil {
			b.errorf(r.pos, "missing", "%s: the routing function is nil", what)
			continue
		}
		if len(r.targets) == 0 {
			b.errorf(r.pos, "missing", "%s: no targets; list every name the routing function may return", what)
			continue
		}
		ok := true
		for i, t := range r.targets {
			if !b.checkEnd(r.pos, what, t, false) {
				ok = false
			} else if slices.Contains(r.targets[:i], t) {
				b.errorf(r.pos, "duplicate", "%s: target %s is listed twice", what, t)
				ok = false
			}
		}
		if !ok {
			continue
		}
		o := b.outOf(r.from)
		if o.route != nil {
			b.errorf(r.pos, "duplicate", "%s are added twice (first at %s)", what, o.route.pos)
			continue
		}
		if d := b.g.byName[r.from]; d != nil && d.flow != nil {
			b.errorf(r.pos, "syntax", "%s: %s is a flow node; routing functions need a Go node (AddNode)", what, r.from)
			continue
		}
		o.route = r
	}
	for _, e := range b.g.edges {
		what := fmt.Sprintf("edge %s -> %s", e.from, e.to)
		if e.join {
			what = fmt.Sprintf("join at %s, from %s", e.to, e.from)
		}
		okFrom := b.checkEnd(e.pos, what, e.from, true)
		okTo := b.checkEnd(e.pos, what, e.to, false)
		if !okFrom || !okTo {
			continue
		}
		o := b.outOf(e.from)
		if e.join && o.route != nil {
			// A branch that ends with a routing function reaches the
			// join through it.
			if !slices.Contains(o.route.targets, e.to) {
				b.errorf(e.pos, "join", "%s: %s routes with a function whose targets (%s) do not include the join", what, e.from, strings.Join(o.route.targets, ", "))
			}
			continue
		}
		if i := slices.IndexFunc(o.plain, func(x edgeDef) bool { return x.to == e.to }); i >= 0 {
			if !e.join && !o.plain[i].join {
				b.errorf(e.pos, "duplicate", "%s is added twice (first at %s)", what, o.plain[i].pos)
			}
			continue
		}
		o.plain = append(o.plain, e)
	}
	for _, name := range append([]string{START}, b.nodeNames()...) {
		o := b.out[name]
		if o == nil {
			continue
		}
		if o.route != nil && len(o.plain) > 0 {
			b.errorf(o.route.pos, "syntax", "%s has both edges (to %s, at %s) and conditional edges: give it one or the other",
				name, targetList(o.plain), o.plain[0].pos)
		}
	}
	o := b.out[START]
	switch {
	case o == nil:
		b.errorf(b.g.pos, "missing", "graph %s has no entry: call SetEntry, AddEdge(graph.START, node) or AddConditionalEdges(graph.START, ...)", b.g.name)
	case len(o.plain) == 1 && o.route == nil:
		b.entry = o.plain[0].to
	default:
		b.start = true
		b.entry = START
	}
}

func targetList(es []edgeDef) string {
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.to
	}
	return strings.Join(names, ", ")
}

// successors lists the nodes one step from name.
func (b *builder[S]) successors(name string) []string {
	o := b.out[name]
	if o == nil {
		return nil
	}
	var out []string
	for _, e := range o.plain {
		out = append(out, e.to)
	}
	if o.route != nil {
		out = append(out, o.route.targets...)
	}
	return out
}

// distances returns the length of the shortest path from name to every
// node it reaches (itself at 0).
func (b *builder[S]) distances(name string) map[string]int {
	dist := map[string]int{name: 0}
	queue := []string{name}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, s := range b.successors(n) {
			if _, seen := dist[s]; !seen {
				dist[s] = dist[n] + 1
				queue = append(queue, s)
			}
		}
	}
	return dist
}

// fanouts finds the join of every node with several plain edges: the
// declared join (AddJoin) whose sources end its branches, else the nearest
// node that every branch reaches.
func (b *builder[S]) fanouts() {
	b.used = make([]bool, len(b.g.joins))
	for _, name := range append([]string{START}, b.nodeNames()...) {
		o := b.out[name]
		if o == nil || len(o.plain) < 2 {
			continue
		}
		targets := make([]string, len(o.plain))
		dists := make([]map[string]int, len(o.plain))
		for i, e := range o.plain {
			targets[i] = e.to
			dists[i] = b.distances(e.to)
		}
		// score is how far the farthest branch is from j; -1 if a
		// branch never reaches it.
		score := func(j string) int {
			if j == name || slices.Contains(targets, j) {
				return -1
			}
			worst := 0
			for _, d := range dists {
				n, ok := d[j]
				if !ok {
					return -1
				}
				worst = max(worst, n)
			}
			return worst
		}
		best, bestScore := -1, -1
		for i := range b.g.joins {
			jd := &b.g.joins[i]
			s := score(jd.to)
			if s < 0 || !b.joinFits(jd, dists) {
				continue
			}
			if bestScore < 0 || s < bestScore {
				best, bestScore = i, s
			}
		}
		if best >= 0 {
			b.used[best] = true
			o.join = b.g.joins[best].to
		} else {
			for _, j := range append(b.nodeNames(), END) {
				if s := score(j); s >= 0 && (bestScore < 0 || s < bestScore) {
					o.join, bestScore = j, s
				}
			}
		}
		if o.join == "" {
			b.errorf(o.plain[0].pos, "join", "parallel edges from %s to %s: the branches never meet; end them at a common node (AddJoin)", name, strings.Join(targets, ", "))
			continue
		}
		if o.join == END {
			continue
		}
		// A branch must not end the run before the join: the run would
		// stop there and the other branches' writes would be lost.
		for _, t := range targets {
			if b.reachesBefore(t, END, o.join) {
				b.errorf(o.plain[0].pos, "join", "parallel branch %s (from %s) can reach END before its join %s: the run would end there and drop the other branches; route it to %s (fail the node to stop the run)", t, name, o.join, o.join)
			}
		}
	}
	for i := range b.g.joins {
		if jd := &b.g.joins[i]; !b.used[i] {
			// A join that no fan-out selected would not wait for
			// anything: say so rather than run it once per branch.
			if ok := b.joinIsFanout(jd); !ok {
				b.errorf(jd.pos, "join", "join at %s from %s: no fan-out has branches that end there; a join must close parallel edges (several AddEdge calls from one node)", jd.to, strings.Join(jd.from, ", "))
			}
		}
	}
}

// reachesBefore reports whether a path from from reaches to without
// passing through stop.
func (b *builder[S]) reachesBefore(from, to, stop string) bool {
	seen := map[string]bool{from: true}
	stack := []string{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == to {
			return true
		}
		if n == stop {
			continue
		}
		for _, s := range b.successors(n) {
			if !seen[s] {
				seen[s] = true
				stack = append(stack, s)
			}
		}
	}
	return false
}

// joinFits reports whether the sources of jd end the branches whose
// distance maps are dists: every branch reaches a source, and every source
// is reached by a branch.
func (b *builder[S]) joinFits(jd *joinDef, dists []map[string]int) bool {
	for _, d := range dists {
		if !slices.ContainsFunc(jd.from, func(s string) bool { _, ok := d[s]; return ok }) {
			return false
		}
	}
	for _, s := range jd.from {
		if !slices.ContainsFunc(dists, func(d map[string]int) bool { _, ok := d[s]; return ok }) {
			return false
		}
	}
	return true
}

// joinIsFanout reports whether an unused join at least names the join of
// some fan-out (chosen by distance rather than by its sources).
func (b *builder[S]) joinIsFanout(jd *joinDef) bool {
	for _, o := range b.out {
		if len(o.plain) >= 2 && o.join == jd.to {
			return true
		}
	}
	return false
}

// workflow builds the IR.
func (b *builder[S]) workflow(opts Options) *flow.Workflow {
	g, l := b.g, b.l
	w := &flow.Workflow{
		Name:        g.name,
		Description: g.desc,
		Pos:         g.pos,
		Initial:     b.entry,
		InitialPos:  g.pos,
		Limits:      flow.Limits{MaxSteps: opts.MaxSteps, MaxTime: opts.MaxTime},
	}
	if o := b.out[START]; o != nil && !b.start {
		w.InitialPos = o.plain[0].pos
	}
	for _, f := range l.fields {
		t := f.codec.typ
		// The parameter defaults to the Go zero value, so that the IR
		// runs on its own too.
		zero, err := f.codec.enc(reflect.Zero(l.rt.Field(f.index).Type))
		if err != nil {
			b.errorf(g.pos, "state", "state field %s: its zero value does not convert: %v", f.goName, err)
		}
		w.Params = append(w.Params, &flow.Var{Name: f.param, Type: t, Default: &flow.Lit{At: g.pos, Value: zero}, Pos: g.pos})
		w.Vars = append(w.Vars, &flow.Var{Name: f.name, Type: t, Reducer: flow.ReducerRef{Kind: f.reducer}, Default: &flow.Ident{At: g.pos, Name: f.param}, Pos: g.pos})
	}
	b.actions = map[string]engine.Action{}
	if b.start {
		n := &flow.Node{Name: START, Type: flow.Function, Action: ActionPrefix + START, Pos: g.pos, Description: "the graph's entry"}
		spec := &nodeSpec{name: START}
		var route func(S) string
		if r := b.out[START].route; r != nil {
			n.Pos = r.pos
			b.inputs(n, spec)
			b.routeOutput(n, spec, r)
			route = r.fn
		}
		w.Nodes = append(w.Nodes, n)
		b.actions[n.Action] = &goNode[S, Nothing]{spec: spec, route: route}
		b.specs = append(b.specs, spec)
	}
	for _, d := range g.nodes {
		if d.flow != nil {
			w.Nodes = append(w.Nodes, d.flow)
			continue
		}
		n := &flow.Node{Name: d.name, Type: flow.Function, Action: ActionPrefix + d.name, Pos: d.pos}
		for _, opt := range d.opts {
			opt(n)
		}
		spec := &nodeSpec{name: d.name}
		ups, ds := analyzeUpdate(l, d.utype, d.name, d.pos)
		b.diags = append(b.diags, ds...)
		spec.updates = ups
		b.inputs(n, spec)
		for _, up := range ups {
			n.Outputs = append(n.Outputs, &flow.Field{Name: up.f.name, Type: up.typ, Pos: d.pos})
			n.Set = append(n.Set, &flow.Assign{Name: up.f.name, Expr: &flow.Selector{At: d.pos, X: &flow.Ident{At: d.pos, Name: d.name}, Name: up.f.name}, Pos: d.pos})
		}
		var route func(S) string
		if r := b.out[d.name]; r != nil && r.route != nil {
			if slices.ContainsFunc(ups, func(u update) bool { return u.f.name == RouteOutput }) {
				b.errorf(r.route.pos, "duplicate", "node %s routes with a function, and its update writes state field %q, the name of its route output; rename the field (weft tag)", d.name, RouteOutput)
			}
			b.routeOutput(n, spec, r.route)
			route = r.route.fn
		}
		w.Nodes = append(w.Nodes, n)
		b.actions[n.Action] = d.newAction(spec, route)
		b.specs = append(b.specs, spec)
	}
	if b.hasEnd {
		w.Nodes = append(w.Nodes, &flow.Node{Name: END, Type: flow.End, Pos: g.pos, Description: "the graph's exit"})
		w.Finals = []string{END}
		w.FinalsPos = []flow.Pos{g.pos}
	}
	for _, name := range append([]string{START}, b.nodeNames()...) {
		o := b.out[name]
		if o == nil || name == START && !b.start {
			continue
		}
		switch {
		case o.route != nil:
			for _, t := range o.route.targets {
				cond := &flow.Binary{At: o.route.pos, Op: "==",
					X: &flow.Selector{At: o.route.pos, X: &flow.Ident{At: o.route.pos, Name: name}, Name: RouteOutput},
					Y: &flow.Lit{At: o.route.pos, Value: flow.StringValue(t)}}
				w.Edges = append(w.Edges, &flow.Edge{From: name, To: []string{t}, Cond: cond, Pos: o.route.pos, ToPos: []flow.Pos{o.route.pos}})
			}
		case len(o.plain) == 1:
			w.Edges = append(w.Edges, &flow.Edge{From: name, To: []string{o.plain[0].to}, Pos: o.plain[0].pos, ToPos: []flow.Pos{o.plain[0].pos}})
		case len(o.plain) > 1:
			e := &flow.Edge{From: name, Join: o.join, Pos: o.plain[0].pos}
			for _, p := range o.plain {
				e.To = append(e.To, p.to)
				e.ToPos = append(e.ToPos, p.pos)
			}
			w.Edges = append(w.Edges, e)
		}
	}
	return w
}

// inputs gives a Go node one input per state field.
func (b *builder[S]) inputs(n *flow.Node, spec *nodeSpec) {
	spec.fields = b.l.fields
	for _, f := range b.l.fields {
		n.Inputs = append(n.Inputs, &flow.Input{Name: f.input, Expr: &flow.Ident{At: n.Pos, Name: f.name}, Pos: n.Pos})
	}
}

// routeOutput adds the output a routing function's choice goes out by: an
// Enum of the targets.
func (b *builder[S]) routeOutput(n *flow.Node, spec *nodeSpec, r *routeDef[S]) {
	spec.targets = r.targets
	for _, t := range r.targets {
		spec.routes = append(spec.routes, flow.StringValue(t))
	}
	n.Outputs = append(n.Outputs, &flow.Field{Name: RouteOutput, Type: flow.EnumOf(r.targets...), Pos: r.pos})
}

// registry makes the private registry: the Go nodes' actions and the
// user's registry.
func (b *builder[S]) registry(user *engine.Registry) *engine.Registry {
	reg := engine.NewRegistry()
	for name, a := range b.actions {
		reg.Replace(name, a)
	}
	for _, name := range user.Names() {
		a, _ := user.Lookup(name)
		if err := reg.Register(name, a); err != nil {
			b.errorf(b.g.pos, "duplicate", "Options.Registry: action %q has the name of a Go node's action; rename it", name)
		}
	}
	return reg
}

// bind gives the Go nodes' actions what only the plan knows: the
// reducers. It also checks that the plan kept the inputs in field order.
func (b *builder[S]) bind(plan *flow.Plan) error {
	for i, f := range b.l.fields {
		if plan.Vars[i].Name != f.name {
			return fmt.Errorf("graph: internal error: variable %d is %s, want %s", i, plan.Vars[i].Name, f.name)
		}
	}
	for _, spec := range b.specs {
		var pn *flow.PlanNode
		for _, p := range plan.Nodes {
			if p.Name == spec.name {
				pn = p
			}
		}
		routeOuts := 0
		if spec.targets != nil {
			routeOuts = 1
		}
		if pn == nil || len(pn.Inputs) < len(spec.fields) || len(pn.Outputs) != len(spec.updates)+routeOuts {
			return fmt.Errorf("graph: internal error: node %s compiled to an unexpected shape", spec.name)
		}
		for i, f := range spec.fields {
			if pn.Inputs[i].Name != f.input {
				return fmt.Errorf("graph: internal error: node %s: input %d is %s, want %s", spec.name, i, pn.Inputs[i].Name, f.input)
			}
		}
		spec.reducers = make([]flow.Reducer, len(spec.updates))
		spec.fast = true
		for j, up := range spec.updates {
			spec.reducers[j] = plan.Cells[plan.Vars[up.fi].Cell].Reducer
			if up.fast == fkNone || up.f.fast == fkNone {
				spec.fast = false
			}
		}
		for _, f := range spec.fields {
			if f.fast == fkNone {
				spec.fast = false
			}
		}
	}
	return nil
}

// hint adds Go advice to flow's findings where the .wf wording would not
// help a Go programmer.
func (b *builder[S]) hint(ds flow.Diagnostics) {
	for i := range ds {
		if ds[i].Code != "parallel-write" {
			continue
		}
		for _, f := range b.l.fields {
			if !strings.Contains(ds[i].Msg, "variable "+f.name+",") {
				continue
			}
			red := flow.ReduceAppend
			switch f.codec.typ.Kind {
			case flow.KindInt, flow.KindFloat, flow.KindDuration:
				red = flow.ReduceSum
			case flow.KindObject:
				red = flow.ReduceMerge
			}
			ds[i].Msg += fmt.Sprintf("; in Go, give state field %s a reducer in its tag, e.g. `weft:\"%s,%s\"`", f.goName, f.name, red)
		}
	}
}

// Run runs the graph from the state in and returns the engine's result:
// status, path, steps, the variables at the end (State decodes them), and,
// for a failed run, its error (also returned). obs, if not nil, receives
// every event of the run.
func (c *Compiled[S]) Run(ctx context.Context, in S, obs engine.Observer) (*engine.Result, error) {
	params, err := c.params(&in)
	if err != nil {
		return &engine.Result{Status: engine.Failed, Err: err}, err
	}
	return c.runner.Run(ctx, c.plan, params, obs)
}

// Invoke runs the graph from the state in and returns the state at the
// end. A failed run returns the state as it was when it failed along with
// the engine's error (*engine.NodeError, *engine.LimitError, ...), which
// errors.As finds. A run that a node suspended with an *engine.Interrupt
// returns its state so far and a *WaitingError.
func (c *Compiled[S]) Invoke(ctx context.Context, in S) (S, error) {
	res, err := c.Run(ctx, in, nil)
	return c.outcome(res, err)
}

// outcome is what Invoke returns for a run's result and error.
func (c *Compiled[S]) outcome(res *engine.Result, err error) (S, error) {
	out, serr := c.State(res)
	switch {
	case err != nil:
		return out, err
	case res.Status == engine.Waiting:
		return out, &WaitingError{Pending: res.Waiting}
	}
	return out, serr
}

// State decodes the variables of a result into an S. A result without
// variables (a run that could not start) gives the zero S.
func (c *Compiled[S]) State(res *engine.Result) (S, error) {
	var s S
	if res == nil || len(res.Vars) != len(c.layout.fields) {
		return s, nil
	}
	sv := reflect.ValueOf(&s).Elem()
	sp := unsafe.Pointer(&s)
	for i, f := range c.layout.fields {
		if f.fast != fkNone {
			if err := fastDec(f.fast, &res.Vars[i].Value, unsafe.Add(sp, f.off)); err != nil {
				return s, &FieldError{Field: f.goName, Err: err}
			}
			continue
		}
		if err := f.codec.dec(res.Vars[i].Value, sv.Field(f.index)); err != nil {
			return s, &FieldError{Field: f.goName, Err: err}
		}
	}
	return s, nil
}

func (c *Compiled[S]) params(in *S) (map[string]flow.Value, error) {
	sv := reflect.ValueOf(in).Elem()
	sp := unsafe.Pointer(in)
	params := make(map[string]flow.Value, len(c.layout.fields))
	for _, f := range c.layout.fields {
		if f.fast != fkNone {
			var v flow.Value
			fastEnc(f.fast, unsafe.Add(sp, f.off), &v)
			params[f.param] = v
			continue
		}
		v, err := f.codec.enc(sv.Field(f.index))
		if err != nil {
			return nil, &FieldError{Field: f.goName, Err: err}
		}
		params[f.param] = v
	}
	return params, nil
}
