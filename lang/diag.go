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
func FormatDiagnostics(w io.Writer, ds flow.Diagnostics, src func(file string) []byte) error {
	cache := map[string][]byte{}
	for _, d := range ds {
		if _, err := fmt.Fprintln(w, d.Error()); err != nil {
			return err
		}
		if src == nil || !d.Pos.IsValid() {
			continue
		}
		text, ok := cache[d.Pos.File]
		if !ok {
			text = src(d.Pos.File)
			cache[d.Pos.File] = text
		}
		line, ok := sourceLine(text, d.Pos.Line)
		if !ok {
			continue
		}
		var caret strings.Builder
		for i := 0; i < d.Pos.Col-1 && i < len(line); i++ {
			if line[i] == '\t' {
				caret.WriteByte('\t')
			} else {
				caret.WriteByte(' ')
			}
		}
		caret.WriteByte('^')
		if _, err := fmt.Fprintf(w, "%s\n%s\n", line, caret.String()); err != nil {
			return err
		}
	}
	return nil
}

// sourceLine returns line n (1-based) of text, without its line end.
func sourceLine(text []byte, n int) (string, bool) {
	if text == nil {
		return "", false
	}
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(text, '\n')
		if j < 0 {
			return "", false
		}
		text = text[j+1:]
	}
	if j := bytes.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	} else if len(text) == 0 {
		return "", false // the empty "line" after a final newline
	}
	return strings.TrimRight(string(text), "\r"), true
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
