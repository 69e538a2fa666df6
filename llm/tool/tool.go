// Package tool lets a model call Go code: tools, a registry of them, and
// the tool-calling loop (model -> tools -> model, until the model answers
// or a step bound is reached).
//
// A Tool is a definition the model sees (name, description, JSON Schema of
// its parameters) and a function that runs a call. Func makes a typed Go
// function a tool, deriving the schema from its argument struct once, by
// reflection, and decoding each call's arguments strictly against it. A
// Registry is an explicit set of tools (there is no global one). Loop runs
// the conversation; every failure of a tool (an error, a panic, bad
// arguments, an unknown name) goes back to the model as the call's result,
// so the model can recover, and never ends the loop. HTTP is a ready-made
// tool for HTTP requests, with an allow-list of hosts.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/weftlang/weft/llm"
)

// Tool is a tool a model may call.
type Tool struct {
	// Def is what the model sees. Def.Parameters is the JSON Schema of an
	// object; when empty, the tool takes no arguments.
	Def llm.Tool
	// Run runs one call with its arguments (a JSON object as the model
	// wrote it). The result is sent back to the model as JSON; an error
	// is sent back as "error: " and its message.
	Run func(ctx context.Context, args json.RawMessage) (any, error)
}

// Call runs t with args and returns the content to send back to the model:
// the JSON of the result. A panic in Run is recovered and returned as a
// *PanicError; a result that cannot be written as JSON gives a
// *ResultError; a nil tool or Run gives an *InvalidToolError.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (content string, err error) {
	if t == nil || t.Run == nil {
		return "", &InvalidToolError{Reason: "the tool or its Run is nil"}
	}
	defer func() {
		if v := recover(); v != nil {
			content, err = "", &PanicError{Tool: t.Def.Name, Value: v, Stack: debug.Stack()}
		}
	}()
	res, err := t.Run(ctx, args)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return "", &ResultError{Tool: t.Def.Name, Err: err}
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// Func makes fn a tool named name. The JSON Schema of its parameters is
// derived from the struct A (see SchemaFor) when Func is called, once; each
// call's arguments are decoded strictly against it: an unknown property, a
// missing required one, a value of the wrong type or outside an enum gives
// an *ArgsError naming the field, which the loop sends back to the model
// as the call's result. The result R is sent back as JSON.
//
// Func returns a *SchemaError when A cannot be described (it is not a
// struct, or a field has an unsupported type) and an *InvalidToolError
// when name is not a valid tool name or fn is nil.
func Func[A, R any](name, description string, fn func(ctx context.Context, args A) (R, error)) (*Tool, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, &InvalidToolError{Name: name, Reason: "the function is nil"}
	}
	n, err := deriveArgs(reflect.TypeFor[A]())
	if err != nil {
		return nil, err
	}
	params, err := marshalSchema(n)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, raw json.RawMessage) (any, error) {
		var a A
		if probs := decodeArgs(raw, reflect.ValueOf(&a).Elem(), n); len(probs) > 0 {
			return nil, &ArgsError{Tool: name, Problems: probs}
		}
		return fn(ctx, a)
	}
	return &Tool{
		Def: llm.Tool{Name: name, Description: description, Parameters: params},
		Run: run,
	}, nil
}

// checkName reports whether name is a tool name every provider accepts:
// 1 to 64 ASCII letters, digits, '_' and '-'.
func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return &InvalidToolError{Name: name, Reason: "a name must have 1 to 64 characters"}
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return &InvalidToolError{Name: name, Reason: fmt.Sprintf("a name may hold only letters, digits, '_' and '-', not %q", c)}
		}
	}
	return nil
}

// emptyParams is the schema of a tool without arguments.
const emptyParams = `{"additionalProperties":false,"properties":{},"type":"object"}`

// Registry is a set of tools, by name. The zero value is an empty registry
// ready to use; a Registry is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
}

// NewRegistry returns a registry holding tools; it stops at the first tool
// Add refuses.
func NewRegistry(tools ...*Tool) (*Registry, error) {
	r := &Registry{}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add adds t. It returns a *DuplicateError if a tool of that name is
// already there, and an *InvalidToolError if t is nil, has no Run, has an
// invalid name or Parameters that are not a JSON object.
func (r *Registry) Add(t *Tool) error {
	if t == nil {
		return &InvalidToolError{Reason: "the tool is nil"}
	}
	if err := checkName(t.Def.Name); err != nil {
		return err
	}
	if t.Run == nil {
		return &InvalidToolError{Name: t.Def.Name, Reason: "Run is nil"}
	}
	if p := bytes.TrimSpace(t.Def.Parameters); len(p) > 0 && (!json.Valid(p) || p[0] != '{') {
		return &InvalidToolError{Name: t.Def.Name, Reason: "Parameters is not a JSON object"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Def.Name]; dup {
		return &DuplicateError{Name: t.Def.Name}
	}
	if r.tools == nil {
		r.tools = map[string]*Tool{}
	}
	r.tools[t.Def.Name] = t
	return nil
}

// Get returns the tool called name, if there is one. A nil *Registry holds
// no tools.
func (r *Registry) Get(name string) (*Tool, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the names of the tools, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.tools))
	for name := range r.tools {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Defs returns the definitions of the tools, sorted by name, for
// llm.Request.Tools. They are copies: changing them does not change the
// registry. A tool with empty Parameters gets the schema of an object
// without properties.
func (r *Registry) Defs() []llm.Tool {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	defs := make([]llm.Tool, 0, len(r.tools))
	for _, t := range r.tools {
		d := t.Def
		d.Parameters = bytes.Clone(d.Parameters)
		if len(bytes.TrimSpace(d.Parameters)) == 0 {
			d.Parameters = json.RawMessage(emptyParams)
		}
		defs = append(defs, d)
	}
	slices.SortFunc(defs, func(a, b llm.Tool) int { return strings.Compare(a.Name, b.Name) })
	if len(defs) == 0 {
		return nil
	}
	return defs
}
