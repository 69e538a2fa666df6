// Package search defines a small, backend-neutral interface for running
// Elasticsearch query-DSL requests, together with the types shared by its
// implementations: the response shape, the documents to index, the field-type
// schema of an index and the errors a backend reports.
//
// Two implementations live in subpackages:
//
//   - search/bleve (package blevesearch) runs a documented subset of the query
//     DSL (see DSL.md in this directory) on an embedded Bleve index, in memory
//     or in a directory, with no server;
//   - search/es runs any request on a real Elasticsearch cluster through the
//     official go-elasticsearch client.
//
// The subpackage search/searchtest holds a conformance suite that asserts the
// same DSL semantics on any Backend.
//
// Request bodies are the JSON bodies of Elasticsearch's _search endpoint, as
// an LLM or a person would write them, for example:
//
//	{"query": {"bool": {
//	    "must":   [{"match": {"goods_description": "coffee"}}],
//	    "filter": [{"term": {"status": "in_transit"}},
//	               {"range": {"departure_date": {"gte": "2025-01-01"}}}]}},
//	 "sort": [{"departure_date": "desc"}], "size": 20}
package search

import (
	"context"
	"encoding/json"
)

// Backend runs Elasticsearch _search request bodies against an index and
// loads documents into it. Implementations are safe for concurrent use.
type Backend interface {
	// Search runs body, the JSON body of an Elasticsearch _search request,
	// on index. Errors are of the types in this package (SyntaxError,
	// QueryError, UnsupportedError, IndexNotFoundError) or backend-specific
	// types documented by the backend; match them with errors.As.
	Search(ctx context.Context, index string, body []byte) (*Response, error)

	// Index adds or replaces docs in index. Documents with an empty ID get a
	// generated one. When some documents are rejected, the error is a
	// *BulkError listing them; the other documents may have been indexed.
	Index(ctx context.Context, index string, docs []Doc) error
}

// IndexManager is implemented by backends that can create and delete
// indexes with an explicit Schema. Both backends in this module implement it.
type IndexManager interface {
	// CreateIndex creates index with the field types of schema. Creating an
	// index that already exists with an equal schema is not an error.
	CreateIndex(ctx context.Context, index string, schema Schema) error
	// DeleteIndex deletes index and its documents. Deleting an index that
	// does not exist returns a *IndexNotFoundError.
	DeleteIndex(ctx context.Context, index string) error
}

// Doc is one document to index: its ID and its JSON source, which must be a
// JSON object.
type Doc struct {
	ID     string          `json:"_id,omitempty"`
	Source json.RawMessage `json:"_source"`
}

// Response is the backend-neutral part of an Elasticsearch search response.
type Response struct {
	// Total is the number of matching documents, exact when TotalRelation is
	// "eq" and a lower bound when it is "gte" (see track_total_hits). It is
	// -1 when the request set track_total_hits to false.
	Total int64 `json:"total"`
	// TotalRelation is "eq", "gte", or "" when the total was not tracked.
	TotalRelation string `json:"total_relation,omitempty"`
	// MaxScore is the highest score among the hits, 0 when the hits are not
	// scored (sorted by a field only).
	MaxScore float64 `json:"max_score"`
	// Hits is the requested page of matching documents.
	Hits []Hit `json:"hits"`
	// From and Size echo the effective paging of the request.
	From int `json:"from"`
	Size int `json:"size"`
}

// Hit is one matching document.
type Hit struct {
	Index string  `json:"_index,omitempty"`
	ID    string  `json:"_id"`
	Score float64 `json:"_score"`
	// Source is the document's JSON source, filtered by the request's
	// _source option; nil when _source is false.
	Source json.RawMessage `json:"_source,omitempty"`
}

// Defaults shared by the backends, equal to Elasticsearch's.
const (
	// DefaultSize is the number of hits returned when a request has no size.
	DefaultSize = 10
	// MaxResultWindow is the largest from+size a request may ask for
	// (Elasticsearch's index.max_result_window default).
	MaxResultWindow = 10000
	// DefaultTrackTotalHits is the count up to which totals are exact when a
	// request does not set track_total_hits.
	DefaultTrackTotalHits = 10000
)
