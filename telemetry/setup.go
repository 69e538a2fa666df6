package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// ConfigError is an OTEL_* variable whose value weft cannot use. Value
// is empty for a variable that may hold credentials (the OTLP headers):
// neither it nor Reason then shows any of it.
type ConfigError struct {
	Var, Value, Reason string
}

// Error names the variable and why its value is refused.
func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("telemetry: %s: %s", e.Var, e.Reason)
	}
	return fmt.Sprintf("telemetry: %s=%q: %s", e.Var, e.Value, e.Reason)
}

// Telemetry is tracing set up from the environment: a TracerProvider with
// its exporter, and a Tracer on it.
type Telemetry struct {
	Provider *sdktrace.TracerProvider
	Tracer   *Tracer
}

// Shutdown flushes the spans not yet exported and stops the exporter.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if err := t.Provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: flushing the spans: %w", err)
	}
	return nil
}

// Setup configures tracing from the standard OpenTelemetry variables, read
// with getenv (the CLI passes os.Getenv):
//
//   - OTEL_TRACES_EXPORTER: "otlp", "console" (spans as JSON on console)
//     or "none"; unset means otlp when an OTLP endpoint is set, else none.
//   - OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL) or
//     OTEL_EXPORTER_OTLP_ENDPOINT (the base URL: /v1/traces is appended
//     for http/protobuf); OTEL_EXPORTER_OTLP_PROTOCOL (or its TRACES_
//     form): "http/protobuf" (the default) or "grpc";
//     OTEL_EXPORTER_OTLP_(TRACES_)HEADERS: key=value,... sent with each
//     export.
//   - OTEL_SERVICE_NAME (default "weft") and OTEL_RESOURCE_ATTRIBUTES
//     (key=value,...) describe the process.
//   - OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true records
//     prompts, completions and tool arguments and results.
//
// It returns nil, nil when tracing is off. Spans are exported in batches;
// Shutdown flushes them.
func Setup(ctx context.Context, getenv func(string) string, console io.Writer) (*Telemetry, error) {
	first := func(keys ...string) (string, string) {
		for _, k := range keys {
			if v := strings.TrimSpace(getenv(k)); v != "" {
				return k, v
			}
		}
		return keys[len(keys)-1], ""
	}
	_, tracesEP := first("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	_, baseEP := first("OTEL_EXPORTER_OTLP_ENDPOINT")
	expVar, exporter := first("OTEL_TRACES_EXPORTER")
	if exporter == "" && (tracesEP != "" || baseEP != "") {
		exporter = "otlp"
	}
	var exp sdktrace.SpanExporter
	var err error
	switch exporter {
	case "", "none":
		return nil, nil
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(console))
	case "otlp":
		protoVar, proto := first("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
		hdrVar, hdrs := first("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
		headers, herr := parseList(hdrVar, hdrs, true)
		if herr != nil {
			return nil, herr
		}
		switch proto {
		case "", "http/protobuf":
			opts := []otlptracehttp.Option{otlptracehttp.WithHeaders(headers)}
			switch {
			case tracesEP != "":
				opts = append(opts, otlptracehttp.WithEndpointURL(tracesEP))
			case baseEP != "":
				opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(baseEP, "/")+"/v1/traces"))
			}
			exp, err = otlptracehttp.New(ctx, opts...)
		case "grpc":
			opts := []otlptracegrpc.Option{otlptracegrpc.WithHeaders(headers)}
			ep := tracesEP
			if ep == "" {
				ep = baseEP
			}
			if ep != "" {
				opts = append(opts, otlptracegrpc.WithEndpointURL(ep))
				if strings.HasPrefix(ep, "http://") {
					opts = append(opts, otlptracegrpc.WithInsecure())
				}
			}
			exp, err = otlptracegrpc.New(ctx, opts...)
		default:
			return nil, &ConfigError{Var: protoVar, Value: proto, Reason: `weft sends traces over "http/protobuf" or "grpc"`}
		}
	default:
		return nil, &ConfigError{Var: expVar, Value: exporter, Reason: `weft knows the "otlp", "console" and "none" trace exporters`}
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: making the %s exporter: %w", exporter, err)
	}
	res, err := processResource(getenv)
	if err != nil {
		return nil, errors.Join(err, exp.Shutdown(ctx))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	capture := strings.EqualFold(strings.TrimSpace(getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")), "true")
	return &Telemetry{Provider: tp, Tracer: NewTracer(tp, Options{CaptureContent: capture})}, nil
}

// processResource describes the process from OTEL_RESOURCE_ATTRIBUTES
// and OTEL_SERVICE_NAME, which wins over a service.name among them.
func processResource(getenv func(string) string) (*resource.Resource, error) {
	kv, err := parseList("OTEL_RESOURCE_ATTRIBUTES", getenv("OTEL_RESOURCE_ATTRIBUTES"), false)
	if err != nil {
		return nil, err
	}
	attrs := []attribute.KeyValue{semconv.ServiceName("weft"), semconv.TelemetrySDKLanguageGo, semconv.TelemetrySDKName("opentelemetry")}
	for k, v := range kv {
		attrs = append(attrs, attribute.String(k, v))
	}
	if name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); name != "" {
		attrs = append(attrs, semconv.ServiceName(name))
	}
	// Later attributes of a key win in a Resource's set.
	return resource.NewWithAttributes(semconv.SchemaURL, attrs...), nil
}

// parseList parses "key=value,..." with percent-encoded values, as the
// OTEL_*_HEADERS and OTEL_RESOURCE_ATTRIBUTES variables are written. The
// error of a secret list (headers: an API key) names the item by its
// place, never by its text.
func parseList(name, s string, secret bool) (map[string]string, error) {
	out := map[string]string{}
	refuse := func(n int, item, why string) error {
		if secret {
			return &ConfigError{Var: name, Reason: fmt.Sprintf("item %d %s (its text is not shown: it may hold a credential)", n, why)}
		}
		return &ConfigError{Var: name, Value: s, Reason: fmt.Sprintf("%q %s", item, why)}
	}
	n := 0
	for item := range strings.SplitSeq(s, ",") {
		n++
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, refuse(n, item, "is not key=value")
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, refuse(n, item, "has a bad percent-encoding")
		}
		out[k] = dv
	}
	return out, nil
}
