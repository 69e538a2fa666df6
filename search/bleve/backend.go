// Package blevesearch is a search.Backend that runs a documented subset of
// the Elasticsearch query DSL (search/DSL.md) on embedded Bleve v2 indexes,
// kept in memory or in a directory, with no server.
//
// Every index has an explicit search.Schema: keyword fields are exact terms,
// text fields are analyzed like Elasticsearch's standard analyzer, date and
// numeric fields support ranges, and unmapped members of a document stay in
// its _source without being searchable. Scoring uses BM25, like
// Elasticsearch, but scores are not numerically equal to Elasticsearch's.
//
//	b, err := blevesearch.New(blevesearch.Options{})
//	err = b.CreateIndex(ctx, "shipments", schema)
//	err = b.Index(ctx, "shipments", docs)
//	res, err := b.Search(ctx, "shipments", []byte(`{"query": {"term": {"status": "delayed"}}}`))
package blevesearch

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/weftlang/weft/search"
)

// schemaKey is the internal key under which an index keeps its schema.
const schemaKey = "weft.schema"

// batchSize is the number of documents per Bleve batch.
const batchSize = 2000

// maxIDBytes is Elasticsearch's limit on the length of a document ID.
const maxIDBytes = 512

// Options configure a Backend.
type Options struct {
	// Dir is the directory holding one subdirectory per index. Empty keeps
	// every index in memory, lost on Close. In memory, segments are never
	// merged: prefer few large Index calls to many small ones.
	Dir string
	// Now returns the instant "now" stands for in date math; nil means
	// time.Now.
	Now func() time.Time
	// StrictFields makes queries on fields absent from an index's schema a
	// *search.QueryError listing the known fields, instead of matching
	// nothing as Elasticsearch does. Useful when an LLM writes the queries.
	StrictFields bool
}

// Error reports a failure of the underlying Bleve index (I/O, a pattern too
// complex to run, a cancelled context). Err is the cause; errors.Is sees
// context.Canceled and context.DeadlineExceeded through it.
type Error struct {
	Op    string // "search", "index", "create", "delete" or "open"
	Index string
	Err   error
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("blevesearch: %s [%s]: %v", e.Op, e.Index, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Backend is a search.Backend and search.IndexManager over embedded Bleve
// indexes. It is safe for concurrent use.
type Backend struct {
	opts Options

	mu      sync.RWMutex
	indexes map[string]*bindex
	closed  bool
}

type bindex struct {
	idx     bleve.Index
	schema  search.Schema
	builder *docBuilder
}

var (
	_ search.Backend      = (*Backend)(nil)
	_ search.IndexManager = (*Backend)(nil)
)

// New returns a Backend. With a Dir, the indexes already in it are opened.
func New(opts Options) (*Backend, error) {
	b := &Backend{opts: opts, indexes: map[string]*bindex{}}
	if opts.Dir == "" {
		return b, nil
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	entries, err := os.ReadDir(opts.Dir)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	for _, e := range entries {
		if !e.IsDir() || validIndexName(e.Name()) != nil {
			continue
		}
		path := filepath.Join(opts.Dir, e.Name())
		if _, err := os.Stat(filepath.Join(path, "index_meta.json")); err != nil {
			continue
		}
		idx, err := bleve.Open(path)
		if err != nil {
			b.closeAll()
			return nil, &Error{Op: "open", Index: e.Name(), Err: err}
		}
		raw, err := idx.GetInternal([]byte(schemaKey))
		var schema search.Schema
		if err == nil {
			err = json.Unmarshal(raw, &schema)
		}
		if err == nil {
			err = schema.Validate()
		}
		if err != nil {
			_ = idx.Close()
			b.closeAll()
			return nil, &Error{Op: "open", Index: e.Name(), Err: fmt.Errorf("reading the stored schema: %w", err)}
		}
		b.indexes[e.Name()] = &bindex{idx: idx, schema: schema, builder: newDocBuilder(schema)}
	}
	return b, nil
}

// validIndexName applies Elasticsearch's rules for index names.
func validIndexName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("invalid index name [%s]", name)
	case len(name) > 255:
		return fmt.Errorf("index name [%s] is longer than 255 bytes", name)
	case strings.ToLower(name) != name:
		return fmt.Errorf("index name [%s] must be lowercase", name)
	case strings.ContainsAny(name[:1], "-_+"):
		return fmt.Errorf("index name [%s] must not start with '-', '_' or '+'", name)
	case strings.ContainsAny(name, "\\/*?\"<>| ,#:\x00"):
		return fmt.Errorf(`index name [%s] must not contain \, /, *, ?, ", <, >, |, space, comma, # or :`, name)
	}
	return nil
}

func (b *Backend) get(name string) (*bindex, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, &Error{Op: "use", Index: name, Err: errors.New("backend is closed")}
	}
	ix, ok := b.indexes[name]
	if !ok {
		return nil, &search.IndexNotFoundError{Index: name}
	}
	return ix, nil
}

