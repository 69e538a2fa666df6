package flow_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
)

// compileSeedVariant compiles seed 000 after change; the seed's actions
// exist.
func compileSeedVariant(t *testing.T, change func(w *flow.Workflow)) (*flow.Plan, flow.Diagnostics) {
	t.Helper()
	w := seedWorkflow()
	change(w)
	return flow.Compile(w, seedOptions())
}

// small returns a workflow over the nodes named in names (node i at line
// 10+i), all calling the action "act", starting at the first.
func small(names string, finals string, edges ...*flow.Edge) *flow.Workflow {
	w := &flow.Workflow{Name: "W", Pos: P(1, 1), Edges: edges}
	for i, n := range strings.Fields(names) {
		w.Nodes = append(w.Nodes, fnode(P(10+i, 5), n, "act"))
	}
	w.Initial = w.Nodes[0].Name
	if finals != "" {
		w.Finals = strings.Split(finals, ",")
	}
	return w
}

func removeEdges(w *flow.Workflow, idx ...int) {
	var keep []*flow.Edge
	for i, e := range w.Edges {
		if !slices.Contains(idx, i) {
			keep = append(keep, e)
		}
	}
	w.Edges = keep
}

// ---- unknown names ----

func TestCheckUnknownNodeInEdgeFrom(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[4].From = "retrive" })
	wantDiag(t, ds, "unknown-name", flow.Error, P(90, 5), `edge from unknown node "retrive"; did you mean "retrieve"?`)
}

func TestCheckUnknownNodeInEdgeTo(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[4].To = []string{"evalute"}
		w.Edges[4].ToPos = []flow.Pos{P(90, 35)}
	})
	wantDiag(t, ds, "unknown-name", flow.Error, P(90, 35), `edge from retrieve to unknown node "evalute"; did you mean "evaluate"?`)
	// Without ToPos, the edge's position is used.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[4].To = []string{"nowhere"} })
	d := wantDiag(t, ds, "unknown-name", flow.Error, P(90, 5), `edge from retrieve to unknown node "nowhere"`)
	if strings.Contains(d.Msg, "did you mean") {
		t.Errorf("no node is close to nowhere: %s", d.Msg)
	}
}

func TestCheckUnknownInitial(t *testing.T) {
	w := small("start next", "next", edge(P(20, 5), "start", "next"))
	w.Initial, w.InitialPos = "strat", P(30, 12)
	_, ds := flow.Compile(w, nil)
	wantDiag(t, ds, "unknown-name", flow.Error, P(30, 12), `initial node "strat" is not declared; did you mean "start"?`)

	w.Initial = ""
	_, ds = flow.Compile(w, nil)
	wantDiag(t, ds, "missing", flow.Error, P(1, 1), "workflow W has no initial node")

	_, ds = flow.Compile(&flow.Workflow{Name: "Empty", Pos: P(1, 1)}, nil)
	wantDiag(t, ds, "missing", flow.Error, P(1, 1), "workflow Empty has no nodes")
}

func TestCheckUnknownFinal(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) { w.Finals = []string{"generat"} })
	wantDiag(t, ds, "unknown-name", flow.Error, P(112, 12), `final node "generat" is not declared; did you mean "generate"?`)
	// Without FinalsPos, the workflow's position is used.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Finals = []string{"generate", "done"}
	})
	wantDiag(t, ds, "unknown-name", flow.Error, P(1, 1), `final node "done" is not declared`)
}

func TestCheckUnknownJoinAndTargets(t *testing.T) {
	w := small("start a b j", "j",
		edge(P(20, 5), "start", "a,b", joinPart("jj")),
		edge(P(21, 5), "a", "j"), edge(P(22, 5), "b", "j"))
	_, ds := flow.Compile(w, nil)
	wantDiag(t, ds, "unknown-name", flow.Error, P(20, 5), `edge from start joins at unknown node "jj"; did you mean "j"?`)

	w = small("start a", "a", &flow.Edge{From: "start", Pos: P(20, 5)})
	_, ds = flow.Compile(w, nil)
	wantDiag(t, ds, "missing", flow.Error, P(20, 5), "edge from start has no target")

	w = small("start a b", "b", edge(P(20, 5), "start", "a,a", joinPart("b")), edge(P(21, 5), "a", "b"))
	_, ds = flow.Compile(w, nil)
	wantDiag(t, ds, "duplicate", flow.Error, P(20, 5), "edge from start lists a twice")

	w = small("start a", "a", edge(P(20, 5), "start", "a", joinPart("a")))
	_, ds = flow.Compile(w, nil)
	wantDiag(t, ds, "syntax", flow.Error, P(20, 5), "edge from start has join a but only one target; join is for parallel edges")
}

