package anthropic_test

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
	"github.com/weftlang/weft/llm/anthropic"
	"github.com/weftlang/weft/llm/llmtest"
)

const testKey = "sk-ant-test-not-a-real-key"

func newModel(tb testing.TB, baseURL string) llm.Model {
	return anthropic.New(anthropic.Config{BaseURL: baseURL, APIKey: testKey, Model: "claude-test"})
}

func TestConformance(t *testing.T) {
	llmtest.TestModel(t, llmtest.Anthropic, newModel)
}

func BenchmarkFirstToken(b *testing.B) {
	llmtest.BenchFirstToken(b, llmtest.Anthropic, newModel)
}

func BenchmarkStream1000(b *testing.B) {
	llmtest.BenchStream(b, llmtest.Anthropic, newModel, 1000)
}

func ask() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}}
}

func TestFromEnv(t *testing.T) {
	s := llmtest.NewAnthropicServer(llmtest.Text("hi"))
	defer s.Close()
	getenv := func(k string) string {
		return map[string]string{"ANTHROPIC_BASE_URL": s.BaseURL(), "ANTHROPIC_API_KEY": "sk-ant-env"}[k]
	}
	m, err := anthropic.FromEnv(getenv, "claude-x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Chat(t.Context(), ask(), nil); err != nil {
		t.Fatal(err)
	}
	rec := s.Requests()[0]
	if rec.Header.Get("X-Api-Key") != "sk-ant-env" {
		t.Errorf("x-api-key does not carry ANTHROPIC_API_KEY")
	}
	if rec.Header.Get("Authorization") != "" {
		t.Errorf("an Authorization header was sent too")
	}
	if rec.Request.Model != "claude-x" || rec.Request.MaxTokens != anthropic.DefaultMaxTokens {
		t.Errorf("model %q, max_tokens %d", rec.Request.Model, rec.Request.MaxTokens)
	}
	if _, err := anthropic.FromEnv(func(string) string { return "" }, "claude-x"); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("FromEnv without a key: %v", err)
	}
}

