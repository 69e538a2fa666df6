// Package einobench implements the benchmark shapes of
// shared/reference/peers.md with CloudWeGo Eino (github.com/cloudwego/eino)
// v0.9.18, in the cheapest of the styles Eino's docs show: a typed
// compose.NewGraph[*State, *State], as in Eino's README, whose nodes are
// compose.InvokableLambda functions that take the *State their
// predecessor returned and return it updated, with edges added by
// AddEdge, S2's loop closed by AddBranch and compose.NewGraphBranch, and
// S3's fan-in merged by a merge function registered with
// compose.RegisterValuesMergeFunc. The graphs run in Eino's default
// trigger mode (AnyPredecessor, Pregel supersteps).
//
// Each graph is compiled once, in Prepare; each Run invokes the compiled
// runnable once and checks the final state it returns.
//
// The styles measured (styles_test.go: BenchmarkStyles, and TestStyles,
// which checks that each computes its shapes), from one run of
// "go test -bench Styles -count 3" (S4mem with -benchtime 100x), median
// ns/op and allocs/op, on a loaded 2-core machine where ns/op varies by
// some 20% from run to run and allocs/op does not (S3's by a few):
//
//	style        S1 chain10      S2 loop1000        S3 fanout100      S4mem
//	kept         127 us  440     8.39 ms  34,058    1.36 ms  3,364    80 us  445
//	valueIO      137 us  451     9.55 ms  35,059    1.86 ms  3,363    98 us  456
//	localState   140 us  443     9.73 ms  34,061    1.83 ms  3,569   152 us  448
//	localPost    135 us  443     -                  -                 -
//	chainIO      146 us  440     -                  1.65 ms  3,554   153 us  445
//	graphIOMap   -               -                  1.63 ms  3,553    -
//	dagIO        150 us  484     -                  3.77 ms  5,206   128 us  489
//	workflowIO   174 us  484     -                  3.69 ms  5,734   119 us  489
//
// The styles other than kept:
//   - valueIO is kept with State passed by value (NewGraph[State, State]),
//     which boxes a State on every hop between nodes.
//   - localState keeps the State in the graph's local state
//     (compose.WithGenLocalState), each node updating it through
//     compose.ProcessState ("the recommended way to access and modify
//     state in custom nodes", compose/state.go); S3's branches append to
//     it and output their names under compose.WithOutputKey to a join
//     taking the merged map. This package's style, with State values
//     between nodes, before these measurements. localPost updates the
//     local state in a compose.WithStatePostHandler instead (S1 only).
//   - chainIO is compose.NewChain: AppendLambda, and for S3 AppendParallel,
//     whose branches output under their keys to a join taking the map. A
//     chain compiles to the same Pregel graph as kept; it has no loop, so
//     no S2. graphIOMap is kept's S3 with that map fan-in instead of the
//     registered merge.
//   - dagIO is kept's graphs compiled with compose.WithNodeTriggerMode(
//     compose.AllPredecessor), Eino's DAG mode (eager); workflowIO is
//     compose.NewWorkflow, which runs in that mode, S3's join mapping each
//     branch to a key of its map input (AddInput(name,
//     compose.ToField(name)); a workflow refuses two whole outputs into
//     one input). DAG mode refuses cycles, so neither has S2.
//
// The kept style has the fewest allocations on every shape, tied with
// chainIO on S1 and S4 (the same compiled graph) and with valueIO on S3,
// and compose.Graph is the one API that expresses all four shapes.
// S4 writes no checkpoint in any style (see prepareS4Memory).
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

// State is what every graph here passes from node to node, by pointer:
// each node takes the *State its predecessor returned and returns it
// updated (or, in S3's branches, a new one), as the typed graphs of
// Eino's README do (compose.NewGraph[*Input, *Output]), and the graph's
// output is the last node's *State. Each invocation starts from a new
// State.
type State struct {
	// Count is incremented by the nodes of S1, S2 and S4.
	Count int
	// Log receives the names of the nodes that append to it, in the order
	// they ran.
	Log []string
}