func TestCheckUnknownVariableInUpdate(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[7].Updates[0].Name = "rephraseCont" })
	wantDiag(t, ds, "unknown-name", flow.Error, P(100, 22),
		`edge evaluate -> rephrase, update: "rephraseCont" is not a declared variable; did you mean "rephraseCount"?`)

	// An update of a slot, and an override of a variable, say what to use.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[7].Updates = append(w.Edges[7].Updates, upd(P(100, 50), "from_query", `"x"`).Assign)
	})
	wantDiag(t, ds, "type-mismatch", flow.Error, P(100, 50),
		`edge evaluate -> rephrase, update: "from_query" is a slot, not a variable; set slots with override`)
}

func TestCheckOverrideNamingVariable(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[7].Overrides = append(w.Edges[7].Overrides, ovr(P(102, 24), "rephraseCount", "0").Assign)
	})
	// Reported once, not once per compile pass.
	wantDiag(t, ds, "type-mismatch", flow.Error, P(102, 24),
		`edge evaluate -> rephrase, override: "rephraseCount" is a variable, not a slot; change variables with update: { rephraseCount = ... }`)
	if len(ds) != 1 {
		t.Errorf("want one diagnostic, got:\n%v", ds)
	}
	// A parameter cannot be overridden either.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[7].Overrides = append(w.Edges[7].Overrides, ovr(P(102, 24), flow.InputText, `"x"`).Assign)
	})
	wantDiag(t, ds, "type-mismatch", flow.Error, P(102, 24), `"input_text" is a parameter, not a slot`)
}

func TestCheckUnknownAction(t *testing.T) {
	opts := &flow.CompileOptions{HasAction: hasAction(slices.DeleteFunc(slices.Clone(seedActions), func(a string) bool { return a == "summarize" })...)}
	w := seedWorkflow()
	_, ds := flow.Compile(w, opts)
	wantDiag(t, ds, "unknown-action", flow.Error, P(54, 5), `node summarize: unknown action "summarize"`)
	// An action bound in the workflow exists.
	w.Bindings = []*flow.Binding{{Name: "summarize", Type: flow.LLM, Pos: P(120, 3)}}
	if _, ds := flow.Compile(w, opts); len(ds) != 0 {
		t.Errorf("bound action: %v", ds)
	}
	if w.Binding("summarize") == nil || w.Binding("nope") != nil || w.Node("retrieve") == nil || w.Node("nope") != nil {
		t.Error("Workflow.Binding / Workflow.Node")
	}
	// A misspelt action.
	w = seedWorkflow()
	w.Node("rephrase").Action = "rephrase_qeury"
	_, ds = flow.Compile(w, seedOptions())
	wantDiag(t, ds, "unknown-action", flow.Error, P(44, 5), `node rephrase: unknown action "rephrase_qeury"; bind it with an action block or register it in Go`)
}

func TestCheckUnknownField(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[7].Overrides[0] = ovr(P(101, 24), "from_query", "retrieve.qery").Assign
	})
	wantDiag(t, ds, "unknown-name", flow.Error, P(101, 36),
		`edge evaluate -> rephrase, override from_query: node retrieve has no field qery (its fields: chunks, query, error); did you mean "query"?`)
}

func TestCheckUnknownSlotInInput(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Node("retrieve").Inputs[0] = input(P(28, 9), "query", "from_qurey")
	})
	wantDiag(t, ds, "unknown-name", flow.Error, P(28, 16),
		`node retrieve, input query: unknown name from_qurey; did you mean "from_query"?`)
	// A typo in a node name, in a selector.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[7].Overrides[0] = ovr(P(101, 24), "from_query", "retreive.query").Assign
	})
	wantDiag(t, ds, "unknown-name", flow.Error, P(101, 36), `unknown name retreive (neither a node nor a value); did you mean "retrieve"?`)
}

func TestCheckAmbiguousBareName(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Nodes = append(w.Nodes, fnode(P(200, 5), "retrieve_web", "retrieve_financial_documents",
			input(P(201, 9), "query", "from_query"), field(P(202, 9), "chunks", flow.ListOf(flow.TString))))
	})
	wantDiag(t, ds, "unknown-name", flow.Error, P(38, 17),
		"node evaluate, input chunks: chunks is ambiguous: it is an output of retrieve and retrieve_web; write retrieve.chunks or retrieve_web.chunks")
}

// ---- types ----

func TestCheckConditionNotBool(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[6].Cond = when(P(95, 23), "rephraseCount + 1").Expr })
	wantDiag(t, ds, "type-mismatch", flow.Error, P(95, 37), "edge evaluate -> generate, condition: rephraseCount + 1 has type Int, want Bool")

	_, ds = compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[0].Cond = when(P(77, 23), "intent").Expr })
	wantDiag(t, ds, "type-mismatch", flow.Error, P(77, 23), `intent has type Enum["qa","summarization","not_clear"], want Bool`)
}

