// Package canon reproduces the JSON canonicalization that the ollama-workflows
// reference performs on every value it stores: serde_json 1.0.128 (default
// features: no preserve_order, no arbitrary_precision, no float_roundtrip)
// parses the text with from_str::<Value> and later prints it with to_string.
//
// The observable effects, all reproduced here byte for byte:
//
//   - only space, \t, \n and \r count as whitespace; it is dropped;
//   - object keys come out sorted by byte order (BTreeMap<String, Value>) and a
//     repeated key keeps its last value;
//   - nesting is limited to 127 open arrays/objects (serde_json starts a
//     remaining-depth counter at 128 and fails when it reaches 0);
//   - numbers: an integer literal that fits u64 (or, negative, i64) is kept as
//     an integer; everything else becomes an f64 computed with serde_json's
//     fast, not always correctly rounded, algorithm (significand times or
//     divided by a power of ten), "-0" becomes -0.0, and a float that
//     overflows is an error; floats print the way ryu does (7.0, 1e100,
//     1.5e-7, 0.0001);
//   - strings: escapes are decoded (lone surrogates are errors, raw control
//     characters are errors) and re-encoded escaping only '"', '\\' and bytes
//     below 0x20.
package canon

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxDepth is the deepest nesting serde_json accepts: its remaining_depth
// starts at 128, every '[' or '{' decrements it and it fails on reaching 0.
const maxDepth = 127

// Canonical parses text as one JSON document the way serde_json does and
// returns its compact re-encoding with object keys sorted. ok is false when
// serde_json would reject the text (then the caller keeps the text as a plain
// string).
func Canonical(text string) (out string, ok bool) {
	p := getParser()
	defer putParser(p)
	buf, ok := p.run(p.out[:0], text)
	p.out = buf
	if !ok {
		return "", false
	}
	if string(buf) == text {
		return text, true
	}
	return string(buf), true
}

// AppendCanonical is the allocation-conscious form of Canonical: it appends the
// canonical form of text to dst. On failure it returns dst unchanged (same
// length) and false.
func AppendCanonical(dst []byte, text string) ([]byte, bool) {
	p := getParser()
	defer putParser(p)
	n := len(dst)
	out, ok := p.run(dst, text)
	if !ok {
		return out[:n], false
	}
	return out, true
}

// Quote returns s encoded as a JSON string the way serde_json writes it: '"'
// and '\\' are escaped, \b \f \n \r \t use their short escapes, other bytes
// below 0x20 become \u00XX with lower-case hex, and nothing else is escaped
// (not '/', not non-ASCII, not U+2028). Bytes that are not valid UTF-8 (which
// a Rust String cannot hold) are copied unchanged.
func Quote(s string) string {
	return string(AppendQuote(make([]byte, 0, len(s)+2), s))
}

// AppendQuote appends Quote(s) to dst.
func AppendQuote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscapedByte(dst, c)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscapedByte appends serde_json's escape for '"', '\\' or a control
// byte (< 0x20).
func appendEscapedByte(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
}

// FormatFloat formats a finite float64 the way serde_json (ryu format64)
// does: 1.5, 7.0, 1e100, 1.2345678901234568e20, 1e-7, -0.0, 0.0001.
// Non-finite values, which serde_json never prints as numbers, format as
// "null" (what serde_json's serializer writes for them).
func FormatFloat(f float64) string {
	var b [32]byte
	return string(AppendFloat(b[:0], f))
}

// AppendFloat appends FormatFloat(f) to dst.
func AppendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	// Shortest round-trip digits. Go's 'e' formatting with precision -1 is
	// itself Ryu-based and yields the same digit string and exponent as
	// ryu's d2d; only the layout below is ryu's pretty printer.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	// e is d[.ddd]e±XX
	var digits [20]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	i++
	neg := e[i] == '-'
	i++
	exp := 0
	for ; i < len(e); i++ {
		exp = exp*10 + int(e[i]-'0')
	}
	if neg {
		exp = -exp
	}
	d := digits[:nd]
	length := nd
	kk := exp + 1 // 10^(kk-1) <= |f| < 10^kk
	k := kk - length
	switch {
	case 0 <= k && kk <= 16:
		// 1234e7 -> 12340000000.0
		dst = append(dst, d...)
		for j := 0; j < k; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, '.', '0')
	case 0 < kk && kk <= 16:
		// 1234e-2 -> 12.34
		dst = append(dst, d[:kk]...)
		dst = append(dst, '.')
		dst = append(dst, d[kk:]...)
	case -5 < kk && kk <= 0:
		// 1234e-6 -> 0.001234
		dst = append(dst, '0', '.')
		for j := kk; j < 0; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	case length == 1:
		// 1e30
		dst = append(dst, d[0], 'e')
		dst = strconv.AppendInt(dst, int64(kk-1), 10)
	default:
		// 1234e30 -> 1.234e33
		dst = append(dst, d[0], '.')
		dst = append(dst, d[1:]...)
		dst = append(dst, 'e')
		dst = strconv.AppendInt(dst, int64(kk-1), 10)
	}
	return dst
}

