package owf

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// TestSpecsGoWithTheirPlans: the owf actions, registered once in a
// long-lived registry, keep a node's decoded spec only while its plan is
// in use, so a server that compiles document after document does not
// grow; while the plans live, each node runs with its own spec.
func TestSpecsGoWithTheirPlans(t *testing.T) {
	ctx := context.Background()
	a := &actions{}
	reg := engine.NewRegistry()
	if err := register(reg, a); err != nil {
		t.Fatal(err)
	}
	const n = 10
	plans := make([]*flow.Plan, n)
	for i := range plans {
		w, err := Compile(load(t, writeK(fmt.Sprint(i))))
		if err != nil {
			t.Fatal(err)
		}
		plan, ds := flow.Compile(w, &flow.CompileOptions{HasAction: reg.Has})
		if plan == nil {
			t.Fatal(ds.Err())
		}
		plans[i] = plan
	}
	for round := range 2 {
		for i, plan := range plans {
			res, err := (&engine.Runner{Registry: reg}).Run(ctx, plan, nil, nil)
			if err != nil {
				t.Fatalf("plan %d, round %d: %v", i, round, err)
			}
			want := fmt.Sprint(i) + " \n" + `{"y":1,"z":0}` + " \n" + `{"b": 1}` + " \n"
			if got := res.Output("result").Str(); got != want {
				t.Errorf("plan %d, round %d: result %q; want %q", i, round, got, want)
			}
		}
	}
	// One task node per plan.
	if got := specEntries(a); got != n {
		t.Fatalf("%d specs kept while %d plans are in use; want %d", got, n, n)
	}
	runtime.KeepAlive(plans)
	plans = nil
	for range 20 {
		runtime.GC()
		time.Sleep(time.Millisecond)
		if specEntries(a) == 0 {
			break
		}
	}
	if got := specEntries(a); got != 0 {
		t.Errorf("%d specs kept after their plans were dropped; want 0", got)
	}
}
