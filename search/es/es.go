// Package es is a search.Backend for real Elasticsearch clusters (8.x),
// through the esapi package of the official go-elasticsearch client and its
// transport, elastic-transport-go. The root go-elasticsearch package (and
// its typed API) is not used: Options holds the few connection settings
// the backend needs.
//
// Request bodies are sent as they are, so every construct of the query DSL
// works, not only the subset the embedded backend implements. Error
// responses become an *Error carrying Elasticsearch's error type and reason;
// requests that got no response become a *TransportError.
//
//	b, err := es.New(es.Options{Addresses: []string{"http://localhost:9200"}})
//	res, err := b.Search(ctx, "shipments", []byte(`{"query": {"term": {"carrier": "Maersk"}}}`))
package es

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/elastic/elastic-transport-go/v8/elastictransport"
	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/weftlang/weft/search"
)

// DefaultBulkSize is the number of documents sent per bulk request.
const DefaultBulkSize = 1000

// DefaultAddress is the node New connects to when Options.Addresses is
// empty and the ELASTICSEARCH_URL environment variable is not set.
const DefaultAddress = "http://localhost:9200"

// maxErrorBody bounds the part of an unparsable error body kept in Error.
const maxErrorBody = 2048

// ErrNotElasticsearch is the cause of the *TransportError returned when a
// successful response lacks the "X-Elastic-Product: Elasticsearch" header,
// as the official client does: the server is not Elasticsearch (or not a
// supported version of it).
var ErrNotElasticsearch = errors.New("the server is not Elasticsearch (no X-Elastic-Product: Elasticsearch header in the response)")

// Options configure a Backend. The connection fields (Addresses through
// DisableRetry) are used by New only; NewFromTransport ignores them.
type Options struct {
	// Addresses are the URLs of the nodes, for example
	// "https://es1.example.com:9200"; requests are spread over them. When
	// empty, the comma-separated URLs of the ELASTICSEARCH_URL environment
	// variable are used, or else DefaultAddress. A URL with user
	// information (https://user:password@host:9200) authenticates with it.
	Addresses []string
	// Username and Password authenticate with HTTP Basic authentication
	// (when both are set).
	Username string
	Password string
	// APIKey is a base64-encoded API key (the "encoded" value returned by
	// the create API key API); when set, it is used instead of Username
	// and Password.
	APIKey string
	// Header is added to every request (a header of the request itself
	// wins).
	Header http.Header
	// Transport makes the HTTP requests, for example an *http.Transport
	// with a TLSClientConfig for a private certificate authority; nil
	// means a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// MaxRetries is the number of retries of a request that failed with a
	// network error or got a 502, 503 or 504 response; 0 means 3.
	MaxRetries int
	// DisableRetry disables retries.
	DisableRetry bool

	// Refresh is the refresh parameter of bulk requests: "wait_for" (the
	// default when empty: documents are searchable when Index returns),
	// "true" or "false".
	Refresh string
	// BulkSize is the number of documents per bulk request; 0 means
	// DefaultBulkSize.
	BulkSize int
}

// Backend is a search.Backend and search.IndexManager on an Elasticsearch
// cluster. It is safe for concurrent use.
type Backend struct {
	transport esapi.Transport
	refresh   string
	bulkSize  int
	// genuine is set by the first successful response that carried the
	// X-Elastic-Product header; later responses are not checked.
	genuine atomic.Bool
}

var (
	_ search.Backend      = (*Backend)(nil)
	_ search.IndexManager = (*Backend)(nil)
)

// New returns a Backend on a new elastictransport.Client built from the
// connection fields of opts. No request is made until the first call. An
// address that is not an http or https URL is a *TransportError.
func New(opts Options) (*Backend, error) {
	t, err := newTransport(opts)
	if err != nil {
		return nil, &TransportError{Op: "connect", Err: err}
	}
	return NewFromTransport(t, opts), nil
}

