package split

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// checkInvariants verifies what every split must satisfy: chunks are
// non-empty, trimmed, at most max runes, and together hold all the
// non-whitespace text in order.
func checkInvariants(t *testing.T, text string, max int, chunks []string) {
	t.Helper()
	for i, c := range chunks {
		if c == "" {
			t.Fatalf("chunk %d is empty", i)
		}
		if strings.TrimSpace(c) != c {
			t.Fatalf("chunk %d not trimmed: %q", i, c)
		}
		if n := utf8.RuneCountInString(c); n > max {
			t.Fatalf("chunk %d has %d runes > %d: %q", i, n, max, c)
		}
	}
	if got, want := stripSpace(strings.Join(chunks, "")), stripSpace(text); got != want {
		t.Fatalf("content changed:\n got %q\nwant %q", got, want)
	}
}

func sentence(i int) string {
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	var b strings.Builder
	b.WriteString("Sentence")
	for j := 0; j < 6+i%4; j++ {
		b.WriteString(" " + words[(i+j)%len(words)])
	}
	b.WriteString(".")
	return b.String()
}

func TestExamples(t *testing.T) {
	for _, c := range []struct {
		text string
		max  int
		want []string
	}{
		{"", 10, nil},
		{"   \n\t ", 10, nil},
		{"  hello  ", 250, []string{"hello"}},
		// text-splitter documentation examples (trimmed)
		{"Some text\n\nfrom a\ndocument", 10, []string{"Some text", "from a", "document"}},
		{"Some text from a document", 10, []string{"Some text", "from a", "document"}},
		{"Some text. From a document.", 10, []string{"Some text.", "From a", "document."}},
		{" a b ", 1, []string{"a", "b"}},
		{"éé", 1, []string{"é", "é"}},
		{"\r\na̐éö̲\r\n", 3, []string{"a̐é", "ö̲"}},
		{"Mr. Fox jumped. [...] The dog was too lazy.", 21, []string{"Mr. Fox jumped. [...]", "The dog was too lazy."}},
		// paragraphs that fit together are merged; a paragraph is not cut
		// when it can go whole into the next chunk
		{"aaaa bbbb\n\ncccc dddd\n\neeee", 20, []string{"aaaa bbbb\n\ncccc dddd", "eeee"}},
		{"one\ntwo\n\nthree four five six", 12, []string{"one\ntwo", "three four", "five six"}},
	} {
		got := Chunks(c.text, c.max)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Chunks(%q, %d) = %q, want %q", c.text, c.max, got, c.want)
		}
		checkInvariants(t, c.text, c.max, got)
	}
}

func TestParagraphsStayWhole(t *testing.T) {
	var paras []string
	for i := 0; i < 8; i++ {
		var b strings.Builder
		for b.Len() < 80+i*15 {
			b.WriteString(sentence(i+b.Len()) + " ")
		}
		paras = append(paras, strings.TrimSpace(b.String()))
	}
	text := strings.Join(paras, "\n\n")
	chunks := Chunks(text, 250)
	checkInvariants(t, text, 250, chunks)
	// Every paragraph (all shorter than 250) appears whole inside one chunk.
	for _, p := range paras {
		found := false
		for _, c := range chunks {
			if strings.Contains(c, p) {
				found = true
			}
		}
		if !found {
			t.Errorf("paragraph split across chunks: %q\nchunks: %q", p, chunks)
		}
	}
	// And chunks only end at paragraph ends.
	for _, c := range chunks {
		if !strings.HasSuffix(c, ".") {
			t.Errorf("chunk does not end a paragraph: %q", c)
		}
	}
}

func TestLongParagraphSplitsAtSentences(t *testing.T) {
	var b strings.Builder
	var sentences []string
	for i := 0; b.Len() < 600; i++ {
		s := sentence(i)
		sentences = append(sentences, s)
		b.WriteString(s + " ")
	}
	text := "Intro line.\n\n" + strings.TrimSpace(b.String()) + "\n\nOutro."
	chunks := Chunks(text, 250)
	checkInvariants(t, text, 250, chunks)
	if len(chunks) < 3 {
		t.Fatalf("expected the 600-char paragraph to be split, got %q", chunks)
	}
	for _, c := range chunks {
		if !strings.HasSuffix(c, ".") {
			t.Errorf("chunk does not end at a sentence end: %q", c)
		}
	}
	// Sentences are never cut.
	for _, s := range sentences {
		found := false
		for _, c := range chunks {
			if strings.Contains(c, s) {
				found = true
			}
		}
		if !found {
			t.Errorf("sentence cut: %q", s)
		}
	}
	// Greedy: each chunk but the last could not take the next sentence.
	for i := 0; i+1 < len(chunks); i++ {
		next := strings.SplitAfter(chunks[i+1], ". ")[0]
		if n := utf8.RuneCountInString(chunks[i] + " " + strings.TrimSpace(next)); n <= 250 && !strings.Contains(chunks[i+1], "Outro") && !strings.HasPrefix(chunks[i+1], "Sentence") {
			t.Errorf("chunk %d could have taken more: %q", i, chunks[i])
		}
	}
}

