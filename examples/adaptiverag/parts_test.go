package adaptiverag_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/examples/adaptiverag"
)

func TestDefaultPatternsCompile(t *testing.T) {
	ps := adaptiverag.DefaultOODPatterns()
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"greeting", "weather", "sports", "coding"}) {
		t.Errorf("patterns %v", names)
	}
	// In-domain questions that the patterns must leave alone, even those
	// without a domain term.
	for _, q := range []string{
		"Hi, what was Acme's revenue in 2023?",
		"Hello, how many people work at Acme?",
		"What did Globex say about its European customers?",
		"Which plant did Acme open in Ohio?",
		"thanks, and what about Initech?",
	} {
		for _, p := range ps {
			if p.Pattern.MatchString(q) {
				t.Errorf("pattern %s matches %q", p.Name, q)
			}
		}
	}
}

func TestFormatHistory(t *testing.T) {
	msgs := []adaptiverag.Message{
		{Role: "user", Content: "q1"}, {Role: "assistant", Content: "a1"},
		{Role: "user", Content: "q2"}, {Role: "assistant", Content: "a2"},
		{Role: "user", Content: "q3"}, {Role: "assistant", Content: " a3 "},
		{Role: "user", Content: "now"},
	}
	cases := []struct {
		turns int
		want  string
	}{
		{0, ""},
		{-1, ""},
		{1, "Human: q3\nAI: a3\n"},
		{2, "Human: q2\nAI: a2\nHuman: q3\nAI: a3\n"},
		{9, "Human: q1\nAI: a1\nHuman: q2\nAI: a2\nHuman: q3\nAI: a3\n"},
	}
	for _, tc := range cases {
		if got := adaptiverag.FormatHistory(msgs, "now", tc.turns); got != tc.want {
			t.Errorf("%d turns: %q, want %q", tc.turns, got, tc.want)
		}
	}
	// Before classify_intent appends the question, the history is the same.
	if got := adaptiverag.FormatHistory(msgs[:6], "now", 1); got != "Human: q3\nAI: a3\n" {
		t.Errorf("without the question: %q", got)
	}
	if got := adaptiverag.FormatHistory(msgs[6:], "now", 3); got != "" {
		t.Errorf("first turn: %q", got)
	}
}

func TestTerms(t *testing.T) {
	got := adaptiverag.Terms("What were the companies' revenues in 2023? Acme's sales grew.")
	want := []string{"company", "revenue", "2023", "acme", "sale", "grew"}
	if !slices.Equal(got, want) {
		t.Errorf("terms %q, want %q", got, want)
	}
}

func TestLexicalReranker(t *testing.T) {
	ps := []adaptiverag.Passage{
		{ID: "a", Text: "The plant in Ohio opened in 2022."},
		{ID: "b", Text: "Revenue grew 24% to $1.5 billion; revenue growth came from contracts."},
		{ID: "c", Text: "Nothing relevant here at all."},
		{ID: "d", Text: "Revenue was flat."},
	}
	out, err := adaptiverag.LexicalReranker{}.Rerank(context.Background(), "How much revenue came from contracts?", ps, 3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range out {
		ids = append(ids, p.ID)
	}
	if !slices.Equal(ids, []string{"b", "d", "a"}) || out[0].Score <= out[1].Score || out[2].Score != 0 {
		t.Errorf("order %v, scores %v %v %v", ids, out[0].Score, out[1].Score, out[2].Score)
	}
	if ps[0].ID != "a" || ps[0].Score != 0 {
		t.Error("the input changed")
	}
}

func TestMemoryRetriever(t *testing.T) {
	r := adaptiverag.NewMemoryRetriever(loadDocs(t))
	ctx := context.Background()
	ids := func(ps []adaptiverag.Passage) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	got, err := r.Search(ctx, "total revenue", adaptiverag.Filters{Company: "acme", Year: 2022}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), []string{"acme-2022-revenue"}) {
		t.Errorf("filtered: %v", ids(got))
	}
	got, _ = r.Search(ctx, "total revenue", adaptiverag.Filters{}, 2)
	if len(got) != 2 || !strings.HasPrefix(got[0].ID, "acme-") || got[0].Score < got[1].Score {
		t.Errorf("unfiltered: %v", ids(got))
	}
	got, _ = r.Search(ctx, "revenue", adaptiverag.Filters{Company: "Umbrella"}, 5)
	if len(got) != 0 {
		t.Errorf("unknown company: %v", ids(got))
	}
	got, _ = r.Search(ctx, "zebra", adaptiverag.Filters{}, 5)
	if len(got) != 0 {
		t.Errorf("no shared term: %v", ids(got))
	}
	// The company name is searchable though the text may not say it.
	got, _ = r.Search(ctx, "Initech", adaptiverag.Filters{}, 5)
	if !slices.Equal(ids(got), []string{"initech-2021-income"}) {
		t.Errorf("company: %v", ids(got))
	}
}

func TestLoadPassages(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("reports/acme_2023.md", "# Acme 2023\r\n\r\nRevenue grew.\n\n\n  \nMargins fell.\n")
	write("notes.txt", "A note without company.")
	write("skip.csv", "a,b")
	ps, err := adaptiverag.LoadPassages(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []adaptiverag.Passage{
		{ID: "notes.txt#1", Text: "A note without company.", Source: "notes.txt"},
		{ID: "reports/acme_2023.md#1", Text: "# Acme 2023", Source: "reports/acme_2023.md", Company: "acme", Year: 2023},
		{ID: "reports/acme_2023.md#2", Text: "Revenue grew.", Source: "reports/acme_2023.md", Company: "acme", Year: 2023},
		{ID: "reports/acme_2023.md#3", Text: "Margins fell.", Source: "reports/acme_2023.md", Company: "acme", Year: 2023},
	}
	if !slices.Equal(ps, want) {
		t.Errorf("directory:\n%+v\nwant\n%+v", ps, want)
	}

	write("p.jsonl", `{"text":"one","company":"Globex","year":2023}`+"\n\n"+`{"id":"x","text":"two"}`+"\n"+`{"text":""}`+"\n")
	ps, err = adaptiverag.LoadPassages(filepath.Join(dir, "p.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want = []adaptiverag.Passage{
		{ID: "p1", Text: "one", Source: "p.jsonl", Company: "Globex", Year: 2023},
		{ID: "x", Text: "two", Source: "p.jsonl"},
	}
	if !slices.Equal(ps, want) {
		t.Errorf("jsonl: %+v", ps)
	}
	write("bad.json", `{"text": "not an array"}`)
	if _, err := adaptiverag.LoadPassages(filepath.Join(dir, "bad.json")); err == nil || !strings.Contains(err.Error(), "want a JSON array") {
		t.Errorf("bad json: %v", err)
	}
	if _, err := adaptiverag.LoadPassages(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
	ps = loadDocs(t)
	if len(ps) != 12 || ps[0].ID != "acme-2023-revenue" || ps[0].Company != "Acme" || ps[0].Year != 2023 {
		t.Errorf("testdata: %d passages, first %+v", len(ps), ps[0])
	}
}
