package es_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftlang/weft/search/es"
)

// server is an httptest server answering searches like Elasticsearch,
// recording the request headers; status, when set, picks the status of
// each request by its number (from 1).
type server struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func newServer(t *testing.T, status func(n int) int) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		n := len(s.headers)
		s.mu.Unlock()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		code := 200
		if status != nil {
			code = status(n)
		}
		if code != 200 {
			writeJSON(w, code, `{"error": {"type": "unavailable", "reason": "try later"}, "status": 503}`)
			return
		}
		writeJSON(w, 200, searchResponse)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.headers)
}

func doSearch(t *testing.T, b *es.Backend) error {
	t.Helper()
	_, err := b.Search(context.Background(), "shipments", []byte(`{}`))
	return err
}

func TestBasicAuthHeaderAndUserAgent(t *testing.T) {
	srv := newServer(t, nil)
	header := http.Header{"X-Opaque-Id": {"weft-test"}}
	b, err := es.New(es.Options{Addresses: []string{srv.URL}, Username: "elastic", Password: "s3cret", Header: header})
	if err != nil {
		t.Fatal(err)
	}
	header.Set("X-Opaque-Id", "changed after New")
	if err := doSearch(t, b); err != nil {
		t.Fatal(err)
	}
	h := srv.requests()[0]
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("elastic:s3cret")); h.Get("Authorization") != want {
		t.Errorf("Authorization = %q, want %q", h.Get("Authorization"), want)
	}
	if got := h.Get("X-Opaque-Id"); got != "weft-test" {
		t.Errorf("X-Opaque-Id = %q, want weft-test", got)
	}
	if ua := h.Get("User-Agent"); !strings.HasPrefix(ua, "go-elasticsearch/") || !strings.Contains(ua, "weft") {
		t.Errorf("User-Agent = %q", ua)
	}
}

