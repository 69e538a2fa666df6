package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/lang"
)

// ---- the Go API side ----

type chainState struct {
	Count int      `weft:"count"`
	Log   []string `weft:"log,append"`
}

type chainStep struct {
	Count int
	Log   string
}

func s1Go(tb testing.TB) *graph.Compiled[chainState] {
	g := graph.New[chainState]("S1")
	prev := graph.START
	for i := range 10 {
		name := fmt.Sprintf("n%d", i)
		graph.AddNode(g, name, func(_ context.Context, s chainState) (chainStep, error) {
			return chainStep{Count: s.Count + 1, Log: name}, nil
		})
		g.AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.END)
	c, err := g.Compile(graph.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

type loopState struct {
	Count int `weft:"count"`
}

func s2Go(tb testing.TB) *graph.Compiled[loopState] {
	g := graph.New[loopState]("S2")
	inc := func(_ context.Context, s loopState) (loopState, error) { return loopState{Count: s.Count + 1}, nil }
	graph.AddNode(g, "a", inc)
	graph.AddNode(g, "b", inc)
	g.SetEntry("a")
	g.AddEdge("a", "b")
	g.AddConditionalEdges("b", func(s loopState) string {
		if s.Count >= 1000 {
			return graph.END
		}
		return "a"
	}, "a", graph.END)
	c, err := g.Compile(graph.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

type fanState struct {
	Log []string `weft:"log,append"`
}

type fanStep struct {
	Log string
}

func s3Go(tb testing.TB) *graph.Compiled[fanState] {
	g := graph.New[fanState]("S3")
	graph.AddNode(g, "start", func(context.Context, fanState) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.SetEntry("start")
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("p%02d", i)
		names = append(names, name)
		graph.AddNode(g, name, func(context.Context, fanState) (fanStep, error) { return fanStep{Log: name}, nil })
		g.AddEdge("start", name)
	}
	graph.AddNode(g, "join", func(context.Context, fanState) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.AddJoin(names, "join")
	g.AddEdge("join", graph.END)
	c, err := g.Compile(graph.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// ---- the .wf side: the same graphs as source text ----

func s1Source() string {
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

const s2Source = `workflow S2 {
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

func s3Source() string {
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

// wfActions are the node bodies of the .wf shapes, written against
// engine.Call as a Go action would be.
func wfActions(tb testing.TB) *engine.Registry {
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
		if err := reg.Register(name, fn); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}

func wfPlan(tb testing.TB, name, src string, reg *engine.Registry) *flow.Plan {
	m, ds := lang.LoadSource(name, []byte(src), nil)
	if ds.HasErrors() {
		tb.Fatalf("%s:\n%v", name, ds)
	}
	plan, ds := flow.Compile(m.Main(), &flow.CompileOptions{HasAction: reg.Has})
	if ds.HasErrors() {
		tb.Fatalf("%s:\n%v", name, ds)
	}
	return plan
}

// ---- measuring ----

// measure runs body b.N times and reports CPU time per op, and per step
// when steps > 0.
func measure(b *testing.B, steps int, body func()) {
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		body()
	}
	cpu = cpuTime() - cpu
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/op")
	if steps > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n/float64(steps), "ns/step")
		b.ReportMetric(float64(cpu.Nanoseconds())/n/float64(steps), "cpu-ns/step")
		b.ReportMetric(testing.AllocsPerRun(3, body)/float64(steps), "allocs/step")
	}
}

func BenchmarkS1Chain10(b *testing.B) {
	ctx := context.Background()
	b.Run("go", func(b *testing.B) {
		c := s1Go(b)
		measure(b, 10, func() {
			out, err := c.Invoke(ctx, chainState{})
			if err != nil || out.Count != 10 || len(out.Log) != 10 {
				b.Fatalf("got %+v, %v", out, err)
			}
		})
	})
	b.Run("wf", func(b *testing.B) {
		reg := wfActions(b)
		plan := wfPlan(b, "s1.wf", s1Source(), reg)
		r := &engine.Runner{Registry: reg}
		measure(b, 10, func() {
			res, err := r.Run(ctx, plan, nil, nil)
			if err != nil || res.Vars[0].Value.Int() != 10 || res.Vars[1].Value.Len() != 10 {
				b.Fatalf("got %v, %v", res.Vars, err)
			}
		})
	})
}

func BenchmarkS2Loop1000(b *testing.B) {
	ctx := context.Background()
	b.Run("go", func(b *testing.B) {
		c := s2Go(b)
		measure(b, 1000, func() {
			out, err := c.Invoke(ctx, loopState{})
			if err != nil || out.Count != 1000 {
				b.Fatalf("got %+v, %v", out, err)
			}
		})
	})
	b.Run("wf", func(b *testing.B) {
		reg := wfActions(b)
		plan := wfPlan(b, "s2.wf", s2Source, reg)
		r := &engine.Runner{Registry: reg}
		measure(b, 1000, func() {
			res, err := r.Run(ctx, plan, nil, nil)
			if err != nil || res.Vars[0].Value.Int() != 1000 {
				b.Fatalf("got %v, %v", res.Vars, err)
			}
		})
	})
}

func BenchmarkS3Fanout100(b *testing.B) {
	ctx := context.Background()
	b.Run("go", func(b *testing.B) {
		c := s3Go(b)
		measure(b, 0, func() {
			out, err := c.Invoke(ctx, fanState{})
			if err != nil || len(out.Log) != 100 || out.Log[0] != "p00" || out.Log[99] != "p99" {
				b.Fatalf("got %v, %v", out.Log, err)
			}
		})
	})
	b.Run("wf", func(b *testing.B) {
		reg := wfActions(b)
		plan := wfPlan(b, "s3.wf", s3Source(), reg)
		r := &engine.Runner{Registry: reg}
		measure(b, 0, func() {
			res, err := r.Run(ctx, plan, nil, nil)
			if err != nil || res.Vars[0].Value.Len() != 100 {
				b.Fatalf("got %v, %v", res.Vars, err)
			}
		})
	})
}

// TestShapesAgree runs each shape once through both front-ends and checks
// they compute the same thing on the same engine: the Go API and .wf are
// two spellings of one IR.
func TestShapesAgree(t *testing.T) {
	ctx := context.Background()
	reg := wfActions(t)
	r := &engine.Runner{Registry: reg}

	s1, err := s1Go(t).Invoke(ctx, chainState{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(ctx, wfPlan(t, "s1.wf", s1Source(), reg), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wfLog []string
	for _, v := range res.Vars[1].Value.List() {
		wfLog = append(wfLog, v.Str())
	}
	if s1.Count != int(res.Vars[0].Value.Int()) || !slices.Equal(s1.Log, wfLog) {
		t.Errorf("S1: go %+v, wf %v", s1, res.Vars)
	}

	c2 := s2Go(t)
	s2, err := c2.Invoke(ctx, loopState{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = r.Run(ctx, wfPlan(t, "s2.wf", s2Source, reg), nil, nil)
	if err != nil || s2.Count != 1000 || res.Vars[0].Value.Int() != 1000 || res.Steps != 1001 {
		t.Errorf("S2: go %+v, wf %v steps %d, %v", s2, res.Vars, res.Steps, err)
	}
	goPlan := c2.Plan()
	if goPlan.Workflow.Initial != "a" || goPlan.Nodes[goPlan.Initial].Name != "a" {
		t.Errorf("S2 Go plan starts at %s", goPlan.Nodes[goPlan.Initial].Name)
	}

	s3, err := s3Go(t).Invoke(ctx, fanState{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = r.Run(ctx, wfPlan(t, "s3.wf", s3Source(), reg), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wfLog = wfLog[:0]
	for _, v := range res.Vars[0].Value.List() {
		wfLog = append(wfLog, v.Str())
	}
	if len(s3.Log) != 100 || !slices.Equal(s3.Log, wfLog) {
		t.Errorf("S3: go %v\nwf %v", s3.Log, wfLog)
	}
}
