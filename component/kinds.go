package component

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tool"
	"github.com/weftlang/weft/search"
	"github.com/weftlang/weft/store"
)

// The interfaces of the kinds of component, one per namespace. They are
// small on purpose: what the engine and the service consume, nothing of
// how a component is configured.

// ActionProvider is an action.* component: actions for the engine.
type ActionProvider interface {
	Component
	// RegisterActions adds the component's actions to reg.
	RegisterActions(reg *engine.Registry) error
}

// ToolProvider is a tool.* component: tools models call and TOOL nodes
// run. Tools is called after Provision and may list them dynamically (an
// MCP server's tools, say); it returns the same tools on every call
// unless the provider documents otherwise.
type ToolProvider interface {
	Component
	Tools(ctx context.Context) ([]*tool.Tool, error)
}

// ModelProvider is an llm.* component: the chat models of one provider.
type ModelProvider interface {
	Component
	// Provider is the provider's name in a model spec: "ollama" in
	// "ollama:llama3.1".
	Provider() string
	// Open returns the model name (a recording's path, for replay); an
	// empty name is DefaultModel. It opens no connection: a model
	// connects at its first call.
	Open(name string) (llm.Model, error)
	// DefaultModel is the model of the component's config, or "".
	DefaultModel() string
}

// EmbedderProvider is an embed.* component: an embedding model.
type EmbedderProvider interface {
	Component
	Embedder() llm.Embedder
}

// StoreProvider is a store.* component: a thread store, closed with the
// component.
type StoreProvider interface {
	Component
	Store() store.Store
}

// SearchProvider is a search.* component: a search backend, closed with
// the component.
type SearchProvider interface {
	Component
	Backend() search.Backend
}

// checkKind reports whether x implements the interface of namespace ns.
func checkKind(ns string, x Component) error {
	var ok bool
	var want string
	switch ns {
	case NSAction:
		_, ok = x.(ActionProvider)
		want = "component.ActionProvider"
	case NSTool:
		_, ok = x.(ToolProvider)
		want = "component.ToolProvider"
	case NSLLM:
		_, ok = x.(ModelProvider)
		want = "component.ModelProvider"
	case NSEmbed:
		_, ok = x.(EmbedderProvider)
		want = "component.EmbedderProvider"
	case NSStore:
		_, ok = x.(StoreProvider)
		want = "component.StoreProvider"
	case NSSearch:
		_, ok = x.(SearchProvider)
		want = "component.SearchProvider"
	default:
		return fmt.Errorf("unknown namespace %q", ns)
	}
	if !ok {
		return fmt.Errorf("%T does not implement %s, the interface of %s.*", x, want, ns)
	}
	return nil
}

// Set is the components of one run, loaded together and closed together.
type Set struct {
	specs []Spec
	items []Component
}

// LoadAll loads the components specs name, in order. When one fails, the
// ones loaded before it are closed, last first, and the error is the
// failing one's. The caller closes the Set.
func (r *Registry) LoadAll(ctx context.Context, specs []Spec, env *Env) (*Set, error) {
	s := &Set{}
	for _, sp := range specs {
		x, err := r.Load(ctx, sp, env)
		if err != nil {
			if cerr := s.Close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
			return nil, err
		}
		s.specs = append(s.specs, sp)
		s.items = append(s.items, x)
	}
	return s, nil
}

// Specs returns the specs the Set was loaded from.
func (s *Set) Specs() []Spec { return slices.Clone(s.specs) }

// Components returns the components, in the order of their specs.
func (s *Set) Components() []Component { return slices.Clone(s.items) }

// Close closes the components, last first, and returns their errors
// joined. The Set is empty after it.
func (s *Set) Close() error {
	err := CloseAll(s.items...)
	s.items, s.specs = nil, nil
	return err
}

// Of returns the components of s that implement T, in order:
// component.Of[component.StoreProvider](set).
func Of[T any](s *Set) []T {
	var out []T
	for _, x := range s.items {
		if t, ok := x.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// Tools returns the tools of every ToolProvider in s, in order. Two tools
// of one name are an *Error of kind ErrDuplicate naming the component of
// the second (tool.NewRegistry would refuse them too).
func (s *Set) Tools(ctx context.Context) ([]*tool.Tool, error) {
	var all []*tool.Tool
	seen := map[string]bool{}
	for i, x := range s.items {
		p, ok := x.(ToolProvider)
		if !ok {
			continue
		}
		ts, err := p.Tools(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if seen[t.Def.Name] {
				return nil, &Error{Op: "tools", ID: s.specs[i].ID, Kind: ErrDuplicate, Err: fmt.Errorf("a tool named %q comes from an earlier component too", t.Def.Name)}
			}
			seen[t.Def.Name] = true
			all = append(all, t)
		}
	}
	return all, nil
}

// Models opens models by spec ("PROVIDER:MODEL", the syntax of
// llm/providers) with the ModelProviders of a Set: its Open is what
// action.Binder.Open wants.
type Models struct {
	byName map[string]ModelProvider
	def    string
}

// Models returns the models of the Set's ModelProviders. Its Default is
// the spec of the first provider that names a default model. Two
// providers of one name are an *Error of kind ErrDuplicate.
func (s *Set) Models() (*Models, error) {
	m := &Models{byName: map[string]ModelProvider{}}
	for i, x := range s.items {
		p, ok := x.(ModelProvider)
		if !ok {
			continue
		}
		name := p.Provider()
		if _, dup := m.byName[name]; dup {
			return nil, &Error{Op: "models", ID: s.specs[i].ID, Kind: ErrDuplicate, Err: fmt.Errorf("model provider %q comes from an earlier component too", name)}
		}
		m.byName[name] = p
		if m.def == "" && p.DefaultModel() != "" {
			m.def = name + ":" + p.DefaultModel()
		}
	}
	return m, nil
}

// Default returns the spec of the default model, or "".
func (m *Models) Default() string { return m.def }

// ErrNoProvider is the cause of Open's error for a spec whose provider no
// component of the Set provides.
var ErrNoProvider = errors.New("no component provides this model provider")

// Open returns the model spec names ("ollama:llama3.1"; a bare provider
// name, "ollama", means its default model; "" means Default).
func (m *Models) Open(spec string) (llm.Model, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = m.def
	}
	name, model, _ := strings.Cut(spec, ":")
	p, ok := m.byName[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		known := make([]string, 0, len(m.byName))
		for k := range m.byName {
			known = append(known, k)
		}
		slices.Sort(known)
		return nil, fmt.Errorf("model %q: %w (loaded: %s)", spec, ErrNoProvider, strings.Join(known, ", "))
	}
	return p.Open(strings.TrimSpace(model))
}
