package telemetry

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftlang/weft/llm/tool"
)

// WrapTool returns a copy of tl whose runs are spans "execute_tool NAME",
// with gen_ai.tool.name and, when a model's call runs it (tool.Loop),
// gen_ai.tool.call.id. A nil tool or Run is returned as it is.
func (t *Tracer) WrapTool(tl *tool.Tool) *tool.Tool {
	if tl == nil || tl.Run == nil {
		return tl
	}
	run, name := tl.Run, tl.Def.Name
	out := *tl
	out.Run = func(ctx context.Context, args json.RawMessage) (_ any, err error) {
		attrs := make([]attribute.KeyValue, 0, 5)
		attrs = append(attrs, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(name),
			semconv.GenAIToolTypeKey.String("function"))
		if id := tool.CallID(ctx); id != "" {
			attrs = append(attrs, semconv.GenAIToolCallID(id))
		}
		if t.opts.CaptureContent && len(args) > 0 {
			attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(string(args)))
		}
		ctx, span := t.tr.Start(ctx, spanName("execute_tool", name), trace.WithAttributes(attrs...))
		returned := false
		defer func() {
			if !returned { // Run panicked: tool.Call recovers it
				span.SetStatus(codes.Error, "panic")
				span.SetAttributes(semconv.ErrorTypeKey.String("panic"))
			}
			span.End()
		}()
		res, err := run(ctx, args)
		returned = true
		if err != nil {
			fail(span, err)
		} else if t.opts.CaptureContent {
			span.SetAttributes(semconv.GenAIToolCallResultKey.String(mustJSON(res)))
		}
		return res, err
	}
	return &out
}
