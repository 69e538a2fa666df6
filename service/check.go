package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// ProblemKind says what a Problem that Check found is about.
type ProblemKind string

// The kinds of Problem.
const (
	// ProblemComponent is a component of the spec that does not load
	// (or two that clash): the runtime cannot be built, so nothing
	// else is checked.
	ProblemComponent ProblemKind = "component"
	// ProblemResource is a resource a component works on that is
	// missing or unusable, as its component.Checker reports it.
	ProblemResource ProblemKind = "resource"
	// ProblemModel is a model an LLM action names (or the default
	// model it uses) that cannot be opened.
	ProblemModel ProblemKind = "model"
	// ProblemNoModel is an LLM action that names no model when the
	// components give no default one.
	ProblemNoModel ProblemKind = "no_model"
	// ProblemAction is a node calling an action that the runtime does
	// not have: no component, built-in or Go action provides it, and
	// the source binds none.
	ProblemAction ProblemKind = "action"
	// ProblemTool is a tool a TOOL node or an action names that no
	// component provides.
	ProblemTool ProblemKind = "tool"
	// ProblemMCP is an MCP tool name (server__tool) the source writes
	// whose server is not declared, or does not list the tool, or a
	// TOOL node whose inputs do not fit the tool's input schema; Pos is
	// where the name (or the input) is written, Err an *MCPToolError.
	ProblemMCP ProblemKind = "mcp_tool"
)

// Problem is one thing Check found that would make a run fail.
type Problem struct {
	// What the problem is about.
	What ProblemKind `json:"what"`
	// Kind is the engine's kind of the problem (engine.KindOf):
	// invalid_input for a runtime that does not fit the workflow.
	Kind engine.Kind `json:"kind"`
	// Node is the path of the first node concerned ("outer/inner" in a
	// subworkflow), when one is; Pos is where it is written.
	Node string   `json:"node,omitempty"`
	Pos  flow.Pos `json:"pos,omitzero"`
	// Action is the action the node calls, when it has one.
	Action string `json:"action,omitempty"`
	// Name is what is missing or broken: the model spec, the action,
	// the tool.
	Name string `json:"name,omitempty"`
	// Component is the id of the component concerned: the one that
	// does not load, or whose resource is missing.
	Component string `json:"component,omitempty"`
	// Err is the cause, when there is one (a model that does not open,
	// a component's error); errors.Is and errors.As find it through
	// the CheckError.
	Err error `json:"-"`
}

// Error describes the problem, with the node's position first.
func (p *Problem) Error() string {
	var b strings.Builder
	if p.Pos.IsValid() {
		b.WriteString(p.Pos.String())
		b.WriteString(": ")
	}
	if p.Node != "" {
		b.WriteString("node ")
		b.WriteString(p.Node)
		if p.Action != "" && p.Action != p.Node {
			fmt.Fprintf(&b, " (action %s)", p.Action)
		}
		b.WriteString(": ")
	}
	switch p.What {
	case ProblemAction:
		fmt.Fprintf(&b, "no implementation of action %q: no component, built-in or Go action provides it", p.Name)
	case ProblemTool:
		fmt.Fprintf(&b, "calls the %s tool, which no component provides", p.Name)
	case ProblemNoModel:
		b.WriteString("calls a model and none is given: the action names no model and the components no default one")
	case ProblemModel:
		fmt.Fprintf(&b, "model %s: %v", p.Name, p.Err)
	case ProblemMCP:
		b.WriteString(p.Err.Error())
	default:
		if p.Err != nil {
			b.WriteString(p.Err.Error())
		} else {
			fmt.Fprintf(&b, "%s %s", p.What, p.Component)
		}
	}
	return b.String()
}

// Unwrap returns the cause.
func (p *Problem) Unwrap() error { return p.Err }

// CheckError is what Service.Check found: every problem, in the order
// found (components and their resources first, then the plan's nodes in
// order, each subworkflow's after its parent's).
type CheckError struct {
	// Workflow is the workflow's name.
	Workflow string
	// Problems are the problems, at least one.
	Problems []Problem
}

// Error lists the problems, one a line.
func (e *CheckError) Error() string {
	lines := make([]string, len(e.Problems))
	for i := range e.Problems {
		lines[i] = e.Problems[i].Error()
	}
	if len(lines) == 1 {
		return fmt.Sprintf("workflow %s cannot run: %s", e.Workflow, lines[0])
	}
	return fmt.Sprintf("workflow %s cannot run (%d problems):\n%s", e.Workflow, len(lines), strings.Join(lines, "\n"))
}

