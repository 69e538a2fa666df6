package lang

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
)

// tokenKind classifies a token.
type tokenKind int

const (
	tEOF tokenKind = iota
	tNewline
	tIdent
	tInt
	tFloat
	tString
	tDuration
	tLbrace  // {
	tRbrace  // }
	tLbrack  // [
	tRbrack  // ]
	tLparen  // (
	tRparen  // )
	tColon   // :
	tComma   // ,
	tDot     // .
	tAssign  // =
	tSemi    // ; used as a separator
	tOr      // ||
	tAnd     // &&
	tEq      // ==
	tNeq     // !=
	tLt      // <
	tLe      // <=
	tGt      // >
	tGe      // >=
	tAdd     // +
	tSub     // -
	tMul     // *
	tDiv     // /
	tRem     // %
	tNot     // !
	tIllegal // a character that starts no token
)

var tokenText = [...]string{
	tLbrace: "{", tRbrace: "}", tLbrack: "[", tRbrack: "]", tLparen: "(", tRparen: ")",
	tColon: ":", tComma: ",", tDot: ".", tAssign: "=", tSemi: ";",
	tOr: "||", tAnd: "&&", tEq: "==", tNeq: "!=", tLt: "<", tLe: "<=", tGt: ">", tGe: ">=",
	tAdd: "+", tSub: "-", tMul: "*", tDiv: "/", tRem: "%", tNot: "!",
}

// token is one lexical token. lit is the token's source text; for strings
// val holds the decoded value.
type token struct {
	kind tokenKind
	pos  flow.Pos
	end  flow.Pos // position just past the token's last byte
	lit  string
	val  string
}

// describe names the token for "found ..." in diagnostics.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tNewline:
		return "newline"
	case tIdent:
		return strconv.Quote(t.lit)
	case tInt, tFloat:
		return "number " + t.lit
	case tDuration:
		return "duration " + t.lit
	case tString:
		s := t.lit
		if len(s) > 24 || strings.Contains(s, "\n") {
			if i := strings.IndexByte(s, '\n'); i >= 0 && i < 24 {
				s = s[:i]
			} else if len(s) > 24 {
				s = s[:24]
			}
			s += "..."
		}
		return "string " + s
	case tIllegal:
		return strconv.Quote(t.lit)
	}
	if int(t.kind) < len(tokenText) && tokenText[t.kind] != "" {
		return strconv.Quote(tokenText[t.kind])
	}
	return "token"
}

// scanner turns source bytes into tokens. Comments are not returned as
// tokens: they are appended to comments.
type scanner struct {
	file      string
	src       []byte
	off       int // offset of the next unread byte
	line      int // line of src[off]
	lineStart int // offset of the first byte of line
	comments  []*Comment
	errh      func(pos flow.Pos, code, msg string)
	quiet     bool // suppress errors (while peeking)
}

func newScanner(file string, src []byte, errh func(flow.Pos, string, string)) *scanner {
	s := &scanner{file: file, src: src, line: 1, errh: errh}
	// A UTF-8 byte order mark at the very start is ignored.
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		s.off = 3
		s.lineStart = 3
	}
	return s
}

func (s *scanner) pos() flow.Pos {
	return flow.Pos{File: s.file, Line: s.line, Col: s.off - s.lineStart + 1}
}

func (s *scanner) error(pos flow.Pos, code, format string, args ...any) {
	if s.quiet || s.errh == nil {
		return
	}
	s.errh(pos, code, fmt.Sprintf(format, args...))
}

func (s *scanner) peekByte(k int) byte {
	if s.off+k < len(s.src) {
		return s.src[s.off+k]
	}
	return 0
}