// NewFromTransport returns a Backend that performs its requests through t,
// for example an *elastictransport.Client configured beyond what Options
// offers, or an *elasticsearch.Client. The connection fields of opts are
// ignored. Responses are product-checked as with New.
func NewFromTransport(t esapi.Transport, opts Options) *Backend {
	b := &Backend{transport: t, refresh: opts.Refresh, bulkSize: opts.BulkSize}
	if b.refresh == "" {
		b.refresh = "wait_for"
	}
	if b.bulkSize <= 0 {
		b.bulkSize = DefaultBulkSize
	}
	return b
}

// newTransport builds the transport of New, with the defaults of the
// official client: retries of network errors and of 502, 503 and 504
// responses, at most 3 unless opts.MaxRetries says otherwise.
func newTransport(opts Options) (*elastictransport.Client, error) {
	addrs := opts.Addresses
	if len(addrs) == 0 {
		if env := os.Getenv("ELASTICSEARCH_URL"); env != "" {
			for a := range strings.SplitSeq(env, ",") {
				if a = strings.TrimSpace(a); a != "" {
					addrs = append(addrs, a)
				}
			}
		}
	}
	if len(addrs) == 0 {
		addrs = []string{DefaultAddress}
	}
	urls := make([]*url.URL, 0, len(addrs))
	for i, a := range addrs {
		u, err := parseAddress(a)
		if err != nil {
			return nil, fmt.Errorf("address %d: %w", i+1, err)
		}
		urls = append(urls, u)
	}
	topts := []elastictransport.Option{
		elastictransport.WithUserAgent(userAgent()),
		elastictransport.WithURLs(urls...),
	}
	// As the official client: an API key replaces the other credentials.
	if opts.APIKey != "" {
		topts = append(topts, elastictransport.WithAPIKey(opts.APIKey))
	} else if opts.Username != "" || opts.Password != "" {
		topts = append(topts, elastictransport.WithBasicAuth(opts.Username, opts.Password))
	}
	if opts.Header != nil {
		topts = append(topts, elastictransport.WithHeader(opts.Header.Clone()))
	}
	if opts.Transport != nil {
		topts = append(topts, elastictransport.WithTransport(opts.Transport))
	}
	if opts.DisableRetry {
		topts = append(topts, elastictransport.WithDisableRetry())
	}
	if opts.MaxRetries != 0 {
		// A negative count is an error of WithMaxRetries.
		topts = append(topts, elastictransport.WithMaxRetries(opts.MaxRetries))
	}
	return elastictransport.NewClient(topts...)
}

// parseAddress parses a node URL; its error does not repeat the address,
// which may hold a password.
func parseAddress(a string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(a), "/"))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("not an http or https URL: %q", u.Redacted())
	}
	return u, nil
}

// userAgent is the User-Agent of the requests: the official client's, with
// weft added.
func userAgent() string {
	return fmt.Sprintf("go-elasticsearch/%s (%s %s; Go %s; weft)", esapi.Version,
		runtime.GOOS, runtime.GOARCH, strings.TrimPrefix(runtime.Version(), "go"))
}

// Cause is one entry of the root_cause or caused_by of an Elasticsearch
// error.
type Cause struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// Error is an error response of Elasticsearch (HTTP status 300 and above).
// When the error has a backend-neutral meaning, Err holds it (a
// *search.IndexNotFoundError for index_not_found_exception), so errors.As
// finds it through the *Error.
type Error struct {
	Op     string // "search", "bulk", "create index", "get mapping" or "delete index"
	Index  string
	Status int
	// Type and Reason are Elasticsearch's error.type and error.reason, for
	// example "parsing_exception" and "unknown query [fuzy]".
	Type   string
	Reason string
	// RootCause is error.root_cause; CausedBy is error.caused_by, if any.
	RootCause []Cause
	CausedBy  *Cause
	// Body is the raw response body when it was not an Elasticsearch error
	// object (for example an HTML page from a proxy), truncated.
	Body string
	// Err is the backend-neutral meaning of the error, if any.
	Err error
}

