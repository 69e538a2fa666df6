package component

import "strings"

// ErrorKind is the machine-readable kind of an *Error. Each kind is itself
// an error, so errors.Is(err, component.ErrUnknown) tells the kinds apart.
type ErrorKind string

// Error returns the kind's name.
func (k ErrorKind) Error() string { return string(k) }

// The kinds of *Error.
const (
	ErrBadID     ErrorKind = "bad module id"           // a malformed id or an unknown namespace
	ErrDuplicate ErrorKind = "duplicate module"        // an id registered twice; two tools or model providers of one name in a Set
	ErrBadModule ErrorKind = "bad module"              // a Module whose New is nil or of the wrong kind
	ErrUnknown   ErrorKind = "unknown module"          // a spec naming no registered module
	ErrConfig    ErrorKind = "bad config"              // a config that does not decode: unknown field, wrong type, literal secret
	ErrSecret    ErrorKind = "secret not set"          // a secret whose environment variable is unset or empty
	ErrProvision ErrorKind = "provision failed"        // Provision returned an error
	ErrInvalid   ErrorKind = "invalid config"          // Validate returned an error
	ErrWrongKind ErrorKind = "wrong kind of component" // a component of another namespace than asked for
)

// Error is an error of the registry, or of loading one component. Err is
// the cause, kept for errors.Is and errors.As (a Provision error of a
// provider stays an *llm.Error, say).
type Error struct {
	Op   string    // "register", "load", "tools" or "models"
	ID   string    // the module's id
	Path string    // the JSON path in the module's config, when the error is about one field, e.g. ".retry.timeout"
	Kind ErrorKind // what went wrong
	Err  error     // the cause
}

// Error names the module, the field and the problem.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("component ")
	b.WriteString(e.ID)
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString("config ")
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
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
