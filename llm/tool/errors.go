package tool

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weftlang/weft/llm"
)

// SchemaError reports an argument type that has no JSON Schema.
type SchemaError struct {
	Type   string // the Go argument type
	Field  string // the field concerned, as a JSON path; "" for the type itself
	Reason string
}

// Error names the type, the field and the reason.
func (e *SchemaError) Error() string {
	s := "tool: schema of " + e.Type
	if e.Field != "" {
		s += ": field " + strconv.Quote(e.Field)
	}
	return s + ": " + e.Reason
}

// InvalidToolError reports a tool that cannot be registered or made.
type InvalidToolError struct {
	Name   string
	Reason string
}

// Error names the tool and the reason.
func (e *InvalidToolError) Error() string {
	return fmt.Sprintf("tool: invalid tool %q: %s", e.Name, e.Reason)
}

// DuplicateError reports a second tool of the same name in a Registry.
type DuplicateError struct {
	Name string
}

// Error names the tool.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("tool: a tool named %q is already registered", e.Name)
}

// Problem is one thing wrong with a call's arguments.
type Problem struct {
	Field   string // JSON path of the field, e.g. "items[2].qty"; "" for the whole document
	Message string
}

// String names the field and the problem.
func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return "field " + strconv.Quote(p.Field) + ": " + p.Message
}

// ArgsError reports arguments that do not fit a tool's parameters: every
// problem found (up to ten), each naming its field.
type ArgsError struct {
	Tool     string
	Problems []Problem
}

// Error lists the problems.
func (e *ArgsError) Error() string {
	ps := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		ps[i] = p.String()
	}
	return fmt.Sprintf("invalid arguments for tool %q: %s", e.Tool, strings.Join(ps, "; "))
}

// UnknownToolError reports a call of a tool that is not in the registry.
type UnknownToolError struct {
	Name  string
	Known []string // the registered tools, sorted
}

// Error names the tool and the known ones.
func (e *UnknownToolError) Error() string {
	known := "none"
	if len(e.Known) > 0 {
		known = quoteAll(e.Known)
	}
	return fmt.Sprintf("unknown tool %q (the tools are %s)", e.Name, known)
}

// PanicError is a panic recovered from a tool. Its message, which the
// model sees, holds the panic value but not the stack.
type PanicError struct {
	Tool  string
	Value any    // what the tool panicked with
	Stack []byte // the stack of the panicking goroutine
}

// Error names the tool and the panic value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("tool %q panicked: %v", e.Tool, e.Value)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// ResultError reports a tool result that cannot be written as JSON.
type ResultError struct {
	Tool string
	Err  error
}

// Error names the tool and the cause.
func (e *ResultError) Error() string {
	return fmt.Sprintf("tool %q: cannot encode its result as JSON: %v", e.Tool, e.Err)
}

// Unwrap returns the cause.
func (e *ResultError) Unwrap() error { return e.Err }

// LoopError reports a loop that stopped before the model answered: the
// model call failed, or ctx was cancelled. errors.As finds the cause (an
// *llm.Error, context.Canceled, ...).
type LoopError struct {
	Step     int           // the model call that failed, from 1; or the last step when ctx ended
	Messages []llm.Message // the conversation so far
	Usage    llm.Usage     // summed over the calls that succeeded
	Err      error
}

// Error names the step and the cause.
func (e *LoopError) Error() string {
	return fmt.Sprintf("tool loop: step %d: %v", e.Step, e.Err)
}

// Unwrap returns the cause.
func (e *LoopError) Unwrap() error { return e.Err }

// StepLimitError reports a model that still asked for tools after
// MaxSteps model calls.
type StepLimitError struct {
	MaxSteps int
	// Messages is the conversation so far: the request's messages and
	// every completed step (assistant message and tool results).
	Messages []llm.Message
	// Last is the model's last reply, whose tool calls were not run.
	Last  *llm.Response
	Usage llm.Usage // summed over all calls
}

// Error names the bound.
func (e *StepLimitError) Error() string {
	return fmt.Sprintf("tool loop: the model still calls tools after %d steps", e.MaxSteps)
}

// ConfigError reports a Loop called without a model or a request.
type ConfigError struct {
	Reason string
}

// Error gives the reason.
func (e *ConfigError) Error() string { return "tool loop: " + e.Reason }

// NotAllowedError reports an HTTP request, or a redirect, to a URL that
// HTTPOptions.Allow refuses.
type NotAllowedError struct {
	URL string
}

// Error names the URL.
func (e *NotAllowedError) Error() string {
	return fmt.Sprintf("requests to %s are not allowed", e.URL)
}

// RedirectLimitError reports an HTTP request that was redirected too often.
type RedirectLimitError struct {
	Max int
}

// Error names the bound.
func (e *RedirectLimitError) Error() string {
	return fmt.Sprintf("stopped after %d redirects", e.Max)
}

// HTTPError reports an HTTP request of the http_request tool that got no
// response: a bad URL, a refused connection, a timeout, a refused
// redirect.
type HTTPError struct {
	Method  string
	URL     string
	Timeout time.Duration // the timeout, when it expired; else 0
	Err     error
}

// Error names the request and the cause.
func (e *HTTPError) Error() string {
	if e.Timeout > 0 {
		return fmt.Sprintf("%s %s: timed out after %v", e.Method, e.URL, e.Timeout)
	}
	return fmt.Sprintf("%s %s: %v", e.Method, e.URL, e.Err)
}

// Unwrap returns the cause.
func (e *HTTPError) Unwrap() error { return e.Err }
