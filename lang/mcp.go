package lang

import (
	"regexp"
	"strings"

	"github.com/weftlang/weft/flow"
)

// mcpName is the form of an MCP server's name (tool.mcp's rule): letters,
// digits, '-' and '_', at most 32, no "__", not ending with '_'.
var mcpName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// envVar is the form of an environment variable a secret names.
var envVar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// mcpByName returns the server called name declared so far, or nil.
func (c *compiler) mcpByName(name string) *flow.MCPServer {
	for _, s := range c.m.MCPServers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// mcpServer compiles `mcp NAME { ... }`, checking each field's value.
func (c *compiler) mcpServer(d *MCPDecl) *flow.MCPServer {
	if d.Name == nil {
		return nil
	}
	name := d.Name.Name
	if !mcpName.MatchString(name) || strings.Contains(name, "__") || strings.HasSuffix(name, "_") {
		c.errorf(d.Name.Pos, "mcp server name %q: want 1 to 32 letters, digits, '-' and '_', no \"__\", not ending with '_'", name)
	}
	srv := &flow.MCPServer{Name: name, Pos: d.Pos, Config: map[string]flow.Value{}, ConfigPos: map[string]flow.Pos{}}
	what := "mcp " + name
	for _, f := range d.Fields {
		if f.Value == nil {
			continue
		}
		fname := f.Name.Name
		v, ok := c.literal(f.Value)
		if !ok {
			c.errorf(f.Value.Start(), "%s: %s must be a literal value", what, fname)
			continue
		}
		switch fname {
		case "command", "dir", "url":
			if v.Kind() != flow.KindString || v.Str() == "" {
				c.errorf(f.Value.Start(), "%s: %s must be a non-empty string", what, fname)
				continue
			}
		case "args":
			ok := v.Kind() == flow.KindList
			for _, a := range v.List() {
				ok = ok && a.Kind() == flow.KindString
			}
			if !ok {
				c.errorf(f.Value.Start(), "%s: args must be a list of strings", what)
				continue
			}
		case "env", "headers":
			if !c.mcpStrings(what, fname, f.Value) {
				continue
			}
		case "timeout":
			if v.Kind() != flow.KindDuration || v.Duration() <= 0 {
				c.errorf(f.Value.Start(), "%s: timeout must be a positive duration, such as 30s", what)
				continue
			}
		case "max_restarts", "max_inline":
			if v.Kind() != flow.KindInt || (fname == "max_restarts" && v.Int() < 0) {
				c.errorf(f.Value.Start(), "%s: %s must be an integer%s", what, fname, map[bool]string{true: " (0 or more)"}[fname == "max_restarts"])
				continue
			}
		}
		srv.Config[fname] = v
		srv.ConfigPos[fname] = f.Pos
	}
	// Fields written, even with a value refused above: one mistake is
	// reported once.
	cmd, url := d.Field("command") != nil, d.Field("url") != nil
	switch {
	case cmd == url:
		c.errorf(d.Pos, "%s: give exactly one of command (a server on stdio) and url (streamable HTTP)", what)
	case cmd:
		if _, ok := srv.Config["headers"]; ok {
			c.errorf(srv.ConfigPos["headers"], "%s: headers go with url, not command", what)
		}
	default:
		for _, k := range []string{"args", "env", "dir"} {
			if _, ok := srv.Config[k]; ok {
				c.errorf(srv.ConfigPos[k], "%s: %s goes with command, not url", what, k)
			}
		}
	}
	return srv
}

// mcpStrings checks the object of env or headers: each value a string or
// a secret, {env: "VARIABLE"}.
func (c *compiler) mcpStrings(what, field string, e Expr) bool {
	obj, ok := e.(*ObjectLit)
	if !ok {
		c.errorf(e.Start(), "%s: %s must be an object of strings and secrets ({env: \"VARIABLE\"})", what, field)
		return false
	}
	good := true
	for _, f := range obj.Fields {
		switch x := f.Value.(type) {
		case *StringLit:
		case *ObjectLit:
			if len(x.Fields) != 1 || x.Fields[0].Key != "env" {
				c.errorf(x.Pos, "%s: %s.%s: a secret is {env: \"VARIABLE\"}", what, field, f.Key)
				good = false
				continue
			}
			s, ok := x.Fields[0].Value.(*StringLit)
			if !ok || !envVar.MatchString(s.Value) {
				c.errorf(x.Fields[0].Value.Start(), "%s: %s.%s: a secret names an environment variable: letters, digits and '_', not starting with a digit", what, field, f.Key)
				good = false
			}
		default:
			c.errorf(f.Value.Start(), "%s: %s.%s must be a string or a secret, {env: \"VARIABLE\"}", what, field, f.Key)
			good = false
		}
	}
	return good
}

// appendToolRefs adds the tool names e writes (a string, or a list of
// strings) to refs.
func appendToolRefs(refs []flow.ToolRef, e Expr, node, action string) []flow.ToolRef {
	switch x := e.(type) {
	case *StringLit:
		refs = append(refs, flow.ToolRef{Name: x.Value, Pos: x.Pos, Node: node, Action: action})
	case *ListLit:
		for _, el := range x.Elems {
			refs = appendToolRefs(refs, el, node, action)
		}
	}
	return refs
}
