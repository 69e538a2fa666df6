package action_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tool"
)

// scripted is a fake model: it answers with its replies in order and
// records the requests.
type scripted struct {
	mu      sync.Mutex
	replies []string
	reqs    []*llm.Request
}

func (s *scripted) Chat(_ context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	r := s.replies[0]
	s.replies = s.replies[1:]
	if onChunk != nil {
		for _, w := range strings.SplitAfter(r, " ") {
			if err := onChunk(llm.Chunk{Text: w}); err != nil {
				return nil, err
			}
		}
	}
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, Content: r}, Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}}, nil
}

const llmWF = `
action identify_user_intent {
  type: LLM
  model: "fake:small"
  system: "You route questions about financial reports."
  prompt: "Classify the request as qa, summarization or not_clear: {{input_text}}"
}

action answer {
  type: LLM
  prompt: "Answer: {{question}}"
}

workflow Route {
  nodes {
    node classify {
      type: LLM
      action: "identify_user_intent"
      outputs {
        intent: Enum["qa","summarization","not_clear"]
      }
    }
    node reply {
      type: LLM
      action: "answer"
      inputs {
        question: classify.input_text
      }
      outputs {
        text: String
      }
    }
  }
  edges {
    edge { from: classify; to: reply }
  }
  initial: classify
  finals: [ reply ]
}
`

func runLLM(t *testing.T, replies ...string) (*engine.Result, *scripted, []engine.Event, error) {
	t.Helper()
	m, ds := lang.LoadSource("route.wf", []byte(llmWF), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(m.Main(), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	model := &scripted{replies: replies}
	var opened []string
	b := &action.Binder{Default: "fake:default", Open: func(spec string) (llm.Model, error) {
		opened = append(opened, spec)
		return model, nil
	}}
	var events []engine.Event
	r := &engine.Runner{Registry: engine.NewRegistry(), Bind: b.Bind}
	res, err := r.Run(context.Background(), plan, map[string]flow.Value{"input_text": flow.StringValue("What was 2019 revenue?")},
		engine.ObserverFunc(func(e engine.Event) { events = append(events, e) }))
	if res.Status == engine.Completed && strings.Join(opened, ",") != "fake:small,fake:default" {
		t.Errorf("opened models %v: want the binding's model, then the default, each once", opened)
	}
	return res, model, events, err
}

func TestLLMActionsClassifyAndGenerate(t *testing.T) {
	res, model, events, err := runLLM(t, `{"intent": "qa"}`, "Revenue in 2019 was $4.2M.")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Output("text").Str(); got != "Revenue in 2019 was $4.2M." {
		t.Errorf("text = %q", got)
	}
	first := model.reqs[0]
	if len(first.Messages) != 2 || first.Messages[0].Role != llm.System || !strings.Contains(first.Messages[1].Content, "What was 2019 revenue?") {
		t.Errorf("classify request messages = %+v", first.Messages)
	}
	if !strings.Contains(string(first.Schema), `"enum"`) || !strings.Contains(string(first.Schema), `"not_clear"`) {
		t.Errorf("classify request schema = %s: want the Enum from the declared output", first.Schema)
	}
	if model.reqs[1].Schema != nil {
		t.Errorf("a single String output is generated as text, not asked as JSON")
	}
	var tokens []string
	usage := 0
	for _, e := range events {
		if e.Type == engine.ActionEvent && e.Kind == "token" && e.Node == "reply" {
			tokens = append(tokens, e.Data.Str())
		}
		if e.Kind == "usage" {
			usage++
		}
	}
	if strings.Join(tokens, "") != "Revenue in 2019 was $4.2M." || len(tokens) < 3 {
		t.Errorf("streamed tokens = %q", tokens)
	}
	if usage != 2 {
		t.Errorf("usage events = %d, want one per call", usage)
	}
}

// A model that never produces valid output fails its node, naming the
// violations: a reply that does not fit is not an answer.
func TestLLMActionInvalidEveryTimeFails(t *testing.T) {
	res, model, events, err := runLLM(t, "I think it is a question.", `{"intent": "chitchat"}`, `{"intent": 3}`, "fine")
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "classify" || res.Status != engine.Failed ||
		!strings.Contains(err.Error(), "did not match the schema after 3 attempt(s): /intent") {
		t.Fatalf("status %s, err %v", res.Status, err)
	}
	if len(model.reqs) != 3 {
		t.Errorf("calls = %d, want 3 for classify (1 + 2 repairs)", len(model.reqs))
	}
	repair := model.reqs[2].Messages[len(model.reqs[2].Messages)-1].Content
	if !strings.Contains(repair, "/intent") {
		t.Errorf("repair prompt %q does not name the violation's path", repair)
	}
	for _, e := range events {
		if e.Kind == "fallback" {
			t.Errorf("fallback event %+v: nobody asked for one", e)
		}
	}
}

func TestBinderWithoutProvider(t *testing.T) {
	b := &action.Binder{}
	if _, err := b.Bind(&flow.Binding{Name: "x", Type: flow.LLM, Config: map[string]flow.Value{"prompt": flow.StringValue("hi")}}); err == nil || !strings.Contains(err.Error(), "no default") {
		t.Errorf("err = %v", err)
	}
}

// toolThenAnswer asks for one tool call, then answers with what the tool
// returned.
type toolThenAnswer struct{ calls int }

func (m *toolThenAnswer) Chat(_ context.Context, req *llm.Request, _ func(llm.Chunk) error) (*llm.Response, error) {
	m.calls++
	if m.calls == 1 {
		if len(req.Tools) != 1 || req.Tools[0].Name != "fx_rate" {
			return nil, fmt.Errorf("tools sent: %+v", req.Tools)
		}
		return &llm.Response{Message: llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "fx_rate", Arguments: []byte(`{"from":"EUR","to":"USD"}`)}}}}, nil
	}
	last := req.Messages[len(req.Messages)-1]
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, Content: "rate is " + last.Content}}, nil
}

