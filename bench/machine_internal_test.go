package bench

import (
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// BenchmarkS2Machine drives the engine's pure state machine directly, with
// no Runner: the share of S2 that is routing, assignments and bookkeeping.
func BenchmarkS2Machine(b *testing.B) {
	reg := wfActions(b)
	plan := wfPlan(b, "s2.wf", s2Source, reg)
	out := make([]flow.Value, 1)
	measure(b, 1000, func() {
		m, err := engine.NewMachine(plan, nil, false)
		if err != nil {
			b.Fatal(err)
		}
		for m.Status() == engine.Running {
			for _, t := range m.TakeTasks() {
				out[0] = flow.IntValue(t.Inputs[0].Int() + 1)
				m.Complete(t.ID, out, nil)
			}
		}
		if v, _ := m.Value("count"); v.Int() != 1000 {
			b.Fatal(v)
		}
	})
}

// BenchmarkS3Machine drives S3 through the state machine alone: the cost of
// forking, branch frames and the join, without goroutines.
func BenchmarkS3Machine(b *testing.B) {
	reg := wfActions(b)
	plan := wfPlan(b, "s3.wf", s3Source(), reg)
	measure(b, 0, func() {
		m, err := engine.NewMachine(plan, nil, false)
		if err != nil {
			b.Fatal(err)
		}
		for m.Status() == engine.Running {
			for _, t := range m.TakeTasks() {
				out := make([]flow.Value, len(t.Node.Outputs))
				if len(out) > 0 {
					out[0] = flow.StringValue(t.Node.Name)
				}
				m.Complete(t.ID, out, nil)
			}
		}
		if v, _ := m.Value("log"); v.Len() != 100 {
			b.Fatal(v)
		}
	})
}
