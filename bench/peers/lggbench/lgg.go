// Package lggbench implements the benchmark shapes of package harness with
// langgraphgo v0.8.5 (github.com/smallnest/langgraphgo), in the cheapest
// of the styles its docs show: a typed graph.NewStateGraph[State] over a
// struct, whose nodes take the state and return it updated (docs/GENERIC.md
// example 1, the StateGraph doc comment), with no schema, so that
// langgraphgo keeps the state a node returns; S3, whose 100 parallel
// branches must be merged, sets a graph.NewStructSchema whose merge
// function appends the branches' logs (docs/GENERIC.md example 2). Graphs
// are built with AddNode, AddEdge, AddConditionalEdge, SetEntryPoint and
// graph.END and compiled once; S4 is a CheckpointableStateGraph[State]
// invoked with graph.WithThreadID.
//
// The styles measured (styles_test.go: BenchmarkStyles, and TestStyles,
// which checks that each computes its shapes), from one run of
// "go test -bench Styles -count 3" (S4mem with -benchtime 100x, see
// below), median ns/op and allocs/op, on a loaded 2-core machine where
// ns/op varies by some 20% from run to run and allocs/op does not:
//
//	style         S1 chain10      S2 loop1000        S3 fanout100    S4mem
//	kept          29.4 us  128    2.34 ms  12,003    279 us    460   2.25 ms  587
//	valueMerger   27.7 us  128    2.70 ms  12,003    275 us    460   2.20 ms  586
//	ptrMutate     28.7 us  129    2.39 ms  12,004    290 us    562   2.25 ms  546
//	structSchema  29.2 us  138    3.01 ms  12,003    263 us    460   2.15 ms  596
//	mapMutate     33.5 us  141    2.79 ms  12,751    -               2.04 ms  607
//	fieldMerger   33.5 us  193    4.03 ms  17,753    357 us    975   2.35 ms  651
//	mapSchema     55.5 us  214    4.58 ms  16,754    534 us  1,170   1.88 ms  680
//
// The styles other than kept:
//   - valueMerger is kept with S3 merged by a TypedStateMerger
//     (SetStateMerger) instead of the StructSchema: the same cost.
//   - ptrMutate is NewStateGraph[*State], nodes updating the State they
//     get (as langgraphgo's showcases, smallnest/langgraphgo-showcases,
//     do); S3's branches return new States, which a merger appends.
//   - structSchema is the StructSchema in every shape, nodes returning
//     partial updates; fieldMerger is the same with a graph.FieldMerger
//     (SumIntMerge, AppendSliceMerge), which merges by reflection.
//   - mapSchema is map[string]any with a graph.MapSchema (a sum reducer,
//     graph.AppendReducer), nodes returning partial updates: README "State
//     Schema", and this package's style before these measurements;
//     NewMessageGraph is the same machinery. mapMutate is map[string]any
//     with no schema, nodes updating the map they get; it has no S3, as
//     parallel branches would write one map.
//
// The kept style has the fewest allocations on S1 (128, the figure
// shared/reference/peers.md reports) and ties on S2 and S3. ptrMutate
// allocates less on S4 only because its checkpoints hold the pointer
// rather than a copy: every checkpoint of a run is the same State, which
// later steps go on changing, so it does not checkpoint each step.
//
// S4's ns/op depends on b.N, in every style: see buildCheckpointedChain.
// S4sqlite allocates, per invocation, 31,797 times at -benchtime 10x,
// 288,992 at 100x and 864,840 at 300x.
package lggbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/smallnest/langgraphgo/graph"
	"github.com/smallnest/langgraphgo/store/sqlite"
	"github.com/weftlang/weft/bench/peers/harness"
)

// Engine returns the langgraphgo implementation of the shapes.
func Engine() harness.Engine {
	return harness.Engine{
		Name:    "langgraphgo",
		Version: "v0.8.5",
		Prepare: prepare,
	}
}

// State is the graph state of every shape: a typed struct, the state
// type langgraphgo's docs/GENERIC.md and the StateGraph doc comment show.
// The json tags name its fields in the SQLite store's JSON.
type State struct {
	// Count is incremented by S1's, S2's and S4's nodes.
	Count int `json:"count"`
	// Log receives the names of the nodes that append to it.
	Log []string `json:"log"`
}

// nodeFunc is the signature of a langgraphgo node over State.
type nodeFunc = func(ctx context.Context, s State) (State, error)

const (
	chainLen    = 10   // S1, S4: nodes in the chain
	loopTarget  = 1000 // S2: count at which B routes to END
	branchCount = 100  // S3: parallel branches
)

// chainNames are S1's node names n0..n9, which is also the expected log.
var chainNames = func() []string {
	names := make([]string, chainLen)
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i)
	}
	return names
}()

// branchNames are S3's branch names p00..p99.
var branchNames = func() []string {
	names := make([]string, branchCount)
	for i := range names {
		names[i] = fmt.Sprintf("p%02d", i)
	}
	return names
}()

