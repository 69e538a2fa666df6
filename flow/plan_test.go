package flow_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
)

func seedOptions() *flow.CompileOptions {
	return &flow.CompileOptions{HasAction: hasAction(seedActions...)}
}

func TestSeedIntentQACompiles(t *testing.T) {
	w := seedWorkflow()
	p, ds := flow.Compile(w, seedOptions())
	if len(ds) != 0 || p == nil {
		t.Fatalf("seed 000 should compile without any diagnostic, got:\n%v", ds)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("Warnings: %v", p.Warnings)
	}
	if p.Workflow != w || p.MaxSteps != flow.DefaultMaxSteps || p.MaxTime != 0 {
		t.Errorf("plan header: %p %d %v", p.Workflow, p.MaxSteps, p.MaxTime)
	}
	if p.Nodes[p.Initial].Name != "identify_intent" {
		t.Errorf("initial = %s", p.Nodes[p.Initial].Name)
	}
	for i, n := range p.Nodes {
		if n.Index != i || n.Node != w.Nodes[i] || n.Name != w.Nodes[i].Name {
			t.Errorf("node %d: index %d, name %s", i, n.Index, n.Name)
		}
		if n.Final != (n.Name == "generate") {
			t.Errorf("%s: Final = %v", n.Name, n.Final)
		}
	}

	// Cell 0 is the workflow input.
	if p.Cells[0].Name != flow.InputText || p.Cells[0].Kind != flow.CellParam || !p.Cells[0].Type.Equal(flow.TString) ||
		len(p.Params) != 1 || p.Params[0].Cell != 0 {
		t.Errorf("cell 0 = %+v, params %+v", p.Cells[0], p.Params)
	}
	// The variable, with its initial value.
	if len(p.Vars) != 1 || p.Vars[0].Name != "rephraseCount" || p.Vars[0].Default == nil {
		t.Fatalf("vars %+v", p.Vars)
	}
	if v, err := p.Vars[0].Default.Eval(make(flow.Cells, len(p.Cells))); err != nil || !v.Equal(flow.IntValue(0)) {
		t.Errorf("rephraseCount starts at %v, %v", v, err)
	}

	// Implicit slots, typed by the join of what overrides assign.
	for name, want := range map[string]flow.Type{
		"from_query":     flow.TString, // identify_intent.input_text, ask_user.query, retrieve.query, rephrase.new_query
		"original_query": flow.TString,
		"result_source":  flow.TAny, // String and List[String]
	} {
		_, c := cellByName(t, p, name)
		if c.Kind != flow.CellSlot || !c.Type.Equal(want) || c.Red.String() != "replace" || c.Node != -1 {
			t.Errorf("slot %s: kind %v, type %v, reducer %s, node %d; want a %v slot", name, c.Kind, c.Type, c.Red.String(), c.Node, want)
		}
	}
	// Node input cells are typed by their expressions.
	for name, want := range map[string]flow.Type{
		"retrieve.query":    flow.TString,
		"evaluate.chunks":   flow.ListOf(flow.TString),
		"generate.source":   flow.TAny,
		"ask_user.question": flow.TString,
	} {
		_, c := cellByName(t, p, name)
		if c.Kind != flow.CellInput || !c.Type.Equal(want) {
			t.Errorf("%s: kind %v, type %v, want input %v", name, c.Kind, c.Type, want)
		}
	}

	// identify_intent, the initial node, receives input_text.
	ii := planNode(t, p, "identify_intent")
	if len(ii.Inputs) != 1 || ii.Inputs[0].Name != flow.InputText || ii.Inputs[0].Prog == nil ||
		len(ii.Inputs[0].Prog.Refs) != 1 || ii.Inputs[0].Prog.Refs[0].Cell != 0 {
		t.Errorf("identify_intent inputs: %+v", ii.Inputs)
	}
	_, c := cellByName(t, p, "identify_intent.input_text")
	if !c.Type.Equal(flow.TString) {
		t.Errorf("identify_intent.input_text: %v", c.Type)
	}

	// evaluate's bare `chunks` resolves to retrieve's output.
	retrieveChunks, _ := cellByName(t, p, "retrieve.chunks")
	ev := planNode(t, p, "evaluate")
	if len(ev.Inputs) != 1 || ev.Inputs[0].Prog.Refs[0].Cell != retrieveChunks || ev.Inputs[0].Prog.Refs[0].Name != "retrieve.chunks" {
		t.Errorf("evaluate.chunks input reads %+v, want cell %d", ev.Inputs[0].Prog.Refs, retrieveChunks)
	}

	// Overrides: identify_intent.input_text, retrieve.query, evaluate.chunks
	// resolve to node cells.
	refOf := func(from string, edge int, slot string) flow.Ref {
		t.Helper()
		pn := planNode(t, p, from)
		for _, o := range pn.Edges[edge].Overrides {
			if o.Name == slot {
				if len(o.Prog.Refs) != 1 {
					t.Fatalf("%s edge %d override %s reads %v", from, edge, slot, o.Prog.Refs)
				}
				return o.Prog.Refs[0]
			}
		}
		t.Fatalf("%s edge %d has no override %s", from, edge, slot)
		return flow.Ref{}
	}
	for _, c := range []struct {
		from string
		edge int
		slot string
		cell string
	}{
		{"identify_intent", 0, "from_query", "identify_intent.input_text"},
		{"identify_intent", 1, "original_query", "identify_intent.input_text"},
		{"ask_user", 0, "from_query", "ask_user.query"},
		{"evaluate", 0, "result_source", "evaluate.chunks"},
		{"evaluate", 1, "from_query", "retrieve.query"},
		{"rephrase", 0, "from_query", "rephrase.new_query"},
		{"summarize", 0, "result_source", "summarize.summary"},
	} {
		want, _ := cellByName(t, p, c.cell)
		if r := refOf(c.from, c.edge, c.slot); r.Cell != want || r.Name != c.cell {
			t.Errorf("%s -> %s reads %+v, want %s (cell %d)", c.from, c.slot, r, c.cell, want)
		}
	}

	// Routing edges in declaration order, with conditions and updates.
	ev = planNode(t, p, "evaluate")
	if len(ev.Edges) != 3 || ev.Edges[0].Index != 6 || ev.Edges[1].Index != 7 || ev.Edges[2].Index != 8 {
		t.Fatalf("evaluate edges: %d", len(ev.Edges))
	}
	rephrase := planNode(t, p, "rephrase")
	if e := ev.Edges[1]; len(e.To) != 1 || e.To[0] != rephrase.Index || e.Join != -1 || e.Cond == nil || len(e.Updates) != 1 {
		t.Errorf("evaluate -> rephrase: %+v", e)
	}

	// The condition of evaluate -> rephrase runs over cells.
	cells := make(flow.Cells, len(p.Cells))
	rel, _ := cellByName(t, p, "evaluate.relevance")
	cnt, _ := cellByName(t, p, "rephraseCount")
	cells[rel] = flow.StringValue("BAD")
	cells[cnt] = flow.IntValue(2)
	if ok, err := ev.Edges[1].Cond.EvalBool(cells); err != nil || !ok {
		t.Errorf("BAD, 2 retries: %v %v", ok, err)
	}
	next, err := ev.Edges[1].Updates[0].Prog.Eval(cells)
	if err != nil || !next.Equal(flow.IntValue(3)) {
		t.Errorf("rephraseCount + 1 = %v, %v", next, err)
	}
	cells[cnt] = next
	if ok, _ := ev.Edges[1].Cond.EvalBool(cells); ok {
		t.Error("BAD, 3 retries still rephrases")
	}
	if ok, _ := ev.Edges[2].Cond.EvalBool(cells); !ok {
		t.Error("BAD, 3 retries does not go to generate")
	}
	if got := ev.Edges[2].Cond.Explain(cells); got != `evaluate.relevance = "BAD", rephraseCount = 3` {
		t.Errorf("Explain = %q", got)
	}

	// The error cells exist for every node.
	for _, n := range p.Nodes {
		if c := p.Cells[n.ErrCell]; c.Kind != flow.CellError || c.Name != n.Name+".error" || c.Node != n.Index {
			t.Errorf("%s error cell: %+v", n.Name, c)
		}
	}
}

