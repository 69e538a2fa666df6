package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/llm/tool"
	"github.com/weftlang/weft/retrieval"
	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
	"github.com/weftlang/weft/search/es"
	"github.com/weftlang/weft/sqltool"
)

// The built-in tools `weft run` offers, beside http_request. Each is
// always registered, so the static checks know its name; it opens what it
// works on (from its flag or environment variable) at its first call.
const (
	toolRetrieve  = "retrieve"   // --docs
	toolSQLQuery  = "sql_query"  // --db
	toolSQLSchema = "sql_schema" // --db
	toolESSearch  = "es_search"  // --es
)

// Environment variables giving the tools' flags a default.
const (
	envDocs = "WEFT_DOCS"
	envDB   = "WEFT_DB"
	envES   = "WEFT_ES"
)

// toolFlag names the flag (and variable) a built-in tool needs.
func toolFlag(name string) (flag, env string) {
	switch name {
	case toolRetrieve:
		return "--docs PATH", envDocs
	case toolSQLQuery, toolSQLSchema:
		return "--db DSN", envDB
	case toolESSearch:
		return "--es URL|bleve:DIR", envES
	}
	return "", ""
}

// toolset holds the built-in tools of one command and what they opened.
type toolset struct {
	docs, db, es string
	embed        string              // --embed: retrieve searches hybrid (BM25 and vectors)
	getenv       func(string) string // for the embedder's configuration
	dbUnsafe     bool                // --db-allow-unsafe-role
	warn         io.Writer           // where a warning goes (stderr)

	// One lock each, so that indexing the documents (embedding them, with
	// --embed) does not hold up a SQL or search call of another branch.
	ixMu, sqMu, sbMu sync.Mutex
	ix               *retrieval.Index
	sq               *sqltool.DB
	sb               search.Backend
}

// newToolset reads the tools' settings from o, else the environment.
func newToolset(e env, o *runOptions) *toolset {
	getenv := getenvOf(e)
	ts := &toolset{docs: o.docs, db: o.db}
	if ts.docs == "" {
		ts.docs = getenv(envDocs)
	}
	if ts.db == "" {
		ts.db = getenv(envDB)
	}
	// A relative path not in the current directory may name a file of
	// the data directory ("tatqa/tatqa_dataset_dev.json").
	ts.docs, ts.db = resolveData(getenv, ts.docs), resolveData(getenv, ts.db)
	ts.es = o.es
	if ts.es == "" {
		ts.es = getenv(envES)
	}
	ts.embed = o.embed
	if ts.embed == "" {
		ts.embed = getenv(providers.EmbedEnvVar)
	}
	ts.getenv = getenv
	ts.dbUnsafe, ts.warn = o.dbUnsafe, e.stderr
	if ts.warn == nil {
		ts.warn = io.Discard
	}
	return ts
}

// configured reports whether the built-in tool name has what it needs.
func (ts *toolset) configured(name string) bool {
	switch name {
	case toolRetrieve:
		return ts.docs != ""
	case toolSQLQuery, toolSQLSchema:
		return ts.db != ""
	case toolESSearch:
		return ts.es != ""
	}
	return true
}

// close closes what the tools opened.
func (ts *toolset) close() {
	ts.ixMu.Lock()
	if ts.ix != nil {
		ts.ix.Close()
		ts.ix = nil
	}
	ts.ixMu.Unlock()
	ts.sqMu.Lock()
	if ts.sq != nil {
		ts.sq.Close()
		ts.sq = nil
	}
	ts.sqMu.Unlock()
	ts.sbMu.Lock()
	if c, ok := ts.sb.(interface{ Close() error }); ok {
		c.Close()
	}
	ts.sb = nil
	ts.sbMu.Unlock()
}

// registry returns the tools: http_request and the built-in ones.
func (ts *toolset) registry() (*tool.Registry, error) {
	retrieve, err := tool.Func(toolRetrieve,
		"Search the documents (financial reports) for passages about a query; returns the best passages, most relevant first.",
		ts.retrieve)
	if err != nil {
		return nil, err
	}
	query, err := tool.Func(toolSQLQuery,
		"Run one read-only SQL SELECT statement on the database; returns its rows as text, or the database's error.",
		ts.sqlQuery)
	if err != nil {
		return nil, err
	}
	schema, err := tool.Func(toolSQLSchema,
		"Describe the database: its tables, columns, keys and a few sample values.",
		ts.sqlSchema)
	if err != nil {
		return nil, err
	}
	es, err := tool.Func(toolESSearch,
		"Run an Elasticsearch _search request body (query DSL: bool, term, terms, match, range, sort, from, size) on an index; returns the total, the page of matching documents and its offset.",
		ts.esSearch)
	if err != nil {
		return nil, err
	}
	return tool.NewRegistry(tool.HTTP(nil, tool.HTTPOptions{}), retrieve, query, schema, es)
}

