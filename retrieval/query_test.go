package retrieval

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"What was the 2019 revenue?", []string{"what", "was", "the", "2019", "revenue"}},
		{"$1,452.4 vs 1452.4 and 12,34", []string{"1452", "4", "vs", "1452", "4", "and", "12", "34"}},
		{"1,000,000 shares", []string{"1000000", "shares"}},
		{"company’s \"NEAR\"(x) title:y", []string{"company", "s", "near", "x", "title", "y"}},
		{"Café Zürich", []string{"café", "zürich"}},
		{"", nil},
		{"\xff\x00—", nil},
	} {
		if got := tokens(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMatchExpr(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"?!", ""},
		{"What is the interest cost in 2019?", `"interest" OR "cost" OR "2019" OR "interest cost" OR NEAR("interest" "cost", 2) OR NEAR("cost" "2019", 2)`},
		{"cost of revenue", `"cost" OR "revenue" OR NEAR("cost" "revenue", 2)`},
		{"what is the", `"what" OR "is" OR "the" OR NEAR("what" "is", 2) OR NEAR("is" "the", 2)`},
		{"sales sales", `"sales" OR "sales sales"`},
	} {
		if got := matchExpr(tc.in); got != tc.want {
			t.Errorf("matchExpr(%q) =\n %s\nwant\n %s", tc.in, got, tc.want)
		}
	}
	// A long text is cut to maxTerms of each kind.
	long := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon ", 20)
	for i := range 50 {
		long += " w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	if n := strings.Count(matchExpr(long), " OR ") + 1; n > 3*maxTerms {
		t.Errorf("a long text gave %d parts, want at most %d", n, 3*maxTerms)
	}
}

// FuzzSearch checks that no query text makes Search fail or panic, and
// that the terms it builds are plain words.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{
		"", "What was the 2019 revenue?", `"`, `""`, `" OR "`, "NEAR(a b, 2)", "a AND NOT b", "title:x", "{title}: x",
		"x*", "^x", "(a OR", "a) OR (b", "-x", "+x", "1,452.4", "\x00", "\xff\xfe\xfd", "é\u0301", "e\u0301", "\u0301x",
		"日本語のテキスト", "ﬁnance", "İstanbul", "Straße", "x\u200by", "①②③", "²³", "\U0001F600 smile", "a'b", "a:b:c", "Ꟁꟁ acme", "\U0001E900 revenue",
		strings.Repeat("ab ", 500),
	} {
		f.Add(s)
	}
	ix := openMem(f, nil, reports...)
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range tokens(s) {
			if !utf8.ValidString(tok) {
				t.Fatalf("token %q is not UTF-8", tok)
			}
			for _, r := range tok {
				if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Mn, r) {
					t.Fatalf("token %q holds %q", tok, r)
				}
			}
		}
		hits, err := ix.Search(t.Context(), Query{Text: s, K: 3})
		if err != nil {
			t.Fatalf("Search(%q): %v (expression %s)", s, err, matchExpr(s))
		}
		if matchExpr(s) == "" && len(hits) != 0 {
			t.Fatalf("Search(%q) without terms found %d hits", s, len(hits))
		}
	})
}
