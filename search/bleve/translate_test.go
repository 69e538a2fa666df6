package blevesearch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
	"github.com/weftlang/weft/search/searchtest"
)

func TestTranslateErrors(t *testing.T) {
	schema := searchtest.Schema()
	deep := `{"query": ` + strings.Repeat(`{"bool": {"must": `, 80) + `{"match_all": {}}` + strings.Repeat(`}}`, 80) + `}`
	cases := []struct {
		body string
		kind string // "unsupported", "query", "syntax"
		path string
		msg  string // substring of the message
	}{
		{`{"query": {"bool": {"must": [{"term": {"category": "x"}}, {"fuzzy": {"name": "x"}}]}}}`, "unsupported", "query.bool.must[1].fuzzy", ""},
		{`{"query": {"bool": {"filter": {"nested": {"path": "x", "query": {"match_all": {}}}}}}}`, "unsupported", "query.bool.filter.nested", ""},
		{`{"aggs": {"by_status": {"terms": {"field": "status"}}}}`, "unsupported", "aggs", ""},
		{`{"query": {"match_all": {}}, "highlight": {"fields": {"name": {}}}}`, "unsupported", "highlight", ""},
		{`{"query": {"term": {"category": {"value": "x", "case_insensitive": true}}}}`, "unsupported", "query.term.category.case_insensitive", ""},
		{`{"query": {"terms": {"category": {"index": "i", "id": "1", "path": "p"}}}}`, "unsupported", "query.terms.category", "lookup"},
		{`{"query": {"match_phrase": {"name": {"query": "a b", "slop": 2}}}}`, "unsupported", "query.match_phrase.name.slop", ""},
		{`{"query": {"match": {"name": {"query": "a", "fuzziness": "AUTO:3,6"}}}}`, "unsupported", "query.match.name.fuzziness", ""},
		{`{"query": {"bool": {"should": [{"match_all": {}}], "minimum_should_match": "2<75%"}}}`, "unsupported", "query.bool.minimum_should_match", ""},
		{`{"sort": [{"price": {"mode": "avg"}}]}`, "unsupported", "sort[0].price.mode", ""},
		{`{"query": {"range": {"created": {"gte": "2024-01-01", "format": "MMM d, yyyy"}}}}`, "unsupported", "query.range.created.format", ""},
		{`{"explain": true}`, "unsupported", "explain", ""},

		{`{"query": {"term": {"category": ["a"]}}}`, "query", "query.term.category", "got array"},
		{`{"query": {"term": {"category": {"boost": 2}}}}`, "query", "query.term.category", "[value] is required"},
		{`{"query": {"range": {"price": {"gte": "cheap"}}}}`, "query", "query.range.price.gte", "not a number"},
		{`{"query": {"range": {"created": {"gte": "yesterday"}}}}`, "query", "query.range.created.gte", "failed to parse date"},
		{`{"query": {"range": {"created": {"gte": "now-1x"}}}}`, "query", "query.range.created.gte", "unit"},
		{`{"query": {"range": {"created": {"gt": 1, "gte": 2}}}}`, "query", "query.range.created.gte", "both"},
		{`{"query": {"range": {"price": 5}}}`, "query", "query.range.price", "expected an object"},
		{`{"query": {"match": {"name": {"query": "a", "operator": "xor"}}}}`, "query", "query.match.name.operator", "xor"},
		{`{"query": {"match": {"name": {"operator": "and"}}}}`, "query", "query.match.name", "[query] is required"},
		{`{"query": {"bool": {"must": 5}}}`, "query", "query.bool.must", "got number"},
		{`{"query": {"bool": {"must": [{"term": {"category": "x"}}], "shuold": []}}}`, "query", "query.bool.shuold", "unknown parameter"},
		{`{"query": {"foo": {}}}`, "query", "query.foo", "unknown query"},
		{`{"query": {"term": {"category": "a"}, "match": {"name": "b"}}}`, "query", "query", "single query type"},
		{`{"query": {}}`, "query", "query", "expected a query type"},
		{`{"query": {"term": {"category": "a", "tags": "b"}}}`, "query", "query.term", "single field"},
		{`{"query": {"wildcard": {"price": "1*"}}}`, "query", "query.wildcard.price", "keyword and text"},
		{`{"query": {"term": {"qty": "many"}}}`, "query", "query.term.qty", "not a number"},
		{`{"query": {"term": {"in_stock": "yes"}}}`, "query", "query.term.in_stock", "boolean"},
		{`{"query": {"exists": {}}}`, "query", "query.exists", "[field] is required"},
		{`{"query": {"match_all": {"boost": -1}}}`, "query", "query.match_all.boost", "negative"},
		{`{"sort": [{"name": "asc"}]}`, "query", "sort[0].name", "name.keyword"},
		{`{"sort": [{"price": "up"}]}`, "query", "sort[0].price", "asc or desc"},
		{`{"sort": [{"unknown_field": "asc"}]}`, "query", "sort[0].unknown_field", "no mapping"},
		{`{"sort": 5}`, "query", "sort", "got number"},
		{`{"size": "ten"}`, "query", "size", "not an integer"},
		{`{"size": 1.5}`, "query", "size", "not an integer"},
		{`{"size": -1}`, "query", "size", "positive"},
		{`{"from": 9000, "size": 2000}`, "query", "size", "result window is too large"},
		{`{"_source": 5}`, "query", "_source", "got number"},
		{`{"_source": {"include": [1]}}`, "query", "_source.include[0]", "got number"},
		{`{"track_total_hits": "yes"}`, "query", "track_total_hits", "boolean or an integer"},
		{`{"querry": {}}`, "query", "querry", "unknown key"},
		{`[1, 2]`, "query", "", "must be a JSON object"},
		{`"match_all"`, "query", "", "must be a JSON object"},
		{deep, "query", "", "nested deeper"},

		{`{"query": {"term": }`, "syntax", "19", "line 1, column 20"},
		{"{\n  \"size\": ,\n}", "syntax", "12", "line 2, column 11"},
		{`{"query": `, "syntax", "10", "end of JSON"},
		{`{} x`, "syntax", "3", "after the top-level"},
		{`{"a": "\x"}`, "syntax", "8", "escape"},
	}
	for _, c := range cases {
		name := c.body
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			req, err := blevesearch.Translate([]byte(c.body), schema, blevesearch.TranslateOptions{})
			if err == nil {
				t.Fatalf("no error, request %+v", req)
			}
			if req != nil {
				t.Errorf("request %+v returned with the error", req)
			}
			var ue *search.UnsupportedError
			var qe *search.QueryError
			var se *search.SyntaxError
			switch c.kind {
			case "unsupported":
				if !errors.As(err, &ue) || ue.Path != c.path {
					t.Fatalf("error %v (%T), want *search.UnsupportedError at %s", err, err, c.path)
				}
			case "query":
				if !errors.As(err, &qe) || (qe.Path != c.path && !strings.Contains(c.msg, "nested deeper")) {
					t.Fatalf("error %v (%T), want *search.QueryError at %q", err, err, c.path)
				}
			case "syntax":
				if !errors.As(err, &se) || fmt.Sprint(se.Offset) != c.path {
					t.Fatalf("error %v (%T), want *search.SyntaxError at offset %s", err, err, c.path)
				}
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("message %q lacks %q", err, c.msg)
			}
		})
	}
}

