package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/weftlang/weft/retrieval"
)

// RetrieveArgs are the arguments of the retrieve tool.
type RetrieveArgs struct {
	Query string `json:"query" desc:"what to search for"`
	K     int    `json:"k,omitempty" desc:"how many passages (default 5)"`
	Year  string `json:"year,omitempty" desc:"only passages of this year, when the documents give theirs"`
}

// RetrieveResult is what the retrieve tool returns: the passages, most
// relevant first, and the id of each.
type RetrieveResult struct {
	Chunks  []string `json:"chunks"`
	Sources []string `json:"sources"`
}

// DefaultRetrieveK is how many passages retrieve returns unless asked.
const DefaultRetrieveK = 5

func (s *Set) retrieve(ctx context.Context, a RetrieveArgs) (RetrieveResult, error) {
	ix, err := s.index(ctx)
	if err != nil {
		return RetrieveResult{}, err
	}
	q := retrieval.Query{Text: a.Query, K: a.K}
	if q.K <= 0 {
		q.K = DefaultRetrieveK
	}
	if a.Year != "" {
		q.Filter = map[string][]string{"year": {a.Year}}
	}
	hits, err := ix.Search(ctx, q)
	if err != nil {
		return RetrieveResult{}, err
	}
	r := RetrieveResult{Chunks: []string{}, Sources: []string{}}
	for _, h := range hits {
		r.Chunks = append(r.Chunks, h.Text)
		r.Sources = append(r.Sources, h.ID)
	}
	return r, nil
}

// index opens Config.Docs once.
func (s *Set) index(ctx context.Context) (*retrieval.Index, error) {
	s.ixMu.Lock()
	defer s.ixMu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.ix != nil {
		return s.ix, nil
	}
	path := s.cfg.Docs
	if path == "" {
		return nil, notConfigured(Retrieve)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, &ResourceError{Tool: Retrieve, Resource: Documents, Err: err}
	}
	var opts *retrieval.Options
	if s.cfg.IndexOptions != nil {
		var err error
		if opts, err = s.cfg.IndexOptions(); err != nil {
			return nil, err
		}
	}
	ix, err := OpenDocuments(ctx, path, opts)
	if err != nil {
		return nil, &ResourceError{Tool: Retrieve, Resource: Documents, Name: path, Err: err}
	}
	s.ix = ix
	return ix, nil
}

// OpenDocuments opens path as the retrieve tool reads it: a TAT-QA JSON
// file (its name ends in ".json") indexed in memory, else a retrieval
// index file.
func OpenDocuments(ctx context.Context, path string, opts *retrieval.Options) (*retrieval.Index, error) {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return retrieval.Open(ctx, path, opts)
	}
	data, err := retrieval.LoadTATQA(path)
	if err != nil {
		return nil, err
	}
	return IndexDocuments(ctx, ":memory:", opts, data.Documents)
}

// IndexDocuments opens the retrieval index at dst (a file, or ":memory:")
// and adds docs to it.
func IndexDocuments(ctx context.Context, dst string, opts *retrieval.Options, docs []retrieval.Document) (*retrieval.Index, error) {
	ix, err := retrieval.Open(ctx, dst, opts)
	if err != nil {
		return nil, err
	}
	if err := ix.Add(ctx, docs...); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}
