// Package prompt renders prompt templates over named flow values.
//
// A template is text with placeholders in double braces:
//
//	{{name}}            the value of name: a String as its text, null as
//	                    nothing, anything else as compact JSON
//	{{node.field}}      a field of an Object value (or a value stored under
//	                    the dotted name itself)
//	{{json name}}       the value as indented JSON (a String is quoted)
//	{{history}}         the conversation history in the value "history",
//	                    the last 5 turns, as "Human: ...\nAI: ..." lines
//	{{history 3}}       the last 3 turns (0: every turn)
//	{{history msgs 3}}  the last 3 turns of the value "msgs"
//	{{"{{"}}            a quoted string, written as is (to write "{{")
//
// Spaces inside the braces are allowed: {{ name }}. Parse reports a bad
// placeholder with its line and column; Names lists the values a template
// needs, so a checker can compare them with a node's inputs before the
// workflow runs; Render fails on a value that is missing.
package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
)

// DefaultHistoryTurns is the number of turns {{history}} renders, as seed
// 003's _convert_history_to_messages keeps the last 5.
const DefaultHistoryTurns = 5

// HistoryName is the value {{history}} reads when no name is given.
const HistoryName = "history"

// The placeholder functions.
const (
	FuncValue   = ""        // {{name}}
	FuncJSON    = "json"    // {{json name}}
	FuncHistory = "history" // {{history}}
	funcLiteral = "literal" // {{"text"}}
)

// Placeholder is one {{...}} of a template.
type Placeholder struct {
	Func  string // FuncValue, FuncJSON or FuncHistory
	Name  string // the value it reads, dotted for a field: "node.field"
	Turns int    // for FuncHistory: how many turns (0: all)
	Line  int    // 1-based line of the opening braces
	Col   int    // 1-based column (in characters) of the opening braces
}

// Template is a parsed prompt template. It is immutable and safe for
// concurrent use.
type Template struct {
	src   string
	parts []part
}

// part is literal text, or a placeholder.
type part struct {
	text string
	ph   *Placeholder
	lit  bool // ph is nil and text is literal
}

// SyntaxError reports a malformed placeholder.
type SyntaxError struct {
	Line, Col int // where the problem is, 1-based (column in characters)
	Msg       string
}

// Error writes "prompt: line:col: message".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("prompt: %d:%d: %s", e.Line, e.Col, e.Msg)
}

// MissingError reports placeholders whose values were not given to Render.
type MissingError struct {
	Names     []string // every missing name, in template order
	Line, Col int      // where the first one is used
}

// Error names the missing values.
func (e *MissingError) Error() string {
	q := make([]string, len(e.Names))
	for i, n := range e.Names {
		q[i] = strconv.Quote(n)
	}
	what := "no value for "
	if len(q) > 1 {
		what = "no values for "
	}
	return fmt.Sprintf("prompt: %d:%d: %s%s", e.Line, e.Col, what, strings.Join(q, ", "))
}

// RenderError reports a value that cannot be rendered where it is used: a
// field of something that is not an Object, a history that is not a list
// of turns, a Float with no JSON form.
type RenderError struct {
	Name      string
	Line, Col int
	Err       error
}

// Error names the placeholder and the problem.
func (e *RenderError) Error() string {
	return fmt.Sprintf("prompt: %d:%d: %s: %v", e.Line, e.Col, e.Name, e.Err)
}

// Unwrap returns the cause.
func (e *RenderError) Unwrap() error { return e.Err }

