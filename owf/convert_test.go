package owf

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/owf/tools"
)

// TestConvertedWorkflowsRunToTheSameResult prints every conformance
// workflow as .wf (what weft convert does), compiles the text with the .wf
// front-end, and runs both on the same fakes: results, errors and paths
// must be equal.
func TestConvertedWorkflowsRunToTheSameResult(t *testing.T) {
	for _, f := range conformanceFiles(t) {
		rel, _ := filepath.Rel(conformanceDir, f)
		t.Run(rel, func(t *testing.T) {
			doc, err := LoadFile(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			w, err := Compile(doc)
			if err != nil {
				t.Fatal(err)
			}
			src, err := lang.FormatWorkflow(w)
			if err != nil {
				t.Fatalf("FormatWorkflow: %v", err)
			}
			m, ds := lang.LoadSource(rel+".wf", src, nil)
			if ds.HasErrors() {
				t.Fatalf("the converted source does not compile:\n%v\n%s", ds, src)
			}
			run := func(w *flow.Workflow) (string, string, error) {
				srv := llmtest.NewOllamaServer()
				defer srv.Close()
				srv.Repeat(scriptedReply())
				c := ollama.New(ollama.Config{BaseURL: srv.BaseURL(), Model: "llama3.1"})
				hosts := newToolHosts(t)
				n := 0
				opts := Options{Model: c, Dialect: DialectOllama, Embedder: c, QueryPrefix: OllamaQueryPrefix,
					Tools: tools.Options{Client: hosts.client(), SerperKey: "k", SerperKeySet: true},
					Intn:  func(k int) int { n++; return n % k }}
				x, err := NewExecutor(opts)
				if err != nil {
					t.Fatal(err)
				}
				plan, cds := flow.Compile(w, &flow.CompileOptions{HasAction: x.Registry().Has})
				if plan == nil {
					t.Fatalf("compile: %v", cds)
				}
				in := "What is the most expensive city?"
				res, err := (&engine.Runner{Registry: x.Registry()}).Run(context.Background(), plan,
					map[string]flow.Value{flow.InputText: flow.StringValue(in)}, nil)
				if err != nil {
					return "", "", Explain(err)
				}
				return res.Output("result").Str(), res.Final, nil
			}
			out1, final1, err1 := run(w)
			out2, final2, err2 := run(m.Main())
			if out1 != out2 || final1 != final2 || (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
				t.Errorf("JSON: %q at %s, err %v\n.wf:  %q at %s, err %v", out1, final1, err1, out2, final2, err2)
			}
		})
	}
}

// TestMissingOutputIsAnError: a hand-edited workflow whose task node lacks
// one of the outputs the action writes fails, naming it, rather than
// dropping the value.
func TestMissingOutputIsAnError(t *testing.T) {
	w, err := Compile(load(t, oneTask(5, 10)))
	if err != nil {
		t.Fatal(err)
	}
	a := w.Node("A")
	a.Outputs = a.Outputs[:len(a.Outputs)-1] // new_files
	a.Set = a.Set[:2]
	a.Set = append(a.Set, &flow.Assign{Name: varSteps, Expr: bin("+", ident(varSteps), lit(flow.IntValue(1)))})
	x, err := NewExecutor(Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, ds := flow.Compile(w, &flow.CompileOptions{HasAction: x.Registry().Has})
	if plan == nil {
		t.Fatal(ds)
	}
	_, err = (&engine.Runner{Registry: x.Registry()}).Run(context.Background(), plan, nil, nil)
	var oe *engine.OutputError
	if !errors.As(err, &oe) || oe.Field != "new_files" {
		t.Fatalf("error = %v, want an OutputError naming new_files", err)
	}
}
