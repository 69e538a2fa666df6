package retrieval

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weftlang/weft/llm"
)

// hashEmbedder is a deterministic embedder for tests: a hashed bag of
// words in 64 dimensions, with a few synonyms sharing a dimension, so that
// vector search finds what keyword search cannot.
type hashEmbedder struct{}

// synonyms maps words to the word whose dimension they share.
var synonyms = map[string]string{"sales": "revenue", "turnover": "revenue", "profit": "income", "earnings": "income"}

func (hashEmbedder) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &llm.EmbedResponse{Model: "hash"}
	for _, text := range req.Input {
		v := make([]float32, 64)
		for _, w := range tokens(text) {
			if s, ok := synonyms[w]; ok {
				w = s
			}
			if isStop(w) {
				continue
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		v[63] += 0.01 // no zero vectors
		out.Vectors = append(out.Vectors, v)
	}
	return out, nil
}

// countingEmbedder counts requests and texts, and fails on texts holding
// "fail".
type countingEmbedder struct {
	requests, texts int
	short           bool // reply with one vector too few
}

func (e *countingEmbedder) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	e.requests++
	e.texts += len(req.Input)
	for _, s := range req.Input {
		if strings.Contains(s, "fail") {
			return nil, &llm.Error{Provider: "test", Status: 503, Message: "overloaded", Retryable: true}
		}
	}
	resp, err := hashEmbedder{}.Embed(ctx, req)
	if err == nil && e.short {
		resp.Vectors = resp.Vectors[1:]
	}
	return resp, err
}

var sales = []Document{
	{ID: "sales", Text: "Net sales rose 12% on strong turnover in Europe.", Meta: map[string]string{"year": "2019"}},
	{ID: "revenue", Text: "Revenue recognition policy for multi-year contracts.", Meta: map[string]string{"year": "2019"}},
	{ID: "leases", Text: "Operating leases and lease liabilities.", Meta: map[string]string{"year": "2018"}},
	{ID: "income", Text: "Profit before tax and earnings per share.", Meta: map[string]string{"year": "2019"}},
}

func TestVectorSearch(t *testing.T) {
	ix := openMem(t, &Options{Embedder: hashEmbedder{}}, sales...)
	// Keyword search knows no synonyms.
	if got := ids(search(t, ix, Query{Text: "revenue", Mode: Keyword})); !cmp.Equal(got, []string{"revenue"}) {
		t.Errorf("keyword: %v", got)
	}
	// Vector search finds "sales" and "turnover" for "revenue".
	hits := search(t, ix, Query{Text: "revenue", Mode: Vector, K: 2})
	if got := ids(hits); !cmp.Equal(got, []string{"sales", "revenue"}) {
		t.Errorf("vector: %v, want [sales revenue]", got)
	}
	if len(hits) == 2 && !(hits[0].Score > hits[1].Score && hits[0].Score <= 1) {
		t.Errorf("vector scores %g, %g: want cosines, best first", hits[0].Score, hits[1].Score)
	}
	// Filters apply to vector search.
	if got := ids(search(t, ix, Query{Text: "revenue", Mode: Vector, K: 2, Filter: map[string][]string{"year": {"2018"}}})); !cmp.Equal(got, []string{"leases"}) {
		t.Errorf("filtered vector: %v, want [leases]", got)
	}
}