// esArgs are the arguments of the es_search tool.
type esArgs struct {
	Index string         `json:"index" jsonschema:"description=the index to search"`
	Body  map[string]any `json:"body" jsonschema:"description=the _search request body: query, sort, from, size"`
}

// esResult is what the es_search tool returns.
type esResult struct {
	Total int64             `json:"total"`
	Hits  []json.RawMessage `json:"hits"`
	IDs   []string          `json:"ids"`
	From  int               `json:"from"`
	Size  int               `json:"size"`
}

func (ts *toolset) esSearch(ctx context.Context, a esArgs) (esResult, error) {
	b, err := ts.searchBackend()
	if err != nil {
		return esResult{}, err
	}
	body, err := json.Marshal(a.Body)
	if err != nil {
		return esResult{}, err
	}
	res, err := b.Search(ctx, a.Index, body)
	if err != nil {
		return esResult{}, err
	}
	r := esResult{Total: res.Total, From: res.From, Size: res.Size, Hits: []json.RawMessage{}, IDs: []string{}}
	for _, h := range res.Hits {
		r.Hits = append(r.Hits, h.Source)
		r.IDs = append(r.IDs, h.ID)
	}
	return r, nil
}

// searchBackend opens --es once: a URL is a cluster, bleve:DIR the
// embedded indexes kept in DIR.
func (ts *toolset) searchBackend() (search.Backend, error) {
	ts.sbMu.Lock()
	defer ts.sbMu.Unlock()
	if ts.sb != nil {
		return ts.sb, nil
	}
	if ts.es == "" {
		return nil, notConfigured(toolESSearch)
	}
	if dir, ok := strings.CutPrefix(ts.es, "bleve:"); ok {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("--es: %w", err)
		}
		b, err := blevesearch.New(blevesearch.Options{Dir: dir, StrictFields: true})
		if err != nil {
			return nil, fmt.Errorf("--es %s: %w", ts.es, err)
		}
		ts.sb = b
		return b, nil
	}
	b, err := es.New(es.Options{Addresses: []string{ts.es}})
	if err != nil {
		return nil, fmt.Errorf("--es %s: %w", redactDSN(ts.es), err)
	}
	ts.sb = b
	return b, nil
}

// notConfigured is the error of a built-in tool called without its flag.
func notConfigured(name string) error {
	flag, env := toolFlag(name)
	return fmt.Errorf("the %s tool needs %s (or $%s)", name, flag, env)
}

// retrieveArgs are the arguments of the retrieve tool.
type retrieveArgs struct {
	Query string `json:"query" jsonschema:"description=what to search for"`
	K     int    `json:"k,omitempty" jsonschema:"description=how many passages (default 5)"`
	Year  string `json:"year,omitempty" jsonschema:"description=only passages of this fiscal year"`
}

// retrieveResult is what the retrieve tool returns.
type retrieveResult struct {
	Chunks  []string `json:"chunks"`
	Sources []string `json:"sources"`
}

// defaultRetrieveK is how many passages retrieve returns unless asked.
const defaultRetrieveK = 5

func (ts *toolset) retrieve(ctx context.Context, a retrieveArgs) (retrieveResult, error) {
	ix, err := ts.index(ctx)
	if err != nil {
		return retrieveResult{}, err
	}
	q := retrieval.Query{Text: a.Query, K: a.K}
	if q.K <= 0 {
		q.K = defaultRetrieveK
	}
	if a.Year != "" {
		q.Filter = map[string][]string{"year": {a.Year}}
	}
	hits, err := ix.Search(ctx, q)
	if err != nil {
		return retrieveResult{}, err
	}
	r := retrieveResult{Chunks: []string{}, Sources: []string{}}
	for _, h := range hits {
		r.Chunks = append(r.Chunks, h.Text)
		r.Sources = append(r.Sources, h.ID)
	}
	return r, nil
}