func TestCheckUpdateTypeMismatch(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[7].Updates[0] = upd(P(100, 22), "rephraseCount", `"three"`).Assign })
	wantDiag(t, ds, "type-mismatch", flow.Error, P(100, 38), `edge evaluate -> rephrase, update rephraseCount: "three" has type String, want Int`)
	// Int into Float is fine.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars = append(w.Vars, &flow.Var{Name: "score", Type: flow.TFloat, Pos: P(5, 5)})
		w.Edges[7].Updates = append(w.Edges[7].Updates, upd(P(100, 60), "score", "rephraseCount * 2").Assign)
	})
	if len(ds) != 0 {
		t.Errorf("Int to Float: %v", ds)
	}
	// A node's set block writes variables, with the node's outputs in scope.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars = append(w.Vars, &flow.Var{Name: "seen", Type: flow.TInt, Reducer: flow.ParseReducer("sum"), Pos: P(5, 5)})
		w.Node("retrieve").Set = []*flow.Assign{set(P(32, 9), "seen", "len(chunks)").Assign}
	})
	if len(ds) != 0 {
		t.Errorf("set: %v", ds)
	}
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars = append(w.Vars, &flow.Var{Name: "seen", Type: flow.TInt, Reducer: flow.ParseReducer("sum"), Pos: P(5, 5)})
		w.Node("retrieve").Set = []*flow.Assign{set(P(32, 9), "seen", "chunks").Assign}
	})
	wantDiag(t, ds, "type-mismatch", flow.Error, P(32, 16), "node retrieve, set seen: chunks has type List[String], want Int")
}

func TestCheckEnumLiteral(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[0].Cond = when(P(77, 23), `intent == "qaa"`).Expr })
	wantDiag(t, ds, "enum-literal", flow.Error, P(77, 33),
		`edge identify_intent -> retrieve, condition: "qaa" is not a value of Enum["qa","summarization","not_clear"]`)

	_, ds = compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[0].Cond = when(P(77, 23), `intent in ["qa", "not_cler"]`).Expr })
	wantDiag(t, ds, "enum-literal", flow.Error, P(77, 40), `"not_cler" is not a value of Enum["qa","summarization","not_clear"]`)

	_, ds = compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[6].Cond = when(P(95, 23), `"ok" == relevance`).Expr })
	wantDiag(t, ds, "enum-literal", flow.Error, P(95, 23), `"ok" is not a value of Enum["OK","BAD"]`)
}

// ---- routing and graph ----

func TestCheckEnumRoutingNotExhaustive(t *testing.T) {
	p, ds := compileSeedVariant(t, func(w *flow.Workflow) { removeEdges(w, 2) }) // no not_clear edge
	if p == nil {
		t.Fatalf("warnings must not stop compilation: %v", ds)
	}
	d := wantDiag(t, ds, "enum-routing", flow.Warning, P(76, 5), "identify_intent", `"not_clear"`, "default edge")
	if strings.Contains(d.Msg, `"qa"`) || strings.Contains(d.Msg, `"summarization",`) {
		t.Errorf("lists covered values: %s", d.Msg)
	}
	if !slices.ContainsFunc(p.Warnings, func(w flow.Diagnostic) bool { return w.Code == "enum-routing" }) {
		t.Error("Plan.Warnings lacks the warning")
	}

	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[1].Cond = when(P(81, 23), `intent == "qa"`).Expr
		removeEdges(w, 2)
	})
	wantDiag(t, ds, "enum-routing", flow.Warning, P(76, 5), `"summarization"`, `"not_clear"`)

	// A default edge catches the rest.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) { w.Edges[2].Cond = nil })
	if len(ds) != 0 {
		t.Errorf("default edge: %v", ds)
	}
	// `in` and `!=` cover values too.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[0].Cond = when(P(77, 23), `intent in ["qa", "not_clear"]`).Expr
		removeEdges(w, 2)
	})
	if len(findDiag(ds, "enum-routing")) != 0 {
		t.Errorf("in: %v", ds)
	}
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[1].Cond = when(P(81, 23), `intent != "qa"`).Expr
		removeEdges(w, 2)
	})
	if len(findDiag(ds, "enum-routing")) != 0 {
		t.Errorf("!=: %v", ds)
	}
	// The comparison may name the field fully.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[0].Cond = when(P(77, 23), `identify_intent.intent == "qa"`).Expr
		removeEdges(w, 2)
	})
	wantDiag(t, ds, "enum-routing", flow.Warning, P(76, 5), `"not_clear"`)
}

func TestCheckUnreachableNode(t *testing.T) {
	p, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Nodes = append(w.Nodes, fnode(P(200, 5), "orphan", "summarize", field(P(201, 9), "x", flow.TString)))
		w.Edges = append(w.Edges, edge(P(210, 5), "orphan", "generate"))
	})
	if p == nil {
		t.Fatal(ds)
	}
	wantDiag(t, ds, "unreachable", flow.Warning, P(200, 5), "node orphan is unreachable from the initial node identify_intent")
	if len(ds) != 1 {
		t.Errorf("want only the unreachable warning:\n%v", ds)
	}
}

