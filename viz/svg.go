package viz

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
)

// Font stacks; only fonts a viewer already has are named.
const (
	sansFonts = "Helvetica, Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif"
	monoFonts = "Menlo, Consolas, 'Liberation Mono', 'DejaVu Sans Mono', monospace"
)

// SVG lays g out and writes it as a standalone SVG 1.1 document: no
// scripts, no style sheets, no external fonts or images. Each node's group
// carries data-node (its ID) and each edge data-from and data-to, so a
// page that embeds the drawing can mark nodes and edges with CSS. Node kinds differ
// in shape and colour and are named in each box; edge kinds differ in line
// style. Element IDs carry a prefix derived from the graph, so several
// drawings can share one HTML page. It returns the error of [Layout] or of
// writing.
func SVG(w io.Writer, g *Graph) error {
	d, err := Layout(g)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	writeSVG(bw, d, idPrefix(g))
	return bw.Flush()
}

// idPrefix derives a short, stable ID prefix from the graph.
func idPrefix(g *Graph) string {
	h := fnv.New32a()
	io.WriteString(h, g.Name)
	for i := range g.Nodes {
		io.WriteString(h, "\x00"+g.Nodes[i].ID)
	}
	return fmt.Sprintf("viz%08x-", h.Sum32())
}

// xmlText escapes s for XML character data and attribute values.
func xmlText(s string) string { return escapeMarkup(s, "&apos;", "&#10;") }

