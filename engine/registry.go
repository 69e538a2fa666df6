package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weftlang/weft/flow"
)

// Action carries out a node. Run reads the inputs from c and writes the
// outputs into it. It returns an *Interrupt to wait for a person, or any
// other error to fail the attempt (the node's retry policy decides whether
// another follows). Run must honour ctx: the node's timeout and the run's
// max time cancel it. An Action may be called concurrently by parallel
// branches and map elements.
type Action interface {
	Run(ctx context.Context, c *Call) error
}

// ActionFunc adapts a function to Action.
type ActionFunc func(ctx context.Context, c *Call) error

// Run calls f(ctx, c).
func (f ActionFunc) Run(ctx context.Context, c *Call) error { return f(ctx, c) }

// Func adapts a function over named values to Action: it receives the
// node's inputs by name and returns its outputs by name. Outputs it leaves
// out are null, which fails the node unless the output is declared Any.
func Func(fn func(ctx context.Context, in map[string]flow.Value) (map[string]flow.Value, error)) Action {
	return ActionFunc(func(ctx context.Context, c *Call) error {
		out, err := fn(ctx, c.InputMap())
		if err != nil {
			return err
		}
		return c.SetOutputs(out)
	})
}

// Call is one invocation of an action: the node, its resolved inputs, and
// room for its outputs.
type Call struct {
	Node    *flow.PlanNode
	Action  string
	Step    int
	Item    int                   // 1-based element of a map node, 0 otherwise
	Attempt int                   // 1-based
	Inputs  []flow.Value          // parallel to Node.Inputs; valid only during Run (copy to keep)
	Outputs []flow.Value          // parallel to Node.Outputs; the action fills it; valid only during Run
	Config  map[string]flow.Value // the binding's settings overlaid with the node's
	// Key identifies this step of this run for the side effects the
	// action causes: "THREAD/RUN-ID/STEP", with "/ITEM" for a map
	// element, when the run is kept in a thread (Threads), and empty
	// otherwise; RUN is the run's number and ID its random id, so no two
	// runs share a key, even of a thread deleted and made again or of a
	// fresh store. A step that was in flight when its process died runs
	// again with the same Key, so an action that passes it on (as an
	// Idempotency-Key header, a unique column) makes its effect happen
	// once.
	Key     string
	emit    func(kind string, data flow.Value)
	notices []Notice // of this attempt (Notice), and a fallback's
	name    string   // the node's path in the run (Task.Name); "" for Node.Name
	framed  bool     // a subworkflow frame's deadline applies: the attempt is preempted at it
}

// nodeName returns the node's path in the run ("outer/inner" in a
// subworkflow).
func (c *Call) nodeName() string {
	if c.name != "" {
		return c.name
	}
	return c.Node.Name
}

// Input returns the input called name, or null.
func (c *Call) Input(name string) flow.Value {
	for i, in := range c.Node.Inputs {
		if in.Name == name {
			return c.Inputs[i]
		}
	}
	return flow.Null
}

// InputMap returns the inputs by name.
func (c *Call) InputMap() map[string]flow.Value {
	m := make(map[string]flow.Value, len(c.Inputs))
	for i, in := range c.Node.Inputs {
		m[in.Name] = c.Inputs[i]
	}
	return m
}

// SetOutput sets the output called name. An undeclared name is an
// *OutputError.
func (c *Call) SetOutput(name string, v flow.Value) error {
	for i, o := range c.Node.Outputs {
		if o.Name == name {
			c.Outputs[i] = v
			return nil
		}
	}
	return &OutputError{Node: c.Node.Name, Field: name, Err: fmt.Errorf("not a declared output (declared: %v)", outputNames(c.Node))}
}

// SetOutputs sets several outputs by name, in sorted order, stopping at the
// first undeclared name.
func (c *Call) SetOutputs(out map[string]flow.Value) error {
	for _, k := range slices.Sorted(maps.Keys(out)) {
		if err := c.SetOutput(k, out[k]); err != nil {
			return err
		}
	}
	return nil
}

// Observed reports whether anything observes the run's events. When it is
// false Emit drops what it is given, so an action can skip building the
// data of its events.
func (c *Call) Observed() bool { return c.emit != nil }

// Emit reports progress (a token, a tool call, a log line) as an
// ActionEvent in the run's event stream.
func (c *Call) Emit(kind string, data flow.Value) {
	if c.emit != nil {
		c.emit(kind, data)
	}
}

// Registry maps action names to implementations. It is an explicit value
// handed to a Runner: weft keeps no global registry. A Registry is safe
// for concurrent lookups once it is no longer being changed.
type Registry struct {
	actions map[string]Action
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{actions: map[string]Action{}} }

// Register adds an action; registering a name twice is an error.
func (r *Registry) Register(name string, a Action) error {
	if name == "" || a == nil {
		return fmt.Errorf("engine: Register needs a name and an action")
	}
	if _, dup := r.actions[name]; dup {
		return fmt.Errorf("engine: action %q is already registered", name)
	}
	r.actions[name] = a
	return nil
}

// Replace adds or replaces an action.
func (r *Registry) Replace(name string, a Action) { r.actions[name] = a }

// Lookup returns the action called name.
func (r *Registry) Lookup(name string) (Action, bool) {
	if r == nil {
		return nil, false
	}
	a, ok := r.actions[name]
	return a, ok
}

// Has reports whether name is registered; it fits flow.CompileOptions.HasAction.
func (r *Registry) Has(name string) bool { _, ok := r.Lookup(name); return ok }

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(r.actions))
}

// Ask is the built-in human action (register it as "ask_user"): it
// suspends the run with the node's "question" input (or its configured
// question) and completes when Resume brings the answer.
func Ask() Action {
	return ActionFunc(func(_ context.Context, c *Call) error {
		q := c.Input("question")
		if q.IsNull() {
			q = c.Config["question"]
		}
		return &Interrupt{Question: q}
	})
}