func TestCheckNoFinalReachable(t *testing.T) {
	w := small("a b c", "c", edge(P(20, 5), "a", "b"), edge(P(21, 5), "b", "a"))
	_, ds := flow.Compile(w, nil)
	wantDiag(t, ds, "no-final", flow.Error, P(1, 1), "workflow W: no final node is reachable from the initial node a (finals: c)")

	// No final declared at all.
	w = small("a b", "", edge(P(20, 5), "a", "b"), edge(P(21, 5), "b", "a"))
	_, ds = flow.Compile(w, nil)
	wantDiag(t, ds, "no-final", flow.Error, P(1, 1), "workflow W has no final node")

	// END nodes are finals.
	w = small("a", "", edge(P(20, 5), "a", "stop"))
	w.Nodes = append(w.Nodes, &flow.Node{Name: "stop", Type: flow.End, Pos: P(12, 5)})
	p := mustCompile(t, w, &flow.CompileOptions{HasAction: hasAction("act")})
	if !planNode(t, p, "stop").Final || len(p.Warnings) != 0 {
		t.Errorf("END node: final %v, warnings %v", planNode(t, p, "stop").Final, p.Warnings)
	}
}

func TestCheckUnreachableFinal(t *testing.T) {
	p, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Nodes = append(w.Nodes, fnode(P(200, 5), "fallback", "generate_answer"))
		w.Finals = append(w.Finals, "fallback")
		w.FinalsPos = append(w.FinalsPos, P(112, 22))
	})
	if p == nil {
		t.Fatal(ds)
	}
	wantDiag(t, ds, "unreachable-final", flow.Warning, P(200, 5), "final node fallback is unreachable from the initial node identify_intent")
	if len(ds) != 1 {
		t.Errorf("an unreachable final is reported once:\n%v", ds)
	}
}

func TestCheckEdgesFromFinal(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges = append(w.Edges, edge(P(109, 5), "generate", "identify_intent"))
	})
	wantDiag(t, ds, "unreachable", flow.Warning, P(109, 5), "edges from final node generate are never taken: the run ends there")
}

func TestCheckDeadEnd(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) { removeEdges(w, 5) }) // summarize -> generate
	wantDiag(t, ds, "dead-end", flow.Error, P(54, 5), "node summarize is not a final and has no outgoing edge")

	// An error edge alone does not help: success has nowhere to go.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[5].OnError = true
	})
	wantDiag(t, ds, "dead-end", flow.Error, P(54, 5), "node summarize")
}

func TestCheckUnboundedCycle(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[7].Cond = when(P(99, 23), `relevance == "BAD"`).Expr
		w.Edges[7].Updates = nil
	})
	wantDiag(t, ds, "unbounded-cycle", flow.Warning, P(24, 5),
		"cycle retrieve -> evaluate -> rephrase -> retrieve has no counter that bounds it", "max_steps (10000)")
	if len(ds) != 1 {
		t.Errorf("want one warning:\n%v", ds)
	}
	// The seed's bounded loop gives none (TestSeedIntentQACompiles checks
	// there are no diagnostics at all); a counter updated in a set block
	// bounds a self-loop too.
	loop := func(bounded bool) flow.Diagnostics {
		w := small("a done", "done",
			edge(P(20, 5), "a", "a", when(P(20, 30), "n < 3")),
			edge(P(21, 5), "a", "done"))
		w.Vars = []*flow.Var{{Name: "n", Type: flow.TInt, Pos: P(2, 5)}}
		if bounded {
			w.Nodes[0].Set = []*flow.Assign{set(P(10, 20), "n", "n + 1").Assign}
		}
		_, ds := flow.Compile(w, nil)
		return ds
	}
	wantDiag(t, loop(false), "unbounded-cycle", flow.Warning, P(10, 5), "cycle a -> a")
	if ds := loop(true); len(ds) != 0 {
		t.Errorf("bounded self-loop: %v", ds)
	}
	// The path printed is a real path, in edge order.
	w := small("a c b done", "done",
		edge(P(20, 5), "a", "b"), edge(P(21, 5), "b", "c"), edge(P(22, 5), "c", "a", when(P(22, 30), "true")),
		edge(P(23, 5), "c", "done"))
	_, ds = flow.Compile(w, nil)
	wantDiag(t, ds, "unbounded-cycle", flow.Warning, P(10, 5), "cycle a -> b -> c -> a")
}

// fanout is start -> [a, b] join j, a -> j, b -> j, with notes written by
// both branches.
func fanout(reducer string) *flow.Workflow {
	w := small("start a b j", "j",
		edge(P(20, 5), "start", "a,b", joinPart("j")),
		edge(P(21, 5), "a", "j"),
		edge(P(22, 5), "b", "j"))
	w.Vars = []*flow.Var{{Name: "notes", Type: flow.ListOf(flow.TString), Reducer: flow.ParseReducer(reducer), Pos: P(2, 5)}}
	w.Nodes[1].Set = []*flow.Assign{set(P(11, 20), "notes", `["a"]`).Assign}
	w.Nodes[2].Set = []*flow.Assign{set(P(12, 20), "notes", `["b"]`).Assign}
	return w
}