func init() {
	// S3's join has 100 predecessors, whose *States Eino merges into its
	// input: a type other than a map needs a merge function, registered
	// with compose.RegisterValuesMergeFunc ("registers a function to merge
	// outputs from multiple nodes when fan-in", compose/values_merge.go).
	compose.RegisterValuesMergeFunc(mergeStates)
	// The docs of schema.RegisterName ask for the concrete types held in a
	// checkpoint to be registered, and a checkpoint of these graphs would
	// hold the *States in flight between nodes. The name is unique to this
	// package, so the registration cannot collide.
	schema.RegisterName[*State]("weft_bench_einobench_state")
}

// mergeStates is the fan-in merge of *States into a new one: counts add
// up and logs are concatenated, in the order Eino passes them.
func mergeStates(vs []*State) (*State, error) {
	out := &State{}
	for _, v := range vs {
		out.Count += v.Count
		out.Log = append(out.Log, v.Log...)
	}
	return out, nil
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

// stepNode is the node body of S1 and S4: add 1 to Count and append name
// to Log.
func stepNode(name string) *compose.Lambda {
	return compose.InvokableLambda(func(_ context.Context, in *State) (*State, error) {
		in.Count++
		in.Log = append(in.Log, name)
		return in, nil
	})
}

// countNode is the node body of S2: add 1 to Count.
func countNode() *compose.Lambda {
	return compose.InvokableLambda(func(_ context.Context, in *State) (*State, error) {
		in.Count++
		return in, nil
	})
}

// passNode is the body of S3's fork and join: pass the State on.
func passNode() *compose.Lambda {
	return compose.InvokableLambda(func(_ context.Context, in *State) (*State, error) {
		return in, nil
	})
}

// branchNode is the body of S3's parallel node name: a new State whose
// log is name (the 100 branches share the fork's State, so none writes
// it), which the join's merge (mergeStates) gathers with the others.
func branchNode(name string) *compose.Lambda {
	return compose.InvokableLambda(func(context.Context, *State) (*State, error) {
		return &State{Log: []string{name}}, nil
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
func buildChain() (*compose.Graph[*State, *State], error) {
	g := compose.NewGraph[*State, *State]()
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
func checkChain(out *State) error {
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
		out, err := r.Invoke(ctx, &State{})
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
	g := compose.NewGraph[*State, *State]()
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
	loop := compose.NewGraphBranch(func(_ context.Context, in *State) (string, error) {
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
		out, err := r.Invoke(ctx, &State{})
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

// buildFanout builds S3's graph: START -> fork -> p00..p99 -> join -> END.
func buildFanout() (*compose.Graph[*State, *State], error) {
	// The first node cannot be called "start": Eino reserves that name
	// (compose.START).
	const start, join = "fork", "join"
	g := compose.NewGraph[*State, *State]()
	if err := g.AddLambdaNode(start, passNode()); err != nil {
		return nil, fmt.Errorf("add node %s: %w", start, err)
	}
	if err := g.AddEdge(compose.START, start); err != nil {
		return nil, fmt.Errorf("add edge start -> %s: %w", start, err)
	}
	if err := g.AddLambdaNode(join, passNode()); err != nil {
		return nil, fmt.Errorf("add node %s: %w", join, err)
	}
	for _, name := range fanNames {
		if err := g.AddLambdaNode(name, branchNode(name)); err != nil {
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
	return g, nil
}

func prepareS3(ctx context.Context) (harness.Run, error) {
	g, err := buildFanout()
	if err != nil {
		return nil, err
	}
	// Eino's default trigger mode (AnyPredecessor, Pregel-style supersteps
	// that are not eager) runs the 100 branches as one superstep: it starts
	// them together (99 goroutines and the calling one, taskManager.submit)
	// and waits for all of them (needAll) before the next, so the join runs
	// once, on the merge of all 100 States. compose.WithNodeTriggerMode(
	// compose.AllPredecessor), Eino's DAG mode, gives the same result at
	// about 55% more allocations here (see the package comment), so the
	// default is measured.
	r, err := g.Compile(ctx, compose.WithGraphName("fanout100"))
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return func(ctx context.Context, _ int) error {
		out, err := r.Invoke(ctx, &State{})
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
		out, err := r.Invoke(ctx, &State{}, compose.WithCheckPointID(strconv.Itoa(i)))
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
