package builtin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/llm/providers"
)

func TestModelSpecFromFlags(t *testing.T) {
	vars := map[string]string{"OLLAMA_HOST": "gpu-box:11500", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "OPENAI_API_KEY": "sk-SECRET-1", "ANTHROPIC_API_KEY": "sk-ant-SECRET-2"}
	getenv := func(k string) string { return vars[k] }
	policy := &builtin.Policy{Timeout: component.Duration(300e9), MaxAttempts: 3, Concurrency: 8}
	for spec, want := range map[string]string{
		"ollama:qwen2.5:7b":           `{"id":"llm.ollama","config":{"base_url":"http://gpu-box:11500","api_key":{"env":"OLLAMA_API_KEY"},"model":"qwen2.5:7b","policy":{"timeout":"5m0s","max_attempts":3,"concurrency":8}}}`,
		"OpenAI: gpt-4o-mini":         `{"id":"llm.openai","config":{"base_url":"http://127.0.0.1:8000/v1","api_key":{"env":"OPENAI_API_KEY"},"model":"gpt-4o-mini","policy":{"timeout":"5m0s","max_attempts":3,"concurrency":8}}}`,
		"anthropic:claude-sonnet-4-5": `{"id":"llm.anthropic","config":{"api_key":{"env":"ANTHROPIC_API_KEY"},"model":"claude-sonnet-4-5","policy":{"timeout":"5m0s","max_attempts":3,"concurrency":8}}}`,
		"replay:run.jsonl":            `{"id":"llm.replay","config":{"file":"run.jsonl"}}`,
	} {
		s, err := builtin.ModelSpec(spec, getenv, policy)
		if err != nil {
			t.Fatalf("ModelSpec(%q): %v", spec, err)
		}
		got := mustJSON(t, s)
		if got != want {
			t.Errorf("ModelSpec(%q) =\n%s\nwant\n%s", spec, got, want)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("ModelSpec(%q) holds a key: %s", spec, got)
		}
		if strings.HasPrefix(spec, "replay") {
			continue
		}
		// The spec loads, with the keys from the environment.
		x, err := registry(t).Load(context.Background(), s, &component.Env{Getenv: getenv})
		if err != nil {
			t.Errorf("loading the spec of %q: %v", spec, err)
			continue
		}
		if m, err := x.(component.ModelProvider).Open(""); err != nil || m == nil {
			t.Errorf("%q: Open = %v, %v", spec, m, err)
		}
	}
	for spec, wantErr := range map[string]string{"": "no model given", "ollama": "no model after the provider", "mistral:small": `unknown provider "mistral"`} {
		_, err := builtin.ModelSpec(spec, getenv, nil)
		var se *providers.SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ModelSpec(%q) err = %v, want a *providers.SpecError saying %q", spec, err, wantErr)
		}
	}
	if _, err := builtin.ModelSpec("", getenv, nil); !errors.Is(err, providers.ErrNoModel) {
		t.Errorf("ModelSpec(\"\") err = %v, want ErrNoModel", err)
	}
}

func TestEmbedSpecFromFlags(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"OLLAMA_HOST": ":11500"}[k] }
	s, err := builtin.EmbedSpec("ollama:nomic-embed-text", getenv)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, s), `{"id":"embed.ollama","config":{"base_url":"http://127.0.0.1:11500","api_key":{"env":"OLLAMA_API_KEY"},"model":"nomic-embed-text"}}`; got != want {
		t.Errorf("EmbedSpec = %s, want %s", got, want)
	}
	if _, err := builtin.EmbedSpec("anthropic:claude", getenv); err == nil || !strings.Contains(err.Error(), `provider "anthropic" has no embeddings`) {
		t.Errorf("EmbedSpec(anthropic) err = %v", err)
	}
}

func mustJSON(t *testing.T, s component.Spec) string {
	t.Helper()
	b, err := jsonMarshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ProviderSpec serves a provider without naming a default model, so a
// binding without a model does not fall back on a model another binding
// named.
func TestProviderSpecHasNoDefaultModel(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}[k] }
	for spec, want := range map[string]string{
		"openai:gpt-4o-mini": `{"id":"llm.openai","config":{"base_url":"http://127.0.0.1:8000/v1","api_key":{"env":"OPENAI_API_KEY"}}}`,
		"replay:run.jsonl":   `{"id":"llm.replay","config":{}}`,
	} {
		s, err := builtin.ProviderSpec(spec, getenv, nil)
		if err != nil {
			t.Fatalf("ProviderSpec(%q): %v", spec, err)
		}
		if got := mustJSON(t, s); got != want {
			t.Errorf("ProviderSpec(%q) =\n%s\nwant\n%s", spec, got, want)
		}
	}
	var se *providers.SpecError
	if _, err := builtin.ProviderSpec("bogus:m", getenv, nil); !errors.As(err, &se) {
		t.Errorf("unknown provider: %v", err)
	}
}
