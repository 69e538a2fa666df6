package telemetry_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/telemetry"
)

// envOf is a getenv over m.
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Tracing is off without an exporter or an endpoint, and with "none";
// an unknown exporter or protocol is a *ConfigError naming the variable.
func TestSetupOffAndRefused(t *testing.T) {
	ctx := context.Background()
	for _, env := range []map[string]string{
		{}, {"OTEL_SERVICE_NAME": "x"}, {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"},
	} {
		tel, err := telemetry.Setup(ctx, envOf(env), nil)
		if tel != nil || err != nil {
			t.Errorf("%v: %v, %v; want off", env, tel, err)
		}
	}
	for env, name := range map[string]string{
		"OTEL_TRACES_EXPORTER=zipkin":               "OTEL_TRACES_EXPORTER",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/json":     "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_HEADERS=novalue":        "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=thrift": "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	} {
		k, v, _ := strings.Cut(env, "=")
		m := map[string]string{k: v, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}
		_, err := telemetry.Setup(ctx, envOf(m), nil)
		var ce *telemetry.ConfigError
		if !errors.As(err, &ce) || ce.Var != name {
			t.Errorf("%s: %v, want a ConfigError of %s", env, err, name)
		}
	}
}

// OTEL_TRACES_EXPORTER=console writes the spans, as JSON, to the writer
// given, when Shutdown flushes them.
func TestSetupConsole(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	tel, err := telemetry.Setup(ctx, envOf(map[string]string{"OTEL_TRACES_EXPORTER": "console"}), &buf)
	if err != nil || tel == nil {
		t.Fatal(tel, err)
	}
	_, end := tel.Tracer.StartRun(ctx, engine.TracedRun{Workflow: "Hello"})
	end(engine.Completed, nil)
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"Name":"invoke_workflow Hello"`) {
		t.Errorf("console output %q", buf.String())
	}
}

// collector is an OTLP gRPC trace receiver.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.names = append(c.names, s.Name)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports to an OTLP gRPC receiver at
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
func TestSetupGRPC(t *testing.T) {
	ctx := context.Background()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	col := &collector{}
	coltracepb.RegisterTraceServiceServer(srv, col)
	go srv.Serve(lis)
	defer srv.Stop()
	tel, err := telemetry.Setup(ctx, envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL":        "grpc",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://" + lis.Addr().String(),
	}), nil)
	if err != nil || tel == nil {
		t.Fatal(tel, err)
	}
	_, end := tel.Tracer.StartRun(ctx, engine.TracedRun{Workflow: "Hello"})
	end(engine.Completed, nil)
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if strings.Join(col.names, ",") != "invoke_workflow Hello" {
		t.Errorf("the collector got %q", col.names)
	}
}

// A refused OTLP headers variable is named, but none of its text is shown:
// headers carry API keys.
func TestSetupHidesBadHeaders(t *testing.T) {
	for _, v := range []string{"x-api-key=s3cr3t,Bearer t0k3n", "authorization=Bearer%zzt0k3n"} {
		_, err := telemetry.Setup(context.Background(), envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_EXPORTER_OTLP_HEADERS": v}), nil)
		var ce *telemetry.ConfigError
		if !errors.As(err, &ce) || ce.Var != "OTEL_EXPORTER_OTLP_HEADERS" {
			t.Fatalf("%v, want a ConfigError of OTEL_EXPORTER_OTLP_HEADERS", err)
		}
		if msg := err.Error(); strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "t0k3n") || !strings.Contains(msg, "item ") {
			t.Errorf("the error shows the headers or not the item: %s", msg)
		}
	}
	_, err := telemetry.Setup(context.Background(), envOf(map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_RESOURCE_ATTRIBUTES": "team"}), nil)
	if err == nil || !strings.Contains(err.Error(), `"team" is not key=value`) {
		t.Errorf("resource attributes: %v, want the item named", err)
	}
}
