package lang_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

func load(t *testing.T, path string) *lang.Module {
	t.Helper()
	m, ds := lang.Load(path)
	if ds.HasErrors() {
		t.Fatalf("%s does not load:\n%v", path, ds)
	}
	return m
}

// Every valid example in lang/testdata compiles to a Plan with no error.
func TestCompileTestdataToPlans(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.wf")
	if len(files) < 6 {
		t.Fatalf("found %d example files", len(files))
	}
	for _, f := range files {
		m := load(t, f)
		for _, w := range m.Workflows {
			if _, ds := flow.Compile(w, nil); ds.HasErrors() {
				t.Errorf("%s: workflow %s:\n%v", f, w.Name, ds)
			}
		}
	}
}

func TestCompileSeed(t *testing.T) {
	m := load(t, "testdata/intentqa.wf")
	w := m.Main()
	if w.Name != "IntentQA" || len(w.Nodes) != 7 || len(w.Edges) != 10 || w.Initial != "identify_intent" || w.Finals[0] != "generate" {
		t.Fatalf("workflow = %s, %d nodes, %d edges, initial %s, finals %v", w.Name, len(w.Nodes), len(w.Edges), w.Initial, w.Finals)
	}
	if v := w.Vars[0]; v.Name != "rephraseCount" || v.Type.Kind != flow.KindInt || v.Default.String() != "0" {
		t.Errorf("variable = %+v", v)
	}
	e := w.Edges[7]
	if e.From != "evaluate" || e.To[0] != "rephrase" || e.Cond.String() != `relevance == "BAD" && rephraseCount < 3` {
		t.Errorf("edge 7 = %s -> %v when %s", e.From, e.To, e.Cond)
	}
	if len(e.Updates) != 1 || e.Updates[0].Name != "rephraseCount" || e.Updates[0].Expr.String() != "rephraseCount + 1" {
		t.Errorf("update = %+v", e.Updates)
	}
	if len(e.Overrides) != 1 || e.Overrides[0].Name != "from_query" || e.Overrides[0].Expr.String() != "retrieve.query" {
		t.Errorf("override = %+v", e.Overrides)
	}
	if p := e.Pos; p.File != "testdata/intentqa.wf" || p.Line != 98 || p.Col != 5 {
		t.Errorf("edge position = %s", p)
	}
	if got := w.Node("identify_intent").Outputs[0].Type.String(); got != `Enum["qa","summarization","not_clear"]` {
		t.Errorf("intent type = %s", got)
	}
	if got := w.Node("retrieve").Outputs[0].Type.String(); got != "List[String]" {
		t.Errorf("chunks type = %s", got)
	}
}

func TestCompileExtensions(t *testing.T) {
	m := load(t, "testdata/llm_actions.wf")
	b := m.Main().Binding("identify_user_intent")
	if b == nil || b.Type != flow.LLM || b.Config["mode"].Str() != "classify" || b.Config["model"].Str() != "ollama:llama3.1" ||
		!strings.Contains(b.Config["prompt"].Str(), "Classify the request below") || b.Config["temperature"].Int() != 0 {
		t.Errorf("binding = %+v", b)
	}
	if n := m.Main().Node("inline_llm"); n.Type != flow.LLM || n.Action != "" || n.Config["prompt"].IsNull() {
		t.Errorf("inline LLM node = %+v", n)
	}

	m = load(t, "testdata/human_tool.wf")
	w := m.Main()
	if n := w.Node("ask"); n.Type != flow.Human || n.Inputs[len(n.Inputs)-1].Name != "question" {
		t.Errorf("human node = %+v", n)
	}
	if n := w.Node("query"); n.Type != flow.Tool || n.Action != "sql.query" {
		t.Errorf("tool node: type %s action %q, want TOOL calling sql.query", n.Type, n.Action)
	}

	m = load(t, "testdata/resilience.wf")
	w = m.Main()
	r := w.Node("fetch").Retry
	if r == nil || r.MaxAttempts != 3 || r.Backoff != 200*time.Millisecond || r.Factor != 2 || r.MaxBackoff != 5*time.Second {
		t.Errorf("retry = %+v", r)
	}
	if w.Node("fetch").Timeout != 10*time.Second || w.Node("parse").Timeout != 90*time.Second {
		t.Errorf("timeouts = %s, %s", w.Node("fetch").Timeout, w.Node("parse").Timeout)
	}
	var onError int
	for _, e := range w.Edges {
		if e.OnError {
			onError++
		}
	}
	if onError == 0 {
		t.Error("no error edge compiled")
	}

	m = load(t, "testdata/parallel.wf")
	w = m.Main()
	fan := w.Edges[0]
	if len(fan.To) != 2 || fan.To[0] != "search_web" || fan.To[1] != "search_docs" || fan.Join != "merge" {
		t.Errorf("fan-out = %+v", fan)
	}
	each := w.Node("answer_each")
	if each.Map.String() != "plan.questions" || each.As != "question" || each.Parallelism != 4 || len(each.Set) != 2 {
		t.Errorf("map node = map %s as %s parallelism %d set %d", each.Map, each.As, each.Parallelism, len(each.Set))
	}
	if w.Vars[0].Reducer.Kind != flow.ReduceAppend || w.Vars[2].Reducer.Kind != flow.ReduceMerge {
		t.Errorf("reducers = %s %s", w.Vars[0].Reducer, w.Vars[2].Reducer)
	}

	m = load(t, "testdata/subworkflow.wf")
	if n := m.Main().Node("answer"); n.Type != flow.Subflow || n.Subflow == nil || n.Subflow.Name != "IntentQA" {
		t.Errorf("subworkflow node = %+v", n)
	}
}

