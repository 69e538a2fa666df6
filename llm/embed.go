package llm

import (
	"context"
	"fmt"
	"math"
)

// Embedder turns texts into vectors. Embed returns one vector per input
// text, in order. Safe for concurrent use; honours ctx.
//
// Every failure of a provider is an *Error, as for Chat: Status and
// Retryable say what the server answered. A reply whose vector count
// differs from the input count, or whose vectors have different lengths
// (or none), is an error too. An empty Input gives an empty Vectors and no
// error.
type Embedder interface {
	Embed(ctx context.Context, req *EmbedRequest) (*EmbedResponse, error)
}

// EmbedRequest is one embedding request: a batch of texts for one model.
type EmbedRequest struct {
	// Model is the provider's embedding model, e.g. "nomic-embed-text" or
	// "text-embedding-3-small"; empty means the Embedder's own model.
	Model string `json:"model"`
	// Input holds the texts to embed, in order.
	Input []string `json:"input"`
}

// EmbedResponse is the reply to an EmbedRequest.
type EmbedResponse struct {
	// Vectors holds one vector per input text, in the order of
	// EmbedRequest.Input; all have the same length.
	Vectors [][]float32 `json:"vectors"`
	// Model is the model that answered.
	Model string `json:"model,omitempty"`
	// Usage counts the input tokens the provider reports (OutputTokens is
	// 0: embeddings produce no tokens).
	Usage Usage `json:"usage"`
}

// CheckVectors checks a provider's reply to a request of inputs texts:
// one vector per text, all of the same, non-zero length. It returns nil or
// a non-retryable *Error of provider saying what is wrong. Embedder
// implementations call it before returning a reply.
func CheckVectors(provider string, inputs int, vectors [][]float32) error {
	if len(vectors) != inputs {
		return &Error{Provider: provider, Message: fmt.Sprintf("the reply has %d vectors for %d input texts", len(vectors), inputs)}
	}
	if inputs == 0 {
		return nil
	}
	dims := len(vectors[0])
	if dims == 0 {
		return &Error{Provider: provider, Message: "the reply's vector 0 is empty"}
	}
	for i, v := range vectors[1:] {
		if len(v) != dims {
			return &Error{Provider: provider, Message: fmt.Sprintf("the reply's vectors have different lengths: vector 0 has %d dimensions, vector %d has %d", dims, i+1, len(v))}
		}
	}
	return nil
}

// Cosine returns the cosine similarity of a and b, in [-1, 1]: 1 for
// vectors pointing the same way. It returns 0 when the lengths differ or
// either vector is zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return max(-1, min(1, dot/math.Sqrt(na*nb)))
}
