package tools

import (
	"fmt"
	"strconv"
)

// UnknownToolError reports a name of config.tools that is not a tool, or
// "ALL" given with other names.
type UnknownToolError struct {
	Index int    // position in config.tools; -1 when the name was not read from a list (Predefined)
	Name  string // the name as written
}

// Error names the tool and, for a list, its position.
func (e *UnknownToolError) Error() string {
	at := ""
	if e.Index >= 0 {
		at = " at config.tools[" + strconv.Itoa(e.Index) + "]"
	}
	if e.Name == "ALL" {
		return `tools: "ALL"` + at + ` must be the only name in config.tools`
	}
	return fmt.Sprintf("tools: unknown tool %q%s (known: browserless, jina, serper, duckduckgo, stock, scraper, or [\"ALL\"] alone)", e.Name, at)
}

// ArgsError reports tool-call arguments the tool cannot use: not a JSON
// object, a required argument missing, an argument of the wrong type or
// value.
type ArgsError struct {
	Tool   string // the tool's name
	Arg    string // the argument concerned; "" for the arguments as a whole
	Reason string
}

// Error names the tool, the argument and the reason.
func (e *ArgsError) Error() string {
	if e.Arg == "" {
		return fmt.Sprintf("tool %q: arguments: %s", e.Tool, e.Reason)
	}
	return fmt.Sprintf("tool %q: argument %q: %s", e.Tool, e.Arg, e.Reason)
}

// MethodError reports a custom HTTP tool whose method is not exactly GET,
// POST, PUT or DELETE. Its text starts with the reference's message,
// "Unsupported HTTP method".
type MethodError struct {
	Tool   string
	Method string
}

// Error names the method and the tool.
func (e *MethodError) Error() string {
	return fmt.Sprintf("Unsupported HTTP method %q in tool %q (GET, POST, PUT or DELETE)", e.Method, e.Tool)
}

// ConfigError reports a tool that lacks the key or token it needs.
type ConfigError struct {
	Tool   string
	Reason string
}

// Error names the tool and what it lacks.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("tool %q: %s", e.Tool, e.Reason)
}

// RequestError reports a request that got no complete response: a bad
// URL, a refused or dropped connection, a timeout, a cancelled or expired
// context, or a body that could not be read. Err is the cause: errors.Is
// finds context.Canceled and context.DeadlineExceeded through it, and
// errors.As a Timeout() method that reports Options.Client's timeout.
type RequestError struct {
	Tool   string
	Method string
	URL    string // the request URL, with any token replaced by "REDACTED"
	Err    error
}

// Error names the tool, the request and the cause.
func (e *RequestError) Error() string {
	return fmt.Sprintf("tool %q: %s %s: %v", e.Tool, e.Method, e.URL, e.Err)
}

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }

// StatusError reports a response whose status the tool treats as a
// failure (only Serper's, see the package documentation).
type StatusError struct {
	Tool   string
	Status int
	Body   string // the start of the response body, at most 512 bytes
}

// Error names the tool, the status and the body.
func (e *StatusError) Error() string {
	return fmt.Sprintf("tool %q: HTTP status %d: %s", e.Tool, e.Status, e.Body)
}

// ResponseError reports a response the tool cannot use: not JSON, without
// Serper's "organic" list, a field of the wrong type, or too large.
type ResponseError struct {
	Tool   string
	Reason string
	Err    error // the decoding error, if any
}

// Error names the tool and the reason.
func (e *ResponseError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("tool %q: %s: %v", e.Tool, e.Reason, e.Err)
	}
	return fmt.Sprintf("tool %q: %s", e.Tool, e.Reason)
}

// Unwrap returns the decoding error, if any.
func (e *ResponseError) Unwrap() error { return e.Err }

// CustomModeError is the failure of every call of a custom tool of mode
// "custom": such a tool only describes a function to the model, for
// function_calling_raw. Its text is the reference's, verbatim.
type CustomModeError struct {
	Tool string
}

// Error is "Custom mode can't execute tools, use function_calling_raw".
func (e *CustomModeError) Error() string {
	return "Custom mode can't execute tools, use function_calling_raw"
}
