package viz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// kitchenSink uses every node and edge kind, self-loops, parallel edges,
// two initial nodes, a disconnected part and awkward text.
func kitchenSink() *Graph {
	return &Graph{
		Name: "kitchen <sink> & \"quotes\"",
		Nodes: []Node{
			{ID: "in", Label: "receive request", Detail: "parse_input", Initial: true},
			{ID: "plan", Detail: "LLM", Kind: LLM},
			{ID: "approve", Label: "approve plan?", Detail: "ask_manager", Kind: Human},
			{ID: "search", Detail: "web_search", Kind: Tool},
			{ID: "sub", Label: "run sub-workflow with a really long name that keeps going", Detail: "child.weft", Kind: Subflow},
			{ID: "each", Label: "for each document", Detail: "extract", Kind: Map},
			{ID: "merge", Kind: Join},
			{ID: "done", Label: "done", Final: true},
			{ID: "failed", Label: "failed", Final: true},
			{ID: "cron", Label: "nightly", Initial: true},
			{ID: "island", Label: "unconnected"},
			{ID: "end", Label: "keyword id"},
		},
		Edges: []Edge{
			{From: "in", To: "plan"},
			{From: "cron", To: "plan", Label: "schedule"},
			{From: "plan", To: "approve", Kind: Conditional, Label: "needs_approval"},
			{From: "plan", To: "search", Kind: Default},
			{From: "approve", To: "plan", Kind: Conditional, Label: "rejected", Note: "feedback := approve.comment"},
			{From: "approve", To: "search", Kind: Conditional, Label: "approved"},
			{From: "search", To: "search", Kind: Conditional, Label: "more_results", Note: "page += 1"},
			{From: "search", To: "search", Kind: Error, Label: "timeout"},
			{From: "search", To: "sub", Kind: Parallel},
			{From: "search", To: "each", Kind: Parallel},
			{From: "sub", To: "merge"},
			{From: "each", To: "merge"},
			{From: "each", To: "each"},
			{From: "merge", To: "done", Kind: Conditional, Label: "ok | <fine> & #1 `x`"},
			{From: "merge", To: "done", Kind: Conditional, Label: "partial"},
			{From: "merge", To: "failed", Kind: Error},
			{From: "sub", To: "failed", Kind: Error, Label: strings.Repeat("very long condition ", 8)},
			{From: "failed", To: "in", Label: "retry"},
			{From: "island", To: "end"},
		},
	}
}

// randomGraph makes a reproducible random graph with cycles, self-loops,
// parallel edges and labels of every length.
func randomGraph(seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 42))
	words := []string{"x", "ok", "count < 3", `status == "BAD"`, "a_rather_long_identifier_without_spaces_at_all_to_split", "done && !failed || retries >= max_retries"}
	text := func() string {
		if rng.IntN(3) == 0 {
			return ""
		}
		var parts []string
		for range 1 + rng.IntN(3) {
			parts = append(parts, words[rng.IntN(len(words))])
		}
		return strings.Join(parts, " ")
	}
	n := 1 + rng.IntN(24)
	g := &Graph{Name: fmt.Sprintf("random %d", seed)}
	for i := range n {
		g.Nodes = append(g.Nodes, Node{
			ID: fmt.Sprintf("n%d", i), Label: text(), Detail: text(),
			Kind:    NodeKind(rng.IntN(int(numNodeKinds))),
			Initial: rng.IntN(6) == 0, Final: rng.IntN(6) == 0,
		})
	}
	for range rng.IntN(2*n + 1) {
		from := rng.IntN(n)
		to := rng.IntN(n)
		if rng.IntN(3) > 0 && from+1 < n { // mostly forward, for some depth
			to = from + 1 + rng.IntN(min(3, n-from-1))
		}
		g.Edges = append(g.Edges, Edge{
			From: fmt.Sprintf("n%d", from), To: fmt.Sprintf("n%d", to),
			Label: text(), Note: text(), Kind: EdgeKind(rng.IntN(int(numEdgeKinds))),
		})
	}
	return g
}

