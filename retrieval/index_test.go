package retrieval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// reports are the documents most tests index.
var reports = []Document{
	{ID: "acme-2019", Title: "Acme revenue", Text: "Acme total revenue grew to $1,452.4 million in fiscal 2019, driven by cloud services.", Meta: map[string]string{"company": "acme", "year": "2019"}},
	{ID: "acme-2018", Title: "Acme revenue", Text: "Acme total revenue was $1,146.2 million in fiscal 2018.", Meta: map[string]string{"company": "acme", "year": "2018"}},
	{ID: "globex-2019", Title: "Globex costs", Text: "Globex interest cost rose in 2019 as the company refinanced its long-term debt.", Meta: map[string]string{"company": "globex", "year": "2019"}},
	{ID: "initech-2019", Text: "Initech reported net income and earnings per share for 2019; cost of revenue fell.", Meta: map[string]string{"company": "initech", "year": "2019"}},
	{ID: "nometa", Text: "A note on leases, without metadata."},
}

// openMem returns an in-memory Index holding docs.
func openMem(t testing.TB, opts *Options, docs ...Document) *Index {
	t.Helper()
	ix, err := Open(t.Context(), ":memory:", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if err := ix.Add(t.Context(), docs...); err != nil {
		t.Fatal(err)
	}
	return ix
}

// ids returns the IDs of hits, in order.
func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

// search runs q on ix and fails t on an error.
func search(t testing.TB, ix *Index, q Query) []Hit {
	t.Helper()
	hits, err := ix.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return hits
}

func TestAddSearch(t *testing.T) {
	ix := openMem(t, nil, reports...)
	n, err := ix.Len(t.Context())
	if err != nil || n != len(reports) {
		t.Fatalf("Len = %d, %v; want %d", n, err, len(reports))
	}
	hits := search(t, ix, Query{Text: "What was Globex's interest cost?"})
	if len(hits) == 0 || hits[0].ID != "globex-2019" {
		t.Fatalf("hits = %v, want globex-2019 first", ids(hits))
	}
	if diff := cmp.Diff(reports[2], hits[0].Document); diff != "" {
		t.Errorf("hit's document (-added +found):\n%s", diff)
	}
	for i, h := range hits {
		if h.Rank != i+1 {
			t.Errorf("hit %d has Rank %d", i, h.Rank)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hit %d scores %g, more than hit %d's %g", i, h.Score, i-1, hits[i-1].Score)
		}
	}
	// A document without metadata comes back with nil Meta.
	hits = search(t, ix, Query{Text: "leases"})
	if diff := cmp.Diff([]Document{reports[4]}, docsOf(hits)); diff != "" {
		t.Errorf("leases (-want +got):\n%s", diff)
	}
}

func docsOf(hits []Hit) []Document {
	var out []Document
	for _, h := range hits {
		out = append(out, h.Document)
	}
	return out
}

func TestPhraseRanksAboveScatteredTerms(t *testing.T) {
	ix := openMem(t, nil,
		Document{ID: "scattered", Text: "Interest income rose. The cost of sales fell."},
		Document{ID: "phrase", Text: "The interest cost on the new notes rose."},
	)
	if got := ids(search(t, ix, Query{Text: "interest cost"})); !cmp.Equal(got, []string{"phrase", "scattered"}) {
		t.Errorf("hits = %v, want the phrase first", got)
	}
	// "cost of revenue": the words a stop word apart, in either order.
	ix = openMem(t, nil,
		Document{ID: "apart", Text: "Revenue grew; the cost of our cloud services fell."},
		Document{ID: "near", Text: "Revenue cost fell while services grew."},
	)
	if got := ids(search(t, ix, Query{Text: "cost of revenue"})); !cmp.Equal(got, []string{"near", "apart"}) {
		t.Errorf("hits = %v, want near first", got)
	}
}

func TestK(t *testing.T) {
	var docs []Document
	for i := range 25 {
		docs = append(docs, Document{ID: fmt.Sprint("d", i), Text: fmt.Sprintf("revenue note %d", i)})
	}
	ix := openMem(t, nil, docs...)
	for _, tc := range []struct{ k, want int }{{0, DefaultK}, {-1, DefaultK}, {3, 3}, {100, 25}} {
		if got := len(search(t, ix, Query{Text: "revenue", K: tc.k})); got != tc.want {
			t.Errorf("K %d: %d hits, want %d", tc.k, got, tc.want)
		}
	}
}

func TestUpsert(t *testing.T) {
	ix := openMem(t, nil, reports...)
	changed := Document{ID: "acme-2019", Text: "Acme discontinued its hardware line.", Meta: map[string]string{"company": "acme", "year": "2020"}}
	if err := ix.Add(t.Context(), changed); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.Len(t.Context()); n != len(reports) {
		t.Errorf("Len = %d after an upsert, want %d", n, len(reports))
	}
	if got := ids(search(t, ix, Query{Text: "hardware"})); !cmp.Equal(got, []string{"acme-2019"}) {
		t.Errorf("hardware: %v", got)
	}
	if got := ids(search(t, ix, Query{Text: "cloud services"})); len(got) != 0 {
		t.Errorf("the replaced text still matches: %v", got)
	}
	if got := ids(search(t, ix, Query{Text: "acme", Filter: map[string][]string{"year": {"2019"}}})); len(got) != 0 {
		t.Errorf("the replaced metadata still matches: %v", got)
	}
	hits := search(t, ix, Query{Text: "acme hardware", Filter: map[string][]string{"year": {"2020"}}})
	if diff := cmp.Diff([]Document{changed}, docsOf(hits)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// In one call, the last of repeated IDs wins.
	if err := ix.Add(t.Context(), Document{ID: "x", Text: "first"}, Document{ID: "x", Text: "second"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(search(t, ix, Query{Text: "first OR second"})); !cmp.Equal(got, []string{"x"}) {
		t.Errorf("repeated ID: %v", got)
	}
	if hits := search(t, ix, Query{Text: "first"}); len(hits) != 0 {
		t.Errorf("the first of repeated IDs was kept: %v", ids(hits))
	}
}

func TestDelete(t *testing.T) {
	ix := openMem(t, nil, reports...)
	if err := ix.Delete(t.Context(), "globex-2019", "no-such-id"); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.Len(t.Context()); n != len(reports)-1 {
		t.Errorf("Len = %d, want %d", n, len(reports)-1)
	}
	if got := ids(search(t, ix, Query{Text: "globex"})); len(got) != 0 {
		t.Errorf("deleted document found: %v", got)
	}
	if got := ids(search(t, ix, Query{Text: "2019", Filter: map[string][]string{"company": {"globex"}}})); len(got) != 0 {
		t.Errorf("deleted document's metadata matches: %v", got)
	}
}

func TestFilter(t *testing.T) {
	ix := openMem(t, nil, reports...)
	for _, tc := range []struct {
		name   string
		filter map[string][]string
		want   []string
	}{
		{"one value", map[string][]string{"company": {"acme"}}, []string{"acme-2019", "acme-2018"}},
		{"any of", map[string][]string{"company": {"globex", "initech"}}, []string{"globex-2019", "initech-2019"}},
		{"all keys", map[string][]string{"company": {"acme"}, "year": {"2018"}}, []string{"acme-2018"}},
		{"no match", map[string][]string{"company": {"umbrella"}}, nil},
		{"unknown key", map[string][]string{"sector": {"energy"}}, nil},
		{"key present", map[string][]string{"company": nil}, []string{"acme-2019", "acme-2018", "globex-2019", "initech-2019"}},
		{"empty", map[string][]string{}, []string{"acme-2019", "acme-2018", "globex-2019", "initech-2019"}},
		{"quotes in values", map[string][]string{"company": {`"acme" OR 1=1; --`}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits := search(t, ix, Query{Text: "revenue cost income interest 2019 2018", Filter: tc.filter})
			got := ids(hits)
			if diff := cmp.Diff(tc.want, got, sortStrings); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// sortStrings compares []string as sets.
var sortStrings = cmp.Transformer("sort", func(s []string) map[string]bool {
	m := make(map[string]bool)
	for _, x := range s {
		m[x] = true
	}
	return m
})

func TestEmptyQueries(t *testing.T) {
	ix := openMem(t, nil, reports...)
	for _, q := range []string{"", "   ", "?!...", `""`, `"`, "*", "()", "-- ;", "AND", "NEAR(", "^", "title:", "\x00", "\xff\xfe", "’—…"} {
		hits, err := ix.Search(t.Context(), Query{Text: q})
		if err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
		if q != "AND" && len(hits) != 0 {
			t.Errorf("Search(%q) = %v, want no hits", q, ids(hits))
		}
	}
	// Only stop words: they are searched rather than dropped.
	if hits := search(t, ix, Query{Text: "what was the"}); len(hits) == 0 {
		t.Errorf("a query of stop words found nothing")
	}
}

func TestOperatorsAreWords(t *testing.T) {
	ix := openMem(t, nil,
		Document{ID: "near", Text: "Stores near the coast."},
		Document{ID: "other", Text: "Inland stores."},
	)
	// NEAR, OR, AND, NOT, column filters and quotes are searched as words.
	for _, q := range []string{`NEAR(coast)`, `title:coast`, `"coast`, `coast NOT near`, `coast*`, `{title text}: coast`} {
		hits := search(t, ix, Query{Text: q})
		if len(hits) == 0 || hits[0].ID != "near" {
			t.Errorf("Search(%q) = %v, want near first", q, ids(hits))
		}
	}
}

func TestNumbers(t *testing.T) {
	ix := openMem(t, nil, reports...)
	for _, q := range []string{"1452.4", "1,452.4", "$1,452.4 million"} {
		hits := search(t, ix, Query{Text: q})
		if len(hits) == 0 || hits[0].ID != "acme-2019" {
			t.Errorf("Search(%q) = %v, want acme-2019 first", q, ids(hits))
		}
	}
}

func TestPersistence(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sub dir?#", "index.db")
	if _, err := Open(ctx, path, nil); err == nil {
		t.Fatalf("Open in a missing directory succeeded")
	}
	path = filepath.Join(t.TempDir(), "index ?#.db")
	ix, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(ctx, reports...); err != nil {
		t.Fatal(err)
	}
	want := search(t, ix, Query{Text: "acme revenue", Filter: map[string][]string{"year": {"2019"}}})
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if n, err := ix.Len(ctx); err != nil || n != len(reports) {
		t.Errorf("Len after reopening = %d, %v; want %d", n, err, len(reports))
	}
	got := search(t, ix, Query{Text: "acme revenue", Filter: map[string][]string{"year": {"2019"}}})
	if len(got) == 0 {
		t.Fatal("nothing found after reopening")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after reopening (-before +after):\n%s", diff)
	}
}

func TestMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v1.db")
	// An index at version 1, with a document written as version 1 did.
	ix, err := open(ctx, path, nil, migrations()[:1])
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(ctx, Document{ID: "old", Text: "Legacy revenue note."}); err == nil {
		t.Fatal("Add on a version 1 schema succeeded, want no vec column")
	}
	for _, s := range []string{
		`INSERT INTO docs (seq, id, title, text, meta) VALUES (1, 'old', '', 'Legacy revenue note.', '{"year":"2017"}')`,
		`INSERT INTO fts (rowid, title, text) VALUES (1, '', 'Legacy revenue note.')`,
		`INSERT INTO meta (key, value, doc) VALUES ('year', '2017', 1)`,
	} {
		if _, err := ix.writer.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if v := schemaVersion(t, ix); v != 1 {
		t.Fatalf("version %d, want 1", v)
	}
	ix.Close()

	ix, err = Open(ctx, path, &Options{Embedder: hashEmbedder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if v := schemaVersion(t, ix); v != SchemaVersion {
		t.Fatalf("version %d after Open, want %d", v, SchemaVersion)
	}
	hits := search(t, ix, Query{Text: "legacy revenue", Mode: Keyword, Filter: map[string][]string{"year": {"2017"}}})
	want := []Document{{ID: "old", Text: "Legacy revenue note.", Meta: map[string]string{"year": "2017"}}}
	if diff := cmp.Diff(want, docsOf(hits)); diff != "" {
		t.Errorf("the version 1 document after migrating (-want +got):\n%s", diff)
	}
	// The migrated index takes vectors; the old document has none.
	if err := ix.Add(ctx, Document{ID: "new", Text: "Fresh revenue note."}); err != nil {
		t.Fatal(err)
	}
	if got := ids(search(t, ix, Query{Text: "revenue note", Mode: Vector})); !cmp.Equal(got, []string{"new"}) {
		t.Errorf("vector search after migrating: %v, want [new]", got)
	}
}

func TestNewerSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "future.db")
	ix, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.writer.ExecContext(ctx, `UPDATE schema_version SET version = ?`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	_, err = Open(ctx, path, nil)
	var se *SchemaError
	if !errors.As(err, &se) || se.Version != SchemaVersion+1 || se.Known != SchemaVersion {
		t.Fatalf("Open of a newer index: %v, want a *SchemaError", err)
	}
}

func schemaVersion(t *testing.T, ix *Index) int {
	t.Helper()
	var v int
	if err := ix.writer.QueryRowContext(t.Context(), `SELECT version FROM schema_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestInvalid(t *testing.T) {
	ctx := t.Context()
	if _, err := Open(ctx, "", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open(\"\"): %v, want ErrInvalid", err)
	}
	for _, w := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := Open(ctx, ":memory:", &Options{TitleWeight: w}); !errors.Is(err, ErrInvalid) {
			t.Errorf("TitleWeight %g: %v, want ErrInvalid", w, err)
		}
	}
	ix := openMem(t, nil, reports...)
	if err := ix.Add(ctx, Document{Text: "no id"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Add without an ID: %v, want ErrInvalid", err)
	}
	if err := ix.Add(ctx, Document{ID: "k", Meta: map[string]string{"": "v"}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Add with an empty metadata key: %v, want ErrInvalid", err)
	}
	if n, _ := ix.Len(ctx); n != len(reports) {
		t.Errorf("a refused Add changed the index: Len %d", n)
	}
	if _, err := ix.Search(ctx, Query{Text: "revenue", Mode: Mode(42)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown mode: %v, want ErrInvalid", err)
	}
	for _, m := range []Mode{Vector, Hybrid} {
		if _, err := ix.Search(ctx, Query{Text: "revenue", Mode: m}); !errors.Is(err, ErrNoEmbedder) {
			t.Errorf("%v without an embedder: %v, want ErrNoEmbedder", m, err)
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ix.Search(canceled, Query{Text: "revenue"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search with a canceled context: %v", err)
	}
	ix.Close()
	if _, err := ix.Search(ctx, Query{Text: "revenue"}); err == nil {
		t.Errorf("Search after Close succeeded")
	}
}

func TestConcurrentSearch(t *testing.T) {
	ctx := t.Context()
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Add(ctx, reports...); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 6 {
		wg.Go(func() {
			for i := range 20 {
				if g == 0 {
					if err := ix.Add(ctx, Document{ID: fmt.Sprint("extra", i), Text: "extra revenue note"}); err != nil {
						errs <- err
						return
					}
					continue
				}
				hits, err := ix.Search(ctx, Query{Text: "acme revenue", Filter: map[string][]string{"company": {"acme"}}})
				if err != nil {
					errs <- err
					return
				}
				if len(hits) != 2 {
					errs <- fmt.Errorf("%d hits, want 2", len(hits))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
