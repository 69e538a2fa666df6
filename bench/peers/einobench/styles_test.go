package einobench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/cloudwego/eino/compose"

	"github.com/weftlang/weft/bench/peers/harness"
)

// This file holds the other documented ways of writing the shapes with
// Eino, which the package comment compares with the kept one:
// BenchmarkStyles measures them side by side, TestStyles checks that each
// computes its shapes.

// style builds the shapes it supports, returning harness.ErrUnsupported
// for the others.
type style func(ctx context.Context, s harness.Shape) (harness.Run, error)

// compiled wraps a compiled graph as a harness.Run checking its output;
// with checkpoint, each invocation gets its own checkpoint ID, as S4 does.
func compiled(r compose.Runnable[*State, *State], check func(*State) error, checkpoint bool) harness.Run {
	return func(ctx context.Context, i int) error {
		var opts []compose.Option
		if checkpoint {
			opts = append(opts, compose.WithCheckPointID(strconv.Itoa(i)))
		}
		out, err := r.Invoke(ctx, &State{}, opts...)
		if err != nil {
			return err
		}
		return check(out)
	}
}

func checkFanState(out *State) error { return checkFan(out.Log) }

// chainCompileOptions adds, for S4, the checkpoint store of prepareS4Memory.
func chainCompileOptions(s harness.Shape, opts ...compose.GraphCompileOption) []compose.GraphCompileOption {
	if s == harness.S4Memory {
		opts = append(opts, compose.WithCheckPointStore(&memoryStore{m: map[string][]byte{}}))
	}
	return opts
}

// dagIO is the kept graphs compiled in Eino's DAG mode,
// compose.WithNodeTriggerMode(compose.AllPredecessor), which is eager. It
// has no S2: DAG mode refuses cycles.
func dagIO(ctx context.Context, s harness.Shape) (harness.Run, error) {
	dag := compose.WithNodeTriggerMode(compose.AllPredecessor)
	switch s {
	case harness.S1, harness.S4Memory:
		g, err := buildChain()
		if err != nil {
			return nil, err
		}
		r, err := g.Compile(ctx, chainCompileOptions(s, dag)...)
		if err != nil {
			return nil, err
		}
		return compiled(r, checkChain, s == harness.S4Memory), nil
	case harness.S3:
		g, err := buildFanout()
		if err != nil {
			return nil, err
		}
		r, err := g.Compile(ctx, dag)
		if err != nil {
			return nil, err
		}
		return compiled(r, checkFanState, false), nil
	}
	return nil, harness.ErrUnsupported
}

// nameNode is a fan-out node that outputs its name, which
// compose.WithOutputKey or a field mapping puts under that key of the
// join's map[string]any input.
func nameNode(name string) *compose.Lambda {
	return compose.InvokableLambda(func(context.Context, *State) (string, error) { return name, nil })
}

// joinMap is a join node whose input is the map of the branches' names.
func joinMap() *compose.Lambda {
	return compose.InvokableLambda(func(_ context.Context, in map[string]any) (*State, error) {
		out := &State{Log: make([]string, 0, len(in))}
		for _, v := range in {
			name, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("join: input %T, want string", v)
			}
			out.Log = append(out.Log, name)
		}
		return out, nil
	})
}

// graphIOMap is S3 only: the kept graph, except that the branches output
// their names under compose.WithOutputKey and the join takes the merged
// map (Eino's default merge for maps) instead of registered State merge.
func graphIOMap(ctx context.Context, s harness.Shape) (harness.Run, error) {
	if s != harness.S3 {
		return nil, harness.ErrUnsupported
	}
	g := compose.NewGraph[*State, *State]()
	err := errors.Join(
		g.AddLambdaNode("fork", passNode()),
		g.AddLambdaNode("join", joinMap()),
		g.AddEdge(compose.START, "fork"),
		g.AddEdge("join", compose.END),
	)
	for _, name := range fanNames {
		err = errors.Join(err,
			g.AddLambdaNode(name, nameNode(name), compose.WithOutputKey(name)),
			g.AddEdge("fork", name),
			g.AddEdge(name, "join"))
	}
	if err != nil {
		return nil, err
	}
	r, err := g.Compile(ctx)
	if err != nil {
		return nil, err
	}
	return compiled(r, checkFanState, false), nil
}