// checkDrawing asserts the geometric promises of Layout.
func checkDrawing(t *testing.T, g *Graph, d *Drawing) {
	t.Helper()
	if len(d.Nodes) != len(g.Nodes) || len(d.Edges) != len(g.Edges) {
		t.Fatalf("drawing has %d nodes and %d edges, graph %d and %d", len(d.Nodes), len(d.Edges), len(g.Nodes), len(g.Edges))
	}
	canvas := Rect{0, 0, d.Width, d.Height}
	inCanvas := func(what string, r Rect) {
		if r.X < -0.01 || r.Y < -0.01 || r.X+r.W > d.Width+0.01 || r.Y+r.H > d.Height+0.01 {
			t.Errorf("%s %+v is outside the canvas %+v", what, r, canvas)
		}
	}
	layer := map[string]int{}
	box := map[string]Rect{}
	for i, n := range d.Nodes {
		if n.ID != g.Nodes[i].ID {
			t.Errorf("node %d is %q, want %q", i, n.ID, g.Nodes[i].ID)
		}
		layer[n.ID] = n.Layer
		box[n.ID] = n.Box
		inCanvas("node "+n.ID, n.Box)
		if n.Box.W <= 0 || n.Box.H <= 0 {
			t.Errorf("node %q has an empty box %+v", n.ID, n.Box)
		}
		for _, m := range d.Nodes[:i] {
			if n.Box.Overlaps(m.Box) {
				t.Errorf("nodes %q %+v and %q %+v overlap", n.ID, n.Box, m.ID, m.Box)
			}
		}
	}
	type named struct {
		name string
		r    Rect
	}
	var labels []named
	for i, e := range d.Edges {
		name := fmt.Sprintf("edge %d (%s -> %s)", i, e.From, e.To)
		if e.From != g.Edges[i].From || e.To != g.Edges[i].To {
			t.Errorf("%s does not match the graph's %s -> %s", name, g.Edges[i].From, g.Edges[i].To)
		}
		if len(e.Curve) < 4 || (len(e.Curve)-1)%3 != 0 {
			t.Errorf("%s has a malformed curve of %d points", name, len(e.Curve))
		}
		if len(e.Points) < 2 {
			t.Errorf("%s has %d route points", name, len(e.Points))
			continue
		}
		if wantLabel := edgeLabel(&g.Edges[i]) != "" || strings.TrimSpace(g.Edges[i].Note) != ""; e.HasLabel != wantLabel {
			t.Errorf("%s: HasLabel = %v, want %v", name, e.HasLabel, wantLabel)
		}
		first, last := e.Points[0], e.Points[len(e.Points)-1]
		if !onBoundary(first, box[e.From]) {
			t.Errorf("%s starts at %+v, not on its source %+v", name, first, box[e.From])
		}
		if !onBoundary(last, box[e.To]) {
			t.Errorf("%s ends at %+v, not on its target %+v", name, last, box[e.To])
		}
		switch {
		case e.Self:
			if e.From != e.To {
				t.Errorf("%s is marked as a self-loop", name)
			}
		case e.Back:
			if layer[e.To] >= layer[e.From] {
				t.Errorf("back %s goes from layer %d to %d", name, layer[e.From], layer[e.To])
			}
		default:
			if layer[e.To] <= layer[e.From] {
				t.Errorf("forward %s goes from layer %d to %d", name, layer[e.From], layer[e.To])
			}
			for j := 1; j < len(e.Points); j++ {
				if e.Points[j].Y < e.Points[j-1].Y {
					t.Errorf("forward %s goes up at point %d: %+v", name, j, e.Points)
					break
				}
			}
		}
		if e.HasLabel {
			inCanvas(name+" label", e.Label)
			labels = append(labels, named{name, e.Label})
			for _, n := range d.Nodes {
				if e.Label.Overlaps(n.Box) {
					t.Errorf("%s label %+v overlaps node %q %+v", name, e.Label, n.ID, n.Box)
				}
			}
		}
		for _, p := range e.Curve {
			if p.X < -0.01 || p.Y < -0.01 || p.X > d.Width+0.01 || p.Y > d.Height+0.01 {
				t.Errorf("%s has a control point %+v outside the canvas", name, p)
				break
			}
		}
		// The drawn curve must not run through any node box, nor through
		// another edge's label.
		for _, p := range sampleCurve(e.Curve) {
			for _, n := range d.Nodes {
				if insideShape(p, n) {
					t.Errorf("%s passes through node %q at %+v", name, n.ID, p)
					goto nextEdge
				}
			}
			for j, o := range d.Edges {
				if j != i && o.HasLabel && inside(p, o.Label, 1) {
					t.Errorf("%s passes through the label of edge %d at %+v", name, j, p)
					goto nextEdge
				}
			}
		}
	nextEdge:
	}
	for i, a := range labels {
		for _, b := range labels[:i] {
			if a.r.Overlaps(b.r) {
				t.Errorf("%s label %+v overlaps %s label %+v", a.name, a.r, b.name, b.r)
			}
		}
	}
	initials := 0
	for _, n := range g.Nodes {
		if n.Initial {
			initials++
		}
	}
	if len(d.Starts) != initials {
		t.Errorf("%d start markers for %d initial nodes", len(d.Starts), initials)
	}
	for _, s := range d.Starts {
		c := Rect{s.Center.X - s.Radius, s.Center.Y - s.Radius, 2 * s.Radius, 2 * s.Radius}
		inCanvas("start of "+s.Node, c)
		for _, n := range d.Nodes {
			if c.Overlaps(n.Box) {
				t.Errorf("start marker of %q overlaps node %q", s.Node, n.ID)
			}
		}
		for _, l := range labels {
			if c.Overlaps(l.r) {
				t.Errorf("start marker of %q overlaps %s label", s.Node, l.name)
			}
		}
		if last := s.Points[len(s.Points)-1]; !onBoundary(last, box[s.Node]) || last.Y > box[s.Node].Y+0.01 {
			t.Errorf("start arrow of %q ends at %+v, not on top of %+v", s.Node, last, box[s.Node])
		}
	}
}

