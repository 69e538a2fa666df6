package lang

import (
	"sort"

	"github.com/weftlang/weft/flow"
)

// Span is a class of source text for syntax colouring: src[Start:End]
// is a keyword, a name, a string and so on (Class). Text between spans
// (blanks, newlines) has no class.
type Span struct {
	Start, End int
	Class      SpanClass
}

// SpanClass is what a Span of source is.
type SpanClass string

// The classes of Spans.
const (
	SpanKeyword SpanClass = "kw"    // a word of the language: workflow, node, edge, ...
	SpanType    SpanClass = "type"  // a type name: String, Int, Enum, ...
	SpanName    SpanClass = "name"  // any other identifier
	SpanString  SpanClass = "str"   // a string, quoted or raw
	SpanNumber  SpanClass = "num"   // a number or a duration
	SpanComment SpanClass = "com"   // a comment, to the end of its line
	SpanPunct   SpanClass = "punct" // an operator or a delimiter
	SpanError   SpanClass = "err"   // a character that starts no token
)

// keywords are the words .wf declarations and fields are made of.
var keywords = map[string]bool{
	"import": true, "as": true, "workflow": true, "action": true, "mcp": true, "nodes": true, "node": true, "edges": true,
	"edge": true, "from": true, "to": true, "type": true, "initial": true, "finals": true, "parameters": true,
	"variables": true, "inputs": true, "outputs": true, "condition": true, "update": true, "set": true,
	"true": true, "false": true, "null": true, "prompt": true, "question": true, "description": true,
	"map": true, "over": true, "retry": true, "timeout": true, "fallback": true, "max_time": true,
}

// types are the type names of .wf.
var types = map[string]bool{
	"String": true, "Int": true, "Float": true, "Bool": true, "Enum": true, "List": true, "Object": true,
	"Any": true, "Duration": true, "Time": true, "Null": true,
	"LLM": true, "HUMAN": true, "END": true, "HTTP": true, "WORKFLOW": true, "MAP": true, "TOOL": true,
}

// Highlight splits .wf source into the Spans a colouring shows, in
// order. It never fails: text that does not scan is a SpanError span,
// and the rest goes on.
func Highlight(src []byte) []Span {
	lines := []int{0}
	for i, c := range src {
		if c == '\n' {
			lines = append(lines, i+1)
		}
	}
	off := func(p flow.Pos) int {
		if p.Line < 1 || p.Line > len(lines) {
			return len(src)
		}
		return min(lines[p.Line-1]+p.Col-1, len(src))
	}
	s := newScanner("", src, func(flow.Pos, string, string) {})
	s.quiet = true
	var out []Span
	for {
		t := s.scan()
		if t.kind == tEOF {
			break
		}
		start, end := off(t.pos), off(t.end)
		if end <= start {
			continue
		}
		var c SpanClass
		switch t.kind {
		case tNewline:
			continue
		case tIdent:
			switch {
			case keywords[t.lit]:
				c = SpanKeyword
			case types[t.lit]:
				c = SpanType
			default:
				c = SpanName
			}
		case tInt, tFloat, tDuration:
			c = SpanNumber
		case tString:
			c = SpanString
		case tIllegal:
			c = SpanError
		default:
			c = SpanPunct
		}
		out = append(out, Span{start, end, c})
	}
	for _, cm := range s.comments {
		start := off(cm.Pos)
		out = append(out, Span{start, start + len(cm.Text), SpanComment})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}
