package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/weftlang/weft/internal/pgtest"
)

// TestTraceAcrossServeAndWorker: with tracing on, `weft serve --workers 0`
// (the API, which only queues runs) and a `weft worker` on PostgreSQL
// (River): a run created by a request that carries a W3C traceparent is
// traced by the worker, which exports it over OTLP/HTTP, as a child of
// the client's span; the resume, a request of another trace, is a child
// of that one with a link to the first drive's trace. The API process
// traces no run.
func TestTraceAcrossServeAndWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes; skipped with -short")
	}
	bin := buildWeft(t)
	db := pgtest.New(t)
	apiRecv, workerRecv := &otlpReceiver{}, &otlpReceiver{}
	apiOTLP, workerOTLP := httptest.NewServer(apiRecv), httptest.NewServer(workerRecv)
	defer apiOTLP.Close()
	defer workerOTLP.Close()
	otel := func(url, name string) []string {
		// OTEL_BSP_SCHEDULE_DELAY: the SDK's batcher exports every 100 ms.
		return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + url, "OTEL_SERVICE_NAME=" + name, "OTEL_BSP_SCHEDULE_DELAY=100"}
	}
	wf := "../../server/testdata/approval.wf"
	api := startServe(t, bin, otel(apiOTLP.URL, "weft-api"), wf, "--store", db.DSN, "--workers", "0")
	startWeftAt(t, bin, "worker", freeAddr(t), otel(workerOTLP.URL, "weft-worker"), wf, "--store", db.DSN, "--concurrency", "2")

	const (
		clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		clientSpan  = "00f067aa0ba902b7"
		resumeTrace = "0af7651916cd43dd8448eb211c80319c"
		resumeSpan  = "b7ad6b7169203331"
	)
	post := func(path, body, traceparent string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", api.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("traceparent", traceparent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if b := post("/threads/t1/runs/wait", `{"assistant_id":"Approval","if_not_exists":"create","input":{"input_text":"doc"}}`,
		"00-"+clientTrace+"-"+clientSpan+"-01"); !strings.Contains(b, "__interrupt__") {
		t.Fatalf("first run: %s", b)
	}
	if b := post("/threads/t1/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`,
		"00-"+resumeTrace+"-"+resumeSpan+"-01"); !strings.Contains(b, `"published":"doc"`) {
		t.Fatalf("resume: %s", b)
	}

	drives := func() []*tracepb.Span {
		workerRecv.mu.Lock()
		defer workerRecv.mu.Unlock()
		var out []*tracepb.Span
		for _, s := range workerRecv.spans {
			if s.Name == "invoke_workflow Approval" {
				out = append(out, s)
			}
		}
		return out
	}
	// The worker exports a moment after the run's reply.
	deadline := time.Now().Add(10 * time.Second)
	for len(drives()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	d := drives()
	if len(d) != 2 {
		t.Fatalf("the worker exported %d drives, want 2", len(d))
	}
	first, second := d[0], d[1]
	if first.StartTimeUnixNano > second.StartTimeUnixNano {
		first, second = second, first
	}
	id := func(b []byte) string { return hex.EncodeToString(b) }
	if id(first.TraceId) != clientTrace || id(first.ParentSpanId) != clientSpan {
		t.Errorf("first drive: trace %s parent %s, want the client's %s %s", id(first.TraceId), id(first.ParentSpanId), clientTrace, clientSpan)
	}
	if len(first.Links) != 0 {
		t.Errorf("first drive has %d links", len(first.Links))
	}
	if id(second.TraceId) != resumeTrace || id(second.ParentSpanId) != resumeSpan {
		t.Errorf("resume: trace %s parent %s, want %s %s", id(second.TraceId), id(second.ParentSpanId), resumeTrace, resumeSpan)
	}
	if len(second.Links) != 1 || id(second.Links[0].TraceId) != clientTrace || id(second.Links[0].SpanId) != clientSpan {
		var links []string
		for _, l := range second.Links {
			links = append(links, id(l.TraceId)+"/"+id(l.SpanId))
		}
		t.Errorf("resume's links %v, want one to %s/%s", links, clientTrace, clientSpan)
	}
	workerRecv.mu.Lock()
	if workerRecv.resource["service.name"] != "weft-worker" {
		t.Errorf("worker's resource %v", workerRecv.resource)
	}
	attempts := 0
	for _, s := range workerRecv.spans {
		if strings.HasPrefix(s.Name, "execute_node ") {
			attempts++
			if tr := id(s.TraceId); tr != clientTrace && tr != resumeTrace {
				t.Errorf("%s in trace %s", s.Name, tr)
			}
		}
	}
	workerRecv.mu.Unlock()
	if attempts < 3 {
		t.Errorf("%d attempts traced, want 3 or more (draft, review, publish)", attempts)
	}
	apiRecv.mu.Lock()
	defer apiRecv.mu.Unlock()
	for _, s := range apiRecv.spans {
		t.Errorf("the API process traced %s", fmt.Sprint(s.Name))
	}
}

// An OTEL_* value weft cannot use makes `weft run` a usage error (exit
// 2) naming the variable and its value (the headers' by item only),
// before any run.
func TestRunBadOTELValue(t *testing.T) {
	wf := filepath.Join("testdata", "llm_route.wf")
	for _, c := range []struct{ key, val string }{
		{"OTEL_TRACES_EXPORTER", "zipkin"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "no-equals-sign"},
		{"OTEL_RESOURCE_ATTRIBUTES", "team"},
	} {
		t.Run(c.key, func(t *testing.T) {
			vars := map[string]string{c.key: c.val, "OLLAMA_HOST": "http://127.0.0.1:1"}
			if c.key != "OTEL_TRACES_EXPORTER" {
				vars["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:1"
			}
			r := weft(t, []string{"run", wf, "--llm", "ollama:llama3.1", "--input", "q"}, func(e *env) {
				e.getenv = func(k string) string { return vars[k] }
			})
			r.wantCode(t, exitUsage)
			switch {
			case c.key == "OTEL_EXPORTER_OTLP_HEADERS":
				// Headers carry API keys: named, never shown.
				if !strings.Contains(r.stderr, c.key+": item 1") || strings.Contains(r.stderr, c.val) {
					t.Errorf("stderr does not name %s without its value:\n%s", c.key, r.stderr)
				}
			case !strings.Contains(r.stderr, c.key+"=") || !strings.Contains(r.stderr, c.val):
				t.Errorf("stderr does not name %s=%s:\n%s", c.key, c.val, r.stderr)
			}
			if strings.Contains(r.stdout, "reply") {
				t.Errorf("the run went on: %s", r.stdout)
			}
		})
	}
}