// Is reports the invalid-input kind (engine.KindOf): the run's components
// do not fit its workflow.
func (e *CheckError) Is(target error) bool { return target == engine.ErrInvalidInput }

// Unwrap returns the problems, for errors.Is and errors.As.
func (e *CheckError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i := range e.Problems {
		out[i] = &e.Problems[i]
	}
	return out
}

// Check looks, before a run, at what Start or Run of req would need and
// reports every problem it finds as one *CheckError: the components that
// do not load, their resources that are missing (components that are a
// component.Checker), every model the plan's LLM actions name (or the
// default one they use) that cannot be opened, the components' default
// model when it cannot be opened, and every action and tool
// the plan's nodes call that the runtime lacks, each with the node's
// position. It builds the runtime of req's components as Start would, and
// keeps it for the run that follows (the models it opened are the ones
// the run uses); it runs nothing and calls no model. Actions a component
// answers in place of the source's bindings (stubs) are not checked
// further. Only req's Workflow, Components and ContextTokens are read.
//
// An error that is not a *CheckError is Check's own failure (the
// Service closed, a context cancelled).
func (s *Service) Check(ctx context.Context, req StartRequest) error {
	wf := req.Workflow
	if wf == nil || wf.Plan == nil {
		return errors.New("service: Check needs an opened workflow")
	}
	rt, err := s.runtime(ctx, &Spec{Components: req.Components, ContextTokens: req.ContextTokens})
	if err != nil {
		var ce *component.Error
		if !errors.As(err, &ce) {
			return err
		}
		return &CheckError{Workflow: wf.Name, Problems: []Problem{{What: ProblemComponent, Kind: problemKind(err), Component: ce.ID, Err: err}}}
	}
	defer s.release(rt)
	specs := rt.set.Specs()
	c := &checker{rt: rt, seen: map[string]bool{}, servers: MCPServerNames(specs), tools: rt.binder.Tools.Names()}
	for i, x := range rt.set.Components() {
		if ch, ok := x.(component.Checker); ok {
			if err := ch.Check(ctx); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				c.add(Problem{What: ProblemResource, Component: specs[i].ID, Err: err})
			}
		}
	}
	c.plan(wf.Plan, "")
	if def := rt.binder.Default; def != "" {
		// The default model, even when no action uses it: a runtime
		// whose default does not open is wrong. (Found already, with a
		// node, when one uses it.)
		if _, err := rt.binder.Model(def); err != nil {
			c.add(Problem{What: ProblemModel, Name: def, Err: err})
		}
	}
	if len(c.problems) == 0 {
		return nil
	}
	return &CheckError{Workflow: wf.Name, Problems: c.problems}
}

// checker collects the problems of a plan against a runtime.
type checker struct {
	rt       *runtime
	seen     map[string]bool // problems found already, by what they name
	plans    map[*flow.Plan]bool
	problems []Problem
	// servers are the names of the run's MCP servers, tools the
	// qualified names of the run's tools.
	servers, tools []string
}

// add records p once per what it names.
func (c *checker) add(p Problem) {
	var key string
	switch p.What {
	case ProblemModel:
		key = "model\x00" + p.Name
	case ProblemNoModel:
		key = "no_model"
	case ProblemTool:
		key = "tool\x00" + p.Name
	case ProblemAction:
		key = "action\x00" + p.Name + "\x00" + p.Pos.String()
	case ProblemMCP:
		key = "mcp\x00" + p.Pos.String() + "\x00" + p.Err.Error()
	default:
		key = string(p.What) + "\x00" + p.Component
	}
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	if p.Kind == "" {
		p.Kind = problemKind(p.Err)
	}
	c.problems = append(c.problems, p)
}

// problemKind is the engine's kind of a problem's cause: invalid input
// unless the cause says otherwise.
func problemKind(err error) engine.Kind {
	if k := engine.KindOf(err); err != nil && k != engine.KindInternal {
		return k
	}
	return engine.KindInvalidInput
}

// plan checks the nodes of p, then those of its subworkflows, each plan
// once; prefix is the path of the WORKFLOW node p runs in.
func (c *checker) plan(p *flow.Plan, prefix string) {
	if c.plans == nil {
		c.plans = map[*flow.Plan]bool{}
	}
	if c.plans[p] {
		return
	}
	c.plans[p] = true
	for _, pn := range p.Nodes {
		c.node(p, pn, prefix+pn.Name)
	}
	for _, pn := range p.Nodes {
		if pn.Sub != nil {
			c.plan(pn.Sub, prefix+pn.Name+"/")
		}
	}
}