// index opens the documents of --docs once: a TAT-QA JSON file is
// indexed in memory; any other file is a retrieval index (SQLite). With
// --embed, documents and queries are embedded too and searches are hybrid.
func (ts *toolset) index(ctx context.Context) (*retrieval.Index, error) {
	ts.ixMu.Lock()
	defer ts.ixMu.Unlock()
	if ts.ix != nil {
		return ts.ix, nil
	}
	if ts.docs == "" {
		return nil, notConfigured(toolRetrieve)
	}
	if _, err := os.Stat(ts.docs); err != nil {
		return nil, fmt.Errorf("--docs: %w", err)
	}
	opts, err := ts.indexOptions()
	if err != nil {
		return nil, err
	}
	ix, err := openDocs(ctx, ts.docs, opts)
	if err != nil {
		return nil, err
	}
	ts.ix = ix
	return ix, nil
}

// indexOptions are the options of the retrieval index: its embedder, from
// --embed.
func (ts *toolset) indexOptions() (*retrieval.Options, error) {
	return embedOptions(ts.embed, ts.getenv)
}

// embedOptions are the options of a retrieval index whose documents and
// queries are embedded with spec (none when spec is empty).
func embedOptions(spec string, getenv func(string) string) (*retrieval.Options, error) {
	if spec == "" {
		return nil, nil
	}
	em, err := providers.OpenEmbedder(spec, getenv)
	if err != nil {
		return nil, fmt.Errorf("--embed %s: %w", spec, err)
	}
	return &retrieval.Options{Embedder: em}, nil
}

// openDocs opens path as the retrieve tool reads it: a TAT-QA JSON file
// indexed in memory, or a retrieval index file.
func openDocs(ctx context.Context, path string, opts *retrieval.Options) (*retrieval.Index, error) {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		ix, err := retrieval.Open(ctx, path, opts)
		if err != nil {
			return nil, fmt.Errorf("--docs %s: %w", path, err)
		}
		return ix, nil
	}
	data, err := retrieval.LoadTATQA(path)
	if err != nil {
		return nil, fmt.Errorf("--docs %s: %w", path, err)
	}
	ix, err := indexDocuments(ctx, ":memory:", opts, data.Documents)
	if err != nil {
		return nil, fmt.Errorf("--docs %s: %w", path, err)
	}
	return ix, nil
}

// indexDocuments opens the retrieval index at dst (a file, or ":memory:")
// and adds docs to it.
func indexDocuments(ctx context.Context, dst string, opts *retrieval.Options, docs []retrieval.Document) (*retrieval.Index, error) {
	ix, err := retrieval.Open(ctx, dst, opts)
	if err != nil {
		return nil, err
	}
	if err := ix.Add(ctx, docs...); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// sqlArgs are the arguments of the sql_query tool.
type sqlArgs struct {
	SQL string `json:"sql" jsonschema:"description=one read-only SELECT statement"`
}

// sqlResult is what the sql_query tool returns: the rows as text (for a
// prompt and a token budget), and their count.
type sqlResult struct {
	Text      string   `json:"text"`
	RowCount  int      `json:"row_count"`
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	Truncated bool     `json:"truncated"`
	Clipped   int      `json:"clipped,omitempty"` // long values cut short
	Note      string   `json:"note,omitempty"`    // what was cut and why, for the model
}

func (ts *toolset) sqlQuery(ctx context.Context, a sqlArgs) (sqlResult, error) {
	db, err := ts.database(ctx)
	if err != nil {
		return sqlResult{}, err
	}
	res, err := db.Query(ctx, a.SQL)
	if err != nil {
		return sqlResult{}, err
	}
	return sqlResult{Text: formatRows(res), RowCount: len(res.Rows), Columns: res.Columns, Rows: res.Rows, Truncated: res.Truncated, Clipped: res.Clipped, Note: res.Note}, nil
}

// schemaResult is what the sql_schema tool returns.
type schemaResult struct {
	Schema  string `json:"schema"`
	Dialect string `json:"dialect"`
}

func (ts *toolset) sqlSchema(ctx context.Context, _ struct{}) (schemaResult, error) {
	db, err := ts.database(ctx)
	if err != nil {
		return schemaResult{}, err
	}
	s, err := db.Schema(ctx)
	if err != nil {
		return schemaResult{}, err
	}
	return schemaResult{Schema: s, Dialect: db.Dialect()}, nil
}

func (ts *toolset) database(ctx context.Context) (*sqltool.DB, error) {
	ts.sqMu.Lock()
	defer ts.sqMu.Unlock()
	if ts.sq != nil {
		return ts.sq, nil
	}
	if ts.db == "" {
		return nil, notConfigured(toolSQLQuery)
	}
	db, err := sqltool.Open(ctx, ts.db, &sqltool.Options{AllowUnsafeRole: ts.dbUnsafe})
	if errors.Is(err, sqltool.ErrUnsafeRole) {
		return nil, fmt.Errorf("--db %s: %w (docs/tools.md gives the SQL of a read-only role; --db-allow-unsafe-role connects anyway, for a throwaway database)", redactDSN(ts.db), err)
	}
	if err != nil {
		return nil, fmt.Errorf("--db %s: %w", redactDSN(ts.db), err)
	}
	for _, w := range db.Warnings() {
		fmt.Fprintf(ts.warn, "weft: warning: --db %s: %s\n", redactDSN(ts.db), termSafe(w, false))
	}
	ts.sq = db
	return db, nil
}

// formatRows writes a result as text: a header line of column names, then
// one line per row, values separated by " | ", JSON for non-strings.
func formatRows(r *sqltool.Result) string {
	var b strings.Builder
	b.WriteString(strings.Join(r.Columns, " | "))
	for _, row := range r.Rows {
		b.WriteByte('\n')
		for i, v := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			switch x := v.(type) {
			case nil:
				b.WriteString("NULL")
			case string:
				b.WriteString(x)
			default:
				j, _ := json.Marshal(x)
				b.Write(j)
			}
		}
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "\n... (%s)", r.Note)
	}
	return b.String()
}

