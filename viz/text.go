package viz

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text wrapping limits shared by all output formats.
const (
	wrapWidth = 40 // runes per line
	wrapLines = 2  // lines per text
)

// Advance widths of Helvetica (regular and bold) for ASCII 32..126, in
// thousandths of an em, from the standard Adobe font metrics. Each width
// is three digits.
const (
	helvetica = "278278355556556889667222333333389584278333278278" + // space..'/'
		"556556556556556556556556556556278278584584584556" + // '0'..'?'
		"999667667722722667611778722278500667556833722778" + // '@'..'O' (@ is 1015)
		"667778722667611722667944667667611278278278469556" + // 'P'..'_'
		"222556556500556556278556556222222500222833556556" + // '`'..'o'
		"556556333500278556500722500500500334260334584" // 'p'..'~'
	helveticaBold = "278333474556556889722278333333389584278333278278" +
		"556556556556556556556556556556333333584584584611" +
		"975722722722722667611778722278556722611833722778" +
		"667778722667611722667944667667611333278333584556" +
		"278556611556611556333611611278278556278889611611" +
		"611611389556333611556778556556500389280389584"
)

// sansFudge widens the Helvetica estimate towards the wider sans-serif
// fonts (DejaVu Sans, Verdana) a viewer may substitute.
const sansFudge = 1.1

// sansWidth estimates the width in pixels of s set in a sans-serif font of
// the given size.
func sansWidth(s string, size float64, bold bool) float64 {
	table := helvetica
	if bold {
		table = helveticaBold
	}
	total := 0
	for _, r := range s {
		switch {
		case r >= 32 && r <= 126:
			i := int(r-32) * 3
			total += int(table[i]-'0')*100 + int(table[i+1]-'0')*10 + int(table[i+2]-'0')
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		case isWide(r):
			total += 1000
		default:
			total += 611
		}
	}
	return float64(total) / 1000 * size * sansFudge
}

// monoWidth estimates the width in pixels of s set in a monospace font of
// the given size.
func monoWidth(s string, size float64) float64 {
	cells := 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		case isWide(r):
			cells += 2
		default:
			cells++
		}
	}
	return float64(cells) * 0.6 * size
}

// isWide reports whether r is usually drawn two cells wide.
func isWide(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) ||
		(r >= 0xFF01 && r <= 0xFF60) || (r >= 0x1F300 && r <= 0x1FAFF)
}

// cleanText makes s safe to embed anywhere: invalid UTF-8 and control
// characters other than newline become U+FFFD or spaces, and "\r\n" becomes
// "\n".
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r), r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}

// wrapText splits s into at most maxLines lines of at most width runes.
// It breaks at spaces where it can, and inside over-long words after
// punctuation such as '.' or '_' where it can. Text that does not fit ends
// with an ellipsis. Newlines in s start new lines; blank lines are dropped.
func wrapText(s string, width, maxLines int) []string {
	var lines []string
	for _, para := range strings.Split(cleanText(s), "\n") {
		cur := ""
		for _, word := range strings.Fields(para) {
			for utf8.RuneCountInString(word) > width {
				if cur != "" {
					lines = append(lines, cur)
					cur = ""
				}
				head, tail := splitWord(word, width)
				lines = append(lines, head)
				word = tail
			}
			switch {
			case cur == "":
				cur = word
			case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) <= width:
				cur += " " + word
			default:
				lines = append(lines, cur)
				cur = word
			}
		}
		if cur != "" {
			lines = append(lines, cur)
		}
	}
	if len(lines) > maxLines {
		lines = lines[:maxLines]
		last := []rune(lines[maxLines-1])
		if len(last) > width-1 {
			last = last[:width-1]
		}
		lines[maxLines-1] = strings.TrimRight(string(last), " ") + "…"
	}
	return lines
}

// splitWord cuts a word longer than width runes, after the last
// punctuation mark in its second half when there is one.
func splitWord(word string, width int) (string, string) {
	r := []rune(word)
	cut := width
	for i := width; i > width/2; i-- {
		if strings.ContainsRune("._-/:,;)]}", r[i-1]) {
			cut = i
			break
		}
	}
	return string(r[:cut]), string(r[cut:])
}

// num formats a coordinate with at most one decimal, without "-0".
func num(v float64) string {
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}
