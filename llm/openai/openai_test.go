package openai_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/openai"
)

const testKey = "sk-test-not-a-real-key"

func newModel(tb testing.TB, baseURL string) llm.Model {
	return openai.New(openai.Config{BaseURL: baseURL, APIKey: testKey, Model: "gpt-test"})
}

func TestConformance(t *testing.T) {
	llmtest.TestModel(t, llmtest.OpenAI, newModel)
}

func BenchmarkFirstToken(b *testing.B) {
	llmtest.BenchFirstToken(b, llmtest.OpenAI, newModel)
}

func BenchmarkStream1000(b *testing.B) {
	llmtest.BenchStream(b, llmtest.OpenAI, newModel, 1000)
}

func ask() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}}
}

func TestFromEnv(t *testing.T) {
	s := llmtest.NewOpenAIServer(llmtest.Text("hi"))
	defer s.Close()
	getenv := func(k string) string {
		return map[string]string{"OPENAI_BASE_URL": s.BaseURL(), "OPENAI_API_KEY": "sk-env-key"}[k]
	}
	m, err := openai.FromEnv(getenv, "local-model")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Chat(t.Context(), ask(), nil); err != nil {
		t.Fatal(err)
	}
	rec := s.Requests()[0]
	if rec.Header.Get("Authorization") != "Bearer sk-env-key" {
		t.Errorf("Authorization header does not carry OPENAI_API_KEY")
	}
	if rec.Request.Model != "local-model" {
		t.Errorf("model = %q", rec.Request.Model)
	}
	// A local server needs no key.
	if _, err := openai.FromEnv(func(k string) string {
		return map[string]string{"OPENAI_BASE_URL": "http://localhost:8000/v1"}[k]
	}, "m"); err != nil {
		t.Errorf("FromEnv for a local server without a key: %v", err)
	}
}

// recorder is a RoundTripper that records one request and answers it.
type recorder struct {
	req  *http.Request
	body []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.req = req
	r.body, _ = io.ReadAll(req.Body)
	body := `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func TestMaxTokensField(t *testing.T) {
	cases := []struct {
		base, field, want string
	}{
		{"", "", "max_completion_tokens"},
		{"https://api.openai.com/v1", "", "max_completion_tokens"},
		{"http://localhost:8000/v1", "", "max_tokens"},
		{"https://openrouter.ai/api/v1", "max_completion_tokens", "max_completion_tokens"},
	}
	for _, c := range cases {
		rec := &recorder{}
		m := openai.New(openai.Config{BaseURL: c.base, APIKey: "k", Model: "m", MaxTokensField: c.field, HTTPClient: &http.Client{Transport: rec}})
		req := ask()
		req.MaxTokens = 9
		if _, err := m.Chat(t.Context(), req, nil); err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.Unmarshal(rec.body, &body)
		if body[c.want] != 9.0 || len(body) != 3 {
			t.Errorf("base %q, field %q: body %s, want %s: 9", c.base, c.field, rec.body, c.want)
		}
		if c.base == "" && rec.req.URL.String() != "https://api.openai.com/v1/chat/completions" {
			t.Errorf("default endpoint = %s", rec.req.URL)
		}
	}
}

func TestWire(t *testing.T) {
	s := llmtest.NewOpenAIServer(llmtest.Text("ok"), llmtest.Text("ok"))
	defer s.Close()
	m := openai.New(openai.Config{BaseURL: s.BaseURL(), APIKey: testKey, Model: "m", NonStrict: true})
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.System, Content: "sys"},
			{Role: llm.User, Content: "u"},
			{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`"not json"`)}}},
			{Role: llm.ToolRole, ToolCallID: "c1", Name: "f", Content: "r"},
		},
		Tools:      []llm.Tool{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Schema:     json.RawMessage(`{"type":"object"}`),
		SchemaName: "my schema!",
		Effort:     llm.EffortLow,
	}
	if _, err := m.Chat(t.Context(), req, func(llm.Chunk) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(s.Requests()[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":            "m",
		"stream":           true,
		"stream_options":   map[string]any{"include_usage": true},
		"reasoning_effort": "low",
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "my_schema_", "schema": map[string]any{"type": "object"}, "strict": false}},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "f", "description": "d", "parameters": map[string]any{"type": "object"}}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "sys"},
			map[string]any{"role": "user", "content": "u"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "c1", "type": "function", "function": map[string]any{"name": "f", "arguments": "not json"}}}},
			map[string]any{"role": "tool", "content": "r", "tool_call_id": "c1"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if _, err := m.Chat(t.Context(), ask(), nil); err != nil {
		t.Fatal(err)
	}
	if b := string(s.Requests()[1].Body); strings.Contains(b, "stream") {
		t.Errorf("a call without onChunk sent stream fields: %s", b)
	}
}

// TestMalformedArguments checks that arguments that are not JSON arrive
// as a JSON string of the raw text.
func TestMalformedArguments(t *testing.T) {
	r := llmtest.Call("c", "f", `{"city": "Par`)
	s := llmtest.NewOpenAIServer(r, r)
	defer s.Close()
	m := newModel(t, s.BaseURL())
	for _, cb := range []func(llm.Chunk) error{nil, func(llm.Chunk) error { return nil }} {
		resp, err := m.Chat(t.Context(), ask(), cb)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(resp.Message.ToolCalls[0].Arguments); got != `"{\"city\": \"Par"` {
			t.Errorf("arguments = %s", got)
		}
	}
}

// TestErrorShapes checks the error bodies of OpenAI-compatible servers.
func TestErrorShapes(t *testing.T) {
	cases := map[string]string{
		`{"error":{"message":"model not found","type":"invalid_request_error"}}`: "model not found",
		`{"error":"plain string error"}`:                                         "plain string error",
		`{"object":"error","message":"vllm says no","type":"BadRequestError"}`:   "vllm says no",
		`{"detail":"fastapi says no"}`:                                           "fastapi says no",
		`<html>bad gateway</html>`:                                               "Bad Request",
	}
	for body, want := range cases {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(400)
			_, _ = io.WriteString(w, body)
		}))
		_, err := newModel(t, hs.URL).Chat(t.Context(), ask(), nil)
		var e *llm.Error
		if !errors.As(err, &e) || e.Message != want || e.Status != 400 {
			t.Errorf("body %s: err = %v, want message %q", body, err, want)
		}
		hs.Close()
	}
}