func TestAPIKeyWinsOverBasicAuth(t *testing.T) {
	srv := newServer(t, nil)
	b, err := es.New(es.Options{Addresses: []string{srv.URL}, Username: "elastic", Password: "s3cret", APIKey: "a2V5OnNlY3JldA=="})
	if err != nil {
		t.Fatal(err)
	}
	if err := doSearch(t, b); err != nil {
		t.Fatal(err)
	}
	if got := srv.requests()[0].Get("Authorization"); got != "APIKey a2V5OnNlY3JldA==" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestCredentialsInAddress(t *testing.T) {
	srv := newServer(t, nil)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("reader", "pw")
	b, err := es.New(es.Options{Addresses: []string{u.String() + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := doSearch(t, b); err != nil {
		t.Fatal(err)
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("reader:pw")); srv.requests()[0].Get("Authorization") != want {
		t.Errorf("Authorization = %q, want %q", srv.requests()[0].Get("Authorization"), want)
	}
}

func TestAddressFromEnvironment(t *testing.T) {
	srv := newServer(t, nil)
	t.Setenv("ELASTICSEARCH_URL", " "+srv.URL+" ")
	b, err := es.New(es.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := doSearch(t, b); err != nil {
		t.Fatal(err)
	}
	if len(srv.requests()) != 1 {
		t.Errorf("%d requests reached the server named by ELASTICSEARCH_URL", len(srv.requests()))
	}
}

func TestInvalidAddress(t *testing.T) {
	for _, addr := range []string{"localhost:9200", "ftp://es.example.com", "http://user:hunter2@es.example.com:badport", "https://"} {
		_, err := es.New(es.Options{Addresses: []string{"http://ok.example.com", addr}})
		var te *es.TransportError
		if !errors.As(err, &te) || te.Op != "connect" {
			t.Errorf("%s: error = %v (%T), want a connect *es.TransportError", addr, err, err)
			continue
		}
		if !strings.Contains(err.Error(), "address 2") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error = %v", addr, err)
		}
	}
	if _, err := es.New(es.Options{Addresses: []string{"http://ok.example.com"}, MaxRetries: -1}); err == nil {
		t.Error("a negative MaxRetries was accepted")
	}
}

func TestRetries(t *testing.T) {
	unavailableTwice := func(n int) int {
		if n <= 2 {
			return 503
		}
		return 200
	}
	// Default: up to 3 retries on 502, 503 and 504.
	srv := newServer(t, unavailableTwice)
	b, err := es.New(es.Options{Addresses: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if err := doSearch(t, b); err != nil || len(srv.requests()) != 3 {
		t.Errorf("default retries: error %v after %d requests, want success after 3", err, len(srv.requests()))
	}
	// MaxRetries: 1 gives up after 2 requests with the last response.
	srv = newServer(t, unavailableTwice)
	b, _ = es.New(es.Options{Addresses: []string{srv.URL}, MaxRetries: 1})
	var ee *es.Error
	if err := doSearch(t, b); !errors.As(err, &ee) || ee.Status != 503 || len(srv.requests()) != 2 {
		t.Errorf("MaxRetries 1: error %v after %d requests, want a 503 *es.Error after 2", err, len(srv.requests()))
	}
	// DisableRetry.
	srv = newServer(t, unavailableTwice)
	b, _ = es.New(es.Options{Addresses: []string{srv.URL}, DisableRetry: true})
	if err := doSearch(t, b); !errors.As(err, &ee) || ee.Status != 503 || len(srv.requests()) != 1 {
		t.Errorf("DisableRetry: error %v after %d requests, want a 503 *es.Error after 1", err, len(srv.requests()))
	}
	// 429 is not retried.
	srv = newServer(t, func(int) int { return 429 })
	b, _ = es.New(es.Options{Addresses: []string{srv.URL}})
	if err := doSearch(t, b); !errors.As(err, &ee) || ee.Status != 429 || len(srv.requests()) != 1 {
		t.Errorf("429: error %v after %d requests, want a 429 *es.Error after 1", err, len(srv.requests()))
	}
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTransportOption(t *testing.T) {
	srv := newServer(t, nil)
	var n atomic.Int32
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n.Add(1)
		return srv.Client().Transport.RoundTrip(r)
	})
	b, err := es.New(es.Options{Addresses: []string{srv.URL}, Transport: rt})
	if err != nil {
		t.Fatal(err)
	}
	if err := doSearch(t, b); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 {
		t.Errorf("Options.Transport made %d requests, want 1", n.Load())
	}
}

// performFunc is an esapi.Transport.
type performFunc func(*http.Request) (*http.Response, error)

func (f performFunc) Perform(r *http.Request) (*http.Response, error) { return f(r) }

func TestNewFromTransport(t *testing.T) {
	srv := newServer(t, nil)
	target, _ := url.Parse(srv.URL)
	var paths []string
	tp := performFunc(func(r *http.Request) (*http.Response, error) {
		paths = append(paths, r.Method+" "+r.URL.Path)
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		return http.DefaultTransport.RoundTrip(r)
	})
	b := es.NewFromTransport(tp, es.Options{Addresses: []string{"http://ignored.invalid"}})
	res, err := b.Search(context.Background(), "shipments", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 42 || len(paths) != 1 || paths[0] != "POST /shipments/_search" {
		t.Errorf("total %d, requests %v", res.Total, paths)
	}
}

func TestProductCheck(t *testing.T) {
	var product atomic.Value
	product.Store("")
	var status atomic.Int32
	status.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := product.Load().(string); p != "" {
			w.Header().Set("X-Elastic-Product", p)
		}
		if s := int(status.Load()); s != 200 {
			writeJSON(w, s, `{"error": {"type": "security_exception", "reason": "missing authentication credentials"}, "status": 401}`)
			return
		}
		writeJSON(w, 200, searchResponse)
	}))
	defer srv.Close()
	b, err := es.New(es.Options{Addresses: []string{srv.URL}, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	// An error response is not product-checked (as the official client).
	status.Store(401)
	var ee *es.Error
	if err := doSearch(t, b); !errors.As(err, &ee) || ee.Status != 401 || ee.Type != "security_exception" {
		t.Errorf("401 without the header: error = %v (%T), want a 401 *es.Error", err, err)
	}
	status.Store(200)
	product.Store("OpenSearch")
	var te *es.TransportError
	if err := doSearch(t, b); !errors.As(err, &te) || !errors.Is(err, es.ErrNotElasticsearch) || te.Op != "search" {
		t.Errorf("another product: error = %v (%T), want a *es.TransportError wrapping es.ErrNotElasticsearch", err, err)
	}
	product.Store("Elasticsearch")
	if err := doSearch(t, b); err != nil {
		t.Fatalf("genuine response: %v", err)
	}
	// Once a response passed the check, later ones are not checked (as the
	// official client).
	product.Store("")
	if err := doSearch(t, b); err != nil {
		t.Errorf("after a passed check: %v", err)
	}
}