func TestCheckParallelWriters(t *testing.T) {
	_, ds := flow.Compile(fanout(""), nil)
	wantDiag(t, ds, "parallel-write", flow.Error, P(20, 5),
		"parallel branches a and b both write variable notes, which has no reducer",
		"notes: List[String] reduce append")

	p, ds := flow.Compile(fanout("append"), nil)
	if p == nil || len(ds) != 0 {
		t.Fatalf("with a reducer: %v", ds)
	}
	e := planNode(t, p, "start").Edges[0]
	if len(e.To) != 2 || e.Join != planNode(t, p, "j").Index {
		t.Errorf("fan-out edge: to %v join %d", e.To, e.Join)
	}

	// Slots written by overrides on two branches.
	w := small("start a b j", "j",
		edge(P(20, 5), "start", "a,b", joinPart("j")),
		edge(P(21, 5), "a", "j", ovr(P(21, 30), "res", `"a"`)),
		edge(P(22, 5), "b", "j", ovr(P(22, 30), "res", `"b"`)))
	_, ds = flow.Compile(w, nil)
	wantDiag(t, ds, "parallel-write", flow.Error, P(20, 5), "a and b both write slot res")

	// One branch writing is fine; so is writing after the join.
	w = fanout("")
	w.Nodes[2].Set = nil
	w.Nodes = append(w.Nodes, fnode(P(14, 5), "after", "act"))
	w.Edges = append(w.Edges, edge(P(23, 5), "j", "after"))
	w.Finals = []string{"after"}
	w.Nodes[3].Set = []*flow.Assign{set(P(13, 20), "notes", `["j"]`).Assign}
	if _, ds := flow.Compile(w, nil); len(ds) != 0 {
		t.Errorf("one writer: %v", ds)
	}

	// Three branches.
	w = small("start a b c j", "j",
		edge(P(20, 5), "start", "a,b,c", joinPart("j")),
		edge(P(21, 5), "a", "j", upd(P(21, 30), "n", "1")),
		edge(P(22, 5), "b", "j", upd(P(22, 30), "n", "2")),
		edge(P(23, 5), "c", "j", upd(P(23, 30), "n", "3")))
	w.Vars = []*flow.Var{{Name: "n", Type: flow.TInt, Pos: P(2, 5)}}
	_, ds = flow.Compile(w, nil)
	wantDiag(t, ds, "parallel-write", flow.Error, P(20, 5), "a, b and c all write variable n", "n: Int reduce sum")
}

func TestCheckFanoutWithoutJoin(t *testing.T) {
	w := fanout("append")
	w.Edges[0].Join = ""
	_, ds := flow.Compile(w, nil)
	wantDiag(t, ds, "missing", flow.Error, P(20, 5), "parallel edge from start to a, b needs join: the node where the branches meet")
}

func TestCheckBranchNeverReachesJoin(t *testing.T) {
	w := fanout("append")
	w.Nodes = append(w.Nodes, fnode(P(14, 5), "elsewhere", "act"))
	w.Edges[2].To = []string{"elsewhere"}
	w.Finals = []string{"j", "elsewhere"}
	_, ds := flow.Compile(w, nil)
	wantDiag(t, ds, "join", flow.Error, P(20, 5), "parallel branch b (from start) never reaches its join j")
}

// ---- declarations ----

func TestCheckDuplicateNode(t *testing.T) {
	// The duplicate sits between other nodes: the nodes after it must still
	// compile against the right plan nodes.
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		dup := fnode(P(200, 5), "retrieve", "retrieve_financial_documents", field(P(201, 9), "other", flow.TString))
		w.Nodes = slices.Insert(w.Nodes, 3, dup)
	})
	wantDiag(t, ds, "duplicate", flow.Error, P(200, 5), `node "retrieve" is declared twice`)
	if len(ds) != 1 {
		t.Errorf("want one error:\n%v", ds)
	}
	// A node without a name.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Nodes = slices.Insert(w.Nodes, 1, fnode(P(200, 5), "", "summarize"))
	})
	wantDiag(t, ds, "syntax", flow.Error, P(200, 5), "node without a name")
}

func TestCheckNodeNamedLikeVariable(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Nodes = append(w.Nodes, fnode(P(200, 5), "rephraseCount", "summarize"))
	})
	wantDiag(t, ds, "duplicate", flow.Error, P(200, 5), `node "rephraseCount" has the name of a variable`)

	// An implicit slot named like a node.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[4].Overrides = []*flow.Assign{ovr(P(90, 40), "summarize", `"x"`).Assign}
	})
	wantDiag(t, ds, "duplicate", flow.Error, P(90, 40), `slot "summarize" has the name of a node`)

	// Two variables with one name, a variable named like a parameter.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars = append(w.Vars, &flow.Var{Name: "rephraseCount", Type: flow.TInt, Pos: P(5, 5)}, &flow.Var{Name: flow.InputText, Pos: P(6, 5)})
	})
	got := findDiag(ds, "duplicate")
	if len(got) != 2 || got[0].Pos != P(5, 5) || got[0].Msg != `variable "rephraseCount" is already declared as a variable` ||
		got[1].Pos != P(6, 5) || got[1].Msg != `variable "input_text" is already declared as a parameter` {
		t.Errorf("duplicates:\n%v", ds)
	}
}

