package adaptiverag_test

import (
	"flag"
	"testing"

	"github.com/weftlang/weft/examples/adaptiverag"
	"github.com/weftlang/weft/examples/internal/readme"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/viz"
)

var update = flag.Bool("update", false, "rewrite the Mermaid graph in README.md from the compiled IR")

// nodeDetail says what each node calls, drawn as the node's second line;
// the nodes that call the model are drawn as LLM nodes.
func nodeDetail() map[string]readme.Node {
	return map[string]readme.Node{
		"classify_intent":       {Detail: "patterns, else LLM (structured)", Kind: viz.LLM},
		"analyze_query":         {Detail: "LLM (structured)", Kind: viz.LLM},
		"clarify":               {Detail: "LLM (plain)", Kind: viz.LLM},
		"retrieve":              {Detail: "Retriever", Kind: viz.Task},
		"rerank":                {Detail: "Reranker", Kind: viz.Task},
		"generate_answer":       {Detail: "LLM (plain)", Kind: viz.LLM},
		"generate_ood_response": {Detail: "no LLM", Kind: viz.Task},
		"finalize":              {Kind: viz.Task},
	}
}

// README.md shows the graph exactly as compiled.
func TestREADMEMermaid(t *testing.T) {
	e := newEnv(t, llmtest.Ollama, nil, func(d *adaptiverag.Deps) {})
	m, err := readme.Mermaid(e.c.Workflow(), e.c.Plan(), nodeDetail())
	if err != nil {
		t.Fatal(err)
	}
	if err := readme.Sync("README.md", m, *update); err != nil {
		t.Fatal(err)
	}
}
