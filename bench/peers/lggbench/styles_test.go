package lggbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/smallnest/langgraphgo/graph"
	"github.com/weftlang/weft/bench/peers/harness"
)

// This file holds the other documented ways of writing the shapes with
// langgraphgo, which the package comment compares with the kept one:
// BenchmarkStyles measures them side by side, TestStyles checks that each
// computes its shapes.

// variant is one way of writing the shapes over state type S: the graph's
// schema (nil for none), the node bodies, and how to read the result.
type variant[S any] struct {
	schema func() graph.StateSchema[S]
	merger graph.TypedStateMerger[S] // nil: none
	init   func() S
	step   func(name string) func(context.Context, S) (S, error) // S1, S4
	add    func(context.Context, S) (S, error)                   // S2
	branch func(name string) func(context.Context, S) (S, error) // S3; nil: no S3
	noop   func(context.Context, S) (S, error)                   // S3's start, join
	read   func(S) State
}

// build builds shape s in variant v.
func (v variant[S]) build(s harness.Shape) (harness.Run, error) {
	g := graph.NewStateGraph[S]()
	if v.schema != nil {
		g.SetSchema(v.schema())
	}
	if v.merger != nil {
		g.SetStateMerger(v.merger)
	}
	var check func(State) error
	switch s {
	case harness.S1:
		for i, name := range chainNames {
			g.AddNode(name, "", v.step(name))
			if i > 0 {
				g.AddEdge(chainNames[i-1], name)
			}
		}
		g.SetEntryPoint(chainNames[0])
		g.AddEdge(chainNames[len(chainNames)-1], graph.END)
		check = checkChain
	case harness.S2:
		g.AddNode("A", "", v.add)
		g.AddNode("B", "", v.add)
		g.AddEdge("A", "B")
		g.AddConditionalEdge("B", func(_ context.Context, st S) string {
			if v.read(st).Count < loopTarget {
				return "A"
			}
			return graph.END
		})
		g.SetEntryPoint("A")
		check = func(out State) error {
			if out.Count != loopTarget {
				return fmt.Errorf("S2: count is %d, want %d", out.Count, loopTarget)
			}
			return nil
		}
	case harness.S3:
		if v.branch == nil {
			return nil, harness.ErrUnsupported
		}
		g.AddNode("start", "", v.noop)
		g.AddNode("join", "", v.noop)
		for _, name := range branchNames {
			g.AddNode(name, "", v.branch(name))
			g.AddEdge("start", name)
			g.AddEdge(name, "join")
		}
		g.AddEdge("join", graph.END)
		g.SetEntryPoint("start")
		check = checkFanout
	case harness.S4Memory:
		cg := graph.NewCheckpointableStateGraph[S]()
		if v.schema != nil {
			cg.SetSchema(v.schema())
		}
		if v.merger != nil {
			cg.SetStateMerger(v.merger)
		}
		cfg := cg.GetCheckpointConfig()
		cfg.Store = graph.NewMemoryCheckpointStore()
		cfg.AutoSave = true
		cg.SetCheckpointConfig(cfg)
		for i, name := range chainNames {
			cg.AddNode(name, "", v.step(name))
			if i > 0 {
				cg.AddEdge(chainNames[i-1], name)
			}
		}
		cg.SetEntryPoint(chainNames[0])
		cg.AddEdge(chainNames[len(chainNames)-1], graph.END)
		r, err := cg.CompileCheckpointable()
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, i int) error {
			out, err := r.InvokeWithConfig(ctx, v.init(), graph.WithThreadID(threadID(i)))
			if err != nil {
				return err
			}
			return checkChain(v.read(out))
		}, nil
	default:
		return nil, harness.ErrUnsupported
	}
	r, err := g.Compile()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, v.init())
		if err != nil {
			return err
		}
		return check(v.read(out))
	}, nil
}

// mapState is langgraphgo's untyped state.
type mapState = map[string]any

// readMap reads count and log from a map state.
func readMap(m mapState) State {
	c, _ := m["count"].(int)
	l, _ := m["log"].([]string)
	return State{Count: c, Log: l}
}

// sumReducer adds an int update to the current int (nil counts as zero),
// like the SumReducer of langgraphgo's examples/state_schema.
func sumReducer(current, update any) (any, error) {
	c, _ := current.(int)
	u, ok := update.(int)
	if !ok {
		return nil, fmt.Errorf("count update is %T, not int", update)
	}
	return c + u, nil
}

// mapSchema: map[string]any state, a MapSchema with a sum reducer for
// count and graph.AppendReducer for log (README "State Schema",
// examples/state_schema; NewMessageGraph is this with a "messages"
// reducer), nodes returning partial updates. This package's style until
// it was measured against the others.
var mapSchema = variant[mapState]{
	schema: func() graph.StateSchema[mapState] {
		sc := graph.NewMapSchema()
		sc.RegisterReducer("count", sumReducer)
		sc.RegisterReducer("log", graph.AppendReducer)
		return sc
	},
	init: func() mapState { return mapState{"count": 0, "log": []string{}} },
	step: func(name string) func(context.Context, mapState) (mapState, error) {
		return func(context.Context, mapState) (mapState, error) {
			return mapState{"count": 1, "log": []string{name}}, nil
		}
	},
	add: func(context.Context, mapState) (mapState, error) { return mapState{"count": 1}, nil },
	branch: func(name string) func(context.Context, mapState) (mapState, error) {
		return func(context.Context, mapState) (mapState, error) {
			return mapState{"log": []string{name}}, nil
		}
	},
	noop: func(context.Context, mapState) (mapState, error) { return nil, nil },
	read: readMap,
}

