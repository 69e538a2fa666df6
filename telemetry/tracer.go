// Package telemetry traces weft's runs with OpenTelemetry: one span per
// drive of a run, one per attempt of a node, one per LLM call and one per
// tool call, named and attributed after the GenAI semantic conventions of
// semconv v1.41.0, and an http.RoundTripper that carries the W3C trace
// context into outgoing requests.
//
// Nothing here sets a global: a Tracer works on the TracerProvider it is
// given, and Setup builds one from the standard OTEL_* environment
// variables read through the function it is given (the CLI passes
// os.Getenv), returning nil when no exporter is configured.
package telemetry

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/llm"
)

// ScopeName is the instrumentation scope of weft's spans.
const ScopeName = "github.com/weftlang/weft/telemetry"

// The attributes weft adds where the GenAI conventions have none.
const (
	AttrThreadID       = attribute.Key("weft.thread.id")    // the run's thread
	AttrRunNumber      = attribute.Key("weft.run.number")   // the run's number in its thread, from 1
	AttrRunID          = attribute.Key("weft.run.id")       // the run's random id in its thread
	AttrRunResumed     = attribute.Key("weft.run.resumed")  // the drive goes on with a run begun before
	AttrRunStatus      = attribute.Key("weft.run.status")   // the status the drive ended with
	AttrNodeName       = attribute.Key("weft.node.name")    // the node
	AttrNodeAction     = attribute.Key("weft.node.action")  // the node's action
	AttrNodeStep       = attribute.Key("weft.node.step")    // the step of the run
	AttrNodeItem       = attribute.Key("weft.node.item")    // the element of a map node, from 1
	AttrNodeAttempt    = attribute.Key("weft.node.attempt") // the attempt, from 1
	AttrIdempotencyKey = attribute.Key("weft.node.idempotency_key")
	AttrRetryDelay     = attribute.Key("weft.retry.delay_ms") // on a retry event: the wait before the next attempt
)

// The names of the span events weft adds.
const (
	EventRetry    = "retry"    // an attempt failed and another follows
	EventFallback = "fallback" // the node's fallback values stand in for its outputs
	EventWaiting  = "waiting"  // the node waits for a person (not an error)
)

// Options tune a Tracer.
type Options struct {
	// CaptureContent records the prompts and completions of LLM calls
	// and the arguments and results of tool calls in their spans. Off by
	// default: they may hold personal or secret data. The CLI sets it
	// from OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
	CaptureContent bool
}

// Tracer traces runs on an OpenTelemetry TracerProvider: it is an
// engine.Tracer (set it as engine.Runner.Tracer), and wraps models
// (WrapModel) and tools (WrapTool). It is safe for concurrent use.
type Tracer struct {
	tr   trace.Tracer
	opts Options
}

// NewTracer returns a Tracer whose spans tp makes.
func NewTracer(tp trace.TracerProvider, opts Options) *Tracer {
	return &Tracer{tr: tp.Tracer(ScopeName), opts: opts}
}

var _ engine.Tracer = (*Tracer)(nil)

// StartRun starts the span of a drive of run, "invoke_workflow NAME".
func (t *Tracer) StartRun(ctx context.Context, run engine.TracedRun) (context.Context, func(engine.Status, error)) {
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameInvokeWorkflow,
		semconv.GenAIWorkflowName(run.Workflow),
		AttrRunResumed.Bool(run.Resumed),
	}
	if run.Thread != "" {
		attrs = append(attrs, AttrThreadID.String(run.Thread), AttrRunNumber.Int(run.Run), AttrRunID.String(run.RunID))
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	if l, ok := ctx.Value(linkKey{}).(trace.SpanContext); ok {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: l}))
		ctx = context.WithValue(ctx, linkKey{}, nil) // for this run's span only
	}
	ctx, span := t.tr.Start(ctx, spanName("invoke_workflow", run.Workflow), opts...)
	return ctx, func(s engine.Status, err error) {
		span.SetAttributes(AttrRunStatus.String(s.String()))
		if err != nil {
			fail(span, err)
		}
		span.End()
	}
}

// linkKey keys the span context ContextWithLink puts in a context.
type linkKey struct{}

// ContextWithLink returns ctx with sc as a link of the next run span
// started in it (StartRun), and of no span under it: a drive that goes on
// with a run begun before in another trace (resumed after a person
// answered, by another request) is linked to the trace of its first
// drive. An invalid sc adds no link: ctx is returned as it is.
func ContextWithLink(ctx context.Context, sc trace.SpanContext) context.Context {
	if !sc.IsValid() {
		return ctx
	}
	return context.WithValue(ctx, linkKey{}, sc)
}

// StartAttempt starts the span of an attempt of a node's action,
// "execute_node NODE".
func (t *Tracer) StartAttempt(ctx context.Context, c *engine.Call) (context.Context, func(engine.AttemptEnd)) {
	name := ""
	if c.Node != nil {
		name = c.Node.Name
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, AttrNodeName.String(name), AttrNodeAction.String(c.Action),
		AttrNodeStep.Int(c.Step), AttrNodeAttempt.Int(c.Attempt))
	if c.Item > 0 {
		attrs = append(attrs, AttrNodeItem.Int(c.Item))
	}
	if c.Key != "" {
		attrs = append(attrs, AttrIdempotencyKey.String(c.Key))
	}
	ctx, span := t.tr.Start(ctx, spanName("execute_node", name), trace.WithAttributes(attrs...))
	return ctx, func(e engine.AttemptEnd) {
		switch {
		case e.Err == nil:
		case errors.Is(e.Err, engine.ErrWaiting): // an *engine.Interrupt
			span.AddEvent(EventWaiting)
		default:
			fail(span, e.Err)
			if e.Retrying {
				span.AddEvent(EventRetry, trace.WithAttributes(
					AttrRetryDelay.Int64(e.Delay.Milliseconds()),
					attribute.String("exception.message", e.Err.Error())))
			}
			if e.Fallback {
				span.AddEvent(EventFallback)
			}
		}
		span.End()
	}
}

// fail marks span failed with err: its status, error.type and an
// exception event.
func fail(span trace.Span, err error) {
	span.SetStatus(codes.Error, err.Error())
	span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	span.RecordError(err)
}

// spanName is "OP NAME", or OP alone when name is empty.
func spanName(op, name string) string {
	if name == "" {
		return op
	}
	return op + " " + name
}

// errorType is the error.type of err: an llm.Error's kind ("llm.KIND",
// or "llm.http_STATUS"), else semconv's (the Go type of the error).
func errorType(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		switch {
		case le.Kind != "":
			return "llm." + string(le.Kind)
		case le.Status != 0:
			return "llm.http_" + strconv.Itoa(le.Status)
		}
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return semconv.ErrorType(err).Value.AsString()
}
