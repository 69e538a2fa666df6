// Package split cuts text into chunks of bounded length on semantic
// boundaries, in the manner of the Rust crate text-splitter 0.13
// (TextSplitter with a character-count capacity and trimmed chunks), which the
// ollama-workflows reference uses to fill its vector store (spec §3.5).
//
// The algorithm follows text-splitter's:
//
//   - Semantic levels, from lowest to highest: characters, grapheme clusters,
//     words, sentences, then one level per length of line-break run (a run of
//     n newlines is level n; "\r\n" counts as one newline). A boundary of a
//     level is also a boundary of every lower level.
//   - At the current position, look at the first section of each level in
//     ascending order and pick the highest level whose first section still
//     fits in the capacity.
//   - Merge as many consecutive sections of that level as fit into the chunk
//     (capacity counts the characters, i.e. runes, of the trimmed chunk).
//   - Emit the chunk with surrounding whitespace trimmed, and continue after
//     it.
//
// Differences from text-splitter: Unicode word and sentence segmentation
// (UAX #29) are approximated (words are runs of whitespace / non-whitespace;
// sentences end after '.', '!', '?' or their full-width forms, optionally
// followed by closing quotes or brackets, and whitespace, except that '.'
// followed by a lower-case letter does not end a sentence), and grapheme
// clusters are approximated by a character plus its combining marks, joiners,
// variation selectors and emoji modifiers. Chunk boundaries therefore
// coincide with the reference on ordinary prose but can differ on text that
// relies on finer UAX #29 rules.
package split

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Semantic levels. Line-break levels are levelSentence + n for a run of n
// newlines.
const (
	levelChar = iota
	levelGrapheme
	levelWord
	levelSentence
)

// Chunks splits text into trimmed chunks of at most max characters, on the
// highest semantic boundary that fits. Chunks are never empty; a max below 1
// is treated as 1.
func Chunks(text string, max int) []string {
	if max < 1 {
		max = 1
	}
	s := newSplitter(text, max)
	var out []string
	for c := skipSpace(text, 0); c < len(text); c = skipSpace(text, c) {
		level := s.level(c)
		end := s.merge(c, level)
		if chunk := strings.TrimRightFunc(text[c:end], unicode.IsSpace); chunk != "" {
			out = append(out, chunk)
		}
		c = end
	}
	return out
}

type splitter struct {
	text string
	max  int
	// levels lists the levels at or above levelSentence that occur, ascending;
	// marks[i] holds the sorted positions of boundaries of level >= levels[i].
	levels []int
	marks  [][]int
}

func newSplitter(text string, limit int) *splitter {
	type mark struct{ pos, level int }
	var ms []mark
	// Line-break runs, split like the regex (\r\n)+|\r+|\n+ ; each run is a
	// separator section of its own, level = number of newlines in it.
	for i := 0; i < len(text); {
		c := text[i]
		if c != '\r' && c != '\n' {
			i++
			continue
		}
		start, n := i, 0
		switch {
		case c == '\r' && i+1 < len(text) && text[i+1] == '\n':
			for i+1 < len(text) && text[i] == '\r' && text[i+1] == '\n' {
				i += 2
				n++
			}
		default:
			for i < len(text) && text[i] == c {
				i++
				n++
			}
		}
		l := levelSentence + n
		ms = append(ms, mark{start, l}, mark{i, l})
	}
	for _, p := range sentenceEnds(text) {
		ms = append(ms, mark{p, levelSentence})
	}
	slices.SortFunc(ms, func(a, b mark) int { return a.pos - b.pos })
	// Merge marks at the same position, keeping the highest level.
	w := 0
	for _, m := range ms {
		if m.pos <= 0 || m.pos >= len(text) {
			continue // the text's own ends are implicit boundaries
		}
		if w > 0 && ms[w-1].pos == m.pos {
			ms[w-1].level = max(ms[w-1].level, m.level)
			continue
		}
		ms[w] = m
		w++
	}
	ms = ms[:w]

	s := &splitter{text: text, max: limit}
	levels := []int{levelSentence}
	for _, m := range ms {
		levels = append(levels, m.level)
	}
	slices.Sort(levels)
	s.levels = slices.Compact(levels)
	s.marks = make([][]int, len(s.levels))
	for i, l := range s.levels {
		var ps []int
		for _, m := range ms {
			if m.level >= l {
				ps = append(ps, m.pos)
			}
		}
		s.marks[i] = ps
	}
	return s
}

// nextMark returns the first boundary after pos whose level is at least
// levels[i], or len(text).
func (s *splitter) nextMark(pos, i int) int {
	ps := s.marks[i]
	j := sort.SearchInts(ps, pos+1)
	if j < len(ps) {
		return ps[j]
	}
	return len(s.text)
}