// Parse parses a template.
func Parse(text string) (*Template, error) {
	t := &Template{src: text}
	line, col := 1, 1 // position of text[pos]
	advance := func(s string) {
		for _, r := range s {
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
	}
	rest := text
	for rest != "" {
		open := strings.Index(rest, "{{")
		if open < 0 {
			t.parts = append(t.parts, part{text: rest, lit: true})
			break
		}
		if open > 0 {
			t.parts = append(t.parts, part{text: rest[:open], lit: true})
			advance(rest[:open])
		}
		startLine, startCol := line, col
		body := rest[open+2:]
		end := closing(body)
		if end < 0 {
			return nil, &SyntaxError{Line: startLine, Col: startCol, Msg: "unclosed {{: want }}"}
		}
		inner := body[:end]
		p, err := parsePlaceholder(inner, startLine, startCol+2)
		if err != nil {
			return nil, err
		}
		if p.Func == funcLiteral {
			t.parts = append(t.parts, part{text: p.Name, lit: true})
		} else {
			t.parts = append(t.parts, part{ph: p})
		}
		advance(rest[open : open+2+end+2])
		rest = body[end+2:]
	}
	return t, nil
}

// closing finds the "}}" that ends a placeholder body on its line,
// skipping a quoted string; -1 if there is none. When a quote is left open,
// the first "}}" ends the body, so that the error is the open quote.
func closing(body string) int {
	if i := closingQuoted(body); i >= 0 {
		return i
	}
	line, _, _ := strings.Cut(body, "\n")
	return strings.Index(line, "}}")
}

// closingQuoted is closing for a body whose quotes are all closed; -1
// otherwise.
func closingQuoted(body string) int {
	inStr, esc := false, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '\n':
			return -1 // placeholders are on one line
		case c == '}' && strings.HasPrefix(body[i:], "}}"):
			return i
		}
	}
	return -1
}

// parsePlaceholder parses the text between the braces; line and col are
// the position of its first character.
func parsePlaceholder(inner string, line, col int) (*Placeholder, error) {
	type word struct {
		s   string
		col int
	}
	var words []word
	for i := 0; i < len(inner); {
		r, size := utf8.DecodeRuneInString(inner[i:])
		if r == ' ' || r == '\t' {
			i += size
			continue
		}
		start := i
		if r == '"' {
			end := closingQuote(inner, i)
			if end < 0 {
				return nil, &SyntaxError{Line: line, Col: col + utf8.RuneCountInString(inner[:i]), Msg: "unterminated string"}
			}
			i = end
		} else {
			for i < len(inner) && inner[i] != ' ' && inner[i] != '\t' {
				i++
			}
		}
		words = append(words, word{inner[start:i], col + utf8.RuneCountInString(inner[:start])})
	}
	errAt := func(w word, format string, args ...any) error {
		return &SyntaxError{Line: line, Col: w.col, Msg: fmt.Sprintf(format, args...)}
	}
	if len(words) == 0 {
		return nil, &SyntaxError{Line: line, Col: col - 2, Msg: "empty placeholder {{}}: want a name"}
	}
	ph := &Placeholder{Line: line, Col: col - 2}
	w0 := words[0]
	switch {
	case strings.HasPrefix(w0.s, `"`):
		if len(words) > 1 {
			return nil, errAt(words[1], "unexpected %q after a quoted string", words[1].s)
		}
		s, err := strconv.Unquote(w0.s)
		if err != nil {
			return nil, errAt(w0, "bad quoted string %s", w0.s)
		}
		ph.Func, ph.Name = funcLiteral, s
	case w0.s == FuncJSON:
		if len(words) != 2 {
			if len(words) < 2 {
				return nil, errAt(w0, "json needs a name: {{json name}}")
			}
			return nil, errAt(words[2], "unexpected %q: json takes one name", words[2].s)
		}
		if err := checkName(words[1].s); err != "" {
			return nil, errAt(words[1], "%s", err)
		}
		ph.Func, ph.Name = FuncJSON, words[1].s
	case w0.s == FuncHistory:
		ph.Func, ph.Name, ph.Turns = FuncHistory, HistoryName, DefaultHistoryTurns
		args := words[1:]
		if len(args) > 0 && !isDigits(args[0].s) {
			if err := checkName(args[0].s); err != "" {
				return nil, errAt(args[0], "%s", err)
			}
			ph.Name = args[0].s
			args = args[1:]
		}
		if len(args) > 0 {
			if !isDigits(args[0].s) {
				return nil, errAt(args[0], "history: want a number of turns, got %q", args[0].s)
			}
			n, err := strconv.Atoi(args[0].s)
			if err != nil {
				return nil, errAt(args[0], "history: bad number of turns %q", args[0].s)
			}
			ph.Turns = n
			args = args[1:]
		}
		if len(args) > 0 {
			return nil, errAt(args[0], "unexpected %q: want {{history [name] [turns]}}", args[0].s)
		}
	default:
		if len(words) > 1 {
			if checkName(w0.s) == "" {
				return nil, errAt(w0, "unknown function %q: want json or history, or a single name", w0.s)
			}
			return nil, errAt(words[1], "unexpected %q after %q", words[1].s, w0.s)
		}
		if err := checkName(w0.s); err != "" {
			return nil, errAt(w0, "%s", err)
		}
		ph.Func, ph.Name = FuncValue, w0.s
	}
	return ph, nil
}

