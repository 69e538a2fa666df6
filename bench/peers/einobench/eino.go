// Package einobench implements the benchmark shapes of
// shared/reference/peers.md with CloudWeGo Eino (github.com/cloudwego/eino)
// v0.9.18, in the style Eino's own documentation shows: a compose.Graph
// whose per-run shared state comes from compose.WithGenLocalState, nodes
// that are compose.InvokableLambda functions updating that state through
// compose.ProcessState (documented as "the recommended way to access and
// modify state in custom nodes", compose/state.go), edges added with
// AddEdge, a loop closed with AddBranch and compose.NewGraphBranch, and a
// fan-in merged by Eino's default map merge (compose.WithOutputKey).
//
// Each graph is compiled once, in Prepare; each Run invokes the compiled
// runnable once and checks the final state it returns.
package einobench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/weftlang/weft/bench/peers/harness"
)

// Version is the Eino module version this package is written against and
// reports in the comparison table; it matches bench/peers/go.mod.
const Version = "v0.9.18"

// State is the graph's local state, created afresh for every invocation
// by compose.WithGenLocalState and shared by all nodes of that invocation.
// Its fields are exported and the type is registered with
// schema.RegisterName, as Eino's checkpoint documentation requires for
// state that may be written to a checkpoint (schema/serialization.go).
type State struct {
	// Count is incremented by every node.
	Count int
	// Log receives the names of the nodes that append to it, in the order
	// they ran.
	Log []string
}

func init() {
	// The docs of schema.RegisterName ask for top-level state types to be
	// registered so that a checkpoint holding them can be serialized. The
	// name is unique to this package, so the registration cannot collide.
	schema.RegisterName[*State]("weft_bench_einobench_state")
}

// Engine returns the Eino implementation of the shapes.
func Engine() harness.Engine {
	return harness.Engine{
		Name:    "eino",
		Version: Version,
		Prepare: prepare,
	}
}

// errNoSQLite explains why S4SQLite is not run.
var errNoSQLite = fmt.Errorf("eino ships no SQLite checkpoint store: %w", harness.ErrUnsupported)

func prepare(ctx context.Context, s harness.Shape, _ string) (harness.Run, func() error, error) {
	var (
		run harness.Run
		err error
	)
	switch s {
	case harness.S1:
		run, err = prepareS1(ctx)
	case harness.S2:
		run, err = prepareS2(ctx)
	case harness.S3:
		run, err = prepareS3(ctx)
	case harness.S4Memory:
		run, _, err = prepareS4Memory(ctx)
	case harness.S4SQLite:
		return nil, nil, errNoSQLite
	default:
		return nil, nil, fmt.Errorf("eino: unknown shape %q", s)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("eino: prepare %s: %w", s, err)
	}
	return run, func() error { return nil }, nil
}

// newState is the compose.GenLocalState of every graph here.
func newState(context.Context) *State { return &State{} }

// stepNode is the node body of S1 and S4: add 1 to Count, append name to
// Log, and pass on a copy of the state it leaves, so that the last node's
// output is the graph's result.
func stepNode(name string) *compose.Lambda {
	return compose.InvokableLambda(func(ctx context.Context, _ State) (State, error) {
		var out State
		err := compose.ProcessState(ctx, func(_ context.Context, s *State) error {
			s.Count++
			s.Log = append(s.Log, name)
			out = *s
			return nil
		})
		return out, err
	})
}

// countNode is the node body of S2: add 1 to Count and pass on a copy of
// the state it leaves, which the loop's branch condition reads.
func countNode() *compose.Lambda {
	return compose.InvokableLambda(func(ctx context.Context, _ State) (State, error) {
		var out State
		err := compose.ProcessState(ctx, func(_ context.Context, s *State) error {
			s.Count++
			out = *s
			return nil
		})
		return out, err
	})
}

// chainNames are the node names of S1 and S4, in order.
var chainNames = func() []string {
	names := make([]string, 10)
	for i := range names {
		names[i] = "n" + strconv.Itoa(i)
	}
	return names
}()

// buildChain builds S1's graph: START -> n0 -> ... -> n9 -> END.
func buildChain() (*compose.Graph[State, State], error) {
	g := compose.NewGraph[State, State](compose.WithGenLocalState(newState))
	prev := compose.START
	for _, name := range chainNames {
		if err := g.AddLambdaNode(name, stepNode(name)); err != nil {
			return nil, fmt.Errorf("add node %s: %w", name, err)
		}
		if err := g.AddEdge(prev, name); err != nil {
			return nil, fmt.Errorf("add edge %s -> %s: %w", prev, name, err)
		}
		prev = name
	}
	if err := g.AddEdge(prev, compose.END); err != nil {
		return nil, fmt.Errorf("add edge %s -> end: %w", prev, err)
	}
	return g, nil
}