// pow10 is serde_json's POW10 table: the correctly rounded f64 values of
// 1e0 ... 1e308.
var pow10 = func() (t [309]float64) {
	for i := range t {
		f, err := strconv.ParseFloat("1e"+strconv.Itoa(i), 64)
		if err != nil {
			panic(err)
		}
		t[i] = f
	}
	return t
}()

// member is one object entry already written to the output buffer: the
// decoded key (for ordering) and the span key:value in the buffer.
type member struct {
	key        string
	start, end int
}

type parser struct {
	s       string
	i       int
	members []member // stack shared by all open objects
	tmp     []byte   // scratch for reordering objects and decoding keys
	out     []byte   // reused by Canonical
}

var parserPool = sync.Pool{New: func() any { return new(parser) }}

func getParser() *parser { return parserPool.Get().(*parser) }

func putParser(p *parser) {
	if cap(p.out) > 64<<10 || cap(p.tmp) > 64<<10 || cap(p.members) > 4096 {
		return // do not keep huge buffers alive
	}
	p.s = ""
	p.members = p.members[:0]
	parserPool.Put(p)
}

func (p *parser) run(dst []byte, text string) ([]byte, bool) {
	p.s = text
	p.i = 0
	p.members = p.members[:0]
	p.skipWS()
	if p.i >= len(p.s) {
		return dst, false
	}
	dst, ok := p.value(dst, 0)
	if !ok {
		return dst, false
	}
	p.skipWS()
	if p.i != len(p.s) {
		return dst, false // trailing characters
	}
	return dst, true
}

func (p *parser) skipWS() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses one value at p.i (whitespace already skipped). depth is the
// number of arrays/objects currently open.
func (p *parser) value(dst []byte, depth int) ([]byte, bool) {
	if p.i >= len(p.s) {
		return dst, false
	}
	switch c := p.s[p.i]; c {
	case 'n':
		return p.literal(dst, "null")
	case 't':
		return p.literal(dst, "true")
	case 'f':
		return p.literal(dst, "false")
	case '"':
		return p.str(dst)
	case '[':
		if depth+1 > maxDepth {
			return dst, false
		}
		return p.array(dst, depth+1)
	case '{':
		if depth+1 > maxDepth {
			return dst, false
		}
		return p.object(dst, depth+1)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number(dst)
		}
		return dst, false
	}
}

func (p *parser) literal(dst []byte, lit string) ([]byte, bool) {
	if !strings.HasPrefix(p.s[p.i:], lit) {
		return dst, false
	}
	p.i += len(lit)
	return append(dst, lit...), true
}

func (p *parser) array(dst []byte, depth int) ([]byte, bool) {
	p.i++ // '['
	dst = append(dst, '[')
	p.skipWS()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return append(dst, ']'), true
	}
	for {
		var ok bool
		dst, ok = p.value(dst, depth)
		if !ok {
			return dst, false
		}
		p.skipWS()
		if p.i >= len(p.s) {
			return dst, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.skipWS()
			dst = append(dst, ',')
		case ']':
			p.i++
			return append(dst, ']'), true
		default:
			return dst, false
		}
	}
}

func (p *parser) object(dst []byte, depth int) ([]byte, bool) {
	p.i++ // '{'
	objStart := len(dst)
	dst = append(dst, '{')
	p.skipWS()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return append(dst, '}'), true
	}
	base := len(p.members)
	defer func() { p.members = p.members[:base] }()
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return dst, false // key must be a string
		}
		start := len(dst)
		keyStart := p.i
		var ok bool
		dst, ok = p.str(dst)
		if !ok {
			return dst, false
		}
		key := p.s[keyStart+1 : p.i-1]
		if strings.IndexByte(key, '\\') >= 0 {
			// Escaped key: decode it for ordering.
			key = p.decodeKey(key)
		}
		p.skipWS()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return dst, false
		}
		p.i++
		p.skipWS()
		dst = append(dst, ':')
		dst, ok = p.value(dst, depth)
		if !ok {
			return dst, false
		}
		p.members = append(p.members, member{key: key, start: start, end: len(dst)})
		p.skipWS()
		if p.i >= len(p.s) {
			return dst, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.skipWS()
			dst = append(dst, ',')
		case '}':
			p.i++
			dst = append(dst, '}')
			return p.sortObject(dst, objStart, p.members[base:]), true
		default:
			return dst, false
		}
	}
}