// CreateIndex creates an index with the given schema. Creating an existing
// index with an equal schema does nothing; with another schema it is a
// *search.SchemaError.
func (b *Backend) CreateIndex(ctx context.Context, name string, schema search.Schema) error {
	if err := validIndexName(name); err != nil {
		return &search.QueryError{Msg: err.Error()}
	}
	if err := schema.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &Error{Op: "create", Index: name, Err: err}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return &Error{Op: "create", Index: name, Err: errors.New("backend is closed")}
	}
	if ix, ok := b.indexes[name]; ok {
		if ix.schema.Equal(schema) {
			return nil
		}
		return &search.SchemaError{Msg: fmt.Sprintf("index [%s] already exists with a different schema", name)}
	}
	var idx bleve.Index
	var err error
	if b.opts.Dir == "" {
		// Scorch without a path keeps its segments in memory; it is far
		// faster than bleve.NewMemOnly's upsidedown/gtreap store.
		idx, err = bleve.NewUsing("", indexMapping(), scorch.Name, scorch.Name, nil)
	} else {
		idx, err = bleve.New(filepath.Join(b.opts.Dir, name), indexMapping())
	}
	if err != nil {
		return &Error{Op: "create", Index: name, Err: err}
	}
	raw, err := json.Marshal(schema)
	if err == nil {
		err = idx.SetInternal([]byte(schemaKey), raw)
	}
	if err != nil {
		_ = idx.Close()
		return &Error{Op: "create", Index: name, Err: err}
	}
	b.indexes[name] = &bindex{idx: idx, schema: schema, builder: newDocBuilder(schema)}
	return nil
}

// DeleteIndex closes an index and removes its files.
func (b *Backend) DeleteIndex(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: "delete", Index: name, Err: err}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ix, ok := b.indexes[name]
	if !ok || b.closed {
		return &search.IndexNotFoundError{Index: name}
	}
	delete(b.indexes, name)
	err := ix.idx.Close()
	if b.opts.Dir != "" {
		err = errors.Join(err, os.RemoveAll(filepath.Join(b.opts.Dir, name)))
	}
	if err != nil {
		return &Error{Op: "delete", Index: name, Err: err}
	}
	return nil
}

// Schema returns the schema of an index.
func (b *Backend) Schema(name string) (search.Schema, error) {
	ix, err := b.get(name)
	if err != nil {
		return search.Schema{}, err
	}
	return ix.schema, nil
}

// Indexes returns the names of the indexes, sorted.
func (b *Backend) Indexes() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return slices.Sorted(maps.Keys(b.indexes))
}

