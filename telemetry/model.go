package telemetry

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftlang/weft/llm"
)

// WrapModel returns m traced: each Chat is a client span "chat MODEL"
// with the GenAI request and response attributes. spec is the model's
// "PROVIDER:MODEL" (as service.Options.WrapModel gets it); PROVIDER is
// the span's gen_ai.provider.name, and MODEL its gen_ai.request.model
// when the request names none (a provider's model is bound at its
// opening); for "replay:FILE", FILE's base name.
func (t *Tracer) WrapModel(spec string, m llm.Model) llm.Model {
	provider, model, _ := strings.Cut(spec, ":")
	if provider == "replay" {
		// A recorded session's file, not a model: its name, not where
		// it lies (a path says more than a trace should).
		model = filepath.Base(model)
	}
	return &tracedModel{t: t, m: m, provider: provider, model: model}
}

// tracedModel is a Model whose calls are spans.
type tracedModel struct {
	t        *Tracer
	m        llm.Model
	provider string
	model    string // the spec's model, for a request that names none
}

// Chat calls the model in a span.
func (tm *tracedModel) Chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	model := req.Model
	if model == "" {
		model = tm.model
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(tm.provider),
		semconv.GenAIRequestModel(model), semconv.GenAIRequestStream(onChunk != nil))
	if req.Temperature != nil {
		attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
	}
	if req.Seed != nil {
		attrs = append(attrs, semconv.GenAIRequestSeed(int(*req.Seed)))
	}
	if len(req.Stop) > 0 {
		attrs = append(attrs, semconv.GenAIRequestStopSequences(req.Stop...))
	}
	if tm.t.opts.CaptureContent {
		attrs = append(attrs, inputAttrs(req)...)
	}
	ctx, span := tm.t.tr.Start(ctx, spanName("chat", model),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	resp, err := tm.m.Chat(ctx, req, onChunk)
	if err != nil {
		fail(span, err)
		return resp, err
	}
	if resp != nil {
		out := []attribute.KeyValue{
			semconv.GenAIUsageInputTokens(resp.Usage.InputTokens),
			semconv.GenAIUsageOutputTokens(resp.Usage.OutputTokens),
		}
		if resp.Model != "" {
			out = append(out, semconv.GenAIResponseModel(resp.Model))
		}
		if resp.FinishReason != "" {
			out = append(out, semconv.GenAIResponseFinishReasons(resp.FinishReason))
		}
		if tm.t.opts.CaptureContent {
			out = append(out, semconv.GenAIOutputMessagesKey.String(messagesJSON([]llm.Message{resp.Message}, resp.FinishReason)))
		}
		span.SetAttributes(out...)
	}
	return resp, nil
}

// inputAttrs are the request's system instructions and input messages,
// as the JSON of the GenAI conventions' schemas.
func inputAttrs(req *llm.Request) []attribute.KeyValue {
	var system []part
	var msgs []llm.Message
	for _, m := range req.Messages {
		if m.Role == llm.System {
			system = append(system, part{Type: "text", Content: m.Content})
			continue
		}
		msgs = append(msgs, m)
	}
	attrs := []attribute.KeyValue{semconv.GenAIInputMessagesKey.String(messagesJSON(msgs, ""))}
	if len(system) > 0 {
		attrs = append(attrs, semconv.GenAISystemInstructionsKey.String(mustJSON(system)))
	}
	return attrs
}

// message is a message of gen_ai.input.messages or gen_ai.output.messages.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// part is a part of a message: text, a tool call or a tool's response.
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

// messagesJSON writes msgs in the conventions' schema; finish, when set,
// is the finish reason of each (output messages).
func messagesJSON(msgs []llm.Message, finish string) string {
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		om := message{Role: string(m.Role), FinishReason: finish}
		switch {
		case m.Role == llm.ToolRole:
			om.Parts = append(om.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
		case m.Content != "":
			om.Parts = append(om.Parts, part{Type: "text", Content: m.Content})
		}
		for _, c := range m.ToolCalls {
			args := c.Arguments
			if len(args) > 0 && !json.Valid(args) {
				args = json.RawMessage(mustJSON(string(args))) // as the model wrote it
			}
			om.Parts = append(om.Parts, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: args})
		}
		out = append(out, om)
	}
	return mustJSON(out)
}

// mustJSON is v's JSON; the types above always encode (an invalid
// RawMessage aside, which gives "").
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