// onBoundary reports whether p lies on the outline of box b, give or take
// the insets of the kinds' shapes.
func onBoundary(p Point, b Rect) bool {
	const tol = 0.01
	if p.X < b.X-tol || p.X > b.X+b.W+tol || p.Y < b.Y-tol || p.Y > b.Y+b.H+tol {
		return false
	}
	return math.Abs(p.Y-b.Y) < tol || math.Abs(p.Y-b.Y-b.H) < tol ||
		p.X < b.X+funnel || p.X > b.X+b.W-funnel
}

// inside reports whether p is inside b shrunk by margin on each side.
func inside(p Point, b Rect, margin float64) bool {
	return p.X > b.X+margin && p.X < b.X+b.W-margin && p.Y > b.Y+margin && p.Y < b.Y+b.H-margin
}

// insideShape reports whether p is inside the shape of n, give or take a
// pixel; side ports of slanted shapes sit inside their box.
func insideShape(p Point, n NodeBox) bool {
	mx := 1.0
	switch n.Kind {
	case Tool:
		mx += skew / 2
	case Join:
		mx += funnel / 2
	}
	b := n.Box
	return p.X > b.X+mx && p.X < b.X+b.W-mx && p.Y > b.Y+1 && p.Y < b.Y+b.H-1
}

// sampleCurve returns points along a chain of cubic Bézier segments.
func sampleCurve(c []Point) []Point {
	var out []Point
	for i := 0; i+3 < len(c); i += 3 {
		p0, p1, p2, p3 := c[i], c[i+1], c[i+2], c[i+3]
		for s := 0; s <= 24; s++ {
			u := float64(s) / 24
			a, b, cc, d := (1-u)*(1-u)*(1-u), 3*(1-u)*(1-u)*u, 3*(1-u)*u*u, u*u*u
			out = append(out, Point{a*p0.X + b*p1.X + cc*p2.X + d*p3.X, a*p0.Y + b*p1.Y + cc*p2.Y + d*p3.Y})
		}
	}
	return out
}

func TestLayoutIntentQA(t *testing.T) {
	g := intentQA()
	d, err := Layout(g)
	if err != nil {
		t.Fatal(err)
	}
	checkDrawing(t, g, d)

	// The loop evaluate -> rephrase -> retrieve -> evaluate is broken at
	// rephrase -> retrieve, which is routed back up beside the flow.
	backs := 0
	for _, e := range d.Edges {
		if e.Back {
			backs++
			if e.From != "rephrase" || e.To != "retrieve" {
				t.Errorf("unexpected back edge %s -> %s", e.From, e.To)
			}
		}
	}
	if backs != 1 {
		t.Errorf("%d back edges, want 1", backs)
	}
	layers := map[string]int{}
	for _, n := range d.Nodes {
		layers[n.ID] = n.Layer
	}
	want := map[string]int{"identify_intent": 1, "ask_user": 2, "summarize": 2, "retrieve": 3, "evaluate": 4, "rephrase": 5, "generate": 5}
	if !reflect.DeepEqual(layers, want) {
		t.Errorf("layers = %v, want %v", layers, want)
	}
	// The two evaluate -> generate edges have separate labels.
	if a, b := d.Edges[6].Label, d.Edges[8].Label; a.Overlaps(b) {
		t.Errorf("parallel edge labels overlap: %+v %+v", a, b)
	}
	if len(d.Starts) != 1 || d.Starts[0].Node != "identify_intent" {
		t.Errorf("starts = %+v", d.Starts)
	}
}

