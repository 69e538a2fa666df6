package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	. "github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
)

// checkWF calls the default model (a), a model of a provider no
// component provides (b), an action nothing provides (c), a tool no
// component provides (d) and, in a subworkflow, another missing action.
const checkWF = `action first {
  type: LLM
  prompt: "Say something about {{input_text}}"
}

action second {
  type: LLM
  model: "bogus:m"
  prompt: "Answer briefly: {{question}}"
}

action find {
  type: TOOL
  tool: "retrieve"
}

workflow Inner {
  nodes {
    node look {
      type: FUNCTION
      action: "lookup_customer"
      outputs { name: String }
    }
  }
  initial: look
  finals: [ look ]
}

workflow Main {
  nodes {
    node a {
      type: LLM
      action: "first"
      outputs { text: String }
    }
    node b {
      type: LLM
      action: "second"
      inputs { question: a.text }
      outputs { answer: String }
    }
    node c {
      type: FUNCTION
      action: "lookup_order"
      outputs { x: String }
    }
    node d {
      type: TOOL
      action: "find"
      inputs { query: a.text }
      outputs { result: String }
    }
    node sub {
      type: WORKFLOW
      workflow: Inner
      outputs { name: String }
    }
  }
  edges {
    edge { from: a; to: b }
    edge { from: b; to: c }
    edge { from: c; to: d }
    edge { from: d; to: sub }
  }
  initial: a
  finals: [ sub ]
}
`

// Check reports every problem of a run's components against its workflow
// in one *CheckError, before anything runs: a missing resource with its
// component, a model that does not open, a missing action and tool with
// the node's position (a subworkflow's node by its path), and calls no
// model.
func TestCheckReportsEveryProblem(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.NewOpenAIServer(llmtest.Text("unused"))
	defer srv.Close()
	s := newService(t, memory.New(), map[string]string{"TEST_KEY": "sk-test"})
	path := writeFile(t, "check.wf", checkWF)
	wf, err := s.Open(ctx, Source{Name: path, Workflow: "Main"})
	if err != nil {
		t.Fatal(err)
	}
	missingDB := filepath.Join(t.TempDir(), "gone.sqlite")
	comps := []component.Spec{
		{ID: "llm.openai", Config: json.RawMessage(`{"base_url":"` + srv.URL + `/v1","model":"gpt-test","api_key":{"env":"TEST_KEY"}}`)},
		{ID: "tool.sql", Config: json.RawMessage(`{"db":` + quote(missingDB) + `}`)},
	}
	err = s.Check(ctx, StartRequest{Workflow: wf, Components: comps})
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("Check = %v; want a *CheckError", err)
	}
	type row struct {
		what            ProblemKind
		node, name, cid string
		line            int
	}
	want := []row{
		{ProblemResource, "", "", "tool.sql", 0},
		{ProblemModel, "b", "bogus:m", "", 36},
		{ProblemAction, "c", "lookup_order", "", 42},
		{ProblemTool, "d", "retrieve", "", 47},
		{ProblemAction, "sub/look", "lookup_customer", "", 19},
	}
	if len(ce.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(ce.Problems), len(want), err)
	}
	for i, w := range want {
		p := ce.Problems[i]
		got := row{p.What, p.Node, p.Name, p.Component, p.Pos.Line}
		if got != w || p.Kind != engine.KindInvalidInput {
			t.Errorf("problem %d = %+v (kind %s), want %+v (invalid_input)", i, got, p.Kind, w)
		}
		if w.node != "" && p.Pos.File != path {
			t.Errorf("problem %d at %s, want in %s", i, p.Pos, path)
		}
	}
	var re *builtin.ResourceError
	if !errors.As(err, &re) || re.Name != missingDB || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the resource's cause is not found in %v", err)
	}
	if !errors.Is(err, component.ErrNoProvider) {
		t.Errorf("the model's cause is not found in %v", err)
	}
	if engine.KindOf(err) != engine.KindInvalidInput {
		t.Errorf("KindOf = %s", engine.KindOf(err))
	}
	for _, s := range []string{path + ":42:5: node c", `node c (action lookup_order): no implementation of action "lookup_order"`, "node sub/look", "node d (action find): calls the retrieve tool"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("a library error gives CLI advice: %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("Check sent %d requests to the model", n)
	}
}

