package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// Kind classifies an engine error for programs: a server maps it to an
// HTTP status, a worker decides by it whether to retry, without matching
// text. KindOf finds it; errors.Is finds the matching sentinel (ErrWaiting
// for KindWaiting, ErrNotFound for KindNotFound, ...) in every error of
// this package that has a kind, through any wrapping. docs/ARCHITECTURE.md
// ("Error kinds") lists the status a server answers for each.
type Kind string

// The kinds of engine errors.
const (
	// KindWaiting is a call that needs answers the thread's run waits
	// for and did not get: a new run in a thread whose run waits, a
	// Resume without answers. Answer the questions.
	KindWaiting Kind = "waiting"
	// KindEnded is a call that needs a run that has not ended: a Resume
	// of a completed or failed run.
	KindEnded Kind = "ended"
	// KindNotFound is a thread, run, record or question that does not
	// exist (store.ErrNotFound too).
	KindNotFound Kind = "not_found"
	// KindConflict is a call that met another process's work: another
	// driver holds the thread's lease, appended first, or answered first
	// (ErrThreadAdvanced); a stale Result (ErrStale); a run that did not
	// finish. Reload the thread and decide again.
	KindConflict Kind = "conflict"
	// KindMismatch is a value that does not fit what it is for: a plan
	// other than the one the run started with (*PlanChangedError), a
	// thread of another workflow, an answer to a question that does not
	// wait, an action's outputs that do not fit the node's.
	KindMismatch Kind = "mismatch"
	// KindCancelled is a call or run stopped because its context was
	// cancelled (context.Canceled).
	KindCancelled Kind = "cancelled"
	// KindLimit is a run or node stopped by a limit: max_steps, max_time,
	// a node's timeout (*LimitError, *TimeoutError), or the caller's
	// deadline (context.DeadlineExceeded).
	KindLimit Kind = "limit"
	// KindInvalidInput is a call with an argument that cannot be used: a
	// bad parameter or variable value (*InputError), an answer of the
	// wrong type, answers without the question ids a run asking several
	// questions needs.
	KindInvalidInput Kind = "invalid_input"
	// KindInternal is everything else: a state that does not fit its plan
	// (*StateError), a store that failed, a workflow that found no route,
	// an action that panicked. KindOf returns it for any error without a
	// kind of its own.
	KindInternal Kind = "internal"
)

// Sentinels that errors.Is finds in an engine error of the matching Kind
// (ErrWaiting is KindWaiting's; see also ErrThreadAdvanced and ErrStale,
// which are of KindConflict).
var (
	ErrEnded        error = &kindSentinel{KindEnded, "engine: the run has ended"}
	ErrNotFound     error = &kindSentinel{KindNotFound, "engine: not found"}
	ErrConflict     error = &kindSentinel{KindConflict, "engine: another process's work on the thread"}
	ErrMismatch     error = &kindSentinel{KindMismatch, "engine: does not fit"}
	ErrCancelled    error = &kindSentinel{KindCancelled, "engine: cancelled"}
	ErrLimit        error = &kindSentinel{KindLimit, "engine: limit exceeded"}
	ErrInvalidInput error = &kindSentinel{KindInvalidInput, "engine: invalid input"}
	ErrInternal     error = &kindSentinel{KindInternal, "engine: internal error"}
)

// Sentinel returns the error errors.Is finds in an error of kind k, or
// nil for an unknown kind.
func (k Kind) Sentinel() error {
	switch k {
	case KindWaiting:
		return ErrWaiting
	case KindEnded:
		return ErrEnded
	case KindNotFound:
		return ErrNotFound
	case KindConflict:
		return ErrConflict
	case KindMismatch:
		return ErrMismatch
	case KindCancelled:
		return ErrCancelled
	case KindLimit:
		return ErrLimit
	case KindInvalidInput:
		return ErrInvalidInput
	case KindInternal:
		return ErrInternal
	}
	return nil
}

// kindSentinel is a sentinel error of a kind. A sentinel of a narrower
// meaning (ErrThreadAdvanced) matches its kind's sentinel (ErrConflict)
// too.
type kindSentinel struct {
	kind Kind
	msg  string
}

func (e *kindSentinel) Error() string { return e.msg }

