package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/llm/tool"
	"github.com/weftlang/weft/retrieval"
	"github.com/weftlang/weft/search"
	"github.com/weftlang/weft/search/es"
	"github.com/weftlang/weft/sqltool"
	"github.com/weftlang/weft/tools"
)

// Actions is the config of action.builtin (it has no fields): the actions
// of package action (action.Register).
type Actions struct{}

// Provision does nothing.
func (*Actions) Provision(context.Context, *component.Context) error { return nil }

// RegisterActions adds the built-in actions to reg.
func (*Actions) RegisterActions(reg *engine.Registry) error {
	action.Register(reg)
	return nil
}

// toolSet is the part the tool.* modules share: a tools.Set of which the
// module offers the tools named.
type toolSet struct {
	set   *tools.Set
	names []string
	deps  []component.Component
}

func (t *toolSet) open(cfg tools.Config, names ...string) error {
	set, err := tools.New(cfg)
	if err != nil {
		return err
	}
	t.set, t.names = set, names
	return nil
}

// Tools returns the module's tools.
func (t *toolSet) Tools(context.Context) ([]*tool.Tool, error) {
	if t.set == nil {
		return nil, errors.New("tools asked of a component that is not provisioned")
	}
	var out []*tool.Tool
	for _, tl := range t.set.Tools() {
		if slices.Contains(t.names, tl.Def.Name) {
			out = append(out, tl)
		}
	}
	return out, nil
}

// Close closes what the tools opened, and the components they loaded.
func (t *toolSet) Close() error {
	var err error
	if t.set != nil {
		err = t.set.Close()
		t.set = nil
	}
	err = errors.Join(err, component.CloseAll(t.deps...))
	t.deps = nil
	return err
}

// Retrieve is the config of tool.retrieve: the retrieve tool over a
// document collection.
type Retrieve struct {
	// Docs is the documents: a TAT-QA JSON file (indexed in memory at
	// the first call) or a retrieval index file. Required.
	Docs string `json:"docs"`
	// Embed, when set, is an embed.* component: the search is then
	// hybrid (BM25 and vectors).
	Embed *component.Spec `json:"embed,omitempty"`
	toolSet
}

// Provision checks that the documents exist and loads the embedder.
func (r *Retrieve) Provision(ctx context.Context, c *component.Context) error {
	if r.Docs == "" {
		return errors.New("docs: required")
	}
	if err := fileExists("docs", r.Docs); err != nil {
		return err
	}
	var opts *retrieval.Options
	if r.Embed != nil {
		x, err := c.Load(ctx, *r.Embed)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		r.deps = append(r.deps, x)
		ep, ok := x.(component.EmbedderProvider)
		if !ok {
			return &component.Error{Op: "load", ID: r.Embed.ID, Path: ".embed", Kind: component.ErrWrongKind, Err: errors.New("want an embed.* component")}
		}
		opts = &retrieval.Options{Embedder: ep.Embedder()}
	}
	return r.open(tools.Config{Docs: r.Docs, IndexOptions: func() (*retrieval.Options, error) { return opts, nil }}, tools.Retrieve)
}

// Check reports documents that are no longer there.
func (r *Retrieve) Check(context.Context) error {
	return fileExists("docs", r.Docs)
}

// SQL is the config of tool.sql: sql_query and sql_schema on a database
// opened read-only.
type SQL struct {
	// DB is the database: a SQLite file, or a postgres:// URL (or
	// key=value DSN) without a password. Required.
	DB string `json:"db"`
	// Password is the PostgreSQL password. Without it, PGPASSWORD or
	// ~/.pgpass supplies one, as libpq does.
	Password component.Secret `json:"password,omitzero"`
	// AllowUnsafeRole connects to PostgreSQL as a role that may do more
	// than read, with a warning; for throwaway databases only.
	AllowUnsafeRole bool `json:"allow_unsafe_role,omitempty"`
	// MaxRows and Timeout bound each query (0: sqltool's defaults).
	MaxRows int                `json:"max_rows,omitempty"`
	Timeout component.Duration `json:"timeout,omitempty"`
	toolSet
}

