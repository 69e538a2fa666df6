// Package searchtest is a conformance suite for search.Backend
// implementations. Run loads a small fixed dataset (Schema and Docs) into a
// fresh index and asserts Elasticsearch's semantics for every construct of
// the DSL subset documented in search/DSL.md: which documents match, the
// totals, the order of sorted results, paging and _source filtering.
//
// The expectations are Elasticsearch's, so the suite can run against a real
// cluster (search/es) as well as the embedded backend (search/bleve).
package searchtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/search"
)

// Schema returns the schema of the conformance dataset.
func Schema() search.Schema {
	return search.Schema{Fields: map[string]search.Field{
		"name":           {Type: search.Text, Fields: map[string]search.Field{"keyword": {Type: search.Keyword}}},
		"category":       {Type: search.Keyword},
		"tags":           {Type: search.Keyword},
		"price":          {Type: search.Double},
		"qty":            {Type: search.Long},
		"created":        {Type: search.Date},
		"in_stock":       {Type: search.Boolean},
		"origin.port":    {Type: search.Keyword},
		"origin.country": {Type: search.Keyword},
		"notes":          {Type: search.Text},
	}}
}

// Docs returns the conformance dataset: ten documents with IDs "1" to "10".
// Some members are missing on purpose (notes, tags, in_stock, origin), one
// tags array is empty, and "internal_code" is not in the schema.
func Docs() []search.Doc {
	raw := []string{
		`{"name": "Green coffee beans", "category": "coffee", "tags": ["organic", "fair-trade"], "price": 120.5, "qty": 300,
		  "created": "2024-01-15", "in_stock": true, "origin": {"port": "BRSSZ", "country": "BR"},
		  "notes": "Arabica beans from Santos", "internal_code": "X1"}`,
		`{"name": "Roasted coffee", "category": "coffee", "tags": ["organic"], "price": 250, "qty": 40,
		  "created": "2024-02-01T08:30:00Z", "in_stock": true, "origin": {"port": "COCTG", "country": "CO"}}`,
		`{"name": "Black tea leaves", "category": "tea", "tags": ["fair-trade"], "price": 80, "qty": 500,
		  "created": "2024-02-20", "in_stock": false, "origin": {"port": "LKCMB", "country": "LK"}, "notes": "Ceylon black tea"}`,
		`{"name": "Smartphone X200", "category": "electronics", "tags": [], "price": 699.99, "qty": 1200,
		  "created": "2024-03-05T23:59:59Z", "in_stock": true, "origin": {"port": "CNSZX", "country": "CN"}}`,
		`{"name": "Laptop Pro 15", "category": "electronics", "tags": ["refurbished"], "price": 1299, "qty": 0,
		  "created": "2024-03-31", "in_stock": false, "origin": {"port": "TWKHH", "country": "TW"},
		  "notes": "Refurbished laptops, coffee stains removed"}`,
		`{"name": "Coffee grinder", "category": "appliances", "tags": ["kitchen"], "price": 45, "qty": 75,
		  "created": "2024-04-10", "in_stock": true, "origin": {"port": "DEHAM", "country": "DE"}}`,
		`{"name": "Frozen shrimp", "category": "seafood", "price": 310, "qty": 800,
		  "created": "2023-12-31T23:00:00Z", "in_stock": true, "origin": {"port": "ECGYE", "country": "EC"}}`,
		`{"name": "Green tea", "category": "tea", "tags": ["organic"], "price": 95, "qty": 220,
		  "created": "2024-05-01", "origin": {"port": "JPTYO", "country": "JP"}}`,
		`{"name": "Cocoa beans", "category": "cocoa", "tags": ["fair-trade", "organic"], "price": 150, "qty": 1000,
		  "created": "2024-06-15", "in_stock": true, "origin": {"port": "CIABJ", "country": "CI"}, "notes": "Beans, not coffee"}`,
		`{"name": "Espresso machine", "category": "appliances", "tags": ["kitchen", "premium"], "price": 899, "qty": 12,
		  "created": "2024-07-04", "in_stock": true}`,
	}
	docs := make([]search.Doc, len(raw))
	for i, r := range raw {
		docs[i] = search.Doc{ID: fmt.Sprint(i + 1), Source: json.RawMessage(r)}
	}
	return docs
}

