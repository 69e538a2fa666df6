// Package readme keeps the graph pictures in the Go reference agents'
// READMEs true: Mermaid draws a compiled workflow, every node and edge as
// the IR has them, and Sync compares it with the README's block between
// the markers, rewriting it when asked.
package readme

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/viz"
	"github.com/weftlang/weft/viz/flowviz"
)

// Node says how to draw a node: its second line and its kind.
type Node struct {
	Detail string
	Kind   viz.NodeKind
}

// Mermaid draws w (compiled as plan) as Mermaid: the graph
// flowviz.Graph makes of it, with the
// details and kinds of nodes given in nodes (what a Go node calls, which
// the IR cannot tell); a node not in nodes is drawn as flowviz.Graph
// draws it (a Go node: a task whose detail is its action, "go:NAME").
func Mermaid(w *flow.Workflow, plan *flow.Plan, nodes map[string]Node) (string, error) {
	g := flowviz.Graph(w, plan)
	for i := range g.Nodes {
		if d, ok := nodes[g.Nodes[i].ID]; ok {
			g.Nodes[i].Detail, g.Nodes[i].Kind = d.Detail, d.Kind
		}
	}
	var b bytes.Buffer
	if err := viz.Mermaid(&b, g); err != nil {
		return "", err
	}
	return b.String(), nil
}

// The markers around the generated block in a README.
const (
	Begin = "<!-- mermaid:begin (go test -run TestREADMEMermaid -update) -->\n"
	End   = "<!-- mermaid:end -->"
)

// StaleError reports a README whose block differs from the graph.
type StaleError struct {
	Path string
	Want string // the block it should hold
}

// Error says how to bring the README up to date.
func (e *StaleError) Error() string {
	return fmt.Sprintf("%s's graph is stale; run go test -run TestREADMEMermaid -update\nwant:\n%s", e.Path, e.Want)
}

// Sync checks that the README at path holds mermaid, fenced as a mermaid
// block, between Begin and End. When it does not, update rewrites the
// block and Sync returns nil; otherwise it returns a *StaleError.
func Sync(path, mermaid string, update bool) error {
	want := "```mermaid\n" + mermaid + "```\n"
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	i, j := strings.Index(text, Begin), strings.Index(text, End)
	if i < 0 || j < i {
		return fmt.Errorf("%s lacks the markers %q and %q", path, Begin, End)
	}
	if text[i+len(Begin):j] == want {
		return nil
	}
	if !update {
		return &StaleError{Path: path, Want: want}
	}
	text = text[:i+len(Begin)] + want + text[j:]
	return os.WriteFile(path, []byte(text), 0o644)
}
