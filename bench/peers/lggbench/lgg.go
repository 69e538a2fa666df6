// Package lggbench implements the benchmark shapes of package harness with
// langgraphgo v0.8.5 (github.com/smallnest/langgraphgo), written in the
// style its README, doc comments and examples show: a StateGraph over
// map[string]any with a graph.MapSchema whose reducers merge the partial
// updates the nodes return (a sum reducer for count, graph.AppendReducer
// for log, as in its examples/state_schema), AddNode, AddEdge,
// AddConditionalEdge, SetEntryPoint and graph.END, compiled once; and, for
// S4, a CheckpointableStateGraph invoked with graph.WithThreadID.
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

// state is the graph state: langgraphgo's map state, merged by a MapSchema.
type state = map[string]any

// nodeFunc is the signature of a langgraphgo node over state.
type nodeFunc = func(ctx context.Context, s state) (state, error)

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

// newSchema is the state schema of every shape: count sums the nodes'
// increments, log appends the names they return.
func newSchema() *graph.MapSchema {
	schema := graph.NewMapSchema()
	schema.RegisterReducer("count", sumReducer)
	schema.RegisterReducer("log", graph.AppendReducer)
	return schema
}

// sumReducer adds an int update to the current int value (nil counts as
// zero), like the SumReducer of langgraphgo's state_schema example.
func sumReducer(current, update any) (any, error) {
	u, ok := update.(int)
	if !ok {
		return nil, fmt.Errorf("lggbench: count update is %T, not int", update)
	}
	if current == nil {
		return u, nil
	}
	c, ok := current.(int)
	if !ok {
		return nil, fmt.Errorf("lggbench: count is %T, not int", current)
	}
	return c + u, nil
}

// initialState is the input of one invocation.
func initialState() state {
	return state{"count": 0, "log": []string{}}
}

// countAndLog is a node that adds 1 to count and appends name to log.
func countAndLog(name string) nodeFunc {
	return func(context.Context, state) (state, error) {
		return state{"count": 1, "log": []string{name}}, nil
	}
}

// addOne is a node that adds 1 to count.
func addOne(context.Context, state) (state, error) {
	return state{"count": 1}, nil
}

// appendName is a node that appends name to log.
func appendName(name string) nodeFunc {
	return func(context.Context, state) (state, error) {
		return state{"log": []string{name}}, nil
	}
}

// noUpdate is a node that returns no update (S3's start and join).
func noUpdate(context.Context, state) (state, error) {
	return nil, nil
}

// chainGraph is what wireChain needs of StateGraph and
// CheckpointableStateGraph, whose AddNode methods differ in their results.
type chainGraph interface {
	AddEdge(from, to string)
	SetEntryPoint(name string)
	SetSchema(schema graph.StateSchema[state])
}

// wireChain adds S1's chain n0 -> ... -> n9 -> END to g.
func wireChain(g chainGraph, addNode func(name string, fn nodeFunc)) {
	g.SetSchema(newSchema())
	for i, name := range chainNames {
		addNode(name, countAndLog(name))
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
	g := graph.NewStateGraph[state]()
	wireChain(g, func(name string, fn nodeFunc) { g.AddNode(name, "add 1, log "+name, fn) })
	r, err := g.Compile()
	if err != nil {
		return nil, fmt.Errorf("lggbench: compile S1: %w", err)
	}
	run := func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, initialState())
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
	g := graph.NewStateGraph[state]()
	g.SetSchema(newSchema())
	g.AddNode("A", "add 1", addOne)
	g.AddNode("B", "add 1", addOne)
	g.AddEdge("A", "B")
	g.AddConditionalEdge("B", func(_ context.Context, s state) string {
		if c, ok := s["count"].(int); ok && c < loopTarget {
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
		out, err := r.Invoke(ctx, initialState())
		if err != nil {
			return fmt.Errorf("lggbench: S2 invoke: %w", err)
		}
		if c, ok := out["count"].(int); !ok || c != loopTarget {
			return fmt.Errorf("lggbench: S2: count is %v, want %d", out["count"], loopTarget)
		}
		return nil
	}
	return &prepared{run: run, close: noClose}, nil
}

// buildFanout builds S3: start -> p00..p99 (run in parallel, as edges from
// one node fan out in langgraphgo) -> join -> END.
func buildFanout() (*prepared, error) {
	g := graph.NewStateGraph[state]()
	g.SetSchema(newSchema())
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
		out, err := r.Invoke(ctx, initialState())
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
func buildCheckpointedChain(st graph.CheckpointStore, closeStore func() error) (*prepared, error) {
	g := graph.NewCheckpointableStateGraph[state]()
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
		out, err := r.InvokeWithConfig(ctx, initialState(), graph.WithThreadID(threadID(i)))
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
func checkChain(out state) error {
	if c, ok := out["count"].(int); !ok || c != chainLen {
		return fmt.Errorf("lggbench: chain: count is %v, want %d", out["count"], chainLen)
	}
	log, ok := out["log"].([]string)
	if !ok {
		return fmt.Errorf("lggbench: chain: log is %T, want []string", out["log"])
	}
	if !slices.Equal(log, chainNames) {
		return fmt.Errorf("lggbench: chain: log is %v, want %v", log, chainNames)
	}
	return nil
}

// checkFanout checks S3's final state: 100 log entries, one per branch.
func checkFanout(out state) error {
	log, ok := out["log"].([]string)
	if !ok {
		return fmt.Errorf("lggbench: fanout: log is %T, want []string", out["log"])
	}
	if len(log) != branchCount {
		return fmt.Errorf("lggbench: fanout: log has %d entries, want %d", len(log), branchCount)
	}
	var seen [branchCount]bool
	for _, name := range log {
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
