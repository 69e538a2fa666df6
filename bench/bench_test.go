package bench

import (
	"context"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/internal/benchshapes"
	"github.com/weftlang/weft/telemetry"
)

// ---- the shapes, from internal/benchshapes ----

type (
	chainState = benchshapes.ChainState
	loopState  = benchshapes.LoopState
	fanState   = benchshapes.FanState
)

const s2Source = benchshapes.S2Source

func s1Source() string { return benchshapes.S1Source() }
func s3Source() string { return benchshapes.S3Source() }

// must returns a function that returns its value or fails tb.
func must[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

func s1Go(tb testing.TB) *graph.Compiled[chainState] {
	return must[*graph.Compiled[chainState]](tb)(benchshapes.S1Go())
}
func s2Go(tb testing.TB) *graph.Compiled[loopState] {
	return must[*graph.Compiled[loopState]](tb)(benchshapes.S2Go())
}
func s3Go(tb testing.TB) *graph.Compiled[fanState] {
	return must[*graph.Compiled[fanState]](tb)(benchshapes.S3Go())
}

// wfActions returns the node bodies of the .wf shapes.
func wfActions(testing.TB) *engine.Registry { return benchshapes.Actions() }

func wfPlan(tb testing.TB, name, src string, reg *engine.Registry) *flow.Plan {
	return must[*flow.Plan](tb)(benchshapes.Plan(name, src, reg))
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
	// wf-traced is wf with an OpenTelemetry Tracer: a span per run and per
	// attempt, through a batch span processor to an exporter that drops
	// them (the cost of making and queueing spans, not of sending them).
	b.Run("wf-traced", func(b *testing.B) {
		reg := wfActions(b)
		plan := wfPlan(b, "s2.wf", s2Source, reg)
		r := &engine.Runner{Registry: reg, Tracer: benchTracer(b)}
		measure(b, 1000, func() {
			res, err := r.Run(ctx, plan, nil, nil)
			if err != nil || res.Vars[0].Value.Int() != 1000 {
				b.Fatalf("got %v, %v", res.Vars, err)
			}
		})
	})
}

// benchTracer is a telemetry.Tracer on a batch span processor whose
// exporter drops the spans; it is shut down when tb ends.
func benchTracer(tb testing.TB) *telemetry.Tracer {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return telemetry.NewTracer(tp, telemetry.Options{})
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