func (e *kindSentinel) Is(target error) bool { return target == e.kind.Sentinel() }

func (e *kindSentinel) errorKind() Kind { return e.kind }

// kindError is an error of this package with a kind and only a message.
type kindError struct {
	kind Kind
	msg  string
}

func (e *kindError) Error() string          { return e.msg }
func (e *kindError) Is(target error) bool   { return target == e.kind.Sentinel() }
func (e *kindError) errorKind() Kind        { return e.kind }
func newKindError(k Kind, msg string) error { return &kindError{k, msg} }

// kinded is an error that knows its kind.
type kinded interface {
	error
	errorKind() Kind
}

// KindOf returns the kind of err: that of the first error in its chain
// that has one (an engine error, a store error, context.Canceled or
// context.DeadlineExceeded, or an error of another package whose Is
// method matches a kind's sentinel, such as graph's *WaitingError and
// ErrWaiting), KindInternal when none has, and "" for a nil err. Store errors map so: store.ErrNotFound is KindNotFound; a
// *store.ConflictError, store.ErrConflict (a *store.JobConflictError),
// store.ErrLeaseHeld and store.ErrLeaseLost are
// KindConflict; store.ErrInvalid is KindInvalidInput.
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	for e := range walk(err) {
		if k, ok := e.(kinded); ok {
			if k := k.errorKind(); k != "" {
				return k
			}
		}
		if k := foreignKind(e); k != "" {
			return k
		}
		if x, ok := e.(interface{ Is(error) bool }); ok {
			for _, k := range kinds {
				if x.Is(k.Sentinel()) {
					return k
				}
			}
		}
	}
	return KindInternal
}

// kinds lists every Kind, for KindOf to ask an error of another package
// which sentinel its Is method matches.
var kinds = [...]Kind{KindWaiting, KindEnded, KindNotFound, KindConflict, KindMismatch, KindCancelled, KindLimit, KindInvalidInput, KindInternal}

// foreignKind is the kind of one error of another package (not its
// chain), or "".
func foreignKind(err error) Kind {
	if _, ok := err.(*store.ConflictError); ok {
		return KindConflict
	}
	switch err {
	case context.Canceled, ErrRunCancelled:
		return KindCancelled
	case context.DeadlineExceeded:
		return KindLimit
	case store.ErrNotFound:
		return KindNotFound
	case store.ErrLeaseHeld, store.ErrLeaseLost, store.ErrConflict:
		return KindConflict
	case store.ErrInvalid:
		return KindInvalidInput
	}
	return ""
}

// walk yields err and every error it wraps, depth first, as errors.Is
// visits them.
func walk(err error) iter.Seq[error] {
	return func(yield func(error) bool) {
		var visit func(error) bool
		visit = func(e error) bool {
			for e != nil {
				if !yield(e) {
					return false
				}
				switch u := e.(type) {
				case interface{ Unwrap() error }:
					e = u.Unwrap()
				case interface{ Unwrap() []error }:
					for _, c := range u.Unwrap() {
						if !visit(c) {
							return false
						}
					}
					return true
				default:
					return true
				}
			}
			return true
		}
		visit(err)
	}
}

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

// Is reports whether target is the sentinel of the kind of the node's
// error (KindInternal for an error without one): errors.Is(err,
// ErrCancelled) holds for a node cancelled by its context.
func (e *NodeError) Is(target error) bool { return target == e.errorKind().Sentinel() }

func (e *NodeError) errorKind() Kind { return KindOf(e.Err) }

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
// It is of KindConflict: errors.Is(err, ErrConflict) holds too.
var ErrStale error = &kindSentinel{KindConflict, "engine: the result was resumed already"}

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

// LimitName names a limit of a run, as the .wf source spells it.
type LimitName string

// The limits of a run (flow.Limits).
const (
	LimitMaxSteps LimitName = "max_steps" // the most steps a run takes
	LimitMaxTime  LimitName = "max_time"  // the longest a run takes
)

// LimitError is a run stopped by a limit: max steps or max time. It is of
// KindLimit.
type LimitError struct {
	Limit LimitName // LimitMaxSteps or LimitMaxTime
	Value string    // the limit's value, e.g. "10000" or "30s"
	Node  string    // the node running or about to run when it struck
	Step  int
}

