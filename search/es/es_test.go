package es_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/search"
	"github.com/weftlang/weft/search/es"
	"github.com/weftlang/weft/search/searchtest"
)

// fakeES is an httptest server that answers like Elasticsearch 8: the
// X-Elastic-Product header, JSON bodies in the real response shapes.
type fakeES struct {
	t  *testing.T
	mu sync.Mutex
	// requests records "METHOD path?query" and bodies, in order.
	requests []recorded
	handle   func(w http.ResponseWriter, r *http.Request, body []byte)
}

type recorded struct {
	method, path, query, contentType string
	body                             []byte
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body []byte)) (*fakeES, *es.Backend) {
	t.Helper()
	f := &fakeES{t: t, handle: handle}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body})
		f.mu.Unlock()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		f.handle(w, r, body)
	}))
	t.Cleanup(srv.Close)
	b, err := es.New(es.Options{Addresses: []string{srv.URL}, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, b
}

func (f *fakeES) last() recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		f.t.Fatal("no request reached the server")
	}
	return f.requests[len(f.requests)-1]
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

const searchResponse = `{
  "took": 3, "timed_out": false,
  "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
  "hits": {
    "total": {"value": 42, "relation": "eq"},
    "max_score": 2.5,
    "hits": [
      {"_index": "shipments", "_id": "SHP-0000001", "_score": 2.5,
       "_source": {"carrier": "Maersk", "status": "delayed"}},
      {"_index": "shipments", "_id": "SHP-0000002", "_score": 1.25,
       "_source": {"carrier": "Maersk", "status": "in_transit"}}
    ]
  }
}`

func TestSearch(t *testing.T) {
	f, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 200, searchResponse)
	})
	body := `{"query": {"term": {"carrier": "Maersk"}}, "from": 5, "size": 2}`
	res, err := b.Search(context.Background(), "shipments", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	req := f.last()
	if req.method != http.MethodPost || req.path != "/shipments/_search" {
		t.Errorf("request = %s %s, want POST /shipments/_search", req.method, req.path)
	}
	if string(req.body) != body {
		t.Errorf("body sent = %s, want %s", req.body, body)
	}
	if !strings.HasPrefix(req.contentType, "application/json") {
		t.Errorf("Content-Type = %q", req.contentType)
	}
	if res.Total != 42 || res.TotalRelation != "eq" || res.MaxScore != 2.5 || res.From != 5 || res.Size != 2 {
		t.Errorf("response = %+v", res)
	}
	if len(res.Hits) != 2 || res.Hits[0].ID != "SHP-0000001" || res.Hits[0].Score != 2.5 || res.Hits[1].Index != "shipments" {
		t.Fatalf("hits = %+v", res.Hits)
	}
	var src map[string]string
	if err := json.Unmarshal(res.Hits[1].Source, &src); err != nil || src["status"] != "in_transit" {
		t.Errorf("source = %s (%v)", res.Hits[1].Source, err)
	}
}

