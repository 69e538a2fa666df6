package service_test

import (
	"errors"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/service"
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
