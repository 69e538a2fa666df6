package providers_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/anthropic"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/llm/openai"
	"github.com/weftlang/weft/llm/providers"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestOpen(t *testing.T) {
	cases := []struct {
		spec string
		env  func(string) string
		want any
	}{
		{"ollama:llama3.1", env(), &ollama.Client{}},
		{"ollama:qwen2.5:7b", env("OLLAMA_HOST", "gpu-box:11434"), &ollama.Client{}},
		{"OpenAI:gpt-4o-mini", env("OPENAI_API_KEY", "k"), &openai.Client{}},
		{"openai:local-model", env("OPENAI_BASE_URL", "http://localhost:8000/v1"), &openai.Client{}},
		{"anthropic:claude-sonnet-4-5", env("ANTHROPIC_API_KEY", "k"), &anthropic.Client{}},
		{"", env("WEFT_LLM", "ollama:llama3.1"), &ollama.Client{}},
	}
	for _, c := range cases {
		m, err := providers.Open(c.spec, c.env)
		if err != nil {
			t.Errorf("Open(%q): %v", c.spec, err)
			continue
		}
		if got, want := typeName(m), typeName(c.want); got != want {
			t.Errorf("Open(%q) = %s, want %s", c.spec, got, want)
		}
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *ollama.Client:
		return "ollama"
	case *openai.Client:
		return "openai"
	case *anthropic.Client:
		return "anthropic"
	}
	return "?"
}

func TestOpenErrors(t *testing.T) {
	cases := []struct {
		spec    string
		env     func(string) string
		spec2   bool   // a *providers.SpecError
		contain string // in the message
	}{
		{"gemini:pro", env(), true, "unknown provider \"gemini\" (known providers: anthropic, ollama, openai, replay)"},
		{"", env(), true, "WEFT_LLM"},
		{"ollama", env(), true, "no model"},
		{"ollama:", env(), true, "no model"},
		{"anthropic:claude", env(), false, "ANTHROPIC_API_KEY is not set"},
		{"openai:gpt-4o", env(), false, "OPENAI_API_KEY is not set"},
		{"ollama:x", env("OLLAMA_HOST", "ftp://host"), false, "unsupported scheme"},
		{"openai:x", env("OPENAI_BASE_URL", "localhost:8000"), false, "not an http(s) URL"},
	}
	for _, c := range cases {
		_, err := providers.Open(c.spec, c.env)
		if err == nil {
			t.Errorf("Open(%q) succeeded", c.spec)
			continue
		}
		var se *providers.SpecError
		var le *llm.Error
		if c.spec2 && !errors.As(err, &se) || !c.spec2 && !errors.As(err, &le) {
			t.Errorf("Open(%q) error %q has type %T", c.spec, err, err)
		}
		if !strings.Contains(err.Error(), c.contain) {
			t.Errorf("Open(%q) error %q does not contain %q", c.spec, err, c.contain)
		}
	}
}

func TestOpenWithExtra(t *testing.T) {
	openers := providers.Openers()
	var got string
	openers["mock"] = func(model string, _ func(string) string) (llm.Model, error) {
		got = model
		return nil, nil
	}
	if _, err := providers.OpenWith("mock:run.jsonl", env(), openers); err != nil {
		t.Fatal(err)
	}
	if got != "run.jsonl" {
		t.Errorf("opener got %q", got)
	}
	if _, ok := providers.Openers()["mock"]; ok {
		t.Errorf("Openers returned a shared map")
	}
}

// "replay:FILE" serves a recording offline; a missing file is an error
// naming it.
func TestOpenReplay(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(rec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := providers.Open("replay:"+rec, env())
	if err != nil || m == nil {
		t.Fatalf("Open(replay:...) = %v, %v", m, err)
	}
	if _, err := providers.Open("replay:"+rec+".missing", env()); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing recording: err = %v", err)
	}
}

// TestNoModelIsAKindWithoutCLIAdvice: no spec and no WEFT_LLM is
// ErrNoModel (a *SpecError), whose text names no CLI flag.
func TestNoModelIsAKindWithoutCLIAdvice(t *testing.T) {
	_, err := providers.Open("", func(string) string { return "" })
	var se *providers.SpecError
	if !errors.Is(err, providers.ErrNoModel) || !errors.As(err, &se) {
		t.Fatalf("Open(\"\"): %v; want a *SpecError matching ErrNoModel", err)
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("error %q gives CLI advice", err)
	}
	if _, err := providers.Open("nosuch:model", nil); errors.Is(err, providers.ErrNoModel) {
		t.Errorf("an unknown provider matches ErrNoModel: %v", err)
	}
}
