package component

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// Env is what components are provisioned with from outside their config.
// The zero Env reads the process's environment and drops warnings.
type Env struct {
	// Getenv reads an environment variable: secrets (Secret) and the
	// variables a module documents as defaults. Nil means os.Getenv.
	Getenv func(key string) string
	// Warn, when set, is given the warnings of components (a database
	// role that may write, say), each once, prefixed with the module id.
	Warn func(msg string)
	// Transport, when set, wraps the transport of every HTTP client the
	// modules make (LLM providers, embedders, tool.http, tool.es, the
	// search backends) and of HTTP actions: telemetry.Transport, which
	// sends the W3C trace context, say. Nil leaves the modules' own
	// clients as they are.
	Transport func(http.RoundTripper) http.RoundTripper
}

// NewTransport returns base wrapped by e.Transport, or nil when e (or
// its Transport) is nil: a module then keeps its own default. base nil
// means a clone of http.DefaultTransport that keeps up to 16 idle
// connections a host (as the LLM providers' own clients do).
func (e *Env) NewTransport(base http.RoundTripper) http.RoundTripper {
	if e == nil || e.Transport == nil {
		return nil
	}
	if base == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 16
		base = tr
	}
	return e.Transport(base)
}

// HTTPClient returns a new client on NewTransport(nil), or nil when e
// wraps no transport (a module then keeps its own default client).
func (e *Env) HTTPClient() *http.Client {
	t := e.NewTransport(nil)
	if t == nil {
		return nil
	}
	return &http.Client{Transport: t}
}

// Context is given to a component's Provision: the environment, and the
// loading of the components it depends on.
type Context struct {
	reg      *Registry
	env      Env
	id       string
	children []Component
	depth    int
}

// maxDepth bounds components loading components (a cycle of specs cannot
// be built in JSON, but a module could load itself).
const maxDepth = 16

// ID returns the id of the module being provisioned.
func (c *Context) ID() string { return c.id }

// Transport returns base wrapped by Env.Transport, or nil when the Env
// wraps none (see Env.NewTransport): what a module sets as the transport
// of the HTTP client it makes.
func (c *Context) Transport(base http.RoundTripper) http.RoundTripper {
	return c.env.NewTransport(base)
}

// HTTPClient returns the client a module sends its HTTP requests with:
// nil when the Env wraps no transport (the module's own default), else
// a new client whose transport Env.Transport wraps (see Env.HTTPClient).
func (c *Context) HTTPClient() *http.Client { return c.env.HTTPClient() }

// Getenv reads an environment variable through Env.Getenv.
func (c *Context) Getenv(key string) string {
	if c.env.Getenv == nil {
		return os.Getenv(key)
	}
	return c.env.Getenv(key)
}

// Warn reports a warning of the component being provisioned.
func (c *Context) Warn(msg string) {
	if c.env.Warn != nil {
		c.env.Warn(c.id + ": " + msg)
	}
}

// Secret returns the value of s, read from its environment variable. A
// zero s, or a variable that is unset or empty, is an *Error of kind
// ErrSecret naming the variable (never a value); a component whose secret
// is optional checks errors.Is(err, ErrSecret).
func (c *Context) Secret(s Secret) (string, error) {
	if s.IsZero() {
		return "", &Error{Op: "load", ID: c.id, Kind: ErrSecret, Err: errors.New("no environment variable named")}
	}
	v := strings.TrimSpace(c.Getenv(s.Env))
	if v == "" {
		return "", &Error{Op: "load", ID: c.id, Kind: ErrSecret, Err: fmt.Errorf("$%s is not set", s.Env)}
	}
	return v, nil
}

// Load loads the component spec names (with this context's registry and
// Env), as a dependency of the one being provisioned: a tool.retrieve
// loads its embed.* this way. The caller owns the result and closes it
// (CloseAll) in its own Close; if the caller's Provision or Validate then
// fails, the registry closes it too, so Close must be idempotent.
func (c *Context) Load(ctx context.Context, s Spec) (Component, error) {
	if c.depth >= maxDepth {
		return nil, &Error{Op: "load", ID: s.ID, Kind: ErrProvision, Err: fmt.Errorf("components nested more than %d deep", maxDepth)}
	}
	x, err := c.reg.load(ctx, s, c.env, c.depth+1)
	if err != nil {
		return nil, err
	}
	c.children = append(c.children, x)
	return x, nil
}

// Load builds the component spec names: a new value of its module, its
// config decoded into it strictly (an unknown field, a wrong type or a
// literal secret is an *Error of kind ErrConfig naming the JSON path),
// then Provision and Validate. When any step fails, what was provisioned
// is closed (the component, and the components it loaded) and the error
// is an *Error whose kind says which step. env may be nil: the process's
// environment, no warnings.
func (r *Registry) Load(ctx context.Context, s Spec, env *Env) (Component, error) {
	var e Env
	if env != nil {
		e = *env
	}
	return r.load(ctx, s, e, 0)
}

func (r *Registry) load(ctx context.Context, s Spec, env Env, depth int) (Component, error) {
	m, ok := r.mods[s.ID]
	if !ok {
		return nil, &Error{Op: "load", ID: s.ID, Kind: ErrUnknown, Err: fmt.Errorf("known: %s", strings.Join(r.IDs(), ", "))}
	}
	x := m.New()
	if err := decodeConfig(s.ID, s.Config, x); err != nil {
		return nil, err
	}
	c := &Context{reg: r, env: env, id: s.ID, depth: depth}
	fail := func(kind ErrorKind, err error) (Component, error) {
		closeErr := closeOne(x)
		for _, ch := range slices.Backward(c.children) {
			closeErr = errors.Join(closeErr, closeOne(ch))
		}
		var ce *Error
		if !(errors.As(err, &ce) && ce.ID == s.ID) {
			err = &Error{Op: "load", ID: s.ID, Kind: kind, Err: err}
		}
		if closeErr != nil {
			err = errors.Join(err, fmt.Errorf("closing %s after the failure: %w", s.ID, closeErr))
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return fail(ErrProvision, err)
	}
	if err := x.Provision(ctx, c); err != nil {
		return fail(ErrProvision, err)
	}
	if v, ok := x.(Validator); ok {
		if err := v.Validate(); err != nil {
			return fail(ErrInvalid, err)
		}
	}
	return x, nil
}

// closeOne closes x when it is an io.Closer.
func closeOne(x Component) error {
	if cl, ok := x.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// CloseAll closes the components that are io.Closers, last first, and
// returns their errors joined.
func CloseAll(xs ...Component) error {
	var errs []error
	for _, x := range slices.Backward(xs) {
		if x != nil {
			errs = append(errs, closeOne(x))
		}
	}
	return errors.Join(errs...)
}

// decodeConfig decodes raw into x strictly.
func decodeConfig(id string, raw json.RawMessage, x Component) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if path, err := checkConfig(raw, x); err != nil {
		return &Error{Op: "load", ID: id, Path: path, Kind: ErrConfig, Err: err}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(x); err != nil {
		path := ""
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			path = "." + te.Field
		}
		return &Error{Op: "load", ID: id, Path: path, Kind: ErrConfig, Err: err}
	}
	if d.More() {
		return &Error{Op: "load", ID: id, Kind: ErrConfig, Err: errors.New("more than one JSON value")}
	}
	return nil
}