// chainIO is compose.NewChain: S1 and S4 as ten AppendLambda, S3 as
// AppendParallel (whose branches output under their keys) between two
// lambdas. A chain has no loop, so no S2. A chain compiles to a graph in
// Pregel mode.
func chainIO(ctx context.Context, s harness.Shape) (harness.Run, error) {
	c := compose.NewChain[*State, *State]()
	switch s {
	case harness.S1, harness.S4Memory:
		for _, name := range chainNames {
			c.AppendLambda(stepNode(name))
		}
		r, err := c.Compile(ctx, chainCompileOptions(s)...)
		if err != nil {
			return nil, err
		}
		return compiled(r, checkChain, s == harness.S4Memory), nil
	case harness.S3:
		p := compose.NewParallel()
		for _, name := range fanNames {
			p.AddLambda(name, nameNode(name))
		}
		c.AppendLambda(passNode()).AppendParallel(p).AppendLambda(joinMap())
		r, err := c.Compile(ctx)
		if err != nil {
			return nil, err
		}
		return compiled(r, checkFanState, false), nil
	}
	return nil, harness.ErrUnsupported
}

// workflowIO is compose.NewWorkflow (DAG mode, eager): S1 and S4 as ten
// nodes each taking its predecessor's whole output (AddInput), S3 with a
// join whose map input maps each branch's output to its name
// (AddInput(name, compose.ToField(name)); a workflow refuses two whole
// outputs into one input). A workflow has no cycles, so no S2.
func workflowIO(ctx context.Context, s harness.Shape) (harness.Run, error) {
	wf := compose.NewWorkflow[*State, *State]()
	switch s {
	case harness.S1, harness.S4Memory:
		prev := compose.START
		for _, name := range chainNames {
			wf.AddLambdaNode(name, stepNode(name)).AddInput(prev)
			prev = name
		}
		wf.End().AddInput(prev)
		r, err := wf.Compile(ctx, chainCompileOptions(s)...)
		if err != nil {
			return nil, err
		}
		return compiled(r, checkChain, s == harness.S4Memory), nil
	case harness.S3:
		wf.AddLambdaNode("fork", passNode()).AddInput(compose.START)
		join := wf.AddLambdaNode("join", joinMap())
		for _, name := range fanNames {
			wf.AddLambdaNode(name, nameNode(name)).AddInput("fork")
			join.AddInput(name, compose.ToField(name))
		}
		wf.End().AddInput("join")
		r, err := wf.Compile(ctx)
		if err != nil {
			return nil, err
		}
		return compiled(r, checkFanState, false), nil
	}
	return nil, harness.ErrUnsupported
}

// newLocalState is the compose.GenLocalState of the local-state styles.
func newLocalState(context.Context) *State { return &State{} }

// processStateNode is a node of the localState style: it applies update
// to the graph's local state through compose.ProcessState ("the
// recommended way to access and modify state in custom nodes",
// compose/state.go) and passes the local state on.
func processStateNode(update func(*State)) *compose.Lambda {
	return compose.InvokableLambda(func(ctx context.Context, _ *State) (*State, error) {
		var out *State
		err := compose.ProcessState(ctx, func(_ context.Context, s *State) error {
			update(s)
			out = s
			return nil
		})
		return out, err
	})
}