// A component that does not load is one problem naming it, with the
// component's error; an LLM action with no model and no default is
// another kind.
func TestCheckComponentsAndDefaultModel(t *testing.T) {
	ctx := context.Background()
	s := newService(t, memory.New(), nil)
	wf, err := s.Open(ctx, Bytes("one.wf", []byte(`action first {
  type: LLM
  prompt: "Say something about {{input_text}}"
}

workflow One {
  nodes {
    node a {
      type: LLM
      action: "first"
      outputs { text: String }
    }
  }
  initial: a
  finals: [ a ]
}
`)))
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "docs.json")
	err = s.Check(ctx, StartRequest{Workflow: wf, Components: []component.Spec{{ID: "tool.retrieve", Config: json.RawMessage(`{"docs":` + quote(missing) + `}`)}}})
	var ce *CheckError
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].What != ProblemComponent || ce.Problems[0].Component != "tool.retrieve" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Check = %v; want the retrieve component that does not load", err)
	}
	err = s.Check(ctx, StartRequest{Workflow: wf})
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].What != ProblemNoModel || ce.Problems[0].Node != "a" || ce.Problems[0].Pos.Line != 8 {
		t.Fatalf("Check = %v; want node a without a model", err)
	}
	// A default model that does not open is a problem even when no
	// action uses it.
	pass, err := s.Open(ctx, Bytes("pass.wf", []byte(passWF)))
	if err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(t.TempDir(), "gone.jsonl")
	err = s.Check(ctx, StartRequest{Workflow: pass, Components: []component.Spec{{ID: "llm.replay", Config: json.RawMessage(`{"file":` + quote(gone) + `}`)}}})
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].What != ProblemModel || ce.Problems[0].Name != "replay:"+gone || ce.Problems[0].Node != "" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Check = %v; want the default model that does not open", err)
	}
}

const passWF = `workflow P {
  nodes {
    node a {
      type: FUNCTION
      action: "pass"
      inputs { x: "y" }
      outputs { z: String }
    }
  }
  initial: a
  finals: [ a ]
}
`

// A good run passes, and the models Check opened are the ones the run
// then uses: each is opened once.
func TestCheckPassesAndTheRunUsesItsModels(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.NewOpenAIServer(llmtest.Text("a draft"))
	defer srv.Close()
	reg, err := builtin.New()
	if err != nil {
		t.Fatal(err)
	}
	var opened atomic.Int32
	s, err := New(Options{Store: memory.New(), Components: reg, Env: &component.Env{Getenv: func(k string) string { return map[string]string{"TEST_KEY": "sk"}[k] }},
		WrapModel: func(_ string, m llm.Model) llm.Model { opened.Add(1); return m }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wf, err := s.Open(ctx, Bytes("review.wf", []byte(askWF)))
	if err != nil {
		t.Fatal(err)
	}
	req := StartRequest{Workflow: wf, Components: []component.Spec{{ID: "llm.openai", Config: json.RawMessage(`{"base_url":"` + srv.URL + `/v1","model":"gpt-test","api_key":{"env":"TEST_KEY"}}`)}},
		Input: map[string]flow.Value{flow.InputText: flow.StringValue("hi")}}
	if err := s.Check(ctx, req); err != nil {
		t.Fatalf("Check = %v", err)
	}
	if n := opened.Load(); n != 1 {
		t.Fatalf("Check opened %d models, want 1", n)
	}
	res, err := s.Run(ctx, req)
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("run: %v %+v", err, res)
	}
	if n := opened.Load(); n != 1 || len(srv.Requests()) != 1 {
		t.Errorf("after the run: %d models opened (want the one Check opened), %d requests", n, len(srv.Requests()))
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
