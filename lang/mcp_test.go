package lang_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

const mcpSrc = `mcp everything {
  command: "node"
  args: ["dist/index.js", "stdio"]
  env: {LOG_LEVEL: "info", TOKEN: {env: "EVERYTHING_TOKEN"}}
  timeout: 30s
  max_restarts: 2
  max_inline: -1
}

action add {
  prompt: "Add"
  tools: ["everything__get-sum", "everything__echo"]
}

workflow W {
  nodes {
    node ask {
      action: "add"
    }
    node echo {
      type: TOOL
      tool: "everything__echo"
      inputs {
        message: ask.text
      }
    }
  }
  edges {
    edge { from: ask; to: echo }
  }
  initial: ask
  finals: [ echo ]
}
`

// An mcp declaration reaches the IR: the module's servers and every
// workflow's, with the fields as written and their positions; the tool
// names written in the source are kept with theirs.
func TestMCPDeclarationCompiles(t *testing.T) {
	m, ds := lang.LoadSource("m.wf", []byte(mcpSrc), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if len(m.MCPServers) != 1 || len(m.Main().MCPServers) != 1 || m.Main().MCPServers[0] != m.MCPServers[0] {
		t.Fatalf("servers: module %v, workflow %v", m.MCPServers, m.Main().MCPServers)
	}
	s := m.MCPServers[0]
	if s.Name != "everything" || s.Pos.String() != "m.wf:1:1" {
		t.Errorf("server %s at %s", s.Name, s.Pos)
	}
	c := s.Config
	if c["command"].Str() != "node" || len(c["args"].List()) != 2 || c["args"].List()[1].Str() != "stdio" ||
		c["env"].Object()["LOG_LEVEL"].Str() != "info" || c["env"].Object()["TOKEN"].Object()["env"].Str() != "EVERYTHING_TOKEN" ||
		c["timeout"].Kind() != flow.KindDuration || c["timeout"].Duration() != 30*time.Second ||
		c["max_restarts"].Int() != 2 || c["max_inline"].Int() != -1 || len(c) != 6 {
		t.Errorf("config = %v", c)
	}
	if p := s.ConfigPos["env"]; p.String() != "m.wf:4:3" {
		t.Errorf("env at %s", p)
	}
	var refs []string
	for _, r := range m.Main().ToolRefs {
		refs = append(refs, r.Name+"@"+r.Pos.String()+" node="+r.Node+" action="+r.Action)
	}
	want := []string{
		"everything__echo@m.wf:22:13 node=echo action=",
		"everything__get-sum@m.wf:12:11 node= action=add",
		"everything__echo@m.wf:12:34 node= action=add",
	}
	if strings.Join(refs, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool refs:\n%s\nwant:\n%s", strings.Join(refs, "\n"), strings.Join(want, "\n"))
	}
}

// A declaration in an imported file is visible to the importing file's
// workflows, as an action binding is.
func TestMCPDeclarationImported(t *testing.T) {
	files := map[string]string{
		"servers.wf": "mcp fs {\n  command: \"npx\"\n  args: [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv\"]\n}\n",
	}
	src := "import \"servers.wf\"\n\nworkflow W {\n  nodes {\n    node a {\n      type: TOOL\n      tool: \"fs__list_allowed_directories\"\n    }\n  }\n  initial: a\n  finals: [ a ]\n}\n"
	m, ds := lang.LoadSource("main.wf", []byte(src), func(name string) ([]byte, error) {
		return []byte(files[name]), nil
	})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	w := m.Main()
	if len(w.MCPServers) != 1 || w.MCPServers[0].Name != "fs" || w.MCPServers[0].Pos.String() != "servers.wf:1:1" {
		t.Fatalf("servers of W = %+v", w.MCPServers)
	}
}

// Each mistake in a declaration is an error at the value (or the name, or
// the declaration) that makes it.
func TestMCPDeclarationErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"duplicate", "mcp a { command: \"x\" }\n\nmcp a { url: \"http://h/mcp\" }\n",
			"e.wf:3:5: mcp server a is already declared at e.wf:1:1"},
		{"bad name", "mcp \"a__b\" { command: \"x\" }\n",
			`e.wf:1:5: mcp server name "a__b": want 1 to 32 letters, digits, '-' and '_', no "__", not ending with '_'`},
		{"name ending with _", "mcp a_ { command: \"x\" }\n",
			`e.wf:1:5: mcp server name "a_": want 1 to 32 letters, digits, '-' and '_', no "__", not ending with '_'`},
		{"neither command nor url", "mcp a { timeout: 5s }\n",
			"e.wf:1:1: mcp a: give exactly one of command (a server on stdio) and url (streamable HTTP)"},
		{"both", "mcp a {\n  command: \"x\"\n  url: \"http://h\"\n}\n",
			"e.wf:1:1: mcp a: give exactly one of command (a server on stdio) and url (streamable HTTP)"},
		{"headers with command", "mcp a {\n  command: \"x\"\n  headers: {A: \"b\"}\n}\n",
			"e.wf:3:3: mcp a: headers go with url, not command"},
		{"args with url", "mcp a {\n  url: \"http://h\"\n  args: [\"b\"]\n}\n",
			"e.wf:3:3: mcp a: args goes with command, not url"},
		{"empty command", "mcp a { command: \"\" }\n",
			"e.wf:1:18: mcp a: command must be a non-empty string"},
		{"args not strings", "mcp a {\n  command: \"x\"\n  args: [\"a\", 1]\n}\n",
			"e.wf:3:9: mcp a: args must be a list of strings"},
		{"env value a number", "mcp a {\n  command: \"x\"\n  env: {A: 1}\n}\n",
			`e.wf:3:12: mcp a: env.A must be a string or a secret, {env: "VARIABLE"}`},
		{"env not an object", "mcp a {\n  command: \"x\"\n  env: \"A=1\"\n}\n",
			`e.wf:3:8: mcp a: env must be an object of strings and secrets ({env: "VARIABLE"})`},
		{"secret with another key", "mcp a {\n  url: \"http://h\"\n  headers: {Auth: {var: \"T\"}}\n}\n",
			`e.wf:3:19: mcp a: headers.Auth: a secret is {env: "VARIABLE"}`},
		{"secret not a variable name", "mcp a {\n  url: \"http://h\"\n  headers: {Auth: {env: \"1T\"}}\n}\n",
			"e.wf:3:25: mcp a: headers.Auth: a secret names an environment variable: letters, digits and '_', not starting with a digit"},
		{"timeout a string", "mcp a {\n  command: \"x\"\n  timeout: \"30s\"\n}\n",
			"e.wf:3:12: mcp a: timeout must be a positive duration, such as 30s"},
		{"negative max_restarts", "mcp a {\n  command: \"x\"\n  max_restarts: -1\n}\n",
			"e.wf:3:17: mcp a: max_restarts must be an integer (0 or more)"},
		{"max_inline a float", "mcp a {\n  command: \"x\"\n  max_inline: 1.5\n}\n",
			"e.wf:3:15: mcp a: max_inline must be an integer"},
		{"not a literal", "mcp a {\n  command: x + \"y\"\n}\n",
			"e.wf:2:12: mcp a: command must be a literal value"},
		{"unknown field", "mcp a {\n  command: \"x\"\n  argv: [\"y\"]\n}\n",
			`e.wf:3:3: unknown field "argv" in mcp a; did you mean "args"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := lang.LoadSource("e.wf", []byte(tc.src), nil)
			var got []string
			for _, d := range ds.Errors() {
				got = append(got, d.Pos.String()+": "+d.Msg)
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}
