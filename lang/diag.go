package lang

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
)

// FormatDiagnostics writes each diagnostic as "file:line:col: message"
// ("file:line:col: warning: message" for warnings), followed, when src
// returns the diagnostic's file contents and the position is valid, by the
// source line and a caret under the column. The caret line copies the tabs
// of the source line's prefix so that the caret lines up in any tab width.
// src may be nil.
//
// What is printed is bounded and safe whatever the source holds: the
// message is clipped to MaxMessage runes and the source line to a window
// of QuoteWindow runes on each side of the column, each cut marked with
// "…"; invalid UTF-8 and control characters are printed escaped (\x00,
// \u202e), never raw, and the caret still points at the column.
func FormatDiagnostics(w io.Writer, ds flow.Diagnostics, src func(file string) []byte) error {
	cache := map[string]*lineIndex{}
	for _, d := range ds {
		if _, err := fmt.Fprintln(w, ClipMessage(d.Error())); err != nil {
			return err
		}
		if src == nil || !d.Pos.IsValid() {
			continue
		}
		idx, ok := cache[d.Pos.File]
		if !ok {
			idx = newLineIndex(src(d.Pos.File))
			cache[d.Pos.File] = idx
		}
		line, ok := idx.line(d.Pos.Line)
		if !ok {
			continue
		}
		quoted, caret := quoteLine(line, d.Pos.Col)
		if _, err := fmt.Fprintf(w, "%s\n%s^\n", quoted, caret); err != nil {
			return err
		}
	}
	return nil
}

// QuoteWindow is how many runes of a source line a diagnostic quotes on
// each side of its column.
const QuoteWindow = 80

// MaxMessage is the most runes of a message FormatDiagnostics prints.
const MaxMessage = 1000

// ClipMessage returns msg made safe to print on a terminal: invalid UTF-8
// and control characters escaped, and anything past MaxMessage runes
// replaced by "… (N more bytes)".
func ClipMessage(msg string) string {
	var b strings.Builder
	n := 0
	for i, r := range msg {
		if n == MaxMessage {
			fmt.Fprintf(&b, "… (%d more bytes)", len(msg)-i)
			break
		}
		writeSafe(&b, msg[i:], r, false)
		n++
	}
	return b.String()
}

// quoteLine returns the part of line around the 1-based byte column col
// that a diagnostic quotes, made safe to print, and the prefix of the
// caret line that puts a caret under col: spaces, and the tabs of the
// quoted text.
func quoteLine(line []byte, col int) (quoted, caret string) {
	at := min(max(col-1, 0), len(line))
	for at > 0 && at < len(line) && !utf8.RuneStart(line[at]) {
		at--
	}
	start := at
	for k := 0; k < QuoteWindow && start > 0; k++ {
		_, size := utf8.DecodeLastRune(line[:start])
		start -= size
	}
	end := at
	for k := 0; k <= QuoteWindow && end < len(line); k++ {
		_, size := utf8.DecodeRune(line[end:])
		end += size
	}
	var q, c strings.Builder
	if start > 0 {
		q.WriteString("…")
		c.WriteByte(' ')
	}
	for i := start; i < end; {
		r, size := utf8.DecodeRune(line[i:])
		before := q.Len()
		writeSafe(&q, string(line[i:i+size]), r, true)
		if i < at {
			if r == '\t' {
				c.WriteByte('\t')
			} else {
				// One column per rune printed, as many as an escape takes.
				c.WriteString(strings.Repeat(" ", utf8.RuneCountInString(q.String()[before:])))
			}
		}
		i += size
	}
	if end < len(line) {
		q.WriteString("…")
	}
	return q.String(), c.String()
}

// writeSafe writes the rune r that starts s (never empty), escaped when it
// is invalid UTF-8 or a control or bidirectional-formatting character; a
// tab is kept when keepTab is set.
func writeSafe(b *strings.Builder, s string, r rune, keepTab bool) {
	switch {
	case r == utf8.RuneError && !strings.HasPrefix(s, "\uFFFD"):
		// An invalid byte, never ASCII: a U+FFFD that is written is kept.
		fmt.Fprintf(b, "\\x%02x", s[0])
	case r == '\t' && keepTab:
		b.WriteRune(r)
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
		fmt.Fprintf(b, "\\x%02x", r)
	case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c:
		fmt.Fprintf(b, "\\u%04x", r)
	default:
		b.WriteRune(r)
	}
}

// lineIndex finds the lines of a text: built once per file, so that
// printing many diagnostics of a large file does not rescan it for each.
type lineIndex struct {
	text   []byte
	starts []int // offset of each line; starts[0] = 0
}

func newLineIndex(text []byte) *lineIndex {
	if text == nil {
		return &lineIndex{}
	}
	starts := []int{0}
	for i, c := range text {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{text: text, starts: starts}
}

// line returns line n (1-based) of the text, without its line end.
func (x *lineIndex) line(n int) ([]byte, bool) {
	if x.text == nil || n < 1 || n > len(x.starts) {
		return nil, false
	}
	start := x.starts[n-1]
	end := len(x.text)
	if n < len(x.starts) {
		end = x.starts[n] - 1
	} else if start == end {
		return nil, false // the empty "line" after a final newline
	}
	return bytes.TrimRight(x.text[start:end], "\r"), true
}

// suggest returns `; did you mean "x"?` for the candidate closest to name,
// or "" when none is close enough.
func suggest(name string, candidates []string) string {
	if s := closest(name, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// suggestOrList is suggest, or the list of candidates when none is close.
func suggestOrList(name string, candidates []string) string {
	if s := suggest(name, candidates); s != "" {
		return s
	}
	if len(candidates) == 0 {
		return ""
	}
	return " (want one of: " + strings.Join(candidates, ", ") + ")"
}

// closest returns the candidate with the smallest edit distance to name
// (case-insensitive), if it is small for the name's length; the first
// candidate wins ties.
func closest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	ln := strings.ToLower(name)
	for _, c := range candidates {
		d := editDistance(ln, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1
	switch n := len(name); {
	case n >= 8:
		limit = 3
	case n >= 4:
		limit = 2
	}
	if best == "" || bestD > limit || best == name {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counting a
// transposition of adjacent characters as one edit.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// maxQuote is the most of a name or path a message quotes, in bytes.
const maxQuote = 200

// clipQuote quotes s as a Go string, cut to maxQuote bytes with "…" when
// longer, so that a message never repeats a huge or hostile token.
func clipQuote(s string) string {
	if len(s) <= maxQuote {
		return strconv.Quote(s)
	}
	cut := maxQuote
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}
