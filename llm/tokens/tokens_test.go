package tokens_test

import (
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tokens"
)

func counter(t testing.TB, enc string) *tokens.Counter {
	t.Helper()
	c, err := tokens.New(enc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCount(t *testing.T) {
	cl := counter(t, "")
	if cl.Encoding() != tokens.Cl100kBase {
		t.Errorf("default encoding %q", cl.Encoding())
	}
	o2 := counter(t, tokens.O200kBase)
	for _, tc := range []struct {
		text   string
		cl, o2 int
	}{
		{"", 0, 0},
		{"hello world", 2, 2},
		{"tiktoken is great!", 6, 6},
		{"antidisestablishmentarianism", 6, 6},
	} {
		if got := cl.Count(tc.text); got != tc.cl {
			t.Errorf("cl100k_base %q: %d tokens, want %d", tc.text, got, tc.cl)
		}
		if got := o2.Count(tc.text); got != tc.o2 {
			t.Errorf("o200k_base %q: %d tokens, want %d", tc.text, got, tc.o2)
		}
	}
}

func TestNewUnknownEncoding(t *testing.T) {
	_, err := tokens.New("p50k_base")
	var ue *tokens.UnknownEncodingError
	if !errors.As(err, &ue) || ue.Name != "p50k_base" {
		t.Errorf("got %v", err)
	}
}

func TestEncodingForModel(t *testing.T) {
	for model, want := range map[string]string{
		"gpt-4o-mini":   tokens.O200kBase,
		"openai/gpt-4o": tokens.O200kBase,
		"gpt-5":         tokens.O200kBase,
		"o3-mini":       tokens.O200kBase,
		"gpt-4":         tokens.Cl100kBase,
		"gpt-3.5-turbo": tokens.Cl100kBase,
		"llama3.1":      tokens.Cl100kBase,
	} {
		if got := tokens.EncodingForModel(model); got != want {
			t.Errorf("%s: %s, want %s", model, got, want)
		}
	}
}

// cookbook are the example messages of OpenAI's "How to count tokens with
// tiktoken", which reports 129 prompt tokens for gpt-3.5-turbo-0613 and
// gpt-4 (cl100k_base) and 124 for gpt-4o (o200k_base).
var cookbook = []llm.Message{
	{Role: llm.System, Content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
	{Role: llm.System, Name: "example_user", Content: "New synergies will help drive top-line growth."},
	{Role: llm.System, Name: "example_assistant", Content: "Things working well together will increase revenue."},
	{Role: llm.System, Name: "example_user", Content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
	{Role: llm.System, Name: "example_assistant", Content: "Let's talk later when we're less busy about how to do better."},
	{Role: llm.User, Content: "This late pivot means we don't have time to boil the ocean for the client deliverable."},
}

func TestCountMessages(t *testing.T) {
	if got := counter(t, tokens.Cl100kBase).CountMessages(cookbook); got != 129 {
		t.Errorf("cl100k_base: %d, want 129", got)
	}
	if got := counter(t, tokens.O200kBase).CountMessages(cookbook); got != 124 {
		t.Errorf("o200k_base: %d, want 124", got)
	}
	if got := counter(t, "").CountMessages(nil); got != tokens.TokensReplyPrime {
		t.Errorf("no messages: %d", got)
	}
	withTool := []llm.Message{{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "search", Arguments: []byte(`{"q":"x"}`)}}}}
	if got := counter(t, "").CountMessages(withTool); got <= tokens.TokensPerMessage+tokens.TokensReplyPrime+1 {
		t.Errorf("tool call not counted: %d", got)
	}
}

func TestTruncate(t *testing.T) {
	c := counter(t, "")
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. Zoë's café — naïve 日本語のテキスト. ", 20)
	total := c.Count(text)
	for _, limit := range []int{0, 1, 2, 3, 7, 10, 33, 100, total - 1, total, total + 5} {
		got := c.Truncate(text, limit)
		if !strings.HasPrefix(text, got) {
			t.Fatalf("limit %d: not a prefix", limit)
		}
		if !utf8.ValidString(got) {
			t.Errorf("limit %d: invalid UTF-8 at the cut: %q", limit, got[max(0, len(got)-8):])
		}
		n := c.Count(got)
		if n > limit {
			t.Errorf("limit %d: %d tokens", limit, n)
		}
		if limit >= total && got != text {
			t.Errorf("limit %d >= %d: text was cut", limit, total)
		}
		if limit > 0 && limit < total && n < limit-2 {
			t.Errorf("limit %d: only %d tokens kept", limit, n)
		}
	}
	if got := c.Truncate("short", 100); got != "short" {
		t.Errorf("short text: %q", got)
	}
}

func TestExceeds(t *testing.T) {
	c := counter(t, "")
	// Seed 002: "the SQL result exceeds 500 tokens".
	row := "| 2019 | EMEA | 60,288 | 62,420 |\n"
	small := strings.Repeat(row, 10)
	big := strings.Repeat(row, 100)
	if c.Exceeds(small, 500) {
		t.Errorf("%d tokens exceed 500", c.Count(small))
	}
	if !c.Exceeds(big, 500) {
		t.Errorf("%d tokens do not exceed 500", c.Count(big))
	}
	if c.Exceeds("hello world", 2) || !c.Exceeds("hello world", 1) {
		t.Error("boundary: 2 tokens vs budget 2 and 1")
	}
}

func TestConcurrentUse(t *testing.T) {
	c := counter(t, tokens.O200kBase)
	text := strings.Repeat("concurrent counting of tokens ", 50)
	want := c.Count(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := c.Count(text); got != want {
					t.Errorf("got %d, want %d", got, want)
					return
				}
				c.Truncate(text, 17)
			}
		}()
	}
	wg.Wait()
}

// TestOffline proves that counting cannot touch the network: no package
// the tokenizer links (its codecs and embedded tables included) imports
// the net package, so there is no code path that could download anything.
// (Package llm itself links net/http for the providers; counting does not
// reach it.)
func TestOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/tiktoken-go/tokenizer").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), "github.com/tiktoken-go/tokenizer") {
		t.Fatalf("unexpected go list output:\n%s", out)
	}
	for _, d := range deps {
		if d == "net" || strings.HasPrefix(d, "net/") || strings.HasPrefix(d, "crypto/tls") {
			t.Errorf("the tokenizer links %s", d)
		}
	}
}

const kb10 = 10 * 1024

func sample10KB() string {
	para := "Apple's net sales for the EMEA segment were $60.3 billion in fiscal 2019, down 3% year over year, " +
		"primarily due to weakness in foreign currencies relative to the U.S. dollar; Services grew 16%.\n"
	s := strings.Repeat(para, kb10/len(para)+1)
	return s[:kb10]
}

func BenchmarkCount(b *testing.B) {
	for _, enc := range []string{tokens.Cl100kBase, tokens.O200kBase} {
		b.Run(enc, func(b *testing.B) {
			c := counter(b, enc)
			text := sample10KB()
			c.Count(text) // tables loaded before timing
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := tokens.New(""); err != nil {
			b.Fatal(err)
		}
	}
}
