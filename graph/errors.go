package graph

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weftlang/weft/engine"
)

// RouteError is a routing function that returned a name it was not
// declared with in AddConditionalEdges. The engine reports it as the
// node's error: errors.As finds both the *engine.NodeError and this.
type RouteError struct {
	Node    string   // the node whose routing function it is (START for the entry)
	Route   string   // what the function returned
	Targets []string // what it may return
}

// Error names the node, the value and the declared targets.
func (e *RouteError) Error() string {
	return fmt.Sprintf("routing function of %s returned %s, which is not one of its targets (%s)", e.Node, strconv.Quote(e.Route), strings.Join(e.Targets, ", "))
}

// FieldError is a state value that does not convert between its Go field
// and a weft value: an integer that overflows a narrower Go type, a
// marshaller that fails, a value of the wrong kind behind an `any`.
type FieldError struct {
	Node  string // the node that read or wrote it; "" for the run's input or result
	Field string // the Go field name
	Err   error
}

// Error names the node and the field.
func (e *FieldError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("state field %s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("node %s, state field %s: %v", e.Node, e.Field, e.Err)
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// WaitingError is returned by Invoke when a node suspended the run with an
// *engine.Interrupt to wait for a person: Invoke runs to the end or fails,
// and cannot hand back a suspended run. Use Run to get the suspended
// *engine.Result.
type WaitingError struct {
	Pending []engine.Pending // the questions the run waits on
}

// Error names the nodes that wait.
func (e *WaitingError) Error() string {
	names := make([]string, len(e.Pending))
	for i, p := range e.Pending {
		names[i] = p.Node
	}
	return fmt.Sprintf("the run is waiting for an answer at %s", strings.Join(names, ", "))
}

// Is reports whether target is engine.ErrWaiting: a WaitingError is of
// engine.KindWaiting.
func (e *WaitingError) Is(target error) bool { return target == engine.ErrWaiting }
