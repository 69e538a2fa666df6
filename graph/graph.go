package graph

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// START and END are the graph's virtual entry and exit. AddEdge(START, n)
// makes n the first node; AddEdge(n, END) ends the run after n. Neither
// may be the name of a node.
const (
	START = "__start__"
	END   = "__end__"
)

// Nothing is the update type of a node that writes no state.
type Nothing struct{}

// Graph is a workflow under construction over the state type S, a struct
// whose exported fields are the workflow's variables. A field's tag
// `weft:"name,reducer"` names it in the IR (the default is the Go name in
// snake_case) and says how writes combine with the current value: replace
// (the default), append (slices), sum, max, min (numbers and
// time.Duration) or merge (maps and structs). `weft:"-"` leaves a field
// out of the state.
//
// The methods that build a graph record mistakes instead of returning
// them; Compile reports every one of them at once, with the file and line
// of the call that made it. A Graph is not safe for concurrent use.
type Graph[S any] struct {
	name   string
	desc   string
	pos    flow.Pos
	layout *layout
	nodes  []*nodeDef[S]
	byName map[string]*nodeDef[S]
	edges  []edgeDef
	routes []*routeDef[S]
	joins  []joinDef
	diags  flow.Diagnostics
}

// nodeDef is a node as added: a Go function (newAction) or a flow node.
type nodeDef[S any] struct {
	name      string
	pos       flow.Pos
	utype     reflect.Type // the update type; nil for a flow node
	opts      []NodeOption
	newAction func(spec *nodeSpec, route func(S) string) engine.Action
	flow      *flow.Node
}

type edgeDef struct {
	from, to string
	pos      flow.Pos
	join     bool // added by AddJoin
}

type routeDef[S any] struct {
	from    string
	fn      func(S) string
	targets []string
	pos     flow.Pos
}

type joinDef struct {
	from []string
	to   string
	pos  flow.Pos
}

// NodeOption adjusts the IR node made for a Go node: its retry policy,
// timeout or description.
type NodeOption func(*flow.Node)

// WithRetry retries a failing node with the given policy.
func WithRetry(p flow.RetryPolicy) NodeOption {
	return func(n *flow.Node) { n.Retry = &p }
}

// WithTimeout bounds each attempt of the node; its context is cancelled
// when the time is up and the attempt fails with an *engine.TimeoutError.
func WithTimeout(d time.Duration) NodeOption {
	return func(n *flow.Node) { n.Timeout = d }
}

// WithDescription documents the node; tools show it.
func WithDescription(text string) NodeOption {
	return func(n *flow.Node) { n.Description = text }
}

// caller returns the position of the user's call into this package.
func caller(skip int) flow.Pos {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return flow.Pos{}
	}
	return flow.Pos{File: file, Line: line}
}

// New starts a graph called name over the state type S.
func New[S any](name string) *Graph[S] {
	at := caller(1)
	return &Graph[S]{name: name, pos: at, layout: newLayout(reflect.TypeFor[S](), at), byName: map[string]*nodeDef[S]{}}
}

// Describe sets the workflow's description.
func (g *Graph[S]) Describe(text string) { g.desc = text }

func (g *Graph[S]) errorf(at flow.Pos, code, format string, args ...any) {
	g.diags = append(g.diags, flow.Diagnostic{Pos: at, Severity: flow.Error, Code: code, Msg: fmt.Sprintf(format, args...)})
}

func (g *Graph[S]) addNode(d *nodeDef[S]) {
	switch {
	case d.name == "":
		g.errorf(d.pos, "syntax", "a node needs a name")
		return
	case d.name == START || d.name == END:
		g.errorf(d.pos, "syntax", "%s is reserved: it cannot name a node", d.name)
		return
	case !isIdent(d.name):
		// Node names appear in the IR's expressions (a.count, b.route), as
		// in a .wf file: they must be identifiers.
		g.errorf(d.pos, "syntax", "node name %q is not an identifier (letters, digits, _)", d.name)
		return
	case g.byName[d.name] != nil:
		g.errorf(d.pos, "duplicate", "node %s is added twice (first at %s)", d.name, g.byName[d.name].pos)
		return
	}
	g.nodes = append(g.nodes, d)
	g.byName[d.name] = d
}

