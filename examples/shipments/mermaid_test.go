package shipments_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/viz"
)

var update = flag.Bool("update", false, "rewrite the Mermaid graph in README.md from the compiled IR")

// nodeDetail says what each node is, drawn as the node's second line; the
// nodes that call the model are drawn as LLM nodes, the search as a tool.
func nodeDetail() map[string]struct {
	detail string
	kind   viz.NodeKind
} {
	return map[string]struct {
		detail string
		kind   viz.NodeKind
	}{
		"reiterate_intention": {"F01 · LLM (structured)", viz.LLM},
		"plan":                {"F02 · deterministic", viz.Task},
		"parse_user_query":    {"JSON, byte offsets", viz.Task},
		"build_query":         {"F06 · LLM (structured) + DSL builder", viz.LLM},
		"execute_query":       {"F07 · search.Backend", viz.Tool},
		"summarize":           {"LLM (plain) + counts", viz.LLM},
		"clarify":             {"no LLM", viz.Task},
		"record_turn":         {"TurnSummary + es_query artifact", viz.Task},
	}
}

// mermaid draws the compiled IR: every node and edge of the workflow,
// conditions as the IR states them.
func mermaid(t *testing.T, w *flow.Workflow, plan *flow.Plan) string {
	t.Helper()
	finals := map[string]bool{}
	for _, pn := range plan.Nodes {
		finals[pn.Name] = pn.Final
	}
	g := &viz.Graph{Name: w.Name}
	details := nodeDetail()
	for _, n := range w.Nodes {
		d, ok := details[n.Name]
		if !ok {
			d.kind = viz.Task
		}
		g.Nodes = append(g.Nodes, viz.Node{ID: n.Name, Detail: d.detail, Kind: d.kind, Initial: n.Name == w.Initial, Final: finals[n.Name]})
	}
	for _, e := range w.Edges {
		kind, label := viz.Normal, ""
		if e.Cond != nil {
			kind, label = viz.Conditional, e.Cond.String()
		}
		for _, to := range e.To {
			g.Edges = append(g.Edges, viz.Edge{From: e.From, To: to, Label: label, Kind: kind})
		}
	}
	var b bytes.Buffer
	if err := viz.Mermaid(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// README.md shows the graph exactly as compiled.
func TestREADMEMermaid(t *testing.T) {
	e := newEnv(t, &script{}, nil, nil)
	got := "```mermaid\n" + mermaid(t, e.c.Workflow(), e.c.Plan()) + "```\n"
	const begin, end = "<!-- mermaid:begin (go test -run TestREADMEMermaid -update) -->\n", "<!-- mermaid:end -->"
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the markers %q and %q", begin, end)
	}
	if cur := text[i+len(begin) : j]; cur != got {
		if !*update {
			t.Fatalf("README.md's graph is stale; run go test -run TestREADMEMermaid -update\nwant:\n%s", got)
		}
		text = text[:i+len(begin)] + got + text[j:]
		if err := os.WriteFile("README.md", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
