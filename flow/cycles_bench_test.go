package flow_test

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/weftlang/weft/flow"
)

// manyCycles is a workflow of n FUNCTION nodes (n even) in n/2 two-node
// cycles a_i <-> b_i, each left for the next by a conditional edge, then
// an END node: n/2 strongly connected components.
func manyCycles(n int) *flow.Workflow {
	w := &flow.Workflow{Name: "Cycles", Pos: P(1, 1)}
	name := func(i int) string { return "n" + strconv.Itoa(i) }
	for i := range n {
		w.Nodes = append(w.Nodes, fnode(P(2, 1), name(i), "act"))
	}
	w.Nodes = append(w.Nodes, &flow.Node{Name: "done", Type: flow.End, Pos: P(3, 1)})
	for i := 0; i < n; i += 2 {
		next := "done"
		if i+2 < n {
			next = name(i + 2)
		}
		w.Edges = append(w.Edges,
			edge(P(4, 1), name(i), name(i+1)),
			edge(P(4, 1), name(i+1), name(i), when(P(4, 1), "true")),
			edge(P(4, 1), name(i+1), next))
	}
	w.Initial = name(0)
	w.Finals = []string{"done"}
	return w
}

// The cycle check is linear in nodes and edges: a workflow of many cycles
// compiles, and warns about each (none has a counter), quickly.
func TestManyCyclesCompile(t *testing.T) {
	w := manyCycles(20000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, ds := flow.Compile(w, &flow.CompileOptions{HasAction: hasAction("act")})
	runtime.ReadMemStats(&after)
	if ds.HasErrors() || p == nil {
		t.Fatalf("Compile: %.500v", ds)
	}
	// About 2 KB a node; a check quadratic in the nodes allocates 10,000
	// components x 20,000 nodes = 200 MB more.
	if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 100 {
		t.Errorf("Compile of 20,000 nodes allocated %d MB", mb)
	}
	got := findDiag(ds, "unbounded-cycle")
	if len(got) != 10000 || !strings.Contains(got[0].Msg, "cycle n0 -> n1 -> n0 has no counter") ||
		!strings.Contains(got[9999].Msg, "cycle n19998 -> n19999 -> n19998 has no counter") {
		t.Errorf("%d unbounded-cycle warnings; first %v", len(got), got[:min(len(got), 1)])
	}
}

func BenchmarkCompileManyCycles(b *testing.B) {
	w := manyCycles(100000)
	opts := &flow.CompileOptions{HasAction: hasAction("act")}
	b.ReportAllocs()
	for b.Loop() {
		if _, ds := flow.Compile(w, opts); ds.HasErrors() {
			b.Fatal(ds)
		}
	}
}
