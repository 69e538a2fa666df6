package shipments_test

import (
	"flag"
	"testing"

	"github.com/weftlang/weft/examples/internal/readme"
	"github.com/weftlang/weft/viz"
)

var update = flag.Bool("update", false, "rewrite the Mermaid graph in README.md from the compiled IR")

// nodeDetail says what each node is, drawn as the node's second line; the
// nodes that call the model are drawn as LLM nodes, the search as a tool.
func nodeDetail() map[string]readme.Node {
	return map[string]readme.Node{
		"reiterate_intention": {Detail: "F01 · LLM (structured)", Kind: viz.LLM},
		"plan":                {Detail: "F02 · deterministic", Kind: viz.Task},
		"parse_user_query":    {Detail: "JSON, byte offsets", Kind: viz.Task},
		"build_query":         {Detail: "F06 · LLM (structured) + DSL builder", Kind: viz.LLM},
		"execute_query":       {Detail: "F07 · search.Backend", Kind: viz.Tool},
		"summarize":           {Detail: "LLM (plain) + counts", Kind: viz.LLM},
		"clarify":             {Detail: "no LLM", Kind: viz.Task},
		"record_turn":         {Detail: "TurnSummary + es_query artifact", Kind: viz.Task},
	}
}

// README.md shows the graph exactly as compiled.
func TestREADMEMermaid(t *testing.T) {
	e := newEnv(t, &script{}, nil, nil)
	m, err := readme.Mermaid(e.c.Workflow(), e.c.Plan(), nodeDetail())
	if err != nil {
		t.Fatal(err)
	}
	if err := readme.Sync("README.md", m, *update); err != nil {
		t.Fatal(err)
	}
}
