package viz

import (
	"math"
	"slices"
)

// waypoint is a point of a route with the direction of travel there.
type waypoint struct {
	p    Point
	dx   float64 // direction: (dx, dy) is (0, ±1) or (±1, 0)
	dy   float64
	port bool
}

// Side ports for routes that leave or enter a node sideways.
const (
	sideNone = iota
	sideLeft
	sideRight
)

// attach is one route end on the top or bottom of a node.
type attach struct {
	edge   int     // ledge index
	atTail bool    // the end is the edge's tail (upper end)
	toward float64 // x of the next point along the route
}

// route computes ports, edge curves, label boxes, self-loops and start
// markers, then moves everything into a canvas with margins.
func (l *layouter) route() {
	g := l.g
	box := func(v int) Rect {
		n := &l.nodes[v]
		if n.kind == lMarker {
			return Rect{n.x - markerR, n.y - markerR, 2 * markerR, 2 * markerR}
		}
		m := &l.boxes[n.ref]
		return Rect{n.x - m.w/2, n.y - m.h/2, m.w, m.h}
	}

	// Choose side ports for reversed edges whose first or last bend lies
	// clear beside the node.
	tailSide := make([]int, len(l.edges))
	headSide := make([]int, len(l.edges))
	for i := range l.edges {
		e := &l.edges[i]
		if !e.rev {
			continue
		}
		k := len(e.chain)
		tailSide[i] = l.sideFor(e.tail, box(e.tail), l.nodes[e.chain[1]].x)
		headSide[i] = l.sideFor(e.head, box(e.head), l.nodes[e.chain[k-2]].x)
	}

	// Spread the ends on the top and bottom of each node in the order of
	// where they lead, so they do not cross at the node.
	top := make([][]attach, len(l.nodes))
	bottom := make([][]attach, len(l.nodes))
	for i := range l.edges {
		e := &l.edges[i]
		k := len(e.chain)
		if tailSide[i] == sideNone {
			bottom[e.tail] = append(bottom[e.tail], attach{i, true, l.nodes[e.chain[1]].x})
		}
		if headSide[i] == sideNone {
			top[e.head] = append(top[e.head], attach{i, false, l.nodes[e.chain[k-2]].x})
		}
	}
	tailX := make([]float64, len(l.edges))
	headX := make([]float64, len(l.edges))
	spread := func(v int, list []attach) {
		slices.SortStableFunc(list, func(a, b attach) int {
			switch {
			case a.toward < b.toward:
				return -1
			case a.toward > b.toward:
				return 1
			}
			return a.edge - b.edge
		})
		// Each end sits straight above or below where its route goes
		// when it can: within the flat part of the outline, in order, and
		// at least step apart.
		n := &l.nodes[v]
		cx, half := n.x, 0.0
		if n.kind == lReal {
			half = max(0, flatHalfWidth(g.Nodes[n.ref].Kind, box(v))-6)
			if g.Nodes[n.ref].Kind == Map {
				cx -= mapOffset / 2
			}
		}
		k := len(list)
		step := 0.0
		if k > 1 {
			step = min(portSpacing, 2*half/float64(k-1))
		}
		prev := math.Inf(-1)
		for j, a := range list {
			x := min(max(a.toward, cx-half+step*float64(j)), cx+half-step*float64(k-1-j))
			x = max(x, prev+step)
			prev = x
			if a.atTail {
				tailX[a.edge] = x
			} else {
				headX[a.edge] = x
			}
		}
	}
	for v := range l.nodes {
		spread(v, bottom[v])
		spread(v, top[v])
	}

	d := &Drawing{Name: g.Name, Nodes: make([]NodeBox, len(g.Nodes)), Edges: make([]EdgePath, len(g.Edges))}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		d.Nodes[i] = NodeBox{
			ID: n.ID, Kind: n.Kind, Initial: n.Initial, Final: n.Final,
			Box: box(i), Layer: l.nodes[i].rank / 2,
			Label: l.boxes[i].label, Detail: l.boxes[i].detail,
		}
	}
	for i := range l.edges {
		e := &l.edges[i]
		pts := l.waypoints(e, box(e.tail), box(e.head), tailSide[i], headSide[i], tailX[i], headX[i])
		points, curve := smooth(pts)
		if e.orig < 0 {
			m := &l.nodes[e.tail]
			d.Starts = append(d.Starts, StartMarker{
				Node:   g.Nodes[e.head].ID,
				Center: Point{m.x, m.y}, Radius: markerR,
				Points: points, Curve: curve,
			})
			continue
		}
		ge := &g.Edges[e.orig]
		p := EdgePath{
			From: ge.From, To: ge.To, Kind: ge.Kind, Back: e.rev,
			Points: points, Curve: curve,
			LabelLines: e.labelLines, NoteLines: e.noteLines,
		}
		if e.label >= 0 {
			ln := &l.nodes[e.label]
			p.HasLabel = true
			p.Label = Rect{ln.x - e.labelW/2, ln.y - e.labelH/2, e.labelW, e.labelH}
		}
		d.Edges[e.orig] = p
	}
	for v, loops := range l.loops {
		l.selfLoops(d, box(v), loops)
	}
	l.drawing = d
	d.normalize()
}

