// Package flowviz draws weft workflows: Graph converts a workflow (the IR,
// flow.Workflow, from a .wf file, an ollama-workflows document or a Go
// graph) into the graph model of package viz, which renders it as
// Mermaid, DOT or SVG. Package viz knows nothing of workflows; this is the
// one place that maps a workflow's nodes and edges to its kinds.
package flowviz

import (
	"strings"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/viz"
)

// Graph converts a workflow to the graph model viz draws. plan,
// when the workflow compiled, marks the finals exactly (END nodes
// included); without it the finals are those the workflow lists and its
// END nodes.
//
// Nodes keep their names as IDs and labels; Detail is the action name (the
// subworkflow's name for a WORKFLOW node). The kind comes from the node:
// a map node is Map; a node where parallel branches join is Join; then
// LLM, HUMAN (also any node calling ask_user), TOOL and WORKFLOW (Subflow)
// by type, where a FUNCTION node calling an action bound in the source
// takes the binding's type; everything else is a Task.
//
// Each workflow edge becomes one viz edge per target. Label is the
// condition in .wf syntax ("" when there is none); Note lists the edge's
// updates ("x = e") then its overrides ("slot := e"), joined by "; ". The
// kind is Error for an on-error edge, Parallel for the branches of a
// fan-out (the note goes on the first branch only), Conditional for an
// edge with a condition, Default for an unconditional edge leaving a node
// that also has conditional edges, and Normal for a plain transition.
// Edges naming unknown nodes (in a workflow that failed to compile) are
// left out.
func Graph(w *flow.Workflow, plan *flow.Plan) *viz.Graph {
	g := &viz.Graph{Name: w.Name}
	joins := map[string]bool{}
	conditional := map[string]bool{} // nodes with a conditional routing edge
	for _, e := range w.Edges {
		if e.Join != "" {
			joins[e.Join] = true
		}
		if e.Cond != nil && !e.OnError {
			conditional[e.From] = true
		}
	}
	finals := map[string]bool{}
	if plan != nil {
		for _, pn := range plan.Nodes {
			if pn.Final {
				finals[pn.Name] = true
			}
		}
	} else {
		for _, f := range w.Finals {
			finals[f] = true
		}
		for _, n := range w.Nodes {
			if n.Type == flow.End {
				finals[n.Name] = true
			}
		}
	}
	known := map[string]bool{}
	for _, n := range w.Nodes {
		if n.Name == "" || known[n.Name] {
			continue
		}
		known[n.Name] = true
		detail := n.Action
		if n.Type == flow.Subflow && detail == "" && n.Subflow != nil {
			detail = n.Subflow.Name
		}
		g.Nodes = append(g.Nodes, viz.Node{
			ID:      n.Name,
			Label:   n.Name,
			Detail:  detail,
			Kind:    nodeKind(w, n, joins[n.Name]),
			Initial: n.Name == w.Initial,
			Final:   finals[n.Name],
		})
	}
	for _, e := range w.Edges {
		if !known[e.From] {
			continue
		}
		label := ""
		if e.Cond != nil {
			label = e.Cond.String()
		}
		kind := viz.Normal
		switch {
		case e.OnError:
			kind = viz.Error
		case len(e.To) > 1:
			kind = viz.Parallel
		case e.Cond != nil:
			kind = viz.Conditional
		case conditional[e.From]:
			kind = viz.Default
		}
		note := edgeNote(e)
		for _, to := range e.To {
			if !known[to] {
				continue
			}
			g.Edges = append(g.Edges, viz.Edge{From: e.From, To: to, Label: label, Kind: kind, Note: note})
			if kind == viz.Parallel {
				note = ""
			}
		}
	}
	return g
}

// nodeKind picks the viz kind of node n; join reports that parallel
// branches meet at n.
func nodeKind(w *flow.Workflow, n *flow.Node, join bool) viz.NodeKind {
	if n.Map != nil {
		return viz.Map
	}
	if join {
		return viz.Join
	}
	t := n.Type
	if t == flow.Function {
		if b := w.Binding(n.Action); b != nil {
			t = b.Type
		}
	}
	switch {
	case t == flow.Human || n.Action == action.AskUser:
		return viz.Human
	case t == flow.LLM:
		return viz.LLM
	case t == flow.Tool:
		return viz.Tool
	case t == flow.Subflow:
		return viz.Subflow
	}
	return viz.Task
}

// edgeNote is what an edge writes when taken: "x = e" for each update,
// then "slot := e" for each override, joined by "; ".
func edgeNote(e *flow.Edge) string {
	var parts []string
	for _, a := range e.Updates {
		parts = append(parts, a.Name+" = "+exprString(a.Expr))
	}
	for _, a := range e.Overrides {
		parts = append(parts, a.Name+" := "+exprString(a.Expr))
	}
	return strings.Join(parts, "; ")
}

func exprString(e flow.Expr) string {
	if e == nil {
		return "null"
	}
	return e.String()
}
