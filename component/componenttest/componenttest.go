// Package componenttest checks that a component module keeps the contract
// of package component, in the spirit of testing/fstest: a module's tests
// call Run with a config that loads.
package componenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
)

// Option adjusts Run.
type Option func(*options)

type options struct {
	env     *component.Env
	invalid []invalid
}

type invalid struct {
	config json.RawMessage
	kind   component.ErrorKind
}

// WithEnv provisions the components with env (for their secrets).
func WithEnv(env *component.Env) Option { return func(o *options) { o.env = env } }

// Invalid adds a config that must fail to load with an error of kind
// (component.ErrConfig, ErrProvision, ErrInvalid, ...).
func Invalid(config string, kind component.ErrorKind) Option {
	return func(o *options) { o.invalid = append(o.invalid, invalid{json.RawMessage(config), kind}) }
}

// Run checks the module id of r against the contract, with valid, a
// config that loads:
//
//   - the id is well-formed and the module has a Doc;
//   - New returns a fresh pointer on every call: configuring one value
//     leaves the next one as it was;
//   - Close of a value never provisioned succeeds;
//   - valid loads, and the component yields what its namespace promises
//     (tools with distinct names, a model, an embedder, a store, a search
//     backend, actions);
//   - the loaded component marshals to a config that loads again and
//     marshals the same (a run spec round-trips);
//   - Close succeeds, and a second Close too;
//   - an unknown field is refused with an *Error of kind ErrConfig naming
//     its path, and a config of the wrong JSON type too;
//   - each Invalid config fails with its kind, and the error names id.
func Run(t testing.TB, r *component.Registry, id string, valid json.RawMessage, opts ...Option) {
	t.Helper()
	var o options
	for _, f := range opts {
		f(&o)
	}
	ctx := context.Background()
	m, ok := r.Lookup(id)
	if !ok {
		t.Fatalf("%s: not registered", id)
	}
	if err := component.CheckID(id); err != nil {
		t.Errorf("%s: %v", id, err)
	}
	if m.Doc == "" {
		t.Errorf("%s: the module has no Doc", id)
	}

	// New returns fresh pointers.
	a, b := m.New(), m.New()
	if reflect.ValueOf(a).Kind() != reflect.Pointer {
		t.Fatalf("%s: New returns a %T, want a pointer (the config is decoded into it)", id, a)
	}
	if a == b && reflect.TypeOf(a).Elem().Size() != 0 { // zero-sized values may share an address
		t.Fatalf("%s: New returned the same value twice", id)
	}
	before := marshal(t, id, b)
	if len(valid) > 0 {
		if err := json.Unmarshal(valid, a); err != nil {
			t.Fatalf("%s: decoding the valid config: %v", id, err)
		}
	}
	if after := marshal(t, id, b); !bytes.Equal(before, after) {
		t.Errorf("%s: configuring one New value changed another: %s became %s", id, before, after)
	}
	if c, ok := m.New().(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Errorf("%s: Close of a value never provisioned = %v, want nil", id, err)
		}
	}

	// The valid config loads, and yields what the namespace promises.
	x, err := r.Load(ctx, component.Spec{ID: id, Config: valid}, o.env)
	if err != nil {
		t.Fatalf("%s: Load(valid) = %v", id, err)
	}
	checkKind(t, ctx, id, x)

	// Its config round-trips.
	spec, err := component.SpecOf(id, x)
	if err != nil {
		t.Errorf("%s: %v", id, err)
	} else if y, err := r.Load(ctx, spec, o.env); err != nil {
		t.Errorf("%s: loading the marshalled config %s: %v", id, spec.Config, err)
	} else {
		if again := marshal(t, id, y); !bytes.Equal(again, spec.Config) {
			t.Errorf("%s: config %s marshals as %s once loaded again", id, spec.Config, again)
		}
		closeTwice(t, id, y)
	}
	closeTwice(t, id, x)

	// Strict configs.
	var obj map[string]json.RawMessage
	if len(valid) == 0 || json.Unmarshal(valid, &obj) != nil || obj == nil {
		obj = map[string]json.RawMessage{}
	}
	obj["componenttest_unknown"] = json.RawMessage(`1`)
	bad, _ := json.Marshal(obj)
	_, err = r.Load(ctx, component.Spec{ID: id, Config: bad}, o.env)
	var ce *component.Error
	if !errors.As(err, &ce) || ce.Kind != component.ErrConfig || ce.Path != ".componenttest_unknown" || ce.ID != id {
		t.Errorf("%s: Load with an unknown field = %v, want an *Error of kind ErrConfig at .componenttest_unknown", id, err)
	}
	if _, err := r.Load(ctx, component.Spec{ID: id, Config: json.RawMessage(`[1]`)}, o.env); !errors.Is(err, component.ErrConfig) {
		t.Errorf("%s: Load with an array for a config = %v, want ErrConfig", id, err)
	}
	for _, inv := range o.invalid {
		_, err := r.Load(ctx, component.Spec{ID: id, Config: inv.config}, o.env)
		if !errors.Is(err, inv.kind) || !errors.As(err, &ce) || ce.ID == "" {
			t.Errorf("%s: Load(%s) = %v, want an *Error of kind %q", id, inv.config, err, inv.kind)
		}
	}
}

