package viz

import (
	"errors"
	"fmt"
	"strings"
)

// Graph is a directed graph to draw.
type Graph struct {
	// Name titles the drawing; it may be empty.
	Name string
	// Nodes are drawn in this order wherever order is otherwise free.
	Nodes []Node
	// Edges connect nodes by ID. Several edges may join the same pair, and
	// an edge may loop from a node to itself.
	Edges []Edge
}

// Node is one vertex of a [Graph].
type Node struct {
	// ID identifies the node; it must be unique and non-empty.
	ID string
	// Label is the main text (the node name). When empty the ID is shown.
	Label string
	// Detail is an optional second line, such as an action name or "LLM".
	Detail string
	// Kind selects the node's shape and colour.
	Kind NodeKind
	// Initial marks an entry point; it gets a start marker (a filled circle
	// with an arrow into the node).
	Initial bool
	// Final marks an exit point; it is drawn with a double border.
	Final bool
}

// Edge is a directed connection between two nodes of a [Graph].
type Edge struct {
	// From and To are node IDs.
	From, To string
	// Label is the main edge text, typically a condition. Long labels are
	// wrapped at about 40 characters per line, with at most two lines.
	Label string
	// Kind selects the line style.
	Kind EdgeKind
	// Note is optional secondary text (such as an assignment), drawn
	// smaller under the label.
	Note string
}

// NodeKind is the kind of a [Node]; each kind has its own shape and colour,
// and its name is written in the SVG node box.
type NodeKind int

// The node kinds.
const (
	// Task is a plain step (rounded rectangle, blue).
	Task NodeKind = iota
	// LLM is a call to a language model (hexagon, reddish purple).
	LLM
	// Human is a step waiting for a person (stadium, orange).
	Human
	// Tool is a tool call (parallelogram, bluish green).
	Tool
	// Subflow runs another workflow (rectangle with side bars, grey).
	Subflow
	// Join waits for parallel branches (funnel-shaped trapezoid, yellow).
	Join
	// Map runs a step for each item of a list (stacked boxes, sky blue).
	Map
	numNodeKinds
)

// String returns the lower-case name of the kind, such as "task".
func (k NodeKind) String() string {
	switch k {
	case Task:
		return "task"
	case LLM:
		return "llm"
	case Human:
		return "human"
	case Tool:
		return "tool"
	case Subflow:
		return "subflow"
	case Join:
		return "join"
	case Map:
		return "map"
	}
	return fmt.Sprintf("NodeKind(%d)", int(k))
}

// EdgeKind is the kind of an [Edge]; it selects the line style.
type EdgeKind int

// The edge kinds.
const (
	// Normal is an unconditional transition (solid grey line).
	Normal EdgeKind = iota
	// Conditional is taken when its Label (the condition) holds (solid
	// grey line; the condition is the label).
	Conditional
	// Default is taken when no condition holds (solid line, hollow
	// arrowhead, labelled "default" when Label is empty).
	Default
	// Error is taken on failure (dashed vermillion line, labelled "error"
	// when Label is empty).
	Error
	// Parallel is one branch of a fan-out (bold line).
	Parallel
	numEdgeKinds
)

// String returns the lower-case name of the kind, such as "error".
func (k EdgeKind) String() string {
	switch k {
	case Normal:
		return "normal"
	case Conditional:
		return "conditional"
	case Default:
		return "default"
	case Error:
		return "error"
	case Parallel:
		return "parallel"
	}
	return fmt.Sprintf("EdgeKind(%d)", int(k))
}

// validate checks g and returns the index of every node by ID. The error
// names every problem found: a nil graph, empty or duplicate node IDs,
// unknown kinds and edges whose endpoints are not nodes.
func validate(g *Graph) (map[string]int, error) {
	if g == nil {
		return nil, errors.New("viz: nil graph")
	}
	var errs []error
	index := make(map[string]int, len(g.Nodes))
	reported := make(map[string]bool)
	for i, n := range g.Nodes {
		if n.ID == "" {
			errs = append(errs, fmt.Errorf("viz: node %d has an empty ID", i))
			continue
		}
		if first, dup := index[n.ID]; dup {
			if !reported[n.ID] {
				reported[n.ID] = true
				errs = append(errs, fmt.Errorf("viz: duplicate node ID %q (nodes %d and %d)", n.ID, first, i))
			}
			continue
		}
		index[n.ID] = i
		if n.Kind < 0 || n.Kind >= numNodeKinds {
			errs = append(errs, fmt.Errorf("viz: node %q has unknown kind %d", n.ID, int(n.Kind)))
		}
	}
	for i, e := range g.Edges {
		var missing []string
		if _, ok := index[e.From]; !ok {
			missing = append(missing, fmt.Sprintf("source %q", e.From))
		}
		if _, ok := index[e.To]; !ok {
			missing = append(missing, fmt.Sprintf("target %q", e.To))
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("viz: edge %d (%q -> %q) has unknown %s", i, e.From, e.To, strings.Join(missing, " and ")))
		}
		if e.Kind < 0 || e.Kind >= numEdgeKinds {
			errs = append(errs, fmt.Errorf("viz: edge %d (%q -> %q) has unknown kind %d", i, e.From, e.To, int(e.Kind)))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return index, nil
}

// edgeLabel returns the label shown for e: its Label, or the kind's name for
// Default and Error edges without one.
func edgeLabel(e *Edge) string {
	if strings.TrimSpace(e.Label) != "" {
		return e.Label
	}
	switch e.Kind {
	case Default:
		return "default"
	case Error:
		return "error"
	}
	return ""
}

// nodeLabel returns the label shown for n: its Label, or its ID.
func nodeLabel(n *Node) string {
	if strings.TrimSpace(n.Label) != "" {
		return n.Label
	}
	return n.ID
}