// Case is one conformance check: a request body and what Elasticsearch
// returns for it on the dataset.
type Case struct {
	Name string
	Body string
	// Total is the expected total (-1 for not tracked).
	Total int64
	// Relation is the expected total relation; "" means "eq" unless Total
	// is -1.
	Relation string
	// IDs are the expected hit IDs in order, when Ordered; otherwise the
	// expected set of hit IDs (nil means: do not check the hits).
	IDs     []string
	Ordered bool
	// Check runs extra assertions on the response.
	Check func(t *testing.T, r *search.Response)
}

func all() []string { return ids(1, 2, 3, 4, 5, 6, 7, 8, 9, 10) }

func ids(n ...int) []string {
	out := make([]string, len(n))
	for i, v := range n {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// Cases returns the conformance cases.
func Cases() []Case {
	return []Case{
		{Name: "match_all", Body: `{"query": {"match_all": {}}}`, Total: 10, IDs: all()},
		{Name: "empty body", Body: ``, Total: 10, IDs: all()},
		{Name: "default size is 10", Body: `{"query": {"match_all": {}}, "size": 3}`, Total: 10,
			Check: func(t *testing.T, r *search.Response) { wantLen(t, r, 3) }},

		// term, terms
		{Name: "term keyword", Body: `{"query": {"term": {"category": "coffee"}}}`, Total: 2, IDs: ids(1, 2)},
		{Name: "term keyword is case sensitive", Body: `{"query": {"term": {"category": "Coffee"}}}`, Total: 0, IDs: ids()},
		{Name: "term object form with boost", Body: `{"query": {"term": {"category": {"value": "tea", "boost": 2}}}}`, Total: 2, IDs: ids(3, 8)},
		{Name: "term on text matches a token", Body: `{"query": {"term": {"name": "coffee"}}}`, Total: 3, IDs: ids(1, 2, 6)},
		{Name: "term on text is not analyzed", Body: `{"query": {"term": {"name": "Coffee"}}}`, Total: 0, IDs: ids()},
		{Name: "term on keyword multi-field", Body: `{"query": {"term": {"name.keyword": "Green tea"}}}`, Total: 1, IDs: ids(8)},
		{Name: "term on object member", Body: `{"query": {"term": {"origin.country": "CN"}}}`, Total: 1, IDs: ids(4)},
		{Name: "term long", Body: `{"query": {"term": {"qty": 300}}}`, Total: 1, IDs: ids(1)},
		{Name: "term double from string", Body: `{"query": {"term": {"price": "120.5"}}}`, Total: 1, IDs: ids(1)},
		{Name: "term long with decimal part", Body: `{"query": {"term": {"qty": 300.5}}}`, Total: 0, IDs: ids()},
		{Name: "term boolean", Body: `{"query": {"term": {"in_stock": false}}}`, Total: 2, IDs: ids(3, 5)},
		{Name: "term boolean from string", Body: `{"query": {"term": {"in_stock": "true"}}}`, Total: 7, IDs: ids(1, 2, 4, 6, 7, 9, 10)},
		{Name: "term date matches the whole day", Body: `{"query": {"term": {"created": "2024-03-05"}}}`, Total: 1, IDs: ids(4)},
		{Name: "term on unmapped member", Body: `{"query": {"term": {"internal_code": "X1"}}}`, Total: 0, IDs: ids()},
		{Name: "terms", Body: `{"query": {"terms": {"category": ["tea", "cocoa"]}}}`, Total: 3, IDs: ids(3, 8, 9)},
		{Name: "terms on array field", Body: `{"query": {"terms": {"tags": ["kitchen", "refurbished"]}}}`, Total: 3, IDs: ids(5, 6, 10)},
		{Name: "terms empty", Body: `{"query": {"terms": {"tags": []}}}`, Total: 0, IDs: ids()},
		{Name: "ids", Body: `{"query": {"ids": {"values": ["3", "7", "42"]}}}`, Total: 2, IDs: ids(3, 7)},

		// match, match_phrase, multi_match
		{Name: "match", Body: `{"query": {"match": {"name": "coffee"}}}`, Total: 3, IDs: ids(1, 2, 6),
			Check: func(t *testing.T, r *search.Response) { wantScored(t, r) }},
		{Name: "match or", Body: `{"query": {"match": {"name": "COFFEE beans"}}}`, Total: 4, IDs: ids(1, 2, 6, 9),
			Check: func(t *testing.T, r *search.Response) {
				if len(r.Hits) > 0 && r.Hits[0].ID != "1" {
					t.Errorf("best hit = %s, want 1 (matches both terms)", r.Hits[0].ID)
				}
			}},
		{Name: "match and", Body: `{"query": {"match": {"name": {"query": "coffee beans", "operator": "and"}}}}`, Total: 1, IDs: ids(1)},
		{Name: "match minimum_should_match", Body: `{"query": {"match": {"name": {"query": "green coffee beans", "minimum_should_match": 2}}}}`, Total: 1, IDs: ids(1)},
		{Name: "match minimum_should_match percent", Body: `{"query": {"match": {"name": {"query": "green coffee beans", "minimum_should_match": "67%"}}}}`, Total: 1, IDs: ids(1)},
		{Name: "match on keyword is exact", Body: `{"query": {"match": {"category": "coffee"}}}`, Total: 2, IDs: ids(1, 2)},
		{Name: "match text field notes", Body: `{"query": {"match": {"notes": "beans"}}}`, Total: 2, IDs: ids(1, 9)},
		{Name: "match fuzziness AUTO", Body: `{"query": {"match": {"name": {"query": "cofee", "fuzziness": "AUTO"}}}}`, Total: 3, IDs: ids(1, 2, 6)},
		{Name: "match no tokens", Body: `{"query": {"match": {"name": "!!!"}}}`, Total: 0, IDs: ids()},
		{Name: "match no tokens zero_terms_query all", Body: `{"query": {"match": {"name": {"query": "!!!", "zero_terms_query": "all"}}}}`, Total: 10, IDs: all()},
		{Name: "match_phrase", Body: `{"query": {"match_phrase": {"name": "coffee beans"}}}`, Total: 1, IDs: ids(1)},
		{Name: "match_phrase order matters", Body: `{"query": {"match_phrase": {"name": "beans coffee"}}}`, Total: 0, IDs: ids()},
		{Name: "multi_match", Body: `{"query": {"multi_match": {"query": "coffee", "fields": ["name", "notes^2"]}}}`, Total: 5, IDs: ids(1, 2, 5, 6, 9)},

		// range
		{Name: "range double", Body: `{"query": {"range": {"price": {"gte": 100, "lte": 300}}}}`, Total: 3, IDs: ids(1, 2, 9)},
		{Name: "range gt", Body: `{"query": {"range": {"price": {"gt": 120.5}}}}`, Total: 6, IDs: ids(2, 4, 5, 7, 9, 10)},
		{Name: "range long lt", Body: `{"query": {"range": {"qty": {"lt": 50}}}}`, Total: 3, IDs: ids(2, 5, 10)},
		{Name: "range dates inclusive", Body: `{"query": {"range": {"created": {"gte": "2024-03-01", "lte": "2024-03-31"}}}}`, Total: 2, IDs: ids(4, 5)},
		{Name: "range date gt rounds up a day", Body: `{"query": {"range": {"created": {"gt": "2024-03-05"}}}}`, Total: 5, IDs: ids(5, 6, 8, 9, 10)},
		{Name: "range date lt", Body: `{"query": {"range": {"created": {"lt": "2024-01-01"}}}}`, Total: 1, IDs: ids(7)},
		{Name: "range date time_zone ahead", Body: `{"query": {"range": {"created": {"lt": "2024-01-01", "time_zone": "+02:00"}}}}`, Total: 0, IDs: ids()},
		{Name: "range date time_zone behind", Body: `{"query": {"range": {"created": {"lt": "2024-01-01", "time_zone": "-02:00"}}}}`, Total: 1, IDs: ids(7)},
		{Name: "range date now", Body: `{"query": {"range": {"created": {"lte": "now"}}}}`, Total: 10, IDs: all()},
		{Name: "range date after now", Body: `{"query": {"range": {"created": {"gte": "now+1d/d"}}}}`, Total: 0, IDs: ids()},
		{Name: "range date math round down", Body: `{"query": {"range": {"created": {"gte": "2024-03-31||/M"}}}}`, Total: 6, IDs: ids(4, 5, 6, 8, 9, 10)},
		{Name: "range date math round up", Body: `{"query": {"range": {"created": {"lte": "2024-02-01||/M"}}}}`, Total: 4, IDs: ids(1, 2, 3, 7)},
		{Name: "range date epoch millis", Body: `{"query": {"range": {"created": {"gte": 1717200000000}}}}`, Total: 2, IDs: ids(9, 10)},
		{Name: "range date format", Body: `{"query": {"range": {"created": {"gte": "01/06/2024", "format": "dd/MM/yyyy"}}}}`, Total: 2, IDs: ids(9, 10)},
		{Name: "range keyword", Body: `{"query": {"range": {"category": {"gte": "c", "lt": "d"}}}}`, Total: 3, IDs: ids(1, 2, 9)},

		// exists, prefix, wildcard
		{Name: "exists text", Body: `{"query": {"exists": {"field": "notes"}}}`, Total: 4, IDs: ids(1, 3, 5, 9)},
		{Name: "exists object", Body: `{"query": {"exists": {"field": "origin"}}}`, Total: 9, IDs: ids(1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{Name: "exists empty array is missing", Body: `{"query": {"exists": {"field": "tags"}}}`, Total: 8, IDs: ids(1, 2, 3, 5, 6, 8, 9, 10)},
		{Name: "exists boolean", Body: `{"query": {"exists": {"field": "in_stock"}}}`, Total: 9, IDs: ids(1, 2, 3, 4, 5, 6, 7, 9, 10)},
		{Name: "prefix keyword multi-field", Body: `{"query": {"prefix": {"name.keyword": "Green"}}}`, Total: 2, IDs: ids(1, 8)},
		{Name: "prefix keyword", Body: `{"query": {"prefix": {"category": {"value": "co"}}}}`, Total: 3, IDs: ids(1, 2, 9)},
		{Name: "wildcard", Body: `{"query": {"wildcard": {"category": {"value": "*ea*"}}}}`, Total: 3, IDs: ids(3, 7, 8)},
		{Name: "wildcard question mark", Body: `{"query": {"wildcard": {"name.keyword": "?offee*"}}}`, Total: 1, IDs: ids(6)},
		{Name: "wildcard object member", Body: `{"query": {"wildcard": {"origin.port": "CN*"}}}`, Total: 1, IDs: ids(4)},

		// bool
		{Name: "bool must filter", Body: `{"query": {"bool": {"must": {"term": {"category": "coffee"}}, "filter": [{"range": {"price": {"lt": 200}}}]}}}`, Total: 1, IDs: ids(1)},
		{Name: "bool should only", Body: `{"query": {"bool": {"should": [{"term": {"category": "tea"}}, {"term": {"category": "cocoa"}}]}}}`, Total: 3, IDs: ids(3, 8, 9)},
		{Name: "bool filter with optional should", Body: `{"query": {"bool": {"filter": {"term": {"in_stock": true}}, "should": {"term": {"category": "coffee"}}}}}`,
			Total: 7, IDs: ids(1, 2, 4, 6, 7, 9, 10),
			Check: func(t *testing.T, r *search.Response) {
				if len(r.Hits) < 2 {
					return
				}
				top := []string{r.Hits[0].ID, r.Hits[1].ID}
				slices.Sort(top)
				if !slices.Equal(top, ids(1, 2)) {
					t.Errorf("top hits = %v, want the should matches [1 2]", top)
				}
			}},
		{Name: "bool must_not", Body: `{"query": {"bool": {"must": {"match": {"name": "coffee"}}, "must_not": {"term": {"category": "appliances"}}}}}`, Total: 2, IDs: ids(1, 2)},
		{Name: "bool minimum_should_match", Body: `{"query": {"bool": {"should": [{"term": {"tags": "organic"}}, {"term": {"tags": "fair-trade"}}, {"term": {"category": "coffee"}}], "minimum_should_match": 2}}}`, Total: 3, IDs: ids(1, 2, 9)},
		{Name: "bool minimum_should_match above should count", Body: `{"query": {"bool": {"should": [{"term": {"category": "coffee"}}], "minimum_should_match": 2}}}`, Total: 0, IDs: ids()},
		{Name: "bool nested", Body: `{"query": {"bool": {"must": [{"bool": {"should": [{"term": {"category": "tea"}}, {"term": {"category": "coffee"}}]}}], "filter": [{"range": {"qty": {"gte": 100}}}]}}}`, Total: 3, IDs: ids(1, 3, 8)},
		{Name: "bool must_not only", Body: `{"query": {"bool": {"must_not": {"terms": {"category": ["coffee", "tea"]}}}}}`, Total: 6, IDs: ids(4, 5, 6, 7, 9, 10)},
		{Name: "bool must_not exists", Body: `{"query": {"bool": {"must_not": [{"exists": {"field": "notes"}}]}}}`, Total: 6, IDs: ids(2, 4, 6, 7, 8, 10)},
		{Name: "bool empty", Body: `{"query": {"bool": {}}}`, Total: 10, IDs: all()},
		{Name: "bool must matching nothing with should", Body: `{"query": {"bool": {"must": {"range": {"category": {"gte": "x"}}}, "should": {"term": {"category": "coffee"}}}}}`, Total: 0, IDs: ids()},
		{Name: "match_none", Body: `{"query": {"match_none": {}}}`, Total: 0, IDs: ids()},
		{Name: "constant_score", Body: `{"query": {"constant_score": {"filter": {"term": {"category": "tea"}}, "boost": 1.5}}}`, Total: 2, IDs: ids(3, 8),
			Check: func(t *testing.T, r *search.Response) {
				if len(r.Hits) == 2 && r.Hits[0].Score != r.Hits[1].Score {
					t.Errorf("constant_score scores differ: %v %v", r.Hits[0].Score, r.Hits[1].Score)
				}
			}},

		// sort and paging
		{Name: "sort asc", Body: `{"sort": [{"price": "asc"}], "size": 3}`, Total: 10, IDs: ids(6, 3, 8), Ordered: true},
		{Name: "sort desc object form", Body: `{"sort": [{"price": {"order": "desc"}}], "size": 3}`, Total: 10, IDs: ids(5, 10, 4), Ordered: true},
		{Name: "sort date with from", Body: `{"sort": {"created": "desc"}, "from": 2, "size": 2}`, Total: 10, IDs: ids(8, 6), Ordered: true},
		{Name: "sort string form", Body: `{"sort": "qty", "size": 3}`, Total: 10, IDs: ids(5, 10, 2), Ordered: true},
		{Name: "sort two keys", Body: `{"sort": [{"category": "asc"}, {"price": {"order": "desc"}}], "size": 4}`, Total: 10, IDs: ids(10, 6, 9, 2), Ordered: true},
		{Name: "sort with query", Body: `{"query": {"term": {"category": "coffee"}}, "sort": [{"qty": "asc"}]}`, Total: 2, IDs: ids(2, 1), Ordered: true},
		{Name: "sort multi-valued desc uses max, missing last", Body: `{"sort": [{"tags": "desc"}]}`, Total: 10,
			Check: func(t *testing.T, r *search.Response) {
				got := hitIDs(r)
				if len(got) != 10 {
					t.Fatalf("hits = %v", got)
				}
				if got[0] != "5" || got[1] != "10" {
					t.Errorf("first hits = %v, want [5 10]", got[:2])
				}
				last := []string{got[8], got[9]}
				slices.Sort(last)
				if !slices.Equal(last, ids(4, 7)) {
					t.Errorf("last hits = %v, want the documents without tags [4 7]", last)
				}
			}},
		{Name: "sort missing first", Body: `{"sort": [{"tags": {"order": "asc", "missing": "_first"}}], "size": 2}`, Total: 10, IDs: ids(4, 7)},
		{Name: "sort _score", Body: `{"query": {"match": {"name": "coffee beans"}}, "sort": ["_score"]}`, Total: 4,
			Check: func(t *testing.T, r *search.Response) { wantScored(t, r) }},
		{Name: "paging past the end", Body: `{"sort": [{"price": "asc"}], "from": 8, "size": 5}`, Total: 10, IDs: ids(10, 5), Ordered: true},
		{Name: "size 0", Body: `{"size": 0}`, Total: 10, IDs: ids()},
		{Name: "track_total_hits false", Body: `{"track_total_hits": false, "size": 1}`, Total: -1},
		{Name: "track_total_hits limit", Body: `{"track_total_hits": 3, "size": 1}`, Total: 3, Relation: "gte"},
		{Name: "track_total_hits true", Body: `{"track_total_hits": true, "size": 1}`, Total: 10},

		// _source
		{Name: "_source includes", Body: `{"query": {"ids": {"values": ["1"]}}, "_source": ["name", "origin.*"]}`, Total: 1, IDs: ids(1),
			Check: func(t *testing.T, r *search.Response) {
				src := sourceOf(t, r, 0)
				if got := slices.Sorted(maps.Keys(src)); !slices.Equal(got, []string{"name", "origin"}) {
					t.Errorf("_source keys = %v, want [name origin]", got)
				}
				if o, _ := src["origin"].(map[string]any); len(o) != 2 {
					t.Errorf("_source origin = %v, want port and country", src["origin"])
				}
			}},
		{Name: "_source excludes", Body: `{"query": {"ids": {"values": ["1"]}}, "_source": {"excludes": ["notes", "origin"]}}`, Total: 1, IDs: ids(1),
			Check: func(t *testing.T, r *search.Response) {
				src := sourceOf(t, r, 0)
				if _, ok := src["notes"]; ok {
					t.Errorf("_source has notes: %v", src)
				}
				if _, ok := src["origin"]; ok {
					t.Errorf("_source has origin: %v", src)
				}
				if src["internal_code"] != "X1" {
					t.Errorf("_source lost the unmapped member: %v", src)
				}
			}},
		{Name: "_source false", Body: `{"query": {"ids": {"values": ["1"]}}, "_source": false}`, Total: 1, IDs: ids(1),
			Check: func(t *testing.T, r *search.Response) {
				if len(r.Hits) == 1 && len(r.Hits[0].Source) != 0 {
					t.Errorf("_source = %s, want none", r.Hits[0].Source)
				}
			}},
		{Name: "full _source", Body: `{"query": {"ids": {"values": ["10"]}}}`, Total: 1, IDs: ids(10),
			Check: func(t *testing.T, r *search.Response) {
				src := sourceOf(t, r, 0)
				if src["name"] != "Espresso machine" || len(src) != 7 {
					t.Errorf("_source = %v", src)
				}
			}},
	}
}

func hitIDs(r *search.Response) []string {
	out := make([]string, len(r.Hits))
	for i, h := range r.Hits {
		out[i] = h.ID
	}
	return out
}

func wantLen(t *testing.T, r *search.Response, n int) {
	t.Helper()
	if len(r.Hits) != n {
		t.Errorf("got %d hits, want %d", len(r.Hits), n)
	}
}

func wantScored(t *testing.T, r *search.Response) {
	t.Helper()
	for i, h := range r.Hits {
		if h.Score <= 0 {
			t.Errorf("hit %d (%s) has score %v, want > 0", i, h.ID, h.Score)
		}
		if i > 0 && h.Score > r.Hits[i-1].Score {
			t.Errorf("hits not in descending score order: %v after %v", h.Score, r.Hits[i-1].Score)
		}
	}
}

func sourceOf(t *testing.T, r *search.Response, i int) map[string]any {
	t.Helper()
	if len(r.Hits) <= i {
		t.Fatalf("no hit %d", i)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Hits[i].Source, &m); err != nil {
		t.Fatalf("hit %d _source %q: %v", i, r.Hits[i].Source, err)
	}
	return m
}

// Run creates an index on the backend returned by newBackend, loads the
// dataset and runs every case as a subtest. The backend must implement
// search.IndexManager; the index is deleted at the end.
func Run(t *testing.T, newBackend func(t *testing.T) search.Backend) {
	t.Helper()
	b := newBackend(t)
	im, ok := b.(search.IndexManager)
	if !ok {
		t.Fatalf("%T does not implement search.IndexManager", b)
	}
	ctx := context.Background()
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	index := "weft-searchtest-" + hex.EncodeToString(suffix[:])
	if err := im.CreateIndex(ctx, index, Schema()); err != nil {
		t.Fatalf("CreateIndex: %v", err)
	}
	t.Cleanup(func() {
		if err := im.DeleteIndex(context.Background(), index); err != nil {
			t.Errorf("DeleteIndex: %v", err)
		}
	})
	if err := b.Index(ctx, index, Docs()); err != nil {
		t.Fatalf("Index: %v", err)
	}
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			r, err := b.Search(ctx, index, []byte(c.Body))
			if err != nil {
				t.Fatalf("Search(%s): %v", c.Body, err)
			}
			checkCase(t, c, r)
		})
	}
	t.Run("errors", func(t *testing.T) {
		if _, err := b.Search(ctx, index, []byte(`{"query": {"term": `)); err == nil {
			t.Error("malformed JSON: no error")
		}
		_, err := b.Search(ctx, index+"-missing", []byte(`{}`))
		var nf *search.IndexNotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("missing index: error %v (%T), want a *search.IndexNotFoundError", err, err)
		}
		if _, err := b.Search(ctx, index, []byte(`{"from": 9995, "size": 10}`)); err == nil {
			t.Error("from+size beyond the result window: no error")
		}
	})
	t.Run("replace document", func(t *testing.T) {
		idx2 := index + "-replace"
		if err := im.CreateIndex(ctx, idx2, Schema()); err != nil {
			t.Fatalf("CreateIndex: %v", err)
		}
		defer func() { _ = im.DeleteIndex(ctx, idx2) }()
		docs := Docs()[:2]
		if err := b.Index(ctx, idx2, docs); err != nil {
			t.Fatal(err)
		}
		repl := search.Doc{ID: "1", Source: json.RawMessage(`{"name": "Decaf coffee", "category": "decaf"}`)}
		if err := b.Index(ctx, idx2, []search.Doc{repl}); err != nil {
			t.Fatal(err)
		}
		r, err := b.Search(ctx, idx2, []byte(`{"query": {"term": {"category": "coffee"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		checkCase(t, Case{Total: 1, IDs: ids(2)}, r)
		r, err = b.Search(ctx, idx2, []byte(`{"query": {"match": {"name": "decaf"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		checkCase(t, Case{Total: 1, IDs: ids(1)}, r)
	})
}

func checkCase(t *testing.T, c Case, r *search.Response) {
	t.Helper()
	rel := c.Relation
	if rel == "" && c.Total >= 0 {
		rel = "eq"
	}
	if r.Total != c.Total || r.TotalRelation != rel {
		t.Errorf("total = %d (%q), want %d (%q)", r.Total, r.TotalRelation, c.Total, rel)
	}
	if c.IDs != nil {
		got := hitIDs(r)
		want := slices.Clone(c.IDs)
		if !c.Ordered {
			slices.Sort(got)
			slices.Sort(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("hits = [%s], want [%s]", strings.Join(got, " "), strings.Join(want, " "))
		}
	}
	if c.Check != nil {
		c.Check(t, r)
	}
}
