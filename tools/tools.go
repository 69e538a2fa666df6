// Package tools holds weft's built-in tools, the ones a workflow names in a
// TOOL node or an LLM binding's `tools` list:
//
//   - retrieve: the best passages of a document collection for a query
//     (BM25, or hybrid BM25 and vectors with an embedder; package retrieval);
//   - sql_query and sql_schema: one read-only SELECT, and the description of
//     a database (package sqltool);
//   - es_search: an Elasticsearch query-DSL search on a cluster or on
//     embedded Bleve indexes (package search).
//
// A Set is built from a plain Config. Every tool is always there, so that
// a workflow's static checks know its name, but each opens what it works on
// (the documents, the database, the search backend) at its first call, once,
// and a tool whose resource is not configured fails its calls with an error
// that wraps ErrNotConfigured. Close closes what the tools opened.
//
// The descriptions the model sees are domain-neutral: a workflow that
// searches, say, financial reports says so in its own prompts.
package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/weftlang/weft/llm/tool"
	"github.com/weftlang/weft/retrieval"
	"github.com/weftlang/weft/search"
	"github.com/weftlang/weft/sqltool"
)

// The names of the built-in tools.
const (
	Retrieve  = "retrieve"
	SQLQuery  = "sql_query"
	SQLSchema = "sql_schema"
	ESSearch  = "es_search"
)

// Names lists the built-in tools, in the order Set.Tools returns them.
func Names() []string { return []string{Retrieve, SQLQuery, SQLSchema, ESSearch} }

// Resource is what a built-in tool opens and works on.
type Resource string

// The resources of the built-in tools.
const (
	Documents     Resource = "documents"      // Config.Docs, of retrieve
	Database      Resource = "database"       // Config.DB, of sql_query and sql_schema
	SearchBackend Resource = "search backend" // Config.Search, of es_search
)

// Needs returns the resource the built-in tool name works on, and false
// when name is not a built-in tool.
func Needs(name string) (Resource, bool) {
	switch name {
	case Retrieve:
		return Documents, true
	case SQLQuery, SQLSchema:
		return Database, true
	case ESSearch:
		return SearchBackend, true
	}
	return "", false
}

// Config configures a Set. Every field is optional: a tool whose resource
// is empty is still in the Set, and its calls fail with ErrNotConfigured.
type Config struct {
	// Docs is the documents of retrieve: a TAT-QA JSON file (its name
	// ends in ".json"), indexed in memory at the first call, or a
	// retrieval index file (see package retrieval).
	Docs string
	// IndexOptions, when set, gives the options of the retrieval index
	// over Docs (an embedder, for hybrid search). It is called once, at
	// retrieve's first call; its error is returned as it is.
	IndexOptions func() (*retrieval.Options, error)

	// DB is the database of sql_query and sql_schema, opened read-only:
	// a SQLite file or a postgres:// URL (see sqltool.Open).
	DB string
	// DBOptions are the options the database is opened with (nil: the
	// defaults, which refuse a PostgreSQL role that may write).
	DBOptions *sqltool.Options
	// Warn, when set, is given each warning of opening the database
	// (sqltool.DB.Warnings), once.
	Warn func(warning string)

	// Search is the backend of es_search: an Elasticsearch http(s) URL,
	// or "bleve:DIR" for the embedded Bleve indexes kept in DIR.
	Search string
	// OpenSearch, when set, opens the search backend instead of the
	// built-in choice between Elasticsearch and Bleve; it is given
	// Search, once, at es_search's first call.
	OpenSearch func(ctx context.Context, spec string) (search.Backend, error)
}

// Set is the built-in tools over one Config and what they opened. Its
// tools are safe for concurrent use: each resource has its own lock, so
// indexing the documents does not hold up a SQL or search call.
type Set struct {
	cfg   Config
	tools []*tool.Tool

	ixMu, sqMu, sbMu sync.Mutex
	ix               *retrieval.Index
	sq               *sqltool.DB
	sb               search.Backend
	closed           bool // under all three locks
}

