package providers_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/llm/openai"
	"github.com/weftlang/weft/llm/providers"
)

func TestOpenEmbedder(t *testing.T) {
	cases := []struct {
		spec string
		env  func(string) string
		want any
	}{
		{"ollama:nomic-embed-text", env(), &ollama.Client{}},
		{"Ollama:mxbai-embed-large:latest", env("OLLAMA_HOST", "gpu-box:11434"), &ollama.Client{}},
		{"openai:text-embedding-3-small", env("OPENAI_API_KEY", "k"), &openai.Client{}},
		{"openai:bge-m3", env("OPENAI_BASE_URL", "http://localhost:8000/v1"), &openai.Client{}},
		{"", env("WEFT_EMBED", "ollama:nomic-embed-text", "WEFT_LLM", "openai:gpt-4o"), &ollama.Client{}},
	}
	for _, c := range cases {
		e, err := providers.OpenEmbedder(c.spec, c.env)
		if err != nil {
			t.Errorf("OpenEmbedder(%q): %v", c.spec, err)
			continue
		}
		if got, want := typeName(e), typeName(c.want); got != want {
			t.Errorf("OpenEmbedder(%q) = %s, want %s", c.spec, got, want)
		}
	}
	if got := strings.Join(providers.KnownEmbedders(), ","); got != "ollama,openai" {
		t.Errorf("KnownEmbedders() = %s", got)
	}
}

func TestOpenEmbedderErrors(t *testing.T) {
	cases := []struct {
		spec    string
		env     func(string) string
		spec2   bool   // a *providers.SpecError
		contain string // in the message
	}{
		{"gemini:embedding-001", env(), true, "unknown provider \"gemini\" (known providers: ollama, openai)"},
		{"anthropic:claude", env("ANTHROPIC_API_KEY", "k"), true, "provider \"anthropic\" has no embeddings (known providers: ollama, openai)"},
		{"", env("WEFT_LLM", "ollama:llama3.1"), true, "WEFT_EMBED"},
		{"ollama", env(), true, "no model"},
		{"openai: ", env(), true, "no model"},
		{"openai:text-embedding-3-small", env(), false, "OPENAI_API_KEY is not set"},
		{"ollama:x", env("OLLAMA_HOST", "ftp://host"), false, "unsupported scheme"},
	}
	for _, c := range cases {
		_, err := providers.OpenEmbedder(c.spec, c.env)
		if err == nil {
			t.Errorf("OpenEmbedder(%q) succeeded", c.spec)
			continue
		}
		var se *providers.SpecError
		var le *llm.Error
		if c.spec2 && !errors.As(err, &se) || !c.spec2 && !errors.As(err, &le) {
			t.Errorf("OpenEmbedder(%q) error %q has type %T", c.spec, err, err)
		}
		if !strings.Contains(err.Error(), c.contain) {
			t.Errorf("OpenEmbedder(%q) error %q does not contain %q", c.spec, err, c.contain)
		}
	}
}

func TestOpenEmbedderWithExtra(t *testing.T) {
	openers := providers.EmbedOpeners()
	var got string
	openers["cache"] = func(model string, _ func(string) string) (llm.Embedder, error) {
		got = model
		return nil, nil
	}
	if _, err := providers.OpenEmbedderWith("cache:dir/vectors", env(), openers); err != nil {
		t.Fatal(err)
	}
	if got != "dir/vectors" {
		t.Errorf("opener got %q", got)
	}
	if _, ok := providers.EmbedOpeners()["cache"]; ok {
		t.Errorf("EmbedOpeners returned a shared map")
	}
}

// TestOpenEmbedderEndToEnd opens an embedder from the environment and
// embeds through the fake.
func TestOpenEmbedderEndToEnd(t *testing.T) {
	s := llmtest.NewOllamaServer()
	defer s.Close()
	e, err := providers.OpenEmbedder("ollama:nomic-embed-text", env("OLLAMA_HOST", s.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.Embed(t.Context(), &llm.EmbedRequest{Input: []string{"a b", "c"}})
	if err != nil || len(resp.Vectors) != 2 || resp.Model != "nomic-embed-text" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
}