// localState keeps the state in the graph's local state
// (compose.WithGenLocalState), each node updating it with
// compose.ProcessState; S3's branches append their names to it and output
// them under compose.WithOutputKey to a join taking the merged map. This
// package's style (with State values passed between nodes) until it was
// measured against the others.
func localState(ctx context.Context, s harness.Shape) (harness.Run, error) {
	g := compose.NewGraph[*State, *State](compose.WithGenLocalState(newLocalState))
	var err error
	add := func(name string, l *compose.Lambda, opts ...compose.GraphAddNodeOpt) {
		err = errors.Join(err, g.AddLambdaNode(name, l, opts...))
	}
	edge := func(from, to string) { err = errors.Join(err, g.AddEdge(from, to)) }
	var copts []compose.GraphCompileOption
	var check func(*State) error
	switch s {
	case harness.S1, harness.S4Memory:
		prev := compose.START
		for _, name := range chainNames {
			add(name, processStateNode(func(s *State) { s.Count++; s.Log = append(s.Log, name) }))
			edge(prev, name)
			prev = name
		}
		edge(prev, compose.END)
		copts, check = chainCompileOptions(s), checkChain
	case harness.S2:
		inc := func(s *State) { s.Count++ }
		add("A", processStateNode(inc))
		add("B", processStateNode(inc))
		edge(compose.START, "A")
		edge("A", "B")
		err = errors.Join(err, g.AddBranch("B", compose.NewGraphBranch(func(_ context.Context, in *State) (string, error) {
			if in.Count < loopSteps {
				return "A", nil
			}
			return compose.END, nil
		}, map[string]bool{"A": true, compose.END: true})))
		copts = []compose.GraphCompileOption{compose.WithMaxRunSteps(2 * loopSteps)}
		check = checkLoop
	case harness.S3:
		add("fork", passNode())
		add("join", compose.InvokableLambda(func(ctx context.Context, _ map[string]any) (*State, error) {
			var out *State
			err := compose.ProcessState(ctx, func(_ context.Context, s *State) error {
				out = s
				return nil
			})
			return out, err
		}))
		edge(compose.START, "fork")
		edge("join", compose.END)
		for _, name := range fanNames {
			add(name, compose.InvokableLambda(func(ctx context.Context, _ *State) (string, error) {
				err := compose.ProcessState(ctx, func(_ context.Context, s *State) error {
					s.Log = append(s.Log, name)
					return nil
				})
				return name, err
			}), compose.WithOutputKey(name))
			edge("fork", name)
			edge(name, "join")
		}
		check = checkFanState
	default:
		return nil, harness.ErrUnsupported
	}
	if err != nil {
		return nil, err
	}
	r, err := g.Compile(ctx, copts...)
	if err != nil {
		return nil, err
	}
	return compiled(r, check, s == harness.S4Memory), nil
}

// checkLoop checks S2's result.
func checkLoop(out *State) error {
	if out.Count != loopSteps {
		return fmt.Errorf("S2: count %d, want %d", out.Count, loopSteps)
	}
	return nil
}

// localPost is S1 only: local state updated by a
// compose.WithStatePostHandler on each node, whose body passes its input
// on.
func localPost(ctx context.Context, s harness.Shape) (harness.Run, error) {
	if s != harness.S1 {
		return nil, harness.ErrUnsupported
	}
	g := compose.NewGraph[*State, *State](compose.WithGenLocalState(newLocalState))
	var err error
	prev := compose.START
	for _, name := range chainNames {
		post := compose.WithStatePostHandler(func(_ context.Context, _ *State, st *State) (*State, error) {
			st.Count++
			st.Log = append(st.Log, name)
			return st, nil
		})
		err = errors.Join(err, g.AddLambdaNode(name, passNode(), post), g.AddEdge(prev, name))
		prev = name
	}
	if err = errors.Join(err, g.AddEdge(prev, compose.END)); err != nil {
		return nil, err
	}
	r, err := g.Compile(ctx)
	if err != nil {
		return nil, err
	}
	return compiled(r, checkChain, false), nil
}

