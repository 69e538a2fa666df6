package viz

import (
	"math"
	"slices"
	"strings"
)

// Point is a position in drawing coordinates: pixels, with y growing
// downwards.
type Point struct{ X, Y float64 }

// Rect is an axis-aligned box whose top-left corner is (X, Y).
type Rect struct{ X, Y, W, H float64 }

// Overlaps reports whether r and o share some area; boxes that only touch
// do not overlap.
func (r Rect) Overlaps(o Rect) bool {
	return r.X < o.X+o.W && o.X < r.X+r.W && r.Y < o.Y+o.H && o.Y < r.Y+r.H
}

// Center returns the centre of r.
func (r Rect) Center() Point { return Point{r.X + r.W/2, r.Y + r.H/2} }

// Drawing is the geometry of a laid-out [Graph], as computed by [Layout].
// All coordinates are in pixels from the top-left corner of a
// Width × Height canvas.
type Drawing struct {
	// Name is the graph's name.
	Name string
	// Width and Height are the size of the canvas, margins included.
	Width, Height float64
	// Nodes holds one box per graph node, in the graph's node order.
	Nodes []NodeBox
	// Edges holds one path per graph edge, in the graph's edge order.
	Edges []EdgePath
	// Starts holds the start markers of the initial nodes, in node order.
	Starts []StartMarker
}

// NodeBox is the placement of one node.
type NodeBox struct {
	// ID is the node's ID.
	ID string
	// Kind, Initial and Final are copied from the node.
	Kind           NodeKind
	Initial, Final bool
	// Box is the node's outline box.
	Box Rect
	// Layer is the node's layer, counted from 0 at the top (a start
	// marker takes the layer above its node); every edge that is not a
	// back edge or a self-loop goes to a higher layer.
	Layer int
	// Label and Detail are the wrapped text lines drawn in the box.
	Label, Detail []string
}

// EdgePath is the route of one edge.
type EdgePath struct {
	// From and To are the IDs of the edge's endpoints.
	From, To string
	// Kind is copied from the edge.
	Kind EdgeKind
	// Back marks an edge that goes against the top-to-bottom flow: it was
	// reversed to break a cycle and is routed around the nodes in between.
	Back bool
	// Self marks an edge from a node to itself, drawn as an arc on the
	// node's right side.
	Self bool
	// Points is the route as a polyline, from the port on the source node
	// through the routing points to the arrow tip on the target node.
	Points []Point
	// Curve is the smooth path that is drawn: Curve[0] is the start, and
	// each following triple is the two control points and the end of a
	// cubic Bézier segment. It stops short of the arrow tip by the length
	// of the arrowhead.
	Curve []Point
	// HasLabel reports whether the edge has a label box.
	HasLabel bool
	// Label is the label box (zero when HasLabel is false).
	Label Rect
	// LabelLines and NoteLines are the wrapped label and note text.
	LabelLines, NoteLines []string
}

// StartMarker is the start marker drawn above an initial node: a filled
// circle with an arrow into the node.
type StartMarker struct {
	// Node is the ID of the initial node.
	Node string
	// Center and Radius give the circle.
	Center Point
	Radius float64
	// Points and Curve give the arrow, as in [EdgePath].
	Points []Point
	Curve  []Point
}

// Layout and text metrics, in pixels.
const (
	margin      = 16.0 // around the drawing
	rankGap     = 24.0 // least gap between a node layer and a label layer
	maxRankGap  = 56.0 // most gap between two layers
	gapSlope    = 0.12 // gap per pixel of horizontal edge travel
	nodePad     = 20.0 // half the horizontal gap next to a node
	dummyPad    = 7.0  // half the horizontal gap next to an edge
	labelPad    = 8.0  // half the horizontal gap next to an edge label
	markerR     = 7.0  // start marker radius
	arrowLen    = 9.0  // arrowhead length
	nodePadX    = 14.0 // text inset in node boxes
	nodePadY    = 8.0
	minNodeW    = 96.0
	tagSize     = 9.0 // kind name in node boxes
	labelSize   = 13.0
	detailSize  = 11.0
	edgeSize    = 11.0 // edge labels (monospace)
	noteSize    = 10.0 // edge notes (monospace)
	tagLine     = 12.0
	labelLine   = 17.0
	detailLine  = 14.0
	edgeLine    = 14.0
	noteLine    = 13.0
	boxPadX     = 6.0 // text inset in edge label boxes
	boxPadY     = 3.0
	loopRadius  = 28.0 // first self-loop
	loopStep    = 14.0 // each further self-loop on the same node
	mapOffset   = 6.0  // depth of the stack drawn for Map nodes
	portSpacing = 16.0 // between edge ends on one side of a node
)

