package retrieval

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/weftlang/weft/llm"
)

// DefaultK is the number of hits a Query with K <= 0 asks for.
const DefaultK = 10

// DefaultTitleWeight is the BM25 weight of a document's Title relative to
// its Text (weight 1) when Options.TitleWeight is 0.
const DefaultTitleWeight = 2

// embedBatch is the most texts Add sends to the Embedder in one request.
const embedBatch = 64

// Document is one unit of retrieval.
type Document struct {
	// ID identifies the document; adding a document with an existing ID
	// replaces it. Required.
	ID string `json:"id"`
	// Text is the document's body, what a reader (or an LLM) is given.
	Text string `json:"text"`
	// Title is optional: a field matched with Options.TitleWeight times
	// the weight of Text, for a heading or the names of what the document
	// is about (LoadTATQA puts a table's row-label and column-header
	// pairs there).
	Title string `json:"title,omitempty"`
	// Meta holds metadata that Query.Filter selects on (e.g. "company",
	// "year"), returned with the document.
	Meta map[string]string `json:"meta,omitempty"`
}

// Mode says how Search ranks documents.
type Mode int

// The search modes.
const (
	// Auto is Hybrid on an Index with an Embedder, Keyword otherwise.
	Auto Mode = iota
	// Keyword ranks by BM25 over the full-text index.
	Keyword
	// Vector ranks by the cosine similarity of the query's embedding to
	// each document's (exactly, over every document that has one).
	Vector
	// Hybrid fuses the Keyword and Vector rankings by reciprocal rank.
	Hybrid
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case Auto:
		return "auto"
	case Keyword:
		return "keyword"
	case Vector:
		return "vector"
	case Hybrid:
		return "hybrid"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Query is one search.
type Query struct {
	// Text is the user's or the model's query, any text: it is split into
	// terms, never parsed as FTS5 syntax. A text without letters or
	// digits finds nothing.
	Text string
	// K is the most hits to return; K <= 0 means DefaultK.
	K int
	// Filter restricts the search to documents whose metadata match: for
	// every key, the document's value must be one of the listed values
	// (an empty list only asks that the key be present). Nil filters
	// nothing.
	Filter map[string][]string
	// Mode says how to rank; the zero value is Auto.
	Mode Mode
}

// Hit is one document found by Search.
type Hit struct {
	Document
	// Score is how well the document matches, higher is better, and
	// comparable within one result only: the negated BM25 score for
	// Keyword, the cosine similarity for Vector, the reciprocal-rank-
	// fusion score for Hybrid.
	Score float64
	// Rank is the hit's position in the result, from 1.
	Rank int
}

// Options configure an Index; the zero value (or nil) is the default.
type Options struct {
	// Embedder, when set, embeds every document Add is given and every
	// Vector or Hybrid query, and makes Auto mean Hybrid.
	Embedder llm.Embedder
	// EmbedModel is the model asked of Embedder; empty means its own.
	EmbedModel string
	// TitleWeight is the BM25 weight of a document's Title, relative to
	// its Text; 0 means DefaultTitleWeight. It must be positive.
	TitleWeight float64
}

// Index is a full-text (and, with an Embedder, vector) index of Documents
// in one SQLite database. Its methods are safe for concurrent use; an
// index file may be opened by several processes.
type Index struct {
	path        string
	writer      *sql.DB // one connection
	reader      *sql.DB // a pool; the writer itself for ":memory:"
	embedder    llm.Embedder
	model       string
	titleWeight float64
}

// dsn builds a modernc.org/sqlite data source name for path: a file: URI
// (so that '?' and '#' in a path are escaped) with the connection pragmas.
func dsn(path string, writer bool) string {
	p := path
	if p != ":memory:" {
		p = "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	}
	q := "?_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)"
	if writer && path != ":memory:" {
		q += "&_pragma=journal_mode(WAL)&_txlock=immediate"
	}
	return p + q
}

// Open opens the index at path, creating the file if it is missing and
// migrating its schema to SchemaVersion; ":memory:" gives a private
// in-memory index (whose searches run one at a time). opts may be nil.
// Close the Index when done.
func Open(ctx context.Context, path string, opts *Options) (*Index, error) {
	return open(ctx, path, opts, migrations())
}

// open opens path, migrating it through steps.
func open(ctx context.Context, path string, opts *Options, steps []migration) (*Index, error) {
	if path == "" {
		return nil, fmt.Errorf("retrieval: open: empty path: %w", ErrInvalid)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TitleWeight == 0 {
		o.TitleWeight = DefaultTitleWeight
	}
	if !(o.TitleWeight > 0) || math.IsInf(o.TitleWeight, 0) {
		return nil, fmt.Errorf("retrieval: open: TitleWeight %g: %w", o.TitleWeight, ErrInvalid)
	}
	writer, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("retrieval: open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	ix := &Index{path: path, writer: writer, reader: writer, embedder: o.Embedder, model: o.EmbedModel, titleWeight: o.TitleWeight}
	if path != ":memory:" {
		ix.reader, err = sql.Open("sqlite", dsn(path, false))
		if err != nil {
			writer.Close()
			return nil, fmt.Errorf("retrieval: open %s: %w", path, err)
		}
		n := max(4, runtime.GOMAXPROCS(0))
		ix.reader.SetMaxOpenConns(n)
		ix.reader.SetMaxIdleConns(n)
	}
	if err := writer.PingContext(ctx); err != nil {
		ix.Close()
		return nil, fmt.Errorf("retrieval: open %s: %w", path, err)
	}
	if err := migrate(ctx, writer, steps); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// Close closes the database. Calls after Close fail.
func (ix *Index) Close() error {
	err := ix.writer.Close()
	if ix.reader != ix.writer {
		if e := ix.reader.Close(); err == nil {
			err = e
		}
	}
	if err != nil {
		return fmt.Errorf("retrieval: close %s: %w", ix.path, err)
	}
	return nil
}

// Len returns the number of documents in the index.
func (ix *Index) Len(ctx context.Context) (int, error) {
	var n int
	if err := ix.reader.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&n); err != nil {
		return 0, fmt.Errorf("retrieval: count: %w", err)
	}
	return n, nil
}

// Add adds docs to the index in one transaction, replacing any document
// with the same ID (the last one wins when docs repeat an ID). With an
// Embedder, the documents are embedded first (title and text), in
// batches; an embedding failure is an *EmbedError and adds nothing.
func (ix *Index) Add(ctx context.Context, docs ...Document) error {
	if len(docs) == 0 {
		return nil
	}
	for i, d := range docs {
		if d.ID == "" {
			return fmt.Errorf("retrieval: add: document %d has no ID: %w", i, ErrInvalid)
		}
		for k := range d.Meta {
			if k == "" {
				return fmt.Errorf("retrieval: add: document %q has a metadata value with an empty key: %w", d.ID, ErrInvalid)
			}
		}
	}
	var vecs [][]float32
	if ix.embedder != nil {
		texts := make([]string, len(docs))
		for i, d := range docs {
			texts[i] = embedText(d)
		}
		var err error
		if vecs, err = ix.embed(ctx, texts); err != nil {
			return err
		}
	}
	tx, err := ix.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("retrieval: add: %w", err)
	}
	defer tx.Rollback()
	del, err := tx.PrepareContext(ctx, `DELETE FROM docs WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("retrieval: add: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO docs (id, title, text, meta, vec) VALUES (?, ?, ?, ?, ?) RETURNING seq`)
	if err != nil {
		return fmt.Errorf("retrieval: add: %w", err)
	}
	fts, err := tx.PrepareContext(ctx, `INSERT INTO fts (rowid, title, text) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("retrieval: add: %w", err)
	}
	meta, err := tx.PrepareContext(ctx, `INSERT INTO meta (key, value, doc) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("retrieval: add: %w", err)
	}
	for i, d := range docs {
		m := d.Meta
		if m == nil {
			m = map[string]string{}
		}
		mj, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("retrieval: add: document %q: %w", d.ID, err)
		}
		var vec []byte
		if vecs != nil {
			vec = encodeVector(vecs[i])
		}
		if _, err := del.ExecContext(ctx, d.ID); err != nil {
			return fmt.Errorf("retrieval: add: document %q: %w", d.ID, err)
		}
		var seq int64
		if err := ins.QueryRowContext(ctx, d.ID, d.Title, d.Text, string(mj), vec).Scan(&seq); err != nil {
			return fmt.Errorf("retrieval: add: document %q: %w", d.ID, err)
		}
		if _, err := fts.ExecContext(ctx, seq, normalize(d.Title), normalize(d.Text)); err != nil {
			return fmt.Errorf("retrieval: add: document %q: %w", d.ID, err)
		}
		for k, v := range d.Meta {
			if _, err := meta.ExecContext(ctx, k, v, seq); err != nil {
				return fmt.Errorf("retrieval: add: document %q: %w", d.ID, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("retrieval: add: %w", err)
	}
	return nil
}

// Delete removes the documents with the given IDs; IDs not in the index
// are ignored.
func (ix *Index) Delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	tx, err := ix.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("retrieval: delete: %w", err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM docs WHERE id = ?`, id); err != nil {
			return fmt.Errorf("retrieval: delete %q: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("retrieval: delete: %w", err)
	}
	return nil
}

// scored is a document's seq with its score in one ranking.
type scored struct {
	seq   int64
	score float64
}

// Search returns the documents that best match q, best first: at most
// q.K, none (and no error) when the text has no terms or nothing matches.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	k := q.K
	if k <= 0 {
		k = DefaultK
	}
	mode := q.Mode
	if mode == Auto {
		mode = Keyword
		if ix.embedder != nil {
			mode = Hybrid
		}
	}
	switch mode {
	case Keyword:
	case Vector, Hybrid:
		if ix.embedder == nil {
			return nil, fmt.Errorf("retrieval: %s search: %w", mode, ErrNoEmbedder)
		}
	default:
		return nil, fmt.Errorf("retrieval: search: unknown %v: %w", mode, ErrInvalid)
	}
	expr := matchExpr(q.Text)
	if expr == "" {
		return nil, nil
	}
	filter, args := filterSQL(q.Filter)
	var ranked []scored
	switch mode {
	case Keyword:
		var err error
		if ranked, err = ix.keyword(ctx, expr, filter, args, k); err != nil {
			return nil, err
		}
	case Vector, Hybrid:
		vecs, err := ix.embed(ctx, []string{q.Text})
		if err != nil {
			return nil, err
		}
		byVec, err := ix.vector(ctx, vecs[0], filter, args)
		if err != nil {
			return nil, err
		}
		if mode == Vector {
			ranked = byVec[:min(k, len(byVec))]
			break
		}
		depth := max(fusionDepth, 4*k)
		byWord, err := ix.keyword(ctx, expr, filter, args, depth)
		if err != nil {
			return nil, err
		}
		ranked = fuse(k, depth, byWord, byVec)
	}
	return ix.load(ctx, ranked)
}

// filterSQL turns a filter into SQL conditions on d.seq (each beginning
// " AND ") and their arguments, keys in order.
func filterSQL(f map[string][]string) (string, []any) {
	if len(f) == 0 {
		return "", nil
	}
	keys := make([]string, 0, len(f))
	for key := range f {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var b strings.Builder
	var args []any
	for _, key := range keys {
		vals := f[key]
		b.WriteString(" AND d.seq IN (SELECT doc FROM meta WHERE key = ?")
		args = append(args, key)
		if len(vals) > 0 {
			b.WriteString(" AND value IN (?")
			b.WriteString(strings.Repeat(", ?", len(vals)-1))
			b.WriteString(")")
			for _, v := range vals {
				args = append(args, v)
			}
		}
		b.WriteString(")")
	}
	return b.String(), args
}

// keyword returns the best limit documents by BM25 for the MATCH
// expression expr, restricted by filter.
func (ix *Index) keyword(ctx context.Context, expr, filter string, fargs []any, limit int) ([]scored, error) {
	query := `SELECT d.seq, -bm25(fts, ?, 1) AS score FROM fts JOIN docs d ON d.seq = fts.rowid
		WHERE fts MATCH ?` + filter + ` ORDER BY score DESC, d.seq LIMIT ?`
	args := make([]any, 0, len(fargs)+3)
	args = append(args, ix.titleWeight, expr)
	args = append(args, fargs...)
	args = append(args, limit)
	rows, err := ix.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("retrieval: search: %w", err)
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var s scored
		if err := rows.Scan(&s.seq, &s.score); err != nil {
			return nil, fmt.Errorf("retrieval: search: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("retrieval: search: %w", err)
	}
	return out, nil
}

// load fetches the documents of ranked, in order, as Hits.
func (ix *Index) load(ctx context.Context, ranked []scored) ([]Hit, error) {
	if len(ranked) == 0 {
		return nil, nil
	}
	args := make([]any, len(ranked))
	pos := make(map[int64]int, len(ranked))
	for i, s := range ranked {
		args[i] = s.seq
		pos[s.seq] = i
	}
	rows, err := ix.reader.QueryContext(ctx, `SELECT seq, id, title, text, meta FROM docs WHERE seq IN (?`+strings.Repeat(", ?", len(ranked)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("retrieval: search: load: %w", err)
	}
	defer rows.Close()
	hits := make([]Hit, len(ranked))
	found := 0
	for rows.Next() {
		var seq int64
		var d Document
		var meta string
		if err := rows.Scan(&seq, &d.ID, &d.Title, &d.Text, &meta); err != nil {
			return nil, fmt.Errorf("retrieval: search: load: %w", err)
		}
		if err := json.Unmarshal([]byte(meta), &d.Meta); err != nil {
			return nil, fmt.Errorf("retrieval: search: load %q: metadata: %w", d.ID, err)
		}
		if len(d.Meta) == 0 {
			d.Meta = nil
		}
		i := pos[seq]
		hits[i] = Hit{Document: d, Score: ranked[i].score, Rank: i + 1}
		found++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("retrieval: search: load: %w", err)
	}
	if found < len(ranked) {
		// A document was deleted between ranking and loading: drop it.
		hits = slices.DeleteFunc(hits, func(h Hit) bool { return h.Rank == 0 })
		for i := range hits {
			hits[i].Rank = i + 1
		}
	}
	return hits, nil
}
