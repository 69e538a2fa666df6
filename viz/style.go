package viz

import (
	"fmt"
	"strings"
)

// kindStyle is the palette of a node kind, from the Okabe–Ito colour-blind
// safe palette: a light fill, the full colour as border, and a dark shade
// for the kind tag text.
type kindStyle struct {
	fill, stroke, tag string
}

func styleOf(k NodeKind) kindStyle {
	switch k {
	case LLM:
		return kindStyle{"#F7E6F0", "#CC79A7", "#8E3F6C"}
	case Human:
		return kindStyle{"#FDF0D5", "#E69F00", "#8A5A00"}
	case Tool:
		return kindStyle{"#DDF2EA", "#009E73", "#006B4E"}
	case Subflow:
		return kindStyle{"#EEEEEE", "#666666", "#444444"}
	case Join:
		return kindStyle{"#FAF6CC", "#B5A300", "#5E5500"}
	case Map:
		return kindStyle{"#E4F3FB", "#56B4E9", "#1F6F9F"}
	}
	return kindStyle{"#E8F1FA", "#0072B2", "#005A8C"}
}

// Shape insets, in pixels.
const (
	hexInset  = 12.0 // LLM hexagon points
	skew      = 10.0 // Tool parallelogram
	funnel    = 12.0 // Join trapezoid
	barInset  = 7.0  // Subflow side bars
	taskRound = 6.0  // Task corner radius
)

// flatHalfWidth is half the width of the flat part of the top and bottom
// of a node's shape, where edges may end.
func flatHalfWidth(k NodeKind, b Rect) float64 {
	switch k {
	case LLM:
		return b.W/2 - hexInset
	case Human:
		return b.W/2 - b.H/2
	case Tool:
		return b.W/2 - skew
	case Join:
		return b.W/2 - funnel
	case Map:
		return (b.W-mapOffset)/2 - taskRound
	}
	return b.W/2 - taskRound
}

// sideX is the x where a horizontal line through the middle of a node's
// shape meets its right (or left) outline.
func sideX(k NodeKind, b Rect, right bool) float64 {
	in := 0.0
	switch k {
	case Tool:
		in = skew / 2
	case Join:
		in = funnel / 2
	}
	if right {
		return b.X + b.W - in
	}
	return b.X + in
}

// contentRect is the part of a node box the text is centred in.
func contentRect(k NodeKind, b Rect) Rect {
	if k == Map {
		return Rect{b.X, b.Y + mapOffset, b.W - mapOffset, b.H - mapOffset}
	}
	return b
}

// shapePath returns SVG path data for the outline of a node of kind k in
// box b. Map nodes get their front box only; see stackPaths.
func shapePath(k NodeKind, b Rect) string {
	x0, y0, x1, y1 := b.X, b.Y, b.X+b.W, b.Y+b.H
	poly := func(pts ...float64) string {
		var sb strings.Builder
		for i := 0; i < len(pts); i += 2 {
			if i == 0 {
				sb.WriteString("M")
			} else {
				sb.WriteString(" L")
			}
			sb.WriteString(num(pts[i]) + "," + num(pts[i+1]))
		}
		sb.WriteString(" Z")
		return sb.String()
	}
	switch k {
	case LLM:
		in := min(hexInset, b.W/4)
		cy := (y0 + y1) / 2
		return poly(x0+in, y0, x1-in, y0, x1, cy, x1-in, y1, x0+in, y1, x0, cy)
	case Human:
		return roundRect(b, b.H/2)
	case Tool:
		s := min(skew, b.W/4)
		return poly(x0+s, y0, x1, y0, x1-s, y1, x0, y1)
	case Join:
		f := min(funnel, b.W/4)
		return poly(x0, y0, x1, y0, x1-f, y1, x0+f, y1)
	case Subflow:
		return roundRect(b, 2)
	case Map:
		return roundRect(contentRect(k, b), taskRound)
	}
	return roundRect(b, taskRound)
}

// roundRect returns path data for a rectangle with corner radius r.
func roundRect(b Rect, r float64) string {
	r = max(0, min(r, b.W/2, b.H/2))
	x0, y0, x1, y1 := b.X, b.Y, b.X+b.W, b.Y+b.H
	if r == 0 {
		return fmt.Sprintf("M%s,%s H%s V%s H%s Z", num(x0), num(y0), num(x1), num(y1), num(x0))
	}
	return fmt.Sprintf("M%s,%s H%s A%s,%s 0 0 1 %s,%s V%s A%s,%s 0 0 1 %s,%s H%s A%s,%s 0 0 1 %s,%s V%s A%s,%s 0 0 1 %s,%s Z",
		num(x0+r), num(y0), num(x1-r), num(r), num(r), num(x1), num(y0+r),
		num(y1-r), num(r), num(r), num(x1-r), num(y1),
		num(x0+r), num(r), num(r), num(x0), num(y1-r),
		num(y0+r), num(r), num(r), num(x0+r), num(y0))
}

// inset shrinks b by d on every side.
func inset(b Rect, d float64) Rect {
	return Rect{b.X + d, b.Y + d, max(0, b.W-2*d), max(0, b.H-2*d)}
}

// edgeStyle is how an edge kind is stroked.
type edgeStyle struct {
	stroke string
	width  float64
	dash   string // stroke-dasharray, or ""
	arrow  string // marker name
	text   string // label text colour
	border string // label box border colour
}

func edgeStyleOf(k EdgeKind) edgeStyle {
	switch k {
	case Default:
		return edgeStyle{"#555555", 1.5, "", "open", "#333333", "#C8C8C8"}
	case Error:
		return edgeStyle{"#D55E00", 1.6, "6 4", "error", "#A13F00", "#E8A77A"}
	case Parallel:
		return edgeStyle{"#222222", 3, "", "bold", "#222222", "#C8C8C8"}
	}
	return edgeStyle{"#555555", 1.5, "", "arrow", "#222222", "#C8C8C8"}
}
