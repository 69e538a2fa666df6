// Package termtext makes text safe to print on a terminal: what a terminal
// would act on, or show garbled, is escaped as Go escapes it.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Safe returns s with bytes that are not UTF-8 escaped as \xNN, and
// control characters (escape sequences, carriage returns, bells, NUL) and
// format characters (bidi overrides) as \x1b, \r, \u202e. Newlines and tabs
// stay when multiline is set, and are escaped too otherwise. s is returned
// as is when nothing needs escaping.
func Safe(s string, multiline bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			if multiline && (r == '\n' || r == '\t') {
				continue
			}
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
