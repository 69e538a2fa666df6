package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/mcptest"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/mcp"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
)

// serverEnv, set in the environment of this test binary, makes it an MCP
// server on stdio (a server of the Go SDK) instead of running the tests:
// tool.mcp's conformance case starts it, so that it runs without node.
const serverEnv = "WEFT_BUILTIN_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		srv := sdk.NewServer(&sdk.Implementation{Name: "builtin-test", Version: "1"}, nil)
		sdk.AddTool(srv, &sdk.Tool{Name: "token", Description: "returns $TOKEN"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: os.Getenv("TOKEN")}}}, nil, nil
		})
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mcpServerConfig is a tool.mcp config starting this test binary as an MCP
// server, its TOKEN the secret $PG_PW.
func mcpServerConfig(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"name": "go", "command": os.Args[0], "timeout": "20s",
		"env": map[string]any{serverEnv: "1", "TOKEN": map[string]string{"env": "PG_PW"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMCPSecretsReachTheServerNotTheSpec(t *testing.T) {
	r := registry(t)
	x, err := r.Load(context.Background(), component.Spec{ID: "tool.mcp", Config: json.RawMessage(mcpServerConfig(t))}, env(map[string]string{"PG_PW": "s3cret-value"}))
	if err != nil {
		t.Fatal(err)
	}
	defer x.(*builtin.MCP).Close()
	ts, err := x.(component.ToolProvider).Tools(context.Background())
	if err != nil || len(ts) != 1 || ts[0].Def.Name != "go__token" {
		t.Fatalf("Tools = %v, %v; want go__token", ts, err)
	}
	if out, err := ts[0].Call(context.Background(), nil); err != nil || out != `"s3cret-value"` {
		t.Errorf("token = %s, %v; want the secret's value, given to the server", out, err)
	}
	spec, err := component.SpecOf("tool.mcp", x)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(spec.Config), "s3cret") || !strings.Contains(string(spec.Config), `"TOKEN":{"env":"PG_PW"}`) {
		t.Errorf("the spec = %s, want the secret by reference only", spec.Config)
	}
	if err := x.(*builtin.MCP).Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// everythingJS is server-everything, installed in test/mcp by npm ci; the
// test skips, saying so, without node or it.
func everythingJS(t *testing.T) string {
	t.Helper()
	return mcptest.ServerJS(t, "server-everything", "index.js")
}

// TestMCPToolInAWorkflow runs a .wf workflow whose model (the fake Ollama
// server) calls a tool of server-everything by its qualified name, the
// components given as specs, as weft serve --config and weft run load
// them: the real result comes back into the conversation, and an isError
// result reaches the model as the call's error.
func TestMCPToolInAWorkflow(t *testing.T) {
	js := everythingJS(t)
	const wf = `action add {
  type: LLM
  prompt: "What is 20 + 22? Use the tool."
  tools: ["everything__get-sum", "everything__echo"]
}

workflow Add {
  nodes {
    node ask {
      type: LLM
      action: "add"
      outputs {
        text: String
      }
    }
  }
  initial: ask
  finals: [ ask ]
}
`
	ollama := llmtest.NewOllamaServer(
		llmtest.Call("c1", "everything__get-sum", `{"a":20,"b":22}`),
		llmtest.Call("c2", "everything__get-sum", `{"a":"twenty"}`),
		llmtest.Text("20 + 22 = 42"),
	)
	defer ollama.Close()
	reg := registry(t)
	svc, err := service.New(service.Options{Store: memory.New(), Components: reg, Env: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ctx := context.Background()
	w, err := svc.Open(ctx, service.Bytes("add.wf", []byte(wf)))
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
	tools := component.Spec{ID: "tool.mcp", Config: json.RawMessage(fmt.Sprintf(`{"name":"everything","command":"node","args":[%q,"stdio"],"timeout":"30s"}`, js))}
	res, err := svc.Start(ctx, service.StartRequest{Workflow: w, Components: []component.Spec{model, tools},
		Input: map[string]flow.Value{flow.InputText: flow.StringValue("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.Completed || len(res.Outputs) != 1 || res.Outputs[0].Value.Str() != "20 + 22 = 42" {
		t.Fatalf("the run = %s %v", res.Status, res.Outputs)
	}
	reqs := ollama.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	var offered []string
	for _, d := range reqs[0].Request.Tools {
		offered = append(offered, d.Name)
	}
	if strings.Join(offered, ",") != "everything__echo,everything__get-sum" {
		t.Errorf("the model was offered %v", offered)
	}
	result := lastTool(reqs[1].Request.Messages)
	if result == nil || result.ToolCallID != "c1" || result.Content != `"The sum of 20 and 22 is 42."` {
		t.Errorf("the tool result sent to the model = %+v, want the server's answer", result)
	}
	bad := lastTool(reqs[2].Request.Messages)
	t.Logf("the model got, for bad arguments: %s", bad.Content)
	if bad == nil || bad.ToolCallID != "c2" || !strings.HasPrefix(bad.Content, "error: ") || !strings.Contains(bad.Content, "tool error: MCP error -32602: Input validation error") || !strings.Contains(bad.Content, "everything") || !strings.Contains(bad.Content, "get-sum") {
		t.Errorf("the result of a call with bad arguments = %+v, want the server's isError result as an error naming the server and the tool", bad)
	}
}

func lastTool(ms []llm.Message) *llm.Message {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == llm.ToolRole {
			return &ms[i]
		}
	}
	return nil
}

func TestMCPValue(t *testing.T) {
	var v builtin.Value
	if err := json.Unmarshal([]byte(`"literal"`), &v); err != nil || v.Literal != "literal" || !v.Secret.IsZero() {
		t.Errorf("a string = %+v, %v", v, err)
	}
	if err := json.Unmarshal([]byte(`{"env":"KEY"}`), &v); err != nil || v.Secret.Env != "KEY" || v.Literal != "" {
		t.Errorf("a secret = %+v, %v", v, err)
	}
	if b, _ := json.Marshal(v); string(b) != `{"env":"KEY"}` {
		t.Errorf("a secret marshals as %s", b)
	}
	if err := json.Unmarshal([]byte(`3`), &v); err == nil {
		t.Error("a number was accepted")
	}
	// A failing server is a provision error naming the server.
	_, err := registry(t).Load(context.Background(), component.Spec{ID: "tool.mcp", Config: json.RawMessage(`{"name":"gone","command":"sh","args":["-c","exit 1"],"timeout":"5s"}`)}, env(nil))
	if !errors.Is(err, component.ErrProvision) || !errors.Is(err, mcp.ErrConnect) || !strings.Contains(err.Error(), "gone") {
		t.Errorf("Load of a server that exits = %v, want ErrProvision and mcp.ErrConnect naming it", err)
	}
}