// Error implements the error interface.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "es: %s [%s]: status %d", e.Op, e.Index, e.Status)
	if e.Type != "" {
		fmt.Fprintf(&b, ": %s: %s", e.Type, e.Reason)
	} else if e.Reason != "" {
		fmt.Fprintf(&b, ": %s", e.Reason)
	}
	if e.CausedBy != nil && e.CausedBy.Reason != "" && e.CausedBy.Reason != e.Reason {
		fmt.Fprintf(&b, " (caused by %s: %s)", e.CausedBy.Type, e.CausedBy.Reason)
	}
	if e.Type == "" && e.Reason == "" && e.Body != "" {
		fmt.Fprintf(&b, ": %s", e.Body)
	}
	return b.String()
}

// Unwrap returns the backend-neutral meaning of the error, if any.
func (e *Error) Unwrap() error { return e.Err }

// TransportError reports a request that got no usable response: a refused
// or dropped connection, a timeout, a cancelled context, a server that is
// not Elasticsearch, or a response body that could not be read or decoded.
type TransportError struct {
	Op    string
	Index string
	Err   error
}

// Error implements the error interface.
func (e *TransportError) Error() string {
	return fmt.Sprintf("es: %s [%s]: %v", e.Op, e.Index, e.Err)
}

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// do runs an esapi request and returns the body of a successful response,
// or an *Error or *TransportError.
func (b *Backend) do(ctx context.Context, op, index string, req esapi.Request) ([]byte, error) {
	res, err := req.Do(ctx, b.transport)
	if err != nil {
		return nil, &TransportError{Op: op, Index: index, Err: err}
	}
	defer res.Body.Close()
	// The product check of the official client: the first successful
	// response must come from Elasticsearch.
	if res.StatusCode >= 200 && res.StatusCode < 300 && !b.genuine.Load() {
		if res.Header.Get("X-Elastic-Product") != "Elasticsearch" {
			return nil, &TransportError{Op: op, Index: index, Err: ErrNotElasticsearch}
		}
		b.genuine.Store(true)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, &TransportError{Op: op, Index: index, Err: fmt.Errorf("reading the response: %w", err)}
	}
	if res.IsError() {
		return nil, responseError(op, index, res.StatusCode, body)
	}
	return body, nil
}

// responseError decodes an Elasticsearch error body:
// {"error": {"type", "reason", "root_cause", "caused_by"}, "status"} or
// {"error": "text", "status"}.
func responseError(op, index string, status int, body []byte) *Error {
	e := &Error{Op: op, Index: index, Status: status}
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	var obj struct {
		Type      string  `json:"type"`
		Reason    string  `json:"reason"`
		RootCause []Cause `json:"root_cause"`
		CausedBy  *Cause  `json:"caused_by"`
		Index     string  `json:"index"`
	}
	var text string
	switch {
	case json.Unmarshal(body, &env) != nil || len(env.Error) == 0:
		e.Body = truncate(string(body))
	case json.Unmarshal(env.Error, &obj) == nil:
		e.Type, e.Reason, e.RootCause, e.CausedBy = obj.Type, obj.Reason, obj.RootCause, obj.CausedBy
	case json.Unmarshal(env.Error, &text) == nil:
		e.Reason = text
	default:
		e.Body = truncate(string(body))
	}
	if e.Type == "index_not_found_exception" {
		name := obj.Index
		if name == "" {
			name = index
		}
		e.Err = &search.IndexNotFoundError{Index: name}
	}
	return e
}

func truncate(s string) string {
	if len(s) > maxErrorBody {
		return s[:maxErrorBody] + "..."
	}
	return s
}