func TestSearchUntrackedTotalAndNullScores(t *testing.T) {
	_, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 200, `{"took": 1, "timed_out": false, "hits": {"max_score": null,
			"hits": [{"_index": "shipments", "_id": "a", "_score": null, "_source": {}, "sort": [1700000000000]}]}}`)
	})
	res, err := b.Search(context.Background(), "shipments", []byte(`{"track_total_hits": false, "sort": [{"departure_date": "desc"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != -1 || res.TotalRelation != "" || res.Hits[0].Score != 0 || res.Size != search.DefaultSize {
		t.Errorf("response = %+v", res)
	}
}

func TestSearchErrorResponse(t *testing.T) {
	_, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 400, `{"error": {"root_cause": [{"type": "parsing_exception",
			"reason": "unknown query [fuzy]", "line": 1, "col": 20}],
			"type": "parsing_exception", "reason": "unknown query [fuzy]", "line": 1, "col": 20,
			"caused_by": {"type": "named_object_not_found_exception", "reason": "[1:20] unknown field [fuzy]"}},
			"status": 400}`)
	})
	_, err := b.Search(context.Background(), "shipments", []byte(`{"query": {"fuzy": {"carrier": "maersk"}}}`))
	var ee *es.Error
	if !errors.As(err, &ee) {
		t.Fatalf("error = %v (%T), want *es.Error", err, err)
	}
	if ee.Status != 400 || ee.Type != "parsing_exception" || ee.Reason != "unknown query [fuzy]" ||
		len(ee.RootCause) != 1 || ee.CausedBy == nil || ee.CausedBy.Type != "named_object_not_found_exception" {
		t.Errorf("error = %+v", ee)
	}
	for _, want := range []string{"400", "parsing_exception", "unknown query [fuzy]", "shipments"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestSearchIndexNotFound(t *testing.T) {
	_, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 404, `{"error": {"root_cause": [{"type": "index_not_found_exception",
			"reason": "no such index [nope]", "resource.type": "index_or_alias", "resource.id": "nope",
			"index_uuid": "_na_", "index": "nope"}], "type": "index_not_found_exception",
			"reason": "no such index [nope]", "resource.type": "index_or_alias", "resource.id": "nope",
			"index_uuid": "_na_", "index": "nope"}, "status": 404}`)
	})
	_, err := b.Search(context.Background(), "nope", []byte(`{}`))
	var nf *search.IndexNotFoundError
	var ee *es.Error
	if !errors.As(err, &nf) || nf.Index != "nope" || !errors.As(err, &ee) || ee.Status != 404 {
		t.Fatalf("error = %v (%T), want an *es.Error wrapping *search.IndexNotFoundError", err, err)
	}
}

func TestSearchNonJSONError(t *testing.T) {
	_, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.WriteHeader(502)
		_, _ = io.WriteString(w, "<html>Bad Gateway</html>")
	})
	_, err := b.Search(context.Background(), "shipments", []byte(`{}`))
	var ee *es.Error
	if !errors.As(err, &ee) || ee.Status != 502 || !strings.Contains(ee.Body, "Bad Gateway") {
		t.Fatalf("error = %v (%T)", err, err)
	}
}

func TestSearchDroppedConnection(t *testing.T) {
	_, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_ = conn.Close()
	})
	_, err := b.Search(context.Background(), "shipments", []byte(`{"query": {"match_all": {}}}`))
	var te *es.TransportError
	if !errors.As(err, &te) || te.Op != "search" || te.Err == nil {
		t.Fatalf("error = %v (%T), want *es.TransportError", err, err)
	}
}

func TestSearchCancelledContext(t *testing.T) {
	_, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 200, searchResponse)
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Search(ctx, "shipments", []byte(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestSearchNotElasticsearch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, searchResponse) // no X-Elastic-Product header
	}))
	defer srv.Close()
	b, err := es.New(es.Options{Addresses: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Search(context.Background(), "shipments", []byte(`{}`))
	var te *es.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("error = %v (%T), want *es.TransportError", err, err)
	}
}

func TestSearchMalformedJSONIsLocal(t *testing.T) {
	f, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 200, searchResponse)
	})
	_, err := b.Search(context.Background(), "shipments", []byte(`{"query": {"term": }`))
	var se *search.SyntaxError
	if !errors.As(err, &se) || se.Offset != 19 {
		t.Fatalf("error = %v (%T), want *search.SyntaxError at offset 19", err, err)
	}
	if len(f.requests) != 0 {
		t.Errorf("a malformed body reached the server")
	}
}

func TestBulkIndex(t *testing.T) {
	f, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 200, `{"errors": true, "took": 5, "items": [
			{"index": {"_index": "shipments", "_id": "a", "_version": 1, "result": "created", "status": 201,
			  "_shards": {"total": 2, "successful": 1, "failed": 0}, "_seq_no": 0, "_primary_term": 1}},
			{"index": {"_index": "shipments", "_id": "b", "status": 400,
			  "error": {"type": "document_parsing_exception",
			  "reason": "[1:15] failed to parse field [weight_kg] of type [long] in document with id 'b'. Preview of field's value: 'heavy'",
			  "caused_by": {"type": "illegal_argument_exception", "reason": "For input string: \"heavy\""}}}},
			{"index": {"_index": "shipments", "_id": "Xy12", "_version": 1, "result": "created", "status": 201}}]}`)
	})
	docs := []search.Doc{
		{ID: "a", Source: json.RawMessage(`{"carrier": "MSC",
			"weight_kg": 1200}`)},
		{ID: "b", Source: json.RawMessage(`{"weight_kg": "heavy"}`)},
		{ID: "bad", Source: json.RawMessage(`{"unterminated": `)},
		{Source: json.RawMessage(`{"carrier": "CMA CGM"}`)},
	}
	err := b.Index(context.Background(), "shipments", docs)
	req := f.last()
	if req.method != http.MethodPost || req.path != "/shipments/_bulk" || req.query != "refresh=wait_for" {
		t.Errorf("request = %s %s?%s, want POST /shipments/_bulk?refresh=wait_for", req.method, req.path, req.query)
	}
	if !strings.HasPrefix(req.contentType, "application/x-ndjson") {
		t.Errorf("Content-Type = %q", req.contentType)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(req.body)))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	want := []string{
		`{"index":{"_id":"a"}}`, `{"carrier":"MSC","weight_kg":1200}`,
		`{"index":{"_id":"b"}}`, `{"weight_kg":"heavy"}`,
		`{"index":{}}`, `{"carrier":"CMA CGM"}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("bulk body =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	var be *search.BulkError
	if !errors.As(err, &be) || be.Total != 4 || len(be.Failed) != 2 {
		t.Fatalf("error = %v (%T), want a *search.BulkError with 2 failures", err, err)
	}
	if f0 := be.Failed[0]; f0.ID != "b" || f0.Position != 1 || f0.Type != "document_parsing_exception" {
		t.Errorf("first failure = %+v", f0)
	}
	if f1 := be.Failed[1]; f1.ID != "bad" || f1.Position != 2 {
		t.Errorf("second failure = %+v", f1)
	}
}

func TestBulkChunks(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := strings.Count(string(body), "\n") / 2
		mu.Lock()
		sizes = append(sizes, n)
		mu.Unlock()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		writeJSON(w, 200, `{"errors": false, "took": 1, "items": []}`)
	}))
	defer srv.Close()
	b, err := es.New(es.Options{Addresses: []string{srv.URL}, BulkSize: 2, Refresh: "false"})
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]search.Doc, 5)
	for i := range docs {
		docs[i] = search.Doc{Source: json.RawMessage(`{}`)}
	}
	if err := b.Index(context.Background(), "x", docs); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 3 || sizes[0] != 2 || sizes[2] != 1 {
		t.Errorf("bulk sizes = %v, want [2 2 1]", sizes)
	}
}

