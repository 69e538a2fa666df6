package server

import (
	"github.com/weftlang/weft/flow"
)

// Graph is a workflow's graph in the shape LangGraph's GET
// /assistants/{id}/graph sends: nodes with "__start__" and "__end__", and
// edges, conditional ones marked.
type Graph struct {
	Nodes []GraphNode `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
}

// GraphNode is a node of a Graph. Data is the input schema of
// "__start__" and the output schema of "__end__" (Type "schema"), else an
// object naming the node (Type "runnable", Data {"id": ["weft", TYPE],
// "name": node}); Metadata says what the node does.
type GraphNode struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Data     any            `json:"data"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// GraphEdge is an edge of a Graph. Data, when set, is the condition that
// takes it.
type GraphEdge struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Data        string `json:"data,omitempty"`
	Conditional bool   `json:"conditional"`
}

// The names LangGraph gives a graph's entry and exit.
const (
	startNode = "__start__"
	endNode   = "__end__"
)

// GraphOf draws a compiled workflow as LangGraph does. With xray, a
// WORKFLOW node's subworkflow is drawn inside it: its nodes are named
// "node:inner", as LangGraph names a subgraph's nodes.
func GraphOf(plan *flow.Plan, xray bool) Graph {
	sc := SchemasOf(plan)
	g := Graph{Nodes: []GraphNode{{ID: startNode, Type: "schema", Data: sc.Input}}}
	entry, exits := addPlan(&g, plan, "", xray)
	g.Edges = append(g.Edges, GraphEdge{Source: startNode, Target: entry})
	for _, x := range exits {
		g.Edges = append(g.Edges, GraphEdge{Source: x, Target: endNode})
	}
	g.Nodes = append(g.Nodes, GraphNode{ID: endNode, Type: "schema", Data: sc.Output})
	return g
}

// addPlan adds plan's nodes and edges with ids prefixed by prefix, and
// returns the id of its first node and of its final nodes.
func addPlan(g *Graph, plan *flow.Plan, prefix string, xray bool) (entry string, exits []string) {
	type span struct {
		entry string
		exits []string
	}
	spans := make([]span, len(plan.Nodes))
	for i, pn := range plan.Nodes {
		id := prefix + pn.Name
		if xray && pn.Sub != nil {
			e, xs := addPlan(g, pn.Sub, id+":", xray)
			spans[i] = span{e, xs}
			continue
		}
		md := map[string]any{"type": string(pn.Node.Type)}
		if pn.Node.Action != "" {
			md["action"] = pn.Node.Action
		}
		if pn.Node.Description != "" {
			md["description"] = pn.Node.Description
		}
		if pn.Sub != nil {
			md["workflow"] = pn.Sub.Workflow.Name
		}
		data := map[string]any{"id": []string{"weft", string(pn.Node.Type)}, "name": pn.Name}
		g.Nodes = append(g.Nodes, GraphNode{ID: id, Type: "runnable", Data: data, Metadata: md})
		spans[i] = span{id, []string{id}}
	}
	for i, pn := range plan.Nodes {
		for _, from := range spans[i].exits {
			for _, e := range pn.Edges {
				cond := e.Edge.Cond != nil
				label := ""
				if cond {
					label = e.Edge.Cond.String()
				}
				for _, to := range e.To {
					g.Edges = append(g.Edges, GraphEdge{Source: from, Target: spans[to].entry, Data: label, Conditional: cond || len(pn.Edges) > 1})
				}
			}
			for _, e := range pn.OnError {
				for _, to := range e.To {
					g.Edges = append(g.Edges, GraphEdge{Source: from, Target: spans[to].entry, Data: "on error", Conditional: true})
				}
			}
		}
		if pn.Final {
			exits = append(exits, spans[i].exits...)
		}
	}
	return spans[plan.Initial].entry, exits
}
