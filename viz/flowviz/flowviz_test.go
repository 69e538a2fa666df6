package flowviz_test

import (
	"io"
	"reflect"
	"testing"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/viz"
	"github.com/weftlang/weft/viz/flowviz"
)

// intentQA is the reference agent of seed 000.
const intentQA = "../../examples/intentqa/intentqa.wf"

// loadGraph loads path, compiles its main workflow and converts it.
func loadGraph(t *testing.T, path string) *viz.Graph {
	t.Helper()
	m, ds := lang.Load(path)
	if ds.HasErrors() {
		t.Fatalf("%s: %v", path, ds)
	}
	w := m.Main()
	plan, ds := flow.Compile(w, nil)
	if plan == nil {
		t.Fatalf("%s: %v", path, ds)
	}
	return flowviz.Graph(w, plan)
}

func TestGraphIntentQA(t *testing.T) {
	g := loadGraph(t, intentQA)
	if g.Name != "IntentQA" {
		t.Errorf("name = %q", g.Name)
	}
	wantNodes := []viz.Node{
		{ID: "identify_intent", Label: "identify_intent", Detail: "identify_user_intent", Kind: viz.Task, Initial: true},
		{ID: "ask_user", Label: "ask_user", Detail: "ask_user", Kind: viz.Human},
		{ID: "retrieve", Label: "retrieve", Detail: "retrieve_financial_documents", Kind: viz.Task},
		{ID: "evaluate", Label: "evaluate", Detail: "evaluate_relevance", Kind: viz.Task},
		{ID: "rephrase", Label: "rephrase", Detail: "rephrase_query", Kind: viz.Task},
		{ID: "summarize", Label: "summarize", Detail: "summarize", Kind: viz.Task},
		{ID: "generate", Label: "generate", Detail: "generate_answer", Kind: viz.Task, Final: true},
	}
	if !reflect.DeepEqual(g.Nodes, wantNodes) {
		t.Errorf("nodes:\n got %+v\nwant %+v", g.Nodes, wantNodes)
	}
	wantEdges := []viz.Edge{
		{From: "identify_intent", To: "retrieve", Kind: viz.Conditional, Label: `intent == "qa"`, Note: "from_query := identify_intent.input_text"},
		{From: "identify_intent", To: "summarize", Kind: viz.Conditional, Label: `intent == "summarization"`, Note: "original_query := identify_intent.input_text"},
		{From: "identify_intent", To: "ask_user", Kind: viz.Conditional, Label: `intent == "not_clear"`},
		{From: "ask_user", To: "retrieve", Kind: viz.Normal, Note: "from_query := ask_user.query"},
		{From: "retrieve", To: "evaluate", Kind: viz.Normal},
		{From: "summarize", To: "generate", Kind: viz.Normal, Note: "result_source := summarize.summary"},
		{From: "evaluate", To: "generate", Kind: viz.Conditional, Label: `relevance == "OK"`, Note: "result_source := evaluate.chunks"},
		{From: "evaluate", To: "rephrase", Kind: viz.Conditional, Label: `relevance == "BAD" && rephraseCount < 3`, Note: "rephraseCount = rephraseCount + 1; from_query := retrieve.query"},
		{From: "evaluate", To: "generate", Kind: viz.Conditional, Label: `relevance == "BAD" && rephraseCount >= 3`, Note: `result_source := "ERROR: no relevant chunks after retries"`},
		{From: "rephrase", To: "retrieve", Kind: viz.Normal, Note: "from_query := rephrase.new_query"},
	}
	if len(g.Edges) != len(wantEdges) {
		t.Fatalf("%d edges, want %d: %+v", len(g.Edges), len(wantEdges), g.Edges)
	}
	for i := range wantEdges {
		if g.Edges[i] != wantEdges[i] {
			t.Errorf("edge %d:\n got %+v\nwant %+v", i, g.Edges[i], wantEdges[i])
		}
	}
}

func TestGraphKinds(t *testing.T) {
	g := loadGraph(t, "testdata/shapes.wf")
	kinds := map[string]viz.NodeKind{}
	details := map[string]string{}
	finals := map[string]bool{}
	for _, n := range g.Nodes {
		kinds[n.ID] = n.Kind
		details[n.ID] = n.Detail
		if n.Final {
			finals[n.ID] = true
		}
	}
	wantKinds := map[string]viz.NodeKind{
		"plan": viz.Task, "search": viz.Tool, "read": viz.Task, "merge": viz.Join, "each": viz.Map,
		"draft":  viz.LLM, // a FUNCTION node calling an action bound as LLM
		"review": viz.Human, "fallback": viz.Task, "sub": viz.Subflow,
	}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("kinds = %v, want %v", kinds, wantKinds)
	}
	if details["sub"] != "Child" || details["draft"] != "draft_reply" {
		t.Errorf("details = %v", details)
	}
	if !reflect.DeepEqual(finals, map[string]bool{"sub": true, "fallback": true}) {
		t.Errorf("finals = %v", finals)
	}
	type edge struct {
		from, to, label, note string
		kind                  viz.EdgeKind
	}
	var got []edge
	for _, e := range g.Edges {
		got = append(got, edge{e.From, e.To, e.Label, e.Note, e.Kind})
	}
	want := []edge{
		{"plan", "search", "", "", viz.Parallel},
		{"plan", "read", "", "", viz.Parallel},
		{"search", "merge", "", "notes = hits", viz.Normal},
		{"read", "merge", "", "notes = chunks", viz.Normal},
		{"read", "fallback", "", "", viz.Error},
		{"merge", "each", "", "", viz.Normal},
		{"each", "draft", "", "", viz.Normal},
		{"draft", "review", "", "", viz.Normal},
		{"review", "sub", "ok", "", viz.Conditional},
		{"review", "fallback", "", "", viz.Default},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("edges:\n got %+v\nwant %+v", got, want)
	}
}

func TestGraphWithoutPlan(t *testing.T) {
	// A workflow that fails its checks is drawn as written; edges to
	// unknown nodes are left out.
	m, ds := lang.Load("testdata/three_errors.wf")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	g := flowviz.Graph(m.Main(), nil)
	if len(g.Nodes) != 2 || len(g.Edges) != 1 || !g.Nodes[0].Initial || !g.Nodes[1].Final {
		t.Errorf("graph = %+v", g)
	}
	if err := viz.Mermaid(io.Discard, g); err != nil {
		t.Error(err)
	}
}