// lnode kinds.
const (
	lReal   = iota // a graph node
	lMarker        // a start marker
	lDummy         // a bend point of a long edge
	lLabel         // a bend point carrying an edge label
)

// lnode is a node of the layered graph.
type lnode struct {
	kind   int
	ref    int     // graph node index (lReal, lMarker) or ledge index
	back   bool    // belongs to a reversed edge
	rank   int     // layer; real nodes are on even layers
	order  int     // position in its layer
	lw, rw float64 // extent left and right of x
	h      float64 // height
	pad    float64 // half the gap wanted to the neighbours
	up     []int   // neighbours on the layer above
	down   []int   // neighbours on the layer below
	x, y   float64
}

func (n *lnode) isDummy() bool { return n.kind == lDummy || n.kind == lLabel }

// ledge is an edge of the layered graph, oriented downwards.
type ledge struct {
	orig       int   // graph edge index, or -1 for a start marker's arrow
	tail, head int   // lnode indices; tail is on the upper layer
	rev        bool  // drawn from head to tail
	chain      []int // tail, dummies..., head
	label      int   // lnode index of the label, or -1
	labelLines []string
	noteLines  []string
	labelW     float64
	labelH     float64
}

// measure is the size and text of a node box.
type measure struct {
	label, detail []string
	w, h          float64
}

// layouter holds the state of one layout run.
type layouter struct {
	g       *Graph
	index   map[string]int
	nodes   []lnode
	edges   []ledge
	layers  [][]int
	boxes   []measure
	loops   [][]int // self-loop edge indices per graph node
	marker  []int   // lnode index of each graph node's start marker, or -1
	rankY   []float64
	rankH   []float64
	drawing *Drawing
}

// Layout computes the geometry of g: node boxes, edge routes, label boxes
// and the canvas size. It returns an error naming the problems when g has
// duplicate or empty node IDs, unknown kinds, or edges whose endpoints are
// not nodes.
func Layout(g *Graph) (*Drawing, error) {
	index, err := validate(g)
	if err != nil {
		return nil, err
	}
	l := &layouter{g: g, index: index}
	l.build()
	l.breakCycles()
	l.rank()
	l.addDummies()
	l.reduceCrossings()
	l.assignX()
	l.assignY()
	l.route()
	return l.drawing, nil
}

// measureNode sizes the box of n from its text.
func measureNode(n *Node) measure {
	m := measure{
		label:  wrapText(nodeLabel(n), wrapWidth, wrapLines),
		detail: wrapText(n.Detail, wrapWidth, wrapLines),
	}
	if len(m.label) == 0 {
		m.label = []string{"\u00a0"}
	}
	tw := sansWidth(kindTag(n.Kind), tagSize, true) + float64(len(kindTag(n.Kind)))*tagSpacing
	for _, s := range m.label {
		tw = max(tw, sansWidth(s, labelSize, true))
	}
	for _, s := range m.detail {
		tw = max(tw, sansWidth(s, detailSize, false))
	}
	ex, ey := kindExtra(n.Kind)
	m.w = max(minNodeW, math.Ceil(tw+2*nodePadX+ex))
	m.h = math.Ceil(2*nodePadY + tagLine + float64(len(m.label))*labelLine + float64(len(m.detail))*detailLine + ey)
	return m
}

