package owf

import (
	"context"
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
