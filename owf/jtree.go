package owf

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jkind is the kind of a JSON value in a parsed document.
type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func (k jkind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// jnode is one JSON value of a document with the byte offset it starts at,
// so that every error can name its line and column as well as its path.
type jnode struct {
	kind jkind
	off  int
	b    bool
	s    string // a string's decoded text, or a number's literal text
	arr  []*jnode
	keys []string // an object's keys in document order
	vals []*jnode // parallel to keys
	raw  string   // the value's source text
}

// field returns the member called name, or nil.
func (n *jnode) field(name string) *jnode {
	// The last of duplicate keys wins, as with serde_json maps.
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == name {
			return n.vals[i]
		}
	}
	return nil
}

// jparser is a recursive-descent JSON parser that keeps offsets.
type jparser struct {
	src   string
	pos   int
	depth int
}

// syntaxError is a JSON syntax error at a byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// parseJSON parses src as one JSON document.
func parseJSON(src string) (*jnode, error) {
	p := &jparser{src: src}
	if strings.HasPrefix(src, "\ufeff") {
		p.pos = 3
	}
	p.space()
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(p.src) {
		return nil, &syntaxError{p.pos, fmt.Sprintf("unexpected %s after the document", p.what())}
	}
	return n, nil
}

func (p *jparser) space() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// what describes the text at the current position for an error.
func (p *jparser) what() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return strconv.QuoteRune(r)
}

const maxDepth = 512

func (p *jparser) value() (*jnode, error) {
	if p.pos >= len(p.src) {
		return nil, &syntaxError{p.pos, "unexpected end of input, expected a value"}
	}
	start := p.pos
	var n *jnode
	var err error
	switch c := p.src[p.pos]; {
	case c == '{':
		n, err = p.object()
	case c == '[':
		n, err = p.array()
	case c == '"':
		var s string
		s, err = p.str()
		n = &jnode{kind: jString, s: s}
	case c == 't' && strings.HasPrefix(p.src[p.pos:], "true"):
		p.pos += 4
		n = &jnode{kind: jBool, b: true}
	case c == 'f' && strings.HasPrefix(p.src[p.pos:], "false"):
		p.pos += 5
		n = &jnode{kind: jBool}
	case c == 'n' && strings.HasPrefix(p.src[p.pos:], "null"):
		p.pos += 4
		n = &jnode{kind: jNull}
	case c == '-' || c >= '0' && c <= '9':
		n, err = p.number()
	default:
		return nil, &syntaxError{p.pos, fmt.Sprintf("unexpected %s, expected a value", p.what())}
	}
	if err != nil {
		return nil, err
	}
	n.off = start
	n.raw = p.src[start:p.pos]
	return n, nil
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return &syntaxError{p.pos, "nesting too deep"}
	}
	return nil
}

func (p *jparser) object() (*jnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // {
	n := &jnode{kind: jObject}
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		return n, nil
	}
	for {
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, &syntaxError{p.pos, fmt.Sprintf("unexpected %s, expected a string key", p.what())}
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, &syntaxError{p.pos, fmt.Sprintf("unexpected %s, expected ':'", p.what())}
		}
		p.pos++
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, k)
		n.vals = append(n.vals, v)
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			return n, nil
		}
		return nil, &syntaxError{p.pos, fmt.Sprintf("unexpected %s, expected ',' or '}'", p.what())}
	}
}

func (p *jparser) array() (*jnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // [
	n := &jnode{kind: jArray}
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		return n, nil
	}
	for {
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.arr = append(n.arr, v)
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			return n, nil
		}
		return nil, &syntaxError{p.pos, fmt.Sprintf("unexpected %s, expected ',' or ']'", p.what())}
	}
}

func (p *jparser) str() (string, error) {
	start := p.pos
	p.pos++ // "
	escaped := false
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			raw := p.src[start:p.pos]
			if !escaped {
				if !utf8.ValidString(raw) {
					return "", &syntaxError{start, "invalid UTF-8 in a string"}
				}
				return raw[1 : len(raw)-1], nil
			}
			var s string
			if err := json.Unmarshal([]byte(raw), &s); err != nil {
				return "", &syntaxError{start, "invalid string: " + strings.TrimPrefix(err.Error(), "json: ")}
			}
			return s, nil
		case c == '\\':
			escaped = true
			p.pos += 2
		case c < 0x20:
			return "", &syntaxError{p.pos, "control character in a string"}
		default:
			p.pos++
		}
	}
	return "", &syntaxError{start, "unterminated string"}
}

func (p *jparser) number() (*jnode, error) {
	start := p.pos
	if p.src[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		s := p.pos
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		return p.pos - s
	}
	intStart := p.pos
	n := digits()
	if n == 0 {
		return nil, &syntaxError{p.pos, "invalid number"}
	}
	if n > 1 && p.src[intStart] == '0' {
		return nil, &syntaxError{intStart, "invalid number: leading zero"}
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, &syntaxError{p.pos, "invalid number: no digit after '.'"}
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, &syntaxError{p.pos, "invalid number: no digit in the exponent"}
		}
	}
	return &jnode{kind: jNumber, s: p.src[start:p.pos]}, nil
}

// lineCol converts a byte offset of src to a 1-based line and column (in
// bytes, as go/scanner counts).
func lineCol(src string, off int) (line, col int) {
	if off > len(src) {
		off = len(src)
	}
	line = 1 + strings.Count(src[:off], "\n")
	col = off - strings.LastIndexByte(src[:off], '\n')
	return line, col
}
