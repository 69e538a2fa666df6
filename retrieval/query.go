package retrieval

import (
	"strings"
	"unicode"
)

// maxTerms bounds the MATCH expression built from one query, and so the
// cost of a search whatever the length of the text: at most maxTerms
// distinct terms, and as many pairs of each kind.
const maxTerms = 32

// isStop reports whether w is a stop word: an English function word or
// question word, left out of a query's terms (unless the query has nothing
// else) as it occurs in most documents and questions and only adds noise
// to BM25.
func isStop(w string) bool {
	switch w {
	case "a", "an", "the", "of", "in", "on", "at", "to", "for", "and", "or",
		"is", "are", "was", "were", "be", "by", "with", "what", "which", "how",
		"much", "many", "does", "did", "do", "from", "as", "that", "this",
		"its", "it", "their", "there", "than":
		return true
	}
	return false
}

// normalize rewrites text the way it is indexed: thousands separators
// inside numbers are dropped ("1,452.4" becomes "1452.4"), so that a
// number matches however it is written. Everything else is kept.
func normalize(s string) string {
	if !strings.Contains(s, ",") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ',' && i > 0 && isDigit(s[i-1]) && groupOf3(s, i+1) {
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// groupOf3 reports whether s[i:] starts with exactly three ASCII digits.
func groupOf3(s string, i int) bool {
	if i+3 > len(s) {
		return false
	}
	for j := i; j < i+3; j++ {
		if !isDigit(s[j]) {
			return false
		}
	}
	return i+3 == len(s) || !isDigit(s[i+3])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// tokens splits s (normalized) into lower-case runs of letters, digits
// and combining marks, much as FTS5's unicode61 tokenizer does. Any other
// character separates tokens, so no token holds a quote, a parenthesis,
// a colon or any other FTS5 syntax; should unicode61 split a token
// further or drop it, the quoted token is a phrase or an empty string,
// which FTS5 accepts.
func tokens(s string) []string {
	s = normalize(s)
	var out []string
	start := -1
	for i, r := range s {
		word := r != unicode.ReplacementChar && (unicode.IsLetter(r) || unicode.IsNumber(r) || (start >= 0 && unicode.Is(unicode.Mn, r)))
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

// matchExpr builds the FTS5 MATCH expression for a query's text, or ""
// when the text has no terms. It is an OR of
//
//   - each distinct term, stop words left out (unless all terms are stop
//     words);
//   - each phrase of two adjacent terms in the text, neither a stop word
//     ("interest cost");
//   - each pair of terms that follow each other once stop words are left
//     out, within two tokens of each other in either order
//     (NEAR("cost" "revenue", 2) for "cost of revenue").
//
// BM25 sums the scores of the parts that match, so a document that has
// the words together scores above one that only has them apart. Every
// term is a double-quoted FTS5 string made only of letters and digits:
// no user text can form an operator, a column filter or a syntax error.
func matchExpr(text string) string {
	toks := tokens(text)
	if len(toks) == 0 {
		return ""
	}
	content := make([]string, 0, len(toks))
	for _, t := range toks {
		if !isStop(t) {
			content = append(content, t)
		}
	}
	if len(content) == 0 {
		content = toks
	}
	var parts []string
	seen := make(map[string]bool)
	add := func(p string, n *int) {
		if *n < maxTerms && !seen[p] {
			seen[p] = true
			parts = append(parts, p)
			*n++
		}
	}
	var nTerms, nPhrases, nNear int
	for _, t := range content {
		add(quote(t), &nTerms)
	}
	for i := 1; i < len(toks); i++ {
		a, b := toks[i-1], toks[i]
		if isStop(a) || isStop(b) {
			continue
		}
		add(quote(a+" "+b), &nPhrases)
	}
	for i := 1; i < len(content); i++ {
		a, b := content[i-1], content[i]
		if a == b {
			continue
		}
		add("NEAR("+quote(a)+" "+quote(b)+", 2)", &nNear)
	}
	return strings.Join(parts, " OR ")
}

// quote makes s an FTS5 string, doubling any double quote in it.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
