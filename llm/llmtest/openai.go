package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/weftlang/weft/llm"
)

// openaiWire is the OpenAI-compatible /v1/chat/completions; ollama
// shapes its replies as Ollama's /v1 does.
type openaiWire struct {
	ollama bool
}

type oaRequest struct {
	Model         string      `json:"model"`
	Messages      []oaMessage `json:"messages"`
	Stream        bool        `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools          []oaTool `json:"tools"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"` // a string or a list
	Seed                *int64          `json:"seed"`
	ReasoningEffort     string          `json:"reasoning_effort"`
}

type oaMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string, null, or a list of parts
	ToolCalls  []oaToolCall    `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type oaDelta struct {
	Role      string       `json:"role,omitempty"`
	Content   *string      `json:"content,omitempty"`
	ToolCalls []oaToolCall `json:"tool_calls,omitempty"`
}

type oaChoice struct {
	Index        int        `json:"index"`
	Delta        *oaDelta   `json:"delta,omitempty"`
	Message      *oaRespMsg `json:"message,omitempty"`
	FinishReason *string    `json:"finish_reason"`
}

type oaRespMsg struct {
	Role      string       `json:"role"`
	Content   *string      `json:"content"`
	ToolCalls []oaToolCall `json:"tool_calls,omitempty"`
}

type oaResponse struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	Created           int64      `json:"created"`
	Model             string     `json:"model"`
	SystemFingerprint string     `json:"system_fingerprint,omitempty"`
	Choices           []oaChoice `json:"choices"`
	Usage             *oaUsage   `json:"usage,omitempty"`
}

func (openaiWire) path() string { return "/v1/chat/completions" }

func (openaiWire) contentType(stream bool) string {
	if stream {
		return "text/event-stream"
	}
	return "application/json"
}

func (openaiWire) decode(body []byte) (inbound, error) {
	var w oaRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return inbound{}, err
	}
	in := inbound{stream: w.Stream, streamUsage: w.StreamOptions != nil && w.StreamOptions.IncludeUsage}
	r := &in.req
	r.Model = w.Model
	for _, m := range w.Messages {
		msg := llm.Message{Role: llm.Role(m.Role), Content: oaText(m.Content), ToolCallID: m.ToolCallID, Name: m.Name}
		if msg.Role == "developer" {
			msg.Role = llm.System
		}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: json.RawMessage(c.Function.Arguments)})
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	if f := w.ResponseFormat; f != nil && f.JSONSchema != nil {
		r.Schema = f.JSONSchema.Schema
		r.SchemaName = f.JSONSchema.Name
	}
	r.Temperature = w.Temperature
	r.MaxTokens = max(w.MaxTokens, w.MaxCompletionTokens)
	if len(w.Stop) > 0 {
		var one string
		if json.Unmarshal(w.Stop, &one) == nil {
			r.Stop = []string{one}
		} else {
			_ = json.Unmarshal(w.Stop, &r.Stop)
		}
	}
	r.Seed = w.Seed
	r.Effort = llm.Effort(w.ReasoningEffort)
	in.think = w.ReasoningEffort
	return in, nil
}

// oaText reads a message content: a string, null, or a list of text parts.
func oaText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	for _, p := range parts {
		s += p.Text
	}
	return s
}

func (openaiWire) finish(r *reply) string {
	switch {
	case r.finish != "":
		return r.finish
	case len(r.calls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (openaiWire) usage(r *reply) *oaUsage {
	return &oaUsage{PromptTokens: r.usage.InputTokens, CompletionTokens: r.usage.OutputTokens, TotalTokens: r.usage.InputTokens + r.usage.OutputTokens}
}

// fingerprint is the system_fingerprint of a reply.
func (o openaiWire) fingerprint() string {
	if o.ollama {
		return "fp_ollama"
	}
	return ""
}

func (o openaiWire) stream(r *reply, in *inbound) []event {
	var evs []event
	base := func() oaResponse {
		return oaResponse{ID: "chatcmpl-llmtest", Object: "chat.completion.chunk", Created: 1700000000, Model: r.model, SystemFingerprint: o.fingerprint()}
	}
	add := func(v oaResponse, content bool) {
		evs = append(evs, event{data: sse("", mustJSON(v)), content: content})
	}
	role := "assistant"
	delta := func(d oaDelta) {
		d.Role = role
		if !o.ollama { // Ollama names the role in every delta
			role = ""
		}
		v := base()
		v.Choices = []oaChoice{{Delta: &d}}
		add(v, true)
	}
	for _, p := range pieces(r.text, r.chunk) {
		delta(oaDelta{Content: &p})
	}
	for i, c := range r.calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_llmtest_%d", i)
		}
		var first oaToolCall
		first.Index, first.ID, first.Type = &i, id, "function"
		first.Function.Name = c.Name
		delta(oaDelta{ToolCalls: []oaToolCall{first}})
		for _, p := range pieces(string(c.Arguments), r.chunk) {
			var tc oaToolCall
			tc.Index = &i
			tc.Function.Arguments = p
			delta(oaDelta{ToolCalls: []oaToolCall{tc}})
		}
	}
	if r.repeat { // the repeat guard: no finish_reason, usage or [DONE]
		return evs
	}
	fin := o.finish(r)
	v := base()
	last := &oaDelta{}
	if o.ollama {
		empty := ""
		last = &oaDelta{Role: "assistant", Content: &empty}
	}
	v.Choices = []oaChoice{{Delta: last, FinishReason: &fin}}
	add(v, false)
	if in.streamUsage {
		v := base()
		v.Choices = []oaChoice{}
		v.Usage = o.usage(r)
		add(v, false)
	}
	evs = append(evs, event{data: sse("", []byte("[DONE]"))})
	return evs
}

func (o openaiWire) whole(r *reply, _ *inbound) []byte {
	msg := &oaRespMsg{Role: "assistant"}
	if r.text != "" || len(r.calls) == 0 {
		msg.Content = &r.text
	}
	for i, c := range r.calls {
		var tc oaToolCall
		tc.ID, tc.Type = c.ID, "function"
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_llmtest_%d", i)
		}
		tc.Function.Name = c.Name
		tc.Function.Arguments = string(c.Arguments)
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	fin := o.finish(r)
	v := oaResponse{
		ID: "chatcmpl-llmtest", Object: "chat.completion", Created: 1700000000, Model: r.model, SystemFingerprint: o.fingerprint(),
		Choices: []oaChoice{{Message: msg, FinishReason: &fin}},
		Usage:   o.usage(r),
	}
	if r.repeat { // the repeat guard: no finish_reason, no usage counted
		v.Choices[0].FinishReason, v.Usage = nil, &oaUsage{}
	}
	b := mustJSON(v)
	if o.ollama {
		b = append(b, '\n')
	}
	return b
}

func (openaiWire) errorBody(status int, msg string) []byte {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status >= 500:
		typ = "server_error"
	}
	return mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func (openaiWire) streamError(msg string) []byte {
	return sse("", mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}}))
}

func (openaiWire) malformed(stream bool) []byte {
	b := []byte(`{"id":"chatcmpl-llmtest","choices":[{"index":0,"delta":{"content":"a"},,"finish_reason":null}]}`)
	if stream {
		return sse("", b)
	}
	return b
}