// measureLabel wraps the label and note of an edge and sizes its box.
func measureLabel(e *Edge) (lines, notes []string, w, h float64) {
	lines = wrapText(edgeLabel(e), wrapWidth, wrapLines)
	notes = wrapText(e.Note, wrapWidth, wrapLines)
	if len(lines)+len(notes) == 0 {
		return nil, nil, 0, 0
	}
	for _, s := range lines {
		w = max(w, monoWidth(s, edgeSize))
	}
	for _, s := range notes {
		w = max(w, monoWidth(s, noteSize))
	}
	w = math.Ceil(w + 2*boxPadX)
	h = math.Ceil(float64(len(lines))*edgeLine + float64(len(notes))*noteLine + 2*boxPadY)
	return lines, notes, w, h
}

// selfLoopGeometry returns the radius of the k-th self-loop of a node.
func selfLoopRadius(k int) float64 { return loopRadius + loopStep*float64(k) }

// build creates the layered graph's real nodes, start markers and edges.
func (l *layouter) build() {
	g := l.g
	l.boxes = make([]measure, len(g.Nodes))
	l.loops = make([][]int, len(g.Nodes))
	l.marker = make([]int, len(g.Nodes))
	for i, e := range g.Edges {
		if e.From == e.To {
			v := l.index[e.From]
			l.loops[v] = append(l.loops[v], i)
		}
	}
	for i := range g.Nodes {
		m := measureNode(&g.Nodes[i])
		l.boxes[i] = m
		n := lnode{kind: lReal, ref: i, lw: m.w / 2, rw: m.w / 2, h: m.h, pad: nodePad}
		if loops := l.loops[i]; len(loops) > 0 {
			reach := 0.75*selfLoopRadius(len(loops)-1) + 4
			var lw, lh float64
			for _, ei := range loops {
				_, _, w, h := measureLabel(&g.Edges[ei])
				if w > 0 {
					lw = max(lw, w)
					lh += h + 4
				}
			}
			if lw > 0 {
				reach += 4 + lw
			}
			n.rw += reach
			k := len(loops) - 1
			a := min(m.h*0.22+4*float64(k), m.h/2-3)
			n.h = max(n.h, lh, 2*(a+0.3*selfLoopRadius(k)))
		}
		l.nodes = append(l.nodes, n)
	}
	for i := range g.Nodes {
		l.marker[i] = -1
		if g.Nodes[i].Initial {
			l.marker[i] = len(l.nodes)
			l.nodes = append(l.nodes, lnode{kind: lMarker, ref: i, lw: markerR, rw: markerR, h: 2 * markerR, pad: nodePad / 2})
			l.edges = append(l.edges, ledge{orig: -1, tail: l.marker[i], head: i, label: -1})
		}
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.From == e.To {
			continue
		}
		le := ledge{orig: i, tail: l.index[e.From], head: l.index[e.To], label: -1}
		le.labelLines, le.noteLines, le.labelW, le.labelH = measureLabel(e)
		l.edges = append(l.edges, le)
	}
}

// breakCycles reverses the back edges found by a depth-first search from
// the initial nodes, then from every other node, in input order.
func (l *layouter) breakCycles() {
	n := len(l.g.Nodes)
	out := make([][]int, n)
	for i := range l.edges {
		if e := &l.edges[i]; e.orig >= 0 {
			out[e.tail] = append(out[e.tail], i)
		}
	}
	state := make([]int8, n) // 0 new, 1 on the stack, 2 done
	// An explicit stack keeps deep graphs from growing the goroutine stack.
	type frame struct{ v, next int }
	visit := func(root int) {
		if state[root] != 0 {
			return
		}
		stack := []frame{{root, 0}}
		state[root] = 1
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(out[f.v]) {
				state[f.v] = 2
				stack = stack[:len(stack)-1]
				continue
			}
			ei := out[f.v][f.next]
			f.next++
			w := l.edges[ei].head
			switch state[w] {
			case 1:
				l.edges[ei].rev = true
			case 0:
				state[w] = 1
				stack = append(stack, frame{w, 0})
			}
		}
	}
	for i := range l.g.Nodes {
		if l.g.Nodes[i].Initial {
			visit(i)
		}
	}
	for i := range l.g.Nodes {
		visit(i)
	}
	for i := range l.edges {
		if e := &l.edges[i]; e.rev {
			e.tail, e.head = e.head, e.tail
		}
	}
}

