package retrieval

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/weftlang/weft/llm"
)

// rrfK is the constant of reciprocal-rank fusion: a document at rank r
// (from 1) of a ranking adds 1/(rrfK+r) to its score. 60 is the value of
// Cormack et al., which damps the head of each list without flattening it.
const rrfK = 60

// fusionDepth is the least number of documents of each ranking that
// Hybrid fuses (4*K when that is more).
const fusionDepth = 50

// embedText is the text of d that is embedded.
func embedText(d Document) string {
	if d.Title == "" {
		return d.Text
	}
	return d.Title + "\n\n" + d.Text
}

// embed embeds texts with the Index's Embedder, in batches of embedBatch,
// and checks the reply; every failure is an *EmbedError.
func (ix *Index) embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for batch := range slices.Chunk(texts, embedBatch) {
		resp, err := ix.embedder.Embed(ctx, &llm.EmbedRequest{Model: ix.model, Input: batch})
		if err != nil {
			return nil, &EmbedError{Err: err}
		}
		if resp == nil {
			return nil, &EmbedError{Err: fmt.Errorf("the embedder returned no reply")}
		}
		if err := llm.CheckVectors("embedder", len(batch), resp.Vectors); err != nil {
			return nil, &EmbedError{Err: err}
		}
		out = append(out, resp.Vectors...)
	}
	return out, nil
}

// encodeVector stores v as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector is the inverse of encodeVector, into dst's storage.
func decodeVector(dst []float32, b []byte) []float32 {
	dst = dst[:0]
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}

// vector ranks every document that has a vector and passes filter by its
// cosine similarity to q, best first.
func (ix *Index) vector(ctx context.Context, q []float32, filter string, args []any) ([]scored, error) {
	rows, err := ix.reader.QueryContext(ctx, `SELECT d.seq, d.vec FROM docs d WHERE d.vec IS NOT NULL`+filter, args...)
	if err != nil {
		return nil, fmt.Errorf("retrieval: vector search: %w", err)
	}
	defer rows.Close()
	var out []scored
	var buf []float32
	for rows.Next() {
		var seq int64
		var blob []byte
		if err := rows.Scan(&seq, &blob); err != nil {
			return nil, fmt.Errorf("retrieval: vector search: %w", err)
		}
		buf = decodeVector(buf, blob)
		out = append(out, scored{seq: seq, score: llm.Cosine(q, buf)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("retrieval: vector search: %w", err)
	}
	sortScored(out)
	return out, nil
}

// sortScored orders s by score, best first, then by seq.
func sortScored(s []scored) {
	slices.SortFunc(s, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

// fuse combines rankings by reciprocal rank, each cut to its first depth
// documents, and returns the best k.
func fuse(k, depth int, rankings ...[]scored) []scored {
	sum := make(map[int64]float64)
	for _, r := range rankings {
		for i, s := range r[:min(depth, len(r))] {
			sum[s.seq] += 1 / float64(rrfK+i+1)
		}
	}
	out := make([]scored, 0, len(sum))
	for seq, score := range sum {
		out = append(out, scored{seq: seq, score: score})
	}
	sortScored(out)
	return out[:min(k, len(out))]
}