func TestSeedCompilesConcurrently(t *testing.T) {
	// Compile has no shared state: many goroutines may compile at once.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ds := flow.Compile(seedWorkflow(), seedOptions()); len(ds) != 0 {
				t.Error(ds)
			}
		}()
	}
	wg.Wait()
}

func TestCompileWithoutOptions(t *testing.T) {
	// nil options: actions are not checked.
	if _, ds := flow.Compile(seedWorkflow(), nil); len(ds) != 0 {
		t.Errorf("nil options: %v", ds)
	}
}

func TestLimitsAndParams(t *testing.T) {
	w := seedWorkflow()
	w.Limits = flow.Limits{MaxSteps: 50, MaxTime: time.Minute}
	w.Params = []*flow.Var{
		{Name: flow.InputText, Type: flow.TString},
		{Name: "top_k", Type: flow.TInt, Default: exAt(P(2, 20), "5"), Pos: P(2, 5)},
		{Name: "budget", Type: flow.TInt, Default: exAt(P(3, 20), "top_k * 100"), Pos: P(3, 5)},
	}
	w.Vars[0].Default = exAt(P(4, 26), "top_k - 5")
	p := mustCompile(t, w, seedOptions())
	if p.MaxSteps != 50 || p.MaxTime != time.Minute {
		t.Errorf("limits: %d %v", p.MaxSteps, p.MaxTime)
	}
	if len(p.Params) != 3 || p.Params[1].Name != "top_k" || p.Params[2].Default == nil {
		t.Fatalf("params: %+v", p.Params)
	}
	cells := make(flow.Cells, len(p.Cells))
	cells[p.Params[1].Cell] = flow.IntValue(5)
	if v, err := p.Params[2].Default.Eval(cells); err != nil || v.Int() != 500 {
		t.Errorf("budget default = %v, %v", v, err)
	}

	// input_text must stay a String; initial values read parameters only.
	w = seedWorkflow()
	w.Params = []*flow.Var{{Name: flow.InputText, Type: flow.TInt, Pos: P(2, 5)}}
	w.Vars[0].Default = exAt(P(4, 26), "retrieve.query")
	w.Vars = append(w.Vars, &flow.Var{Name: "other", Type: flow.TInt, Default: exAt(P(5, 18), "rephraseCount"), Pos: P(5, 5)})
	_, ds := flow.Compile(w, seedOptions())
	wantDiag(t, ds, "type-mismatch", flow.Error, P(2, 5), "input_text", "must be a String, not Int")
	got := findDiag(ds, "unknown-name")
	if len(got) != 2 || got[0].Pos != P(4, 26) || got[1].Pos != P(5, 18) ||
		!strings.Contains(got[0].Msg, "initial value of variable rephraseCount: retrieve.query is a node field; initial values may use parameters only") ||
		!strings.Contains(got[1].Msg, "initial value of variable other: rephraseCount is a variable; initial values may use parameters only") {
		t.Errorf("initial values:\n%v", ds)
	}
}