// sideFor decides whether a reversed edge leaves or enters node v sideways:
// only when its next bend (at x toward) is clear of the node's box and no
// other node of the layer stands in between.
func (l *layouter) sideFor(v int, b Rect, toward float64) int {
	n := &l.nodes[v]
	if n.kind != lReal {
		return sideNone
	}
	layer := l.layers[n.rank]
	switch {
	case toward > b.X+b.W+2 && len(l.loops[n.ref]) == 0:
		for j := n.order + 1; j < len(layer); j++ {
			if w := &l.nodes[layer[j]]; !w.isDummy() {
				if w.x-w.lw < toward+4 {
					return sideNone
				}
				break
			}
		}
		return sideRight
	case toward < b.X-2:
		for j := n.order - 1; j >= 0; j-- {
			if w := &l.nodes[layer[j]]; !w.isDummy() {
				if w.x+w.rw > toward-4 {
					return sideNone
				}
				break
			}
		}
		return sideLeft
	}
	return sideNone
}

// waypoints lists the points an edge passes in drawing order: its ports,
// and for each bend a vertical run through that bend's layer, so that
// curves bend only in the gaps between layers.
func (l *layouter) waypoints(e *ledge, tb, hb Rect, ts, hs int, tx, hx float64) []waypoint {
	var pts []waypoint
	tn := &l.nodes[e.tail]
	switch ts {
	case sideRight:
		pts = append(pts, waypoint{Point{sideX(l.g.Nodes[tn.ref].Kind, tb, true), tn.y}, 1, 0, true})
	case sideLeft:
		pts = append(pts, waypoint{Point{sideX(l.g.Nodes[tn.ref].Kind, tb, false), tn.y}, -1, 0, true})
	default:
		pts = append(pts, waypoint{Point{tx, tb.Y + tb.H}, 0, 1, true})
		// Leave a layer taller than the node straight down.
		if bottom := tn.y + l.rankH[tn.rank]/2; bottom > tb.Y+tb.H+0.5 {
			pts = append(pts, waypoint{Point{tx, bottom}, 0, 1, false})
		}
	}
	for _, v := range e.chain[1 : len(e.chain)-1] {
		n := &l.nodes[v]
		// Layers of bare edges hold nothing to avoid: bend through them.
		if h := l.rankH[n.rank]; h > 0 {
			pts = append(pts, waypoint{Point{n.x, n.y - h/2}, 0, 1, false}, waypoint{Point{n.x, n.y + h/2}, 0, 1, false})
		}
	}
	hn := &l.nodes[e.head]
	switch hs {
	case sideRight:
		pts = append(pts, waypoint{Point{sideX(l.g.Nodes[hn.ref].Kind, hb, true), hn.y}, -1, 0, true})
	case sideLeft:
		pts = append(pts, waypoint{Point{sideX(l.g.Nodes[hn.ref].Kind, hb, false), hn.y}, 1, 0, true})
	default:
		if top := hn.y - l.rankH[hn.rank]/2; top < hb.Y-0.5 {
			pts = append(pts, waypoint{Point{hx, top}, 0, 1, false})
		}
		pts = append(pts, waypoint{Point{hx, hb.Y}, 0, 1, true})
	}
	if e.rev {
		slices.Reverse(pts)
		for i := range pts {
			pts[i].dx, pts[i].dy = -pts[i].dx, -pts[i].dy
		}
	}
	return pts
}

