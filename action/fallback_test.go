package action_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/providers"
)

// classifyWF is a workflow of one classifying LLM node; extra is written
// inside the node and edges/limits after the nodes.
func classifyWF(node, rest string) string {
	return `
action identify_user_intent {
  type: LLM
  prompt: "Classify: {{input_text}}"
}

workflow Route {
  nodes {
    node classify {
      type: LLM
      action: "identify_user_intent"
      outputs {
        intent: Enum["qa","summarization","not_clear"]
      }
` + node + `
    }
    node apologise {
      type: LLM
      prompt: "Say sorry for: {{why}}"
      inputs {
        why: classify.error
      }
      outputs {
        text: String
      }
    }
  }
` + rest + `
  initial: classify
  finals: [ classify, apologise ]
}
`
}

// runAgainst runs src against the fake Ollama server srv (opened as
// weft run opens models: through the provider, without retries here).
func runAgainst(t *testing.T, src string, srv *llmtest.Server, sleep func(context.Context, time.Duration) error) (*engine.Result, []engine.Event, error) {
	t.Helper()
	m, ds := lang.LoadSource("route.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(m.Main(), &flow.CompileOptions{BindingReads: action.TemplateReads})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	getenv := func(k string) string {
		if k == "OLLAMA_HOST" {
			return srv.BaseURL()
		}
		return ""
	}
	b := &action.Binder{Default: "ollama:tiny", Open: func(spec string) (llm.Model, error) { return providers.Open(spec, getenv) }}
	var events []engine.Event
	r := &engine.Runner{Registry: engine.NewRegistry(), Bind: b.Bind, Sleep: sleep}
	res, err := r.Run(context.Background(), plan, map[string]flow.Value{"input_text": flow.StringValue("What was 2019 revenue?")},
		engine.ObserverFunc(func(e engine.Event) { events = append(events, e) }))
	return res, events, err
}

// A model server that fails (500 on every call) fails the LLM node, with
// the provider's message and the node's name: the run is not a success.
func TestLLMNodeFailsWhenTheServerDoes(t *testing.T) {
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	srv.Repeat(llmtest.Status(500, "model runner has unexpectedly stopped"))
	res, events, err := runAgainst(t, classifyWF("", ""), srv, nil)
	var ne *engine.NodeError
	if res.Status != engine.Failed || !errors.As(err, &ne) || ne.Node != "classify" ||
		!strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "model runner has unexpectedly stopped") {
		t.Fatalf("status %s, err %v: want node classify failed with the server's message", res.Status, err)
	}
	for _, e := range events {
		if e.Kind == "fallback" {
			t.Errorf("a fallback nobody asked for: %+v", e)
		}
	}
	if len(res.Notices) != 0 {
		t.Errorf("notices %+v", res.Notices)
	}

	// A 404 (no such model) likewise.
	srv404 := llmtest.NewOllamaServer()
	defer srv404.Close()
	srv404.Repeat(llmtest.Status(404, `model "tiny" not found, try pulling it first`))
	res, _, err = runAgainst(t, classifyWF("", ""), srv404, nil)
	if res.Status != engine.Failed || !errors.As(err, &ne) || ne.Node != "classify" || !strings.Contains(err.Error(), `model "tiny" not found`) {
		t.Errorf("404: status %s, err %v", res.Status, err)
	}
}

// The node's retry applies to a failing LLM call: a 500 then a reply.
func TestLLMNodeRetryApplies(t *testing.T) {
	srv := llmtest.NewOllamaServer(llmtest.Status(500, "busy"), llmtest.JSON(map[string]any{"intent": "summarization"}))
	defer srv.Close()
	noSleep := func(context.Context, time.Duration) error { return nil }
	res, events, err := runAgainst(t, classifyWF("retry { max: 2 }", ""), srv, noSleep)
	if err != nil || res.Status != engine.Completed || res.Output("intent").Str() != "summarization" {
		t.Fatalf("status %s, intent %v, err %v", res.Status, res.Output("intent"), err)
	}
	retried := false
	for _, e := range events {
		if e.Type == engine.NodeRetrying && e.Node == "classify" && strings.Contains(e.Error, "busy") {
			retried = true
		}
	}
	if !retried {
		t.Error("no node_retrying event carrying the server's message")
	}
}

// An on: error edge takes a failing LLM node's error elsewhere.
func TestLLMNodeOnErrorEdgeApplies(t *testing.T) {
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	srv.Push(llmtest.Status(500, "out of memory"), llmtest.Text("Sorry."))
	res, _, err := runAgainst(t, classifyWF("", `  edges {
    edge { from: classify; to: apologise; on: error }
  }`), srv, nil)
	if err != nil || res.Status != engine.Completed || res.Final != "apologise" {
		t.Fatalf("status %s at %s, err %v", res.Status, res.Final, err)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1].Request.Messages; !strings.Contains(last[len(last)-1].Content, "out of memory") {
		t.Errorf("the error edge's node was not given the server's message: %+v", last)
	}
}

