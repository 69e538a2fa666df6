// Package benchshapes holds weft's side of the benchmark shapes of
// ../shared/reference/peers.md, each written twice: with the typed Go API
// (package graph) and as .wf source, over the same trivial node bodies. The
// engine benchmarks in bench/ and the side-by-side comparison in
// bench/peers both build their workflows from here, so the two measure the
// same thing.
package benchshapes

import (
	"context"
	"fmt"
	"strings"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/lang"
)

// ---- the Go API side ----

// ChainState is the state of S1 (and S4): a counter and a log each node
// appends its name to.
type ChainState struct {
	Count int      `weft:"count"`
	Log   []string `weft:"log,append"`
}

// ChainStep is an S1 node's update: the new count and one log entry.
type ChainStep struct {
	Count int
	Log   string
}

// S1Go builds S1 chain10 with the typed Go API.
func S1Go() (*graph.Compiled[ChainState], error) {
	g := graph.New[ChainState]("S1")
	prev := graph.START
	for i := range 10 {
		name := fmt.Sprintf("n%d", i)
		graph.AddNode(g, name, func(_ context.Context, s ChainState) (ChainStep, error) {
			return ChainStep{Count: s.Count + 1, Log: name}, nil
		})
		g.AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.END)
	return g.Compile(graph.Options{})
}

// LoopState is the state of S2.
type LoopState struct {
	Count int `weft:"count"`
}

// S2Go builds S2 loop1000 with the typed Go API.
func S2Go() (*graph.Compiled[LoopState], error) {
	g := graph.New[LoopState]("S2")
	inc := func(_ context.Context, s LoopState) (LoopState, error) { return LoopState{Count: s.Count + 1}, nil }
	graph.AddNode(g, "a", inc)
	graph.AddNode(g, "b", inc)
	g.SetEntry("a")
	g.AddEdge("a", "b")
	g.AddConditionalEdges("b", func(s LoopState) string {
		if s.Count >= 1000 {
			return graph.END
		}
		return "a"
	}, "a", graph.END)
	return g.Compile(graph.Options{})
}

// FanState is the state of S3: the log every branch appends to.
type FanState struct {
	Log []string `weft:"log,append"`
}

// FanStep is an S3 branch's update: its name.
type FanStep struct {
	Log string
}

// S3Go builds S3 fanout100 with the typed Go API.
func S3Go() (*graph.Compiled[FanState], error) {
	g := graph.New[FanState]("S3")
	graph.AddNode(g, "start", func(context.Context, FanState) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.SetEntry("start")
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("p%02d", i)
		names = append(names, name)
		graph.AddNode(g, name, func(context.Context, FanState) (FanStep, error) { return FanStep{Log: name}, nil })
		g.AddEdge("start", name)
	}
	graph.AddNode(g, "join", func(context.Context, FanState) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.AddJoin(names, "join")
	g.AddEdge("join", graph.END)
	return g.Compile(graph.Options{})
}

// ---- the .wf side: the same graphs as source text ----

// S1Source returns S1 chain10 as .wf source.
func S1Source() string {
	var b strings.Builder
	b.WriteString("workflow S1 {\n  variables {\n    count: Int = 0\n    log: List[String] = [] reduce append\n  }\n  nodes {\n")
	for i := range 10 {
		fmt.Fprintf(&b, "    node n%d {\n      type: FUNCTION\n      action: \"step\"\n      inputs {\n        c: count\n      }\n      outputs {\n        next: Int\n        name: String\n      }\n      set: { count = next; log = name }\n    }\n", i)
	}
	b.WriteString("    node end {\n      type: END\n    }\n  }\n  edges {\n")
	for i := range 9 {
		fmt.Fprintf(&b, "    edge { from: n%d; to: n%d }\n", i, i+1)
	}
	b.WriteString("    edge { from: n9; to: end }\n  }\n  initial: n0\n  finals: [ end ]\n}\n")
	return b.String()
}

// S2Source is S2 loop1000 as .wf source.
const S2Source = `workflow S2 {
  variables {
    count: Int = 0
  }
  nodes {
    node a {
      type: FUNCTION
      action: "inc"
      inputs {
        c: count
      }
      outputs {
        next: Int
      }
      set: { count = next }
    }
    node b {
      type: FUNCTION
      action: "inc"
      inputs {
        c: count
      }
      outputs {
        next: Int
      }
      set: { count = next }
    }
    node end {
      type: END
    }
  }
  edges {
    edge { from: a; to: b }
    edge { from: b; to: a
           condition: count < 1000
    }
    edge { from: b; to: end }
  }
  initial: a
  finals: [ end ]
}
`

// S3Source returns S3 fanout100 as .wf source.
func S3Source() string {
	var b strings.Builder
	b.WriteString("workflow S3 {\n  variables {\n    log: List[String] = [] reduce append\n  }\n  nodes {\n")
	b.WriteString("    node start {\n      type: FUNCTION\n      action: \"noop\"\n    }\n")
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("p%02d", i)
		names = append(names, name)
		fmt.Fprintf(&b, "    node %s {\n      type: FUNCTION\n      action: \"name\"\n      outputs {\n        name: String\n      }\n      set: { log = name }\n    }\n", name)
	}
	b.WriteString("    node join {\n      type: FUNCTION\n      action: \"noop\"\n    }\n    node end {\n      type: END\n    }\n  }\n  edges {\n")
	fmt.Fprintf(&b, "    edge { from: start; to: [%s]; join: join }\n", strings.Join(names, ", "))
	for _, n := range names {
		fmt.Fprintf(&b, "    edge { from: %s; to: join }\n", n)
	}
	b.WriteString("    edge { from: join; to: end }\n  }\n  initial: start\n  finals: [ end ]\n}\n")
	return b.String()
}

// Actions returns a registry with the node bodies of the .wf shapes,
// written against engine.Call as a Go action would be: step, inc, name and
// noop.
func Actions() *engine.Registry {
	reg := engine.NewRegistry()
	for name, fn := range map[string]engine.ActionFunc{
		"step": func(_ context.Context, c *engine.Call) error {
			c.Outputs[0] = flow.IntValue(c.Inputs[0].Int() + 1)
			c.Outputs[1] = flow.StringValue(c.Node.Name)
			return nil
		},
		"inc": func(_ context.Context, c *engine.Call) error {
			c.Outputs[0] = flow.IntValue(c.Inputs[0].Int() + 1)
			return nil
		},
		"name": func(_ context.Context, c *engine.Call) error {
			c.Outputs[0] = flow.StringValue(c.Node.Name)
			return nil
		},
		"noop": func(context.Context, *engine.Call) error { return nil },
	} {
		// The names are distinct and the functions non-nil: Register
		// cannot fail here.
		_ = reg.Register(name, fn)
	}
	return reg
}

// Plan parses and compiles .wf source src (named name in errors) against
// the actions of reg.
func Plan(name, src string, reg *engine.Registry) (*flow.Plan, error) {
	m, ds := lang.LoadSource(name, []byte(src), nil)
	if ds.HasErrors() {
		return nil, fmt.Errorf("%s:\n%w", name, ds.Err())
	}
	plan, ds := flow.Compile(m.Main(), &flow.CompileOptions{HasAction: reg.Has})
	if ds.HasErrors() {
		return nil, fmt.Errorf("%s:\n%w", name, ds.Err())
	}
	return plan, nil
}