func TestRetryPolicyDelay(t *testing.T) {
	var nilPolicy *flow.RetryPolicy
	if nilPolicy.Delay(3) != 0 {
		t.Error("nil policy")
	}
	r := &flow.RetryPolicy{MaxAttempts: 5, Backoff: 100 * time.Millisecond}
	for n, want := range map[int]time.Duration{0: 0, 1: 0, 2: 100 * time.Millisecond, 3: 200 * time.Millisecond, 4: 400 * time.Millisecond, 5: 800 * time.Millisecond} {
		if got := r.Delay(n); got != want {
			t.Errorf("factor 2: Delay(%d) = %v, want %v", n, got, want)
		}
	}
	r = &flow.RetryPolicy{Backoff: time.Second, Factor: 3, MaxBackoff: 5 * time.Second}
	for n, want := range map[int]time.Duration{2: time.Second, 3: 3 * time.Second, 4: 5 * time.Second, 10: 5 * time.Second, 1000: 5 * time.Second} {
		if got := r.Delay(n); got != want {
			t.Errorf("factor 3, cap 5s: Delay(%d) = %v, want %v", n, got, want)
		}
	}
	r = &flow.RetryPolicy{Backoff: time.Second, Factor: 1.5}
	if got := r.Delay(4); got != 2250*time.Millisecond {
		t.Errorf("factor 1.5: Delay(4) = %v", got)
	}
	r = &flow.RetryPolicy{Backoff: 4 * time.Second, Factor: 0.5, MaxBackoff: time.Minute}
	if got := r.Delay(4); got != time.Second {
		t.Errorf("factor 0.5: Delay(4) = %v", got)
	}
	// Without a cap, the delay saturates instead of overflowing.
	r = &flow.RetryPolicy{Backoff: time.Second}
	for _, n := range []int{64, 100, 10000} {
		if got := r.Delay(n); got <= 0 {
			t.Errorf("uncapped Delay(%d) = %v, want a large positive delay", n, got)
		}
	}
}

