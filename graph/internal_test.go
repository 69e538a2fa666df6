package graph

import (
	"context"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

func TestFastPathChosen(t *testing.T) {
	type fast struct {
		A int
		B []string `weft:"b,append"`
		C time.Duration
	}
	type slow struct {
		A int
		M map[string]int
	}
	fg := New[fast]("f")
	AddNode(fg, "n", func(context.Context, fast) (struct{ B string }, error) { return struct{ B string }{}, nil })
	fg.SetEntry("n")
	fg.AddEdge("n", END)
	sg := New[slow]("s")
	AddNode(sg, "n", func(context.Context, slow) (struct{ A int }, error) { return struct{ A int }{}, nil })
	sg.SetEntry("n")
	sg.AddEdge("n", END)
	fc, err := fg.Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sg.Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	fa, _ := fc.runner.Registry.Lookup("go:n")
	sa, _ := sc.runner.Registry.Lookup("go:n")
	if !fa.(*goNode[fast, struct{ B string }]).spec.fast {
		t.Error("fast state takes the reflective path")
	}
	if sa.(*goNode[slow, struct{ A int }]).spec.fast {
		t.Error("a map field takes the fast path")
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"Count": "count", "RetrievedDocs": "retrieved_docs", "UserID": "user_id", "HTTPStatus": "http_status",
		"A": "a", "ID": "id", "A1B": "a1_b", "getHTTP": "get_http",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkGoNodeRun measures the typed layer alone: one call of a Go
// node's action (decode the state, call the function, encode the update,
// route), as in S2's node B, without the engine.
func BenchmarkGoNodeRun(b *testing.B) {
	type st struct {
		Count int `weft:"count"`
	}
	g := New[st]("b")
	AddNode(g, "B", func(_ context.Context, s st) (st, error) { return st{Count: s.Count + 1}, nil })
	g.SetEntry("B")
	g.AddConditionalEdges("B", func(s st) string {
		if s.Count >= 1000 {
			return END
		}
		return "B"
	}, "B", END)
	c, err := g.Compile(Options{})
	if err != nil {
		b.Fatal(err)
	}
	act, _ := c.runner.Registry.Lookup("go:B")
	pn := c.plan.Nodes[0]
	call := &engine.Call{Node: pn, Inputs: make([]flow.Value, len(pn.Inputs)), Outputs: make([]flow.Value, len(pn.Outputs))}
	call.Inputs[0] = flow.IntValue(5)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := act.Run(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
	if call.Outputs[0].Int() != 6 || call.Outputs[1].Str() != "B" {
		b.Fatal(call.Outputs)
	}
}
