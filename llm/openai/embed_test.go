package openai_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/openai"
)

func newEmbedder(tb testing.TB, baseURL string) llm.Embedder {
	return openai.New(openai.Config{BaseURL: baseURL, APIKey: testKey, Model: "text-embedding-test"})
}

func TestEmbedConformance(t *testing.T) {
	llmtest.TestEmbedder(t, llmtest.OpenAI, newEmbedder)
}

// TestEmbedWire checks the /embeddings body field by field.
func TestEmbedWire(t *testing.T) {
	s := llmtest.NewOpenAIServer()
	defer s.Close()
	if _, err := newEmbedder(t, s.BaseURL()+"/").Embed(t.Context(), &llm.EmbedRequest{Input: []string{"only one"}}); err != nil {
		t.Fatal(err)
	}
	rec := s.EmbedRequests()[0]
	if rec.Path != "/v1/embeddings" || rec.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("path %q, Authorization header as configured: %v", rec.Path, rec.Header.Get("Authorization") == "Bearer "+testKey)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "text-embedding-test", "input": []any{"only one"}, "encoding_format": "float"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestEmbedReplyShapes reads replies the fake does not send: base64
// vectors, no indexes, bad indexes, an error object in a 200 reply.
func TestEmbedReplyShapes(t *testing.T) {
	cases := []struct {
		name, body string
		want       [][]float32 // nil: an error containing errText
		errText    string
	}{
		{"Base64", `{"data":[{"index":1,"embedding":"AAAAPwAAgD8="},{"index":0,"embedding":"AACAPwAAAAA="}],"model":"m"}`,
			[][]float32{{1, 0}, {0.5, 1}}, ""},
		{"NoIndexes", `{"data":[{"embedding":[1,2]},{"embedding":[3,4]}]}`, [][]float32{{1, 2}, {3, 4}}, ""},
		{"DuplicateIndex", `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, nil, "two vectors with index 0"},
		{"IndexOutOfRange", `{"data":[{"index":0,"embedding":[1,2]},{"index":2,"embedding":[3,4]}]}`, nil, "index 2"},
		{"MissingIndex", `{"data":[{"index":0,"embedding":[1,2]},{"embedding":[3,4]}]}`, nil, "no index"},
		{"BadBase64", `{"data":[{"index":0,"embedding":"!!"},{"index":1,"embedding":"AAAAAA=="}]}`, nil, "base64"},
		{"NotNumbers", `{"data":[{"index":0,"embedding":{"a":1}},{"index":1,"embedding":[1]}]}`, nil, "not a list of numbers"},
		{"ErrorIn200", `{"error":{"message":"quota exceeded","type":"server_error"}}`, nil, "quota exceeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(c.body))
			}))
			defer hs.Close()
			resp, err := newEmbedder(t, hs.URL+"/v1").Embed(t.Context(), &llm.EmbedRequest{Input: []string{"a", "b"}})
			if c.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(c.want, resp.Vectors); diff != "" {
					t.Errorf("vectors (-want +got):\n%s", diff)
				}
				return
			}
			var le *llm.Error
			if err == nil || !strings.Contains(err.Error(), c.errText) || !strings.HasPrefix(err.Error(), "openai: ") {
				t.Fatalf("err = %v, want an openai error mentioning %q", err, c.errText)
			}
			if !errors.As(err, &le) {
				t.Errorf("err %T is not an *llm.Error", err)
			}
		})
	}
}

// TestEmbedRedaction checks that the client's credentials, echoed by a
// server in its error, stay out of every error Embed returns.
func TestEmbedRedaction(t *testing.T) {
	llmtest.TestEmbedRedaction(t, llmtest.OpenAI, func(t *testing.T, c llmtest.Credentials) llm.Embedder {
		return openai.New(openai.Config{BaseURL: c.BaseURL, APIKey: c.APIKey, Header: c.Header, Model: "m"})
	})
}