// closingQuote returns the offset just past the quoted string starting at
// s[i], or -1.
func closingQuote(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// checkName returns what is wrong with a dotted name, or "".
func checkName(s string) string {
	for seg := range strings.SplitSeq(s, ".") {
		if seg == "" {
			return fmt.Sprintf("bad name %q: empty segment", s)
		}
		for i, r := range seg {
			ok := r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9'
			if !ok {
				return fmt.Sprintf("bad name %q: want letters, digits and _, not starting with a digit", s)
			}
		}
	}
	return ""
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// String returns the template's source text.
func (t *Template) String() string { return t.src }

// Placeholders returns the template's placeholders in order.
func (t *Template) Placeholders() []Placeholder {
	var out []Placeholder
	for _, p := range t.parts {
		if p.ph != nil {
			out = append(out, *p.ph)
		}
	}
	return out
}

// Names returns the names of the values the template reads, each once, in
// the order they first appear: "question", "node.field", "history".
func (t *Template) Names() []string {
	var out []string
	for _, p := range t.parts {
		if p.ph != nil && !slices.Contains(out, p.ph.Name) {
			out = append(out, p.ph.Name)
		}
	}
	return out
}

// Render fills the placeholders from values. A placeholder whose value is
// missing is a *MissingError that names every missing value; a value that
// cannot be rendered is a *RenderError.
func (t *Template) Render(values map[string]flow.Value) (string, error) {
	var b strings.Builder
	var missing *MissingError
	for _, p := range t.parts {
		if p.ph == nil {
			b.WriteString(p.text)
			continue
		}
		ph := p.ph
		v, ok, err := lookup(values, ph.Name)
		if err != nil {
			return "", &RenderError{Name: ph.Name, Line: ph.Line, Col: ph.Col, Err: err}
		}
		if !ok {
			if missing == nil {
				missing = &MissingError{Line: ph.Line, Col: ph.Col}
			}
			if !slices.Contains(missing.Names, ph.Name) {
				missing.Names = append(missing.Names, ph.Name)
			}
			continue
		}
		if missing != nil {
			continue // only collecting the missing names now
		}
		if err := renderOne(&b, ph, v); err != nil {
			return "", &RenderError{Name: ph.Name, Line: ph.Line, Col: ph.Col, Err: err}
		}
	}
	if missing != nil {
		return "", missing
	}
	return b.String(), nil
}

// lookup finds a dotted name: the whole name as a key first, then the
// first segment and fields of Objects from there.
func lookup(values map[string]flow.Value, name string) (flow.Value, bool, error) {
	if v, ok := values[name]; ok {
		return v, true, nil
	}
	segs := strings.Split(name, ".")
	v, ok := values[segs[0]]
	if !ok {
		return flow.Null, false, nil
	}
	for i, seg := range segs[1:] {
		if v.Kind() != flow.KindObject {
			if v.IsNull() {
				return flow.Null, false, nil
			}
			return flow.Null, false, fmt.Errorf("%s is a %s, not an Object", strings.Join(segs[:i+1], "."), v.Kind())
		}
		if v, ok = v.Object()[seg]; !ok {
			return flow.Null, false, nil
		}
	}
	return v, true, nil
}

// renderOne writes the value of one placeholder.
func renderOne(b *strings.Builder, ph *Placeholder, v flow.Value) error {
	switch ph.Func {
	case FuncJSON:
		raw, err := v.MarshalJSON()
		if err != nil {
			return err
		}
		var out bytes.Buffer
		if err := json.Indent(&out, raw, "", "  "); err != nil {
			return err
		}
		b.Write(out.Bytes())
	case FuncHistory:
		return renderHistory(b, v, ph.Turns)
	default:
		return renderValue(b, v)
	}
	return nil
}

// renderValue writes a value as prompt text: a String as is, null as
// nothing, a Duration as "1m30s", anything else as compact JSON.
func renderValue(b *strings.Builder, v flow.Value) error {
	switch v.Kind() {
	case flow.KindNull:
	case flow.KindString, flow.KindDuration:
		b.WriteString(v.Text())
	default:
		raw, err := v.MarshalJSON()
		if err != nil {
			return err
		}
		b.Write(raw)
	}
	return nil
}