// Error names the limit, its value and where it struck.
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s (%s) exceeded at node %s, step %d", e.Limit, e.Value, e.Node, e.Step)
}

// Is reports whether target is ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

func (e *LimitError) errorKind() Kind { return KindLimit }

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

// Is reports whether target is ErrMismatch: an OutputError is of
// KindMismatch.
func (e *OutputError) Is(target error) bool { return target == ErrMismatch }

func (e *OutputError) errorKind() Kind { return KindMismatch }

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

// Is reports whether target is ErrInvalidInput: an InputError is of
// KindInvalidInput.
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }

func (e *InputError) errorKind() Kind { return KindInvalidInput }

// Interrupt is returned by an action (as its error) to suspend the run until
// a person answers: the run's status becomes Waiting, and Resume completes
// the node with the answer as its outputs. The action is not run again.
type Interrupt struct {
	Question flow.Value // what to show the person
}

// Error describes the interrupt.
func (e *Interrupt) Error() string { return "waiting for an answer: " + e.Question.Text() }

// Is reports whether target is ErrWaiting: an Interrupt is of
// KindWaiting.
func (e *Interrupt) Is(target error) bool { return target == ErrWaiting }

func (e *Interrupt) errorKind() Kind { return KindWaiting }

// UnknownActionError is a node whose action the Registry does not hold.
type UnknownActionError struct {
	Node, Action string
}

// Error names the node and the action.
func (e *UnknownActionError) Error() string {
	return fmt.Sprintf("node %s: no implementation for action %q (register it, bind it in the workflow, or stub it)", e.Node, e.Action)
}

// Is reports whether target is ErrInternal: a workflow whose action the
// process does not provide is of KindInternal.
func (e *UnknownActionError) Is(target error) bool { return target == ErrInternal }

func (e *UnknownActionError) errorKind() Kind { return KindInternal }

// Is reports whether target is ErrInternal: a workflow that found no
// route is of KindInternal.
func (e *NoRouteError) Is(target error) bool { return target == ErrInternal }

func (e *NoRouteError) errorKind() Kind { return KindInternal }

// The kinds of the error types declared in other files (kept here, so
// that every kind is decided in one place).

// Is reports whether target is ErrLimit: a node's timeout is of
// KindLimit.
func (e *TimeoutError) Is(target error) bool { return target == ErrLimit }

func (e *TimeoutError) errorKind() Kind { return KindLimit }

// Is reports whether target is ErrInternal: a panic is of KindInternal.
func (e *PanicError) Is(target error) bool { return target == ErrInternal }

func (e *PanicError) errorKind() Kind { return KindInternal }

// Is reports whether target is ErrInternal: a state that does not fit its
// plan is of KindInternal.
func (e *StateError) Is(target error) bool { return target == ErrInternal }

func (e *StateError) errorKind() Kind { return KindInternal }

// Is reports whether target is ErrMismatch: a run resumed with another
// plan is of KindMismatch.
func (e *PlanChangedError) Is(target error) bool { return target == ErrMismatch }

func (e *PlanChangedError) errorKind() Kind { return KindMismatch }

// A *CheckpointError is of the kind of the store's error: KindConflict
// when another process appended first or holds the thread's lease,
// KindInternal otherwise.
func (e *CheckpointError) errorKind() Kind { return KindOf(e.Err) }

func isInterrupt(err error) (*Interrupt, bool) {
	if err == nil {
		return nil, false
	}
	var in *Interrupt
	ok := errors.As(err, &in)
	return in, ok
}

// A *ThreadError is of its Kind; one without (a zero Kind) is of its
// cause's kind, or KindInternal.
func (e *ThreadError) errorKind() Kind {
	if e.Kind != "" || e.Err == nil {
		return cmp.Or(e.Kind, KindInternal)
	}
	return KindOf(e.Err)
}

// missingThread turns the store's ErrNotFound for a thread into a
// *ThreadError of KindNotFound (which errors.Is still finds
// store.ErrNotFound in); other errors are returned as they are.
func missingThread(threadID string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &ThreadError{Thread: threadID, Kind: KindNotFound, Detail: "does not exist", Err: err}
	}
	return err
}