func TestWire(t *testing.T) {
	s := llmtest.NewAnthropicServer(llmtest.Text("ok"))
	defer s.Close()
	m := anthropic.New(anthropic.Config{BaseURL: s.BaseURL(), APIKey: testKey, Model: "m", MaxTokens: 300})
	temp, seed := 0.5, int64(3)
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.System, Content: "sys one"},
			{Role: llm.User, Content: "u"},
			{Role: llm.System, Content: "sys two"},
			{Role: llm.Assistant, Content: "let me look", ToolCalls: []llm.ToolCall{
				{ID: "t1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)},
				{ID: "t2", Name: "f", Arguments: json.RawMessage(`{"a":2}`)},
			}},
			{Role: llm.ToolRole, ToolCallID: "t1", Name: "f", Content: "r1"},
			{Role: llm.ToolRole, ToolCallID: "t2", Name: "f", Content: "r2"},
			{Role: llm.User, Content: "and?"},
		},
		Tools:       []llm.Tool{{Name: "f", Description: "d"}},
		Temperature: &temp, Stop: []string{"END"}, Seed: &seed, Effort: llm.EffortHigh,
	}
	if _, err := m.Chat(t.Context(), req, func(llm.Chunk) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(s.Requests()[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":          "m",
		"max_tokens":     300.0,
		"stream":         true,
		"system":         "sys one\n\nsys two",
		"temperature":    0.5,
		"stop_sequences": []any{"END"},
		"tools": []any{map[string]any{"name": "f", "description": "d",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{}}}},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "u"}}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "let me look"},
				map[string]any{"type": "tool_use", "id": "t1", "name": "f", "input": map[string]any{"a": 1.0}},
				map[string]any{"type": "tool_use", "id": "t2", "name": "f", "input": map[string]any{"a": 2.0}},
			}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "r1"},
				map[string]any{"type": "tool_result", "tool_use_id": "t2", "content": "r2"},
				map[string]any{"type": "text", "text": "and?"},
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestStructuredWithTools checks that a schema next to tools gives
// tool_choice "any", and that a call of the output tool is the answer.
func TestStructuredWithTools(t *testing.T) {
	out := llm.ToolCall{ID: "o", Name: "verdict", Arguments: json.RawMessage(`{"ok":true}`)}
	r := llmtest.Reply{ToolCalls: []llm.ToolCall{out}}
	s := llmtest.NewAnthropicServer(r, r)
	defer s.Close()
	m := newModel(t, s.BaseURL())
	req := ask()
	req.Tools = []llm.Tool{{Name: "f"}}
	req.Schema, req.SchemaName = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`), "verdict"
	for _, cb := range []func(llm.Chunk) error{nil, func(llm.Chunk) error { return nil }} {
		resp, err := m.Chat(t.Context(), req, cb)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Content != `{"ok":true}` || len(resp.Message.ToolCalls) != 0 || resp.FinishReason != llm.FinishStop {
			t.Errorf("resp = %+v", resp)
		}
	}
	var body struct {
		Tools      []struct{ Name string }
		ToolChoice map[string]any `json:"tool_choice"`
	}
	_ = json.Unmarshal(s.Requests()[0].Body, &body)
	if len(body.Tools) != 2 || body.Tools[1].Name != "verdict" || body.ToolChoice["type"] != "any" {
		t.Errorf("tools %+v, tool_choice %v", body.Tools, body.ToolChoice)
	}
}

// TestScalarSchemaWrapped checks the {"value": schema} wrapping.
func TestScalarSchemaWrapped(t *testing.T) {
	s := llmtest.NewAnthropicServer(llmtest.JSON("qa"))
	defer s.Close()
	req := ask()
	req.Schema = json.RawMessage(`{"type":"string","enum":["qa","summarization"]}`)
	resp, err := newModel(t, s.BaseURL()).Chat(t.Context(), req, nil)
	if err != nil || resp.Message.Content != `"qa"` {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	rec := s.Requests()[0].Request
	want := `{"type":"object","properties":{"value":{"type":"string","enum":["qa","summarization"]}},"required":["value"],"additionalProperties":false}`
	if string(rec.Schema) != want || rec.SchemaName != anthropic.DefaultOutputTool {
		t.Errorf("input_schema %s named %q", rec.Schema, rec.SchemaName)
	}
}

// TestStreamSkipsThinking checks that thinking blocks, pings and unknown
// events are skipped.
func TestStreamSkipsThinking(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range [][2]string{
			{"message_start", `{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}`},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			{"ping", `{"type":"ping"}`},
			{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}`},
			{"future_event", `{"type":"future_event"}`},
			{"content_block_stop", `{"type":"content_block_stop","index":1}`},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`},
			{"message_stop", `{"type":"message_stop"}`},
		} {
			_, _ = io.WriteString(w, "event: "+ev[0]+"\ndata: "+ev[1]+"\n\n")
		}
	}))
	defer hs.Close()
	var text string
	resp, err := newModel(t, hs.URL).Chat(t.Context(), ask(), func(c llm.Chunk) error { text += c.Text; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if text != "Hi" || resp.Message.Content != "Hi" || resp.Usage != (llm.Usage{InputTokens: 15, OutputTokens: 4}) || resp.Model != "claude-x" {
		t.Errorf("streamed %q, resp %+v", text, resp)
	}
}

func TestOverloaded(t *testing.T) {
	s := llmtest.NewAnthropicServer(llmtest.Status(529, ""))
	defer s.Close()
	_, err := newModel(t, s.BaseURL()).Chat(t.Context(), ask(), nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 529 || !e.Retryable || e.Message != "Overloaded" {
		t.Errorf("err = %v", err)
	}
}

func TestKeyNotInErrors(t *testing.T) {
	for _, r := range []llmtest.Reply{llmtest.Status(401, "invalid x-api-key"), {Cut: true, Text: "abc"}, {Reset: true}, {Malformed: true}} {
		s := llmtest.NewAnthropicServer(r)
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
	llmtest.TestRedaction(t, llmtest.Anthropic, func(t *testing.T, c llmtest.Credentials) llm.Model {
		return anthropic.New(anthropic.Config{BaseURL: c.BaseURL, APIKey: c.APIKey, Header: c.Header, Model: "m"})
	})
}

// TestMaxReplyBytes checks that Config.MaxReplyBytes bounds a reply,
// streamed or not, and that a reply within it is whole.
func TestMaxReplyBytes(t *testing.T) {
	llmtest.TestMaxReplyBytes(t, llmtest.Anthropic, func(baseURL string, maxReplyBytes int64) llm.Model {
		return anthropic.New(anthropic.Config{BaseURL: baseURL, Model: "m", MaxReplyBytes: maxReplyBytes})
	})
}
