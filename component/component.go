package component

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Component is a configured, provisioned piece of a run: a model provider,
// an embedder, tools, a store, a search backend or actions. A module's New
// returns a zero Component (its defaults set); Registry.Load decodes the
// JSON config into it, then calls Provision, then Validate (when it is a
// Validator). A Component that holds resources implements io.Closer; its
// Close must be safe to call on a value whose Provision failed part way,
// and more than once.
type Component interface {
	// Provision readies the component: it resolves secrets and defaults
	// through c, loads the components it depends on (c.Load) and opens
	// what must be open before a run. It must not be called twice.
	Provision(ctx context.Context, c *Context) error
}

// Validator is a Component that checks its provisioned configuration.
// Validate must not change the component or open anything.
type Validator interface {
	Validate() error
}

// Checker is a Component that can check, before a run, that the
// resources it works on are there and usable: a file that exists, a URL of
// the right form, a directory of indexes. Check is cheap and changes
// nothing; it may be called many times over the component's life (a
// resource can go away after Provision), and concurrently with the
// component's use. Its error says what is wrong, with the resource's
// name, and wraps the cause (errors.Is finds fs.ErrNotExist for a missing
// file).
type Checker interface {
	Check(ctx context.Context) error
}

// Module is a kind of component the registry can build: its id, a
// constructor of fresh zero values and a one-line description.
type Module struct {
	// ID names the module, namespaced by the kind of component it makes:
	// "llm.ollama", "tool.retrieve", "store.sqlite" (see Namespaces).
	ID string
	// New returns a new, unconfigured Component; every call returns a
	// distinct value. Its type must implement the interface of its
	// namespace (ModelProvider for llm.*, Tools for tool.*, ...).
	New func() Component
	// Doc describes the module in one line, for listings.
	Doc string
}

// Namespace returns the part of the module's id before the first dot:
// "llm" for "llm.ollama".
func (m Module) Namespace() string {
	ns, _, _ := strings.Cut(m.ID, ".")
	return ns
}

// The namespaces of module ids, one a kind of component.
const (
	NSAction = "action" // ActionProvider: actions for the engine's registry
	NSTool   = "tool"   // ToolProvider: tools for models and TOOL nodes
	NSLLM    = "llm"    // ModelProvider: chat models
	NSEmbed  = "embed"  // EmbedderProvider: embedding models
	NSStore  = "store"  // StoreProvider: a thread store
	NSSearch = "search" // SearchProvider: a search backend
)

// Namespaces lists the namespaces a module id may start with.
func Namespaces() []string {
	return []string{NSAction, NSTool, NSLLM, NSEmbed, NSStore, NSSearch}
}

// idPattern is a module id: a namespace, a dot and a name of lower-case
// letters, digits, '_' and '-' (more dot-separated names allowed).
var idPattern = regexp.MustCompile(`^[a-z]+(\.[a-z0-9][a-z0-9_-]*)+$`)

// CheckID returns nil when id is a well-formed module id in a known
// namespace, else an *Error of kind ErrBadID.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return &Error{Op: "register", ID: id, Kind: ErrBadID, Err: fmt.Errorf("want NAMESPACE.NAME in lower case, e.g. llm.ollama")}
	}
	ns, _, _ := strings.Cut(id, ".")
	if !slices.Contains(Namespaces(), ns) {
		return &Error{Op: "register", ID: id, Kind: ErrBadID, Err: fmt.Errorf("unknown namespace %q (known: %s)", ns, strings.Join(Namespaces(), ", "))}
	}
	return nil
}

// Registry is a set of modules a program can load components from. It is
// an ordinary value the program owns: weft keeps no global registry and
// registers nothing in init functions. A Registry is safe for concurrent
// Load and Lookup once no more modules are being registered.
type Registry struct {
	mods map[string]Module
}

// NewRegistry returns an empty registry. Package component/builtin
// registers weft's built-in modules into one.
func NewRegistry() *Registry { return &Registry{mods: map[string]Module{}} }

// Register adds m. It refuses, with an *Error, a malformed id or one in an
// unknown namespace (ErrBadID), an id already registered (ErrDuplicate), a
// nil New, or a New whose value does not implement its namespace's
// interface (ErrBadModule).
func (r *Registry) Register(m Module) error {
	if err := CheckID(m.ID); err != nil {
		return err
	}
	if _, dup := r.mods[m.ID]; dup {
		return &Error{Op: "register", ID: m.ID, Kind: ErrDuplicate, Err: fmt.Errorf("already registered")}
	}
	if m.New == nil {
		return &Error{Op: "register", ID: m.ID, Kind: ErrBadModule, Err: fmt.Errorf("New is nil")}
	}
	c := m.New()
	if c == nil {
		return &Error{Op: "register", ID: m.ID, Kind: ErrBadModule, Err: fmt.Errorf("New returned nil")}
	}
	if err := checkKind(m.Namespace(), c); err != nil {
		return &Error{Op: "register", ID: m.ID, Kind: ErrBadModule, Err: err}
	}
	r.mods[m.ID] = m
	return nil
}

// Lookup returns the module id names.
func (r *Registry) Lookup(id string) (Module, bool) {
	m, ok := r.mods[id]
	return m, ok
}

// Modules returns the registered modules sorted by id; with namespaces
// given, only the modules of those.
func (r *Registry) Modules(namespaces ...string) []Module {
	var ms []Module
	for _, m := range r.mods {
		if len(namespaces) == 0 || slices.Contains(namespaces, m.Namespace()) {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, func(a, b Module) int { return strings.Compare(a.ID, b.ID) })
	return ms
}

// IDs returns the ids of the registered modules, sorted.
func (r *Registry) IDs() []string {
	var ids []string
	for _, m := range r.Modules() {
		ids = append(ids, m.ID)
	}
	return ids
}
