package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/telemetry"
)

// fetchWF asks a model that calls http_request, then an HTTP action.
const fetchWF = `action browse {
  type: LLM
  tools: ["http_request"]
  prompt: "Answer: {{input_text}}"
}

action report {
  type: HTTP
  url: "BASE/report"
}

workflow Fetch {
  nodes {
    node answer {
      type: LLM
      action: "browse"
      outputs {
        text: String
      }
    }
    node file {
      action: "report"
      outputs {
        status: String
      }
    }
  }
  edges {
    edge { from: answer; to: file }
  }
  initial: answer
  finals: [ file ]
}
`

// With component.Env.Transport set to telemetry.Transport, the requests
// the built-in components make (the llm.ollama model's, the http_request
// tool's of tool.http) and those of HTTP actions carry the W3C trace
// context of the span they are made in: the chat span, the execute_tool
// span, the HTTP node's attempt; all in the run's trace. Without it they
// carry none.
func TestBuiltinRequestsCarryTraceparent(t *testing.T) {
	for _, wrap := range []bool{true, false} {
		name := "wrapped"
		if !wrap {
			name = "unwrapped"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			got := map[string]string{} // path: traceparent
			web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got[r.URL.Path] = r.Header.Get("traceparent")
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"status":"ok"}`)
			}))
			defer web.Close()
			ollama := llmtest.NewOllamaServer(
				llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "http_request", Arguments: json.RawMessage(`{"url":"` + web.URL + `/page"}`)}}},
				llmtest.Reply{Text: "It is ok."},
			)
			defer ollama.Close()
			ollama.KeepRequests(true)

			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(ctx)
			tr := telemetry.NewTracer(tp, telemetry.Options{})
			reg, err := builtin.New()
			if err != nil {
				t.Fatal(err)
			}
			env := &component.Env{Getenv: func(string) string { return "" }}
			if wrap {
				env.Transport = telemetry.Transport
			}
			svc, err := service.New(service.Options{Store: memory.New(), Components: reg, Env: env,
				Tracer: tr, WrapTool: tr.WrapTool, WrapModel: tr.WrapModel})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			wf, err := svc.Open(ctx, service.Bytes("fetch.wf", []byte(strings.ReplaceAll(fetchWF, "BASE", web.URL))))
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.Start(ctx, service.StartRequest{
				Workflow: wf, Thread: "th-1",
				Components: []component.Spec{
					{ID: "llm.ollama", Config: json.RawMessage(`{"base_url":"` + ollama.URL + `","model":"llama3.1"}`)},
					{ID: "tool.http"},
				},
				Input: map[string]flow.Value{flow.InputText: flow.StringValue("Is the page ok?")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != engine.Completed {
				t.Fatalf("run %v", res.Status)
			}
			spans := exp.GetSpans() // before Shutdown, which clears them
			var llmParents []string
			for _, r := range ollama.Requests() {
				llmParents = append(llmParents, r.Header.Get("traceparent"))
			}
			mu.Lock()
			defer mu.Unlock()
			if !wrap {
				for p, tp := range got {
					if tp != "" {
						t.Errorf("%s got traceparent %q with no Transport set", p, tp)
					}
				}
				for _, tp := range llmParents {
					if tp != "" {
						t.Errorf("the model got traceparent %q with no Transport set", tp)
					}
				}
				return
			}
			run := byName(t, spans, "invoke_workflow Fetch")
			traceID := run.SpanContext.TraceID().String()
			want := func(what, tp string, parent tracetest.SpanStub) {
				t.Helper()
				w := "00-" + traceID + "-" + parent.SpanContext.SpanID().String() + "-01"
				if tp != w {
					t.Errorf("%s: traceparent %q, want %q (span %q)", what, tp, w, parent.Name)
				}
			}
			chats := all(spans, "chat llama3.1")
			if len(chats) != 2 || len(llmParents) != 2 {
				t.Fatalf("%d chat spans, %d model requests", len(chats), len(llmParents))
			}
			for i := range chats {
				want("model request "+string(rune('1'+i)), llmParents[i], chats[i])
			}
			want("http_request", got["/page"], byName(t, spans, "execute_tool http_request"))
			want("HTTP action", got["/report"], byName(t, spans, "execute_node file"))
		})
	}
}

// ContextWithLink links the next run span to the span context given, and
// no span under it (nor a run started in the run's context); an invalid
// span context adds no link.
func TestRunLink(t *testing.T) {
	tr, exp := recorder(t)
	first := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := telemetry.ContextWithLink(context.Background(), first)
	rctx, end := tr.StartRun(ctx, engine.TracedRun{Workflow: "W", Resumed: true})
	actx, endAttempt := tr.StartAttempt(rctx, &engine.Call{Node: &flow.PlanNode{Name: "n"}, Step: 1, Attempt: 1})
	_, endNested := tr.StartRun(actx, engine.TracedRun{Workflow: "Sub"})
	endNested(engine.Completed, nil)
	endAttempt(engine.AttemptEnd{})
	end(engine.Completed, nil)
	_, end = tr.StartRun(telemetry.ContextWithLink(context.Background(), trace.SpanContext{}), engine.TracedRun{Workflow: "Other"})
	end(engine.Completed, nil)
	for _, s := range exp.GetSpans() {
		want := 0
		if s.Name == "invoke_workflow W" {
			want = 1
		}
		if len(s.Links) != want {
			t.Errorf("%s: %d links, want %d", s.Name, len(s.Links), want)
			continue
		}
		if want == 1 && (s.Links[0].SpanContext.TraceID() != first.TraceID() || s.Links[0].SpanContext.SpanID() != first.SpanID()) {
			t.Errorf("%s links to %v, want %v", s.Name, s.Links[0].SpanContext, first)
		}
	}
	if n := len(exp.GetSpans()); n != 4 {
		t.Errorf("%d spans, want 4", n)
	}
}