// smooth turns waypoints into a polyline and a chain of cubic Bézier
// segments whose tangents follow the waypoint directions, and shortens the
// last segment by the arrowhead.
func smooth(pts []waypoint) (points, curve []Point) {
	// Drop repeated points.
	out := pts[:1]
	for _, w := range pts[1:] {
		last := out[len(out)-1]
		if math.Abs(w.p.X-last.p.X) < 0.01 && math.Abs(w.p.Y-last.p.Y) < 0.01 {
			continue
		}
		out = append(out, w)
	}
	pts = out
	points = make([]Point, len(pts))
	for i, w := range pts {
		points[i] = w.p
	}
	if len(pts) < 2 {
		return points, []Point{points[0], points[0], points[0], points[0]}
	}
	reach := func(w waypoint, a, b Point) float64 {
		if w.dx != 0 {
			return max(math.Abs(b.X-a.X)/2, 10)
		}
		return math.Abs(b.Y-a.Y) / 2
	}
	curve = append(curve, pts[0].p)
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		start := len(curve)
		if !elbow(&curve, a, b) {
			ra, rb := reach(a, a.p, b.p), reach(b, a.p, b.p)
			c1 := Point{a.p.X + a.dx*ra, a.p.Y + a.dy*ra}
			c2 := Point{b.p.X - b.dx*rb, b.p.Y - b.dy*rb}
			curve = append(curve, c1, c2, b.p)
		}
		if i == len(pts)-1 {
			// Shorten the last piece along its end direction; when it is
			// too short for that, it becomes a straight piece instead.
			n := len(curve)
			if n-3 > start && dist(curve[n-4], curve[n-1]) < arrowLen+1 {
				curve = curve[:n-3]
				n -= 3
			}
			end := Point{b.p.X - b.dx*arrowLen, b.p.Y - b.dy*arrowLen}
			c2 := Point{curve[n-2].X - b.dx*arrowLen, curve[n-2].Y - b.dy*arrowLen}
			curve[n-2], curve[n-1] = c2, end
		}
	}
	return points, curve
}

func dist(a, b Point) float64 { return math.Hypot(a.X-b.X, a.Y-b.Y) }

// cornerRadius is the radius of the rounded corners of elbow routes.
const cornerRadius = 16.0

// elbow appends a route from a to b that turns once through a rounded
// corner, when one of them runs vertically and the other horizontally and
// the turn goes the right way; it reports whether it did.
func elbow(curve *[]Point, a, b waypoint) bool {
	var k Point // the corner
	switch {
	case a.dx == 0 && b.dy == 0:
		k = Point{a.p.X, b.p.Y}
	case a.dy == 0 && b.dx == 0:
		k = Point{b.p.X, a.p.Y}
	default:
		return false
	}
	// Both legs must run the way the directions say.
	in := Point{k.X - a.p.X, k.Y - a.p.Y}
	out := Point{b.p.X - k.X, b.p.Y - k.Y}
	if in.X*a.dx+in.Y*a.dy <= 0 || out.X*b.dx+out.Y*b.dy <= 0 {
		return false
	}
	lin, lout := math.Hypot(in.X, in.Y), math.Hypot(out.X, out.Y)
	r := min(cornerRadius, lin, lout/2)
	p1 := Point{k.X - a.dx*r, k.Y - a.dy*r}
	p2 := Point{k.X + b.dx*r, k.Y + b.dy*r}
	line := func(p, q Point) {
		*curve = append(*curve, Point{p.X + (q.X-p.X)/3, p.Y + (q.Y-p.Y)/3}, Point{p.X + 2*(q.X-p.X)/3, p.Y + 2*(q.Y-p.Y)/3}, q)
	}
	if lin > r+0.01 {
		line(a.p, p1)
	}
	const kappa = 0.5523 // cubic approximation of a quarter circle
	*curve = append(*curve, Point{p1.X + a.dx*r*kappa, p1.Y + a.dy*r*kappa}, Point{p2.X - b.dx*r*kappa, p2.Y - b.dy*r*kappa}, p2)
	if lout > r+0.01 {
		line(p2, b.p)
	}
	return true
}

