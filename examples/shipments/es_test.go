package shipments_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/search/es"
)

// fakeES answers _search requests like Elasticsearch 8 from the generated
// shipments, and records what it was sent.
type fakeES struct {
	mu     sync.Mutex
	paths  []string
	bodies [][]byte
}

func (f *fakeES) requests() ([]string, [][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...), append([][]byte(nil), f.bodies...)
}

// newFakeES serves hits: a total of total, each page cut from hits by the
// body's from and size.
func newFakeES(t *testing.T, hits []dataset.Shipment, total int) (*fakeES, *es.Backend) {
	t.Helper()
	f := &fakeES{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.paths = append(f.paths, r.Method+" "+r.URL.Path)
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		var req struct{ From, Size int }
		_ = json.Unmarshal(body, &req)
		var out []map[string]any
		for i := req.From; i < min(req.From+req.Size, len(hits)); i++ {
			out = append(out, map[string]any{"_index": "shipments", "_id": hits[i].ShipmentID, "_score": nil, "_source": hits[i]})
		}
		if out == nil {
			out = []map[string]any{}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"took": 2, "timed_out": false,
			"hits": map[string]any{"total": map[string]any{"value": total, "relation": "eq"}, "max_score": nil, "hits": out},
		})
	}))
	t.Cleanup(srv.Close)
	b, err := es.New(es.Options{Addresses: []string{srv.URL}, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, b
}

// The agent on a real cluster's client: the bodies it sends are the built
// query with the page, then the same query at the next offset.
func TestElasticsearchBackend(t *testing.T) {
	l := index(t)
	var hits []dataset.Shipment
	for _, s := range l.ships {
		if maerskToLA(s) {
			hits = append(hits, s)
		}
	}
	f, b := newFakeES(t, hits, len(hits))
	e := newEnv(t, maerskScript(), nil, func(d *shipments.Deps) { d.Backend = b })
	c := &conversation{e: e}
	out, path, _ := c.say(t, askMaersk)
	checkPath(t, path, pathSearch)
	if out.Page.Total != int64(len(hits)) || len(out.Page.Hits) != 20 || out.Page.Hits[3] != hits[3] {
		t.Fatalf("page %+v", out.Page)
	}
	out, _, _ = c.say(t, askMore)
	if len(out.Page.Hits) != len(hits)-20 || out.Page.Hits[0].ShipmentID != hits[20].ShipmentID {
		t.Errorf("page 2 %v", ids(out.Page))
	}
	paths, bodies := f.requests()
	if len(paths) != 2 || paths[0] != "POST /shipments/_search" || paths[1] != paths[0] {
		t.Fatalf("requests %v", paths)
	}
	q, _ := shipments.BuildQuery(shipments.SearchIntent{Carrier: "Maersk", DestinationPort: "Los Angeles"})
	for i, from := range []int{0, 20} {
		var got any
		if err := json.Unmarshal(bodies[i], &got); err != nil {
			t.Fatalf("body %d: %v: %s", i, err, bodies[i])
		}
		jsonEq(t, fmt.Sprintf("body %d", i), got, shipments.WithPage(q, from, 20))
	}
	// The body as sent: compact JSON, keys sorted, as the replay of a
	// session expects.
	want := `{"from":0,"query":{"bool":{"filter":[{"bool":{"minimum_should_match":1,"should":[{"term":{"carrier_scac":"MAERSK"}},{"match":{"carrier":{"operator":"and","query":"Maersk"}}}]}},{"bool":{"minimum_should_match":1,"should":[{"term":{"destination_port_code":"LOS ANGELES"}},{"match":{"destination_port":{"operator":"and","query":"Los Angeles"}}}]}}]}},"size":20,"sort":[{"departure_date":{"order":"desc"}},{"shipment_id":{"order":"asc"}}],"track_total_hits":true}`
	if string(bodies[0]) != want {
		t.Errorf("body sent:\n%s\nwant:\n%s", bodies[0], want)
	}
}

// An error from the cluster is the turn's response, with Elasticsearch's
// reason.
func TestElasticsearchError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		_, _ = io.WriteString(w, `{"error":{"type":"index_not_found_exception","reason":"no such index [shipments]","index":"shipments"},"status":404}`)
	}))
	defer srv.Close()
	b, err := es.New(es.Options{Addresses: []string{srv.URL}, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, maerskScript(), nil, func(d *shipments.Deps) { d.Backend = b })
	out, path := e.run(t, shipments.State{Question: askMaersk})
	checkPath(t, path, pathFailed)
	if out.Response != `I could not run the search: the index "shipments" does not exist.` || !strings.HasPrefix(out.Errors[0], "execute_query: ") {
		t.Errorf("response %q, errors %v", out.Response, out.Errors)
	}
}
