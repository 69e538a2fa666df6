package action_test

import (
	"context"
	"errors"
	"strings"
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

func TestTokensFunction(t *testing.T) {
	fns, err := action.Functions()
	if err != nil {
		t.Fatal(err)
	}
	// start sets big = tokens(result) > 500, then the run ends at check.
	big := &flow.Binary{Op: ">", X: &flow.Call{Fn: "tokens", Args: []flow.Expr{&flow.Ident{Name: "result"}}}, Y: &flow.Lit{Value: flow.IntValue(500)}}
	w := &flow.Workflow{
		Name: "Budget",
		Vars: []*flow.Var{
			{Name: "result", Type: flow.TString, Default: &flow.Lit{Value: flow.StringValue("hello world, this is a short SQL result")}},
			{Name: "big", Type: flow.TBool},
		},
		Nodes: []*flow.Node{
			{Name: "start", Type: flow.Function, Action: "noop", Set: []*flow.Assign{{Name: "big", Expr: big}}},
			{Name: "check", Type: flow.End},
		},
		Edges:   []*flow.Edge{{From: "start", To: []string{"check"}}},
		Initial: "start",
		Finals:  []string{"check"},
	}
	if _, ds := flow.Compile(w, nil); !ds.HasErrors() || !strings.Contains(ds.Error(), "unknown function tokens") {
		t.Fatalf("without the functions: %v", ds)
	}
	plan, ds := flow.Compile(w, &flow.CompileOptions{Functions: fns})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	reg := engine.NewRegistry()
	reg.Register("noop", engine.ActionFunc(func(context.Context, *engine.Call) error { return nil }))
	res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), plan, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if big := res.Vars[1].Value; big.Kind() != flow.KindBool || big.Bool() {
		t.Errorf("big = %v, want false for a short text", big)
	}
	n, _ := fns["tokens"].Call([]flow.Value{flow.StringValue("hello world")})
	if n.Int() != 2 {
		t.Errorf("tokens(\"hello world\") = %v, want 2", n)
	}
}

func TestPassSetsOutputsFromInputsInOrder(t *testing.T) {
	reg := engine.NewRegistry()
	action.Register(reg)
	a, ok := reg.Lookup(action.Pass)
	if !ok {
		t.Fatal("Register did not add pass")
	}
	pn := &flow.PlanNode{Name: "collect",
		Inputs:  []flow.PlanInput{{Name: "count"}, {Name: "label"}, {Name: "extra"}},
		Outputs: []flow.PlanOutput{{Name: "n", Type: flow.TFloat}, {Name: "s", Type: flow.TString}}}
	c := &engine.Call{Node: pn, Inputs: []flow.Value{flow.IntValue(2), flow.StringValue("x"), flow.Null}, Outputs: make([]flow.Value, 2)}
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if c.Outputs[0].Kind() != flow.KindFloat || c.Outputs[0].Float() != 2 || c.Outputs[1].Str() != "x" {
		t.Errorf("outputs = %v", c.Outputs)
	}
	pn.Outputs = []flow.PlanOutput{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	c.Outputs = make([]flow.Value, 4)
	if err := a.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "4 outputs but only 3 inputs") {
		t.Errorf("too few inputs: err = %v", err)
	}
	pn.Outputs = []flow.PlanOutput{{Name: "s", Type: flow.TInt}, {Name: "t", Type: flow.TInt}}
	c.Outputs = make([]flow.Value, 2)
	if err := a.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "output t (from input label)") {
		t.Errorf("wrong type: err = %v", err)
	}
}
