package wire

import (
	"context"

	"github.com/weftlang/weft/llm"
)

// EmbedStart checks an embedding request before a client sends it: a nil
// request, or no model in req nor defaultModel, is an *llm.Error, and a done
// ctx is Cancelled. It returns the model to ask for; empty reports an empty
// Input, which the client answers with no vectors and no request.
func EmbedStart(ctx context.Context, provider string, req *llm.EmbedRequest, defaultModel string) (model string, empty bool, err error) {
	if req == nil {
		return "", false, &llm.Error{Provider: provider, Message: "nil embedding request"}
	}
	model = req.Model
	if model == "" {
		model = defaultModel
	}
	if model == "" {
		return "", false, &llm.Error{Provider: provider, Message: "no model: set Config.Model or EmbedRequest.Model"}
	}
	if ctx.Err() != nil {
		return "", false, Cancelled(provider, ctx)
	}
	return model, len(req.Input) == 0, nil
}