func TestBulkRequestError(t *testing.T) {
	_, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, 429, `{"error": {"root_cause": [{"type": "es_rejected_execution_exception", "reason": "rejected execution"}],
			"type": "es_rejected_execution_exception", "reason": "rejected execution"}, "status": 429}`)
	})
	err := b.Index(context.Background(), "shipments", []search.Doc{{ID: "1", Source: json.RawMessage(`{}`)}})
	var ee *es.Error
	if !errors.As(err, &ee) || ee.Status != 429 || ee.Op != "bulk" || ee.Type != "es_rejected_execution_exception" {
		t.Fatalf("error = %v (%T)", err, err)
	}
}

func TestCreateIndex(t *testing.T) {
	exists := false
	f, b := newFake(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/conf":
			if exists {
				writeJSON(w, 400, `{"error": {"root_cause": [{"type": "resource_already_exists_exception",
					"reason": "index [conf/abc] already exists", "index": "conf"}],
					"type": "resource_already_exists_exception", "reason": "index [conf/abc] already exists",
					"index": "conf"}, "status": 400}`)
				return
			}
			exists = true
			writeJSON(w, 200, `{"acknowledged": true, "shards_acknowledged": true, "index": "conf"}`)
		case r.Method == http.MethodGet && r.URL.Path == "/conf/_mapping":
			writeJSON(w, 200, `{"conf": {"mappings": {"dynamic": "false", "properties": {
				"category": {"type": "keyword"}, "created": {"type": "date"}, "in_stock": {"type": "boolean"},
				"name": {"type": "text", "fields": {"keyword": {"type": "keyword"}}},
				"notes": {"type": "text"}, "origin": {"properties": {"country": {"type": "keyword"}, "port": {"type": "keyword"}}},
				"price": {"type": "double"}, "qty": {"type": "long"}, "tags": {"type": "keyword"}}}}}`)
		case r.Method == http.MethodDelete && r.URL.Path == "/conf":
			writeJSON(w, 200, `{"acknowledged": true}`)
		default:
			writeJSON(w, 405, `{"error": "Incorrect HTTP method for uri", "status": 405}`)
		}
	})
	ctx := context.Background()
	schema := searchtest.Schema()
	if err := b.CreateIndex(ctx, "conf", schema); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Mappings struct {
			Dynamic    bool                       `json:"dynamic"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(f.last().body, &m); err != nil || len(m.Mappings.Properties) != 9 {
		t.Fatalf("create body = %s (%v)", f.last().body, err)
	}
	if got := string(m.Mappings.Properties["origin"]); !strings.Contains(got, `"port":{"type":"keyword"}`) {
		t.Errorf("origin mapping = %s", got)
	}
	// Again: exists with the same mapping.
	if err := b.CreateIndex(ctx, "conf", schema); err != nil {
		t.Errorf("re-create with the same schema: %v", err)
	}
	other := search.Schema{Fields: map[string]search.Field{"name": {Type: search.Keyword}}}
	var se *search.SchemaError
	if err := b.CreateIndex(ctx, "conf", other); !errors.As(err, &se) {
		t.Errorf("re-create with another schema: %v, want *search.SchemaError", err)
	}
	if err := b.DeleteIndex(ctx, "conf"); err != nil {
		t.Error(err)
	}
	if r := f.last(); r.method != http.MethodDelete || r.path != "/conf" {
		t.Errorf("delete request = %s %s", r.method, r.path)
	}
	// A string error body.
	_, err := b.Search(ctx, "conf", []byte(`{}`))
	var ee *es.Error
	if !errors.As(err, &ee) || ee.Status != 405 || !strings.Contains(ee.Reason, "Incorrect HTTP method") {
		t.Errorf("error = %v (%T)", err, err)
	}
}

// TestConformanceCluster runs the conformance suite on a real cluster when
// WEFT_ES_URL is set (for example http://localhost:9200).
func TestConformanceCluster(t *testing.T) {
	url := os.Getenv("WEFT_ES_URL")
	if url == "" {
		t.Skip("WEFT_ES_URL is not set: skipping the conformance suite on a real Elasticsearch cluster")
	}
	searchtest.Run(t, func(t *testing.T) search.Backend {
		b, err := es.New(es.Options{Addresses: []string{url},
			Username: os.Getenv("WEFT_ES_USERNAME"), Password: os.Getenv("WEFT_ES_PASSWORD")})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}
