package adaptiverag

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/weftlang/weft/llm"
)

// Retriever searches the document collection. The in-memory
// MemoryRetriever implements it; an SQLite FTS5 index is meant to replace
// it in production.
type Retriever interface {
	// Search returns at most k passages matching query, best first,
	// restricted to those matching every non-zero field of filters. No
	// match is an empty result, not an error.
	Search(ctx context.Context, query string, filters Filters, k int) ([]Passage, error)
}

// Reranker orders retrieved passages by relevance to the question. The
// default, LexicalReranker, needs no model; an LLM or cross-encoder
// reranker can replace it.
type Reranker interface {
	// Rerank returns the k passages most relevant to question, best
	// first, with their new scores.
	Rerank(ctx context.Context, question string, passages []Passage, k int) ([]Passage, error)
}

// RelevanceThreshold is the seed's domain-relevance cut-off: a question
// the LLM scores below it is OutOfDomain, whatever intent it gave.
const RelevanceThreshold = 0.3

// The defaults of Deps' zero fields.
const (
	DefaultHistoryTurns    = 3
	DefaultMaxQueries      = 3
	DefaultSearchK         = 5
	DefaultTopK            = 4
	DefaultMinQueryQuality = 0.4
	DefaultDomain          = "company annual reports and financial filings (revenue, profit, costs, cash, segments, risks, strategy)"
	DefaultMaxSteps        = 20
)

// Deps are the workflow's dependencies and settings, passed to New: the
// seed binds them to its nodes with functools.partial. Model and
// Retriever are required; a zero setting takes its default.
type Deps struct {
	// Model answers every LLM call: intent classification and query
	// analysis (structured output), clarification and answers (plain
	// text). Required.
	Model llm.Model
	// ModelName is put in each request's Model field; "" uses the
	// client's model.
	ModelName string
	// Retriever searches the documents. Required.
	Retriever Retriever
	// Reranker orders the retrieved documents; nil means LexicalReranker.
	Reranker Reranker
	// Logger receives each node's ---NODE_NAME--- line and the errors the
	// nodes recover from; nil discards them.
	Logger *slog.Logger

	// Domain describes what the documents are about, for the prompts and
	// the out-of-domain reply; "" means DefaultDomain.
	Domain string
	// OODPatterns are the fast out-of-domain patterns tried before the
	// LLM; nil means DefaultOODPatterns(), an empty non-nil slice none.
	OODPatterns []OODPattern
	// DomainTerms are words that keep a question away from the fast
	// patterns (it goes to the LLM even if a pattern matches): "how did
	// the weather affect revenue" is in the domain. nil means
	// DefaultDomainTerms(), an empty non-nil slice none.
	DomainTerms []string

	// HistoryTurns is how many earlier turns (a question and its reply)
	// the prompts include: 0 means DefaultHistoryTurns, negative none.
	HistoryTurns int
	// MaxQueries bounds the alternative queries query analysis adds to
	// the question: 0 means DefaultMaxQueries, negative none.
	MaxQueries int
	// SearchK is how many passages each query retrieves: 0 (or less)
	// means DefaultSearchK.
	SearchK int
	// TopK is how many reranked passages the answer is generated from: 0
	// (or less) means DefaultTopK.
	TopK int
	// MinQueryQuality is the query quality below which the graph asks
	// for clarification: 0 means DefaultMinQueryQuality, negative never.
	MinQueryQuality float64
	// MaxRepairs bounds how often a structured-output call is re-asked
	// after a reply that does not match its schema (structured.Options):
	// 0 means structured.DefaultMaxRepairs, negative never.
	MaxRepairs int
	// CallTimeout bounds each LLM and retriever call; a call that takes
	// longer fails and its node falls back. 0 means no bound.
	CallTimeout time.Duration
	// MaxSteps bounds the node executions of one run: 0 (or less) means
	// DefaultMaxSteps.
	MaxSteps int
}

// settings are Deps with the defaults filled in.
type settings struct {
	Deps
	patterns    []OODPattern
	domainTerms map[string]bool
}

func (d Deps) settings() (*settings, error) {
	var errs []error
	if d.Model == nil {
		errs = append(errs, errors.New("adaptiverag: Deps.Model is nil"))
	}
	if d.Retriever == nil {
		errs = append(errs, errors.New("adaptiverag: Deps.Retriever is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &settings{Deps: d}
	if s.Reranker == nil {
		s.Reranker = LexicalReranker{}
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.Domain == "" {
		s.Domain = DefaultDomain
	}
	s.patterns = d.OODPatterns
	if s.patterns == nil {
		s.patterns = DefaultOODPatterns()
	}
	terms := d.DomainTerms
	if terms == nil {
		terms = DefaultDomainTerms()
	}
	s.domainTerms = make(map[string]bool, len(terms))
	for _, t := range terms {
		for _, w := range Terms(t) {
			s.domainTerms[w] = true
		}
	}
	s.HistoryTurns = orDefault(s.HistoryTurns, DefaultHistoryTurns)
	s.MaxQueries = orDefault(s.MaxQueries, DefaultMaxQueries)
	s.SearchK = positive(s.SearchK, DefaultSearchK)
	s.TopK = positive(s.TopK, DefaultTopK)
	s.MaxSteps = positive(s.MaxSteps, DefaultMaxSteps)
	if s.MinQueryQuality == 0 {
		s.MinQueryQuality = DefaultMinQueryQuality
	}
	return s, nil
}

// orDefault is v, or def when v is 0, or 0 when v is negative.
func orDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// positive is v, or def when v is not positive.
func positive(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