func TestLongWordSplitsByCharacters(t *testing.T) {
	word := strings.Repeat("abcdefghij", 70) // 700 chars, no boundary
	text := "Before.\n\n" + word + "\n\nAfter."
	chunks := Chunks(text, 250)
	checkInvariants(t, text, 250, chunks)
	want := []string{"Before.", word[:250], word[250:500], word[500:] + "\n\nAfter."}
	if !reflect.DeepEqual(chunks, want) {
		t.Errorf("got %q\nwant %q", chunks, want)
	}
}

func TestWordsWhenSentenceTooLong(t *testing.T) {
	text := strings.TrimSpace(strings.Repeat("lorem ipsum dolor sit amet ", 20)) // 539 chars, no sentence end
	chunks := Chunks(text, 250)
	checkInvariants(t, text, 250, chunks)
	for _, c := range chunks {
		for _, w := range strings.Fields(c) {
			if !strings.Contains("lorem ipsum dolor sit amet", w) {
				t.Errorf("word cut: %q in %q", w, c)
			}
		}
		if utf8.RuneCountInString(c) < 240 && c != chunks[len(chunks)-1] {
			t.Errorf("chunk not filled greedily: %q", c)
		}
	}
}

func TestUnicode(t *testing.T) {
	text := strings.Repeat("日本語のテキストです。", 30) + "\n\n" +
		strings.Repeat("Ünïcödé wörds 😀👍🏽 ", 30) + "\n" +
		strings.Repeat("é", 300) + " " + strings.Repeat("👨‍👩‍👧", 90) +
		strings.Repeat("e\u0301", 200)
	for _, max := range []int{1, 2, 3, 7, 25, 100, 250} {
		chunks := Chunks(text, max)
		checkInvariants(t, text, max, chunks)
		for _, c := range chunks {
			if !utf8.ValidString(c) {
				t.Fatalf("invalid UTF-8 chunk %q", c)
			}
		}
	}
	// Full-width sentence ends are sentence boundaries.
	chunks := Chunks(strings.Repeat("日本語のテキストです。", 30), 25)
	for _, c := range chunks {
		if !strings.HasSuffix(c, "。") {
			t.Errorf("CJK chunk not at sentence end: %q", c)
		}
	}
	// Combining marks stay with their base character when possible.
	chunks = Chunks(strings.Repeat("e\u0301", 10), 4)
	for _, c := range chunks {
		if strings.HasPrefix(c, "\u0301") {
			t.Errorf("grapheme cut: %q", chunks)
		}
	}
}

func TestSmallMax(t *testing.T) {
	for _, max := range []int{-5, 0, 1} {
		chunks := Chunks("ab c", max)
		if want := []string{"a", "b", "c"}; !reflect.DeepEqual(chunks, want) {
			t.Errorf("max %d: got %q", max, chunks)
		}
	}
}

func TestLargeInputIsLinearish(t *testing.T) {
	// One huge word, one huge paragraph of sentences, and many paragraphs:
	// must finish quickly (the splitter must not rescan the rest of the text
	// for every chunk).
	big := strings.Repeat("x", 1<<20) + " " + strings.Repeat(sentence(3)+" ", 20000) +
		strings.Repeat("para one two three.\n\n", 20000)
	chunks := Chunks(big, 250)
	if len(chunks) < 4000 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	for _, c := range chunks {
		if utf8.RuneCountInString(c) > 250 {
			t.Fatalf("chunk too long")
		}
	}
}

func FuzzChunks(f *testing.F) {
	f.Add("Some text\n\nfrom a\ndocument", 10)
	f.Add("Mr. Fox jumped. [...] The dog was too lazy.", 16)
	f.Add("a̐éö̲\r\n\r\n日本語。テキスト！ 😀👍🏽", 2)
	f.Add(strings.Repeat("word ", 100), 7)
	f.Add("\r\r\n\n\r\n x", 1)
	f.Fuzz(func(t *testing.T, text string, max int) {
		if !utf8.ValidString(text) {
			return // a Rust &str is always UTF-8
		}
		if max < 1 || max > 300 {
			max = 1 + (max%300+300)%300
		}
		chunks := Chunks(text, max)
		checkInvariants(t, text, max, chunks)
		if len(text) > 0 && strings.TrimSpace(text) != "" && len(chunks) == 0 {
			t.Fatal("no chunks for non-blank text")
		}
		if utf8.RuneCountInString(strings.TrimSpace(text)) <= max && strings.TrimSpace(text) != "" {
			if len(chunks) != 1 || chunks[0] != strings.TrimSpace(text) {
				t.Fatalf("text that fits should be one chunk: %q -> %q", text, chunks)
			}
		}
	})
}

func BenchmarkChunks(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		sb.WriteString(sentence(i))
		if i%7 == 6 {
			sb.WriteString("\n\n")
		} else {
			sb.WriteString(" ")
		}
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Chunks(text, 250)
	}
}
