package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/mcptest"
	"github.com/weftlang/weft/llm/llmtest"
)

// everythingJS is server-everything, installed in test/mcp by npm ci; the
// test skips, saying so, without node or it.
func everythingJS(t *testing.T) string {
	t.Helper()
	return mcptest.ServerJS(t, "server-everything", "index.js")
}

// mcpWF is a workflow declaring server-everything (its path for %s) whose
// LLM action may call everything__get-sum, then a TOOL node calling
// everything__echo with the model's answer. Lines 1-4 are the declaration,
// line 9 the action's tools, line 20 the TOOL node's tool, line 22 its
// input.
const mcpWF = `mcp everything {
  command: "node"
  args: [%q, "stdio"]
  timeout: 30s
}

action add {
  prompt: "What is 20 + 22? Use the tool."
  tools: ["%s"]
}

workflow Add {
  nodes {
    node ask {
      action: "add"
      outputs { text: String }
    }
    node echo {
      type: TOOL
      tool: "%s"
      inputs {
        %s: %s
      }
      outputs { text: String }
    }
  }
  edges {
    edge { from: ask; to: echo }
  }
  initial: ask
  finals: [ echo ]
}
`

// writeMCPWF writes mcpWF with the tool names and the TOOL node's input.
func writeMCPWF(t *testing.T, js, llmTool, nodeTool, input, value string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "add.wf")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(mcpWF, js, llmTool, nodeTool, input, value)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunMCPDeclaredInTheFile: weft run starts the server the file
// declares; the model (the fake Ollama server) calls everything__get-sum
// and gets the server's answer; the TOOL node calls everything__echo.
func TestRunMCPDeclaredInTheFile(t *testing.T) {
	js := everythingJS(t)
	path := writeMCPWF(t, js, "everything__get-sum", "everything__echo", "message", "ask.text")
	ol := llmtest.NewOllamaServer(
		llmtest.Call("c1", "everything__get-sum", `{"a":20,"b":22}`),
		llmtest.Text("20 + 22 = 42"),
	)
	defer ol.Close()
	getenv := func(k string) string { return map[string]string{"OLLAMA_HOST": ol.URL}[k] }
	r := weft(t, []string{"run", path, "--llm", "ollama:llama3.1", "--input", "go"}, func(e *env) { e.getenv = getenv })
	r.wantCode(t, exitOK)
	if r.stdout != "text: Echo: 20 + 22 = 42\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	reqs := ol.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if ts := reqs[0].Request.Tools; len(ts) != 1 || ts[0].Name != "everything__get-sum" {
		t.Errorf("the model was offered %+v", ts)
	}
	var result string
	for _, m := range reqs[1].Request.Messages {
		if m.ToolCallID == "c1" {
			result = m.Content
		}
	}
	if result != `"The sum of 20 and 22 is 42."` {
		t.Errorf("the tool result the model got = %q, want the server's answer", result)
	}
}

