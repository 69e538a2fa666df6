package openai

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner walks one JSON value without reflection, for the fast path of
// streamed text events. It is strict: any method meeting something it
// does not fully check returns false, and the caller then decodes the
// event with encoding/json, which also reports malformed JSON precisely.
// (This file is the same in the ollama, openai and anthropic packages.)
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// eat consumes c, after white space.
func (s *scanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// peek returns the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// rawString reads a string and returns its bytes between the quotes and
// whether it holds escapes.
func (s *scanner) rawString() (raw []byte, esc, ok bool) {
	if !s.eat('"') {
		return nil, false, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, esc, true
		case c == '\\':
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
		case c < 0x20:
			return nil, false, false
		default:
			s.i++
		}
	}
	return nil, false, false
}

// str reads a string value; invalid UTF-8 is left to encoding/json.
func (s *scanner) str() (string, bool) {
	raw, esc, ok := s.rawString()
	if !ok || !utf8.Valid(raw) {
		return "", false
	}
	if !esc {
		return string(raw), true
	}
	return unescape(raw)
}

// isString reports whether the next value is the string want.
func (s *scanner) isString(want string) bool {
	raw, esc, ok := s.rawString()
	return ok && !esc && string(raw) == want
}

// literal consumes the literal lit.
func (s *scanner) literal(lit string) bool {
	s.ws()
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// number consumes a number in JSON's grammar.
func (s *scanner) number() bool {
	s.ws()
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

// skip consumes any value.
func (s *scanner) skip() bool {
	return s.skipDepth(0)
}

func (s *scanner) skipDepth(depth int) bool {
	if depth > 64 {
		return false
	}
	switch s.peek() {
	case '"':
		_, _, ok := s.rawString()
		return ok
	case '{':
		return s.object(func([]byte) bool { return s.skipDepth(depth + 1) })
	case '[':
		return s.array(func() bool { return s.skipDepth(depth + 1) })
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	return s.number()
}

// object walks an object, calling member for each key (keys with escapes
// are refused); member consumes the value.
func (s *scanner) object(member func(key []byte) bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	for {
		raw, esc, ok := s.rawString()
		if !ok || esc || !s.eat(':') {
			return false
		}
		if !member(raw) {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat('}')
	}
}

// array walks an array, calling elem for each element.
func (s *scanner) array(elem func() bool) bool {
	if !s.eat('[') {
		return false
	}
	if s.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat(']')
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
	out := make([]byte, 0, len(raw))
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
			return "", false
		}
		i += 2
	}
	return string(out), true
}

// once marks key bit in *seen and reports whether it was not seen
// before: the fast paths refuse duplicate keys, whose meaning under
// encoding/json is subtle.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// foldsTo reports whether key matches one of names the way encoding/json
// matches keys to fields (case-insensitively); the fast paths refuse such
// near-misses rather than mimic them.
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// fastText reads a streamed chunk that carries only text: one choice at
// index 0 whose delta has content (and possibly a role), with no
// finish_reason, usage or error. ok is false for any other chunk.
func fastText(data []byte) (text string, ok bool) {
	s := scanner{b: data}
	var top, choice, delta uint32
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			n := 0
			return once(&top, 1) && s.array(func() bool {
				n++
				return n == 1 && s.object(func(k []byte) bool {
					switch string(k) {
					case "delta":
						return once(&choice, 1) && s.object(func(k []byte) bool {
							switch string(k) {
							case "content":
								var ok bool
								text, ok = s.str()
								return once(&delta, 1) && ok
							case "role":
								return once(&delta, 2) && s.isString("assistant")
							case "refusal":
								return once(&delta, 4) && s.literal("null")
							}
							return false
						})
					case "index":
						return once(&choice, 2) && s.literal("0")
					case "finish_reason":
						return once(&choice, 4) && s.literal("null")
					case "logprobs":
						return once(&choice, 8) && s.literal("null")
					}
					return false
				})
			}) && n == 1
		case "usage":
			return once(&top, 2) && s.literal("null")
		case "model":
			_, _, ok := s.rawString()
			return once(&top, 4) && ok
		}
		return !foldsTo(key, "choices", "usage", "error", "model") && s.skip()
	}) && s.end()
	return text, ok && delta&1 != 0
}
