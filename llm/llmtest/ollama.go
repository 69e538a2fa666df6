package llmtest

import (
	"encoding/json"
	"time"

	"github.com/weftlang/weft/llm"
)

// ollamaWire is Ollama's native /api/chat.
type ollamaWire struct{}

type olRequest struct {
	Model    string          `json:"model"`
	Messages []olMessage     `json:"messages"`
	Stream   *bool           `json:"stream"`
	Format   json.RawMessage `json:"format"`
	Tools    []olTool        `json:"tools"`
	Options  struct {
		Temperature *float64 `json:"temperature"`
		NumPredict  int      `json:"num_predict"`
		Stop        []string `json:"stop"`
		Seed        *int64   `json:"seed"`
	} `json:"options"`
}

type olMessage struct {
	Role       string       `json:"role"`
	Content    string       `json:"content"`
	ToolCalls  []olToolCall `json:"tool_calls,omitempty"`
	ToolName   string       `json:"tool_name,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type olToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type olTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type olResponse struct {
	Model           string    `json:"model"`
	CreatedAt       string    `json:"created_at"`
	Message         olMessage `json:"message"`
	Done            bool      `json:"done"`
	DoneReason      string    `json:"done_reason,omitempty"`
	TotalDuration   int64     `json:"total_duration,omitempty"`
	PromptEvalCount int       `json:"prompt_eval_count,omitempty"`
	EvalCount       int       `json:"eval_count,omitempty"`
}

func (ollamaWire) path() string { return "/api/chat" }

func (ollamaWire) contentType(stream bool) string {
	if stream {
		return "application/x-ndjson"
	}
	return "application/json; charset=utf-8"
}

func (ollamaWire) decode(body []byte) (inbound, error) {
	var w olRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return inbound{}, err
	}
	in := inbound{stream: w.Stream == nil || *w.Stream} // Ollama streams by default
	r := &in.req
	r.Model = w.Model
	for _, m := range w.Messages {
		msg := llm.Message{Role: llm.Role(m.Role), Content: m.Content, Name: m.ToolName, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	if len(w.Format) > 0 && string(w.Format) != "null" {
		r.Schema = w.Format
	}
	r.Temperature = w.Options.Temperature
	r.MaxTokens = w.Options.NumPredict
	r.Stop = w.Options.Stop
	r.Seed = w.Options.Seed
	return in, nil
}

func (ollamaWire) calls(r *reply) []olToolCall {
	var out []olToolCall
	for i, c := range r.calls {
		var tc olToolCall
		tc.ID = c.ID
		tc.Function.Index = i
		tc.Function.Name = c.Name
		tc.Function.Arguments = asObject(c.Arguments)
		out = append(out, tc)
	}
	return out
}

func (o ollamaWire) final(r *reply) olResponse {
	finish := r.finish
	if finish == "" {
		finish = "stop"
	}
	return olResponse{
		Model: r.model, CreatedAt: now(), Message: olMessage{Role: "assistant"},
		Done: true, DoneReason: finish, TotalDuration: 1e6,
		PromptEvalCount: r.usage.InputTokens, EvalCount: r.usage.OutputTokens,
	}
}

func (o ollamaWire) stream(r *reply, _ *inbound) []event {
	var evs []event
	line := func(v olResponse, content bool) {
		evs = append(evs, event{data: append(mustJSON(v), '\n'), content: content})
	}
	for _, p := range pieces(r.text, r.chunk) {
		line(olResponse{Model: r.model, CreatedAt: now(), Message: olMessage{Role: "assistant", Content: p}}, true)
	}
	if calls := o.calls(r); len(calls) > 0 {
		line(olResponse{Model: r.model, CreatedAt: now(), Message: olMessage{Role: "assistant", ToolCalls: calls}}, true)
	}
	line(o.final(r), false)
	return evs
}

func (o ollamaWire) whole(r *reply, _ *inbound) []byte {
	v := o.final(r)
	v.Message.Content = r.text
	v.Message.ToolCalls = o.calls(r)
	return mustJSON(v)
}

func (ollamaWire) errorBody(_ int, msg string) []byte {
	return mustJSON(map[string]string{"error": msg})
}

func (ollamaWire) streamError(msg string) []byte {
	return append(mustJSON(map[string]string{"error": msg}), '\n')
}

func (ollamaWire) malformed(stream bool) []byte {
	b := []byte(`{"model":"llmtest","message":{"role":"assistant","content":"a"},,"done":false}`)
	if stream {
		b = append(b, '\n')
	}
	return b
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }
