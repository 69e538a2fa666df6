package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/wftest"
)

// triagePlan compiles testdata/triage.wf (three calls of classify) against
// reg.
func triagePlan(t *testing.T, reg *engine.Registry) *flow.Plan {
	t.Helper()
	m, ds := lang.Load("testdata/triage.wf")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(m.Main(), &flow.CompileOptions{HasAction: reg.Has})
	if plan == nil {
		t.Fatal(ds)
	}
	return plan
}

// realRegistry holds a real classify, which the stubs must replace.
func realRegistry() *engine.Registry {
	reg := engine.NewRegistry()
	reg.Replace("classify", engine.ActionFunc(func(_ context.Context, c *engine.Call) error {
		return c.SetOutput("kind", flow.StringValue("real"))
	}))
	return reg
}

// loadStubs loads action.stubs with config cfg and registers its actions
// into reg.
func loadStubs(t *testing.T, cfg string, reg *engine.Registry) *builtin.Stubs {
	t.Helper()
	x, err := registry(t).Load(context.Background(), component.Spec{ID: "action.stubs", Config: json.RawMessage(cfg)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = component.CloseAll(x) })
	if err := x.(component.ActionProvider).RegisterActions(reg); err != nil {
		t.Fatal(err)
	}
	return x.(*builtin.Stubs)
}

// kinds returns the kinds variable of a run of triage.wf.
func kinds(res *engine.Result) string {
	for _, v := range res.Vars {
		if v.Name == "kinds" {
			return v.Value.String()
		}
	}
	return "(no kinds)"
}

func TestStubsAnswerInOrderInPlaceOfTheRealAction(t *testing.T) {
	ctx := context.Background()
	reg := realRegistry()
	s := loadStubs(t, `{"stubs":{"classify":[{"kind":"quote"},{"kind":"refund"},{"kind":"claim"}],"unused":[]}}`, reg)
	if got := s.Stubbed(); !slices.Equal(got, []string{"classify", "unused"}) {
		t.Errorf("Stubbed() = %v", got)
	}
	runner := &engine.Runner{Registry: reg}
	res, err := runner.Run(ctx, triagePlan(t, reg), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(res); got != `["quote", "refund", "claim"]` {
		t.Errorf("outputs %q, want the three replies in order", got)
	}
	// The lists are used up: the next call of the same registry fails,
	// naming the action and the calls.
	res, err = runner.Run(ctx, triagePlan(t, reg), nil, nil)
	var ee *wftest.ExhaustedError
	if !errors.As(err, &ee) || ee.Action != "classify" || ee.Calls != 3 || res.Status != engine.Failed {
		t.Fatalf("a fourth call: %v (status %v); want an *ExhaustedError for classify after 3 calls", err, res.Status)
	}
	if !strings.Contains(err.Error(), `stub list for action "classify" ran out after 3 calls`) {
		t.Errorf("error %q does not say which list ran out", err)
	}
	// Another registry (another run) gets the lists whole.
	reg2 := realRegistry()
	if err := s.RegisterActions(reg2); err != nil {
		t.Fatal(err)
	}
	res, err = (&engine.Runner{Registry: reg2}).Run(ctx, triagePlan(t, reg2), nil, nil)
	if err != nil || kinds(res) != `["quote", "refund", "claim"]` {
		t.Errorf("a second registry: %q, %v", kinds(res), err)
	}
}

func TestStubsFromAFileRunOut(t *testing.T) {
	reg := realRegistry()
	loadStubs(t, `{"file":"testdata/stubs.yaml"}`, reg)
	res, err := (&engine.Runner{Registry: reg}).Run(context.Background(), triagePlan(t, reg), nil, nil)
	var ee *wftest.ExhaustedError
	if !errors.As(err, &ee) || ee.Action != "classify" || ee.Calls != 2 {
		t.Fatalf("run: %v; want an *ExhaustedError for classify after 2 calls", err)
	}
	if !slices.Equal(res.Path, []string{"first", "second", "third"}) {
		t.Errorf("path %v: want the two stubbed calls answered and the third failed", res.Path)
	}
}

func TestStubsErrorReply(t *testing.T) {
	reg := realRegistry()
	loadStubs(t, `{"stubs":{"classify":[{"kind":"quote"},{"error":"503 Service Unavailable"}]}}`, reg)
	_, err := (&engine.Runner{Registry: reg}).Run(context.Background(), triagePlan(t, reg), nil, nil)
	var se *wftest.StubError
	if !errors.As(err, &se) || se.Message != "503 Service Unavailable" || se.Action != "classify" {
		t.Fatalf("run: %v; want the stubbed *StubError", err)
	}
}

func TestStubsRefused(t *testing.T) {
	for _, c := range []struct {
		cfg  string
		kind component.ErrorKind
		msg  string
	}{
		{`{}`, component.ErrProvision, "give one of file and stubs"},
		{`{"file":"testdata/stubs.yaml","stubs":{}}`, component.ErrProvision, "give one of file and stubs"},
		{`{"file":"testdata/nothing.yaml"}`, component.ErrProvision, "nothing.yaml"},
		{`{"stubs":{"classify":[{"error":7}]}}`, component.ErrInvalid, "stubs.classify[0].error: an error reply's message must be a string"},
		{`{"stubs":{"classify":[{"error":"x","kind":"y"}]}}`, component.ErrInvalid, "can have no other keys"},
		{`{"stubs":{"classify":{"kind":"y"}}}`, component.ErrConfig, ".stubs"},
	} {
		_, err := registry(t).Load(context.Background(), component.Spec{ID: "action.stubs", Config: json.RawMessage(c.cfg)}, nil)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v; want %s naming %q", c.cfg, err, c.kind, c.msg)
		}
	}
}

// ExampleStubs shows the spec of action.stubs.
func ExampleStubs() {
	spec, _ := component.SpecOf("action.stubs", &builtin.Stubs{File: "/srv/weft/stubs.yaml"})
	b, _ := json.Marshal(spec)
	fmt.Println(string(b))
	// Output: {"id":"action.stubs","config":{"file":"/srv/weft/stubs.yaml"}}
}
