package tools

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestChunks(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want []string
	}{
		{"", 20, nil},
		{"   \n  ", 20, nil},
		{"  short text  ", 20, []string{"short text"}},
		{"line one\nline two", 20, []string{"line one\nline two"}},
		// Sentences first, then words for a sentence that is too long.
		{"One two three. Four five six. Seven eight nine ten eleven.", 20,
			[]string{"One two three.", "Four five six.", "Seven eight nine ten", "eleven."}},
		// Lines before words.
		{"a b\nc d e f", 8, []string{"a b", "c d e f"}},
		// Lines before sentences.
		{"Aa. Bb. Cc.\nDd. Ee. Ff.\nGg.", 12, []string{"Aa. Bb. Cc.", "Dd. Ee. Ff.", "Gg."}},
		// A word longer than a chunk is cut into characters.
		{"ab abcdefghij", 4, []string{"ab", "abcd", "efgh", "ij"}},
		// Characters, not bytes.
		{"ééé ééé", 3, []string{"ééé", "ééé"}},
		// Several sentence ends and no space after the last.
		{"Wait... What?! Yes.", 8, []string{"Wait...", "What?!", "Yes."}},
	}
	for _, c := range cases {
		got := chunks(c.in, c.max)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("chunks(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestChunksBoundAndContent(t *testing.T) {
	words := []string{"alpha", "beta.", "gamma", "delta!", "\n", "epsilon", "zeta?", "ηθ", "x", "supercalifragilisticexpialidocious"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		var b strings.Builder
		for range r.IntN(400) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString([]string{" ", " ", "  ", "\n"}[r.IntN(4)])
		}
		max := 5 + r.IntN(60)
		got := chunks(b.String(), max)
		for _, c := range got {
			if n := utf8.RuneCountInString(c); n > max || n == 0 || c != strings.TrimSpace(c) {
				t.Fatalf("case %d: chunk %q (%d characters) with max %d", i, c, n, max)
			}
		}
		// No character but whitespace is lost or added.
		strip := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if strip(strings.Join(got, "")) != strip(b.String()) {
			t.Fatalf("case %d: chunks lose text", i)
		}
	}
}
