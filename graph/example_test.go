package graph_test

import (
	"context"
	"fmt"

	"github.com/weftlang/weft/graph"
)

// ExampleGraph builds a small loop with a typed partial update, an append
// reducer and a routing function, and runs it.
func ExampleGraph() {
	type State struct {
		Count int      `weft:"count"`
		Log   []string `weft:"log,append"`
	}
	type Step struct {
		Count int
		Log   string // appends one element to State.Log
	}

	g := graph.New[State]("counter")
	graph.AddNode(g, "inc", func(ctx context.Context, s State) (Step, error) {
		return Step{Count: s.Count + 1, Log: fmt.Sprint("inc ", s.Count+1)}, nil
	})
	graph.AddNode(g, "report", func(ctx context.Context, s State) (graph.Nothing, error) {
		fmt.Println("report sees", s.Count)
		return graph.Nothing{}, nil
	})
	g.SetEntry("inc")
	g.AddConditionalEdges("inc", func(s State) string {
		if s.Count < 3 {
			return "inc"
		}
		return "report"
	}, "inc", "report")
	g.AddEdge("report", graph.END)

	c, err := g.Compile(graph.Options{MaxSteps: 100})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := c.Invoke(context.Background(), State{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Count, out.Log)
	for _, e := range c.Workflow().Edges {
		fmt.Println(e.From, "->", e.To, e.Cond)
	}
	// Output:
	// report sees 3
	// 3 [inc 1 inc 2 inc 3]
	// inc -> [inc] inc.route == "inc"
	// inc -> [report] inc.route == "report"
	// report -> [__end__] <nil>
}