// checkChain checks the result of S1 and S4: count 10 and log n0..n9.
func checkChain(out State) error {
	if out.Count != len(chainNames) || !slices.Equal(out.Log, chainNames) {
		return fmt.Errorf("eino chain10: got count %d log %v, want count %d log %v",
			out.Count, out.Log, len(chainNames), chainNames)
	}
	return nil
}

func prepareS1(ctx context.Context) (harness.Run, error) {
	g, err := buildChain()
	if err != nil {
		return nil, err
	}
	r, err := g.Compile(ctx, compose.WithGraphName("chain10"))
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, State{})
		if err != nil {
			return fmt.Errorf("eino chain10: invoke: %w", err)
		}
		return checkChain(out)
	}, nil
}

// loopSteps is the count at which S2 stops.
const loopSteps = 1000

func prepareS2(ctx context.Context) (harness.Run, error) {
	const a, b = "A", "B"
	g := compose.NewGraph[State, State](compose.WithGenLocalState(newState))
	if err := g.AddLambdaNode(a, countNode()); err != nil {
		return nil, fmt.Errorf("add node %s: %w", a, err)
	}
	if err := g.AddLambdaNode(b, countNode()); err != nil {
		return nil, fmt.Errorf("add node %s: %w", b, err)
	}
	if err := g.AddEdge(compose.START, a); err != nil {
		return nil, fmt.Errorf("add edge start -> %s: %w", a, err)
	}
	if err := g.AddEdge(a, b); err != nil {
		return nil, fmt.Errorf("add edge %s -> %s: %w", a, b, err)
	}
	// B -> A while count < 1000, else the end, decided on B's output.
	loop := compose.NewGraphBranch(func(_ context.Context, in State) (string, error) {
		if in.Count < loopSteps {
			return a, nil
		}
		return compose.END, nil
	}, map[string]bool{a: true, compose.END: true})
	if err := g.AddBranch(b, loop); err != nil {
		return nil, fmt.Errorf("add branch after %s: %w", b, err)
	}
	// Eino's Pregel runner fails a run after maxRunSteps supersteps (by
	// default the node count + 10). This loop needs one per node-step,
	// 1000 in all (999 fails with "exceeds max steps"); allow twice that.
	r, err := g.Compile(ctx, compose.WithGraphName("loop1000"), compose.WithMaxRunSteps(2*loopSteps))
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, State{})
		if err != nil {
			return fmt.Errorf("eino loop1000: invoke: %w", err)
		}
		if out.Count != loopSteps {
			return fmt.Errorf("eino loop1000: got count %d, want %d", out.Count, loopSteps)
		}
		return nil
	}, nil
}

// fanWidth is the number of parallel nodes of S3.
const fanWidth = 100

// fanNames are the names of S3's parallel nodes, p00..p99.
var fanNames = func() []string {
	names := make([]string, fanWidth)
	for i := range names {
		names[i] = fmt.Sprintf("p%02d", i)
	}
	return names
}()

