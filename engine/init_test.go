package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store/memory"
)

// TestRunWithInit: RunOptions.Init gives variables their starting values
// in place of the declared initial ones, for a plain run and for a run in
// a thread (where it also replaces the carried value).
func TestRunWithInit(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	r := stepRunner(&keys, &mu, nil)
	init := map[string]flow.Value{"i": flow.IntValue(15), "acc": flow.IntValue(5)}
	// steps i = 15..19: acc = 5 + 15²+16²+17²+18²+19² = 1460
	res, err := r.RunWith(ctx, plan, nil, nil, &engine.RunOptions{Init: init})
	if err != nil || resultVar(t, res, "acc").Int() != 1460 || resultVar(t, res, "i").Int() != 19 {
		t.Fatalf("Runner.RunWith i=15 acc=5: vars %v, err %v; want acc 1460, i 19", res.Vars, err)
	}
	th := &engine.Threads{Runner: r, Store: memory.New()}
	if _, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	res, err = th.Run(ctx, plan, "t", nil, nil, &engine.RunOptions{Init: init})
	if err != nil || resultVar(t, res, "acc").Int() != 1460 {
		t.Fatalf("Threads.Run i=15 acc=5 (second run): vars %v, err %v; want acc 1460", res.Vars, err)
	}
}

// TestRunWithInitErrors: a name that is not a variable (a parameter
// among them) and a value of the wrong type are *InputError values that
// name the variable, say it is a variable, and list the known variables.
func TestRunWithInitErrors(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	r := stepRunner(&keys, &mu, nil)
	for _, tc := range []struct {
		name string
		v    flow.Value
		want string
	}{
		{"acc", flow.StringValue("x"), "variable acc: initial value:"},
		{"ac", flow.IntValue(1), `variable ac: not a variable of workflow Loop; did you mean "acc"? (variables: i, acc)`},
		{"n", flow.IntValue(1), "variable n: not a variable of workflow Loop (variables: i, acc); n is a parameter"},
	} {
		res, err := r.RunWith(ctx, plan, nil, nil, &engine.RunOptions{Init: map[string]flow.Value{tc.name: tc.v}})
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.Param != tc.name || !ie.Variable || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("init %s = %s: %v; want an *InputError naming the variable, containing %q", tc.name, tc.v, err, tc.want)
		}
		if res == nil || res.Status != engine.Failed || len(keys) != 0 {
			t.Errorf("init %s: status %v, %d steps ran; want a failed run that ran nothing", tc.name, res, len(keys))
		}
	}
}
