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
)

// Node says how to draw a node: its second line and its kind.
type Node struct {
	Detail string
	Kind   viz.NodeKind
}

// Mermaid draws w (compiled as plan) as Mermaid: nodes by the details
// given (a node not in nodes is a task with no detail), edges with their
// conditions as the IR states them.
func Mermaid(w *flow.Workflow, plan *flow.Plan, nodes map[string]Node) (string, error) {
	finals := map[string]bool{}
	for _, pn := range plan.Nodes {
		finals[pn.Name] = pn.Final
	}
	g := &viz.Graph{Name: w.Name}
	for _, n := range w.Nodes {
		d, ok := nodes[n.Name]
		if !ok {
			d.Kind = viz.Task
		}
		g.Nodes = append(g.Nodes, viz.Node{ID: n.Name, Detail: d.Detail, Kind: d.Kind, Initial: n.Name == w.Initial, Final: finals[n.Name]})
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