// Provision puts the password into the DSN.
func (s *SQL) Provision(_ context.Context, c *component.Context) error {
	if s.DB == "" {
		return errors.New("db: required")
	}
	dsn, err := withPassword(c, s.DB, s.Password)
	if err != nil {
		return err
	}
	return s.open(tools.Config{
		DB:        dsn,
		DBOptions: &sqltool.Options{AllowUnsafeRole: s.AllowUnsafeRole, MaxRows: s.MaxRows, Timeout: s.Timeout.D()},
		Warn:      c.Warn,
	}, tools.SQLQuery, tools.SQLSchema)
}

// Validate checks the bounds.
func (s *SQL) Validate() error {
	if s.MaxRows < 0 {
		return errors.New("max_rows: must not be negative")
	}
	return nil
}

// Check reports a SQLite file that is not there; a PostgreSQL database
// is left to its first connection.
func (s *SQL) Check(context.Context) error {
	db := s.DB
	if strings.Contains(db, "://") || strings.Contains(db, "=") || strings.HasPrefix(db, "file:") {
		return nil
	}
	return fileExists("db", strings.TrimPrefix(db, "sqlite:"))
}

// ES is the config of tool.es: es_search on a search backend, given by
// URL or as a search.* component.
type ES struct {
	// Backend is an Elasticsearch http(s) URL without credentials, or
	// "bleve:DIR" for the embedded indexes in DIR.
	Backend string `json:"backend,omitempty"`
	// Search is a search.* component, instead of Backend (for a cluster
	// that needs credentials, say).
	Search *component.Spec `json:"search,omitempty"`
	toolSet
}

// Provision loads the search component when there is one.
func (e *ES) Provision(ctx context.Context, c *component.Context) error {
	if (e.Backend == "") == (e.Search == nil) {
		return errors.New("give one of backend and search")
	}
	cfg := tools.Config{Search: e.Backend}
	if e.Search != nil {
		x, err := c.Load(ctx, *e.Search)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		e.deps = append(e.deps, x)
		sp, ok := x.(component.SearchProvider)
		if !ok {
			return &component.Error{Op: "load", ID: e.Search.ID, Path: ".search", Kind: component.ErrWrongKind, Err: errors.New("want a search.* component")}
		}
		// The component closes its backend, not the tool: hide Close.
		b := struct{ search.Backend }{sp.Backend()}
		cfg.Search = e.Search.ID
		cfg.OpenSearch = func(context.Context, string) (search.Backend, error) { return b, nil }
	} else if u, err := url.Parse(e.Backend); err == nil && u.User != nil {
		return errors.New("backend: the URL holds credentials: use search (a search.elasticsearch component) with a password secret")
	} else if t := c.Transport(nil); t != nil && !strings.HasPrefix(e.Backend, "bleve:") {
		// A cluster's client on the Env's transport (tools.OpenSearch
		// makes it on the default one otherwise).
		cfg.OpenSearch = func(_ context.Context, spec string) (search.Backend, error) {
			return es.New(es.Options{Addresses: []string{spec}, Transport: t})
		}
	}
	return e.open(cfg, tools.ESSearch)
}

// Check reports a backend that cannot be one: bleve:DIR with DIR not
// there, or a URL that is not an http(s) URL with a host. A search
// component is checked when it is a component.Checker.
func (e *ES) Check(ctx context.Context) error {
	if e.Backend == "" {
		for _, d := range e.deps {
			if c, ok := d.(component.Checker); ok {
				if err := c.Check(ctx); err != nil {
					return fmt.Errorf("search: %w", err)
				}
			}
		}
		return nil
	}
	if dir, ok := strings.CutPrefix(e.Backend, "bleve:"); ok {
		return fileExists("backend", dir)
	}
	if u, err := url.Parse(e.Backend); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ResourceError{Field: "backend", Name: e.Backend, Err: ErrNotURL}
	}
	return nil
}

// ErrNotURL is the cause of tool.es's Check error for a backend that is
// neither an http(s) URL with a host nor bleve:DIR.
var ErrNotURL = errors.New("want an Elasticsearch http:// or https:// URL, or bleve:DIR")

