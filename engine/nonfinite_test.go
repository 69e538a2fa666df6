package engine_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

// An action that returns a NaN or an infinity (an action written in Go can)
// fails at its step, with the node and the output named: no such number
// reaches a cell, the --json output or a thread's record.
func TestNonFiniteOutputRefusedAtTheStep(t *testing.T) {
	const src = `
workflow W {
  nodes {
    node call {
      type: FUNCTION
      action: "calc"
      outputs {
        n: Int
        score: Float
        meta: Object
        any: Any
      }
    }
    node done { type: END }
  }
  edges {
    edge { from: call; to: done }
  }
  initial: call
  finals: [ done ]
}
`
	m, ds := lang.LoadSource("nf.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(m.Main(), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	inf, nan := flow.FloatValue(math.Inf(1)), flow.FloatValue(math.NaN())
	ok := []flow.Value{flow.IntValue(1), flow.FloatValue(0.5), flow.ObjectValue(nil), flow.Null}
	for _, c := range []struct {
		field int
		v     flow.Value
		want  string
	}{
		{1, inf, "node call, output score: +Inf has no JSON form"},
		{1, nan, "node call, output score: NaN has no JSON form"},
		{2, flow.ObjectValue(map[string]flow.Value{"x": flow.ListValue(nan)}), "node call, output meta: x[0]: NaN has no JSON form"},
		{3, flow.ListValue(flow.FloatValue(math.Inf(-1))), "node call, output any: [0]: -Inf has no JSON form"},
	} {
		reg := registry(t, map[string]engine.ActionFunc{"calc": func(_ context.Context, call *engine.Call) error {
			copy(call.Outputs, ok)
			call.Outputs[c.field] = c.v
			return nil
		}})
		_, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
		var oe *engine.OutputError
		if err == nil || !errors.As(err, &oe) || oe.Error() != c.want || !errors.Is(err, flow.ErrNonFinite) {
			t.Errorf("field %d = %v: err = %v; want %q", c.field, c.v, err, c.want)
		}
	}
}