// TestRunMCPStaticChecks: before the first step, weft run refuses an MCP
// tool name whose server is not declared, a tool the server does not
// list, and a TOOL node whose inputs do not fit the tool's input schema,
// each at the position of the name or input, and calls no model.
func TestRunMCPStaticChecks(t *testing.T) {
	js := everythingJS(t)
	for _, tc := range []struct {
		name                            string
		llmTool, nodeTool, input, value string
		want                            string
	}{
		{"unknown server", "evrything__get-sum", "everything__echo", "message", "ask.text",
			`add.wf:9:11: node ask (action add): tool evrything__get-sum: no MCP server evrything (declared: everything; declare it with ` + "`mcp evrything { ... }`" + ` or a tool.mcp component); did you mean "everything"?`},
		{"unknown tool", "everything__get-sum", "everything__ecko", "message", "ask.text",
			`add.wf:20:13: node echo: tool everything__ecko: MCP server everything has no tool "ecko"; did you mean "echo"? (its tools: echo, get-annotated-message, get-env, get-resource-links, get-resource-reference, get-structured-content, get-sum, get-tiny-image, gzip-file-as-resource, simulate-research-query, toggle-simulated-logging, toggle-subscriber-updates, trigger-long-running-operation)`},
		{"missing required input", "everything__get-sum", "everything__echo", "msg", "ask.text",
			`add.wf:18:5: node echo: tool everything__echo: the tool requires "message", which is not an input of the node (input schema /required)`},
		{"input of the wrong type", "everything__get-sum", "everything__get-sum", "a", `"twenty"`,
			`add.wf:22:9: node echo: tool everything__get-sum: input a is String, the tool wants number (input schema /properties/a/type)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeMCPWF(t, js, tc.llmTool, tc.nodeTool, tc.input, tc.value)
			ol := llmtest.NewOllamaServer()
			defer ol.Close()
			getenv := func(k string) string { return map[string]string{"OLLAMA_HOST": ol.URL}[k] }
			r := weft(t, []string{"run", path, "--llm", "ollama:llama3.1", "--input", "go"}, func(e *env) { e.getenv = getenv })
			r.wantCode(t, exitUsage)
			if !strings.Contains(r.stderr, "weft: "+filepath.Dir(path)+string(filepath.Separator)+tc.want+"\n") {
				t.Errorf("stderr lacks\n%s\n%s", tc.want, r.stderr)
			}
			if n := len(ol.Requests()); n != 0 {
				t.Errorf("%d model requests, want none", n)
			}
		})
	}
}

// A secret of a declared server whose variable is not set stops weft run
// before anything starts, naming the variable and where it is written.
func TestRunMCPMissingSecret(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.wf")
	src := "mcp gh {\n  command: \"github-mcp\"\n  env: {GITHUB_TOKEN: {env: \"WEFT_TEST_NO_SUCH_TOKEN\"}}\n}\n\nworkflow W {\n  nodes {\n    node a {\n      type: TOOL\n      tool: \"gh__whoami\"\n    }\n  }\n  initial: a\n  finals: [ a ]\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weft(t, []string{"run", path, "--input", "go"}, func(e *env) { e.getenv = func(string) string { return "" } })
	r.wantCode(t, exitUsage)
	want := "weft: " + path + ":3:3: mcp gh: env.GITHUB_TOKEN: $WEFT_TEST_NO_SUCH_TOKEN: the environment variable is not set\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks\n%s\n%s", want, r.stderr)
	}
}

// weft serve refuses a server declared both in the file and in --config.
func TestServeMCPDeclaredTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.wf")
	src := "mcp gh {\n  command: \"github-mcp\"\n}\n\nworkflow W {\n  nodes {\n    node a {\n      type: TOOL\n      tool: \"gh__whoami\"\n    }\n  }\n  initial: a\n  finals: [ a ]\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "weft.json")
	conf := fmt.Sprintf(`{"graphs": {"w": %q}, "components": [{"id": "tool.mcp", "config": {"name": "gh", "command": "other-mcp"}}]}`, path)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weft(t, []string{"serve", "--config", cfg, "--store", filepath.Join(dir, "s.db"), "--addr", "127.0.0.1:0"})
	r.wantCode(t, exitUsage)
	want := "weft: " + path + ":1:1: mcp gh: a tool.mcp component of the run's components (--config) has that name too\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks\n%s\n%s", want, r.stderr)
	}
}

// A declared server that cannot be started stops weft run, the error
// naming the declaration's position.
func TestRunMCPServerDoesNotStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.wf")
	src := "mcp gh {\n  command: \"weft-test-no-such-mcp-server\"\n}\n\nworkflow W {\n  nodes {\n    node a {\n      type: TOOL\n      tool: \"gh__whoami\"\n    }\n  }\n  initial: a\n  finals: [ a ]\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weft(t, []string{"run", path, "--input", "go"})
	r.wantCode(t, exitUsage)
	want := "weft: " + path + ":1:1: mcp gh: component tool.mcp: provision failed: mcp server gh: connect: cannot connect: exec: \"weft-test-no-such-mcp-server\": executable file not found in $PATH\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks\n%s\n%s", want, r.stderr)
	}
}