// branchIndex maps each branch name to its index in branchNames.
var branchIndex = func() map[string]int {
	idx := make(map[string]int, len(branchNames))
	for i, name := range branchNames {
		idx[name] = i
	}
	return idx
}()

// prepared is one built shape: its invocation, what releases it, and (for
// S4) the checkpoint store it writes to, which the tests list.
type prepared struct {
	run   harness.Run
	close func() error
	store graph.CheckpointStore
}

// prepare is harness.Engine.Prepare for langgraphgo.
func prepare(ctx context.Context, s harness.Shape, dir string) (harness.Run, func() error, error) {
	p, err := build(ctx, s, dir)
	if err != nil {
		return nil, nil, err
	}
	return p.run, p.close, nil
}

// build builds shape s once.
func build(_ context.Context, s harness.Shape, dir string) (*prepared, error) {
	switch s {
	case harness.S1:
		return buildChain()
	case harness.S2:
		return buildLoop()
	case harness.S3:
		return buildFanout()
	case harness.S4Memory:
		// The default checkpoint config of NewCheckpointableStateGraph is
		// documented (graph/checkpointing.go, DefaultCheckpointConfig) as an
		// in-memory store with AutoSave, i.e. a checkpoint after every step.
		return buildCheckpointedChain(graph.NewMemoryCheckpointStore(), nil)
	case harness.S4SQLite:
		// langgraphgo ships store/sqlite (SqliteCheckpointStore, see
		// store/sqlite/doc.go). It uses the cgo driver
		// github.com/mattn/go-sqlite3, which resolves and builds here.
		sub, err := os.MkdirTemp(dir, "langgraphgo-sqlite-")
		if err != nil {
			return nil, fmt.Errorf("lggbench: S4sqlite scratch directory: %w", err)
		}
		st, err := sqlite.NewSqliteCheckpointStore(sqlite.SqliteOptions{
			Path: filepath.Join(sub, "checkpoints.db"),
		})
		if err != nil {
			return nil, fmt.Errorf("lggbench: open SQLite checkpoint store: %w", err)
		}
		p, err := buildCheckpointedChain(st, st.Close)
		if err != nil {
			return nil, errors.Join(err, st.Close())
		}
		return p, nil
	default:
		return nil, fmt.Errorf("lggbench: unknown shape %q", s)
	}
}

// step is a node of S1 and S4: it adds 1 to Count, appends name to Log
// and returns the whole updated state, as the nodes of docs/GENERIC.md's
// first example do. The graph has no schema, so langgraphgo takes the
// returned state as the new state (StateRunnable.mergeState: the last
// result when neither schema nor merger is set).
func step(name string) nodeFunc {
	return func(_ context.Context, s State) (State, error) {
		s.Count++
		s.Log = append(s.Log, name)
		return s, nil
	}
}

// addOne is a node of S2: it adds 1 to Count.
func addOne(_ context.Context, s State) (State, error) {
	s.Count++
	return s, nil
}

// fanSchema merges S3's parallel results: the nodes return only their
// update (here, a one-name Log), and the schema appends each update's Log
// to the state and adds its Count, as the StructSchema of docs/GENERIC.md's
// second example merges its Items and Count. A schema is needed only
// where nodes run in parallel: without one, the last branch's state would
// replace the others'.
func fanSchema() *graph.StructSchema[State] {
	return graph.NewStructSchema(State{}, func(current, update State) (State, error) {
		current.Count += update.Count
		current.Log = append(current.Log, update.Log...)
		return current, nil
	})
}

// appendName is a branch of S3: its update appends name to Log.
func appendName(name string) nodeFunc {
	return func(context.Context, State) (State, error) {
		return State{Log: []string{name}}, nil
	}
}

// noUpdate is S3's start and join: an empty update.
func noUpdate(context.Context, State) (State, error) {
	return State{}, nil
}

// chainGraph is what wireChain needs of StateGraph and
// CheckpointableStateGraph, whose AddNode methods differ in their results.
type chainGraph interface {
	AddEdge(from, to string)
	SetEntryPoint(name string)
}

// wireChain adds S1's chain n0 -> ... -> n9 -> END to g.
func wireChain(g chainGraph, addNode func(name string, fn nodeFunc)) {
	for i, name := range chainNames {
		addNode(name, step(name))
		if i > 0 {
			g.AddEdge(chainNames[i-1], name)
		}
	}
	g.SetEntryPoint(chainNames[0])
	g.AddEdge(chainNames[len(chainNames)-1], graph.END)
}

// noClose is the release function of shapes that open nothing.
func noClose() error { return nil }

// buildChain builds S1.
func buildChain() (*prepared, error) {
	g := graph.NewStateGraph[State]()
	wireChain(g, func(name string, fn nodeFunc) { g.AddNode(name, "add 1, log "+name, fn) })
	r, err := g.Compile()
	if err != nil {
		return nil, fmt.Errorf("lggbench: compile S1: %w", err)
	}
	run := func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, State{})
		if err != nil {
			return fmt.Errorf("lggbench: S1 invoke: %w", err)
		}
		return checkChain(out)
	}
	return &prepared{run: run, close: noClose}, nil
}

