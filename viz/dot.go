package viz

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DOT writes g as a Graphviz digraph laid out top to bottom. IDs are
// quoted; labels are HTML-like labels with every special character
// escaped, wrapped like the SVG's, with the kind name above the node name
// and the detail or note in a smaller font. Node kinds have their own
// shapes and colour-blind safe colours, final nodes a double border, and
// initial nodes a start point; error edges are dashed and vermillion,
// default edges have hollow arrowheads, parallel edges are bold. It returns
// an error for an invalid graph, as [Layout] does, or the error of writing.
func DOT(w io.Writer, g *Graph) error {
	index, err := validate(g)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	used := make(map[string]bool, len(g.Nodes))
	ids := dotIDs(g, used)
	name := strings.Join(strings.Fields(cleanText(g.Name)), " ")
	if dotSafe(name) && name != "" {
		p("digraph %s {\n", dotQuote(name))
	} else {
		p("digraph {\n")
	}
	p("    graph [rankdir=TB, nodesep=0.4, ranksep=0.5, bgcolor=\"#FFFFFF\", fontname=\"Helvetica,Arial,sans-serif\"];\n")
	p("    node [fontname=\"Helvetica,Arial,sans-serif\", fontsize=12, penwidth=1.5, margin=\"0.2,0.06\"];\n")
	p("    edge [fontname=\"Courier,monospace\", fontsize=10, color=\"#555555\", fontcolor=\"#222222\", arrowsize=0.8];\n")
	if name != "" {
		p("    label=<%s>;\n    labelloc=t;\n", dotHTML(name))
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		st := styleOf(n.Kind)
		shape, style := dotShape(n.Kind)
		var label strings.Builder
		fmt.Fprintf(&label, "<font point-size=\"8\" color=\"%s\"><b>%s</b></font>", st.tag, kindTag(n.Kind))
		for _, s := range wrapText(nodeLabel(n), wrapWidth, wrapLines) {
			fmt.Fprintf(&label, "<br/><b>%s</b>", dotHTML(s))
		}
		for _, s := range wrapText(n.Detail, wrapWidth, wrapLines) {
			fmt.Fprintf(&label, "<br/><font point-size=\"10\" color=\"#4D4D4D\">%s</font>", dotHTML(s))
		}
		periph := ""
		if n.Final {
			periph = ", peripheries=2"
		}
		p("    %s [shape=%s, style=\"%s\", fillcolor=\"%s\", color=\"%s\"%s, label=<%s>];\n",
			dotQuote(ids[i]), shape, style, st.fill, st.stroke, periph, label.String())
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if !n.Initial {
			continue
		}
		sid := dotQuote(freshID("__start_"+ids[i], used))
		p("    %s [shape=point, width=0.15, color=\"#222222\", fillcolor=\"#222222\", label=\"\"];\n", sid)
		p("    %s -> %s [color=\"#222222\"];\n", sid, dotQuote(ids[i]))
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		st := edgeStyleOf(e.Kind)
		var attrs []string
		var label strings.Builder
		for j, s := range wrapText(edgeLabel(e), wrapWidth, wrapLines) {
			if j > 0 {
				label.WriteString("<br/>")
			}
			label.WriteString(dotHTML(s))
		}
		for _, s := range wrapText(e.Note, wrapWidth, wrapLines) {
			if label.Len() > 0 {
				label.WriteString("<br/>")
			}
			fmt.Fprintf(&label, "<font point-size=\"9\" color=\"#666666\">%s</font>", dotHTML(s))
		}
		if label.Len() > 0 {
			attrs = append(attrs, "label=<"+label.String()+">")
		}
		switch e.Kind {
		case Default:
			attrs = append(attrs, "arrowhead=empty")
		case Error:
			attrs = append(attrs, "style=dashed", fmt.Sprintf("color=\"%s\"", st.stroke), fmt.Sprintf("fontcolor=\"%s\"", st.text))
		case Parallel:
			attrs = append(attrs, "penwidth=2.5", fmt.Sprintf("color=\"%s\"", st.stroke))
		}
		if len(attrs) > 0 {
			p("    %s -> %s [%s];\n", dotQuote(ids[index[e.From]]), dotQuote(ids[index[e.To]]), strings.Join(attrs, ", "))
		} else {
			p("    %s -> %s;\n", dotQuote(ids[index[e.From]]), dotQuote(ids[index[e.To]]))
		}
	}
	p("}\n")
	return bw.Flush()
}

// dotShape returns the Graphviz shape and style of a node kind.
func dotShape(k NodeKind) (shape, style string) {
	switch k {
	case LLM:
		return "hexagon", "filled"
	case Human:
		return "ellipse", "filled"
	case Tool:
		return "parallelogram", "filled"
	case Subflow:
		return "component", "filled"
	case Join:
		return "invtrapezium", "filled"
	case Map:
		return "box3d", "filled"
	}
	return "box", "rounded,filled"
}

// dotIDs returns the DOT ID of every node, to be quoted: its own ID, or, when
// that holds a backslash or a control character (which DOT's quoted strings
// cannot carry safely), "n" and its index, kept distinct from the others.
func dotIDs(g *Graph, used map[string]bool) []string {
	ids := make([]string, len(g.Nodes))
	for i := range g.Nodes {
		id := g.Nodes[i].ID
		used[id] = true
		if dotSafe(id) {
			ids[i] = id
		}
	}
	for i := range g.Nodes {
		if ids[i] == "" {
			ids[i] = freshID("n"+strconv.Itoa(i), used)
		}
	}
	return ids
}

// dotSafe reports whether s can be written as a quoted DOT string as is.
func dotSafe(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return r == '\\' || unicode.IsControl(r)
	})
}

// dotQuote quotes a string that dotSafe accepts.
func dotQuote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// dotHTML escapes s for the text of an HTML-like label.
func dotHTML(s string) string { return escapeMarkup(s, "&#39;", " ") }