func TestReducers(t *testing.T) {
	w := seedWorkflow()
	w.Vars = append(w.Vars,
		&flow.Var{Name: "log", Type: flow.ListOf(flow.TString), Reducer: flow.ParseReducer("append")},
		&flow.Var{Name: "total", Type: flow.TInt, Reducer: flow.ParseReducer("sum")},
		&flow.Var{Name: "ftotal", Type: flow.TFloat, Reducer: flow.ParseReducer("sum")},
		&flow.Var{Name: "wait", Type: flow.TDuration, Reducer: flow.ParseReducer("sum")},
		&flow.Var{Name: "best", Type: flow.TFloat, Reducer: flow.ParseReducer("max")},
		&flow.Var{Name: "least", Type: flow.TInt, Reducer: flow.ParseReducer("min")},
		&flow.Var{Name: "meta", Type: flow.TObject, Reducer: flow.ParseReducer("merge")},
		&flow.Var{Name: "plain", Type: flow.TString},
		&flow.Var{Name: "anything", Reducer: flow.ParseReducer("append")},
		&flow.Var{Name: "custom", Type: flow.TInt, Reducer: flow.ParseReducer("double")},
	)
	opts := seedOptions()
	opts.Reducers = map[string]flow.Reducer{
		"double": func(old, update flow.Value) (flow.Value, error) { return flow.IntValue(2 * update.Int()), nil },
	}
	p := mustCompile(t, w, opts)
	red := func(name string) flow.Reducer {
		_, c := cellByName(t, p, name)
		if c.Reducer == nil {
			t.Fatalf("%s has no reducer", name)
		}
		return c.Reducer
	}
	if _, c := cellByName(t, p, "plain"); c.Red.String() != "replace" {
		t.Errorf("plain reducer %q", c.Red.String())
	}
	if _, c := cellByName(t, p, "anything"); !c.Type.Equal(flow.TAny) || c.Red.String() != "append" {
		t.Errorf("untyped var: %v %s", c.Type, c.Red.String())
	}
	ints := func(xs ...int64) flow.Value {
		vs := make([]flow.Value, len(xs))
		for i, x := range xs {
			vs[i] = flow.IntValue(x)
		}
		return flow.ListValue(vs...)
	}
	for _, c := range []struct {
		name      string
		old, upd  flow.Value
		want      flow.Value
		errSubstr string
	}{
		{"plain", flow.StringValue("a"), flow.StringValue("b"), flow.StringValue("b"), ""},
		{"log", flow.Null, flow.StringValue("a"), flow.StringList("a"), ""},
		{"log", flow.StringList("a"), flow.StringValue("b"), flow.StringList("a", "b"), ""},
		{"log", flow.StringList("a"), flow.StringList("b", "c"), flow.StringList("a", "b", "c"), ""},
		{"log", flow.StringList("a"), flow.ListValue(), flow.StringList("a"), ""},
		{"log", flow.StringValue("x"), flow.StringValue("b"), flow.Null, "append reducer: current value is String, not a List"},
		{"anything", ints(1), flow.IntValue(2), ints(1, 2), ""},
		{"total", flow.Null, flow.IntValue(3), flow.IntValue(3), ""},
		{"total", flow.IntValue(3), flow.IntValue(4), flow.IntValue(7), ""},
		{"ftotal", flow.FloatValue(0.5), flow.IntValue(1), flow.FloatValue(1.5), ""},
		{"wait", flow.DurationValue(time.Second), flow.DurationValue(time.Second), flow.DurationValue(2 * time.Second), ""},
		{"total", flow.IntValue(1), flow.StringValue("x"), flow.Null, "sum reducer: cannot add String to Int"},
		{"best", flow.Null, flow.FloatValue(0.2), flow.FloatValue(0.2), ""},
		{"best", flow.FloatValue(0.2), flow.FloatValue(0.9), flow.FloatValue(0.9), ""},
		{"best", flow.FloatValue(0.9), flow.FloatValue(0.2), flow.FloatValue(0.9), ""},
		{"best", flow.FloatValue(0.9), flow.StringValue("x"), flow.Null, "max reducer: cannot compare String with Float"},
		{"least", flow.IntValue(5), flow.IntValue(2), flow.IntValue(2), ""},
		{"least", flow.IntValue(2), flow.IntValue(5), flow.IntValue(2), ""},
		{"least", flow.IntValue(2), flow.IntValue(2), flow.IntValue(2), ""},
		{"meta", flow.Null, obj("a", 1), obj("a", 1), ""},
		{"meta", obj("a", 1, "b", 2), obj("b", 3, "c", 4), obj("a", 1, "b", 3, "c", 4), ""},
		{"meta", obj("a", 1), flow.IntValue(1), flow.Null, "merge reducer: written value is Int, not an Object"},
		{"meta", flow.IntValue(1), obj("a", 1), flow.Null, "merge reducer: current value is Int, not an Object"},
		{"custom", flow.IntValue(100), flow.IntValue(4), flow.IntValue(8), ""},
	} {
		got, err := red(c.name)(c.old, c.upd)
		if c.errSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), c.errSubstr) {
				t.Errorf("%s(%v, %v) = %v, %v; want error %q", c.name, c.old, c.upd, got, err, c.errSubstr)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) || !sameKinds(got, c.want) {
			t.Errorf("%s(%v, %v) = %v, %v; want %v", c.name, c.old, c.upd, got, err, c.want)
		}
	}
	// The merge reducer does not change its inputs.
	old := obj("a", 1)
	if _, err := red("meta")(old, obj("a", 2)); err != nil || old.Object()["a"].Int() != 1 {
		t.Error("merge changed the old value")
	}
	// Nor does append.
	base := flow.ListValue(make([]flow.Value, 1, 8)...)
	a1, _ := red("anything")(base, flow.IntValue(1))
	a2, _ := red("anything")(base, flow.IntValue(2))
	if a1.List()[1].Int() != 1 || a2.List()[1].Int() != 2 {
		t.Error("append aliases the old list")
	}
}