// ResourceError is a resource a component's Check found missing or
// unusable: the config field that names it, its name, and the cause
// (errors.Is finds fs.ErrNotExist for a missing file).
type ResourceError struct {
	Field string // the config field: "docs", "db", "backend"
	Name  string // the file or directory
	Err   error
}

// Error names the field, the resource and the cause.
func (e *ResourceError) Error() string { return e.Field + " " + e.Name + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ResourceError) Unwrap() error { return e.Err }

// fileExists reports a file or directory that is not there, or cannot be
// looked at, as a *ResourceError whose cause is the system's error.
func fileExists(field, path string) error {
	_, err := os.Stat(path)
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &ResourceError{Field: field, Name: path, Err: err}
}

// HTTP is the config of tool.http: the http_request tool.
type HTTP struct {
	// AllowHosts, when not empty, lists the hosts (host or host:port)
	// requests may go to; redirects included.
	AllowHosts []string `json:"allow_hosts,omitempty"`
	// Timeout bounds one request (0: tool.DefaultHTTPTimeout).
	Timeout component.Duration `json:"timeout,omitempty"`
	// MaxBody is how many bytes of a body the model gets (0: the
	// default).
	MaxBody int `json:"max_body,omitempty"`

	tool *tool.Tool
}

// Provision builds the tool.
func (h *HTTP) Provision(_ context.Context, c *component.Context) error {
	opts := tool.HTTPOptions{Timeout: h.Timeout.D(), MaxBody: h.MaxBody}
	if len(h.AllowHosts) > 0 {
		hosts := slices.Clone(h.AllowHosts)
		opts.Allow = func(u *url.URL) bool {
			return slices.ContainsFunc(hosts, func(h string) bool {
				return strings.EqualFold(h, u.Host) || strings.EqualFold(h, u.Hostname())
			})
		}
	}
	h.tool = tool.HTTP(c.HTTPClient(), opts) // nil: http.DefaultClient
	return nil
}

// Validate checks the bounds.
func (h *HTTP) Validate() error {
	if h.MaxBody < 0 {
		return errors.New("max_body: must not be negative")
	}
	return nil
}

// Tools returns http_request.
func (h *HTTP) Tools(context.Context) ([]*tool.Tool, error) {
	if h.tool == nil {
		return nil, errors.New("tools asked of a component that is not provisioned")
	}
	return []*tool.Tool{h.tool}, nil
}

// withPassword returns dsn with the password of pw, and refuses a DSN
// that holds a password itself.
func withPassword(c *component.Context, dsn string, pw component.Secret) (string, error) {
	isURL := strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
	isKV := !isURL && strings.Contains(dsn, "=")
	switch {
	case isURL:
		u, err := url.Parse(dsn)
		if err != nil {
			return "", errors.New("db: not a valid URL") // the error would echo it
		}
		if _, has := u.User.Password(); has || u.Query().Has("password") {
			return "", errors.New("db: the DSN holds a password: give it as password: {\"env\": \"VARIABLE\"} (or set PGPASSWORD)")
		}
		if pw.IsZero() {
			return dsn, nil
		}
		v, err := c.Secret(pw)
		if err != nil {
			return "", fmt.Errorf("password: %w", err)
		}
		name := ""
		if u.User != nil {
			name = u.User.Username()
		}
		u.User = url.UserPassword(name, v)
		return u.String(), nil
	case isKV:
		for _, f := range strings.Fields(dsn) {
			if k, _, _ := strings.Cut(f, "="); strings.EqualFold(strings.TrimSpace(k), "password") {
				return "", errors.New("db: the DSN holds a password: give it as password: {\"env\": \"VARIABLE\"} (or set PGPASSWORD)")
			}
		}
		if pw.IsZero() {
			return dsn, nil
		}
		v, err := c.Secret(pw)
		if err != nil {
			return "", fmt.Errorf("password: %w", err)
		}
		return dsn + " password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'", nil
	}
	if !pw.IsZero() {
		return "", errors.New("password: a SQLite file takes no password")
	}
	return dsn, nil
}
