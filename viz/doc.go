// Package viz draws workflow graphs.
//
// It renders a small, self-contained graph model ([Graph], [Node], [Edge])
// in three forms:
//
//   - [Mermaid]: a Mermaid "flowchart TD" diagram, for Markdown renderers;
//   - [DOT]: a Graphviz DOT digraph, for the dot tool;
//   - [SVG]: a standalone SVG 1.1 image drawn in pure Go.
//
// The SVG is drawn from a layered (Sugiyama-style) layout computed by
// [Layout]: cycles are broken by reversing the back edges found by a
// depth-first search from the initial nodes, nodes are put on layers by
// longest path, long edges get dummy nodes, crossings are reduced by
// barycentre sweeps with adjacent transpositions, and x coordinates come
// from a Brandes–Köpf style alignment. Edge labels are laid out as nodes of
// their own on the layer next to the edge's source, so they never overlap a
// node box or each other. Back edges leave and enter nodes sideways and run
// beside the flow; self-loops are arcs on a node's right side. Everything
// is deterministic: the same graph gives the same bytes.
//
// All three functions validate the graph first and write nothing when it
// is invalid: node IDs must be unique and non-empty, kinds known, and edge
// endpoints existing node IDs.
//
// The package knows nothing about weft workflows; callers build a [Graph]
// from whatever they draw.
package viz
