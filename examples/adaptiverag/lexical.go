package adaptiverag

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Terms splits text into the terms lexical scoring compares: lower-cased
// runs of letters and digits, without English stop words and one-letter
// words, with a light plural stemming ("revenues" and "revenue" are one
// term, "companies" is "company").
func Terms(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if len([]rune(w)) < 2 || isStopword(w) {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// stem folds the commonest English plurals.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// isStopword reports whether w is an English function word that carries
// no meaning for search.
func isStopword(w string) bool {
	switch w {
	case "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by",
		"for", "with", "about", "from", "into", "over", "as", "is", "are", "was", "were",
		"be", "been", "being", "do", "does", "did", "has", "have", "had", "it", "its",
		"this", "that", "these", "those", "what", "which", "who", "whom", "how", "why",
		"when", "where", "there", "their", "they", "them", "we", "our", "you", "your",
		"he", "she", "his", "her", "me", "my", "i", "can", "could", "would", "should",
		"will", "shall", "may", "might", "not", "no", "so", "than", "then", "also",
		"any", "all", "some", "more", "most", "such", "tell", "please", "s":
		return true
	}
	return false
}

// BM25 parameters: the usual k1 and b.
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

// bm25 scores a bag of query terms against documents given as term
// frequencies, with document frequencies over n documents of average
// length avgdl.
type bm25 struct {
	k1, b  float64
	n      int
	avgdl  float64
	df     map[string]int
	unique []string // the query's distinct terms
}

func newBM25(k1, b float64, query []string, docs []map[string]int, lens []int) *bm25 {
	if k1 <= 0 {
		k1 = DefaultK1
	}
	if b <= 0 || b > 1 {
		b = DefaultB
	}
	s := &bm25{k1: k1, b: b, n: len(docs), df: map[string]int{}}
	for _, t := range query {
		if _, ok := s.df[t]; !ok {
			s.df[t] = 0
			s.unique = append(s.unique, t)
		}
	}
	total := 0
	for i, d := range docs {
		total += lens[i]
		for _, t := range s.unique {
			if d[t] > 0 {
				s.df[t]++
			}
		}
	}
	if len(docs) > 0 {
		s.avgdl = float64(total) / float64(len(docs))
	}
	return s
}

func (s *bm25) score(tf map[string]int, dl int) float64 {
	if s.avgdl == 0 {
		return 0
	}
	var sum float64
	for _, t := range s.unique {
		f := float64(tf[t])
		if f == 0 {
			continue
		}
		df := float64(s.df[t])
		idf := math.Log(1 + (float64(s.n)-df+0.5)/(df+0.5))
		sum += idf * f * (s.k1 + 1) / (f + s.k1*(1-s.b+s.b*float64(dl)/s.avgdl))
	}
	return sum
}

// termFreqs counts the terms of text.
func termFreqs(text string) (map[string]int, int) {
	ts := Terms(text)
	tf := make(map[string]int, len(ts))
	for _, t := range ts {
		tf[t]++
	}
	return tf, len(ts)
}

// LexicalReranker is the default Reranker: BM25 of the question's terms
// over the candidate passages (document frequencies counted among the
// candidates), ties kept in retrieval order. It calls no model. The zero
// value uses DefaultK1 and DefaultB.
type LexicalReranker struct {
	K1, B float64
}

// Rerank scores passages against question and returns the best k, best
// first, each with its BM25 score. Passages sharing no term with the
// question score 0 and come last, in retrieval order.
func (r LexicalReranker) Rerank(ctx context.Context, question string, passages []Passage, k int) ([]Passage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tfs := make([]map[string]int, len(passages))
	lens := make([]int, len(passages))
	for i, p := range passages {
		tfs[i], lens[i] = termFreqs(p.Text)
	}
	s := newBM25(r.K1, r.B, Terms(question), tfs, lens)
	out := slices.Clone(passages)
	for i := range out {
		out[i].Score = s.score(tfs[i], lens[i])
	}
	slices.SortStableFunc(out, func(a, b Passage) int { return cmp.Compare(b.Score, a.Score) })
	if k >= 0 && len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// MemoryRetriever is a Retriever over passages held in memory, scored by
// BM25 over the whole collection. It is for tests, demos and small
// collections; an SQLite FTS5 index replaces it for real ones. It is
// safe for concurrent use.
type MemoryRetriever struct {
	passages []Passage
	tfs      []map[string]int
	lens     []int
	k1, b    float64
}

// NewMemoryRetriever indexes passages (copied).
func NewMemoryRetriever(passages []Passage) *MemoryRetriever {
	m := &MemoryRetriever{passages: slices.Clone(passages), k1: DefaultK1, b: DefaultB}
	m.tfs = make([]map[string]int, len(m.passages))
	m.lens = make([]int, len(m.passages))
	for i, p := range m.passages {
		m.tfs[i], m.lens[i] = termFreqs(p.Text + " " + p.Company)
	}
	return m
}

// Len returns the number of passages.
func (m *MemoryRetriever) Len() int { return len(m.passages) }

// Search returns the k passages that best match query among those
// matching filters (company compared without case), best first; passages
// sharing no term with query are not returned.
func (m *MemoryRetriever) Search(ctx context.Context, query string, filters Filters, k int) ([]Passage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := newBM25(m.k1, m.b, Terms(query), m.tfs, m.lens)
	var out []Passage
	for i, p := range m.passages {
		if filters.Company != "" && !strings.EqualFold(strings.TrimSpace(filters.Company), p.Company) {
			continue
		}
		if filters.Year != 0 && filters.Year != p.Year {
			continue
		}
		if sc := s.score(m.tfs[i], m.lens[i]); sc > 0 {
			p.Score = sc
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b Passage) int { return cmp.Compare(b.Score, a.Score) })
	if k >= 0 && len(out) > k {
		out = out[:k]
	}
	return out, nil
}
