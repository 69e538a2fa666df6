package flow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/flow"
)

// readsOptions reports reads as the names every binding's template reads.
func readsOptions(reads map[string][]string) *flow.CompileOptions {
	o := seedOptions()
	o.BindingReads = func(b *flow.Binding) []string { return reads[b.Name] }
	return o
}

func inputNames(pn *flow.PlanNode) []string {
	var names []string
	for _, in := range pn.Inputs {
		names = append(names, in.Name)
	}
	return names
}

func TestBindingReadsBecomeImplicitInputs(t *testing.T) {
	w := seedWorkflow()
	w.Bindings = append(w.Bindings,
		&flow.Binding{Name: "evaluate_relevance", Type: flow.LLM, Pos: P(90, 1), ConfigPos: map[string]flow.Pos{"prompt": P(92, 3)}},
		&flow.Binding{Name: "generate_answer", Type: flow.LLM, Pos: P(95, 1)})
	p, ds := flow.Compile(w, readsOptions(map[string][]string{
		// chunks is declared; retrieve.query, input_text and the variable
		// rephraseCount are read implicitly; answer is generate's own output.
		"evaluate_relevance": {"chunks", "retrieve.query", "input_text", "rephraseCount"},
		"generate_answer":    {"source", "answer", "identify_intent.input_text"},
	}))
	if ds.HasErrors() || p == nil {
		t.Fatalf("compile: %v", ds)
	}
	ev := p.Nodes[slices.IndexFunc(p.Nodes, func(n *flow.PlanNode) bool { return n.Name == "evaluate" })]
	if got := strings.Join(inputNames(ev), " "); got != "chunks retrieve.query input_text rephraseCount" {
		t.Errorf("evaluate inputs = %q", got)
	}
	for _, in := range ev.Inputs {
		want := map[string]flow.Kind{"retrieve.query": flow.KindString, "input_text": flow.KindString, "rephraseCount": flow.KindInt}[in.Name]
		if want != 0 && p.Cells[in.Cell].Type.Kind != want {
			t.Errorf("evaluate input %s has type %v, want kind %v", in.Name, p.Cells[in.Cell].Type, want)
		}
	}
	gen := p.Nodes[slices.IndexFunc(p.Nodes, func(n *flow.PlanNode) bool { return n.Name == "generate" })]
	if got := strings.Join(inputNames(gen), " "); got != "source identify_intent.input_text" {
		t.Errorf("generate inputs = %q", got)
	}
	// Without the option nothing is added.
	p2, _ := flow.Compile(seedWorkflow(), seedOptions())
	ev2 := p2.Nodes[slices.IndexFunc(p2.Nodes, func(n *flow.PlanNode) bool { return n.Name == "evaluate" })]
	if got := strings.Join(inputNames(ev2), " "); got != "chunks" {
		t.Errorf("without BindingReads, evaluate inputs = %q", got)
	}
}

func TestBindingReadOfAnUnknownNameIsAnErrorAtThePrompt(t *testing.T) {
	w := seedWorkflow()
	w.Bindings = append(w.Bindings, &flow.Binding{Name: "evaluate_relevance", Type: flow.LLM, Pos: P(90, 1), ConfigPos: map[string]flow.Pos{"prompt": P(92, 3)}})
	_, ds := flow.Compile(w, readsOptions(map[string][]string{"evaluate_relevance": {"questoin"}}))
	if !ds.HasErrors() {
		t.Fatal("an unknown placeholder compiled")
	}
	d := ds[0]
	if d.Pos != P(92, 3) || !strings.Contains(d.Msg, "{{questoin}} in the prompt of action evaluate_relevance") {
		t.Errorf("diagnostic = %v at %v", d.Msg, d.Pos)
	}
}