// usedTools lists the tools a plan calls, each with the first node that
// calls it (the plan's own nodes before its subworkflows'): TOOL nodes by
// name, TOOL bindings by their `tool`, LLM bindings by their `tools`.
func usedTools(p *flow.Plan) (names []string, callers map[string]string) {
	used := map[string]string{}
	var walk func(p *flow.Plan)
	seen := map[*flow.Plan]bool{}
	walk = func(p *flow.Plan) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		use := func(tool, who string) {
			if _, ok := used[tool]; !ok {
				used[tool] = who
				names = append(names, tool)
			}
		}
		for _, pn := range p.Nodes {
			n := pn.Node
			who := "node " + n.Name
			if b := p.Workflow.Binding(n.Action); b != nil {
				who += " (action " + b.Name + ")"
				if t := b.Config["tool"]; b.Type == flow.Tool && t.Kind() == flow.KindString {
					use(t.Str(), who)
				}
				for _, t := range b.Config["tools"].List() {
					use(t.Str(), who)
				}
			} else if n.Type == flow.Tool {
				use(n.Action, who)
			}
		}
		for _, pn := range p.Nodes {
			walk(pn.Sub)
		}
	}
	walk(p)
	return names, used
}

// checkTools fails, before a run, when the plan calls a built-in tool
// whose flag is not set.
func (ts *toolset) checkTools(p *flow.Plan) error {
	names, used := usedTools(p)
	for _, name := range names {
		if !ts.configured(name) {
			flag, env := toolFlag(name)
			return usageErrorf("%s calls the %s tool, which needs %s (or $%s)", used[name], name, flag, env)
		}
	}
	return nil
}

// toolFlags adds the flags of the built-in tools to f.
func toolFlags(f *pflag.FlagSet, o *runOptions) {
	f.StringVar(&o.docs, "docs", "", "the documents of the retrieve tool: a TAT-QA JSON `PATH` (indexed in memory) or a retrieval index file; a relative path not in the current directory is looked up in the data directory (default $"+envDocs+")")
	f.StringVar(&o.es, "es", "", "the search backend of the es_search tool: an Elasticsearch `URL`, or bleve:DIR for the embedded indexes in DIR (default $"+envES+")")
	f.StringVar(&o.db, "db", "", "the database of the sql_query and sql_schema tools, opened read-only: a SQLite file (a relative path not in the current directory is looked up in the data directory) or a postgres:// URL `DSN` (default $"+envDB+")")
	f.BoolVar(&o.dbUnsafe, "db-allow-unsafe-role", false, "let --db connect to PostgreSQL as a role that may do more than read (a superuser, a writer), with a warning; for throwaway databases only")
}
