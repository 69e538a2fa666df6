package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
)

// mapWF returns a workflow whose node each maps [10,20,30,40,50] through
// the action "scale" with nOut Int outputs o1..oN at the given parallelism,
// and is the final node (its outputs are the lists).
func mapWF(nOut, par int) string {
	var outs strings.Builder
	for j := 1; j <= nOut; j++ {
		fmt.Fprintf(&outs, "        o%d: Int\n", j)
	}
	return fmt.Sprintf(`
workflow M {
  parameters {
    xs: List[Int] = [10, 20, 30, 40, 50]
  }
  nodes {
    node each {
      type: FUNCTION
      action: "scale"
      map: xs
      as: x
      parallelism: %d
      inputs {
        x: x
      }
      outputs {
%s      }
    }
  }
  initial: each
  finals: [ each ]
}
`, par, outs.String())
}

// scale writes x*j into output j (from 1), so every element and every
// output has a value of its own.
func scale(_ context.Context, c *engine.Call) error {
	x := c.Inputs[0].Int()
	for j := range c.Outputs {
		c.Outputs[j] = flow.IntValue(x * int64(j+1))
	}
	return nil
}

func wantMapOutputs(nOut int) map[string]string {
	want := map[string]string{}
	for j := 1; j <= nOut; j++ {
		var parts []string
		for _, x := range []int{10, 20, 30, 40, 50} {
			parts = append(parts, fmt.Sprint(x*j))
		}
		want[fmt.Sprintf("o%d", j)] = "[" + strings.Join(parts, ", ") + "]"
	}
	return want
}