// The run's max_time bounds an LLM node whose server hangs.
func TestLLMNodeMaxTimeApplies(t *testing.T) {
	srv := llmtest.NewOllamaServer(llmtest.Reply{Latency: 10 * time.Second, Text: `{"intent":"qa"}`})
	defer srv.Close()
	start := time.Now()
	res, _, err := runAgainst(t, classifyWF("", "  limits { max_time: 300ms }"), srv, nil)
	var le *engine.LimitError
	if res.Status != engine.Failed || !errors.As(err, &le) || le.Limit != engine.LimitMaxTime || le.Node != "classify" {
		t.Fatalf("status %s, err %v", res.Status, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the run took %s", d)
	}
}

// A fallback asked for on the action is taken, and said: a notice in the
// result and a "fallback" event, with the server's message.
func TestLLMActionFallbackIsExplicitAndVisible(t *testing.T) {
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	srv.Repeat(llmtest.Status(500, "model runner has unexpectedly stopped"))
	src := strings.Replace(classifyWF("", ""), `prompt: "Classify: {{input_text}}"`, `prompt: "Classify: {{input_text}}"
  fallback: { intent: "not_clear" }`, 1)
	res, events, err := runAgainst(t, src, srv, nil)
	if err != nil || res.Status != engine.Completed || res.Output("intent").Str() != "not_clear" {
		t.Fatalf("status %s, intent %v, err %v", res.Status, res.Output("intent"), err)
	}
	fb := res.Fallbacks()
	if len(fb) != 1 || fb[0].Node != "classify" || fb[0].Step != 1 || !strings.Contains(fb[0].Message, "model runner has unexpectedly stopped") ||
		len(fb[0].Values) != 1 || fb[0].Values[0].Value.Str() != "not_clear" {
		t.Fatalf("fallbacks %+v", fb)
	}
	if s := fb[0].String(); !strings.HasPrefix(s, `node classify fell back to {intent: "not_clear"}: `) || !strings.Contains(s, "HTTP 500") {
		t.Errorf("notice line %q", s)
	}
	var ev *engine.Event
	for i, e := range events {
		if e.Type == engine.ActionEvent && e.Kind == "fallback" {
			ev = &events[i]
		}
	}
	if ev == nil || ev.Node != "classify" || ev.Data.Object()["values"].Object()["intent"].Str() != "not_clear" ||
		!strings.Contains(ev.Data.Object()["error"].Str(), "HTTP 500") {
		t.Errorf("fallback event %+v", ev)
	}
}

// A call that is wrong, not failed, never becomes a fallback, even where
// the workflow asks for one: a model the server does not have (404), a
// field it refuses (reasoning effort on a model that does not think), a
// schema it cannot use (500 that says so). The node fails with the
// server's message and the error is marked engine.ErrMisuse; a server
// that fails (500) still falls back.
func TestMisuseIsNeverAFallback(t *testing.T) {
	src := strings.Replace(classifyWF("", ""), `prompt: "Classify: {{input_text}}"`, `prompt: "Classify: {{input_text}}"
  fallback: { intent: "not_clear" }`, 1)
	for _, tc := range []struct {
		name   string
		setup  func(*llmtest.Server)
		misuse bool
		want   string
	}{
		{"unknown model", func(s *llmtest.Server) { s.SetModels(llmtest.Model{Name: "other"}) }, true, "model 'tiny' not found"},
		{"bad request", func(s *llmtest.Server) { s.Repeat(llmtest.Status(400, "invalid options: num_thread")) }, true, "invalid options"},
		{"server down", func(s *llmtest.Server) { s.Repeat(llmtest.Status(500, "model runner has unexpectedly stopped")) }, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewOllamaServer()
			defer srv.Close()
			tc.setup(srv)
			res, _, err := runAgainst(t, src, srv, func(context.Context, time.Duration) error { return nil })
			if !tc.misuse {
				if err != nil || len(res.Fallbacks()) != 1 {
					t.Fatalf("a failing server did not fall back: err %v, notices %+v", err, res.Notices)
				}
				return
			}
			if err == nil || !errors.Is(err, engine.ErrMisuse) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a misuse error saying %q", err, tc.want)
			}
			var ne *engine.NodeError
			if !errors.As(err, &ne) || ne.Node != "classify" {
				t.Errorf("err %v does not name the node", err)
			}
			if res.Status != engine.Failed || len(res.Notices) != 0 {
				t.Errorf("status %s, notices %+v: want a failed run and no fallback", res.Status, res.Notices)
			}
		})
	}
}

// A text reply cut at the token limit sets the output and is reported.
func TestLLMTextCutIsReported(t *testing.T) {
	src := `
action answer {
  type: LLM
  prompt: "Answer: {{input_text}}"
  max_tokens: 5
}
workflow W {
  nodes {
    node reply {
      type: LLM
      action: "answer"
      outputs { text: String }
    }
  }
  initial: reply
  finals: [ reply ]
}
`
	srv := llmtest.NewOllamaServer(llmtest.Reply{Text: "Revenue in 2019 was", FinishReason: "length"})
	defer srv.Close()
	res, events, err := runAgainst(t, src, srv, nil)
	if err != nil || res.Output("text").Str() != "Revenue in 2019 was" {
		t.Fatalf("text %v, err %v", res.Output("text"), err)
	}
	if len(res.Notices) != 1 || res.Notices[0].Kind != engine.NoticeTruncated || res.Notices[0].Node != "reply" ||
		!strings.Contains(res.Notices[0].Message, "max_tokens 5") {
		t.Fatalf("notices %+v", res.Notices)
	}
	found := false
	for _, e := range events {
		if e.Type == engine.ActionEvent && e.Kind == "truncated" && e.Node == "reply" {
			found = true
		}
	}
	if !found {
		t.Error("no truncated event")
	}
}