// selfLoops draws the self-loops of one node as nested arcs on its right
// side, with their labels stacked to the right of the arcs.
func (l *layouter) selfLoops(d *Drawing, b Rect, loops []int) {
	if len(loops) == 0 {
		return
	}
	x1 := b.X + b.W
	cy := b.Y + b.H/2
	var stackH float64
	for _, ei := range loops {
		if _, _, _, h := measureLabel(&l.g.Edges[ei]); h > 0 {
			stackH += h + 4
		}
	}
	stackH -= 4
	labelX := x1 + 0.75*selfLoopRadius(len(loops)-1) + 8
	labelY := cy - stackH/2
	for k, ei := range loops {
		ge := &l.g.Edges[ei]
		r := selfLoopRadius(k)
		a := min(b.H*0.22+4*float64(k), b.H/2-3)
		s := Point{x1, cy - a}
		t := Point{x1, cy + a}
		c1 := Point{x1 + r, cy - a - 0.35*r}
		c2 := Point{x1 + r, cy + a + 0.35*r}
		// Shorten the end along its tangent for the arrowhead.
		dx, dy := t.X-c2.X, t.Y-c2.Y
		dl := math.Hypot(dx, dy)
		dx, dy = dx/dl*arrowLen, dy/dl*arrowLen
		p := EdgePath{
			From: ge.From, To: ge.To, Kind: ge.Kind, Self: true,
			Points: []Point{s, {x1 + 0.75*r, cy}, t},
			Curve:  []Point{s, c1, {c2.X - dx, c2.Y - dy}, {t.X - dx, t.Y - dy}},
		}
		lines, notes, w, h := measureLabel(ge)
		p.LabelLines, p.NoteLines = lines, notes
		if h > 0 {
			p.HasLabel = true
			p.Label = Rect{labelX, labelY, w, h}
			labelY += h + 4
		}
		d.Edges[ei] = p
	}
}

// normalize moves everything so the drawing's bounding box starts at the
// margin, and sets the canvas size.
func (d *Drawing) normalize() {
	minX, minY := math.Inf(1), math.Inf(1)
	maxX, maxY := math.Inf(-1), math.Inf(-1)
	add := func(p Point) {
		minX, minY = min(minX, p.X), min(minY, p.Y)
		maxX, maxY = max(maxX, p.X), max(maxY, p.Y)
	}
	addRect := func(r Rect) {
		add(Point{r.X, r.Y})
		add(Point{r.X + r.W, r.Y + r.H})
	}
	for i := range d.Nodes {
		addRect(d.Nodes[i].Box)
	}
	for i := range d.Edges {
		e := &d.Edges[i]
		for _, p := range e.Curve {
			add(p)
		}
		if e.HasLabel {
			addRect(e.Label)
		}
	}
	for i := range d.Starts {
		s := &d.Starts[i]
		addRect(Rect{s.Center.X - s.Radius, s.Center.Y - s.Radius, 2 * s.Radius, 2 * s.Radius})
	}
	if math.IsInf(minX, 1) {
		d.Width, d.Height = 2*margin, 2*margin
		return
	}
	dx, dy := margin-minX, margin-minY
	move := func(p *Point) { p.X += dx; p.Y += dy }
	movePts := func(ps []Point) {
		for i := range ps {
			move(&ps[i])
		}
	}
	for i := range d.Nodes {
		d.Nodes[i].Box.X += dx
		d.Nodes[i].Box.Y += dy
	}
	for i := range d.Edges {
		e := &d.Edges[i]
		movePts(e.Points)
		movePts(e.Curve)
		if e.HasLabel {
			e.Label.X += dx
			e.Label.Y += dy
		}
	}
	for i := range d.Starts {
		s := &d.Starts[i]
		move(&s.Center)
		movePts(s.Points)
		movePts(s.Curve)
	}
	d.Width = math.Ceil(maxX - minX + 2*margin)
	d.Height = math.Ceil(maxY - minY + 2*margin)
}