func marshal(t testing.TB, id string, x any) []byte {
	t.Helper()
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatalf("%s: marshalling %T: %v", id, x, err)
	}
	return b
}

func closeTwice(t testing.TB, id string, x component.Component) {
	t.Helper()
	c, ok := x.(io.Closer)
	if !ok {
		return
	}
	if err := c.Close(); err != nil {
		t.Errorf("%s: Close = %v", id, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("%s: a second Close = %v, want nil", id, err)
	}
}

func checkKind(t testing.TB, ctx context.Context, id string, x component.Component) {
	t.Helper()
	ns, _, _ := strings.Cut(id, ".")
	switch ns {
	case component.NSTool:
		p := x.(component.ToolProvider)
		ts, err := p.Tools(ctx)
		if err != nil || len(ts) == 0 {
			t.Errorf("%s: Tools = %d tools, %v; want some", id, len(ts), err)
		}
		seen := map[string]bool{}
		for _, tl := range ts {
			if tl == nil || tl.Def.Name == "" || tl.Run == nil || seen[tl.Def.Name] {
				t.Errorf("%s: a nil, nameless, runless or repeated tool: %+v", id, tl)
				continue
			}
			seen[tl.Def.Name] = true
		}
	case component.NSLLM:
		p := x.(component.ModelProvider)
		if p.Provider() == "" {
			t.Errorf("%s: Provider() is empty", id)
		}
		if m, err := p.Open(""); p.DefaultModel() != "" && p.Provider() != "replay" && (err != nil || m == nil) {
			t.Errorf("%s: Open(\"\") with default model %q = %v, %v", id, p.DefaultModel(), m, err)
		}
	case component.NSEmbed:
		if p := x.(component.EmbedderProvider); p.Embedder() == nil {
			t.Errorf("%s: Embedder() is nil", id)
		}
	case component.NSStore:
		if p := x.(component.StoreProvider); p.Store() == nil {
			t.Errorf("%s: Store() is nil", id)
		}
	case component.NSSearch:
		if p := x.(component.SearchProvider); p.Backend() == nil {
			t.Errorf("%s: Backend() is nil", id)
		}
	case component.NSAction:
		p := x.(component.ActionProvider)
		reg := engine.NewRegistry()
		if err := p.RegisterActions(reg); err != nil || len(reg.Names()) == 0 {
			t.Errorf("%s: RegisterActions = %v, %d actions; want some", id, err, len(reg.Names()))
		}
	default:
		t.Errorf("%s: %T is of no kind", id, x)
	}
}
