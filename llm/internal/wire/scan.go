// Package wire holds the readers the LLM providers share: a strict JSON
// scanner for the fast path of streamed text events, a server-sent-events
// reader, and a newline-delimited JSON reader. Each counts lines and bytes
// so that a malformed stream is reported with its position.
package wire

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// Scanner walks one JSON value without reflection, for the fast path of
// streamed text events. It is strict: any method meeting something it
// does not fully check returns false, and the caller then decodes the
// event with encoding/json, which also reports malformed JSON precisely.
type Scanner struct {
	b []byte
	i int
}

// NewScanner returns a Scanner over data.
func NewScanner(data []byte) *Scanner { return &Scanner{b: data} }

// WS skips white space.
func (s *Scanner) WS() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Eat consumes c, after white space.
func (s *Scanner) Eat(c byte) bool {
	s.WS()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.WS()
	return s.i == len(s.b)
}

// Peek returns the next byte after white space, 0 at the end.
func (s *Scanner) Peek() byte {
	s.WS()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// RawString reads a string and returns its bytes between the quotes and
// whether it holds escapes.
func (s *Scanner) RawString() (raw []byte, esc, ok bool) {
	if !s.Eat('"') {
		return nil, false, false
	}
	start, quote := s.i, -1
	for {
		// The next quote ends the string unless a backslash comes
		// first; both are found by fast searches, each byte looked at
		// once (the quote is searched for again only after an escape
		// that held it).
		if quote < s.i {
			q := bytes.IndexByte(s.b[s.i:], '"')
			if q < 0 {
				return nil, false, false
			}
			quote = s.i + q
		}
		span := s.b[s.i:quote]
		k := bytes.IndexByte(span, '\\')
		if k >= 0 {
			span = span[:k]
		}
		for _, c := range span {
			if c < 0x20 {
				return nil, false, false
			}
		}
		if k < 0 {
			raw = s.b[start:quote]
			s.i = quote + 1
			return raw, esc, true
		}
		s.i += k
		esc = true
		if s.i+1 >= len(s.b) {
			return nil, false, false
		}
		switch s.b[s.i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.i += 2
		case 'u':
			if s.i+6 > len(s.b) || !hex4(s.b[s.i+2:s.i+6]) {
				return nil, false, false
			}
			s.i += 6
		default:
			return nil, false, false
		}
	}
}

// Str reads a string value; invalid UTF-8 is left to encoding/json.
func (s *Scanner) Str() (string, bool) {
	raw, esc, ok := s.RawString()
	if !ok {
		return "", false
	}
	return Unquote(raw, esc)
}

// Unquote decodes the body of a string RawString read, with its escapes
// if esc; invalid UTF-8 is left to encoding/json (ok is false).
func Unquote(raw []byte, esc bool) (string, bool) {
	if !utf8.Valid(raw) {
		return "", false
	}
	if !esc {
		return string(raw), true
	}
	return unescape(raw)
}

// IsString reports whether the next value is the string want.
func (s *Scanner) IsString(want string) bool {
	raw, esc, ok := s.RawString()
	return ok && !esc && string(raw) == want
}

// Literal consumes the literal lit.
func (s *Scanner) Literal(lit string) bool {
	s.WS()
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// Number consumes a number in JSON's grammar.
func (s *Scanner) Number() bool {
	s.WS()
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	s.i = i
	return true
}

// SmallInt reads a non-negative integer of at most 9 digits, without
// leading zeros.
func (s *Scanner) SmallInt() (int, bool) {
	s.WS()
	start, n := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' && s.i-start < 9 {
		n = n*10 + int(s.b[s.i]-'0')
		s.i++
	}
	return n, s.i > start && (s.b[start] != '0' || s.i == start+1)
}

// Skip consumes any value.
func (s *Scanner) Skip() bool {
	return s.skipDepth(0)
}

func (s *Scanner) skipDepth(depth int) bool {
	if depth > 64 {
		return false
	}
	switch s.Peek() {
	case '"':
		_, _, ok := s.RawString()
		return ok
	case '{':
		return s.Object(func([]byte) bool { return s.skipDepth(depth + 1) })
	case '[':
		return s.Array(func() bool { return s.skipDepth(depth + 1) })
	case 't':
		return s.Literal("true")
	case 'f':
		return s.Literal("false")
	case 'n':
		return s.Literal("null")
	}
	return s.Number()
}

// Object walks an object, calling member for each key (keys with escapes
// are refused); member consumes the value.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	if !s.Eat('{') {
		return false
	}
	if s.Eat('}') {
		return true
	}
	for {
		raw, esc, ok := s.RawString()
		if !ok || esc || !s.Eat(':') {
			return false
		}
		if !member(raw) {
			return false
		}
		if s.Eat(',') {
			continue
		}
		return s.Eat('}')
	}
}

// Array walks an array, calling elem for each element.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.Eat('[') {
		return false
	}
	if s.Eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.Eat(',') {
			continue
		}
		return s.Eat(']')
	}
}

func hex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func hexVal(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// unescape decodes the escapes of a checked string body, as
// encoding/json does (lone surrogates become U+FFFD).
func unescape(raw []byte) (string, bool) {
	out, ok := appendUnescaped(make([]byte, 0, len(raw)), raw)
	return string(out), ok
}

// appendUnescaped appends the checked string body raw with its escapes
// decoded, as encoding/json decodes them: never more bytes than raw has.
func appendUnescaped(out, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hexVal(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2 := utf16.DecodeRune(r, hexVal(raw[i+2:i+6])); r2 != utf8.RuneError {
						out = utf8.AppendRune(out, r2)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return out, false
		}
		i += 2
	}
	return out, true
}

// Once marks key bit in *seen and reports whether it was not seen
// before: the fast paths refuse duplicate keys, whose meaning under
// encoding/json is subtle.
func Once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// FoldsTo reports whether key matches one of names the way encoding/json
// matches keys to fields (case-insensitively); the fast paths refuse such
// near-misses rather than mimic them.
func FoldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}
