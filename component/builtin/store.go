package builtin

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
	"github.com/weftlang/weft/search/es"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/postgres"
	"github.com/weftlang/weft/store/sqlite"
)

// storeHolder is what the store.* modules share: the store, closed once.
type storeHolder struct{ st store.Store }

// Store returns the store (nil before Provision and after Close).
func (h *storeHolder) Store() store.Store { return h.st }

// Close closes the store; a second call does nothing.
func (h *storeHolder) Close() error {
	if h.st == nil {
		return nil
	}
	err := h.st.Close()
	h.st = nil
	return err
}

// SQLiteStore is the config of store.sqlite.
type SQLiteStore struct {
	// Path is the SQLite file, created when missing (its directory must
	// exist). Required.
	Path string `json:"path"`
	storeHolder
}

// Provision opens the file, migrating an older schema.
func (s *SQLiteStore) Provision(ctx context.Context, _ *component.Context) error {
	if s.Path == "" {
		return errors.New("path: required")
	}
	st, err := sqlite.Open(ctx, strings.TrimPrefix(s.Path, "sqlite:"))
	if err != nil {
		return err
	}
	s.st = st
	return nil
}

// PostgresStore is the config of store.postgres.
type PostgresStore struct {
	// DSN is a postgres:// URL (or key=value DSN) without a password.
	// Required.
	DSN string `json:"dsn"`
	// Password is the password; without it PGPASSWORD or ~/.pgpass
	// supplies one.
	Password component.Secret `json:"password,omitzero"`
	storeHolder
}

// Provision connects, migrating an older schema.
func (p *PostgresStore) Provision(ctx context.Context, c *component.Context) error {
	if p.DSN == "" {
		return errors.New("dsn: required")
	}
	dsn, err := withPassword(c, p.DSN, p.Password)
	if err != nil {
		return err
	}
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("opening %s: %w", redact.DSN(dsn), err)
	}
	p.st = st
	return nil
}

// MemoryStore is the config of store.memory (it has no fields): a store
// in memory, for tests and runs that need no durability.
type MemoryStore struct{ storeHolder }

// Provision makes the store.
func (m *MemoryStore) Provision(context.Context, *component.Context) error {
	m.st = memory.New()
	return nil
}

// Bleve is the config of search.bleve: embedded Bleve indexes.
type Bleve struct {
	// Dir holds one subdirectory per index; empty keeps the indexes in
	// memory, lost on Close.
	Dir string `json:"dir,omitempty"`
	// StrictFields makes a query on a field no schema has an error.
	StrictFields bool `json:"strict_fields,omitempty"`

	b *blevesearch.Backend
}

// Provision opens the indexes.
func (b *Bleve) Provision(context.Context, *component.Context) error {
	be, err := blevesearch.New(blevesearch.Options{Dir: b.Dir, StrictFields: b.StrictFields})
	if err != nil {
		return err
	}
	b.b = be
	return nil
}

// Backend returns the backend.
func (b *Bleve) Backend() search.Backend { return b.b }

// Close closes the indexes; a second call does nothing.
func (b *Bleve) Close() error {
	if b.b == nil {
		return nil
	}
	err := b.b.Close()
	b.b = nil
	return err
}

// Elasticsearch is the config of search.elasticsearch.
type Elasticsearch struct {
	// Addresses are the nodes' URLs, without credentials; empty means
	// es.DefaultAddress.
	Addresses []string `json:"addresses,omitempty"`
	// Username and Password authenticate with HTTP Basic authentication.
	Username string           `json:"username,omitempty"`
	Password component.Secret `json:"password,omitzero"`
	// APIKey is an encoded API key, used instead of a password.
	APIKey component.Secret `json:"api_key,omitzero"`

	b *es.Backend
}

// Provision resolves the credentials and makes the client (it connects
// at the first request).
func (e *Elasticsearch) Provision(_ context.Context, c *component.Context) error {
	addrs := e.Addresses
	if len(addrs) == 0 {
		// Not ELASTICSEARCH_URL: a component's config says where it goes.
		addrs = []string{es.DefaultAddress}
	}
	for i, a := range addrs {
		u, err := url.Parse(a)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("addresses[%d]: not an http(s) URL", i)
		}
		if u.User != nil {
			return fmt.Errorf("addresses[%d]: holds credentials: give username and password", i)
		}
	}
	opts := es.Options{Addresses: addrs, Username: e.Username, Transport: c.Transport(nil)}
	var err error
	if !e.Password.IsZero() {
		if opts.Password, err = c.Secret(e.Password); err != nil {
			return fmt.Errorf("password: %w", err)
		}
	}
	if !e.APIKey.IsZero() {
		if opts.APIKey, err = c.Secret(e.APIKey); err != nil {
			return fmt.Errorf("api_key: %w", err)
		}
	}
	b, err := es.New(opts)
	if err != nil {
		return err
	}
	e.b = b
	return nil
}

// Validate checks that a password comes with a user name.
func (e *Elasticsearch) Validate() error {
	if !e.Password.IsZero() && e.Username == "" {
		return errors.New("password: given without a username")
	}
	return nil
}

// Backend returns the backend.
func (e *Elasticsearch) Backend() search.Backend { return e.b }
