package weftbench

import (
	"context"
	"errors"
	"testing"

	"github.com/weftlang/weft/bench/peers/harness"
	"github.com/weftlang/weft/flow"
)

func TestShapes(t *testing.T) {
	ctx := context.Background()
	for _, e := range []harness.Engine{WF(), Go(), WFSync()} {
		for _, s := range harness.Shapes() {
			t.Run(e.Name+"/"+string(s), func(t *testing.T) {
				run, closeFn, err := e.Prepare(ctx, s, t.TempDir())
				if errors.Is(err, harness.ErrUnsupported) {
					t.Skipf("%s does not run %s", e.Name, s)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer closeFn()
				for i := range 3 {
					if err := run(ctx, i); err != nil {
						t.Fatalf("invocation %d: %v", i, err)
					}
				}
			})
		}
	}
}

// TestChecksCatchWrongResults feeds the result checks wrong results: a
// check that passed them would measure a broken engine as a fast one.
func TestChecksCatchWrongResults(t *testing.T) {
	list := func(ss ...string) flow.Value {
		vs := make([]flow.Value, len(ss))
		for i, s := range ss {
			vs[i] = flow.StringValue(s)
		}
		return flow.ListValue(vs...)
	}
	good := list(chainNames...)
	if err := checkChain(flow.IntValue(10), good); err != nil {
		t.Errorf("right chain refused: %v", err)
	}
	swapped := append([]string(nil), chainNames...)
	swapped[3], swapped[4] = swapped[4], swapped[3]
	for name, c := range map[string][2]flow.Value{
		"count": {flow.IntValue(9), good},
		"short": {flow.IntValue(10), list(chainNames[:9]...)},
		"order": {flow.IntValue(10), list(swapped...)},
	} {
		if err := checkChain(c[0], c[1]); err == nil {
			t.Errorf("%s: wrong chain accepted", name)
		}
	}
	shuffled := append([]string(nil), fanNames...)
	shuffled[0], shuffled[99] = shuffled[99], shuffled[0]
	if err := checkFan(list(shuffled...)); err != nil {
		t.Errorf("fan-out in another order refused: %v", err)
	}
	dup := append([]string(nil), fanNames...)
	dup[1] = dup[0]
	if err := checkFan(list(dup...)); err == nil {
		t.Error("fan-out with a branch twice accepted")
	}
	if err := wantFan(fanNames[:99]); err == nil {
		t.Error("fan-out missing a branch accepted")
	}
}