func isLetter(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// isIdent reports whether s is a valid identifier.
func isIdent(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// newline records that the byte at off-1 was '\n'.
func (s *scanner) newline() {
	s.line++
	s.lineStart = s.off
}

// scan returns the next token.
func (s *scanner) scan() token {
	for {
		// Skip blanks.
		for s.off < len(s.src) {
			c := s.src[s.off]
			if c == ' ' || c == '\t' || c == '\r' {
				s.off++
				continue
			}
			break
		}
		if s.off >= len(s.src) {
			p := s.pos()
			return token{kind: tEOF, pos: p, end: p}
		}
		c := s.src[s.off]
		start := s.off
		pos := s.pos()
		switch {
		case c == '\n':
			s.off++
			t := token{kind: tNewline, pos: pos, end: flow.Pos{File: s.file, Line: pos.Line, Col: pos.Col + 1}, lit: "\n"}
			s.newline()
			return t
		case c == '/' && s.peekByte(1) == '/', c == '#':
			s.comment()
			continue
		case c == ';':
			if s.semiIsSeparator() {
				s.off++
				return token{kind: tSemi, pos: pos, end: s.pos(), lit: ";"}
			}
			s.comment()
			continue
		case isLetter(c):
			for s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off])) {
				s.off++
			}
			return token{kind: tIdent, pos: pos, end: s.pos(), lit: string(s.src[start:s.off])}
		case isDigit(c):
			return s.number()
		case c == '"':
			if s.peekByte(1) == '"' && s.peekByte(2) == '"' {
				return s.rawString()
			}
			return s.quoted()
		}
		// Operators and punctuation.
		s.off++
		kind := tIllegal
		two := func(next byte, k2, k1 tokenKind) tokenKind {
			if s.off < len(s.src) && s.src[s.off] == next {
				s.off++
				return k2
			}
			return k1
		}
		switch c {
		case '{':
			kind = tLbrace
		case '}':
			kind = tRbrace
		case '[':
			kind = tLbrack
		case ']':
			kind = tRbrack
		case '(':
			kind = tLparen
		case ')':
			kind = tRparen
		case ':':
			kind = tColon
		case ',':
			kind = tComma
		case '.':
			kind = tDot
		case '+':
			kind = tAdd
		case '-':
			kind = tSub
		case '*':
			kind = tMul
		case '/':
			kind = tDiv
		case '%':
			kind = tRem
		case '=':
			kind = two('=', tEq, tAssign)
		case '!':
			kind = two('=', tNeq, tNot)
		case '<':
			kind = two('=', tLe, tLt)
		case '>':
			kind = two('=', tGe, tGt)
		case '&':
			kind = two('&', tAnd, tIllegal)
			if kind == tIllegal {
				s.error(pos, "syntax", `unexpected "&"; did you mean "&&"?`)
			}
		case '|':
			kind = two('|', tOr, tIllegal)
			if kind == tIllegal {
				s.error(pos, "syntax", `unexpected "|"; did you mean "||"?`)
			}
		default:
			// Consume a whole UTF-8 sequence so that the message names the
			// character and columns stay in step.
			_, size := utf8.DecodeRune(s.src[start:])
			s.off = start + size
			r, _ := utf8.DecodeRune(s.src[start:])
			if r == utf8.RuneError && size <= 1 {
				s.error(pos, "syntax", "invalid byte 0x%02x", c)
			} else {
				s.error(pos, "syntax", "invalid character %q", r)
			}
		}
		return token{kind: kind, pos: pos, end: s.pos(), lit: string(s.src[start:s.off])}
	}
}

// comment scans a line comment starting at s.off and records it.
func (s *scanner) comment() {
	start := s.off
	pos := s.pos()
	for s.off < len(s.src) && s.src[s.off] != '\n' {
		s.off++
	}
	text := strings.TrimRight(string(s.src[start:s.off]), " \t\r")
	s.comments = append(s.comments, &Comment{Pos: pos, Text: text})
}

