package component

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Spec names a module and gives its config: in JSON,
// {"id": "llm.ollama", "config": {"model": "llama3.1"}}. A missing or null
// config is the module's defaults.
type Spec struct {
	ID     string          `json:"id"`
	Config json.RawMessage `json:"config,omitempty"`
}

// SpecOf returns the spec of a module id with config c, marshalled to
// JSON: c is typically a module's config value built in Go. Secrets in it
// are written as their references only.
func SpecOf(id string, c any) (Spec, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return Spec{}, &Error{Op: "spec", ID: id, Kind: ErrConfig, Err: err}
	}
	if bytes.Equal(b, []byte("null")) {
		b = nil
	}
	return Spec{ID: id, Config: b}, nil
}

// RunSpec is what a run needs besides its inputs, in a form a store keeps
// with a thread and any process can rebuild the run from: the digest of
// the workflow (whose canonical source the store keeps, content-addressed)
// and the components the run uses, secrets by reference only.
type RunSpec struct {
	// Workflow is the content digest of the workflow's canonical source.
	Workflow string `json:"workflow"`
	// Components are the components of the run, in the order they are
	// loaded and opposite to the order they are closed.
	Components []Spec `json:"components,omitempty"`
}

// Secret is a config field holding a credential by reference: its JSON
// form is {"env": "OPENAI_API_KEY"}, the name of an environment variable
// that Context.Secret reads when the component is provisioned. A Secret
// never holds the credential itself, so marshalling a config that has one
// writes only the variable's name; a literal credential in the JSON (a
// string, or any other form) is refused.
type Secret struct {
	// Env is the environment variable holding the credential.
	Env string `json:"env"`
}

// envName is the form of a variable name a Secret accepts.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsZero reports whether s names no variable.
func (s Secret) IsZero() bool { return s.Env == "" }

// String returns "$NAME", or "" when s is zero.
func (s Secret) String() string {
	if s.Env == "" {
		return ""
	}
	return "$" + s.Env
}

// MarshalJSON writes {"env":"NAME"}, or null when s is zero.
func (s Secret) MarshalJSON() ([]byte, error) {
	if s.Env == "" {
		return []byte("null"), nil
	}
	return json.Marshal(struct {
		Env string `json:"env"`
	}{s.Env})
}

// ErrLiteralSecret is the cause of the *Error (of kind ErrConfig) of a
// config that gives a secret's value instead of a reference to it.
var ErrLiteralSecret = errors.New(`a secret is given by reference only: {"env": "VARIABLE"}, the environment variable holding it`)

// UnmarshalJSON reads {"env":"NAME"} or null. A string, a number, or an
// object with other members is refused with ErrLiteralSecret, without
// echoing the value.
func (s *Secret) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*s = Secret{}
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return ErrLiteralSecret
	}
	var v struct {
		Env string `json:"env"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return ErrLiteralSecret
	}
	if !envName.MatchString(v.Env) {
		// Not echoed: it may be a credential written in the wrong place.
		return fmt.Errorf("%w; env is not a variable name (letters, digits and _)", ErrLiteralSecret)
	}
	s.Env = v.Env
	return nil
}

// Duration is a time.Duration whose JSON form is a Go duration string,
// "90s" or "5m"; a number is refused (its unit would be a guess).
type Duration time.Duration

// MarshalJSON writes the duration as a string, "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf(`want a duration string such as "90s" or "5m"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %s is negative", s)
	}
	*d = Duration(v)
	return nil
}

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