// buildLoop builds S2: A -> B, B -> A while count < 1000, else END.
// langgraphgo v0.8.5 has no recursion or step limit to raise: graph.Config
// has no such field and StateRunnable.InvokeWithConfig loops until no node
// is left.
func buildLoop() (*prepared, error) {
	g := graph.NewStateGraph[State]()
	g.AddNode("A", "add 1", addOne)
	g.AddNode("B", "add 1", addOne)
	g.AddEdge("A", "B")
	g.AddConditionalEdge("B", func(_ context.Context, s State) string {
		if s.Count < loopTarget {
			return "A"
		}
		return graph.END
	})
	g.SetEntryPoint("A")
	r, err := g.Compile()
	if err != nil {
		return nil, fmt.Errorf("lggbench: compile S2: %w", err)
	}
	run := func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, State{})
		if err != nil {
			return fmt.Errorf("lggbench: S2 invoke: %w", err)
		}
		if out.Count != loopTarget {
			return fmt.Errorf("lggbench: S2: count is %d, want %d", out.Count, loopTarget)
		}
		return nil
	}
	return &prepared{run: run, close: noClose}, nil
}

// buildFanout builds S3: start -> p00..p99 (run in parallel, as edges from
// one node fan out in langgraphgo) -> join -> END, the branches' updates
// merged by fanSchema.
func buildFanout() (*prepared, error) {
	g := graph.NewStateGraph[State]()
	g.SetSchema(fanSchema())
	g.AddNode("start", "fan out", noUpdate)
	g.AddNode("join", "fan in", noUpdate)
	for _, name := range branchNames {
		g.AddNode(name, "log "+name, appendName(name))
		g.AddEdge("start", name)
		g.AddEdge(name, "join")
	}
	g.AddEdge("join", graph.END)
	g.SetEntryPoint("start")
	r, err := g.Compile()
	if err != nil {
		return nil, fmt.Errorf("lggbench: compile S3: %w", err)
	}
	run := func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, State{})
		if err != nil {
			return fmt.Errorf("lggbench: S3 invoke: %w", err)
		}
		return checkFanout(out)
	}
	return &prepared{run: run, close: noClose}, nil
}

// threadID names the thread of S4's invocation i.
func threadID(i int) string {
	return fmt.Sprintf("lggbench-%d", i)
}

// buildCheckpointedChain builds S4: S1 as a CheckpointableStateGraph whose
// config (DefaultCheckpointConfig: AutoSave, MaxCheckpoints 10) saves a
// checkpoint to st after every step, invoked on a new thread each time.
// closeStore, if not nil, releases st.
//
// Each save first lists every checkpoint of the runnable's execution ID
// (CheckpointListener.saveCheckpoint calls store.List to find the next
// version), and that ID is fixed when the graph is compiled, so it covers
// every earlier invocation: the memory store scans and sorts all of them,
// the SQLite store reads and decodes all of them. MaxCheckpoints prunes
// per thread, so nothing bounds that list. An invocation therefore costs
// more the more invocations preceded it, and S4's ns/op grows with b.N.
func buildCheckpointedChain(st graph.CheckpointStore, closeStore func() error) (*prepared, error) {
	g := graph.NewCheckpointableStateGraph[State]()
	cfg := g.GetCheckpointConfig()
	cfg.Store = st
	cfg.AutoSave = true
	g.SetCheckpointConfig(cfg)
	wireChain(g, func(name string, fn nodeFunc) { g.AddNode(name, "add 1, log "+name, fn) })
	r, err := g.CompileCheckpointable()
	if err != nil {
		return nil, fmt.Errorf("lggbench: compile S4: %w", err)
	}
	run := func(ctx context.Context, i int) error {
		out, err := r.InvokeWithConfig(ctx, State{}, graph.WithThreadID(threadID(i)))
		if err != nil {
			return fmt.Errorf("lggbench: S4 invoke (thread %s): %w", threadID(i), err)
		}
		return checkChain(out)
	}
	if closeStore == nil {
		closeStore = noClose
	}
	return &prepared{run: run, close: closeStore, store: st}, nil
}

// checkChain checks S1's final state: count 10 and log n0..n9 in order.
func checkChain(out State) error {
	if out.Count != chainLen {
		return fmt.Errorf("lggbench: chain: count is %d, want %d", out.Count, chainLen)
	}
	if !slices.Equal(out.Log, chainNames) {
		return fmt.Errorf("lggbench: chain: log is %v, want %v", out.Log, chainNames)
	}
	return nil
}

// checkFanout checks S3's final state: 100 log entries, one per branch.
func checkFanout(out State) error {
	if len(out.Log) != branchCount {
		return fmt.Errorf("lggbench: fanout: log has %d entries, want %d", len(out.Log), branchCount)
	}
	var seen [branchCount]bool
	for _, name := range out.Log {
		k, ok := branchIndex[name]
		if !ok {
			return fmt.Errorf("lggbench: fanout: unexpected log entry %q", name)
		}
		if seen[k] {
			return fmt.Errorf("lggbench: fanout: branch %s logged twice", name)
		}
		seen[k] = true
	}
	return nil
}
