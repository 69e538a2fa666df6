package action

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/tool"
)

// ToolAction is an action carried out by a Go tool (package llm/tool): the
// same tools a model may call can be called by a node.
//
// The node's declared inputs, by name, are the call's arguments (one JSON
// object; implicit inputs such as the initial node's input_text are not
// passed),
// decoded by the tool as a model's arguments are; the tool's result fills
// the node's outputs by the rules of an HTTP response body (see
// HTTPAction): an object sets each output from the field of its name, and
// a node with one output takes the whole result when it is not an object
// with that field. An error of the tool fails the attempt with a
// *ToolError. Each call is reported as a "tool" event: tool, bytes and
// duration_ms.
type ToolAction struct {
	action string
	tool   *tool.Tool
}

// NewTool returns the action named action that calls t.
func NewTool(action string, t *tool.Tool) *ToolAction {
	return &ToolAction{action: action, tool: t}
}

// ToolError is the failure of a tool called by a node.
type ToolError struct {
	// Action is the action the node called; Tool the tool it is bound to.
	Action, Tool string
	// Err is the tool's error.
	Err error
}

// Error names the action, the tool and the cause.
func (e *ToolError) Error() string {
	if e.Action == e.Tool {
		return fmt.Sprintf("tool %s: %v", e.Tool, e.Err)
	}
	return fmt.Sprintf("tool action %s (tool %s): %v", e.Action, e.Tool, e.Err)
}

// Unwrap returns the tool's error.
func (e *ToolError) Unwrap() error { return e.Err }

// Run calls the tool with the node's inputs and sets its outputs from the
// result.
func (a *ToolAction) Run(ctx context.Context, c *engine.Call) error {
	args, err := json.Marshal(toolArgs(c))
	if err != nil {
		return &ToolError{Action: a.action, Tool: a.tool.Def.Name, Err: fmt.Errorf("encoding the inputs: %w", err)}
	}
	start := time.Now()
	content, err := a.tool.Call(ctx, args)
	if c.Observed() {
		c.Emit("tool", flow.ObjectValue(map[string]flow.Value{
			"tool":        flow.StringValue(a.tool.Def.Name),
			"bytes":       flow.IntValue(int64(len(content))),
			"duration_ms": flow.FloatValue(float64(time.Since(start).Microseconds()) / 1000),
		}))
	}
	if err != nil {
		return &ToolError{Action: a.action, Tool: a.tool.Def.Name, Err: err}
	}
	if err := setHTTPOutputs(c, []byte(content), true); err != nil {
		return &ToolError{Action: a.action, Tool: a.tool.Def.Name, Err: err}
	}
	return nil
}

// RegisterTools makes every tool of tools an action of reg under the
// tool's name, so a node `type: TOOL` with `tool: "name"` calls it. A name
// reg already holds is left alone, so a caller's own action wins.
func RegisterTools(reg *engine.Registry, tools *tool.Registry) {
	if tools == nil {
		return
	}
	for _, name := range tools.Names() {
		if reg.Has(name) {
			continue
		}
		if t, ok := tools.Get(name); ok {
			reg.Replace(name, NewTool(name, t))
		}
	}
}

// bindTool makes the implementation of a TOOL binding without a url: the
// tool its `tool` setting names, from b.Tools.
func (b *Binder) bindTool(bd *flow.Binding) (engine.Action, error) {
	name := bd.Config["tool"]
	if name.Kind() != flow.KindString || name.Str() == "" {
		return nil, fmt.Errorf("tool action %s: set `tool` to the name of the tool to call, or `url` for an HTTP request", bd.Name)
	}
	t, known := b.lookupTool(name.Str())
	if t == nil {
		if len(known) == 0 {
			return nil, fmt.Errorf("tool action %s: no tool %q: no tools are configured", bd.Name, name.Str())
		}
		return nil, fmt.Errorf("tool action %s: no tool %q (tools: %s)", bd.Name, name.Str(), strings.Join(known, ", "))
	}
	return NewTool(bd.Name, t), nil
}

// lookupTool returns the tool called name in b.Tools, or nil and the names
// of the tools there are.
func (b *Binder) lookupTool(name string) (*tool.Tool, []string) {
	if b.Tools == nil {
		return nil, nil
	}
	if t, ok := b.Tools.Get(name); ok {
		return t, nil
	}
	return nil, b.Tools.Names()
}

// toolArgs returns the inputs a tool call passes: those the node declares.
// Implicit inputs (the initial node's input_text, values a template reads)
// are not passed: a node passes input_text by declaring it.
func toolArgs(c *engine.Call) map[string]flow.Value {
	all := c.InputMap()
	if c.Node == nil || c.Node.Node == nil {
		return all
	}
	args := make(map[string]flow.Value, len(c.Node.Node.Inputs))
	for _, in := range c.Node.Node.Inputs {
		if v, ok := all[in.Name]; ok {
			args[in.Name] = v
		}
	}
	return args
}
