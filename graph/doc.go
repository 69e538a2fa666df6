// Package graph is weft's typed Go API for agent workflows, in the style of
// LangGraph's StateGraph: a state struct, nodes that are Go functions
// returning typed partial updates, reducers, plain, parallel and
// conditional edges. A graph compiles to the same IR as a .wf file
// (*flow.Workflow, then *flow.Plan) and runs on engine.Runner, so it gets
// the same static checks, limits, events and error types.
//
// # State
//
// The state is a struct. Each exported field is a workflow variable,
// named by its `weft` tag or, by default, by its Go name in snake_case.
// The tag's second part is the field's reducer: how a write combines with
// the current value. replace (the default) overwrites, append concatenates
// slices, sum adds numbers, max and min keep the larger or smaller, merge
// overlays maps and structs.
//
//	type State struct {
//		Question string    `weft:"question"`
//		Messages []Message `weft:"messages,append"`
//		Count    int       // "count", replace
//	}
//
// Any type that converts to JSON works: bools, numbers, strings,
// time.Duration, slices, maps, structs (fields named as encoding/json
// names them), pointers, any, and types with their own JSON encoding.
//
// # Nodes and updates
//
// AddNode adds a Go function func(ctx, S) (U, error). U is the node's
// update type: a struct whose fields name state fields (by Go name or weft
// tag). Every field of U is written, through the state field's reducer,
// each time the node runs; a *T field writes nothing when nil, and for an
// append field of type []T a field of type T appends one element. U may be
// S itself (a full update) or Nothing. Compile checks every update type
// against the state once: a field that names no state field, or has
// another type, is an error naming the node and the field.
//
// # Edges
//
// AddEdge(a, b) runs b after a. Several edges from one node fan out: the
// targets run in parallel, each branch seeing its own writes only, and
// meet at a join (AddJoin, or by default the nearest node every branch
// reaches), which merges the branches' writes through the reducers in the
// order the edges were added, whatever order the branches finished in.
// Two branches writing a field without a reducer is a Compile error, and
// so is a branch that can reach END before its join.
// AddConditionalEdges(a, route, targets...) calls route on the state after
// a's update and goes where it says; a name it was not declared with fails
// the run with a *RouteError. START and END are the virtual entry and exit.
//
// # Conversions
//
// Each step converts the state into the node's S and its update back into
// weft values, with converters built once by Compile. Nodes whose state and
// update fields are all bools, ints, int32s, int64s, float64s, strings,
// string slices or time.Durations (named types included) take a path
// without reflection that keeps S and U on the stack; other types go
// through reflection. A node receives its own copy of the state, decoded
// from the run's values: changing it changes nothing; only the update
// writes state.
//
// # The IR
//
// Compile makes one FUNCTION node per Go node, with action "go:<name>"
// registered in a private engine.Registry: one input per state field
// (in_<field>), one output per field of its update type, named after the
// state field, and a Set assignment writing each output to its variable
// (`count = a.count`). A node with a routing function has one more output,
// route, an Enum of its targets, and one edge per target conditioned on it
// (`b.route == "a"`). Every variable's initial value is a parameter
// (init_<field>) that Invoke fills from the state it is given. END is an
// END node called __end__; START becomes a node called __start__ only
// when it fans out or routes, and is otherwise the initial node itself.
// Compiled.Workflow and Compiled.Plan return the IR for inspection,
// drawing and tooling.
//
// # Example
//
//	type State struct {
//		Count int      `weft:"count"`
//		Log   []string `weft:"log,append"`
//	}
//	type Step struct {
//		Count int
//		Log   string // one element appended to State.Log
//	}
//
//	g := graph.New[State]("counter")
//	graph.AddNode(g, "inc", func(ctx context.Context, s State) (Step, error) {
//		return Step{Count: s.Count + 1, Log: fmt.Sprint("inc ", s.Count+1)}, nil
//	})
//	graph.AddNode(g, "report", func(ctx context.Context, s State) (graph.Nothing, error) {
//		fmt.Println(s.Count, s.Log)
//		return graph.Nothing{}, nil
//	})
//	g.SetEntry("inc")
//	g.AddConditionalEdges("inc", func(s State) string {
//		if s.Count < 3 {
//			return "inc"
//		}
//		return "report"
//	}, "inc", "report")
//	g.AddEdge("report", graph.END)
//	c, err := g.Compile(graph.Options{MaxSteps: 100})
//	if err != nil {
//		return err // flow.Diagnostics: every problem, with file and line
//	}
//	out, err := c.Invoke(ctx, State{}) // out.Count == 3
package graph
