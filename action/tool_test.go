package action_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/llm/tool"
)

type searchArgs struct {
	Query string `json:"query"`
	K     int    `json:"k,omitempty"`
}

type searchResult struct {
	Chunks []string `json:"chunks"`
	Total  int      `json:"total"`
}

// searchTools is a registry with one tool, "search", that answers with
// k copies of the query (2 by default) and fails on the query "boom".
func searchTools(t *testing.T) *tool.Registry {
	t.Helper()
	st, err := tool.Func("search", "finds chunks", func(ctx context.Context, a searchArgs) (searchResult, error) {
		if a.Query == "boom" {
			return searchResult{}, errors.New("index unavailable")
		}
		k := a.K
		if k == 0 {
			k = 2
		}
		r := searchResult{Total: k}
		for range k {
			r.Chunks = append(r.Chunks, "about "+a.Query)
		}
		return r, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(st)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

const toolWF = `
action find_docs {
  type: TOOL
  tool: "search"
}
workflow Tools {
  nodes {
    node bound {
      type: FUNCTION
      action: "find_docs"
      inputs {
        query: input_text
      }
      outputs {
        chunks: List[String]
      }
    }
    node direct {
      type: TOOL
      tool: "search"
      inputs {
        query: "second"
        k: 3
      }
      outputs {
        chunks: List[String]
        total: Int
      }
    }
  }
  edges {
    edge { from: bound; to: direct }
  }
  initial: bound
  finals: [ direct ]
}
`

// runToolWF runs toolWF with tools bound and registered as a CLI does.
func runToolWF(t *testing.T, tools *tool.Registry, input string) (*engine.Result, []string, error) {
	t.Helper()
	mod, ds := lang.LoadSource("tools.wf", []byte(toolWF), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	reg := engine.NewRegistry()
	action.RegisterTools(reg, tools)
	plan, ds := flow.Compile(mod.Main(), &flow.CompileOptions{HasAction: reg.Has})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	b := &action.Binder{Tools: tools}
	var events []string
	res, err := (&engine.Runner{Registry: reg, Bind: b.Bind}).Run(context.Background(), plan,
		map[string]flow.Value{"input_text": str(input)},
		engine.ObserverFunc(func(e engine.Event) {
			if e.Type == engine.ActionEvent && e.Kind == "tool" {
				events = append(events, e.Node+":"+e.Data.Object()["tool"].Str())
			}
		}))
	return res, events, err
}

func TestToolBindingAndToolNode(t *testing.T) {
	res, events, err := runToolWF(t, searchTools(t), "revenue")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Output("total").Int(); got != 3 {
		t.Errorf("total = %d, want 3", got)
	}
	if got, _ := res.Output("chunks").Strings(); strings.Join(got, "|") != "about second|about second|about second" {
		t.Errorf("direct chunks = %q", got)
	}
	if got := strings.Join(res.Path, " "); got != "bound direct" {
		t.Fatalf("path = %v", got)
	}
	if got := strings.Join(events, " "); got != "bound:search direct:search" {
		t.Errorf("tool events = %q", got)
	}
}

func TestToolErrorNamesActionAndTool(t *testing.T) {
	_, _, err := runToolWF(t, searchTools(t), "boom")
	var te *action.ToolError
	if !errors.As(err, &te) || te.Action != "find_docs" || te.Tool != "search" {
		t.Fatalf("err = %v, want a *ToolError for find_docs/search", err)
	}
	if !strings.Contains(err.Error(), "index unavailable") || !strings.Contains(err.Error(), "bound") {
		t.Errorf("error %q does not name the node and the cause", err)
	}
}

func TestToolBadArgumentsNameTheField(t *testing.T) {
	a := action.NewTool("find_docs", mustGet(t, searchTools(t), "search"))
	c := toolCall(map[string]flow.Value{"query": str("x"), "k": str("three")}, out("chunks", flow.ListOf(flow.TString)))
	err := a.Run(context.Background(), c)
	var ae *tool.ArgsError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "k") {
		t.Fatalf("err = %v, want an *ArgsError naming k", err)
	}
	c = toolCall(map[string]flow.Value{"query": str("x")}, out("chunks", flow.ListOf(flow.TString)), out("pages", flow.TInt))
	if err := a.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "no field for output pages") {
		t.Fatalf("missing output: err = %v", err)
	}
}

func TestBindUnknownTool(t *testing.T) {
	bd := &flow.Binding{Name: "find_docs", Type: flow.Tool, Config: map[string]flow.Value{"tool": str("serch")}}
	_, err := (&action.Binder{Tools: searchTools(t)}).Bind(bd)
	if err == nil || !strings.Contains(err.Error(), `no tool "serch" (tools: search)`) {
		t.Errorf("unknown tool: err = %v", err)
	}
	_, err = (&action.Binder{}).Bind(bd)
	if err == nil || !strings.Contains(err.Error(), "no tools are configured") {
		t.Errorf("no tools: err = %v", err)
	}
	_, err = (&action.Binder{Tools: searchTools(t)}).Bind(&flow.Binding{Name: "x", Type: flow.Tool})
	if err == nil || !strings.Contains(err.Error(), "set `tool`") {
		t.Errorf("no tool setting: err = %v", err)
	}
}

func TestRegisterToolsKeepsCallersAction(t *testing.T) {
	reg := engine.NewRegistry()
	mine := engine.ActionFunc(func(context.Context, *engine.Call) error { return nil })
	reg.Replace("search", mine)
	action.RegisterTools(reg, searchTools(t))
	action.RegisterTools(reg, nil)
	if a, ok := reg.Lookup("search"); !ok || a == nil {
		t.Fatal("search is gone")
	} else if _, isTool := a.(*action.ToolAction); isTool {
		t.Fatal("RegisterTools replaced the caller's search action")
	}
}

func mustGet(t *testing.T, r *tool.Registry, name string) *tool.Tool {
	t.Helper()
	tl, ok := r.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tl
}

// toolCall is httpCall with every input declared on the node, as a
// compiled node has them.
func toolCall(in map[string]flow.Value, outs ...flow.PlanOutput) *engine.Call {
	c := httpCall(in, outs...)
	for _, pi := range c.Node.Inputs {
		c.Node.Node.Inputs = append(c.Node.Node.Inputs, &flow.Input{Name: pi.Name})
	}
	return c
}