func checkMapOutputs(t *testing.T, res *engine.Result, nOut int) {
	t.Helper()
	if res.Status != engine.Completed {
		t.Fatalf("status %v, err %v", res.Status, res.Err)
	}
	for name, want := range wantMapOutputs(nOut) {
		if got := res.Output(name).String(); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}

// TestMapResultsByValue checks every element's outputs, at every output
// count (the worker's two inline output slots and beyond) and parallelism,
// in plain runs and in durable threads, repeated so a reused buffer shows.
func TestMapResultsByValue(t *testing.T) {
	reg := registry(t, map[string]engine.ActionFunc{"scale": scale})
	for _, nOut := range []int{1, 2, 3} {
		for _, par := range []int{1, 2, 8} {
			plan := compile(t, "m.wf", mapWF(nOut, par))
			t.Run(fmt.Sprintf("outputs=%d/parallelism=%d", nOut, par), func(t *testing.T) {
				r := &engine.Runner{Registry: reg}
				for range 5 {
					res, err := r.Run(context.Background(), plan, nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					checkMapOutputs(t, res, nOut)
				}
				th := &engine.Threads{Runner: r, Store: memory.New()}
				for i := range 3 {
					res, err := th.Run(context.Background(), plan, fmt.Sprintf("t%d", i), nil, nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					checkMapOutputs(t, res, nOut)
				}
			})
		}
	}
}

// mapRecordBytes runs a map of n elements in a durable thread and returns
// the bytes of the thread's records.
func mapRecordBytes(t *testing.T, n int) int {
	t.Helper()
	reg := registry(t, map[string]engine.ActionFunc{"scale": scale})
	plan := compile(t, "m.wf", mapWF(1, 8))
	items := make([]flow.Value, n)
	for i := range items {
		items[i] = flow.IntValue(int64(i))
	}
	st := memory.New()
	th := &engine.Threads{Runner: &engine.Runner{Registry: reg}, Store: st}
	res, err := th.Run(context.Background(), plan, "t", map[string]flow.Value{"xs": flow.ListValue(items...)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.Completed {
		t.Fatalf("status %v: %v", res.Status, res.Err)
	}
	if got := res.Output("o1").List(); len(got) != n || got[n-1].Int() != int64(n-1) {
		t.Fatalf("o1 has %d elements, the last %v", len(got), got[len(got)-1])
	}
	recs, err := st.Records(context.Background(), "t", 1)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range recs {
		total += len(r.Data)
	}
	return total
}

// TestMapRecordsGrowLinearly checks that a map's records cost O(what
// changed): doubling the elements about doubles the bytes written (a map
// state repeated in every element's record made it quadruple).
func TestMapRecordsGrowLinearly(t *testing.T) {
	small, large := mapRecordBytes(t, 2000), mapRecordBytes(t, 4000)
	t.Logf("2,000 elements: %d bytes; 4,000: %d bytes", small, large)
	if ratio := float64(large) / float64(small); ratio > 2.5 {
		t.Fatalf("records grew %.2fx for twice the elements (%d -> %d bytes), want about 2x", ratio, small, large)
	}
}

// TestMapWaitsAndResumesByValue suspends one element of a map in a durable
// thread on SQLite, resumes it from the store (the partial map records
// folded back into the map's state) and checks every element's output.
func TestMapWaitsAndResumesByValue(t *testing.T) {
	ctx := context.Background()
	reg := registry(t, map[string]engine.ActionFunc{"scale": func(ctx context.Context, c *engine.Call) error {
		if c.Inputs[0].Int() == 30 {
			return &engine.Interrupt{Question: flow.StringValue("thirty?")}
		}
		return scale(ctx, c)
	}})
	plan := compile(t, "m.wf", mapWF(2, 2))
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	th := &engine.Threads{Runner: &engine.Runner{Registry: reg}, Store: st}
	res, err := th.Run(ctx, plan, "t", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.Waiting || len(res.Waiting) != 1 {
		t.Fatalf("status %v, %d questions; want waiting on one", res.Status, len(res.Waiting))
	}
	// A fresh Threads reads the thread back from the store.
	th = &engine.Threads{Runner: &engine.Runner{Registry: reg}, Store: st}
	res, err = th.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"o1": flow.IntValue(30), "o2": flow.IntValue(60)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMapOutputs(t, res, 2)
}

// BenchmarkMapThread runs a map of n elements in a durable thread on
// SQLite and reports the bytes of records it writes per run.
func BenchmarkMapThread(b *testing.B) {
	reg := registry(b, map[string]engine.ActionFunc{"scale": scale})
	plan := compile(b, "m.wf", mapWF(1, 8))
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			ctx := context.Background()
			items := make([]flow.Value, n)
			for i := range items {
				items[i] = flow.IntValue(int64(i))
			}
			params := map[string]flow.Value{"xs": flow.ListValue(items...)}
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			th := &engine.Threads{Runner: &engine.Runner{Registry: reg}, Store: st, Durability: engine.Async}
			written := 0
			b.ResetTimer()
			for i := range b.N {
				id := fmt.Sprintf("t%d", i)
				res, err := th.Run(ctx, plan, id, params, nil, nil)
				if err != nil || res.Status != engine.Completed {
					b.Fatalf("run: %v, %v", err, res.Err)
				}
				b.StopTimer()
				recs, err := st.Records(ctx, id, 1)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					written += len(r.Data)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(written)/float64(b.N), "record-bytes/op")
		})
	}
}

// BenchmarkMapRun runs a map of 1,000 elements with two outputs each, in
// memory: the cost of keeping every element's outputs.
func BenchmarkMapRun(b *testing.B) {
	reg := registry(b, map[string]engine.ActionFunc{"scale": scale})
	plan := compile(b, "m.wf", mapWF(2, 8))
	items := make([]flow.Value, 1000)
	for i := range items {
		items[i] = flow.IntValue(int64(i))
	}
	params := map[string]flow.Value{"xs": flow.ListValue(items...)}
	r := &engine.Runner{Registry: reg}
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.Run(context.Background(), plan, params, nil)
		if err != nil || res.Status != engine.Completed {
			b.Fatalf("run: %v", err)
		}
	}
}