// semiIsSeparator decides the role of the ';' at s.off: it separates fields
// when the rest of its line is empty, a comment, or begins with "}", an
// identifier followed by ":", "=" (not "==") or "{", or a string followed by
// ":". Otherwise it starts a comment.
func (s *scanner) semiIsSeparator() bool {
	i := s.off + 1
	src := s.src
	skip := func() {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r') {
			i++
		}
	}
	skip()
	if i >= len(src) {
		return true
	}
	switch c := src[i]; {
	case c == '\n', c == '}', c == '#':
		return true
	case c == '/' && i+1 < len(src) && src[i+1] == '/':
		return true
	case isLetter(c):
		for i < len(src) && (isLetter(src[i]) || isDigit(src[i])) {
			i++
		}
	case c == '"':
		i++
		for i < len(src) && src[i] != '"' && src[i] != '\n' {
			if src[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(src) || src[i] != '"' {
			return false
		}
		i++
		skip()
		return i < len(src) && src[i] == ':'
	default:
		return false
	}
	skip()
	if i >= len(src) {
		return false
	}
	switch src[i] {
	case ':', '{':
		return true
	case '=':
		return i+1 >= len(src) || src[i+1] != '='
	}
	return false
}

// number scans an integer, a float or a duration.
func (s *scanner) number() token {
	start := s.off
	pos := s.pos()
	for s.off < len(s.src) && isDigit(s.src[s.off]) {
		s.off++
	}
	kind := tInt
	if s.peekByte(0) == '.' && isDigit(s.peekByte(1)) {
		kind = tFloat
		s.off++
		for s.off < len(s.src) && isDigit(s.src[s.off]) {
			s.off++
		}
	}
	if c := s.peekByte(0); c == 'e' || c == 'E' {
		d := s.peekByte(1)
		if isDigit(d) || (d == '+' || d == '-') && isDigit(s.peekByte(2)) {
			kind = tFloat
			s.off += 2
			for s.off < len(s.src) && isDigit(s.src[s.off]) {
				s.off++
			}
			if s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off])) {
				for s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off])) {
					s.off++
				}
				lit := string(s.src[start:s.off])
				s.error(pos, "syntax", "invalid number %q", lit)
				return token{kind: tFloat, pos: pos, end: s.pos(), lit: lit}
			}
			return token{kind: kind, pos: pos, end: s.pos(), lit: string(s.src[start:s.off])}
		}
	}
	if s.off < len(s.src) && (isLetter(s.src[s.off]) || s.src[s.off] >= utf8.RuneSelf) {
		// A duration such as 200ms, 1m30s or 1.5h: units and further
		// numbers up to the first byte that cannot belong to one.
		for s.off < len(s.src) {
			c := s.src[s.off]
			if isLetter(c) || isDigit(c) {
				s.off++
				continue
			}
			if c == '.' && isDigit(s.peekByte(1)) {
				s.off++
				continue
			}
			if c >= utf8.RuneSelf {
				r, size := utf8.DecodeRune(s.src[s.off:])
				if r == 'µ' || r == 'μ' {
					s.off += size
					continue
				}
			}
			break
		}
		lit := string(s.src[start:s.off])
		if _, err := time.ParseDuration(lit); err != nil {
			s.error(pos, "syntax", "invalid duration %q (want a number and a unit: ns, us, ms, s, m, h, as in 200ms or 1m30s)", lit)
		}
		return token{kind: tDuration, pos: pos, end: s.pos(), lit: lit}
	}
	return token{kind: kind, pos: pos, end: s.pos(), lit: string(s.src[start:s.off])}
}

// quoted scans a "..." literal with Go escapes.
func (s *scanner) quoted() token {
	start := s.off
	pos := s.pos()
	s.off++ // opening quote
	for {
		if s.off >= len(s.src) || s.src[s.off] == '\n' {
			s.error(pos, "syntax", "unterminated string")
			lit := string(s.src[start:s.off])
			val, _ := strconv.Unquote(lit + `"`)
			return token{kind: tString, pos: pos, end: s.pos(), lit: lit + `"`, val: val}
		}
		c := s.src[s.off]
		if c == '"' {
			s.off++
			break
		}
		if c == '\\' {
			s.escape()
			continue
		}
		s.off++
	}
	lit := string(s.src[start:s.off])
	val, err := strconv.Unquote(lit)
	if err != nil {
		// escape() has reported the offending sequence; keep what we can.
		val = lit[1 : len(lit)-1]
	}
	return token{kind: tString, pos: pos, end: s.pos(), lit: lit, val: val}
}

