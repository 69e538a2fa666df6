package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/tool"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/telemetry"
)

// weatherWF asks a model that may call the weather tool.
const weatherWF = `action forecast {
  type: LLM
  tools: ["weather"]
  system: "You answer questions about the weather."
  prompt: "Answer: {{input_text}}"
  temperature: 0.5
  max_tokens: 200
}

workflow Weather {
  nodes {
    node answer {
      type: LLM
      action: "forecast"
      outputs {
        text: String
      }
    }
  }
  initial: answer
  finals: [ answer ]
}
`

// weatherTool is a component whose tool, weather, asks an HTTP server
// through a tracing Transport.
type weatherTool struct {
	URL    string `json:"url"`
	client *http.Client
}

func (w *weatherTool) Provision(context.Context, *component.Context) error { return nil }

func (w *weatherTool) Tools(context.Context) ([]*tool.Tool, error) {
	t, err := tool.Func("weather", "The weather of a city", func(ctx context.Context, a struct {
		City string `json:"city"`
	}) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.URL+"?city="+a.City, nil)
		if err != nil {
			return "", err
		}
		resp, err := w.client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	})
	if err != nil {
		return nil, err
	}
	return []*tool.Tool{t}, nil
}

// runWeather runs weatherWF in a thread with a Tracer on an in-memory
// exporter and returns the spans and the traceparent the tool's HTTP
// server got.
func runWeather(t *testing.T, opts telemetry.Options) ([]tracetest.SpanStub, string) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var traceparent string
	weather := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparent = r.Header.Get("traceparent")
		mu.Unlock()
		io.WriteString(w, "sunny, 21 C")
	}))
	defer weather.Close()
	ollama := llmtest.NewOllamaServer(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_7", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}, Usage: llm.Usage{InputTokens: 30, OutputTokens: 5}},
		llmtest.Reply{Text: "Sunny in Oslo, 21 C.", Usage: llm.Usage{InputTokens: 50, OutputTokens: 8}},
	)
	defer ollama.Close()

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(ctx)
	tr := telemetry.NewTracer(tp, opts)

	reg, err := builtin.New()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: telemetry.Transport(nil)}
	if err := reg.Register(component.Module{ID: "tool.weather", Doc: "weather", New: func() component.Component { return &weatherTool{client: client} }}); err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Options{Store: memory.New(), Components: reg, Tracer: tr, WrapTool: tr.WrapTool, WrapModel: tr.WrapModel})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Bytes("weather.wf", []byte(weatherWF)))
	if err != nil {
		t.Fatal(err)
	}
	model, err := builtin.ModelSpec("ollama:llama3.1", func(k string) string {
		if k == "OLLAMA_HOST" {
			return ollama.URL
		}
		return ""
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Start(ctx, service.StartRequest{
		Workflow: wf, Thread: "th-1",
		Components: []component.Spec{model, {ID: "tool.weather", Config: json.RawMessage(`{"url":"` + weather.URL + `"}`)}},
		Input:      map[string]flow.Value{flow.InputText: flow.StringValue("Weather in Oslo?")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.Completed {
		t.Fatalf("run %v", res.Status)
	}
	spans := exp.GetSpans() // before Shutdown, which clears them
	mu.Lock()
	defer mu.Unlock()
	return spans, traceparent
}

// attrs maps a span's attributes by key, each as its Emit string.
func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// byName finds the one span named name.
func byName(t *testing.T, spans []tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d spans named %q among %q", len(found), name, names)
	}
	return found[0]
}

// chats are the spans named name, in the order they started.
func all(spans []tracetest.SpanStub, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// wantAttrs checks that s has each of want's attributes with its value.
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]string) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: %s = %q, want %q", s.Name, k, got[k], v)
		}
	}
}