func TestHybridSearch(t *testing.T) {
	ix := openMem(t, &Options{Embedder: hashEmbedder{}}, sales...)
	// Auto is Hybrid with an embedder: the keyword match and the
	// synonyms are found, the keyword and vector match first.
	for _, m := range []Mode{Auto, Hybrid} {
		hits := search(t, ix, Query{Text: "revenue", Mode: m, K: 2})
		if got := ids(hits); !cmp.Equal(got, []string{"revenue", "sales"}) {
			t.Errorf("%v: %v, want [revenue sales]", m, got)
		}
		if len(hits) == 2 && hits[0].Score != 1/float64(rrfK+1)+1/float64(rrfK+2) {
			t.Errorf("%v: top score %g, want the fused 1/61 + 1/62", m, hits[0].Score)
		}
	}
	if got := ids(search(t, ix, Query{Text: "profit", Filter: map[string][]string{"year": {"2018"}}})); len(got) != 1 || got[0] != "leases" {
		t.Errorf("filtered hybrid: %v, want only the 2018 document", got)
	}
	if hits := search(t, ix, Query{Text: "?!", Mode: Hybrid}); len(hits) != 0 {
		t.Errorf("an empty hybrid query found %v", ids(hits))
	}
}

func TestFuse(t *testing.T) {
	a := []scored{{1, 9}, {2, 8}, {3, 7}}
	b := []scored{{3, 0.9}, {4, 0.8}, {1, 0.1}}
	got := fuse(3, 2, a, b)
	want := []scored{{3, 1.0 / 61}, {1, 1.0 / 61}, {2, 1.0 / 62}}
	// 1 and 3 tie at 1/61 (each first in one list within depth 2); seq
	// breaks the tie.
	want[0], want[1] = want[1], want[0]
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(scored{})); diff != "" {
		t.Errorf("fuse (-want +got):\n%s", diff)
	}
}

func TestVectorsStored(t *testing.T) {
	e := &countingEmbedder{}
	var docs []Document
	for i := range embedBatch + 3 {
		docs = append(docs, Document{ID: string(rune('a'+i%26)) + strings.Repeat("x", i), Text: "note"})
	}
	ix := openMem(t, &Options{Embedder: e, EmbedModel: "m"}, docs...)
	if e.requests != 2 || e.texts != len(docs) {
		t.Errorf("%d requests for %d texts, want 2 for %d", e.requests, e.texts, len(docs))
	}
	var n, bytes int
	if err := ix.reader.QueryRowContext(t.Context(), `SELECT count(*), sum(length(vec)) FROM docs WHERE vec IS NOT NULL`).Scan(&n, &bytes); err != nil {
		t.Fatal(err)
	}
	if n != len(docs) || bytes != len(docs)*64*4 {
		t.Errorf("%d vectors of %d bytes in all, want %d of 256 bytes", n, bytes, len(docs))
	}
	v := []float32{1, -2.5, 0, 3.25e-7}
	if got := decodeVector(nil, encodeVector(v)); !cmp.Equal(got, v) {
		t.Errorf("vector round trip: %v", got)
	}
}

func TestEmbedErrors(t *testing.T) {
	ctx := t.Context()
	e := &countingEmbedder{}
	ix := openMem(t, &Options{Embedder: e}, sales...)
	err := ix.Add(ctx, Document{ID: "x", Text: "this will fail"})
	var ee *EmbedError
	var le *llm.Error
	if !errors.As(err, &ee) || !errors.As(err, &le) || le.Status != 503 {
		t.Errorf("Add with a failing embedder: %v, want an *EmbedError wrapping the *llm.Error", err)
	}
	if n, _ := ix.Len(ctx); n != len(sales) {
		t.Errorf("a failed Add added documents: Len %d", n)
	}
	if _, err := ix.Search(ctx, Query{Text: "fail"}); !errors.As(err, &ee) {
		t.Errorf("hybrid Search with a failing embedder: %v, want an *EmbedError", err)
	}
	// Keyword search does not embed.
	if _, err := ix.Search(ctx, Query{Text: "fail", Mode: Keyword}); err != nil {
		t.Errorf("keyword Search: %v", err)
	}
	e.short = true
	if err := ix.Add(ctx, Document{ID: "y", Text: "a"}, Document{ID: "z", Text: "b"}); !errors.As(err, &ee) {
		t.Errorf("Add with too few vectors: %v, want an *EmbedError", err)
	}
}
