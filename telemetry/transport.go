package telemetry

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// Transport returns an http.RoundTripper that sends each request through
// base (http.DefaultTransport when nil) with the W3C trace context of
// its context (traceparent, tracestate) in its headers, so the server's
// spans join the trace. A request whose context has no span goes out
// unchanged. The caller's request is not modified: a copy carries the
// headers.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base}
}

// transport injects the trace context.
type transport struct {
	base http.RoundTripper
	prop propagation.TraceContext
}

// RoundTrip sends req with its trace context.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	carrier := propagation.MapCarrier{}
	t.prop.Inject(req.Context(), carrier)
	if len(carrier) == 0 {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for k, v := range carrier {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}