// A run of a workflow whose model calls a tool is one trace: the run's
// span, the node attempt's under it, the model calls' and the tool call's
// under the attempt, with the GenAI attributes; the tool's HTTP request
// carries the tool span's trace context. Without the opt-in no prompt or
// reply text is recorded.
func TestRunTrace(t *testing.T) {
	spans, traceparent := runWeather(t, telemetry.Options{})
	if len(spans) != 5 {
		t.Errorf("%d spans, want 5 (run, attempt, 2 chats, tool)", len(spans))
	}
	run := byName(t, spans, "invoke_workflow Weather")
	att := byName(t, spans, "execute_node answer")
	tl := byName(t, spans, "execute_tool weather")
	chats := all(spans, "chat llama3.1")
	if len(chats) != 2 {
		for _, s := range spans {
			t.Log(s.Name, attrs(s))
		}
		t.Fatalf("%d chat spans, want 2", len(chats))
	}
	if run.Parent.IsValid() {
		t.Errorf("the run's span has a parent %v", run.Parent)
	}
	if att.Parent.SpanID() != run.SpanContext.SpanID() {
		t.Errorf("the attempt's parent is %v, want the run's span", att.Parent.SpanID())
	}
	for _, c := range append(chats, tl) {
		if c.Parent.SpanID() != att.SpanContext.SpanID() {
			t.Errorf("%s's parent is %v, want the attempt's span", c.Name, c.Parent.SpanID())
		}
		if c.SpanContext.TraceID() != run.SpanContext.TraceID() {
			t.Errorf("%s is in another trace", c.Name)
		}
	}
	wantAttrs(t, run, map[string]string{
		"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "Weather",
		"weft.thread.id": "th-1", "weft.run.number": "1", "weft.run.resumed": "false", "weft.run.status": "completed",
	})
	if attrs(run)["weft.run.id"] == "" {
		t.Error("the run's span has no weft.run.id")
	}
	wantAttrs(t, att, map[string]string{
		"weft.node.name": "answer", "weft.node.action": "forecast", "weft.node.step": "1", "weft.node.attempt": "1",
	})
	if k := attrs(att)["weft.node.idempotency_key"]; !strings.HasPrefix(k, "th-1/1-") {
		t.Errorf("idempotency key %q", k)
	}
	wantAttrs(t, chats[0], map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "ollama", "gen_ai.request.model": "llama3.1",
		"gen_ai.request.temperature": "0.5", "gen_ai.request.max_tokens": "200",
		"gen_ai.usage.input_tokens": "30", "gen_ai.usage.output_tokens": "5",
		"gen_ai.response.finish_reasons": `["tool_calls"]`, "gen_ai.response.model": "llama3.1",
	})
	wantAttrs(t, chats[1], map[string]string{
		"gen_ai.usage.input_tokens": "50", "gen_ai.usage.output_tokens": "8", "gen_ai.response.finish_reasons": `["stop"]`,
	})
	if chats[0].SpanKind != trace.SpanKindClient {
		t.Errorf("chat span kind %v", chats[0].SpanKind)
	}
	wantAttrs(t, tl, map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather", "gen_ai.tool.call.id": "call_7",
	})
	want := "00-" + tl.SpanContext.TraceID().String() + "-" + tl.SpanContext.SpanID().String() + "-01"
	if traceparent != want {
		t.Errorf("the tool's request had traceparent %q, want %q", traceparent, want)
	}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if v := kv.Value.Emit(); strings.Contains(v, "Oslo") {
				t.Errorf("span %q records content without the opt-in: %s=%s", s.Name, kv.Key, v)
			}
		}
		if s.Status.Code == codes.Error {
			t.Errorf("span %q failed: %s", s.Name, s.Status.Description)
		}
	}
}

// With CaptureContent, the chat spans hold the system instructions, the
// input and output messages in the conventions' JSON, and the tool span
// its arguments and result.
func TestRunTraceCapturesContentWhenAskedTo(t *testing.T) {
	spans, _ := runWeather(t, telemetry.Options{CaptureContent: true})
	chats := all(spans, "chat llama3.1")
	if len(chats) != 2 {
		t.Fatalf("%d chat spans", len(chats))
	}
	a := attrs(chats[0])
	if a["gen_ai.system_instructions"] != `[{"type":"text","content":"You answer questions about the weather."}]` {
		t.Errorf("system instructions %s", a["gen_ai.system_instructions"])
	}
	if a["gen_ai.input.messages"] != `[{"role":"user","parts":[{"type":"text","content":"Answer: Weather in Oslo?"}]}]` {
		t.Errorf("input messages %s", a["gen_ai.input.messages"])
	}
	if a["gen_ai.output.messages"] != `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_7","name":"weather","arguments":{"city":"Oslo"}}],"finish_reason":"tool_calls"}]` {
		t.Errorf("output messages %s", a["gen_ai.output.messages"])
	}
	b := attrs(chats[1])
	if !strings.Contains(b["gen_ai.input.messages"], `{"role":"tool","parts":[{"type":"tool_call_response","id":"call_7","response":"\"sunny, 21 C\""}]}`) {
		t.Errorf("second input messages %s", b["gen_ai.input.messages"])
	}
	if !strings.Contains(b["gen_ai.output.messages"], "Sunny in Oslo, 21 C.") {
		t.Errorf("second output messages %s", b["gen_ai.output.messages"])
	}
	wantAttrs(t, byName(t, spans, "execute_tool weather"), map[string]string{
		"gen_ai.tool.call.arguments": `{"city":"Oslo"}`, "gen_ai.tool.call.result": `"sunny, 21 C"`,
	})
}