// context_tokens reaches the request: from the node, the action, the
// workflow, or the Binder's default, the nearest winning.
func TestContextTokens(t *testing.T) {
	src := `
action a {
  type: LLM
  prompt: "A"
  context_tokens: 4096
}
action b {
  type: LLM
  prompt: "B"
}
workflow W {
  context_tokens: 2048
  nodes {
    node n1 { type: LLM; action: "a"; outputs { text: String } }
    node n2 { type: LLM; action: "a"; context_tokens: 8192; outputs { text: String } }
    node n3 { type: LLM; action: "b"; outputs { text: String } }
  }
  edges {
    edge { from: n1; to: n2 }
    edge { from: n2; to: n3 }
  }
  initial: n1
  finals: [ n3 ]
}
`
	m, ds := lang.LoadSource("ctx.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(m.Main(), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	model := &scripted{replies: []string{"1", "2", "3"}}
	b := &action.Binder{Default: "fake", ContextTokens: 1024, Open: func(string) (llm.Model, error) { return model, nil }}
	r := &engine.Runner{Registry: engine.NewRegistry(), Bind: b.Bind}
	if _, err := r.Run(context.Background(), plan, nil, nil); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, q := range model.reqs {
		got = append(got, q.ContextTokens)
	}
	if len(got) != 3 || got[0] != 4096 || got[1] != 8192 || got[2] != 2048 {
		t.Errorf("context tokens sent %v, want [4096 8192 2048]", got)
	}

	bad := strings.Replace(src, "context_tokens: 2048", `context_tokens: "big"`, 1)
	if _, ds := lang.LoadSource("ctx.wf", []byte(bad), nil); !ds.HasErrors() || !strings.Contains(ds.Error(), "ctx.wf:") || !strings.Contains(ds.Error(), "context_tokens must be a positive integer") {
		t.Errorf("a bad context_tokens: %v", ds)
	}
}

// A fallback is checked before any run: it names declared outputs, with
// values of their types, gives every Enum output a value, and does not sit
// beside an on: error edge it would make dead. Each error has its place.
func TestFallbackChecked(t *testing.T) {
	for _, tc := range []struct{ node, rest, want string }{
		{`fallback: { intnet: "qa" }`, "", `route.wf:15:1: node classify: fallback for intnet, which is not an output of node classify; did you mean "intent"?`},
		{`fallback: { intent: "maybe" }`, "", `route.wf:15:1: node classify: fallback for intent:`},
		{`fallback: { intent: 3 }`, "", `route.wf:15:1: node classify: fallback for intent:`},
		{`fallback: {}`, "", `route.wf:15:1: node classify: fallback gives no value for intent, an Enum["qa","summarization","not_clear"], which has no typed zero`},
		{`fallback: "not_clear"`, "", `route.wf:15:1: node classify: fallback must be an object of output values`},
		{`fallback: { intent: "not_clear" }`, "  edges {\n    edge { from: classify; to: apologise; on: error }\n  }", `node classify falls back (node classify) and so never fails: its on: error edge is never taken`},
	} {
		m, ds := lang.LoadSource("route.wf", []byte(classifyWF(tc.node, tc.rest)), nil)
		if !ds.HasErrors() {
			_, ds = flow.Compile(m.Main(), &flow.CompileOptions{BindingReads: action.TemplateReads})
		}
		if !ds.HasErrors() || !strings.Contains(ds.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant %s", tc.node, ds, tc.want)
		}
	}
	// On the action, the error is at the action's fallback.
	src := strings.Replace(classifyWF("", ""), `prompt: "Classify: {{input_text}}"`, `prompt: "Classify: {{input_text}}"
  fallback: { intent: "no" }`, 1)
	m, _ := lang.LoadSource("route.wf", []byte(src), nil)
	if _, ds := flow.Compile(m.Main(), nil); !strings.Contains(ds.Error(), "route.wf:5:3: node classify, fallback of action identify_user_intent: fallback for intent:") {
		t.Errorf("an action's fallback: %v", ds)
	}
	// A node's fallback: null turns its action's off.
	src = strings.Replace(src, `intent: "no"`, `intent: "qa"`, 1)
	m, _ = lang.LoadSource("route.wf", []byte(strings.Replace(src, "      outputs {\n        intent", "      fallback: null\n      outputs {\n        intent", 1)), nil)
	plan, ds := flow.Compile(m.Main(), nil)
	if ds.HasErrors() || plan.Nodes[0].Fallback != nil {
		t.Errorf("fallback: null: %v, %+v", ds, plan.Nodes[0].Fallback)
	}
}
