package action_test

import (
	"context"
	"errors"
	"testing"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

func TestRegisterKeepsCallersAction(t *testing.T) {
	reg := engine.NewRegistry()
	mine := engine.ActionFunc(func(context.Context, *engine.Call) error { return nil })
	if err := reg.Register(action.AskUser, mine); err != nil {
		t.Fatal(err)
	}
	action.Register(reg)
	got, _ := reg.Lookup(action.AskUser)
	if got == nil {
		t.Fatal("ask_user missing")
	}
	// The caller's own implementation returns nil; the built-in interrupts.
	if err := got.Run(context.Background(), &engine.Call{Node: &flow.PlanNode{}}); err != nil {
		t.Errorf("Register replaced the caller's ask_user: %v", err)
	}

	reg = engine.NewRegistry()
	action.Register(reg)
	a, ok := reg.Lookup(action.AskUser)
	if !ok {
		t.Fatal("Register did not add ask_user")
	}
	pn := &flow.PlanNode{Inputs: []flow.PlanInput{{Name: "question"}}}
	err := a.Run(context.Background(), &engine.Call{Node: pn, Inputs: []flow.Value{flow.StringValue("Which year?")}})
	var in *engine.Interrupt
	if !errors.As(err, &in) || in.Question.Str() != "Which year?" {
		t.Errorf("ask_user returned %v, want an Interrupt asking the question", err)
	}
}

func TestBind(t *testing.T) {
	if _, err := action.Bind(&flow.Binding{Name: "classify", Type: flow.LLM}); !errors.Is(err, action.ErrNoProvider) {
		t.Errorf("LLM binding: err = %v, want ErrNoProvider", err)
	}
	a, err := action.Bind(&flow.Binding{Name: "clarify", Type: flow.Human})
	if err != nil || a == nil {
		t.Fatalf("HUMAN binding: %v", err)
	}
	if _, err := action.Bind(&flow.Binding{Name: "x", Type: flow.Subflow}); err == nil {
		t.Error("a WORKFLOW binding was accepted")
	}
}
