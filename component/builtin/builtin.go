// Package builtin holds weft's built-in component modules and registers
// them into a component.Registry the caller owns (Register), or a new one
// (New). Nothing is registered globally.
//
// The modules, by id:
//
//	action.builtin        weft's built-in actions (package action)
//	action.owf            the owf.* actions of ollama-workflows documents
//	action.stubs          actions answered from stub lists (package wftest)
//	llm.ollama            chat models of an Ollama server
//	llm.openai            chat models of an OpenAI-compatible server
//	llm.anthropic         chat models of the Anthropic API
//	llm.replay            a recording served offline (package llm/replay)
//	embed.ollama          an embedding model of an Ollama server
//	embed.openai          an embedding model of an OpenAI-compatible server
//	tool.retrieve         retrieve: passages of a document collection
//	tool.sql              sql_query and sql_schema on a read-only database
//	tool.es               es_search on Elasticsearch or embedded Bleve indexes
//	tool.http             http_request, with an optional host allow-list
//	tool.mcp              the tools of an MCP server (stdio or streamable HTTP)
//	store.sqlite          a SQLite thread store
//	store.postgres        a PostgreSQL thread store
//	store.memory          an in-memory thread store
//	search.bleve          embedded Bleve indexes
//	search.elasticsearch  an Elasticsearch cluster
//
// Each module's config is the exported struct of the same name (Ollama,
// OpenAI, Retrieve, SQL, ...), whose JSON fields are documented there.
// Credentials are component.Secret references, {"env": "VARIABLE"}: a
// config never holds one.
package builtin

import "github.com/weftlang/weft/component"

// Modules returns weft's built-in modules, sorted by id.
func Modules() []component.Module {
	return []component.Module{
		{ID: "action.builtin", New: func() component.Component { return &Actions{} }, Doc: "weft's built-in actions: pass, ask_user and the LLM, TOOL and HTTP bindings"},
		{ID: "action.owf", New: func() component.Component { return newOWF() }, Doc: "the owf.* actions that carry out ollama-workflows documents"},
		{ID: "action.stubs", New: func() component.Component { return &Stubs{} }, Doc: "actions answered from stub lists, in place of the real ones"},
		{ID: "embed.ollama", New: func() component.Component { return newOllamaEmbed() }, Doc: "an embedding model of an Ollama server"},
		{ID: "embed.openai", New: func() component.Component { return newOpenAIEmbed() }, Doc: "an embedding model of an OpenAI-compatible server"},
		{ID: "llm.anthropic", New: func() component.Component { return newAnthropic() }, Doc: "chat models of the Anthropic API"},
		{ID: "llm.ollama", New: func() component.Component { return newOllama() }, Doc: "chat models of an Ollama server"},
		{ID: "llm.openai", New: func() component.Component { return newOpenAI() }, Doc: "chat models of an OpenAI-compatible server"},
		{ID: "llm.replay", New: func() component.Component { return &Replay{} }, Doc: "a recording of model exchanges, served offline"},
		{ID: "search.bleve", New: func() component.Component { return &Bleve{} }, Doc: "embedded Bleve indexes, in memory or in a directory"},
		{ID: "search.elasticsearch", New: func() component.Component { return &Elasticsearch{} }, Doc: "an Elasticsearch cluster"},
		{ID: "store.memory", New: func() component.Component { return &MemoryStore{} }, Doc: "an in-memory thread store, lost on exit"},
		{ID: "store.postgres", New: func() component.Component { return &PostgresStore{} }, Doc: "a PostgreSQL thread store"},
		{ID: "store.sqlite", New: func() component.Component { return &SQLiteStore{} }, Doc: "a SQLite thread store"},
		{ID: "tool.es", New: func() component.Component { return &ES{} }, Doc: "es_search: Elasticsearch query-DSL searches"},
		{ID: "tool.http", New: func() component.Component { return &HTTP{} }, Doc: "http_request: HTTP requests, optionally to listed hosts only"},
		{ID: "tool.mcp", New: func() component.Component { return &MCP{} }, Doc: "the tools of an MCP server, over stdio or streamable HTTP, named SERVER__TOOL"},
		{ID: "tool.retrieve", New: func() component.Component { return &Retrieve{} }, Doc: "retrieve: the best passages of a document collection"},
		{ID: "tool.sql", New: func() component.Component { return &SQL{} }, Doc: "sql_query and sql_schema on a database opened read-only"},
	}
}

// Register adds the built-in modules to r. It fails when r already has a
// module of one of their ids.
func Register(r *component.Registry) error {
	for _, m := range Modules() {
		if err := r.Register(m); err != nil {
			return err
		}
	}
	return nil
}

// New returns a new registry holding the built-in modules. (Its error
// cannot happen unless the package is broken; a test checks it.)
func New() (*component.Registry, error) {
	r := component.NewRegistry()
	if err := Register(r); err != nil {
		return nil, err
	}
	return r, nil
}