func TestCheckReducerTypeMismatch(t *testing.T) {
	for _, c := range []struct {
		red string
		typ flow.Type
		msg string
	}{
		{"append", flow.TInt, "variable count: reducer append needs a List, not Int"},
		{"sum", flow.TString, "variable count: reducer sum needs an Int, a Float or a Duration, not String"},
		{"max", flow.TBool, "variable count: reducer max needs an Int, a Float or a Duration, not Bool"},
		{"merge", flow.ListOf(flow.TAny), "variable count: reducer merge needs an Object, not List[Any]"},
	} {
		_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
			w.Vars = append(w.Vars, &flow.Var{Name: "count", Type: c.typ, Reducer: flow.ParseReducer(c.red), Pos: P(5, 5)})
		})
		wantDiag(t, ds, "type-mismatch", flow.Error, P(5, 5), c.msg)
	}
}

func TestCheckUnknownReducer(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars = append(w.Vars, &flow.Var{Name: "log", Type: flow.ListOf(flow.TString), Reducer: flow.ParseReducer("apend"), Pos: P(5, 5)})
	})
	wantDiag(t, ds, "unknown-name", flow.Error, P(5, 5), `variable log: unknown reducer "apend"; did you mean "append"?`)
}

func TestCheckSubworkflow(t *testing.T) {
	inner := func() *flow.Workflow {
		return &flow.Workflow{
			Name: "Inner", Pos: P(300, 1),
			Nodes:   []*flow.Node{fnode(P(301, 5), "x", "missing_action"), fnode(P(302, 5), "y", "summarize")},
			Edges:   []*flow.Edge{edge(P(303, 5), "x", "y")},
			Initial: "x", Finals: []string{"y"},
		}
	}
	withSub := func(sub *flow.Workflow) func(w *flow.Workflow) {
		return func(w *flow.Workflow) {
			w.Nodes = append(w.Nodes, &flow.Node{Name: "sub", Type: flow.Subflow, Subflow: sub, Pos: P(200, 5)})
			w.Edges[5].To = []string{"sub"}
			w.Edges = append(w.Edges, edge(P(210, 5), "sub", "generate"))
		}
	}
	_, ds := compileSeedVariant(t, withSub(inner()))
	wantDiag(t, ds, "unknown-action", flow.Error, P(301, 5), `in subworkflow Inner (node sub): node x: unknown action "missing_action"`)

	// A valid subworkflow is compiled into the node.
	sub := inner()
	sub.Nodes[0].Action = "rephrase_query"
	p, ds := compileSeedVariant(t, withSub(sub))
	if p == nil || len(ds) != 0 {
		t.Fatalf("valid subworkflow: %v", ds)
	}
	if pn := planNode(t, p, "sub"); pn.Sub == nil || pn.Sub.Workflow != sub {
		t.Error("Plan of the subworkflow missing")
	}

	// Its warnings are prefixed too.
	sub = inner()
	sub.Nodes[0].Action = "rephrase_query"
	sub.Nodes = append(sub.Nodes, fnode(P(304, 5), "z", "summarize"))
	_, ds = compileSeedVariant(t, withSub(sub))
	wantDiag(t, ds, "unreachable", flow.Warning, P(304, 5), "in subworkflow Inner (node sub): node z is unreachable")

	// A WORKFLOW node without a workflow, and a workflow that contains
	// itself.
	_, ds = compileSeedVariant(t, withSub(nil))
	wantDiag(t, ds, "missing", flow.Error, P(200, 5), "node sub: WORKFLOW node names no subworkflow")
	w := seedWorkflow()
	withSub(w)(w)
	_, ds = flow.Compile(w, seedOptions())
	wantDiag(t, ds, "recursive", flow.Error, P(200, 5), "node sub: workflow IntentQA contains itself")
}