func TestLayoutGraphs(t *testing.T) {
	graphs := []*Graph{intentQA(), fanOut(5), fanOut(40), kitchenSink(), {Name: "empty"},
		{Nodes: []Node{{ID: "solo", Initial: true, Final: true}}},
		{Nodes: []Node{{ID: "a"}}, Edges: []Edge{{From: "a", To: "a"}, {From: "a", To: "a", Label: "again"}, {From: "a", To: "a", Note: "and again"}}},
		{Nodes: []Node{{ID: "a", Initial: true}, {ID: "b"}}, Edges: []Edge{{From: "a", To: "b"}, {From: "b", To: "a"}, {From: "a", To: "b", Label: "twice"}, {From: "b", To: "a", Label: "back twice"}}},
	}
	for _, g := range graphs {
		t.Run(g.Name, func(t *testing.T) {
			d, err := Layout(g)
			if err != nil {
				t.Fatal(err)
			}
			checkDrawing(t, g, d)
		})
	}
}

func TestLayoutRandom(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 40
	}
	for seed := range uint64(n) {
		g := randomGraph(seed)
		d, err := Layout(g)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkDrawing(t, g, d) })
	}
}

func TestLayoutDeterministic(t *testing.T) {
	for _, g := range []*Graph{intentQA(), kitchenSink(), randomGraph(7)} {
		a, err := Layout(g)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Layout(g)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two layouts differ", g.Name)
		}
	}
}

func TestLayoutFanOutCentresParent(t *testing.T) {
	d, err := Layout(fanOut(5))
	if err != nil {
		t.Fatal(err)
	}
	cx := func(id string) float64 {
		for _, n := range d.Nodes {
			if n.ID == id {
				return n.Box.Center().X
			}
		}
		t.Fatalf("no node %q", id)
		return 0
	}
	mid := (cx("branch_1") + cx("branch_5")) / 2
	for _, id := range []string{"start", "join", "end", "branch_3"} {
		if math.Abs(cx(id)-mid) > 1 {
			t.Errorf("%s is at x %.1f, want it centred at %.1f", id, cx(id), mid)
		}
	}
	for i := 1; i < 5; i++ {
		if a, b := cx(fmt.Sprintf("branch_%d", i)), cx(fmt.Sprintf("branch_%d", i+1)); a >= b {
			t.Errorf("branches out of order: %v >= %v", a, b)
		}
	}
}

func TestLayoutErrors(t *testing.T) {
	cases := []struct {
		name string
		g    *Graph
		want []string
	}{
		{"nil", nil, []string{"nil graph"}},
		{"duplicate", &Graph{Nodes: []Node{{ID: "a"}, {ID: "b"}, {ID: "a"}}}, []string{`duplicate node ID "a"`}},
		{"empty id", &Graph{Nodes: []Node{{ID: ""}}}, []string{"empty ID"}},
		{"unknown endpoints", &Graph{Nodes: []Node{{ID: "a"}}, Edges: []Edge{{From: "a", To: "ghost"}, {From: "nobody", To: "a"}}},
			[]string{`unknown target "ghost"`, `unknown source "nobody"`}},
		{"bad kinds", &Graph{Nodes: []Node{{ID: "a", Kind: 99}}, Edges: []Edge{{From: "a", To: "a", Kind: -1}}},
			[]string{`node "a" has unknown kind 99`, "unknown kind -1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Layout(c.g); err == nil {
				t.Fatal("Layout: no error")
			} else {
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Layout error %q does not mention %q", err, w)
					}
				}
			}
			var sb strings.Builder
			for name, f := range map[string]func(*strings.Builder) error{
				"SVG":     func(b *strings.Builder) error { return SVG(b, c.g) },
				"DOT":     func(b *strings.Builder) error { return DOT(b, c.g) },
				"Mermaid": func(b *strings.Builder) error { return Mermaid(b, c.g) },
			} {
				sb.Reset()
				if err := f(&sb); err == nil {
					t.Errorf("%s: no error", name)
				}
				if sb.Len() != 0 {
					t.Errorf("%s wrote %d bytes for an invalid graph", name, sb.Len())
				}
			}
		})
	}
}

func BenchmarkLayoutFanOut100(b *testing.B) {
	g := fanOut(98) // start, 98 branches, join, end: 100 nodes
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Layout(g); err != nil {
			b.Fatal(err)
		}
	}
}