// rank puts the nodes on layers by longest path from the sources, then
// moves every source other than an initial node down next to its highest
// successor, and doubles the ranks to leave a label layer between any two
// node layers.
func (l *layouter) rank() {
	n := len(l.nodes)
	out := make([][]int, n)
	indeg := make([]int, n)
	for i := range l.edges {
		e := &l.edges[i]
		out[e.tail] = append(out[e.tail], e.head)
		indeg[e.head]++
	}
	// Kahn's algorithm, taking ready nodes in index order.
	topo := make([]int, 0, n)
	deg := slices.Clone(indeg)
	for v := range n {
		if deg[v] == 0 {
			topo = append(topo, v)
		}
	}
	for i := 0; i < len(topo); i++ {
		v := topo[i]
		for _, w := range out[v] {
			l.nodes[w].rank = max(l.nodes[w].rank, l.nodes[v].rank+1)
			if deg[w]--; deg[w] == 0 {
				topo = append(topo, w)
			}
		}
	}
	for i := len(topo) - 1; i >= 0; i-- {
		v := topo[i]
		nd := &l.nodes[v]
		if indeg[v] > 0 || len(out[v]) == 0 || (nd.kind == lReal && l.g.Nodes[nd.ref].Initial) {
			continue
		}
		lowest := math.MaxInt
		for _, w := range out[v] {
			lowest = min(lowest, l.nodes[w].rank)
		}
		nd.rank = lowest - 1
	}
	for v := range l.nodes {
		l.nodes[v].rank *= 2
	}
}

// addDummies splits every edge into unit-length pieces with dummy nodes,
// one of which carries the edge's label: the one next to the edge's
// drawn source.
func (l *layouter) addDummies() {
	for i := range l.edges {
		e := &l.edges[i]
		a, b := l.nodes[e.tail].rank, l.nodes[e.head].rank
		labelRank := -1
		if e.labelW > 0 {
			labelRank = a + 1
			if e.rev {
				labelRank = b - 1
			}
		}
		prev := e.tail
		e.chain = append(e.chain, prev)
		for r := a + 1; r < b; r++ {
			d := lnode{kind: lDummy, ref: i, back: e.rev, rank: r, pad: dummyPad}
			if r == labelRank {
				d.kind = lLabel
				d.lw, d.rw, d.h = e.labelW/2, e.labelW/2, e.labelH
				d.pad = labelPad
				e.label = len(l.nodes)
			}
			l.nodes = append(l.nodes, d)
			l.link(prev, len(l.nodes)-1)
			prev = len(l.nodes) - 1
			e.chain = append(e.chain, prev)
		}
		l.link(prev, e.head)
		e.chain = append(e.chain, e.head)
	}
	maxRank := 0
	for v := range l.nodes {
		maxRank = max(maxRank, l.nodes[v].rank)
	}
	l.layers = make([][]int, maxRank+1)
}

// link joins u to v on the next layer down.
func (l *layouter) link(u, v int) {
	l.nodes[u].down = append(l.nodes[u].down, v)
	l.nodes[v].up = append(l.nodes[v].up, u)
}

// kindTag is the kind name written at the top of a node box.
func kindTag(k NodeKind) string { return strings.ToUpper(k.String()) }

// tagSpacing is the letter spacing of kind tags, in pixels.
const tagSpacing = 0.8

// kindExtra is the room a kind's shape needs around the text.
func kindExtra(k NodeKind) (w, h float64) {
	switch k {
	case LLM:
		return 24, 0
	case Human:
		return 22, 0
	case Tool:
		return 20, 0
	case Subflow:
		return 14, 0
	case Join:
		return 24, 0
	case Map:
		return mapOffset, mapOffset
	}
	return 0, 0
}