func TestCheckMalformedNodes(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(n *flow.Node)
		code   string
		at     flow.Pos
		msg    string
	}{
		{"no action", func(n *flow.Node) { n.Action = "" }, "missing", P(54, 5), `node summarize: no action; write action: "name"`},
		{"bad type", func(n *flow.Node) { n.Type = "FUNKTION" }, "unknown-name", P(54, 5), "node summarize: unknown type FUNKTION; want FUNCTION, LLM, HUMAN, TOOL, WORKFLOW or END"},
		{"negative timeout", func(n *flow.Node) { n.Timeout = -time.Second }, "range", P(54, 5), "node summarize: timeout -1s is negative"},
		{"negative retry", func(n *flow.Node) { n.Retry = &flow.RetryPolicy{MaxAttempts: -1} }, "range", P(54, 5), "node summarize: retry settings must not be negative"},
		{"negative parallelism", func(n *flow.Node) { n.Parallelism = -2 }, "range", P(54, 5), "node summarize: parallelism -2 is negative"},
		{"duplicate input", func(n *flow.Node) { n.Inputs = append(n.Inputs, input(P(59, 9), "query", `"x"`)) }, "duplicate", P(59, 9), `node summarize: input "query" is given twice`},
		{"duplicate output", func(n *flow.Node) { n.Outputs = append(n.Outputs, field(P(62, 9), "summary", flow.TString)) }, "duplicate", P(62, 9), `node summarize: output "summary" is declared twice`},
		{"input and output", func(n *flow.Node) { n.Outputs = append(n.Outputs, field(P(62, 9), "query", flow.TString)) }, "duplicate", P(62, 9), `node summarize: "query" is both an input and an output`},
		{"input without value", func(n *flow.Node) { n.Inputs[0].Expr = nil }, "syntax", P(58, 9), "node summarize: input query has no value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ds := compileSeedVariant(t, func(w *flow.Workflow) { c.change(w.Node("summarize")) })
			wantDiag(t, ds, c.code, flow.Error, c.at, c.msg)
		})
	}
	// LLM and HUMAN nodes may go without an action (their settings are on
	// the node); their outputs are still checked.
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		n := w.Node("ask_user")
		n.Type, n.Action = flow.Human, ""
	})
	if len(ds) != 0 {
		t.Errorf("HUMAN node without action: %v", ds)
	}
}

func TestDiagnosticsAreSortedByPosition(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[7].Updates[0].Name = "rephraseCont"
		w.Edges[0].Cond = when(P(77, 23), `intent == "qaa"`).Expr
		w.Finals = []string{"generat"}
	})
	if len(ds) != 3 {
		t.Fatalf("want 3:\n%v", ds)
	}
	for i := 1; i < len(ds); i++ {
		if ds[i].Pos.Before(ds[i-1].Pos) {
			t.Errorf("not sorted:\n%v", ds)
		}
	}
	if err := ds.Err(); err == nil || !strings.Contains(err.Error(), "t.wf:77:33: ") {
		t.Errorf("Err() = %v", err)
	}
}

func TestCheckEnumLiteralStored(t *testing.T) {
	mode := flow.EnumOf("fast", "slow")
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars = append(w.Vars,
			&flow.Var{Name: "mode", Type: mode, Default: exAt(P(5, 20), `"fsat"`), Pos: P(5, 5)},
			&flow.Var{Name: "modes", Type: flow.ListOf(mode), Default: exAt(P(6, 20), `["slow", "sloow"]`), Pos: P(6, 5)})
		w.Edges[7].Updates = append(w.Edges[7].Updates, upd(P(100, 60), "mode", `"turbo"`).Assign)
	})
	got := findDiag(ds, "enum-literal")
	if len(got) != 3 ||
		got[0].Pos != P(5, 20) || got[0].Msg != `initial value of variable mode: "fsat" is not a value of Enum["fast","slow"]` ||
		got[1].Pos != P(6, 29) || got[1].Msg != `initial value of variable modes: "sloow" is not a value of Enum["fast","slow"]` ||
		got[2].Pos != P(100, 67) || got[2].Msg != `edge evaluate -> rephrase, update mode: "turbo" is not a value of Enum["fast","slow"]` {
		t.Errorf("got:\n%v", ds)
	}
	// Values of the Enum, and strings that are not literals, are accepted.
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars = append(w.Vars, &flow.Var{Name: "mode", Type: mode, Default: exAt(P(5, 20), `"slow"`), Pos: P(5, 5)})
		w.Edges[7].Updates = append(w.Edges[7].Updates, upd(P(100, 60), "mode", `lower(retrieve.query)`).Assign)
	})
	if len(ds) != 0 {
		t.Errorf("valid: %v", ds)
	}
}

func TestCheckEnumEquality(t *testing.T) {
	cmp := func(a, b flow.Type) flow.Diagnostics {
		_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
			w.Vars = append(w.Vars, &flow.Var{Name: "x", Type: a, Pos: P(5, 5)}, &flow.Var{Name: "y", Type: b, Pos: P(6, 5)})
			w.Edges[7].Cond = when(P(99, 23), `relevance == "BAD" && rephraseCount < 3 && x == y`).Expr
		})
		return ds
	}
	if ds := cmp(flow.EnumOf("fast", "slow"), flow.EnumOf("slow", "off")); len(ds) != 0 {
		t.Errorf("overlapping Enums can be equal: %v", ds)
	}
	wantDiag(t, cmp(flow.EnumOf("fast"), flow.EnumOf("off")), "type-mismatch", flow.Error, P(99, 68),
		`operator == compares values that can never be equal: x has type Enum["fast"], y has type Enum["off"]`)
}

