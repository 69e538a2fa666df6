package openai

import (
	"context"
	"io"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
)

// FuzzReadStream feeds streamed bodies, hostile ones first, to
// readStream (see llmtest.FuzzStream).
func FuzzReadStream(f *testing.F) {
	llmtest.FuzzStream(f, llmtest.OpenAI, func(ctx context.Context, body io.Reader, resp *llm.Response, onChunk func(llm.Chunk) error) error {
		return readStream(ctx, body, resp, onChunk)
	})
}

// FuzzReadWhole is FuzzReadStream for whole replies (see
// llmtest.FuzzWhole).
func FuzzReadWhole(f *testing.F) {
	llmtest.FuzzWhole(f, llmtest.OpenAI, func(ctx context.Context, body io.Reader, resp *llm.Response) error {
		return readWhole(ctx, body, resp)
	})
}