func TestTranslateOK(t *testing.T) {
	schema := searchtest.Schema()
	for _, body := range []string{
		`{"query": {"match_all": {}}, "timeout": "1s", "track_scores": true, "profile": false}`,
		`{"query": {"term": {"category": {"value": "x", "case_insensitive": false, "_name": "n"}}}}`,
		`{"query": {"range": {"created": {"gte": "now-7d/d", "lt": "now/d", "time_zone": "Europe/Paris"}}}}`,
		`{"query": {"range": {"created": {"gte": null, "lte": "2024"}}}}`,
		`{"query": {"range": {"price": {"gte": 1, "relation": "INTERSECTS"}}}}`,
		`{"query": {"bool": {"must_not": [], "should": [], "filter": [], "adjust_pure_negative": true}}}`,
		`{"query": {"multi_match": {"query": "coffee", "fields": ["name*", "notes"], "type": "phrase"}}}`,
		`{"query": {"multi_match": {"query": "coffee"}}}`,
		`{"query": {"exists": {"field": "origin.*"}}}`,
		`{"query": {"wildcard": {"category": {"wildcard": "co\\*f?e"}}}}`,
		`{"sort": ["_doc", {"_score": {"order": "asc"}}, {"unmapped": {"order": "asc", "unmapped_type": "long"}}]}`,
		`{"_source": {"includes": "name", "excludes": ["notes"]}}`,
		`{"track_total_hits": 100}`,
		``,
		"  \n ",
	} {
		if _, err := blevesearch.Translate([]byte(body), schema, blevesearch.TranslateOptions{}); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestStrictFields(t *testing.T) {
	schema := searchtest.Schema()
	body := []byte(`{"query": {"bool": {"filter": [{"term": {"shipper": "x"}}]}}}`)
	if _, err := blevesearch.Translate(body, schema, blevesearch.TranslateOptions{}); err != nil {
		t.Fatalf("lenient: %v", err)
	}
	_, err := blevesearch.Translate(body, schema, blevesearch.TranslateOptions{StrictFields: true})
	var qe *search.QueryError
	if !errors.As(err, &qe) || qe.Path != "query.bool.filter[0].term.shipper" || !strings.Contains(qe.Msg, "category") {
		t.Fatalf("strict: %v", err)
	}
}

// shared is one in-memory backend with the conformance dataset, for the
// tests that only read.
var shared = sync.OnceValues(func() (*blevesearch.Backend, error) {
	b, err := blevesearch.New(blevesearch.Options{Now: func() time.Time {
		return time.Date(2024, 6, 20, 12, 0, 0, 0, time.UTC)
	}})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := b.CreateIndex(ctx, "conf", searchtest.Schema()); err != nil {
		return nil, err
	}
	return b, b.Index(ctx, "conf", searchtest.Docs())
})

func sharedBackend(tb testing.TB) *blevesearch.Backend {
	tb.Helper()
	b, err := shared()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestNowOption(t *testing.T) {
	b := sharedBackend(t)
	// "now" is 2024-06-20: the last week holds document 9 (2024-06-15).
	res, err := b.Search(context.Background(), "conf", []byte(`{"query": {"range": {"created": {"gte": "now-7d/d", "lte": "now"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || res.Hits[0].ID != "9" {
		t.Fatalf("total %d hits %+v", res.Total, res.Hits)
	}
}

func TestIndexErrors(t *testing.T) {
	ctx := context.Background()
	b, err := blevesearch.New(blevesearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var nf *search.IndexNotFoundError
	if err := b.Index(ctx, "nope", searchtest.Docs()); !errors.As(err, &nf) {
		t.Fatalf("index into a missing index: %v", err)
	}
	var qe *search.QueryError
	if err := b.CreateIndex(ctx, "Bad/Name", searchtest.Schema()); !errors.As(err, &qe) {
		t.Fatalf("bad index name: %v", err)
	}
	var se *search.SchemaError
	if err := b.CreateIndex(ctx, "x", search.Schema{Fields: map[string]search.Field{"a": {Type: "keyword"}, "a.b": {Type: "long"}}}); !errors.As(err, &se) {
		t.Fatalf("bad schema: %v", err)
	}
	if err := b.CreateIndex(ctx, "x", searchtest.Schema()); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateIndex(ctx, "x", searchtest.Schema()); err != nil {
		t.Fatalf("re-create with the same schema: %v", err)
	}
	if err := b.CreateIndex(ctx, "x", search.Schema{Fields: map[string]search.Field{"a": {Type: "keyword"}}}); !errors.As(err, &se) {
		t.Fatalf("re-create with another schema: %v", err)
	}
	docs := []search.Doc{
		{ID: "ok", Source: json.RawMessage(`{"name": "fine", "price": "12.5", "created": 1700000000000, "in_stock": "true"}`)},
		{ID: "price", Source: json.RawMessage(`{"price": "cheap"}`)},
		{ID: "date", Source: json.RawMessage(`{"created": "15/01/2024"}`)},
		{ID: "array", Source: json.RawMessage(`[1]`)},
		{ID: "json", Source: json.RawMessage(`{"name": `)},
		{ID: "object", Source: json.RawMessage(`{"category": {"a": 1}}`)},
		{ID: "leaf", Source: json.RawMessage(`{"origin": "BRSSZ"}`)},
		{ID: strings.Repeat("i", 513), Source: json.RawMessage(`{}`)},
		{ID: "bool", Source: json.RawMessage(`{"in_stock": 1}`)},
		{Source: json.RawMessage(`{"name": "no id"}`)},
	}
	err = b.Index(ctx, "x", docs)
	var be *search.BulkError
	if !errors.As(err, &be) || be.Total != len(docs) || len(be.Failed) != 8 {
		t.Fatalf("error %v, want a BulkError with 8 failures", err)
	}
	for _, f := range be.Failed {
		if f.Type == "" || f.Reason == "" || docs[f.Position].ID != f.ID {
			t.Errorf("failure %+v", f)
		}
	}
	res, err := b.Search(ctx, "x", []byte(`{"query": {"bool": {"filter": [{"term": {"price": 12.5}}, {"term": {"in_stock": true}}, {"range": {"created": {"gte": "2023-11-14T22:13:20Z"}}}]}}}`))
	if err != nil || res.Total != 1 || res.Hits[0].ID != "ok" {
		t.Fatalf("search after a partial bulk: %v %+v", err, res)
	}
	res, err = b.Search(ctx, "x", []byte(`{"query": {"match": {"name": "id"}}}`))
	if err != nil || res.Total != 1 || len(res.Hits[0].ID) != 20 {
		t.Fatalf("generated id: %v %+v", err, res)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Index(ctx2, "x", docs[:1]); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled index: %v", err)
	}
	if _, err := b.Search(ctx2, "x", []byte(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v", err)
	}
	if err := b.DeleteIndex(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteIndex(ctx, "x"); !errors.As(err, &nf) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestPersistence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := blevesearch.New(blevesearch.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateIndex(ctx, "conf", searchtest.Schema()); err != nil {
		t.Fatal(err)
	}
	if err := b.Index(ctx, "conf", searchtest.Docs()); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Search(ctx, "conf", []byte(`{}`)); err == nil {
		t.Fatal("search after Close: no error")
	}
	b, err = blevesearch.New(blevesearch.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := b.Indexes(); len(got) != 1 || got[0] != "conf" {
		t.Fatalf("indexes = %v", got)
	}
	s, err := b.Schema("conf")
	if err != nil || !s.Equal(searchtest.Schema()) {
		t.Fatalf("schema %v %v", s, err)
	}
	res, err := b.Search(ctx, "conf", []byte(`{"query": {"term": {"category": "coffee"}}}`))
	if err != nil || res.Total != 2 {
		t.Fatalf("reopened search: %v %+v", err, res)
	}
}

func TestConcurrentSearch(t *testing.T) {
	b := sharedBackend(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				body := fmt.Sprintf(`{"query": {"range": {"qty": {"gte": %d}}}}`, (i*20+j)%1300)
				if _, err := b.Search(context.Background(), "conf", []byte(body)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzTranslate checks that any input either translates or gives one of
// the documented errors, and that translated requests run without panic.
func FuzzTranslate(f *testing.F) {
	for _, c := range searchtest.Cases() {
		f.Add([]byte(c.Body))
	}
	for _, s := range []string{
		`{"query": {"bool": {"must": [{"fuzzy": {"a": "b"}}]}}}`,
		`{"query": {"wildcard": {"category": "\\"}}}`,
		`{"query": {"wildcard": {"name.keyword": "*[*"}}}`,
		`{"query": {"range": {"created": {"gte": "2024-02-30"}}}}`,
		`{"query": {"range": {"created": {"gte": "now+999999y"}}}}`,
		`{"query": {"range": {"created": {"gte": -99999999999999999}}}}`,
		`{"query": {"range": {"price": {"gte": 1e308, "lte": -1e308}}}}`,
		`{"query": {"match": {"name": {"query": "a b c", "minimum_should_match": "-200%"}}}}`,
		`{"sort": [{"tags": {"order": "desc", "missing": "_first", "mode": "max"}}], "_source": ["*"]}`,
		`{"query": {"prefix": {"category": ""}}}`,
		`{"query": {"ids": {"values": []}}}`,
		`{"query": {"term": {"created": "now/M"}}}`,
		`{"size": 99999999999999999999}`,
	} {
		f.Add([]byte(s))
	}
	schema := searchtest.Schema()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := blevesearch.Translate(body, schema, blevesearch.TranslateOptions{})
		if err != nil {
			var ue *search.UnsupportedError
			var qe *search.QueryError
			var se *search.SyntaxError
			if !errors.As(err, &ue) && !errors.As(err, &qe) && !errors.As(err, &se) {
				t.Fatalf("undocumented error type %T: %v", err, err)
			}
			if req != nil {
				t.Fatal("request and error")
			}
			return
		}
		if req == nil || req.Search == nil {
			t.Fatal("no request and no error")
		}
		b := sharedBackend(t)
		res, err := b.Search(context.Background(), "conf", body)
		if err != nil {
			var be *blevesearch.Error
			if !errors.As(err, &be) {
				t.Fatalf("search error of type %T: %v", err, err)
			}
			return
		}
		if len(res.Hits) > res.Size || (res.Total >= 0 && int64(len(res.Hits)) > res.Total) {
			t.Fatalf("inconsistent response %+v", res)
		}
	})
}

// BenchmarkBoolQuery5000 runs a bool query with full text, filters, a
// should and a sort over 5,000 synthetic documents.
func BenchmarkBoolQuery5000(b *testing.B) {
	ctx := context.Background()
	be, err := blevesearch.New(blevesearch.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	if err := be.CreateIndex(ctx, "bench", searchtest.Schema()); err != nil {
		b.Fatal(err)
	}
	words := []string{"green", "coffee", "beans", "black", "tea", "frozen", "shrimp", "laptop", "grinder", "cocoa"}
	cats := []string{"coffee", "tea", "electronics", "appliances", "seafood", "cocoa"}
	docs := make([]search.Doc, 5000)
	for i := range docs {
		src := fmt.Sprintf(`{"name": "%s %s %s", "category": %q, "tags": [%q], "price": %d, "qty": %d, "created": "2024-%02d-%02d", "in_stock": %t}`,
			words[i%10], words[(i/10)%10], words[(i/100)%10], cats[i%6], words[(i/7)%10], (i*37)%2000, (i*13)%1500, 1+i%12, 1+i%28, i%3 != 0)
		docs[i] = search.Doc{ID: fmt.Sprint(i), Source: json.RawMessage(src)}
	}
	if err := be.Index(ctx, "bench", docs); err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"query": {"bool": {
		"must": [{"match": {"name": "coffee beans"}}],
		"filter": [{"range": {"created": {"gte": "2024-03-01", "lt": "2024-10-01"}}}, {"term": {"in_stock": true}}],
		"should": [{"term": {"category": "coffee"}}],
		"must_not": [{"range": {"price": {"gt": 1800}}}]}},
		"sort": ["_score", {"price": "asc"}], "size": 20}`)
	var res *search.Response
	for b.Loop() {
		if res, err = be.Search(ctx, "bench", body); err != nil {
			b.Fatal(err)
		}
	}
	if res.Total == 0 {
		b.Fatal("no hits")
	}
}