// recorder is a TracerProvider on an in-memory exporter.
func recorder(t *testing.T) (*telemetry.Tracer, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return telemetry.NewTracer(tp, telemetry.Options{}), exp
}

// An attempt that fails and is retried records a retry event with the
// delay and the error; one whose fallback stands in a fallback event; one
// that waits for a person a waiting event, and is no error.
func TestAttemptEnds(t *testing.T) {
	tr, exp := recorder(t)
	node := &flow.PlanNode{Name: "fetch"}
	ctx := context.Background()
	boom := &llm.Error{Provider: "ollama", Kind: llm.KindNotFound, Status: 404, Message: "model 'x' not found"}
	_, end := tr.StartAttempt(ctx, &engine.Call{Node: node, Step: 2, Attempt: 1})
	end(engine.AttemptEnd{Err: boom, Retrying: true, Delay: 1500e6})
	_, end = tr.StartAttempt(ctx, &engine.Call{Node: node, Step: 2, Attempt: 2, Item: 3})
	end(engine.AttemptEnd{Err: boom, Fallback: true})
	_, end = tr.StartAttempt(ctx, &engine.Call{Node: node, Step: 3, Attempt: 1})
	end(engine.AttemptEnd{Err: &engine.Interrupt{Question: flow.StringValue("ok?")}})
	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans", len(spans))
	}
	events := func(s tracetest.SpanStub) string {
		var out []string
		for _, e := range s.Events {
			var kv []string
			for _, a := range e.Attributes {
				if a.Key != "exception.stacktrace" {
					kv = append(kv, string(a.Key)+"="+a.Value.Emit())
				}
			}
			out = append(out, e.Name+"{"+strings.Join(kv, " ")+"}")
		}
		return strings.Join(out, " ")
	}
	if got, want := events(spans[0]), `exception{exception.type=*llm.Error exception.message=ollama: HTTP 404: model 'x' not found} retry{weft.retry.delay_ms=1500 exception.message=ollama: HTTP 404: model 'x' not found}`; got != want {
		t.Errorf("retried attempt's events:\n%s\nwant\n%s", got, want)
	}
	if spans[0].Status.Code != codes.Error || attrs(spans[0])["error.type"] != "llm.not_found" {
		t.Errorf("retried attempt: status %v, error.type %q", spans[0].Status, attrs(spans[0])["error.type"])
	}
	if got := events(spans[1]); !strings.HasSuffix(got, " fallback{}") {
		t.Errorf("fallback attempt's events: %s", got)
	}
	wantAttrs(t, spans[1], map[string]string{"weft.node.item": "3", "weft.node.attempt": "2"})
	if got := events(spans[2]); got != "waiting{}" || spans[2].Status.Code != codes.Unset {
		t.Errorf("waiting attempt: events %s, status %v", got, spans[2].Status)
	}
}

// failing is a model that fails.
type failing struct{ err error }

func (f failing) Chat(context.Context, *llm.Request, func(llm.Chunk) error) (*llm.Response, error) {
	return nil, f.err
}

// A failed LLM call's span is an error with the llm.Error's kind as its
// error.type.
func TestChatError(t *testing.T) {
	tr, exp := recorder(t)
	m := tr.WrapModel("openai:gpt-x", failing{&llm.Error{Provider: "openai", Kind: llm.KindContextOverflow, Message: "too long"}})
	if _, err := m.Chat(context.Background(), &llm.Request{Model: "gpt-x"}, nil); err == nil {
		t.Fatal("no error")
	}
	s := exp.GetSpans()[0]
	if s.Name != "chat gpt-x" || s.Status.Code != codes.Error {
		t.Errorf("span %q status %v", s.Name, s.Status)
	}
	wantAttrs(t, s, map[string]string{"error.type": "llm." + string(llm.KindContextOverflow), "gen_ai.provider.name": "openai"})
}

// A replayed session's model is named by its file, not by its path.
func TestReplayModelName(t *testing.T) {
	tr, exp := recorder(t)
	m := tr.WrapModel("replay:/home/someone/sessions/qa.jsonl", failing{errors.New("no more replies")})
	_, _ = m.Chat(context.Background(), &llm.Request{}, nil)
	s := exp.GetSpans()[0]
	if s.Name != "chat qa.jsonl" {
		t.Errorf("span %q, want chat qa.jsonl", s.Name)
	}
	wantAttrs(t, s, map[string]string{"gen_ai.request.model": "qa.jsonl", "gen_ai.provider.name": "replay"})
}
