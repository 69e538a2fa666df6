// Package action holds weft's built-in actions and the binder that turns
// actions bound in a workflow's source (flow.Binding) into implementations.
//
// Nothing here is global: Register adds the built-ins to a Registry the
// caller owns.
package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// AskUser is the name of the built-in human action: it suspends the run
// with its "question" input until a person answers.
const AskUser = "ask_user"

// Pass is the name of the built-in action that sets a node's outputs from
// its inputs, in order: the first output takes the first input, and so on
// (a node may not name an input and an output alike). It is for nodes that
// only route, carry an edge's updates, or gather values into a final
// node's outputs. Extra inputs are ignored; too few is an error.
const Pass = "pass"

// OutputsFromInputs reports whether the built-in action called name sets
// a node's outputs from its inputs, in order (Pass): the compiler's
// flow.CompileOptions.OutputsFromInputs, so that a type mismatch through
// pass is found before a run.
func OutputsFromInputs(name string) bool { return name == Pass }

// Register adds the built-in actions (ask_user, pass) to reg. A name reg
// already holds is left alone, so a caller's own implementation wins.
func Register(reg *engine.Registry) {
	if !reg.Has(AskUser) {
		reg.Replace(AskUser, engine.Ask())
	}
	if !reg.Has(Pass) {
		reg.Replace(Pass, engine.ActionFunc(pass))
	}
}

// pass sets the outputs from the inputs, in order.
func pass(_ context.Context, c *engine.Call) error {
	outs := c.Node.Outputs
	if len(c.Inputs) < len(outs) {
		return fmt.Errorf("pass: node %s has %d outputs but only %d inputs to set them from, in order", c.Node.Name, len(outs), len(c.Inputs))
	}
	for i, o := range outs {
		cv, err := flow.Conform(c.Inputs[i], o.Type)
		if err != nil {
			return fmt.Errorf("pass: node %s, output %s (from input %s): %w", c.Node.Name, o.Name, c.Node.Inputs[i].Name, err)
		}
		c.Outputs[i] = cv
	}
	return nil
}

// ErrNoProvider is matched (errors.Is) by the error of an LLM binding
// made with no model provider configured: Bind, or a Binder with no Open,
// or one whose binding names no model and that has no Default. Give the
// Binder a model, register a Go implementation of the action, or stub it.
var ErrNoProvider = errors.New("no LLM provider is configured")

// Bind makes the implementation of an action bound in source. HUMAN
// bindings ask their question; HTTP bindings (type HTTP, or TOOL with a
// url) send their request with a shared client (see HTTPAction); LLM
// and other TOOL bindings need a provider and fail with a clear error
// until one is configured.
func Bind(b *flow.Binding) (engine.Action, error) {
	if IsHTTP(b) {
		return NewHTTP(b, nil)
	}
	switch b.Type {
	case flow.Human:
		return engine.Ask(), nil
	case flow.LLM:
		return nil, fmt.Errorf("LLM action %s: %w", b.Name, ErrNoProvider)
	case flow.Tool:
		return nil, fmt.Errorf("tool action %s: no tool provider is configured", b.Name)
	}
	return nil, fmt.Errorf("action %s: cannot bind a %s action from source", b.Name, b.Type)
}
