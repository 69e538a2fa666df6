// Package component is weft's one extension mechanism: a registry of
// modules (model providers, embedders, tools, stores, search backends,
// actions), each configured by JSON, provisioned, validated and closed.
// It follows Caddy's module model, without its globals.
//
// # Modules and the registry
//
// A Module has a namespaced id ("llm.ollama", "tool.retrieve",
// "store.sqlite") and a New function returning a fresh, unconfigured
// Component. The namespace says what the component yields, through a
// small interface the engine and the service consume:
//
//	action.*  ActionProvider    actions for the engine's registry
//	tool.*    ToolProvider      tools (an MCP server's, listed dynamically)
//	llm.*     ModelProvider     chat models, by name
//	embed.*   EmbedderProvider  an embedding model
//	store.*   StoreProvider     a thread store
//	search.*  SearchProvider    a search backend
//
// A Registry is a value the program owns: NewRegistry returns an empty
// one, and package component/builtin registers weft's built-in modules
// into it. Nothing is registered in init functions and there is no
// package-level registry, so two registries (a test's and a server's, or
// two tenants') never see each other's modules. Register refuses a
// malformed id, an unknown namespace, a duplicate, and a module whose
// values do not implement their namespace's interface.
//
// # Loading
//
// A Spec names a module and holds its config, {"id": "llm.ollama",
// "config": {"model": "llama3.1"}}. Registry.Load makes a new value,
// decodes the config into it strictly (an unknown field, a value of the
// wrong type or a literal secret is an *Error of kind ErrConfig naming the
// module and the JSON path, ".policy.timout"), calls Provision, then
// Validate. A failure at any step closes what was provisioned: the
// component itself and the components it loaded through Context.Load (a
// tool.retrieve loads its embed.* that way), so a Component's Close must
// be safe on a partly provisioned value, and idempotent. LoadAll loads
// the components of a run into a Set that is closed as one.
//
// Every error of the package is an *Error whose Kind (ErrUnknown,
// ErrConfig, ErrSecret, ErrProvision, ErrInvalid, ...) errors.Is finds; a
// provider's own error (an *llm.Error, a *sqltool.RoleError) stays in the
// chain for errors.As.
//
// # Secrets
//
// A config never holds a credential: a field that takes one is a Secret,
// whose JSON form is a reference, {"env": "OPENAI_API_KEY"}, resolved by
// Context.Secret through Env.Getenv when the component is provisioned. A
// literal value in the JSON is refused (without being echoed), and
// marshalling a component or a spec writes the reference only. So a
// RunSpec (the workflow's digest and its components' specs) can be kept
// with a thread in the store, and any process holding the same
// environment variables rebuilds the run from the store alone.
//
// # Writing a module
//
// A module is a pointer to a struct whose exported fields, with JSON tags,
// are its config; New sets the defaults. Provision resolves secrets and
// opens what must be open before a run; Validate, when there is one,
// checks the configuration and changes nothing; Close releases what
// Provision opened. Package component/componenttest checks a module
// against this contract.
package component
