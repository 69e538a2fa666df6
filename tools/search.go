package tools

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
	"github.com/weftlang/weft/search/es"
)

// ESArgs are the arguments of the es_search tool.
type ESArgs struct {
	Index string         `json:"index" desc:"the index to search"`
	Body  map[string]any `json:"body" desc:"the _search request body: query, sort, from, size"`
}

// ESResult is what the es_search tool returns.
type ESResult struct {
	Total int64             `json:"total"`
	Hits  []json.RawMessage `json:"hits"`
	IDs   []string          `json:"ids"`
	From  int               `json:"from"`
	Size  int               `json:"size"`
}

func (s *Set) esSearch(ctx context.Context, a ESArgs) (ESResult, error) {
	b, err := s.searchBackend(ctx)
	if err != nil {
		return ESResult{}, err
	}
	body, err := json.Marshal(a.Body)
	if err != nil {
		return ESResult{}, err
	}
	res, err := b.Search(ctx, a.Index, body)
	if err != nil {
		return ESResult{}, err
	}
	r := ESResult{Total: res.Total, From: res.From, Size: res.Size, Hits: []json.RawMessage{}, IDs: []string{}}
	for _, h := range res.Hits {
		r.Hits = append(r.Hits, h.Source)
		r.IDs = append(r.IDs, h.ID)
	}
	return r, nil
}

// searchBackend opens Config.Search once.
func (s *Set) searchBackend(ctx context.Context) (search.Backend, error) {
	s.sbMu.Lock()
	defer s.sbMu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.sb != nil {
		return s.sb, nil
	}
	spec := s.cfg.Search
	if spec == "" {
		return nil, notConfigured(ESSearch)
	}
	open := s.cfg.OpenSearch
	if open == nil {
		open = OpenSearch
	}
	b, err := open(ctx, spec)
	if err != nil {
		return nil, &ResourceError{Tool: ESSearch, Resource: SearchBackend, Name: redact.DSN(spec), Err: err}
	}
	s.sb = b
	return b, nil
}

// OpenSearch opens the search backend spec names: "bleve:DIR" is the
// embedded Bleve indexes kept in DIR (which must exist), anything else the
// address of an Elasticsearch cluster.
func OpenSearch(_ context.Context, spec string) (search.Backend, error) {
	if dir, ok := strings.CutPrefix(spec, "bleve:"); ok {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		return blevesearch.New(blevesearch.Options{Dir: dir, StrictFields: true})
	}
	return es.New(es.Options{Addresses: []string{spec}})
}