// escapeMarkup escapes s (cleaned of control characters) for XML-like
// markup; apos and newline are what a single quote and a line break become.
func escapeMarkup(s, apos, newline string) string {
	var sb strings.Builder
	for _, r := range cleanText(s) {
		switch r {
		case '&':
			sb.WriteString("&amp;")
		case '<':
			sb.WriteString("&lt;")
		case '>':
			sb.WriteString("&gt;")
		case '"':
			sb.WriteString("&quot;")
		case '\'':
			sb.WriteString(apos)
		case '\n':
			sb.WriteString(newline)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// bezierPath returns SVG path data for a curve as stored in EdgePath.Curve.
func bezierPath(c []Point) string {
	if len(c) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("M" + num(c[0].X) + "," + num(c[0].Y))
	for i := 1; i+2 < len(c); i += 3 {
		sb.WriteString(" C" + num(c[i].X) + "," + num(c[i].Y) + " " + num(c[i+1].X) + "," + num(c[i+1].Y) + " " + num(c[i+2].X) + "," + num(c[i+2].Y))
	}
	return sb.String()
}

// writeSVG writes the drawing; errors surface on the caller's Flush.
func writeSVG(w *bufio.Writer, d *Drawing, pfx string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n")
	p("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%s\" height=\"%s\" viewBox=\"0 0 %s %s\" font-family=\"%s\">\n",
		num(d.Width), num(d.Height), num(d.Width), num(d.Height), sansFonts)
	title := d.Name
	if title == "" {
		title = "workflow"
	}
	p("<title>%s</title>\n", xmlText(title))
	p("<desc>%s</desc>\n", xmlText(fmt.Sprintf("Workflow graph with %d nodes and %d edges.", len(d.Nodes), len(d.Edges))))

	// Arrowheads: the marker's base sits on the end of the path, and its
	// tip arrowLen further on, on the node's outline.
	p("<defs>\n")
	head := "M0,1 L10,5 L0,9 Z"
	marker := func(name, body string) {
		p("<marker id=\"%s%s\" viewBox=\"0 0 10 10\" refX=\"1\" refY=\"5\" markerWidth=\"10\" markerHeight=\"10\" markerUnits=\"userSpaceOnUse\" orient=\"auto\">%s</marker>\n", pfx, name, body)
	}
	marker("arrow", fmt.Sprintf("<path d=\"%s\" fill=\"#555555\"/>", head))
	marker("open", fmt.Sprintf("<path d=\"M0.6,1.6 L9,5 L0.6,8.4 Z\" fill=\"#FFFFFF\" stroke=\"#555555\" stroke-width=\"1.2\"/>"))
	marker("error", fmt.Sprintf("<path d=\"%s\" fill=\"#D55E00\"/>", head))
	marker("bold", "<path d=\"M0,0 L10,5 L0,10 Z\" fill=\"#222222\"/>")
	marker("start", fmt.Sprintf("<path d=\"%s\" fill=\"#222222\"/>", head))
	p("</defs>\n")
	p("<rect x=\"0\" y=\"0\" width=\"%s\" height=\"%s\" fill=\"#FFFFFF\"/>\n", num(d.Width), num(d.Height))

	// Edges first, so node boxes and labels sit on top of them.
	p("<g fill=\"none\">\n")
	for i := range d.Starts {
		s := &d.Starts[i]
		p("<path d=\"%s\" stroke=\"#222222\" stroke-width=\"1.5\" marker-end=\"url(#%sstart)\"/>\n", bezierPath(s.Curve), pfx)
	}
	for i := range d.Edges {
		e := &d.Edges[i]
		st := edgeStyleOf(e.Kind)
		dash := ""
		if st.dash != "" {
			dash = fmt.Sprintf(" stroke-dasharray=\"%s\"", st.dash)
		}
		p("<path d=\"%s\" stroke=\"%s\" stroke-width=\"%s\"%s marker-end=\"url(#%s%s)\" data-from=\"%s\" data-to=\"%s\"><title>%s</title></path>\n",
			bezierPath(e.Curve), st.stroke, num(st.width), dash, pfx, st.arrow, xmlText(e.From), xmlText(e.To), xmlText(edgeTitle(e)))
	}
	p("</g>\n")

	p("<g>\n")
	for i := range d.Starts {
		s := &d.Starts[i]
		p("<circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"#222222\"><title>start</title></circle>\n", num(s.Center.X), num(s.Center.Y), num(s.Radius))
	}
	for i := range d.Nodes {
		writeNode(p, &d.Nodes[i])
	}
	p("</g>\n")

	p("<g font-family=\"%s\" text-anchor=\"middle\">\n", monoFonts)
	for i := range d.Edges {
		e := &d.Edges[i]
		if !e.HasLabel {
			continue
		}
		st := edgeStyleOf(e.Kind)
		b := e.Label
		p("<g><title>%s</title>\n", xmlText(edgeTitle(e)))
		p("<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" rx=\"4\" fill=\"#FFFFFF\" stroke=\"%s\" stroke-width=\"1\"/>\n",
			num(b.X), num(b.Y), num(b.W), num(b.H), st.border)
		cx := b.X + b.W/2
		y := b.Y + boxPadY
		for _, s := range e.LabelLines {
			p("<text x=\"%s\" y=\"%s\" font-size=\"%s\" fill=\"%s\">%s</text>\n", num(cx), num(y+edgeLine/2+0.35*edgeSize), num(edgeSize), st.text, xmlText(s))
			y += edgeLine
		}
		for _, s := range e.NoteLines {
			p("<text x=\"%s\" y=\"%s\" font-size=\"%s\" fill=\"#666666\">%s</text>\n", num(cx), num(y+noteLine/2+0.35*noteSize), num(noteSize), xmlText(s))
			y += noteLine
		}
		p("</g>\n")
	}
	p("</g>\n")
	p("</svg>\n")
}

// edgeTitle is the tooltip of an edge: its endpoints and full text.
func edgeTitle(e *EdgePath) string {
	t := e.From + " → " + e.To
	if len(e.LabelLines) > 0 {
		t += ": " + strings.Join(e.LabelLines, " ")
	}
	if len(e.NoteLines) > 0 {
		t += " / " + strings.Join(e.NoteLines, " ")
	}
	return t
}

// writeNode writes one node: its shape (doubled when final) and its text.
func writeNode(p func(string, ...any), n *NodeBox) {
	st := styleOf(n.Kind)
	b := n.Box
	title := strings.Join(n.Label, " ") + " (" + n.Kind.String() + ")"
	if len(n.Detail) > 0 {
		title += ": " + strings.Join(n.Detail, " ")
	}
	p("<g data-node=\"%s\"><title>%s</title>\n", xmlText(n.ID), xmlText(title))
	if n.Kind == Map {
		for _, off := range []float64{mapOffset, mapOffset / 2} {
			back := Rect{b.X + off, b.Y + mapOffset - off, b.W - mapOffset, b.H - mapOffset}
			p("<path d=\"%s\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.2\"/>\n", roundRect(back, taskRound), st.fill, st.stroke)
		}
	}
	p("<path d=\"%s\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.6\"/>\n", shapePath(n.Kind, b), st.fill, st.stroke)
	if n.Kind == Subflow {
		p("<path d=\"M%s,%s V%s M%s,%s V%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\"/>\n",
			num(b.X+barInset), num(b.Y), num(b.Y+b.H), num(b.X+b.W-barInset), num(b.Y), num(b.Y+b.H), st.stroke)
	}
	if n.Final {
		inner := shapePath(n.Kind, inset(b, 3.5))
		if n.Kind == Map {
			inner = roundRect(inset(contentRect(Map, b), 3.5), taskRound-2)
		}
		p("<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\"/>\n", inner, st.stroke)
	}
	c := contentRect(n.Kind, b)
	cx := c.X + c.W/2
	y := c.Y + nodePadY
	p("<text x=\"%s\" y=\"%s\" font-size=\"%s\" font-weight=\"bold\" letter-spacing=\"%s\" fill=\"%s\" text-anchor=\"middle\">%s</text>\n",
		num(cx), num(y+tagLine/2+0.35*tagSize), num(tagSize), num(tagSpacing), st.tag, xmlText(kindTag(n.Kind)))
	y += tagLine
	for _, s := range n.Label {
		p("<text x=\"%s\" y=\"%s\" font-size=\"%s\" font-weight=\"bold\" fill=\"#1A1A1A\" text-anchor=\"middle\">%s</text>\n",
			num(cx), num(y+labelLine/2+0.35*labelSize), num(labelSize), xmlText(s))
		y += labelLine
	}
	for _, s := range n.Detail {
		p("<text x=\"%s\" y=\"%s\" font-size=\"%s\" fill=\"#4D4D4D\" text-anchor=\"middle\">%s</text>\n",
			num(cx), num(y+detailLine/2+0.35*detailSize), num(detailSize), xmlText(s))
		y += detailLine
	}
	p("</g>\n")
}
