package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/weftlang/weft/llm/llmtest"
)

// anyString writes an OTLP attribute value as a string.
func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	}
	return v.String()
}

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each export's
// protobuf and keeps its spans, with the resource's attributes.
type otlpReceiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	resource map[string]string
	paths    []string
	errs     []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.paths = append(o.paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("X-Team"))
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		o.errs = append(o.errs, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range req.ResourceSpans {
		o.resource = map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			o.resource[kv.Key] = kv.Value.GetStringValue()
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(b)
}

// `weft run` with OTEL_EXPORTER_OTLP_ENDPOINT set exports the run's trace
// over OTLP/HTTP before it exits: the run's span, the nodes' under it and
// the model calls' under them, with the service name and resource
// attributes of the environment and the headers it names; with no OTEL_*
// variable it sends nothing.
func TestRunExportsOTLP(t *testing.T) {
	bin := buildWeft(t)
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ollama := llmtest.NewOllamaServer()
	defer ollama.Close()
	ollama.Repeat(llmtest.JSON(map[string]any{"intent": "qa"}))
	wf := filepath.Join("testdata", "llm_route.wf")

	run := func(env ...string) {
		t.Helper()
		cmd := exec.Command(bin, "run", wf, "--llm", "ollama:llama3.1", "--input", "What was the revenue?")
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "OTEL_") }),
			append([]string{"OLLAMA_HOST=" + ollama.URL}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("weft run: %v\n%s", err, out)
		}
	}
	run()
	recv.mu.Lock()
	n := len(recv.paths)
	recv.mu.Unlock()
	if n != 0 {
		t.Fatalf("without OTEL_* the receiver got %d requests", n)
	}
	run("OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL, "OTEL_SERVICE_NAME=weft-e2e",
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment=test,team=a%20b", "OTEL_EXPORTER_OTLP_HEADERS=x-team=agents")

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.errs) > 0 {
		t.Fatalf("undecodable exports: %v", recv.errs)
	}
	for _, p := range recv.paths {
		if p != "POST /v1/traces application/x-protobuf agents" {
			t.Errorf("export request %q", p)
		}
	}
	if recv.resource["service.name"] != "weft-e2e" || recv.resource["deployment.environment"] != "test" || recv.resource["team"] != "a b" {
		t.Errorf("resource %v", recv.resource)
	}
	byID := map[string]*tracepb.Span{}
	names := map[string][]*tracepb.Span{}
	for _, s := range recv.spans {
		byID[string(s.SpanId)] = s
		names[s.Name] = append(names[s.Name], s)
	}
	parent := func(s *tracepb.Span) string {
		if p, ok := byID[string(s.ParentSpanId)]; ok {
			return p.Name
		}
		return ""
	}
	attr := func(s *tracepb.Span, key string) string {
		for _, kv := range s.Attributes {
			if kv.Key == key {
				return anyString(kv.Value)
			}
		}
		return ""
	}
	runs := names["invoke_workflow Route"]
	if len(runs) != 1 || len(recv.spans) != 5 {
		var all []string
		for _, s := range recv.spans {
			all = append(all, s.Name+"<"+parent(s))
		}
		t.Fatalf("spans %q, want one run, two attempts, two chats", all)
	}
	if got := attr(runs[0], "gen_ai.workflow.name"); got != "Route" {
		t.Errorf("gen_ai.workflow.name %q", got)
	}
	for _, node := range []string{"classify", "reply"} {
		att := names["execute_node "+node]
		if len(att) != 1 || parent(att[0]) != "invoke_workflow Route" {
			t.Errorf("attempt of %s: %d spans", node, len(att))
		}
	}
	chats := names["chat llama3.1"]
	if len(chats) != 2 {
		t.Fatalf("%d chat spans", len(chats))
	}
	for _, c := range chats {
		if p := parent(c); !strings.HasPrefix(p, "execute_node ") {
			t.Errorf("a chat span's parent is %q", p)
		}
		if c.Kind != tracepb.Span_SPAN_KIND_CLIENT || attr(c, "gen_ai.provider.name") != "ollama" || attr(c, "gen_ai.usage.output_tokens") == "" {
			t.Errorf("chat span kind %v attributes %v", c.Kind, c.Attributes)
		}
		if attr(c, "gen_ai.input.messages") != "" {
			t.Errorf("prompt recorded without the opt-in")
		}
	}
}
