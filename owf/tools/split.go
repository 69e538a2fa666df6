package tools

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Semantic levels of the splitter, coarsest first.
const (
	levelLines = iota
	levelSentences
	levelWords
	levelChars
)

// chunks splits s into trimmed, non-empty pieces of at most max
// characters, the way text-splitter's TextSplitter::new(max) does in
// spirit: consecutive sections of the coarsest level (line breaks,
// sentence ends, whitespace, characters) are packed greedily while they
// fit, and a section too long for a chunk is split at the next finer
// level.
func chunks(s string, max int) []string {
	var out []string
	chunkAt(s, levelLines, max, &out)
	return out
}

func trimmedLen(s string) int {
	return utf8.RuneCountInString(strings.TrimSpace(s))
}

func chunkAt(s string, level, max int, out *[]string) {
	// The sections are contiguous: s[start:end] is the chunk being built.
	start, end, runes := 0, 0, 0
	flush := func() {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			*out = append(*out, t)
		}
	}
	off := 0
	for _, sec := range sections(s, level) {
		secStart, secEnd := off, off+len(sec)
		off = secEnd
		n := utf8.RuneCountInString(sec)
		if end > start {
			if runes+n <= max || trimmedLen(s[start:secEnd]) <= max {
				end, runes = secEnd, runes+n
				continue
			}
			flush()
		}
		start, end, runes = secStart, secStart, 0
		if n <= max || trimmedLen(sec) <= max {
			end, runes = secEnd, n
			continue
		}
		chunkAt(sec, level+1, max, out)
		start, end = secEnd, secEnd
	}
	flush()
}

// sections cuts s at the boundaries of a level; the pieces concatenate to
// s, each keeping the separator (and following whitespace) it ends with.
func sections(s string, level int) []string {
	var out []string
	start := 0
	cut := func(i int) {
		if i > start {
			out = append(out, s[start:i])
			start = i
		}
	}
	skipSpace := func(j int) int {
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !unicode.IsSpace(r) {
				break
			}
			j += n
		}
		return j
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case level == levelChars:
			cut(i + n)
		case level == levelLines && r == '\n':
			j := skipSpace(i)
			cut(j)
			i = j
			continue
		case level == levelSentences && (r == '.' || r == '!' || r == '?'):
			j := i + 1
			for j < len(s) && (s[j] == '.' || s[j] == '!' || s[j] == '?') {
				j++
			}
			if k := skipSpace(j); k > j {
				cut(k)
				i = k
				continue
			}
			i = j
			continue
		case level == levelWords && unicode.IsSpace(r):
			j := skipSpace(i)
			cut(j)
			i = j
			continue
		}
		i += n
	}
	cut(len(s))
	return out
}
