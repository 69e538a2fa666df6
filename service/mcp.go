package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// MCPModule is the id of the component of an MCP server (component/builtin's
// tool.mcp), which an `mcp` declaration of the source becomes.
const MCPModule = "tool.mcp"

// The kinds of MCPDeclError.
var (
	// ErrMCPSecret: a secret of the declaration names an environment
	// variable that is not set (or empty).
	ErrMCPSecret = errors.New("the environment variable is not set")
	// ErrMCPDuplicate: the run's components hold a tool.mcp component of
	// the declaration's name already (weft serve's --config, say).
	ErrMCPDuplicate = errors.New("a tool.mcp component of the run's components (--config) has that name too")
)

// MCPDeclError is an MCP server declared in the source (`mcp NAME { ... }`)
// that cannot become a component of the run. errors.Is finds its kind
// (ErrMCPSecret, ErrMCPDuplicate) and engine.ErrInvalidInput.
type MCPDeclError struct {
	// Server is the declaration's name; Pos where it is written.
	Server string
	Pos    flow.Pos
	// Field is the field concerned ("env.TOKEN"), when one is.
	Field string
	// Err is the cause.
	Err error
}

// Error names the declaration's position, the server and the cause.
func (e *MCPDeclError) Error() string {
	var b strings.Builder
	if e.Pos.IsValid() {
		b.WriteString(e.Pos.String())
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "mcp %s: ", e.Server)
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause and the invalid-input kind.
func (e *MCPDeclError) Unwrap() []error { return []error{e.Err, engine.ErrInvalidInput} }

// MCPSpecs returns the component specs of the MCP servers w's source
// declares (Workflow.MCPServers): a tool.mcp component each, its secrets
// as references ({"env": "VARIABLE"}), so a thread's stored spec holds no
// credential. getenv, when not nil, is asked for every secret: one that is
// unset fails with an *MCPDeclError of kind ErrMCPSecret naming the
// variable. given are the run's other components: a tool.mcp component
// among them with a declaration's name fails with ErrMCPDuplicate.
func MCPSpecs(w *flow.Workflow, getenv func(string) string, given []component.Spec) ([]component.Spec, error) {
	if w == nil || len(w.MCPServers) == 0 {
		return nil, nil
	}
	taken := map[string]bool{}
	for _, n := range MCPServerNames(given) {
		taken[n] = true
	}
	var out []component.Spec
	for _, srv := range w.MCPServers {
		if taken[srv.Name] {
			return nil, &MCPDeclError{Server: srv.Name, Pos: srv.Pos, Err: ErrMCPDuplicate}
		}
		cfg := map[string]any{"name": srv.Name}
		for k, v := range srv.Config {
			switch k {
			case "env", "headers":
				m := map[string]any{}
				for name, x := range v.Object() {
					if x.Kind() == flow.KindObject {
						env := x.Object()["env"].Str()
						if getenv != nil && getenv(env) == "" {
							return nil, &MCPDeclError{Server: srv.Name, Pos: srv.ConfigPos[k], Field: k + "." + name, Err: fmt.Errorf("$%s: %w", env, ErrMCPSecret)}
						}
						m[name] = component.Secret{Env: env}
						continue
					}
					m[name] = x.Str()
				}
				cfg[k] = m
			case "timeout":
				cfg[k] = v.Duration().String()
			default:
				cfg[k] = v
			}
		}
		sp, err := component.SpecOf(MCPModule, cfg)
		if err != nil {
			return nil, &MCPDeclError{Server: srv.Name, Pos: srv.Pos, Err: err}
		}
		out = append(out, sp)
	}
	return out, nil
}

// MCPServerNames returns the names of the tool.mcp components of specs, in
// order (a config that does not decode is skipped: loading it says why).
func MCPServerNames(specs []component.Spec) []string {
	var out []string
	for _, sp := range specs {
		if sp.ID != MCPModule {
			continue
		}
		var c struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(sp.Config, &c) == nil && c.Name != "" {
			out = append(out, c.Name)
		}
	}
	return out
}

// MCPToolError is a tool name of the source, server__tool, that the run's
// MCP servers do not answer, or a TOOL node's inputs that do not fit the
// tool's input schema; Check reports it as a ProblemMCP.
type MCPToolError struct {
	// Tool is the name as written; Server and Name its two parts.
	Tool, Server, Name string
	// Reason says what is wrong.
	Reason string
	// Schema is the JSON Pointer, in the tool's input schema, of what
	// the node's inputs do not fit; "" for a tool that is not there.
	Schema string
}

// Error names the tool and the reason.
func (e *MCPToolError) Error() string {
	if e.Schema != "" {
		return fmt.Sprintf("tool %s: %s (input schema %s)", e.Tool, e.Reason, e.Schema)
	}
	return fmt.Sprintf("tool %s: %s", e.Tool, e.Reason)
}

// Is reports the invalid-input kind.
func (e *MCPToolError) Is(target error) bool { return target == engine.ErrInvalidInput }

// mcpCheck checks a tool name written in the source against the run's MCP
// servers (servers) and their tools (tools, qualified names); nil when the
// name is no MCP tool name (no "__") or names a tool the server lists.
func mcpCheck(name string, servers, tools []string) *MCPToolError {
	srv, t, ok := strings.Cut(name, "__")
	if !ok || srv == "" {
		return nil
	}
	e := &MCPToolError{Tool: name, Server: srv, Name: t}
	if !slices.Contains(servers, srv) {
		if slices.Contains(tools, name) {
			return nil // a tool of another component, so named
		}
		declared := "none is declared"
		if len(servers) > 0 {
			declared = "declared: " + strings.Join(servers, ", ")
		}
		e.Reason = fmt.Sprintf("no MCP server %s (%s; declare it with `mcp %s { ... }` or a tool.mcp component)%s", srv, declared, srv, flow.Suggest(srv, servers))
		return e
	}
	if slices.Contains(tools, name) {
		return nil
	}
	var own []string
	for _, q := range tools {
		if rest, ok := strings.CutPrefix(q, srv+"__"); ok {
			own = append(own, rest)
		}
	}
	sort.Strings(own)
	list := "it lists none"
	if len(own) > 0 {
		list = "its tools: " + strings.Join(own, ", ")
	}
	e.Reason = fmt.Sprintf("MCP server %s has no tool %q%s (%s)", srv, t, flow.Suggest(t, own), list)
	return e
}

// schemaProblem is one way a TOOL node's inputs do not fit a tool's input
// schema: where (the input's position, or the node's) and the JSON
// pointer in the schema.
type schemaProblem struct {
	pos    flow.Pos
	path   string
	reason string
}

// inputSchema is the part of a JSON Schema the static check reads.
type inputSchema struct {
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
}

// checkInputs checks a TOOL node's declared inputs against the tool's
// input schema: its required properties are inputs, no input is a
// property the schema refuses (additionalProperties: false), and each
// input's static type fits its property's JSON type.
func checkInputs(pn *flow.PlanNode, schema json.RawMessage) []schemaProblem {
	var s inputSchema
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	n := pn.Node
	inputs := map[string]*flow.Input{}
	for _, in := range n.Inputs {
		inputs[in.Name] = in
	}
	var out []schemaProblem
	for _, r := range s.Required {
		if inputs[r] == nil {
			out = append(out, schemaProblem{pos: n.Pos, path: "/required", reason: fmt.Sprintf("the tool requires %q, which is not an input of the node", r)})
		}
	}
	closed := strings.TrimSpace(string(s.AdditionalProperties)) == "false"
	props := slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	})
	for _, in := range n.Inputs {
		raw, ok := s.Properties[in.Name]
		if !ok {
			if closed {
				out = append(out, schemaProblem{pos: in.Pos, path: "/additionalProperties", reason: fmt.Sprintf("input %s is not a property of the tool%s (properties: %s)", in.Name, flow.Suggest(in.Name, props), strings.Join(props, ", "))})
			}
			continue
		}
		var p struct {
			Type json.RawMessage `json:"type"`
		}
		if json.Unmarshal(raw, &p) != nil || len(p.Type) == 0 {
			continue
		}
		var want []string
		var one string
		if json.Unmarshal(p.Type, &one) == nil {
			want = []string{one}
		} else if json.Unmarshal(p.Type, &want) != nil {
			continue
		}
		t, known := inputType(pn, in.Name)
		if !known {
			continue
		}
		if !typeFits(t, want) {
			out = append(out, schemaProblem{pos: in.Pos, path: "/properties/" + jsonPointerEscape(in.Name) + "/type",
				reason: fmt.Sprintf("input %s is %s, the tool wants %s", in.Name, t, strings.Join(want, " or "))})
		}
	}
	return out
}

// inputType is the static type of the node's input name.
func inputType(pn *flow.PlanNode, name string) (flow.Type, bool) {
	for _, pi := range pn.Inputs {
		if pi.Name == name && pi.Prog != nil {
			return pi.Prog.Type, true
		}
	}
	return flow.Type{}, false
}

// typeFits reports whether a value of type t can be of one of the JSON
// Schema types want.
func typeFits(t flow.Type, want []string) bool {
	var have []string
	switch t.Kind {
	case flow.KindAny, flow.KindNull:
		return true
	case flow.KindBool:
		have = []string{"boolean"}
	case flow.KindInt:
		have = []string{"integer", "number"}
	case flow.KindFloat:
		have = []string{"number"}
	case flow.KindString, flow.KindEnum, flow.KindDuration:
		have = []string{"string"}
	case flow.KindList:
		have = []string{"array"}
	case flow.KindObject:
		have = []string{"object"}
	default:
		return true
	}
	for _, w := range want {
		if slices.Contains(have, w) {
			return true
		}
	}
	return false
}

// jsonPointerEscape escapes a JSON Pointer reference token (RFC 6901).
func jsonPointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