// node checks one node as the engine resolves its action (see
// engine's runState.resolve): a registered action wins over a binding.
func (c *checker) node(p *flow.Plan, pn *flow.PlanNode, path string) {
	n := pn.Node
	if n.Type == flow.Subflow || (n.Action == "" && n.Type == flow.Human) {
		return
	}
	b := p.Workflow.Binding(n.Action)
	name := n.Action
	if name == "" {
		name = pn.Name
		if b == nil && n.Type != flow.Function {
			b = &flow.Binding{Name: pn.Name, Type: n.Type, Config: n.Config, ConfigPos: n.ConfigPos, Pos: n.Pos}
		}
	}
	at := Problem{Node: path, Pos: n.Pos, Action: n.Action}
	if c.rt.reg.Has(name) {
		if b == nil && n.Type == flow.Tool {
			c.mcpInputs(pn, at, name)
		}
		return
	}
	if b == nil {
		if n.Type == flow.Tool && c.mcpTool(p, n, at, name, "") {
			return
		}
		at.Name = name
		at.What = ProblemAction
		if n.Type == flow.Tool {
			at.What = ProblemTool
		}
		c.add(at)
		return
	}
	binder := c.rt.binder
	hasTool := func(name string) bool {
		if binder.Tools == nil {
			return false
		}
		_, ok := binder.Tools.Get(name)
		return ok
	}
	switch b.Type {
	case flow.LLM:
		spec := b.Config["model"].Str()
		if spec == "" {
			spec = binder.Default
		}
		if spec == "" {
			at.What = ProblemNoModel
			c.add(at)
		} else if _, err := binder.Model(spec); err != nil {
			at.What, at.Name, at.Err = ProblemModel, spec, err
			c.add(at)
		}
		for _, t := range b.Config["tools"].List() {
			if t.Kind() == flow.KindString && !hasTool(t.Str()) && !c.mcpTool(p, n, at, t.Str(), b.Name) {
				at.What, at.Name, at.Err = ProblemTool, t.Str(), nil
				c.add(at)
			}
		}
	case flow.Tool:
		if _, isHTTP := b.Config["url"]; isHTTP {
			return
		}
		t := b.Config["tool"]
		if t.Kind() != flow.KindString || t.Str() == "" {
			return
		}
		if hasTool(t.Str()) {
			c.mcpInputs(pn, at, t.Str())
			return
		}
		if !c.mcpTool(p, n, at, t.Str(), b.Name) {
			at.What, at.Name = ProblemTool, t.Str()
			c.add(at)
		}
	}
}

// mcpTool reports a tool name of the source, server__tool, that the
// run's MCP servers do not answer, at the position the name is written
// (on node n, or in the binding called action); false when name is no
// MCP tool name, or one the run has.
func (c *checker) mcpTool(p *flow.Plan, n *flow.Node, at Problem, name, action string) bool {
	e := mcpCheck(name, c.servers, c.tools)
	if e == nil {
		return false
	}
	at.What, at.Name, at.Err, at.Kind = ProblemMCP, name, e, engine.KindInvalidInput
	if at.Action == name {
		at.Action = "" // a TOOL node calling the tool: said once
	}
	if pos, ok := toolRefPos(p.Workflow, name, n.Name, action); ok {
		at.Pos = pos
	}
	c.add(at)
	return true
}

// mcpInputs checks the inputs of a TOOL node calling the tool called name
// against its input schema, when it is a tool of one of the run's MCP
// servers.
func (c *checker) mcpInputs(pn *flow.PlanNode, at Problem, name string) {
	srv, tn, ok := strings.Cut(name, "__")
	if !ok || !slices.Contains(c.servers, srv) {
		return
	}
	t, ok := c.rt.binder.Tools.Get(name)
	if !ok {
		return
	}
	if at.Action == name {
		at.Action = ""
	}
	for _, sp := range checkInputs(pn, t.Def.Parameters) {
		q := at
		q.What, q.Name, q.Pos, q.Kind = ProblemMCP, name, sp.pos, engine.KindInvalidInput
		q.Err = &MCPToolError{Tool: name, Server: srv, Name: tn, Reason: sp.reason, Schema: sp.path}
		c.add(q)
	}
}

// toolRefPos is where the tool name is written: on the node called node,
// else in the binding called action.
func toolRefPos(w *flow.Workflow, name, node, action string) (flow.Pos, bool) {
	for _, r := range w.ToolRefs {
		if r.Name == name && r.Node == node && node != "" {
			return r.Pos, true
		}
	}
	for _, r := range w.ToolRefs {
		if r.Name == name && r.Node == "" && r.Action == action && action != "" {
			return r.Pos, true
		}
	}
	return flow.Pos{}, false
}
