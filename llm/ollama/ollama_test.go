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

func newModel(tb testing.TB, baseURL string) llm.Model {
	return ollama.New(ollama.Config{BaseURL: baseURL, Model: "llama-test"})
}

func TestConformance(t *testing.T) {
	llmtest.TestModel(t, llmtest.Ollama, newModel)
}

func BenchmarkFirstToken(b *testing.B) {
	llmtest.BenchFirstToken(b, llmtest.Ollama, newModel)
}

func BenchmarkStream1000(b *testing.B) {
	llmtest.BenchStream(b, llmtest.Ollama, newModel, 1000)
}

func TestParseHost(t *testing.T) {
	cases := map[string]string{
		"":                                   "http://127.0.0.1:11434",
		"gpu-box":                            "http://gpu-box:11434",
		"gpu-box:8080":                       "http://gpu-box:8080",
		":9999":                              "http://127.0.0.1:9999",
		"0.0.0.0":                            "http://0.0.0.0:11434",
		"[::1]:11434":                        "http://[::1]:11434",
		"::1":                                "http://[::1]:11434",
		"http://gpu-box":                     "http://gpu-box:80",
		"https://ollama.example":             "https://ollama.example:443",
		"https://ollama.example:8443/proxy/": "https://ollama.example:8443/proxy",
		"  10.0.0.5:11434  ":                 "http://10.0.0.5:11434",
	}
	for in, want := range cases {
		got, err := ollama.ParseHost(in)
		if err != nil || got != want {
			t.Errorf("ParseHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://host", "host:99999", "host:abc"} {
		if _, err := ollama.ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) succeeded", bad)
		}
	}
}

func TestFromEnvHostWithoutScheme(t *testing.T) {
	s := llmtest.NewOllamaServer(llmtest.Text("hi"))
	defer s.Close()
	hostport := strings.TrimPrefix(s.URL, "http://")
	m, err := ollama.FromEnv(func(k string) string {
		if k == "OLLAMA_HOST" {
			return hostport
		}
		return ""
	}, "llama3.1")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Chat(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}}, nil)
	if err != nil || resp.Message.Content != "hi" {
		t.Fatalf("resp %v, err %v", resp, err)
	}
	if got := s.Requests()[0].Request.Model; got != "llama3.1" {
		t.Errorf("model = %q", got)
	}
	if _, err := ollama.FromEnv(func(string) string { return "" }, ""); err == nil {
		t.Errorf("FromEnv without a model succeeded")
	}
}

// TestWire checks the request body field by field.
func TestWire(t *testing.T) {
	s := llmtest.NewOllamaServer(llmtest.Text("ok"))
	defer s.Close()
	m := ollama.New(ollama.Config{BaseURL: s.BaseURL(), Model: "m", Options: map[string]any{"num_ctx": 8192, "temperature": 0.9}, KeepAlive: "10m"})
	temp, seed := 0.1, int64(7)
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.System, Content: "sys"},
			{Role: llm.User, Content: "u"},
			{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}},
			{Role: llm.ToolRole, ToolCallID: "c1", Name: "f", Content: "r"},
		},
		Tools:       []llm.Tool{{Name: "f", Description: "d"}},
		Schema:      json.RawMessage(`{"type":"object"}`),
		Temperature: &temp, MaxTokens: 5, Stop: []string{"x"}, Seed: &seed,
	}
	if _, err := m.Chat(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(s.Requests()[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":      "m",
		"stream":     false,
		"keep_alive": "10m",
		"truncate":   false,
		"format":     map[string]any{"type": "object"},
		"options":    map[string]any{"num_ctx": 8192.0, "temperature": 0.1, "num_predict": 5.0, "stop": []any{"x"}, "seed": 7.0},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "f", "description": "d", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "sys"},
			map[string]any{"role": "user", "content": "u"},
			map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "c1", "function": map[string]any{"name": "f", "arguments": map[string]any{"a": 1.0}}}}},
			map[string]any{"role": "tool", "content": "r", "tool_name": "f", "tool_call_id": "c1"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestToolCallIDs checks that calls without an id get call_0, call_1.
func TestToolCallIDs(t *testing.T) {
	s := llmtest.NewOllamaServer(llmtest.Reply{ToolCalls: []llm.ToolCall{
		{Name: "a", Arguments: json.RawMessage(`{}`)}, {Name: "b", Arguments: json.RawMessage(`{"x":1}`)},
	}})
	defer s.Close()
	resp, err := newModel(t, s.BaseURL()).Chat(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[0].ID != "call_0" || resp.Message.ToolCalls[1].ID != "call_1" {
		t.Errorf("tool calls = %+v", resp.Message.ToolCalls)
	}
}

// TestKeyNotInErrors checks that no error message shows the API key.
func TestKeyNotInErrors(t *testing.T) {
	const key = "ollama-secret-key-123"
	for _, r := range []llmtest.Reply{llmtest.Status(401, "unauthorized"), {Cut: true, Text: "abc"}, {Reset: true}, {Malformed: true}} {
		s := llmtest.NewOllamaServer(r)
		m := ollama.New(ollama.Config{BaseURL: s.BaseURL(), APIKey: key, Model: "m"})
		_, err := m.Chat(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}}, func(llm.Chunk) error { return nil })
		if err == nil || strings.Contains(err.Error(), key) {
			t.Errorf("err = %v: want an error that does not show the key", err != nil)
		}
		if got := s.Requests()[0].Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("Authorization header does not carry the configured key")
		}
		s.Close()
	}
}

// TestRedaction checks that the client's credentials, echoed by a server
// in its error, stay out of every error it returns.
func TestRedaction(t *testing.T) {
	llmtest.TestRedaction(t, llmtest.Ollama, func(t *testing.T, c llmtest.Credentials) llm.Model {
		return ollama.New(ollama.Config{BaseURL: c.BaseURL, APIKey: c.APIKey, Header: c.Header, Model: "m"})
	})
}

// TestMaxReplyBytes checks that Config.MaxReplyBytes bounds a reply,
// streamed or not, and that a reply within it is whole.
func TestMaxReplyBytes(t *testing.T) {
	llmtest.TestMaxReplyBytes(t, llmtest.Ollama, func(baseURL string, maxReplyBytes int64) llm.Model {
		return ollama.New(ollama.Config{BaseURL: baseURL, Model: "m", MaxReplyBytes: maxReplyBytes})
	})
}