// mapMutate: map[string]any state, no schema, nodes updating the map
// they get and returning it. It has no S3: parallel branches would write
// one map concurrently.
var mapMutate = variant[mapState]{
	init: func() mapState { return mapState{"count": 0, "log": []string{}} },
	step: func(name string) func(context.Context, mapState) (mapState, error) {
		return func(_ context.Context, m mapState) (mapState, error) {
			m["count"] = m["count"].(int) + 1
			m["log"] = append(m["log"].([]string), name)
			return m, nil
		}
	},
	add: func(_ context.Context, m mapState) (mapState, error) {
		m["count"] = m["count"].(int) + 1
		return m, nil
	},
	read: readMap,
}

// partialStep, partialAdd, partialBranch and partialNoop are the nodes of
// the struct variants whose schema merges partial updates.
func partialStep(name string) func(context.Context, State) (State, error) {
	return func(context.Context, State) (State, error) { return State{Count: 1, Log: []string{name}}, nil }
}

func partialAdd(context.Context, State) (State, error) { return State{Count: 1}, nil }

// structSchema: State with fanSchema (a StructSchema summing Count and
// appending Log, docs/GENERIC.md example 2) in every shape, nodes
// returning partial updates.
var structSchema = variant[State]{
	schema: func() graph.StateSchema[State] { return fanSchema() },
	init:   func() State { return State{} },
	step:   partialStep,
	add:    partialAdd,
	branch: appendName,
	noop:   noUpdate,
	read:   func(s State) State { return s },
}

// fieldMerger: State with a graph.FieldMerger (graph.SumIntMerge for
// Count, graph.AppendSliceMerge for Log), nodes returning partial updates.
var fieldMerger = variant[State]{
	schema: func() graph.StateSchema[State] {
		fm := graph.NewFieldMerger(State{})
		fm.RegisterFieldMerge("Count", graph.SumIntMerge)
		fm.RegisterFieldMerge("Log", graph.AppendSliceMerge)
		return fm
	},
	init:   func() State { return State{} },
	step:   partialStep,
	add:    partialAdd,
	branch: appendName,
	noop:   noUpdate,
	read:   func(s State) State { return s },
}

// ptrMutate: *State, nodes updating the State they get and returning it
// (graph.NewStateGraph[*State](), as langgraphgo's showcases do). S3's
// branches return a new State with their name, which a TypedStateMerger
// (SetStateMerger) appends to a copy of the current one.
var ptrMutate = variant[*State]{
	merger: func(_ context.Context, current *State, results []*State) (*State, error) {
		if len(results) == 1 {
			return results[0], nil
		}
		out := &State{Count: current.Count, Log: slices.Clone(current.Log)}
		for _, r := range results {
			out.Count += r.Count
			out.Log = append(out.Log, r.Log...)
		}
		return out, nil
	},
	init: func() *State { return &State{} },
	step: func(name string) func(context.Context, *State) (*State, error) {
		return func(_ context.Context, s *State) (*State, error) {
			s.Count++
			s.Log = append(s.Log, name)
			return s, nil
		}
	},
	add: func(_ context.Context, s *State) (*State, error) { s.Count++; return s, nil },
	branch: func(name string) func(context.Context, *State) (*State, error) {
		return func(context.Context, *State) (*State, error) { return &State{Log: []string{name}}, nil }
	},
	noop: func(_ context.Context, s *State) (*State, error) { return s, nil },
	read: func(s *State) State { return *s },
}

// valueMerger: the kept style with S3 merged by a TypedStateMerger instead
// of fanSchema.
var valueMerger = variant[State]{
	merger: func(_ context.Context, current State, results []State) (State, error) {
		if len(results) == 1 {
			return results[0], nil
		}
		for _, r := range results {
			current.Count += r.Count
			current.Log = append(current.Log, r.Log...)
		}
		return current, nil
	},
	init:   func() State { return State{} },
	step:   step,
	add:    addOne,
	branch: appendName,
	noop:   func(_ context.Context, s State) (State, error) { return s, nil },
	read:   func(s State) State { return s },
}

// styles are the variants with their names, and "kept", the package's own
// Prepare.
var styles = []struct {
	name  string
	build func(harness.Shape) (harness.Run, error)
}{
	{"kept", func(s harness.Shape) (harness.Run, error) {
		run, _, err := prepare(context.Background(), s, "")
		return run, err
	}},
	{"ptrMutate", ptrMutate.build},
	{"valueMerger", valueMerger.build},
	{"structSchema", structSchema.build},
	{"fieldMerger", fieldMerger.build},
	{"mapSchema", mapSchema.build},
	{"mapMutate", mapMutate.build},
}

// styleShapes are the shapes the styles are compared on (S4SQLite is left
// out: its store's I/O dominates it whatever the style).
var styleShapes = []harness.Shape{harness.S1, harness.S2, harness.S3, harness.S4Memory}

// TestStyles checks that every style computes every shape it supports.
func TestStyles(t *testing.T) {
	for _, s := range styleShapes {
		for _, st := range styles {
			t.Run(string(s)+"/"+st.name, func(t *testing.T) {
				run, err := st.build(s)
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
// run so that the figures compare. S4mem's ns/op grows with b.N (see
// buildCheckpointedChain), so compare its styles at one -benchtime=Nx.
func BenchmarkStyles(b *testing.B) {
	for _, s := range styleShapes {
		for _, st := range styles {
			b.Run(string(s)+"/"+st.name, func(b *testing.B) {
				run, err := st.build(s)
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
