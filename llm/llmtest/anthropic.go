package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/weftlang/weft/llm"
)

// anthropicWire is Anthropic's /v1/messages.
type anthropicWire struct{}

type anRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        json.RawMessage `json:"system"` // a string or a list of text blocks
	Messages      []anMessage     `json:"messages"`
	Tools         []anTool        `json:"tools"`
	ToolChoice    *anToolChoice   `json:"tool_choice"`
	Temperature   *float64        `json:"temperature"`
	StopSequences []string        `json:"stop_sequences"`
	Stream        bool            `json:"stream"`
}

type anToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

type anMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // tool_result: a string or text blocks
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func (anthropicWire) path() string { return "/v1/messages" }

func (anthropicWire) contentType(stream bool) string {
	if stream {
		return "text/event-stream; charset=utf-8"
	}
	return "application/json"
}

// anText reads a string or a list of text blocks.
func anText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []anBlock
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

func (anthropicWire) decode(body []byte) (inbound, error) {
	var w anRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return inbound{}, err
	}
	if w.MaxTokens <= 0 {
		return inbound{}, fmt.Errorf("max_tokens: field required")
	}
	in := inbound{stream: w.Stream}
	r := &in.req
	r.Model = w.Model
	if sys := anText(w.System); sys != "" {
		r.Messages = append(r.Messages, llm.Message{Role: llm.System, Content: sys})
	}
	for _, m := range w.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			r.Messages = append(r.Messages, llm.Message{Role: llm.Role(m.Role), Content: s})
			continue
		}
		var blocks []anBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return inbound{}, fmt.Errorf("messages: content: %w", err)
		}
		cur := llm.Message{Role: llm.Role(m.Role)}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				cur.Content += b.Text
			case "tool_use":
				cur.ToolCalls = append(cur.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
			case "tool_result":
				r.Messages = append(r.Messages, llm.Message{Role: llm.ToolRole, ToolCallID: b.ToolUseID, Content: anText(b.Content)})
			}
		}
		if cur.Content != "" || len(cur.ToolCalls) > 0 {
			r.Messages = append(r.Messages, cur)
		}
	}
	if w.ToolChoice != nil && w.ToolChoice.Type == "tool" {
		in.forcedTool = w.ToolChoice.Name
	}
	for _, t := range w.Tools {
		if t.Name == in.forcedTool {
			r.Schema = t.InputSchema
			r.SchemaName = t.Name
			continue
		}
		r.Tools = append(r.Tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	r.Temperature = w.Temperature
	r.MaxTokens = w.MaxTokens
	r.Stop = w.StopSequences
	return in, nil
}

func (anthropicWire) finish(r *reply) string {
	switch {
	case r.finish != "":
		return r.finish
	case len(r.calls) > 0 || r.toolInput != "":
		return "tool_use"
	}
	return "end_turn"
}

// toolBlocks are the tool_use blocks: the forced tool's first, then the
// calls.
func (anthropicWire) toolBlocks(r *reply, in *inbound) []anBlock {
	var out []anBlock
	if r.toolInput != "" {
		out = append(out, anBlock{Type: "tool_use", ID: "toolu_llmtest_out", Name: in.forcedTool, Input: json.RawMessage(r.toolInput)})
	}
	for i, c := range r.calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_llmtest_%d", i)
		}
		out = append(out, anBlock{Type: "tool_use", ID: id, Name: c.Name, Input: asObject(c.Arguments)})
	}
	return out
}

func (a anthropicWire) stream(r *reply, in *inbound) []event {
	var evs []event
	add := func(name string, v any, content bool) {
		evs = append(evs, event{data: sse(name, mustJSON(v)), content: content})
	}
	add("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "content": []any{}, "model": r.model,
		"stop_reason": nil, "stop_sequence": nil, "usage": anUsage{InputTokens: r.usage.InputTokens, OutputTokens: 1},
	}}, false)
	add("ping", map[string]string{"type": "ping"}, false)
	idx := 0
	if r.text != "" {
		add("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]string{"type": "text", "text": ""}}, false)
		for _, p := range pieces(r.text, r.chunk) {
			add("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]string{"type": "text_delta", "text": p}}, true)
		}
		add("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}, false)
		idx++
	}
	for _, b := range a.toolBlocks(r, in) {
		add("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}}, true)
		for _, p := range pieces(string(b.Input), r.chunk) {
			add("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]string{"type": "input_json_delta", "partial_json": p}}, true)
		}
		add("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}, false)
		idx++
	}
	if r.repeat { // ended before the message's end
		return evs
	}
	add("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": a.finish(r), "stop_sequence": nil}, "usage": map[string]int{"output_tokens": r.usage.OutputTokens}}, false)
	add("message_stop", map[string]string{"type": "message_stop"}, false)
	return evs
}

func (a anthropicWire) whole(r *reply, in *inbound) []byte {
	blocks := []anBlock{}
	if r.text != "" {
		blocks = append(blocks, anBlock{Type: "text", Text: r.text})
	}
	blocks = append(blocks, a.toolBlocks(r, in)...)
	var stop any = a.finish(r)
	if r.repeat {
		stop = nil
	}
	return mustJSON(map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "model": r.model, "content": blocks,
		"stop_reason": stop, "stop_sequence": nil,
		"usage": anUsage{InputTokens: r.usage.InputTokens, OutputTokens: r.usage.OutputTokens},
	})
}

func (anthropicWire) errorBody(status int, msg string) []byte {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusNotFound:
		typ = "not_found_error"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == 529:
		typ = "overloaded_error"
	case status >= 500:
		typ = "api_error"
	}
	return mustJSON(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
}

func (anthropicWire) streamError(msg string) []byte {
	return sse("error", mustJSON(map[string]any{"type": "error", "error": map[string]string{"type": "overloaded_error", "message": msg}}))
}

func (anthropicWire) malformed(stream bool) []byte {
	b := []byte(`{"type":"content_block_delta","index":0,,"delta":{"type":"text_delta","text":"a"}}`)
	if stream {
		return sse("content_block_delta", b)
	}
	return b
}