func TestCheckBareNodeName(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Edges[5].Overrides[0] = ovr(P(92, 24), "result_source", "summarize").Assign
	})
	wantDiag(t, ds, "unknown-name", flow.Error, P(92, 39),
		"summarize is a node, not a value; name one of its fields: summarize.summary, summarize.query or summarize.error")
}

func TestSlots(t *testing.T) {
	p := mustCompile(t, seedWorkflow(), seedOptions())
	var names []string
	for _, s := range p.Slots {
		names = append(names, s.Name+":"+s.Type.String())
		if s.Default != nil || p.Cells[s.Cell].Name != s.Name {
			t.Errorf("implicit slot %+v", s)
		}
	}
	if got := strings.Join(names, " "); got != "from_query:String original_query:String result_source:Any" {
		t.Errorf("slots: %s", got)
	}

	// A declared slot keeps its type and its initial value, which may read
	// parameters only.
	w := seedWorkflow()
	w.Slots = []*flow.Var{{Name: "from_query", Type: flow.TString, Default: exAt(P(6, 30), `"none"`), Pos: P(6, 5)}}
	p = mustCompile(t, w, seedOptions())
	if len(p.Slots) != 3 || p.Slots[0].Name != "from_query" || p.Slots[0].Default == nil {
		t.Fatalf("declared slot: %+v", p.Slots)
	}
	if v, err := p.Slots[0].Default.Eval(make(flow.Cells, len(p.Cells))); err != nil || v.Str() != "none" {
		t.Errorf("slot default = %v, %v", v, err)
	}
	w.Slots[0].Default = exAt(P(6, 30), "rephraseCount")
	_, ds := flow.Compile(w, seedOptions())
	wantDiag(t, ds, "unknown-name", flow.Error, P(6, 30), "initial value of slot from_query: rephraseCount is a variable; initial values may use parameters only")
	// A declared slot is typed as declared: an override must fit.
	w.Slots[0].Default = nil
	w.Slots[0].Type = flow.TInt
	_, ds = flow.Compile(w, seedOptions())
	if got := findDiag(ds, "type-mismatch"); len(got) != 3 || got[0].Pos != P(78, 36) { // retrieve.query is an Int too
		t.Errorf("Int slot assigned strings:\n%v", ds)
	}

	// A slot built from itself has no narrowest type: it is Any.
	w = seedWorkflow()
	w.Edges[4].Overrides = []*flow.Assign{ovr(P(90, 40), "trail", "[trail]").Assign}
	p = mustCompile(t, w, seedOptions())
	if _, c := cellByName(t, p, "trail"); !c.Type.Equal(flow.TAny) {
		t.Errorf("trail: %v", c.Type)
	}
	// Slots fed through several inputs are still typed precisely.
	w = seedWorkflow()
	w.Nodes = append(w.Nodes, fnode(P(200, 5), "hop", "rephrase_query", input(P(201, 9), "q", "retrieve.query"), field(P(202, 9), "out", flow.TString)))
	w.Edges[9].Overrides[0] = ovr(P(108, 24), "from_query", "hop.q").Assign
	p, _ = flow.Compile(w, seedOptions())
	if p == nil {
		t.Fatal("hop")
	}
	if _, c := cellByName(t, p, "from_query"); !c.Type.Equal(flow.TString) {
		t.Errorf("from_query through hop.q: %v", c.Type)
	}
}

func TestCheckInitialValues(t *testing.T) {
	_, ds := compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars[0].Default = exAt(P(4, 26), `"zero"`)
		w.Params = []*flow.Var{{Name: "limit", Type: flow.TInt, Default: exAt(P(2, 20), "limt + 1"), Pos: P(2, 5)}}
	})
	wantDiag(t, ds, "type-mismatch", flow.Error, P(4, 26), `initial value of variable rephraseCount: "zero" has type String, want Int`)
	wantDiag(t, ds, "unknown-name", flow.Error, P(2, 20), `default of parameter limit: unknown name limt; did you mean "limit"?`)

	// Literal values that front-ends hand over whole (a JSON list, say).
	_, ds = compileSeedVariant(t, func(w *flow.Workflow) {
		w.Vars = append(w.Vars,
			&flow.Var{Name: "tags", Type: flow.ListOf(flow.TString), Default: &flow.Lit{Value: flow.StringList("a")}, Pos: P(5, 5)},
			&flow.Var{Name: "nums", Type: flow.ListOf(flow.TInt), Default: &flow.Lit{At: P(6, 20), Value: flow.StringList("a")}, Pos: P(6, 5)},
			&flow.Var{Name: "empty", Type: flow.ListOf(flow.TInt), Default: &flow.Lit{Value: flow.ListValue()}, Pos: P(7, 5)},
			&flow.Var{Name: "conf", Type: flow.TObject, Default: &flow.Lit{Value: obj("k", 1)}, Pos: P(8, 5)})
	})
	wantDiag(t, ds, "type-mismatch", flow.Error, P(6, 20), `initial value of variable nums: ["a"] has type List[String], want List[Int]`)
}
