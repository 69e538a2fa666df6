// Package flow is weft's intermediate representation (IR): the one form that
// every front-end (the .wf language, ollama-workflows JSON, the typed Go API)
// produces and that the engine runs.
//
// A Workflow is plain data: parameters, variables, slots, nodes, edges, the
// initial node, the finals and the limits, with expressions as unresolved
// trees (Expr). Compile checks a Workflow statically (unknown names, type
// errors, enum literals, routing that misses enum values, unreachable nodes
// and finals, unbounded cycles, parallel writers without a reducer) and turns
// it into a Plan: every name resolved to a state cell, every expression
// compiled to closures. The engine executes Plans and nothing else.
//
// flow does no I/O and imports nothing else of weft.
package flow

import (
	"math"
	"time"
)

// InputText is the name of the workflow input: the text a run is started
// with. It is a String parameter of every workflow, and the initial node
// receives it as an input.
const InputText = "input_text"

// Workflow is a workflow definition as a front-end produced it.
type Workflow struct {
	Name        string
	Description string
	Model       string // default model of the workflow's LLM actions, e.g. "ollama:llama3.1"; "" for none
	// ContextTokens is the default context window, in tokens, of the
	// workflow's LLM actions (context_tokens; Ollama's num_ctx); 0 for none.
	ContextTokens int
	Pos           Pos
	Params        []*Var   // run parameters, set by the caller (input_text is implicit)
	Vars          []*Var   // variables with initial values
	Slots         []*Var   // explicitly declared slots; others are declared by overrides
	Nodes         []*Node  // in declaration order
	Edges         []*Edge  // in declaration order: routing tries them in this order
	Initial       string   // the first node
	InitialPos    Pos      // where Initial was written
	Finals        []string // nodes that end the run once they have run
	FinalsPos     []Pos    // where each final was written (may be shorter)
	Limits        Limits
	Bindings      []*Binding // actions bound to implementations in the source (no Go code)
	// MCPServers are the MCP servers the source declares (`mcp NAME
	// { ... }`), every one of the module, as Bindings are.
	MCPServers []*MCPServer
	// ToolRefs are the tool names the source writes in the tools of the
	// workflow's nodes and of the module's bindings, where each is
	// written: the static checks of MCP tools report at them.
	ToolRefs []ToolRef
}

// MCPServer is an MCP server declared in the source: the config of a
// tool.mcp component (docs/mcp.md), whose tools are named NAME__TOOL.
type MCPServer struct {
	Name string
	// Config holds the fields as written (command, args, env, dir, url,
	// headers, timeout, max_restarts, max_inline), literal values; a
	// secret is the object {env: "VARIABLE"}.
	Config    map[string]Value
	ConfigPos map[string]Pos // where each field was written
	Pos       Pos            // the declaration's keyword
}

// ToolRef is a tool name written in the source: an element of an LLM
// action's `tools` or a TOOL node's or action's `tool`.
type ToolRef struct {
	Name string
	Pos  Pos    // the name's string literal
	Node string // the node it is written on, or ""
	// Action is the binding it is written in, or "".
	Action string
}

// Var declares a parameter, variable or slot.
type Var struct {
	Name    string
	Type    Type
	Default Expr       // initial value; nil means null (or the caller's value, for a parameter)
	Reducer ReducerRef // how writes combine with the current value: the zero value replaces (see ParseReducer)
	Pos     Pos
}

// NodeType says how a node is carried out.
type NodeType string

// The node types. FUNCTION, LLM, HUMAN and TOOL nodes call an action by
// name; WORKFLOW nodes run a subworkflow; END nodes do nothing and are
// always finals.
const (
	Function NodeType = "FUNCTION"
	LLM      NodeType = "LLM"
	Human    NodeType = "HUMAN"
	Tool     NodeType = "TOOL"
	Subflow  NodeType = "WORKFLOW"
	End      NodeType = "END"
)

// Node is one step of a workflow.
type Node struct {
	Name        string
	Type        NodeType
	Action      string // action name, looked up in the engine's Registry
	Description string
	Pos         Pos
	Inputs      []*Input
	Outputs     []*Field
	Set         []*Assign        // variable writes run after the node succeeds; its outputs are in scope
	Config      map[string]Value // implementation settings written on the node (prompt, model, question, ...)
	ConfigPos   map[string]Pos   // where each Config entry was written
	Retry       *RetryPolicy     // nil: one attempt
	Timeout     time.Duration    // per attempt; 0: none
	Map         Expr             // if set, the action runs once per element of this list, concurrently
	As          string           // the name of the element inside Inputs when Map is set (default "item")
	Parallelism int              // bound on concurrent Map calls; 0 means 8
	Subflow     *Workflow        // for WORKFLOW nodes
}

// Input is one named input of a node and the expression that computes it.
type Input struct {
	Name string
	Expr Expr
	Pos  Pos
}

// Field is a named, typed output of a node.
type Field struct {
	Name string
	Type Type
	Pos  Pos
}

// Assign writes the value of Expr to the variable (or slot) Name.
type Assign struct {
	Name string
	Expr Expr
	Pos  Pos
}

// RetryPolicy retries a failing node with exponential backoff.
type RetryPolicy struct {
	MaxAttempts int           // total attempts, including the first; <= 1 means no retry
	Backoff     time.Duration // delay before the second attempt
	Factor      float64       // multiplier per further attempt; 0 means 2
	MaxBackoff  time.Duration // cap on the delay; 0 means none
}

// Delay returns the wait before attempt n (n >= 2). Without a MaxBackoff the
// delay still stops growing at the longest time.Duration.
func (r *RetryPolicy) Delay(n int) time.Duration {
	if r == nil || n < 2 {
		return 0
	}
	f := r.Factor
	if f == 0 {
		f = 2
	}
	limit := float64(math.MaxInt64)
	if r.MaxBackoff > 0 {
		limit = float64(r.MaxBackoff)
	}
	d := float64(r.Backoff)
	for i := 2; i < n && d < limit; i++ {
		d *= f
	}
	if d >= limit {
		// Converting a float64 beyond the int64 range is undefined.
		if r.MaxBackoff > 0 {
			return r.MaxBackoff
		}
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// Edge is a possible transition from one node to the next.
type Edge struct {
	From      string
	To        []string // one target, or several for a parallel fan-out
	Join      string   // for a fan-out: the node where the branches meet
	Cond      Expr     // nil: always taken (the default edge)
	Updates   []*Assign
	Overrides []*Assign // slot values set when the edge is taken
	OnError   bool      // taken only when From fails; `error` holds the message
	Pos       Pos
	ToPos     []Pos // where each target was written (may be shorter)
}

// Limits bound a run.
type Limits struct {
	MaxSteps int           // node executions; 0 means DefaultMaxSteps
	MaxTime  time.Duration // wall time, enforced preemptively; 0 means none
}

// DefaultMaxSteps bounds runs whose workflow sets no max_steps.
const DefaultMaxSteps = 10000

// Binding binds an action name to an implementation given in the source
// rather than in Go: an LLM prompt, a question to a person, an HTTP call.
// The engine's Registry decides how each Type is carried out.
type Binding struct {
	Name      string
	Type      NodeType
	Config    map[string]Value
	ConfigPos map[string]Pos
	Pos       Pos
}

// Node returns the node called name, or nil.
func (w *Workflow) Node(name string) *Node {
	for _, n := range w.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Binding returns the binding of the action called name, or nil.
func (w *Workflow) Binding(name string) *Binding {
	for _, b := range w.Bindings {
		if b.Name == name {
			return b
		}
	}
	return nil
}
