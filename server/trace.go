package server

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/telemetry"
)

// The trace context of runs (Options.Propagator): a request's
// traceparent and tracestate are taken into its context (traceIn); a run
// it creates keeps them in its job's request (runBody.Trace), which every
// process that carries the job out reads, so the run's drive is a child
// of the client's span wherever and whenever it runs, and a takeover
// after a crash continues under the same parent. A resume keeps, besides
// its own request's, the trace context of the run's first drive
// (runBody.Link), which the drive's span links to.

// traceIn returns r with the trace context of its headers in its
// context, when the server has a Propagator.
func (s *Server) traceIn(r *http.Request) *http.Request {
	p := s.opts.Propagator
	if p == nil {
		return r
	}
	ctx := p.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	if ctx == r.Context() {
		return r
	}
	return r.WithContext(ctx)
}

// traceOf is the trace context of ctx as the Propagator writes it, or nil
// (no Propagator, or none in ctx).
func (s *Server) traceOf(ctx context.Context) map[string]string {
	p := s.opts.Propagator
	if p == nil {
		return nil
	}
	c := propagation.MapCarrier{}
	p.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}

// firstDriveTrace is the trace context of the first drive of the run a
// resume of thread goes on with: what the thread's newest job (the one
// that left the run waiting) kept as its link, or else its own; nil when
// it kept none.
func (s *Server) firstDriveTrace(ctx context.Context, thread string) (map[string]string, error) {
	if s.opts.Propagator == nil {
		return nil, nil
	}
	last, err := s.jobs.Jobs(ctx, store.JobQuery{ThreadID: thread, Limit: 1})
	if err != nil || len(last) == 0 {
		return nil, err
	}
	b := decodeRunBody(last[0])
	switch {
	case b == nil:
		return nil, nil
	case len(b.Link) > 0:
		return b.Link, nil
	}
	return b.Trace, nil
}

// runContext is ctx with the trace context a job's request kept: its
// parent, and the link to its run's first drive.
func (s *Server) runContext(ctx context.Context, b *runBody) context.Context {
	p := s.opts.Propagator
	if p == nil {
		return ctx
	}
	if len(b.Trace) > 0 {
		ctx = p.Extract(ctx, propagation.MapCarrier(b.Trace))
	}
	if len(b.Link) > 0 {
		l := trace.SpanContextFromContext(p.Extract(context.Background(), propagation.MapCarrier(b.Link)))
		ctx = telemetry.ContextWithLink(ctx, l)
	}
	return ctx
}