func TestMapNode(t *testing.T) {
	w := seedWorkflow()
	retrieve := w.Node("retrieve")
	retrieve.Map = exAt(P(25, 10), `split(from_query, ";")`)
	retrieve.As = "q"
	retrieve.Inputs = []*flow.Input{input(P(28, 9), "query", "q")}
	p := mustCompile(t, w, seedOptions())
	pn := planNode(t, p, "retrieve")
	if pn.Map == nil || pn.ItemCell < 0 {
		t.Fatal("map not compiled")
	}
	if c := p.Cells[pn.ItemCell]; c.Name != "q" || c.Kind != flow.CellItem || !c.Type.Equal(flow.TString) {
		t.Errorf("item cell %+v", c)
	}
	if _, c := cellByName(t, p, "retrieve.chunks"); !c.Type.Equal(flow.ListOf(flow.ListOf(flow.TString))) {
		t.Errorf("map output cell type %v", c.Type)
	}
	if pn.Outputs[0].Type.String() != "List[String]" {
		t.Errorf("per-element type %v", pn.Outputs[0].Type)
	}
	// The default element name is item.
	retrieve.As = ""
	retrieve.Inputs = []*flow.Input{input(P(28, 9), "query", "item")}
	p = mustCompile(t, w, seedOptions())
	if c := p.Cells[planNode(t, p, "retrieve").ItemCell]; c.Name != "item" {
		t.Errorf("default item name %q", c.Name)
	}
	// The map expression must be a list.
	retrieve.Map = exAt(P(25, 10), `rephraseCount`)
	_, ds := flow.Compile(w, seedOptions())
	wantDiag(t, ds, "type-mismatch", flow.Error, P(25, 10), "node retrieve, map: rephraseCount has type Int, want List[Any]")
}

func TestErrorEdges(t *testing.T) {
	w := seedWorkflow()
	e := edge(P(109, 5), "retrieve", "generate", ovr(P(109, 40), "result_source", `"retrieval failed: " + error`))
	e.OnError = true
	w.Edges = append(w.Edges, e)
	p := mustCompile(t, w, seedOptions())
	pn := planNode(t, p, "retrieve")
	if len(pn.OnError) != 1 || len(pn.Edges) != 1 {
		t.Fatalf("retrieve edges %d, on error %d", len(pn.Edges), len(pn.OnError))
	}
	if r := pn.OnError[0].Overrides[0].Prog.Refs[0]; r.Cell != pn.ErrCell {
		t.Errorf("error resolves to %+v, want cell %d", r, pn.ErrCell)
	}
	// `error` is only in scope on error edges.
	w = seedWorkflow()
	w.Edges[4].Cond = exAt(P(90, 40), `error == ""`)
	_, ds := flow.Compile(w, seedOptions())
	wantDiag(t, ds, "unknown-name", flow.Error, P(90, 40), "edge retrieve -> evaluate, condition: error is only in scope on error edges")
}
