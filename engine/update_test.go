package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store/memory"
)

// TestRunOptionsUpdate: an update is written through the variable's
// reducer before the first step; an unknown variable or a value of the
// wrong type is an *InputError naming it, and starts nothing.
func TestRunOptionsUpdate(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: memory.New()}
	res, err := th.Run(ctx, plan, "t", nil, nil, &engine.RunOptions{Update: map[string]flow.Value{"acc": flow.IntValue(5)}})
	if err != nil || resultVar(t, res, "acc").Int() != 2475 {
		t.Fatalf("acc starting at 5: %v, %v", res.Vars, err)
	}
	for name, v := range map[string]flow.Value{"nope": flow.IntValue(1), "acc": flow.StringValue("x")} {
		_, err := th.Run(ctx, plan, "u-"+name, nil, nil, &engine.RunOptions{Update: map[string]flow.Value{name: v}})
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.Param != name {
			t.Errorf("update %s = %s: %v; want an *InputError naming it", name, v, err)
		}
	}
}
