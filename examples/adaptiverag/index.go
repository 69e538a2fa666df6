package adaptiverag

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/weftlang/weft/retrieval"
)

// IndexRetriever is the Retriever of a retrieval.Index: BM25 over SQLite
// FTS5 (hybrid with vectors when the index has an embedder). Filters map
// to the documents' "company" and "year" metadata.
type IndexRetriever struct {
	Index *retrieval.Index
}

// Search runs the query on the index with the filters as metadata filters.
func (r IndexRetriever) Search(ctx context.Context, query string, filters Filters, k int) ([]Passage, error) {
	q := retrieval.Query{Text: query, K: k}
	if !filters.IsZero() {
		q.Filter = map[string][]string{}
		if filters.Company != "" {
			q.Filter["company"] = []string{filters.Company}
		}
		if filters.Year != 0 {
			q.Filter["year"] = []string{strconv.Itoa(filters.Year)}
		}
	}
	hits, err := r.Index.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]Passage, 0, len(hits))
	for _, h := range hits {
		p := Passage{ID: h.ID, Text: h.Text, Source: h.Meta["source"], Company: h.Meta["company"], Score: h.Score}
		if y, err := strconv.Atoi(h.Meta["year"]); err == nil {
			p.Year = y
		}
		out = append(out, p)
	}
	return out, nil
}

// PassageDocuments makes passages retrieval documents, their company and
// year as metadata.
func PassageDocuments(ps []Passage) []retrieval.Document {
	docs := make([]retrieval.Document, 0, len(ps))
	for _, p := range ps {
		d := retrieval.Document{ID: p.ID, Text: p.Text, Meta: map[string]string{}}
		if p.Source != "" {
			d.Meta["source"] = p.Source
		}
		if p.Company != "" {
			d.Meta["company"] = p.Company
		}
		if p.Year != 0 {
			d.Meta["year"] = strconv.Itoa(p.Year)
		}
		docs = append(docs, d)
	}
	return docs
}

// OpenIndex indexes the documents at path in memory: a TAT-QA file (a JSON
// array of contexts with "table" and "paragraphs") through
// retrieval.LoadTATQA, anything else through LoadPassages. Close the
// index when done.
func OpenIndex(ctx context.Context, path string) (*retrieval.Index, error) {
	var docs []retrieval.Document
	if isTATQA(path) {
		t, err := retrieval.LoadTATQA(path)
		if err != nil {
			return nil, err
		}
		docs = t.Documents
	} else {
		ps, err := LoadPassages(path)
		if err != nil {
			return nil, err
		}
		docs = PassageDocuments(ps)
	}
	ix, err := retrieval.Open(ctx, ":memory:", nil)
	if err != nil {
		return nil, err
	}
	if err := ix.Add(ctx, docs...); err != nil {
		ix.Close()
		return nil, fmt.Errorf("indexing %s: %w", path, err)
	}
	return ix, nil
}

// isTATQA reports whether path is a JSON file whose first element has a
// table and paragraphs, as TAT-QA's contexts do.
func isTATQA(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return false
	}
	var first struct {
		Table      json.RawMessage `json:"table"`
		Paragraphs json.RawMessage `json:"paragraphs"`
	}
	return dec.Decode(&first) == nil && first.Table != nil && first.Paragraphs != nil
}
