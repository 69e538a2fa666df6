package ollama_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
)

func newEmbedder(tb testing.TB, baseURL string) llm.Embedder {
	return ollama.New(ollama.Config{BaseURL: baseURL, Model: "nomic-embed-test"})
}

func TestEmbedConformance(t *testing.T) {
	llmtest.TestEmbedder(t, llmtest.Ollama, newEmbedder)
}

// TestEmbedWire checks the /api/embed body field by field.
func TestEmbedWire(t *testing.T) {
	s := llmtest.NewOllamaServer()
	defer s.Close()
	e := ollama.New(ollama.Config{BaseURL: s.BaseURL() + "/", Model: "m", Options: map[string]any{"num_ctx": 2048}, KeepAlive: "5m", APIKey: "k"})
	resp, err := e.Embed(t.Context(), &llm.EmbedRequest{Input: []string{"only one"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Vectors) != 1 || len(resp.Vectors[0]) != llmtest.EmbedDims {
		t.Fatalf("vectors = %d of %d", len(resp.Vectors), len(resp.Vectors[0]))
	}
	rec := s.EmbedRequests()[0]
	if rec.Path != "/api/embed" || rec.Header.Get("Authorization") != "Bearer k" {
		t.Errorf("path %q, Authorization header set: %v", rec.Path, rec.Header.Get("Authorization") != "")
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "m", "input": []any{"only one"}, "options": map[string]any{"num_ctx": 2048.0}, "keep_alive": "5m", "truncate": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestEmbedBehindPrefix checks that a proxy's path prefix is kept.
func TestEmbedBehindPrefix(t *testing.T) {
	s := llmtest.NewOllamaServer()
	defer s.Close()
	e := ollama.New(ollama.Config{BaseURL: s.URL + "/proxy", Model: "m"})
	_, err := e.Embed(t.Context(), &llm.EmbedRequest{Input: []string{"x"}})
	if err == nil || !strings.Contains(err.Error(), "/proxy/api/embed") {
		t.Errorf("err = %v, want the fake's 404 for /proxy/api/embed", err)
	}
}

func TestEmbedNoModel(t *testing.T) {
	s := llmtest.NewOllamaServer()
	defer s.Close()
	_, err := ollama.New(ollama.Config{BaseURL: s.BaseURL()}).Embed(t.Context(), &llm.EmbedRequest{Input: []string{"x"}})
	if err == nil || !strings.Contains(err.Error(), "no model") || len(s.Requests()) != 0 {
		t.Errorf("err = %v, requests %d", err, len(s.Requests()))
	}
}

// TestEmbedRedaction checks that the client's credentials, echoed by a
// server in its error, stay out of every error Embed returns.
func TestEmbedRedaction(t *testing.T) {
	llmtest.TestEmbedRedaction(t, llmtest.Ollama, func(t *testing.T, c llmtest.Credentials) llm.Embedder {
		return ollama.New(ollama.Config{BaseURL: c.BaseURL, APIKey: c.APIKey, Header: c.Header, Model: "m"})
	})
}