// decodeKey decodes the (already validated) body of a string literal that
// contains escapes.
func (p *parser) decodeKey(body string) string {
	b := p.tmp[:0]
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		e := body[i+1]
		i += 2
		switch e {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := rune(hex4(body[i:]))
			i += 4
			if r >= 0xD800 && r <= 0xDBFF {
				r2 := rune(hex4(body[i+2:]))
				i += 6
				r = (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000
			}
			b = utf8.AppendRune(b, r)
		default: // '"', '\\', '/'
			b = append(b, e)
		}
	}
	p.tmp = b
	return string(b)
}

// sortObject rewrites the object written at dst[objStart:] with its members in
// key order, keeping only the last of repeated keys.
func (p *parser) sortObject(dst []byte, objStart int, ms []member) []byte {
	sorted := true
	for i := 1; i < len(ms); i++ {
		if ms[i-1].key >= ms[i].key {
			sorted = false
			break
		}
	}
	if sorted {
		return dst
	}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	tmp := append(p.tmp[:0], dst[objStart:]...)
	p.tmp = tmp
	dst = append(dst[:objStart], '{')
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue // a later duplicate wins
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, tmp[m.start-objStart:m.end-objStart]...)
	}
	return append(dst, '}')
}

func hex4(s string) int {
	n := 0
	for i := 0; i < 4; i++ {
		n = n<<4 | int(unhex(s[i]))
	}
	return n
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0xFF
}

func readHex4(s string, i int) (int, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n := 0
	for j := i; j < i+4; j++ {
		v := unhex(s[j])
		if v == 0xFF {
			return 0, false
		}
		n = n<<4 | int(v)
	}
	return n, true
}

// str parses a string literal at p.i and appends its serde_json encoding.
func (p *parser) str(dst []byte) ([]byte, bool) {
	p.i++ // opening quote
	dst = append(dst, '"')
	s := p.s
	start := p.i
	for p.i < len(s) {
		c := s[p.i]
		switch {
		case c == '"':
			dst = append(dst, s[start:p.i]...)
			p.i++
			return append(dst, '"'), true
		case c == '\\':
			dst = append(dst, s[start:p.i]...)
			var ok bool
			dst, ok = p.escape(dst)
			if !ok {
				return dst, false
			}
			start = p.i
		case c < 0x20:
			return dst, false // control character while parsing a string
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return dst, false // not UTF-8: a Rust &str cannot hold it
			}
			p.i += size
		}
	}
	return dst, false // EOF while parsing a string
}

// escape decodes the escape at p.i (the backslash) and appends its serde_json
// re-encoding.
func (p *parser) escape(dst []byte) ([]byte, bool) {
	s := p.s
	if p.i+1 >= len(s) {
		return dst, false
	}
	e := s[p.i+1]
	p.i += 2
	switch e {
	case '"':
		return append(dst, '\\', '"'), true
	case '\\':
		return append(dst, '\\', '\\'), true
	case '/':
		return append(dst, '/'), true
	case 'b':
		return append(dst, '\\', 'b'), true
	case 'f':
		return append(dst, '\\', 'f'), true
	case 'n':
		return append(dst, '\\', 'n'), true
	case 'r':
		return append(dst, '\\', 'r'), true
	case 't':
		return append(dst, '\\', 't'), true
	case 'u':
	default:
		return dst, false // invalid escape
	}
	n, ok := readHex4(s, p.i)
	if !ok {
		return dst, false
	}
	p.i += 4
	r := rune(n)
	switch {
	case n >= 0xDC00 && n <= 0xDFFF:
		return dst, false // lone (trailing) surrogate
	case n >= 0xD800 && n <= 0xDBFF:
		// A leading surrogate must be followed by \u and a trailing one.
		if p.i+1 >= len(s) || s[p.i] != '\\' || s[p.i+1] != 'u' {
			return dst, false
		}
		n2, ok := readHex4(s, p.i+2)
		if !ok || n2 < 0xDC00 || n2 > 0xDFFF {
			return dst, false
		}
		p.i += 6
		r = rune((n-0xD800)<<10|(n2-0xDC00)) + 0x10000
	}
	if r < 0x20 || r == '"' || r == '\\' {
		return appendEscapedByte(dst, byte(r)), true
	}
	return utf8.AppendRune(dst, r), true
}

// overflowU64 reports whether a*10+d overflows u64 (serde_json's overflow!).
func overflowU64(a, d uint64) bool {
	const m = math.MaxUint64
	return a >= m/10 && (a > m/10 || d > m%10)
}