// New returns the built-in tools configured by cfg. It opens nothing.
func New(cfg Config) (*Set, error) {
	s := &Set{cfg: cfg}
	retrieve, err := tool.Func(Retrieve,
		"Search the documents for passages about a query; returns the best passages, most relevant first.",
		s.retrieve)
	if err != nil {
		return nil, err
	}
	query, err := tool.Func(SQLQuery,
		"Run one read-only SQL SELECT statement on the database; returns its rows as text, or the database's error.",
		s.sqlQuery)
	if err != nil {
		return nil, err
	}
	schema, err := tool.Func(SQLSchema,
		"Describe the database: its tables, columns, keys and a few sample values.",
		s.sqlSchema)
	if err != nil {
		return nil, err
	}
	es, err := tool.Func(ESSearch,
		"Run an Elasticsearch _search request body (query DSL: bool, term, terms, match, range, sort, from, size) on an index; returns the total, the page of matching documents and its offset.",
		s.esSearch)
	if err != nil {
		return nil, err
	}
	s.tools = []*tool.Tool{retrieve, query, schema, es}
	return s, nil
}

// Tools returns the built-in tools, in the order of Names.
func (s *Set) Tools() []*tool.Tool { return append([]*tool.Tool(nil), s.tools...) }

// Registry returns a registry holding extra (http_request, say) and the
// built-in tools.
func (s *Set) Registry(extra ...*tool.Tool) (*tool.Registry, error) {
	return tool.NewRegistry(append(extra, s.tools...)...)
}

// Configured reports whether the built-in tool name has its resource
// configured; it is true of a name that is not a built-in tool.
func (s *Set) Configured(name string) bool {
	r, ok := Needs(name)
	if !ok {
		return true
	}
	return s.spec(r) != ""
}

// spec is the configured name of r.
func (s *Set) spec(r Resource) string {
	switch r {
	case Documents:
		return s.cfg.Docs
	case Database:
		return s.cfg.DB
	case SearchBackend:
		return s.cfg.Search
	}
	return ""
}

// Close closes what the tools opened, and returns the first error. A call
// after Close fails with ErrClosed.
func (s *Set) Close() error {
	var errs []error
	s.ixMu.Lock()
	if s.ix != nil {
		errs = append(errs, s.ix.Close())
		s.ix = nil
	}
	s.sqMu.Lock()
	if s.sq != nil {
		errs = append(errs, s.sq.Close())
		s.sq = nil
	}
	s.sbMu.Lock()
	if c, ok := s.sb.(interface{ Close() error }); ok {
		errs = append(errs, c.Close())
	}
	s.sb = nil
	s.closed = true
	s.sbMu.Unlock()
	s.sqMu.Unlock()
	s.ixMu.Unlock()
	return errors.Join(errs...)
}

// ErrNotConfigured is wrapped by the error of a tool called without its
// resource (Config.Docs, DB or Search).
var ErrNotConfigured = errors.New("not configured")

// ErrClosed is wrapped by the error of a tool called after Set.Close.
var ErrClosed = errors.New("the tools are closed")

// ResourceError reports that a tool could not open its resource: it is not
// configured (Err wraps ErrNotConfigured), it is missing, or opening it
// failed.
type ResourceError struct {
	Tool     string   // the tool called
	Resource Resource // what it needed
	Name     string   // the path, URL or DSN (its password redacted); empty when not configured
	Err      error
}

// Error describes the problem.
func (e *ResourceError) Error() string {
	var b strings.Builder
	b.WriteString(e.Tool + ": " + string(e.Resource))
	if e.Name != "" {
		b.WriteString(" " + e.Name)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the cause.
func (e *ResourceError) Unwrap() error { return e.Err }

// notConfigured is the error of the tool name called without its resource.
func notConfigured(name string) error {
	r, _ := Needs(name)
	return &ResourceError{Tool: name, Resource: r, Err: ErrNotConfigured}
}
