package owf

import (
	"context"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// BenchmarkSampleLoop measures the engine's cost of an ollama-workflows
// task: a sample task looping 20 times on a stack's size, with its inputs,
// outputs and condition (no LLM). The figure per task is ns/op / 20.
func BenchmarkSampleLoop(b *testing.B) {
	src := `{"config":{"max_steps":100,"max_time":60},"external_memory":{"w":["x"]},
	"tasks":[` + task("A", "sample", []string{"{v}"}, `[{"name":"v","value":{"type":"string","key":"w"},"required":true}]`, `[{"type":"push","key":"acc","value":"__result"}]`) + `],
	"steps":[{"source":"A","target":"__end","condition":{"input":{"type":"size","key":"acc"},"expression":"GreaterThanOrEqual","expected":"20","target_if_not":"A"}}],
	"return_value":{"input":{"type":"size","key":"acc"}}}`
	doc, err := Load("bench.json", []byte(src), nil)
	if err != nil {
		b.Fatal(err)
	}
	x, err := NewExecutor(Options{Intn: func(int) int { return 0 }})
	if err != nil {
		b.Fatal(err)
	}
	plan, err := x.Plan(doc)
	if err != nil {
		b.Fatal(err)
	}
	r := &engine.Runner{Registry: x.Registry()}
	params := map[string]flow.Value{}
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.Run(context.Background(), plan, params, nil)
		if err != nil || res.Output("result").Str() != "20" {
			b.Fatalf("%v %v", res, err)
		}
	}
}
