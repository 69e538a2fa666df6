package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weftlang/weft/internal/napper"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/telemetry"
)

// The client's spans (as a traceparent header would name them).
const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan   = "00f067aa0ba902b7"
	resumeTrace  = "0af7651916cd43dd8448eb211c80319c"
	resumeSpan   = "b7ad6b7169203331"
	forgedTrace  = "11111111111111111111111111111111"
	forgedParent = `"weft_trace":{"traceparent":"00-` + forgedTrace + `-1111111111111111-01"}`
)

// With a Propagator, a run created by a request that carries a
// traceparent is traced as a child of the client's span (the drive's
// invoke_workflow span has its trace id and parent, and carries its
// tracestate); the resume, a request of another trace, is a child of that
// one and links to the first drive's trace. A trace context in the body is
// not taken. Without a Propagator the headers are ignored.
func TestRunTraceFromRequest(t *testing.T) {
	for _, withProp := range []bool{true, false} {
		t.Run(map[bool]string{true: "propagator", false: "none"}[withProp], func(t *testing.T) {
			ctx := context.Background()
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(ctx)
			tr := telemetry.NewTracer(tp, telemetry.Options{})
			st := memory.New()
			svc, err := service.New(service.Options{Store: st, Tracer: tr})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Close() })
			wf, err := svc.Open(ctx, service.Source{Name: "testdata/approval.wf"})
			if err != nil {
				t.Fatal(err)
			}
			f := serve(t, svc, st, wf, func(o *server.Options) {
				if withProp {
					o.Propagator = propagation.TraceContext{}
				}
			})
			code, body := f.do("POST", "/threads/t1/runs/wait",
				`{"assistant_id":"Approval","if_not_exists":"create","input":{"input_text":"doc"},`+forgedParent+`}`,
				"traceparent", "00-"+clientTrace+"-"+clientSpan+"-01", "tracestate", "vendor=abc")
			if code != 200 || !strings.Contains(body, "__interrupt__") {
				t.Fatalf("run: %d %s", code, body)
			}
			code, body = f.do("POST", "/threads/t1/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`,
				"traceparent", "00-"+resumeTrace+"-"+resumeSpan+"-01")
			if code != 200 || !strings.Contains(body, `"published":"doc"`) {
				t.Fatalf("resume: %d %s", code, body)
			}
			var runs []map[string]any
			f.json("GET", "/threads/t1/runs", "", 200, &runs)
			for _, r := range runs {
				if b, _ := json.Marshal(r); strings.Contains(string(b), "weft_trace") || strings.Contains(string(b), clientTrace) {
					t.Errorf("a run shows its trace context: %s", b)
				}
			}
			spans := exp.GetSpans() // before Shutdown, which clears them
			var drives []tracetest.SpanStub
			for _, s := range spans {
				if s.Name == "invoke_workflow Approval" {
					drives = append(drives, s)
				}
			}
			if len(drives) != 2 {
				t.Fatalf("%d drives traced, want 2", len(drives))
			}
			first, second := drives[0], drives[1]
			if !withProp {
				for _, d := range drives {
					if d.Parent.IsValid() || len(d.Links) != 0 || d.SpanContext.TraceID().String() == clientTrace {
						t.Errorf("without a Propagator a drive has parent %v, links %v", d.Parent, d.Links)
					}
				}
				return
			}
			if got := first.SpanContext.TraceID().String(); got != clientTrace {
				t.Errorf("first drive's trace %s, want the client's %s (not the body's %s)", got, clientTrace, forgedTrace)
			}
			if !first.Parent.IsRemote() || first.Parent.SpanID().String() != clientSpan {
				t.Errorf("first drive's parent %v, want the client's span %s", first.Parent, clientSpan)
			}
			if ts := first.SpanContext.TraceState().Get("vendor"); ts != "abc" {
				t.Errorf("first drive's tracestate vendor=%q, want abc", ts)
			}
			if len(first.Links) != 0 {
				t.Errorf("first drive has links %v", first.Links)
			}
			if got := second.SpanContext.TraceID().String(); got != resumeTrace || second.Parent.SpanID().String() != resumeSpan {
				t.Errorf("resume's trace %s parent %s, want %s %s", got, second.Parent.SpanID(), resumeTrace, resumeSpan)
			}
			if len(second.Links) != 1 || second.Links[0].SpanContext.TraceID().String() != clientTrace ||
				second.Links[0].SpanContext.SpanID().String() != clientSpan {
				t.Fatalf("resume's links %v, want one to the first drive's trace %s", second.Links, clientTrace)
			}
			// The attempts are under their drive.
			for _, s := range spans {
				if strings.HasPrefix(s.Name, "execute_node ") && s.SpanContext.TraceID() != first.SpanContext.TraceID() && s.SpanContext.TraceID() != second.SpanContext.TraceID() {
					t.Errorf("%s in trace %s", s.Name, s.SpanContext.TraceID())
				}
			}
		})
	}
}

// tracedSleepy serves testdata/sleepy.wf over st with a Tracer on its own
// in-memory exporter and the W3C Propagator.
func tracedSleepy(t *testing.T, st store.Store, n *napper.Napper) (*fixture, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tr := telemetry.NewTracer(tp, telemetry.Options{})
	svc, err := service.New(service.Options{Store: st, Actions: n.Registry(), Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(context.Background(), service.Source{Name: "testdata/sleepy.wf"})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, svc, st, wf, func(o *server.Options) { o.Propagator = propagation.TraceContext{} }), exp
}

// A run taken over by the next server after its server stopped mid-run
// goes on in the same trace, under the same parent: the client's span.
func TestTakeoverContinuesTheTrace(t *testing.T) {
	ctx := context.Background()
	open := sqliteOpener(t)
	n1 := napper.New()
	st1 := open()
	f1, exp1 := tracedSleepy(t, st1, n1)
	code, body := f1.do("POST", "/threads/r/runs", `{"assistant_id":"Sleepy","if_not_exists":"create","input":{"input_text":"a"}}`,
		"traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	if code != 200 {
		t.Fatalf("run: %d %s", code, body)
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(body), &run); err != nil {
		t.Fatal(err)
	}
	n1.WaitStarted(t, "a")
	if err := f1.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st1.Close()

	n2 := napper.New()
	close(n2.Gate)
	f2, exp2 := tracedSleepy(t, open(), n2)
	eventually(t, "the run ends on the second server", func() bool { return f2.runStatus("r", run.RunID) == "success" })
	for i, exp := range []*tracetest.InMemoryExporter{exp1, exp2} {
		var drives []tracetest.SpanStub
		for _, s := range exp.GetSpans() {
			if s.Name == "invoke_workflow Sleepy" {
				drives = append(drives, s)
			}
		}
		if len(drives) != 1 {
			t.Fatalf("server %d traced %d drives", i+1, len(drives))
		}
		d := drives[0]
		if d.SpanContext.TraceID().String() != clientTrace || d.Parent.SpanID().String() != clientSpan {
			t.Errorf("server %d's drive: trace %s parent %s, want %s %s", i+1, d.SpanContext.TraceID(), d.Parent.SpanID(), clientTrace, clientSpan)
		}
		if got, want := attrOf(d, "weft.run.resumed"), fmt.Sprint(i == 1); got != want {
			t.Errorf("server %d's drive: weft.run.resumed %s, want %s", i+1, got, want)
		}
	}
}

// attrOf is the value of s's attribute key, as its Emit string.
func attrOf(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}