// valueIO is the kept graphs with State passed by value instead of by
// pointer (compose.NewGraph[State, State]), S3's fan-in merged by a
// merge function registered for State values.
func valueIO(ctx context.Context, s harness.Shape) (harness.Run, error) {
	g := compose.NewGraph[State, State]()
	var err error
	add := func(name string, fn func(State) State) {
		err = errors.Join(err, g.AddLambdaNode(name, compose.InvokableLambda(func(_ context.Context, in State) (State, error) {
			return fn(in), nil
		})))
	}
	edge := func(from, to string) { err = errors.Join(err, g.AddEdge(from, to)) }
	var copts []compose.GraphCompileOption
	var check func(*State) error
	switch s {
	case harness.S1, harness.S4Memory:
		prev := compose.START
		for _, name := range chainNames {
			add(name, func(in State) State { in.Count++; in.Log = append(in.Log, name); return in })
			edge(prev, name)
			prev = name
		}
		edge(prev, compose.END)
		copts, check = chainCompileOptions(s), checkChain
	case harness.S2:
		inc := func(in State) State { in.Count++; return in }
		add("A", inc)
		add("B", inc)
		edge(compose.START, "A")
		edge("A", "B")
		err = errors.Join(err, g.AddBranch("B", compose.NewGraphBranch(func(_ context.Context, in State) (string, error) {
			if in.Count < loopSteps {
				return "A", nil
			}
			return compose.END, nil
		}, map[string]bool{"A": true, compose.END: true})))
		copts = []compose.GraphCompileOption{compose.WithMaxRunSteps(2 * loopSteps)}
		check = checkLoop
	case harness.S3:
		pass := func(in State) State { return in }
		add("fork", pass)
		add("join", pass)
		edge(compose.START, "fork")
		edge("join", compose.END)
		for _, name := range fanNames {
			add(name, func(State) State { return State{Log: []string{name}} })
			edge("fork", name)
			edge(name, "join")
		}
		check = checkFanState
	default:
		return nil, harness.ErrUnsupported
	}
	if err != nil {
		return nil, err
	}
	r, err := g.Compile(ctx, copts...)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, i int) error {
		var opts []compose.Option
		if s == harness.S4Memory {
			opts = append(opts, compose.WithCheckPointID(strconv.Itoa(i)))
		}
		out, err := r.Invoke(ctx, State{}, opts...)
		if err != nil {
			return err
		}
		return check(&out)
	}, nil
}

func init() {
	// valueIO's fan-in merge.
	compose.RegisterValuesMergeFunc(func(vs []State) (State, error) {
		var out State
		for _, v := range vs {
			out.Count += v.Count
			out.Log = append(out.Log, v.Log...)
		}
		return out, nil
	})
}

// styles are the styles with their names; "kept" is the package's own
// Prepare.
var styles = []struct {
	name  string
	build style
}{
	{"kept", func(ctx context.Context, s harness.Shape) (harness.Run, error) {
		run, _, err := prepare(ctx, s, "")
		return run, err
	}},
	{"valueIO", valueIO},
	{"graphIOMap", graphIOMap},
	{"dagIO", dagIO},
	{"chainIO", chainIO},
	{"workflowIO", workflowIO},
	{"localState", localState},
	{"localPost", localPost},
}

// styleShapes are the shapes the styles are compared on.
var styleShapes = []harness.Shape{harness.S1, harness.S2, harness.S3, harness.S4Memory}

// TestStyles checks that every style computes every shape it supports.
func TestStyles(t *testing.T) {
	for _, s := range styleShapes {
		for _, st := range styles {
			t.Run(string(s)+"/"+st.name, func(t *testing.T) {
				run, err := st.build(context.Background(), s)
				if errors.Is(err, harness.ErrUnsupported) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				for i := range 2 {
					if err := run(context.Background(), i); err != nil {
						t.Fatalf("run %d: %v", i, err)
					}
				}
			})
		}
	}
}

// BenchmarkStyles measures every style on every shape it supports, in one
// run so that the figures compare.
func BenchmarkStyles(b *testing.B) {
	for _, s := range styleShapes {
		for _, st := range styles {
			b.Run(string(s)+"/"+st.name, func(b *testing.B) {
				run, err := st.build(context.Background(), s)
				if errors.Is(err, harness.ErrUnsupported) {
					b.Skip(err)
				}
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := run(ctx, i); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