func TestLLMActionWithTools(t *testing.T) {
	src := `
action convert {
  type: LLM
  prompt: "Convert 10 EUR to USD."
  tools: ["fx_rate"]
}

workflow Convert {
  nodes {
    node ask {
      type: LLM
      action: "convert"
      outputs {
        text: String
      }
    }
  }
  initial: ask
  finals: [ ask ]
}
`
	mod, ds := lang.LoadSource("convert.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(mod.Main(), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	type pair struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	fx, err := tool.Func("fx_rate", "exchange rate", func(_ context.Context, p pair) (float64, error) {
		if p.From != "EUR" || p.To != "USD" {
			return 0, fmt.Errorf("unexpected pair %+v", p)
		}
		return 1.08, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := tool.NewRegistry(fx)
	b := &action.Binder{Default: "fake", Tools: tools, Open: func(string) (llm.Model, error) { return &toolThenAnswer{}, nil }}
	var kinds []string
	res, err := (&engine.Runner{Registry: engine.NewRegistry(), Bind: b.Bind}).Run(context.Background(), plan, nil,
		engine.ObserverFunc(func(e engine.Event) {
			if e.Type == engine.ActionEvent && e.Kind != "usage" {
				kinds = append(kinds, e.Kind+":"+e.Data.Object()["name"].Str())
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Output("text").Str(); got != "rate is 1.08" {
		t.Errorf("text = %q", got)
	}
	if strings.Join(kinds, " ") != "tool_call:fx_rate tool_result:fx_rate" {
		t.Errorf("events = %v", kinds)
	}

	b.Tools = nil
	if _, err := b.Bind(mod.Main().Binding("convert")); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("binding a missing tool: %v", err)
	}
}

// TestPromptReadsValuesInScope: with TemplateReads as the compiler's
// BindingReads, a prompt reads values its node does not declare: the
// workflow input, another node's field, a variable.
func TestPromptReadsValuesInScope(t *testing.T) {
	const src = `
action judge {
  type: LLM
  prompt: "Q={{input_text}} asked={{classify.input_text}} n={{tries}} text={{text}}"
}
workflow Reads {
  variables {
    tries: Int = 2
  }
  nodes {
    node classify {
      type: FUNCTION
      action: "noop"
      outputs {
        ok: Bool
      }
    }
    node check {
      type: LLM
      action: "judge"
      inputs {
        text: "chunk"
      }
      outputs {
        verdict: String
      }
    }
  }
  edges {
    edge { from: classify; to: check }
  }
  initial: classify
  finals: [ check ]
}
`
	m, ds := lang.LoadSource("reads.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	reg := engine.NewRegistry()
	reg.Replace("noop", engine.Func(func(context.Context, map[string]flow.Value) (map[string]flow.Value, error) {
		return map[string]flow.Value{"ok": flow.BoolValue(true)}, nil
	}))
	plan, ds := flow.Compile(m.Main(), &flow.CompileOptions{HasAction: reg.Has, BindingReads: action.TemplateReads})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	model := &scripted{replies: []string{"fine"}}
	b := &action.Binder{Default: "fake:x", Open: func(string) (llm.Model, error) { return model, nil }}
	res, err := (&engine.Runner{Registry: reg, Bind: b.Bind}).Run(context.Background(), plan,
		map[string]flow.Value{"input_text": flow.StringValue("revenue?")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output("verdict").Str() != "fine" {
		t.Errorf("verdict = %v", res.Output("verdict"))
	}
	if got := model.reqs[0].Messages[0].Content; got != "Q=revenue? asked=revenue? n=2 text=chunk" {
		t.Errorf("prompt = %q", got)
	}
	if got := action.TemplateReads(m.Main().Binding("judge")); strings.Join(got, ",") != "input_text,classify.input_text,tries,text" {
		t.Errorf("TemplateReads = %q", got)
	}
}
