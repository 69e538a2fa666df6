package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
)

const mcpDecls = `mcp fs {
  command: "npx"
  args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
  env: {LOG_LEVEL: "info", GITHUB_TOKEN: {env: "GH_TOKEN"}}
  timeout: 30s
  max_inline: -1
}

mcp search {
  url: "https://mcp.example.com/mcp"
  headers: {Authorization: {env: "SEARCH_AUTH"}}
}

workflow W {
  nodes {
    node a {
      type: TOOL
      tool: "fs__list_allowed_directories"
    }
  }
  initial: a
  finals: [ a ]
}
`

// The servers a file declares become tool.mcp specs, secrets as
// references, in the order declared.
func TestMCPSpecs(t *testing.T) {
	m, ds := lang.LoadSource("m.wf", []byte(mcpDecls), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	env := map[string]string{"GH_TOKEN": "ghp_secret", "SEARCH_AUTH": "Bearer x"}
	specs, err := service.MCPSpecs(m.Main(), func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"args":["-y","@modelcontextprotocol/server-filesystem","/srv"],"command":"npx","env":{"GITHUB_TOKEN":{"env":"GH_TOKEN"},"LOG_LEVEL":"info"},"max_inline":-1,"name":"fs","timeout":"30s"}`,
		`{"headers":{"Authorization":{"env":"SEARCH_AUTH"}},"name":"search","url":"https://mcp.example.com/mcp"}`,
	}
	if len(specs) != 2 {
		t.Fatalf("%d specs", len(specs))
	}
	for i, sp := range specs {
		if sp.ID != "tool.mcp" || string(sp.Config) != want[i] {
			t.Errorf("spec %d = %s %s\nwant %s", i, sp.ID, sp.Config, want[i])
		}
	}
	if got := service.MCPServerNames(specs); len(got) != 2 || got[0] != "fs" || got[1] != "search" {
		t.Errorf("names = %v", got)
	}
}

// A secret whose variable is not set is an error naming the variable and
// where the declaration writes it.
func TestMCPSpecsMissingSecret(t *testing.T) {
	m, ds := lang.LoadSource("m.wf", []byte(mcpDecls), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	_, err := service.MCPSpecs(m.Main(), func(k string) string { return map[string]string{"GH_TOKEN": "x"}[k] }, nil)
	var de *service.MCPDeclError
	if !errors.As(err, &de) || !errors.Is(err, service.ErrMCPSecret) || !errors.Is(err, engine.ErrInvalidInput) {
		t.Fatalf("err = %v", err)
	}
	if want := "m.wf:11:3: mcp search: headers.Authorization: $SEARCH_AUTH: the environment variable is not set"; err.Error() != want {
		t.Errorf("err = %q\nwant %q", err, want)
	}
}

// A server of the file with the name of a tool.mcp component of the run's
// other components (weft serve --config) is an error at the declaration.
func TestMCPSpecsDuplicateOfAComponent(t *testing.T) {
	m, ds := lang.LoadSource("m.wf", []byte(mcpDecls), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	given := []component.Spec{{ID: "tool.mcp", Config: []byte(`{"name":"search","url":"http://other/mcp"}`)}}
	_, err := service.MCPSpecs(m.Main(), nil, given)
	if !errors.Is(err, service.ErrMCPDuplicate) {
		t.Fatalf("err = %v", err)
	}
	if want := "m.wf:9:1: mcp search: a tool.mcp component of the run's components (--config) has that name too"; err.Error() != want {
		t.Errorf("err = %q\nwant %q", err, want)
	}
}

// The declarations are part of the workflow's canonical source: they
// change its digest, and the stored source opens with them again.
func TestMCPDeclarationsInTheDigest(t *testing.T) {
	ctx := context.Background()
	a, err := service.Open(ctx, service.Bytes("m.wf", []byte(mcpDecls)), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := service.Open(ctx, service.Bytes("m.wf", []byte(strings.Replace(mcpDecls, `"/srv"`, `"/data"`, 1))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest == b.Digest {
		t.Errorf("two declarations with other args have one digest %s", a.Digest)
	}
	c, err := service.Open(ctx, service.Stored(a.Source), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Digest != a.Digest {
		t.Errorf("the stored source's digest %s, want %s", c.Digest, a.Digest)
	}
	sa, _ := service.MCPSpecs(a.Plan.Workflow, nil, nil)
	sc, _ := service.MCPSpecs(c.Plan.Workflow, nil, nil)
	if len(sa) != 2 || len(sc) != 2 || string(sa[0].Config) != string(sc[0].Config) || string(sa[1].Config) != string(sc[1].Config) {
		t.Errorf("specs of the stored source differ:\n%s\n%s", sa, sc)
	}
}

// Check reports an MCP tool name whose server is not declared as a
// ProblemMCP at the name's position, with an *MCPToolError.
func TestCheckMCPToolWithoutServer(t *testing.T) {
	ctx := context.Background()
	src := "action ask {\n  prompt: \"Hi\"\n  model: \"ollama:llama3.1\"\n  tools: [\"fs__read\"]\n}\n\nworkflow W {\n  nodes {\n    node a {\n      action: \"ask\"\n    }\n  }\n  initial: a\n  finals: [ a ]\n}\n"
	svc, err := service.New(service.Options{Store: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	w, err := svc.Open(ctx, service.Bytes("w.wf", []byte(src)))
	if err != nil {
		t.Fatal(err)
	}
	err = svc.Check(ctx, service.StartRequest{Workflow: w})
	var ce *service.CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	var mcpProblem *service.Problem
	for i := range ce.Problems {
		if ce.Problems[i].What == service.ProblemMCP {
			mcpProblem = &ce.Problems[i]
		}
	}
	if mcpProblem == nil {
		t.Fatalf("no MCP problem in %v", err)
	}
	want := "w.wf:4:11: node a (action ask): tool fs__read: no MCP server fs (none is declared; declare it with `mcp fs { ... }` or a tool.mcp component)"
	if mcpProblem.Error() != want || mcpProblem.Kind != engine.KindInvalidInput || mcpProblem.Name != "fs__read" {
		t.Errorf("problem = %q (%s, %s)\nwant %q", mcpProblem.Error(), mcpProblem.Kind, mcpProblem.Name, want)
	}
	var te *service.MCPToolError
	if !errors.As(err, &te) || te.Server != "fs" || te.Name != "read" {
		t.Errorf("MCPToolError = %+v", te)
	}
}