// sectionEnd returns the end of the section of the given level that starts at
// pos. For the levels computed by scanning (words, graphemes) it gives up,
// returning ok=false, once the section is longer than limit runes.
func (s *splitter) sectionEnd(pos, level, limit int) (end int, ok bool) {
	text := s.text
	if level >= levelSentence {
		i, _ := slices.BinarySearch(s.levels, level)
		return s.nextMark(pos, i), true
	}
	if level == levelChar {
		_, n := utf8.DecodeRuneInString(text[pos:])
		return pos + n, true
	}
	bound := s.nextMark(pos, 0) // sentence and line-break boundaries
	switch level {
	case levelGrapheme:
		return min(graphemeEnd(text, pos), bound), true
	default: // levelWord
		r, n := utf8.DecodeRuneInString(text[pos:])
		space := unicode.IsSpace(r)
		i, count := pos+n, 1
		for i < bound {
			r, n := utf8.DecodeRuneInString(text[i:])
			if unicode.IsSpace(r) != space && !isExtend(r) {
				break
			}
			i += n
			count++
			if count > limit {
				return i, false
			}
		}
		return i, true
	}
}

// level picks the highest level whose first section at pos fits.
func (s *splitter) level(pos int) int {
	chosen := levelChar // a single character always fits
	candidates := append([]int{levelGrapheme, levelWord}, s.levels...)
	for _, l := range candidates {
		end, ok := s.sectionEnd(pos, l, s.max)
		if !ok || !s.fits(pos, end) {
			break
		}
		chosen = l
		if end == len(s.text) {
			break // every higher level has the same first section
		}
	}
	return chosen
}

// fits reports whether text[pos:end], trimmed, has at most max runes.
func (s *splitter) fits(pos, end int) bool {
	ce := pos + len(strings.TrimRightFunc(s.text[pos:end], unicode.IsSpace))
	return runesUpTo(s.text[pos:ce], s.max) <= s.max
}

// merge joins as many consecutive sections of level as fit, starting at pos
// (a non-space position), and returns the end of the last one.
func (s *splitter) merge(pos, level int) int {
	text := s.text
	end := pos
	lastContent := pos // end of the last non-space character taken
	size := 0          // runes in text[pos:lastContent]
	for end < len(text) {
		next, ok := s.sectionEnd(end, level, s.max)
		if !ok && end > pos {
			break
		}
		ce := end + len(strings.TrimRightFunc(text[end:next], unicode.IsSpace))
		if ce == end { // whitespace only: does not change the trimmed size
			end = next
			continue
		}
		add := runesUpTo(text[lastContent:ce], s.max-size)
		if size+add > s.max && end > pos {
			break
		}
		size += add
		lastContent = ce
		end = next
	}
	return end
}

// runesUpTo counts the runes of t, stopping once the count exceeds limit.
func runesUpTo(t string, limit int) int {
	n := 0
	for i := 0; i < len(t); n++ {
		if n > limit {
			return n
		}
		if t[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRuneInString(t[i:])
			i += size
		}
	}
	return n
}

func skipSpace(text string, i int) int {
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			return i
		}
		i += n
	}
	return i
}

// isExtend reports whether r continues the preceding grapheme cluster:
// combining marks, zero-width joiner, variation selectors, emoji modifiers.
func isExtend(r rune) bool {
	if r < 0x300 {
		return false
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) ||
		r == 0x200D || // ZWJ
		(r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF) ||
		(r >= 0x1F3FB && r <= 0x1F3FF)
}

func isRegionalIndicator(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// graphemeEnd approximates the end of the grapheme cluster starting at pos.
func graphemeEnd(text string, pos int) int {
	r, n := utf8.DecodeRuneInString(text[pos:])
	i := pos + n
	switch {
	case r == '\r':
		if i < len(text) && text[i] == '\n' {
			i++
		}
		return i
	case r == '\n' || r < 0x20:
		return i // controls stand alone
	case isRegionalIndicator(r):
		if r2, n2 := utf8.DecodeRuneInString(text[i:]); isRegionalIndicator(r2) {
			i += n2
		}
	}
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isExtend(r) {
			break
		}
		i += n
		if r == 0x200D && i < len(text) { // ZWJ joins the next character
			_, n2 := utf8.DecodeRuneInString(text[i:])
			i += n2
		}
	}
	return i
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？', '｡', '‼', '⁇', '⁈', '⁉':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '»', '”', '’', '」', '』', '）':
		return true
	}
	return false
}

func isHorizontalSpace(r rune) bool {
	return unicode.IsSpace(r) && r != '\n' && r != '\r'
}

// sentenceEnds returns the positions where a new sentence starts (after the
// terminator, closing punctuation and spaces of the previous one).
func sentenceEnds(text string) []int {
	var ends []int
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if !isTerminator(r) {
			continue
		}
		wide := r >= utf8.RuneSelf
		j := i
		for j < len(text) {
			r2, n2 := utf8.DecodeRuneInString(text[j:])
			if !isTerminator(r2) && !isCloser(r2) {
				break
			}
			if r2 != '.' && r2 >= utf8.RuneSelf {
				wide = true
			}
			j += n2
		}
		k := j
		for k < len(text) {
			r2, n2 := utf8.DecodeRuneInString(text[k:])
			if !isHorizontalSpace(r2) {
				break
			}
			k += n2
		}
		i = j
		if k >= len(text) {
			continue
		}
		if k == j && !wide && text[k] != '\n' && text[k] != '\r' {
			continue // "3.14", "a.b": no space after the terminator
		}
		if r == '.' {
			if next, _ := utf8.DecodeRuneInString(text[k:]); unicode.IsLower(next) {
				continue // "e.g. this": a lower-case word continues the sentence
			}
		}
		ends = append(ends, k)
	}
	return ends
}