func prepareS3(ctx context.Context) (harness.Run, error) {
	// The first node cannot be called "start": Eino reserves that name
	// (compose.START).
	const start, join = "fork", "join"
	g := compose.NewGraph[State, State](compose.WithGenLocalState(newState))
	startNode := compose.InvokableLambda(func(_ context.Context, in State) (State, error) {
		return in, nil
	})
	if err := g.AddLambdaNode(start, startNode); err != nil {
		return nil, fmt.Errorf("add node %s: %w", start, err)
	}
	if err := g.AddEdge(compose.START, start); err != nil {
		return nil, fmt.Errorf("add edge start -> %s: %w", start, err)
	}
	// The join's input is the fan-in of 100 predecessors, which Eino
	// merges: a value type needs a merge function, and maps merge by
	// default (compose/values_merge.go), so each parallel node writes its
	// output under its own key with compose.WithOutputKey, the documented
	// way to give fan-in nodes a map[string]any input.
	joinNode := compose.InvokableLambda(func(ctx context.Context, _ map[string]any) (State, error) {
		var out State
		err := compose.ProcessState(ctx, func(_ context.Context, s *State) error {
			out = *s
			return nil
		})
		return out, err
	})
	if err := g.AddLambdaNode(join, joinNode); err != nil {
		return nil, fmt.Errorf("add node %s: %w", join, err)
	}
	for _, name := range fanNames {
		node := compose.InvokableLambda(func(ctx context.Context, _ State) (string, error) {
			err := compose.ProcessState(ctx, func(_ context.Context, s *State) error {
				s.Log = append(s.Log, name)
				return nil
			})
			return name, err
		})
		if err := g.AddLambdaNode(name, node, compose.WithOutputKey(name)); err != nil {
			return nil, fmt.Errorf("add node %s: %w", name, err)
		}
		if err := g.AddEdge(start, name); err != nil {
			return nil, fmt.Errorf("add edge %s -> %s: %w", start, name, err)
		}
		if err := g.AddEdge(name, join); err != nil {
			return nil, fmt.Errorf("add edge %s -> %s: %w", name, join, err)
		}
	}
	if err := g.AddEdge(join, compose.END); err != nil {
		return nil, fmt.Errorf("add edge %s -> end: %w", join, err)
	}
	// Eino's default trigger mode (Pregel-style supersteps) is used: all
	// 100 branches finish in one superstep, so the join sees every one of
	// them and the check passes. compose.WithNodeTriggerMode(
	// compose.AllPredecessor), Eino's DAG mode, guarantees that for
	// branches of any speed, but costs about 50% more allocations here
	// (5,432 against 3,567 per invocation): measuring the cheaper mode
	// keeps the comparison conservative.
	r, err := g.Compile(ctx, compose.WithGraphName("fanout100"))
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, State{})
		if err != nil {
			return fmt.Errorf("eino fanout100: invoke: %w", err)
		}
		return checkFan(out.Log)
	}, nil
}

// checkFan checks S3's log: one entry per parallel node, in any order.
func checkFan(log []string) error {
	if len(log) != fanWidth {
		return fmt.Errorf("eino fanout100: got %d log entries, want %d", len(log), fanWidth)
	}
	seen := make(map[string]bool, fanWidth)
	for _, name := range log {
		if seen[name] {
			return fmt.Errorf("eino fanout100: %s logged twice", name)
		}
		seen[name] = true
	}
	for _, name := range fanNames {
		if !seen[name] {
			return fmt.Errorf("eino fanout100: %s missing from the log", name)
		}
	}
	return nil
}

// memoryStore is an in-memory compose.CheckPointStore like the one in
// Eino's own tests (compose/checkpoint_test.go), made safe for concurrent
// use and counting its calls.
type memoryStore struct {
	mu   sync.Mutex
	m    map[string][]byte
	gets atomic.Int64
	sets atomic.Int64
}

// Get implements compose.CheckPointStore.
func (st *memoryStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	st.gets.Add(1)
	st.mu.Lock()
	defer st.mu.Unlock()
	v, ok := st.m[id]
	return v, ok, nil
}

// Set implements compose.CheckPointStore.
func (st *memoryStore) Set(_ context.Context, id string, cp []byte) error {
	st.sets.Add(1)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.m[id] = cp
	return nil
}

// prepareS4Memory is S1 compiled with an in-memory checkpoint store and
// invoked with a new checkpoint ID per invocation, as a user configures
// Eino's checkpointing (compose.WithCheckPointStore at compile time,
// compose.WithCheckPointID per call; compose/checkpoint.go).
//
// Eino only writes a checkpoint when a run is interrupted
// (compose/graph_run.go calls the store's Set only from its interrupt
// handling); a run that completes reads its checkpoint ID from the store
// (one Get, which finds nothing for a new ID) and writes none. So this
// shape measures S1 plus the checkpoint lookup, with no checkpoint
// written, which peers.md reports as "writes none". The store is returned
// so that tests can confirm that.
func prepareS4Memory(ctx context.Context) (harness.Run, *memoryStore, error) {
	g, err := buildChain()
	if err != nil {
		return nil, nil, err
	}
	store := &memoryStore{m: make(map[string][]byte)}
	r, err := g.Compile(ctx, compose.WithGraphName("chain10-checkpointed"),
		compose.WithCheckPointStore(store))
	if err != nil {
		return nil, nil, fmt.Errorf("compile: %w", err)
	}
	run := func(ctx context.Context, i int) error {
		out, err := r.Invoke(ctx, State{}, compose.WithCheckPointID(strconv.Itoa(i)))
		if err != nil {
			return fmt.Errorf("eino chain10 checkpointed (id %d): invoke: %w", i, err)
		}
		if err := checkChain(out); err != nil {
			return fmt.Errorf("checkpoint id %d: %w", i, err)
		}
		return nil
	}
	return run, store, nil
}
