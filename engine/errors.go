package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weftlang/weft/flow"
)

// NodeError is a node that failed after its retries, with no error edge to
// take. errors.As finds it in a run's error; Unwrap gives the cause.
type NodeError struct {
	Node string
	Step int
	Item int // 1-based element of a map node, 0 otherwise
	Err  error
}

// Error names the node, the step and the cause.
func (e *NodeError) Error() string {
	return fmt.Sprintf("node %s%s (step %d) failed: %v", e.Node, itemSuffix(e.Item), e.Step, e.Err)
}

// Unwrap returns the cause.
func (e *NodeError) Unwrap() error { return e.Err }

// ErrMisuse is found, by errors.Is, in an action error that says the call
// itself is wrong rather than that it failed: a model that does not
// exist, a request field the server refuses, a replayed run asking what
// was never recorded. Such an error fails its node even when the node
// asks for a fallback (`fallback: {...}`), since every later call would
// fall back too and the workflow would never do what it says. Mark an
// error with Misuse.
var ErrMisuse = errors.New("engine: the call is wrong, not failed")

// ErrStale is what Runner.Resume returns for a Result that can no longer
// be resumed: an earlier or concurrent Resume of it (or of a copy of it)
// took the run, which has moved on. Resume the Result that call returned
// instead. errors.Is finds it.
var ErrStale = errors.New("engine: the result was resumed already")

// Misuse marks err as a mistake in the call (see ErrMisuse); its text is
// err's, and errors.Is and errors.As still find what err wraps. A nil err
// stays nil.
func Misuse(err error) error {
	if err == nil {
		return nil
	}
	return misuseError{err}
}

type misuseError struct{ err error }

func (e misuseError) Error() string        { return e.err.Error() }
func (e misuseError) Unwrap() error        { return e.err }
func (e misuseError) Is(target error) bool { return target == ErrMisuse }

// RouteTry is one edge that routing tried and found false.
type RouteTry struct {
	To     string // target node(s)
	Cond   string // the condition, in .wf syntax
	Values string // what it compared: "relevance = \"MAYBE\", rephraseCount = 1"
}

// NoRouteError is a run that stopped because no outgoing edge of a node
// matched. It lists every condition tried and the values it compared.
type NoRouteError struct {
	Node  string
	Step  int
	Tried []RouteTry
}

// Error names the node and every comparison that failed.
func (e *NoRouteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no edge from %s matched (step %d)", e.Node, e.Step)
	for i, t := range e.Tried {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "to %s when %s, but %s", t.To, t.Cond, t.Values)
	}
	return b.String()
}

// LimitError is a run stopped by a limit: max steps or max time.
type LimitError struct {
	Limit string // "max_steps" or "max_time"
	Value string // the limit's value, e.g. "10000" or "30s"
	Node  string // the node running or about to run when it struck
	Step  int
}

// Error names the limit, its value and where it struck.
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s (%s) exceeded at node %s, step %d", e.Limit, e.Value, e.Node, e.Step)
}

// OutputError is an action result that does not fit the node's declared
// outputs: a missing field, a value of the wrong type, an Enum value outside
// the Enum.
type OutputError struct {
	Node  string
	Field string
	Err   error // a *flow.TypeError, or a message about a missing or unknown field
}

// Error names the node, the field and the problem.
func (e *OutputError) Error() string {
	return fmt.Sprintf("node %s, output %s: %v", e.Node, e.Field, e.Err)
}

// Unwrap returns the cause.
func (e *OutputError) Unwrap() error { return e.Err }

// InputError is a run started with a bad parameter, or a bad starting
// value or update of a variable (RunOptions).
type InputError struct {
	Param    string // the parameter's or variable's name
	Variable bool   // Param names a variable (RunOptions.Init or Update), not a parameter
	Err      error
}

// Error names the parameter or variable.
func (e *InputError) Error() string {
	if e.Variable {
		return fmt.Sprintf("variable %s: %v", e.Param, e.Err)
	}
	return fmt.Sprintf("parameter %s: %v", e.Param, e.Err)
}

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

// Interrupt is returned by an action (as its error) to suspend the run until
// a person answers: the run's status becomes Waiting, and Resume completes
// the node with the answer as its outputs. The action is not run again.
type Interrupt struct {
	Question flow.Value // what to show the person
}

// Error describes the interrupt.
func (e *Interrupt) Error() string { return "waiting for an answer: " + e.Question.Text() }

// UnknownActionError is a node whose action the Registry does not hold.
type UnknownActionError struct {
	Node, Action string
}

// Error names the node and the action.
func (e *UnknownActionError) Error() string {
	return fmt.Sprintf("node %s: no implementation for action %q (register it, bind it in the workflow, or stub it)", e.Node, e.Action)
}

func isInterrupt(err error) (*Interrupt, bool) {
	if err == nil {
		return nil, false
	}
	var in *Interrupt
	ok := errors.As(err, &in)
	return in, ok
}
