package mcp

import (
	"fmt"
	"strings"
)

// ErrorKind is the machine-readable kind of an *Error. Each kind is itself
// an error, so errors.Is(err, mcp.ErrTimeout) tests the kind.
type ErrorKind string

// Error returns the kind's text.
func (k ErrorKind) Error() string { return string(k) }

// The kinds of *Error.
const (
	ErrConfig   ErrorKind = "bad config"        // a Config that cannot be used: no name, both or neither of command and url, ...
	ErrConnect  ErrorKind = "cannot connect"    // the server could not be started, reached or initialised (restarts included)
	ErrTimeout  ErrorKind = "timeout"           // the server did not answer within the timeout
	ErrClosed   ErrorKind = "server gone"       // the connection ended during a call: the server died or hung up
	ErrProtocol ErrorKind = "protocol error"    // the server answered with a JSON-RPC error or something that is not MCP
	ErrTool     ErrorKind = "tool error"        // the tool ran and reported an error (isError)
	ErrArgs     ErrorKind = "invalid arguments" // the model's arguments are not a JSON object
)

// Error is the failure of a client of one MCP server: connecting to it,
// listing its tools or calling one. Err is the cause (a
// context.DeadlineExceeded, a JSON-RPC error of the SDK, ...).
type Error struct {
	Server string    // the server's configured name
	Tool   string    // the tool's name on the server, when the error is about a call
	Op     string    // "connect", "list tools", "call"
	Kind   ErrorKind // what went wrong
	Err    error     // the cause
}

// Error names the server, the tool and the problem.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp server %s", e.Server)
	if e.Tool != "" {
		fmt.Fprintf(&b, ": tool %s", e.Tool)
	}
	if e.Op != "" {
		fmt.Fprintf(&b, ": %s", e.Op)
	}
	b.WriteString(": ")
	b.WriteString(string(e.Kind))
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the error's kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(ErrorKind)
	return ok && k == e.Kind
}