// TestToolDeltasWithoutIndex checks servers that omit the index of
// tool-call deltas.
func TestToolDeltasWithoutIndex(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"choices":[{"delta":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}}]}`,
			`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`,
		} {
			_, _ = io.WriteString(w, "data: "+ev+"\n\n")
		}
	}))
	defer hs.Close()
	resp, err := newModel(t, hs.URL).Chat(t.Context(), ask(), func(llm.Chunk) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Message.ToolCalls
	if len(c) != 2 || c[0].ID != "a" || string(c[0].Arguments) != `{"x":1}` || c[1].Name != "g" || resp.FinishReason != "tool_calls" {
		t.Errorf("calls = %+v, finish %q", c, resp.FinishReason)
	}
}

func TestKeyNotInErrors(t *testing.T) {
	for _, r := range []llmtest.Reply{llmtest.Status(401, "invalid api key"), {Cut: true, Text: "abc"}, {Reset: true}, {Malformed: true}} {
		s := llmtest.NewOpenAIServer(r)
		_, err := newModel(t, s.BaseURL()).Chat(t.Context(), ask(), func(llm.Chunk) error { return nil })
		if err == nil || strings.Contains(err.Error(), testKey) {
			t.Errorf("want an error that does not show the key (got one: %v)", err != nil)
		}
		s.Close()
	}
}

// TestRedaction checks that the client's credentials, echoed by a server
// in its error, stay out of every error it returns.
func TestRedaction(t *testing.T) {
	llmtest.TestRedaction(t, llmtest.OpenAI, func(t *testing.T, c llmtest.Credentials) llm.Model {
		return openai.New(openai.Config{BaseURL: c.BaseURL, APIKey: c.APIKey, Header: c.Header, Model: "m"})
	})
}

// TestMaxReplyBytes checks that Config.MaxReplyBytes bounds a reply,
// streamed or not, and that a reply within it is whole.
func TestMaxReplyBytes(t *testing.T) {
	llmtest.TestMaxReplyBytes(t, llmtest.OpenAI, func(baseURL string, maxReplyBytes int64) llm.Model {
		return openai.New(openai.Config{BaseURL: baseURL, Model: "m", MaxReplyBytes: maxReplyBytes})
	})
}