// Search runs body on index (an index name, a comma-separated list or a
// pattern). A body that is not well-formed JSON is reported as a
// *search.SyntaxError without contacting the cluster.
func (b *Backend) Search(ctx context.Context, index string, body []byte) (*search.Response, error) {
	if index == "" {
		return nil, &search.QueryError{Msg: "an index name is required"}
	}
	from, size, err := paging(body)
	if err != nil {
		return nil, err
	}
	req := esapi.SearchRequest{Index: []string{index}}
	if len(bytes.TrimSpace(body)) > 0 {
		req.Body = bytes.NewReader(body)
	}
	raw, err := b.do(ctx, "search", index, req)
	if err != nil {
		return nil, err
	}
	var r struct {
		Hits struct {
			Total *struct {
				Value    int64  `json:"value"`
				Relation string `json:"relation"`
			} `json:"total"`
			MaxScore *float64 `json:"max_score"`
			Hits     []struct {
				Index  string          `json:"_index"`
				ID     string          `json:"_id"`
				Score  *float64        `json:"_score"`
				Source json.RawMessage `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &TransportError{Op: "search", Index: index, Err: fmt.Errorf("decoding the response: %w", err)}
	}
	out := &search.Response{Total: -1, From: from, Size: size, Hits: make([]search.Hit, 0, len(r.Hits.Hits))}
	if t := r.Hits.Total; t != nil {
		out.Total, out.TotalRelation = t.Value, t.Relation
	}
	if r.Hits.MaxScore != nil {
		out.MaxScore = *r.Hits.MaxScore
	}
	for _, h := range r.Hits.Hits {
		hit := search.Hit{Index: h.Index, ID: h.ID, Source: h.Source}
		if h.Score != nil {
			hit.Score = *h.Score
		}
		out.Hits = append(out.Hits, hit)
	}
	return out, nil
}

// paging checks that body is well-formed JSON and returns its from and size,
// with Elasticsearch's defaults.
func paging(body []byte) (from, size int, err error) {
	from, size = 0, search.DefaultSize
	if len(bytes.TrimSpace(body)) == 0 {
		return from, size, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return 0, 0, &search.QueryError{Msg: "the request body must be a JSON object"}
		}
		return 0, 0, search.NewSyntaxError(body, err)
	}
	end := dec.InputOffset()
	for end < int64(len(body)) && strings.IndexByte(" \t\r\n", body[end]) >= 0 {
		end++
	}
	if end < int64(len(body)) {
		return 0, 0, search.TrailingDataError(body, end)
	}
	var n int
	if v, ok := top["from"]; ok && json.Unmarshal(v, &n) == nil {
		from = n
	}
	if v, ok := top["size"]; ok && json.Unmarshal(v, &n) == nil {
		size = n
	}
	return from, size, nil
}

// Index sends docs in bulk requests of Options.BulkSize documents, with
// the index action (add or replace). Rejected documents are reported in a
// *search.BulkError; a failed request stops at once with an *Error or a
// *TransportError.
func (b *Backend) Index(ctx context.Context, index string, docs []search.Doc) error {
	if index == "" {
		return &search.QueryError{Msg: "an index name is required"}
	}
	var failed []search.DocError
	for start := 0; start < len(docs); start += b.bulkSize {
		chunk := docs[start:min(start+b.bulkSize, len(docs))]
		var buf bytes.Buffer
		var positions []int // position in docs of each action sent
		for i, d := range chunk {
			pos := start + i
			var src bytes.Buffer
			if err := json.Compact(&src, d.Source); err != nil || len(src.Bytes()) == 0 || src.Bytes()[0] != '{' {
				reason := "the source must be a JSON object"
				if err != nil {
					reason = "failed to parse the source: " + err.Error()
				}
				failed = append(failed, search.DocError{ID: d.ID, Position: pos, Type: "document_parsing_exception", Reason: reason})
				continue
			}
			action := map[string]map[string]string{"index": {}}
			if d.ID != "" {
				action["index"]["_id"] = d.ID
			}
			line, err := json.Marshal(action)
			if err != nil {
				return &TransportError{Op: "bulk", Index: index, Err: err}
			}
			buf.Write(line)
			buf.WriteByte('\n')
			buf.Write(src.Bytes())
			buf.WriteByte('\n')
			positions = append(positions, pos)
		}
		if len(positions) == 0 {
			continue
		}
		raw, err := b.do(ctx, "bulk", index, esapi.BulkRequest{Index: index, Body: &buf, Refresh: b.refresh,
			Header: http.Header{"Content-Type": {"application/x-ndjson"}}})
		if err != nil {
			return err
		}
		fails, err := bulkFailures(raw, positions, docs)
		if err != nil {
			return &TransportError{Op: "bulk", Index: index, Err: err}
		}
		failed = append(failed, fails...)
	}
	if len(failed) > 0 {
		slices.SortFunc(failed, func(a, b search.DocError) int { return a.Position - b.Position })
		return &search.BulkError{Index: index, Failed: failed, Total: len(docs)}
	}
	return nil
}

// bulkFailures reads the items of a bulk response.
func bulkFailures(raw []byte, positions []int, docs []search.Doc) ([]search.DocError, error) {
	var r struct {
		Errors bool `json:"errors"`
		Items  []map[string]struct {
			ID     string `json:"_id"`
			Status int    `json:"status"`
			Error  *Cause `json:"error"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("decoding the bulk response: %w", err)
	}
	if !r.Errors {
		return nil, nil
	}
	if len(r.Items) != len(positions) {
		return nil, fmt.Errorf("bulk response has %d items for %d actions", len(r.Items), len(positions))
	}
	var out []search.DocError
	for i, item := range r.Items {
		for _, k := range slices.Sorted(maps.Keys(item)) {
			res := item[k]
			if res.Error == nil {
				continue
			}
			pos := positions[i]
			out = append(out, search.DocError{ID: docs[pos].ID, Position: pos, Type: res.Error.Type, Reason: res.Error.Reason})
		}
	}
	return out, nil
}

// CreateIndex creates index with the mapping of schema (see
// search.Schema.Mapping). When the index exists, its mapping is read back:
// an equal schema is not an error, another one is a *search.SchemaError.
func (b *Backend) CreateIndex(ctx context.Context, index string, schema search.Schema) error {
	if index == "" {
		return &search.QueryError{Msg: "an index name is required"}
	}
	mapping, err := schema.Mapping()
	if err != nil {
		return err
	}
	_, err = b.do(ctx, "create index", index, esapi.IndicesCreateRequest{Index: index, Body: bytes.NewReader(mapping)})
	var ee *Error
	if !errors.As(err, &ee) || ee.Type != "resource_already_exists_exception" {
		return err
	}
	existing, err := b.schemaOf(ctx, index)
	if err != nil {
		return err
	}
	if !existing.Equal(schema) {
		return &search.SchemaError{Msg: fmt.Sprintf("index [%s] already exists with a different mapping", index)}
	}
	return nil
}

// schemaOf reads the mapping of an index back as a Schema.
func (b *Backend) schemaOf(ctx context.Context, index string) (search.Schema, error) {
	raw, err := b.do(ctx, "get mapping", index, esapi.IndicesGetMappingRequest{Index: []string{index}})
	if err != nil {
		return search.Schema{}, err
	}
	var r map[string]struct {
		Mappings struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return search.Schema{}, &TransportError{Op: "get mapping", Index: index, Err: fmt.Errorf("decoding the mapping: %w", err)}
	}
	s := search.Schema{Fields: map[string]search.Field{}}
	for _, m := range r {
		if err := addProperties(s.Fields, "", m.Mappings.Properties); err != nil {
			return search.Schema{}, &TransportError{Op: "get mapping", Index: index, Err: err}
		}
	}
	return s, nil
}

// addProperties flattens Elasticsearch mapping properties into fields.
func addProperties(dst map[string]search.Field, prefix string, props map[string]json.RawMessage) error {
	for name, raw := range props {
		var p struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Fields     map[string]struct {
				Type string `json:"type"`
			} `json:"fields"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("decoding the mapping of %s: %w", prefix+name, err)
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		if p.Properties != nil && (p.Type == "" || p.Type == "object") {
			if err := addProperties(dst, path, p.Properties); err != nil {
				return err
			}
			continue
		}
		f := search.Field{Type: search.FieldType(p.Type)}
		for sub, sf := range p.Fields {
			if f.Fields == nil {
				f.Fields = map[string]search.Field{}
			}
			f.Fields[sub] = search.Field{Type: search.FieldType(sf.Type)}
		}
		dst[path] = f
	}
	return nil
}

// DeleteIndex deletes index. A missing index is an *Error that wraps a
// *search.IndexNotFoundError.
func (b *Backend) DeleteIndex(ctx context.Context, index string) error {
	if index == "" {
		return &search.QueryError{Msg: "an index name is required"}
	}
	_, err := b.do(ctx, "delete index", index, esapi.IndicesDeleteRequest{Index: []string{index}})
	return err
}