func TestImports(t *testing.T) {
	files := map[string]string{
		"app.wf": "import \"lib/actions.wf\"\nimport \"flow.wf\"\n",
		"lib/actions.wf": `action greet {
  type: LLM
  prompt: "Say hello to {{input_text}}"
}
`,
		"flow.wf": `workflow Hello {
  nodes {
    node hi {
      type: LLM
      action: "greet"
      outputs {
        text: String
      }
    }
  }
  initial: hi
  finals: [ hi ]
}
`,
	}
	read := func(name string) ([]byte, error) {
		src, ok := files[filepath.ToSlash(name)]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return []byte(src), nil
	}
	m, ds := lang.LoadFunc("app.wf", read)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if m.Main() == nil || m.Main().Name != "Hello" || m.Main().Binding("greet") == nil || len(m.Files) != 3 {
		t.Fatalf("module: main %v, files %d", m.Main(), len(m.Files))
	}
	if _, ds := flow.Compile(m.Main(), &flow.CompileOptions{HasAction: func(string) bool { return false }}); ds.HasErrors() {
		t.Errorf("a bound action must satisfy the action check: %v", ds)
	}

	files["app.wf"] = "import \"missing.wf\"\n"
	_, ds = lang.LoadFunc("app.wf", read)
	if len(ds) != 1 || ds[0].Pos.Line != 1 || ds[0].Pos.File != "app.wf" || !strings.Contains(ds[0].Msg, "cannot read missing.wf") {
		t.Errorf("missing import: %v", ds)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown workflow", `workflow A {
  nodes {
    node sub {
      type: WORKFLOW
      workflow: Bee
    }
  }
  initial: sub
  finals: [ sub ]
}
workflow Be {
  nodes {
    node x {
      type: END
    }
  }
  initial: x
  finals: [ x ]
}
`, `t.wf:5:17: node sub: unknown workflow Bee; did you mean "Be"?`},
		{"recursive workflows", `workflow A {
  nodes {
    node sub {
      type: WORKFLOW
      workflow: A
    }
  }
  initial: sub
  finals: [ sub ]
}
`, "t.wf:1:1: workflow A contains itself: A -> A"},
		{"bad max_steps", `workflow A {
  nodes {
    node x {
      type: END
    }
  }
  initial: x
  finals: [ x ]
  limits { max_steps: 0 }
}
`, "t.wf:9:23: limits: max_steps must be a positive integer"},
		{"bad retry", `workflow A {
  nodes {
    node x {
      type: FUNCTION
      action: "a"
      retry { max: 0 }
    }
  }
  initial: x
  finals: [ x ]
}
`, "retry: max must be a positive integer"},
		{"duplicate binding", `action a {
  type: LLM
  prompt: "x"
}
action a {
  type: LLM
  prompt: "y"
}
`, "t.wf:5:1: action \"a\" is already bound at t.wf:1:1"},
		{"llm binding without prompt", `action a {
  type: LLM
}
`, "t.wf:1:1: action a: an LLM action needs a prompt"},
		{"bad timeout", `workflow A {
  nodes {
    node x {
      type: FUNCTION
      action: "a"
      timeout: "soon"
    }
  }
  initial: x
  finals: [ x ]
}
`, "t.wf:6:16: node x: timeout must be a duration such as 30s or 1m30s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := lang.LoadSource("t.wf", []byte(tc.src), nil)
			if !strings.Contains(ds.Error(), tc.want) {
				t.Errorf("diagnostics:\n%v\nwant one containing %q", ds, tc.want)
			}
			var list flow.Diagnostics
			if !errors.As(ds.Err(), &list) {
				t.Errorf("Err() is not a flow.Diagnostics")
			}
		})
	}
}

// The example the README runs loads and compiles without warnings.
func TestExampleIntentQA(t *testing.T) {
	if _, err := os.Stat("../examples/intentqa/intentqa.wf"); err != nil {
		t.Skip("examples not present")
	}
	m := load(t, "../examples/intentqa/intentqa.wf")
	plan, ds := flow.Compile(m.Main(), nil)
	if plan == nil || len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
}

// A workflow's model is the default of its LLM actions; a binding's own
// model wins.
func TestWorkflowModel(t *testing.T) {
	src := `action own {
  type: LLM
  model: "openai:gpt-test"
  prompt: "a"
}

action plain {
  type: LLM
  prompt: "b"
}

workflow W {
  model: "ollama:llama3.1"
  nodes {
    node x {
      type: LLM
      action: "plain"
      outputs {
        text: String
      }
    }
    node y {
      type: LLM
      prompt: "c"
      outputs {
        text: String
      }
    }
  }
  edges {
    edge { from: x; to: y }
  }
  initial: x
  finals: [ y ]
}
`
	m, ds := lang.LoadSource("w.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	w := m.Main()
	if w.Model != "ollama:llama3.1" {
		t.Errorf("Model = %q", w.Model)
	}
	if got := w.Binding("plain").Config["model"].Str(); got != "ollama:llama3.1" {
		t.Errorf("plain binding model = %q, want the workflow's", got)
	}
	if got := w.Binding("own").Config["model"].Str(); got != "openai:gpt-test" {
		t.Errorf("own binding model = %q, want its own", got)
	}
	if got := w.Node("y").Config["model"].Str(); got != "ollama:llama3.1" {
		t.Errorf("inline LLM node model = %q", got)
	}
	if m.Bindings[1].Config["model"].IsNull() == false {
		t.Error("the module's binding was changed in place")
	}
	f, _ := lang.ParseFile("w.wf", []byte(src))
	if got := string(lang.Format(f)); got != src {
		t.Errorf("format changed the source:\n%s", got)
	}
}
