package llmtest

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftlang/weft/llm"
	lwire "github.com/weftlang/weft/llm/internal/wire" // lwire: this package has a type wire
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
		NumCtx      int      `json:"num_ctx"`
		Stop        []string `json:"stop"`
		Seed        *int64   `json:"seed"`
	} `json:"options"`
	Think    json.RawMessage `json:"think"`
	Truncate *bool           `json:"truncate"`
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

// olResponse is a reply, its members in Ollama's order.
type olResponse struct {
	Model              string    `json:"model"`
	CreatedAt          string    `json:"created_at"`
	Message            olMessage `json:"message"`
	Done               bool      `json:"done"`
	DoneReason         string    `json:"done_reason,omitempty"`
	TotalDuration      int64     `json:"total_duration,omitempty"`
	LoadDuration       int64     `json:"load_duration,omitempty"`
	PromptEvalCount    int       `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64     `json:"prompt_eval_duration,omitempty"`
	EvalCount          int       `json:"eval_count,omitempty"`
	EvalDuration       int64     `json:"eval_duration,omitempty"`
}

func (ollamaWire) path() string { return "/api/chat" }

func (ollamaWire) contentType(stream bool) string {
	if stream {
		return "application/x-ndjson"
	}
	return "application/json; charset=utf-8"
}

func (ollamaWire) decode(body []byte) (inbound, error) {
	if in, ok := decodeFast(body); ok {
		return in, nil
	}
	return decodeSlow(body)
}

// decodeSlow decodes any request with encoding/json.
func decodeSlow(body []byte) (inbound, error) {
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
		in.format = w.Format
	}
	if t := strings.TrimSpace(string(w.Think)); t != "" && t != "null" {
		in.think = t
		var level string
		if json.Unmarshal(w.Think, &level) == nil {
			r.Effort = llm.Effort(level)
		}
	}
	if w.Truncate != nil {
		in.truncate = -1
		if *w.Truncate {
			in.truncate = 1
		}
	}
	in.numCtx = w.Options.NumCtx
	r.ContextTokens = w.Options.NumCtx
	r.Temperature = w.Options.Temperature
	r.MaxTokens = w.Options.NumPredict
	r.Stop = w.Options.Stop
	r.Seed = w.Options.Seed
	return in, nil
}

// decodeFast decodes a request of plain messages without reflection,
// to what decode makes of it with encoding/json: model, messages of role,
// content and, for tool results, tool_name and tool_call_id, stream,
// truncate, and members decode ignores. ok is false for any other request
// (tools, format, options, think, tool calls), and for anything it does not fully check
// (null, duplicate keys, keys matching a field only case-insensitively,
// malformed JSON): decode then uses encoding/json.
func decodeFast(body []byte) (in inbound, ok bool) {
	s := lwire.NewScanner(body)
	var top uint32
	var stream bool
	hasStream := false
	ok = s.Object(func(key []byte) bool {
		switch string(key) {
		case "model":
			var ok bool
			in.req.Model, ok = s.Str()
			return lwire.Once(&top, 1) && ok
		case "truncate":
			switch s.Peek() {
			case 't':
				in.truncate = 1
				return lwire.Once(&top, 8) && s.Literal("true")
			case 'f':
				in.truncate = -1
				return lwire.Once(&top, 8) && s.Literal("false")
			}
			return false
		case "stream":
			hasStream = true
			switch s.Peek() {
			case 't':
				stream = true
				return lwire.Once(&top, 2) && s.Literal("true")
			case 'f':
				return lwire.Once(&top, 2) && s.Literal("false")
			}
			return false
		case "messages":
			if !lwire.Once(&top, 4) || s.Peek() != '[' {
				return false
			}
			return s.Array(func() bool {
				var m llm.Message
				var seen uint32
				ok := s.Object(func(k []byte) bool {
					var ok bool
					switch string(k) {
					case "role":
						var role string
						role, ok = s.Str()
						m.Role = llm.Role(role)
						return lwire.Once(&seen, 1) && ok
					case "content":
						m.Content, ok = s.Str()
						return lwire.Once(&seen, 2) && ok
					case "tool_name":
						m.Name, ok = s.Str()
						return lwire.Once(&seen, 4) && ok
					case "tool_call_id":
						m.ToolCallID, ok = s.Str()
						return lwire.Once(&seen, 8) && ok
					}
					return !lwire.FoldsTo(k, "role", "content", "tool_calls", "tool_name", "tool_call_id") && s.Skip()
				})
				in.req.Messages = append(in.req.Messages, m)
				return ok
			})
		}
		return !lwire.FoldsTo(key, "model", "messages", "stream", "format", "tools", "options", "think", "truncate") && s.Skip()
	}) && s.End()
	in.stream = stream || !hasStream // Ollama streams by default
	return in, ok
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

// final is the final event; appendFinal writes it by hand.
func (o ollamaWire) final(r *reply) olResponse {
	finish := r.finish
	if finish == "" {
		finish = "stop"
	}
	return olResponse{
		Model: r.model, CreatedAt: now(), Message: olMessage{Role: "assistant"},
		Done: true, DoneReason: finish, TotalDuration: 1e6, LoadDuration: 1e5,
		PromptEvalCount: r.usage.InputTokens, PromptEvalDuration: 2e5,
		EvalCount: r.usage.OutputTokens, EvalDuration: 5e5,
	}
}

// stream renders the events; see streamInto.
func (o ollamaWire) stream(r *reply, in *inbound) []event {
	return o.streamInto(&streamBuf{}, r, in)
}

// streamInto renders the events into sb, growing its buffers as needed,
// and returns them: the text events and the final one by hand (appendText,
// appendFinal), as encoding/json would write them, all with the same
// created_at, the time of rendering.
func (o ollamaWire) streamInto(sb *streamBuf, r *reply, _ *inbound) []event {
	var tb [40]byte
	created := time.Now().UTC().AppendFormat(tb[:0], time.RFC3339Nano)
	// Room for every event, unless escapes make them longer.
	n := (len(r.text) + r.chunk - 1) / r.chunk // pieces, at most
	size := 288 + 2*len(r.model) + len(created) + len(r.finish) +
		n*(96+2*len(r.model)+len(created)) + len(r.text) + len(r.text)/8
	buf := slices.Grow(sb.data[:0], size)
	evs := slices.Grow(sb.events[:0], n+2)
	add := func(start int, content bool) {
		buf = append(buf, '\n')
		// The event's capacity ends with it: appending to the buffer
		// never writes into an event.
		evs = append(evs, event{data: buf[start:len(buf):len(buf)], content: content})
	}
	for text := r.text; text != ""; {
		var p string
		p, text = piece(text, r.chunk)
		start := len(buf)
		buf = appendText(buf, r.model, created, p)
		add(start, true)
	}
	if calls := o.calls(r); len(calls) > 0 {
		start := len(buf)
		buf = append(buf, mustJSON(olResponse{Model: r.model, CreatedAt: string(created), Message: olMessage{Role: "assistant", ToolCalls: calls}})...)
		add(start, true)
	}
	if !r.repeat { // the repeat guard sends no final event
		start := len(buf)
		buf = appendFinal(buf, r, created)
		add(start, false)
	}
	sb.data, sb.events = buf, evs
	return evs
}

// appendText appends a text event as encoding/json writes its olResponse.
// created is a time in RFC 3339, which needs no escapes.
func appendText(b []byte, model string, created []byte, text string) []byte {
	b = append(b, `{"model":`...)
	b = lwire.AppendString(b, model)
	b = append(b, `,"created_at":"`...)
	b = append(b, created...)
	b = append(b, `","message":{"role":"assistant","content":`...)
	b = lwire.AppendString(b, text)
	return append(b, `},"done":false}`...)
}

// appendFinal appends the final event of a stream (o.final(r) with the
// created_at given) as encoding/json writes it.
func appendFinal(b []byte, r *reply, created []byte) []byte {
	finish := r.finish
	if finish == "" {
		finish = "stop"
	}
	b = append(b, `{"model":`...)
	b = lwire.AppendString(b, r.model)
	b = append(b, `,"created_at":"`...)
	b = append(b, created...)
	b = append(b, `","message":{"role":"assistant","content":""},"done":true,"done_reason":`...)
	b = lwire.AppendString(b, finish)
	b = append(b, `,"total_duration":1000000,"load_duration":100000`...)
	if n := r.usage.InputTokens; n != 0 {
		b = append(b, `,"prompt_eval_count":`...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, `,"prompt_eval_duration":200000`...)
	if n := r.usage.OutputTokens; n != 0 {
		b = append(b, `,"eval_count":`...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, `,"eval_duration":500000}`...)
}

func (o ollamaWire) whole(r *reply, _ *inbound) []byte {
	if r.repeat { // the repeat guard: the text, not marked done
		return mustJSON(olResponse{Model: r.model, CreatedAt: now(), Message: olMessage{Role: "assistant", Content: r.text}})
	}
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
