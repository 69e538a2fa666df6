package viz

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mermaid writes g as a Mermaid "flowchart TD" diagram. Node IDs that are
// not plain identifiers (or are Mermaid keywords) are replaced by safe ones;
// labels are quoted, with entity codes for the characters Mermaid would
// otherwise read as syntax, and wrapped like the SVG's. Each node kind has
// its own shape and a class ("vizTask", "vizLLM", ...) with a colour-blind
// safe colour; final nodes also get the class "vizFinal" (a thick border),
// and initial nodes a small start circle. Error edges are dotted and
// vermillion, parallel edges thick. It returns an error for an invalid
// graph, as [Layout] does, or the error of writing.
func Mermaid(w io.Writer, g *Graph) error {
	index, err := validate(g)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	ids := mermaidIDs(g)
	if strings.TrimSpace(g.Name) != "" {
		p("---\ntitle: %s\n---\n", strconv.Quote(cleanText(strings.Join(strings.Fields(g.Name), " "))))
	}
	p("flowchart TD\n")
	for i := range g.Nodes {
		n := &g.Nodes[i]
		lines := wrapText(nodeLabel(n), wrapWidth, wrapLines)
		lines = append(lines, wrapText(n.Detail, wrapWidth, wrapLines)...)
		open, close := mermaidShape(n.Kind)
		p("    %s%s\"%s\"%s\n", ids[i], open, mermaidText(lines), close)
	}
	// Start markers, then the edges; linkStyle counts links in this order.
	link := 0
	var startIDs []string
	used := make(map[string]bool, len(ids))
	for _, id := range ids {
		used[id] = true
	}
	for i := range g.Nodes {
		if !g.Nodes[i].Initial {
			continue
		}
		sid := freshID("start_"+ids[i], used)
		startIDs = append(startIDs, sid)
		p("    %s((\" \")) --> %s\n", sid, ids[i])
		link++
	}
	styled := map[EdgeKind][]string{}
	for i := range g.Edges {
		e := &g.Edges[i]
		arrow := "-->"
		switch e.Kind {
		case Error:
			arrow = "-.->"
		case Parallel:
			arrow = "==>"
		}
		from, to := ids[index[e.From]], ids[index[e.To]]
		lines := wrapText(edgeLabel(e), wrapWidth, wrapLines)
		lines = append(lines, wrapText(e.Note, wrapWidth, wrapLines)...)
		if len(lines) > 0 {
			p("    %s %s|\"%s\"| %s\n", from, arrow, mermaidText(lines), to)
		} else {
			p("    %s %s %s\n", from, arrow, to)
		}
		styled[e.Kind] = append(styled[e.Kind], strconv.Itoa(link))
		link++
	}
	for k := range numNodeKinds {
		st := styleOf(k)
		p("    classDef %s fill:%s,stroke:%s,color:#1A1A1A\n", mermaidClass(k), st.fill, st.stroke)
	}
	p("    classDef vizFinal stroke-width:4px\n")
	p("    classDef vizStart fill:#222222,stroke:#222222\n")
	for k := range numNodeKinds {
		var members []string
		for i := range g.Nodes {
			if g.Nodes[i].Kind == k {
				members = append(members, ids[i])
			}
		}
		if len(members) > 0 {
			p("    class %s %s\n", strings.Join(members, ","), mermaidClass(k))
		}
	}
	var finals []string
	for i := range g.Nodes {
		if g.Nodes[i].Final {
			finals = append(finals, ids[i])
		}
	}
	if len(finals) > 0 {
		p("    class %s vizFinal\n", strings.Join(finals, ","))
	}
	if len(startIDs) > 0 {
		p("    class %s vizStart\n", strings.Join(startIDs, ","))
	}
	for _, k := range []EdgeKind{Error, Parallel} {
		if len(styled[k]) == 0 {
			continue
		}
		st := edgeStyleOf(k)
		p("    linkStyle %s stroke:%s,stroke-width:%spx\n", strings.Join(styled[k], ","), st.stroke, num(st.width))
	}
	return bw.Flush()
}

// mermaidClass is the class name of a node kind.
func mermaidClass(k NodeKind) string {
	switch k {
	case LLM:
		return "vizLLM"
	case Human:
		return "vizHuman"
	case Tool:
		return "vizTool"
	case Subflow:
		return "vizSubflow"
	case Join:
		return "vizJoin"
	case Map:
		return "vizMap"
	}
	return "vizTask"
}

// mermaidShape returns the brackets around a node's label.
func mermaidShape(k NodeKind) (string, string) {
	switch k {
	case LLM:
		return "{{", "}}"
	case Human:
		return "([", "])"
	case Tool:
		return "[/", "/]"
	case Subflow:
		return "[[", "]]"
	case Join:
		return "[\\", "/]"
	case Map:
		return "[/", "\\]"
	}
	return "(", ")"
}

// mermaidKeywords cannot be used as node IDs.
func mermaidKeyword(s string) bool {
	switch strings.ToLower(s) {
	case "end", "graph", "flowchart", "subgraph", "direction", "style", "classdef",
		"class", "click", "linkstyle", "call", "href", "default", "interpolate",
		"acctitle", "accdescr", "td", "tb", "bt", "lr", "rl":
		return true
	}
	return false
}

// mermaidIDs returns a Mermaid-safe, unique ID for every node: the node's
// own ID when it is a plain identifier, otherwise "n" and its index.
func mermaidIDs(g *Graph) []string {
	ids := make([]string, len(g.Nodes))
	used := make(map[string]bool, len(g.Nodes))
	for i := range g.Nodes {
		if id := g.Nodes[i].ID; plainID(id) && !mermaidKeyword(id) {
			ids[i] = id
			used[id] = true
		}
	}
	for i := range g.Nodes {
		if ids[i] == "" {
			ids[i] = freshID("n"+strconv.Itoa(i), used)
		}
	}
	return ids
}

// freshID returns base, or base with underscores appended, whichever is
// not yet used, and marks it used.
func freshID(base string, used map[string]bool) string {
	for used[base] {
		base += "_"
	}
	used[base] = true
	return base
}

// plainID reports whether s is an ASCII identifier.
func plainID(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// mermaidText joins lines with <br/> and replaces the characters that are
// syntax inside a quoted Mermaid label with entity codes.
func mermaidText(lines []string) string {
	var sb strings.Builder
	for i, line := range lines {
		if i > 0 {
			sb.WriteString("<br/>")
		}
		for _, r := range line {
			switch r {
			case '"':
				sb.WriteString("#quot;")
			case '#':
				sb.WriteString("#35;")
			case '&':
				sb.WriteString("#amp;")
			case '<':
				sb.WriteString("#lt;")
			case '>':
				sb.WriteString("#gt;")
			case '|':
				sb.WriteString("#124;")
			case '`':
				sb.WriteString("#96;")
			default:
				sb.WriteRune(r)
			}
		}
	}
	return sb.String()
}