// Index adds or replaces documents. Documents that do not fit the schema are
// skipped and reported in a *search.BulkError, the others are indexed, as in
// an Elasticsearch bulk request. A document with an empty ID gets a random
// one.
func (b *Backend) Index(ctx context.Context, name string, docs []search.Doc) error {
	ix, err := b.get(name)
	if err != nil {
		return err
	}
	var failed []search.DocError
	batch := ix.idx.NewBatch()
	flush := func() error {
		if batch.Size() == 0 {
			return nil
		}
		if err := ix.idx.Batch(batch); err != nil {
			return &Error{Op: "index", Index: name, Err: err}
		}
		batch.Reset()
		return nil
	}
	for i, d := range docs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return &Error{Op: "index", Index: name, Err: err}
			}
		}
		id := d.ID
		if id == "" {
			if id, err = randomID(); err != nil {
				return &Error{Op: "index", Index: name, Err: err}
			}
		}
		if len(id) > maxIDBytes {
			failed = append(failed, search.DocError{ID: d.ID, Position: i, Type: "illegal_argument_exception",
				Reason: fmt.Sprintf("id is too long, must be no longer than %d bytes but was: %d", maxIDBytes, len(id))})
			continue
		}
		doc, derr := ix.builder.build(id, d.Source)
		if derr != nil {
			failed = append(failed, search.DocError{ID: d.ID, Position: i, Type: derr.typ, Reason: derr.reason})
			continue
		}
		if err := batch.IndexAdvanced(doc); err != nil {
			return &Error{Op: "index", Index: name, Err: err}
		}
		if batch.Size() >= batchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return &search.BulkError{Index: name, Failed: failed, Total: len(docs)}
	}
	return nil
}

// randomID returns a 20-character URL-safe ID, like Elasticsearch's.
func randomID() (string, error) {
	var buf [15]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(buf[:]), nil
}

// Search translates body (see Translate and search/DSL.md) and runs it.
func (b *Backend) Search(ctx context.Context, name string, body []byte) (*search.Response, error) {
	ix, err := b.get(name)
	if err != nil {
		return nil, err
	}
	var now time.Time
	if b.opts.Now != nil {
		now = b.opts.Now()
	}
	req, err := Translate(body, ix.schema, TranslateOptions{Now: now, StrictFields: b.opts.StrictFields})
	if err != nil {
		return nil, err
	}
	return ix.run(ctx, name, req)
}

func (ix *bindex) run(ctx context.Context, name string, req *Request) (*search.Response, error) {
	sr := req.Search
	if !req.source.disabled {
		sr.Fields = []string{sourceField}
	}
	res, err := ix.idx.SearchInContext(ctx, sr)
	if err != nil {
		return nil, &Error{Op: "search", Index: name, Err: err}
	}
	out := &search.Response{
		Total:         int64(res.Total),
		TotalRelation: "eq",
		From:          req.From,
		Size:          req.Size,
		Hits:          make([]search.Hit, 0, len(res.Hits)),
	}
	switch {
	case req.TrackTotalHits == 0:
		out.Total, out.TotalRelation = -1, ""
	case req.TrackTotalHits > 0 && out.Total > req.TrackTotalHits:
		out.Total, out.TotalRelation = req.TrackTotalHits, "gte"
	}
	for _, h := range res.Hits {
		hit := search.Hit{Index: name, ID: h.ID}
		if req.Scored {
			hit.Score = h.Score
			out.MaxScore = max(out.MaxScore, h.Score)
		}
		if src, ok := h.Fields[sourceField].(string); ok {
			hit.Source = req.source.apply([]byte(src))
		}
		out.Hits = append(out.Hits, hit)
	}
	return out, nil
}

// Close closes every index. In-memory indexes are lost.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	return b.closeAll()
}

func (b *Backend) closeAll() error {
	var errs []error
	for name, ix := range b.indexes {
		if err := ix.idx.Close(); err != nil {
			errs = append(errs, &Error{Op: "close", Index: name, Err: err})
		}
	}
	clear(b.indexes)
	return errors.Join(errs...)
}