// AddNode adds a node that runs fn. fn receives the state as it is when
// the node runs and returns an update of type U: a struct whose fields
// name fields of S (by Go name or by weft tag), each written through that
// field's reducer. Every field of U is written on every run of the node; a
// field of type *T, for a state field of type T, writes nothing when nil.
// For an append field of type []T, a field of type T appends one element.
// U may also be S itself (every field is written) or Nothing. The update
// type is checked against S once, by Compile.
//
// An error from fn fails the node (its retry policy applies); a panic in
// fn is recovered and fails the node too. fn may be called concurrently
// by parallel branches and runs. The state it receives is a read-only
// view: assigning its fields changes nothing (only the update writes
// state), and the slices and maps in it may be shared with other steps and
// runs, so their elements must not be changed in place, as in LangGraph.
// Appending to a slice of the state copies it (its capacity is its
// length). Sharing is what keeps a growing list (a log, a conversation)
// from being copied at every step.
func AddNode[S, U any](g *Graph[S], name string, fn func(ctx context.Context, s S) (U, error), opts ...NodeOption) {
	d := &nodeDef[S]{name: name, pos: caller(1), utype: reflect.TypeFor[U](), opts: opts}
	if fn == nil {
		g.errorf(d.pos, "missing", "node %s: the node function is nil", name)
		return
	}
	d.newAction = func(spec *nodeSpec, route func(S) string) engine.Action {
		return &goNode[S, U]{spec: spec, fn: fn, route: route}
	}
	g.addNode(d)
}

// AddFlowNode adds a node given directly in the IR: an LLM, TOOL or
// FUNCTION node whose action is registered in Options.Registry (or bound
// in Options.Bind), a HUMAN or a WORKFLOW node. Its inputs read state
// fields by their IR names and its Set assignments write them. It is
// connected like any other node, except that it cannot have a routing
// function. n must not be changed afterwards.
func (g *Graph[S]) AddFlowNode(n *flow.Node) {
	at := caller(1)
	if n == nil {
		g.errorf(at, "missing", "AddFlowNode: the node is nil")
		return
	}
	if !n.Pos.IsValid() {
		cp := *n
		cp.Pos = at
		n = &cp
	}
	g.addNode(&nodeDef[S]{name: n.Name, pos: at, flow: n})
}

// AddEdge runs to after from. Several edges from one node run their
// targets in parallel, each branch on its own view of the state; the
// branches meet at a join (see AddJoin), which merges their writes
// through the reducers in the order the edges were added, and runs once.
func (g *Graph[S]) AddEdge(from, to string) {
	g.edges = append(g.edges, edgeDef{from: from, to: to, pos: caller(1)})
}

// SetEntry makes name the first node to run: AddEdge(START, name).
func (g *Graph[S]) SetEntry(name string) {
	g.edges = append(g.edges, edgeDef{from: START, to: name, pos: caller(1)})
}

// AddConditionalEdges routes from a node (or from START) by a function of
// the state after the node's update. targets lists every name route may
// return (node names or END); a name outside the list fails the run with
// a *RouteError. A node has either one set of conditional edges or plain
// edges, not both.
func (g *Graph[S]) AddConditionalEdges(from string, route func(s S) string, targets ...string) {
	g.routes = append(g.routes, &routeDef[S]{from: from, fn: route, targets: targets, pos: caller(1)})
}

// AddJoin declares where parallel branches meet: it adds an edge from each
// node in from to the join node to, and makes to the join of the fan-out
// whose branches end at from. The join runs once, after every branch that
// was started has arrived. Without AddJoin, a fan-out joins at the nearest
// node that all its branches reach.
func (g *Graph[S]) AddJoin(from []string, to string) {
	at := caller(1)
	g.joins = append(g.joins, joinDef{from: from, to: to, pos: at})
	for _, f := range from {
		g.edges = append(g.edges, edgeDef{from: f, to: to, pos: at, join: true})
	}
}