// escape checks the escape sequence at s.off and skips it.
func (s *scanner) escape() {
	pos := s.pos()
	s.off++ // backslash
	if s.off >= len(s.src) || s.src[s.off] == '\n' {
		return // reported as unterminated by the caller
	}
	c := s.src[s.off]
	n, base := 0, 0
	switch c {
	case 'a', 'b', 'f', 'n', 'r', 't', 'v', '\\', '"':
		s.off++
		return
	case 'x':
		s.off++
		n, base = 2, 16
	case 'u':
		s.off++
		n, base = 4, 16
	case 'U':
		s.off++
		n, base = 8, 16
	case '0', '1', '2', '3', '4', '5', '6', '7':
		n, base = 3, 8
	default:
		_, size := utf8.DecodeRune(s.src[s.off:])
		s.error(pos, "syntax", "unknown escape sequence %q in string", string(s.src[s.off-1:s.off+size]))
		s.off += size
		return
	}
	var v uint64
	for i := 0; i < n; i++ {
		if s.off >= len(s.src) {
			s.error(pos, "syntax", "escape sequence is too short")
			return
		}
		d := digitVal(s.src[s.off])
		if d >= base {
			s.error(pos, "syntax", "invalid character %q in escape sequence", rune(s.src[s.off]))
			return
		}
		v = v*uint64(base) + uint64(d)
		s.off++
	}
	if base == 8 && v > 255 || (c == 'u' || c == 'U') && (v > utf8.MaxRune || 0xD800 <= v && v < 0xE000) {
		s.error(pos, "syntax", "escape sequence is an invalid Unicode code point")
	}
}

func digitVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return 16
}

// rawString scans a """...""" literal. Its value is the text between the
// delimiters, with no escapes processed, dedented by dedent.
func (s *scanner) rawString() token {
	start := s.off
	pos := s.pos()
	s.off += 3
	for {
		if s.off >= len(s.src) {
			s.error(pos, "syntax", `unterminated multi-line string (missing closing """)`)
			lit := string(s.src[start:]) + `"""`
			return token{kind: tString, pos: pos, end: s.pos(), lit: lit, val: dedent(string(s.src[start+3:]))}
		}
		c := s.src[s.off]
		if c == '"' && s.peekByte(1) == '"' && s.peekByte(2) == '"' {
			s.off += 3
			break
		}
		s.off++
		if c == '\n' {
			s.newline()
		}
	}
	lit := string(s.src[start:s.off])
	return token{kind: tString, pos: pos, end: s.pos(), lit: lit, val: dedent(lit[3 : len(lit)-3])}
}

// dedent computes the value of a """ string from the text between its
// delimiters: carriage returns before newlines are dropped; when the text
// spans several lines, a first line holding only blanks and a last line
// holding only blanks are dropped, then the longest run of leading blanks
// common to all non-blank lines is removed from every line, and lines
// holding only blanks become empty.
func dedent(text string) string {
	if !strings.Contains(text, "\n") {
		return text
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > 1 && isBlank(lines[0]) {
		lines = lines[1:]
	}
	if len(lines) > 1 && isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	prefix := ""
	first := true
	for _, l := range lines {
		if isBlank(l) {
			continue
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = lead, false
			continue
		}
		n := 0
		for n < len(prefix) && n < len(lead) && prefix[n] == lead[n] {
			n++
		}
		prefix = prefix[:n]
	}
	for i, l := range lines {
		if isBlank(l) {
			lines[i] = ""
		} else {
			lines[i] = l[len(prefix):]
		}
	}
	return strings.Join(lines, "\n")
}

func isBlank(s string) bool { return strings.Trim(s, " \t\r") == "" }