func overflowI32(a, d int64) bool {
	const m = math.MaxInt32
	return a >= m/10 && (a > m/10 || d > m%10)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// number parses a number the way serde_json's parse_integer / parse_number /
// parse_decimal / parse_exponent / f64_from_parts do (without
// float_roundtrip) and appends how serde_json prints the resulting value.
func (p *parser) number(dst []byte) ([]byte, bool) {
	start := p.i
	positive := true
	if p.s[p.i] == '-' {
		positive = false
		p.i++
	}
	if p.i >= len(p.s) {
		return dst, false
	}
	c := p.s[p.i]
	p.i++
	var sig uint64
	switch {
	case c == '0':
		if isDigit(p.peek()) {
			return dst, false // only one leading zero
		}
	case c >= '1' && c <= '9':
		sig = uint64(c - '0')
		for isDigit(p.peek()) {
			d := uint64(p.s[p.i] - '0')
			if overflowU64(sig, d) {
				return p.float(dst, p.longInteger(positive, sig))
			}
			p.i++
			sig = sig*10 + d
		}
	default:
		return dst, false
	}
	switch p.peek() {
	case '.':
		return p.float(dst, p.decimal(positive, sig, 0))
	case 'e', 'E':
		return p.float(dst, p.exponent(positive, sig, 0))
	}
	if positive {
		// U64: printed with itoa, which is exactly the literal.
		return append(dst, p.s[start:p.i]...), true
	}
	if neg := -int64(sig); neg < 0 {
		// I64 (including i64::MIN): the literal again.
		return append(dst, p.s[start:p.i]...), true
	}
	// Below i64::MIN, or -0: a float.
	return AppendFloat(dst, -float64(sig)), true
}

type fres struct {
	f  float64
	ok bool
}

func (p *parser) float(dst []byte, r fres) ([]byte, bool) {
	if !r.ok {
		return dst, false
	}
	return AppendFloat(dst, r.f), true
}

func (p *parser) longInteger(positive bool, sig uint64) fres {
	exp := int64(0)
	for {
		switch p.peek() {
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			p.i++
			exp++
		case '.':
			return p.decimal(positive, sig, exp)
		case 'e', 'E':
			return p.exponent(positive, sig, exp)
		default:
			return f64FromParts(positive, sig, exp)
		}
	}
}

func (p *parser) decimal(positive bool, sig uint64, expBefore int64) fres {
	p.i++ // '.'
	expAfter := int64(0)
	for isDigit(p.peek()) {
		d := uint64(p.s[p.i] - '0')
		if overflowU64(sig, d) {
			return p.decimalOverflow(positive, sig, expBefore+expAfter)
		}
		p.i++
		sig = sig*10 + d
		expAfter--
	}
	if expAfter == 0 {
		return fres{} // no digit after the decimal point
	}
	exp := expBefore + expAfter
	switch p.peek() {
	case 'e', 'E':
		return p.exponent(positive, sig, exp)
	}
	return f64FromParts(positive, sig, exp)
}

func (p *parser) decimalOverflow(positive bool, sig uint64, exp int64) fres {
	for isDigit(p.peek()) {
		p.i++
	}
	switch p.peek() {
	case 'e', 'E':
		return p.exponent(positive, sig, exp)
	}
	return f64FromParts(positive, sig, exp)
}

func (p *parser) exponent(positive bool, sig uint64, startExp int64) fres {
	p.i++ // 'e' or 'E'
	positiveExp := true
	switch p.peek() {
	case '+':
		p.i++
	case '-':
		p.i++
		positiveExp = false
	}
	if !isDigit(p.peek()) {
		return fres{}
	}
	exp := int64(p.s[p.i] - '0')
	p.i++
	for isDigit(p.peek()) {
		d := int64(p.s[p.i] - '0')
		p.i++
		if overflowI32(exp, d) {
			// Exponent beyond i32: an error for a non-zero significand and
			// a positive exponent, otherwise zero.
			if sig != 0 && positiveExp {
				return fres{}
			}
			for isDigit(p.peek()) {
				p.i++
			}
			if positive {
				return fres{0, true}
			}
			return fres{math.Copysign(0, -1), true}
		}
		exp = exp*10 + d
	}
	var final int64
	if positiveExp {
		final = startExp + exp
	} else {
		final = startExp - exp
	}
	// i32 saturating arithmetic.
	final = max(min(final, math.MaxInt32), math.MinInt32)
	return f64FromParts(positive, sig, final)
}

// f64FromParts is serde_json's f64_from_parts without float_roundtrip: the
// significand converted to f64 (rounded), then multiplied or divided by one
// power of ten from the table (a second rounding).
func f64FromParts(positive bool, sig uint64, exp int64) fres {
	f := float64(sig)
	for {
		a := exp
		if a < 0 {
			a = -a
		}
		if a < int64(len(pow10)) {
			if exp >= 0 {
				f *= pow10[a]
				if math.IsInf(f, 0) {
					return fres{} // number out of range
				}
			} else {
				f /= pow10[a]
			}
			break
		}
		if f == 0 {
			break
		}
		if exp >= 0 {
			return fres{} // number out of range
		}
		f /= 1e308
		exp += 308
	}
	if !positive {
		f = -f
	}
	return fres{f, true}
}
