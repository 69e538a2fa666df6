package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/internal/wire"
)

var _ llm.Embedder = (*Client)(nil)

// wire types of /api/embed

type embedRequest struct {
	Model     string         `json:"model"`
	Input     []string       `json:"input"`
	Options   map[string]any `json:"options,omitempty"`
	KeepAlive string         `json:"keep_alive,omitempty"`
	Truncate  bool           `json:"truncate"` // always false: refuse an input longer than the context
}

type embedResponse struct {
	Model           string      `json:"model"`
	Embeddings      [][]float32 `json:"embeddings"`
	PromptEvalCount int         `json:"prompt_eval_count"`
	Error           string      `json:"error"`
}

// embedURL is the server's /api/embed, next to /api/chat.
func (c *Client) embedURL() string {
	return strings.TrimSuffix(c.endpoint, "/api/chat") + "/api/embed"
}

// Embed sends req to /api/embed; see llm.Embedder. The model is
// req.Model, else Config.Model; Config.Options and Config.KeepAlive are
// sent too, and "truncate": false: an input text longer than the model's
// context is an *llm.Error of llm.KindContextOverflow, not embedded cut. An empty Input gives an empty reply without a request. Every
// failure is an *llm.Error, its text redacted as Chat's.
func (c *Client) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	resp, err := c.embed(ctx, req)
	if err != nil {
		return nil, c.red.Error(err)
	}
	return resp, nil
}

func (c *Client) embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	model, empty, err := wire.EmbedStart(ctx, provider, req, c.cfg.Model)
	if err != nil {
		return nil, err
	}
	if empty {
		return &llm.EmbedResponse{Vectors: [][]float32{}, Model: model}, nil
	}
	body, err := json.Marshal(embedRequest{Model: model, Input: req.Input, Options: c.cfg.Options, KeepAlive: c.cfg.KeepAlive})
	if err != nil {
		return nil, &llm.Error{Provider: provider, Message: "cannot encode the request: " + err.Error(), Err: err}
	}
	own := http.Header{}
	if c.cfg.APIKey != "" {
		own.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := wire.Post(ctx, provider, c.hc, c.embedURL(), body, c.cfg.Header, own, false, "", statusError)
	if err != nil {
		return nil, embedOverflow(err, req.Input)
	}
	defer resp.Body.Close()
	b, err := wire.ReadBody(provider, ctx, wire.Cap(resp.Body, c.maxReply))
	if err != nil {
		return nil, err
	}
	var r embedResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, wire.Malformed(provider, err, "the reply", 0)
	}
	if r.Error != "" {
		return nil, &llm.Error{Provider: provider, Message: wire.Clip(r.Error)}
	}
	if err := llm.CheckVectors(provider, len(req.Input), r.Embeddings); err != nil {
		return nil, err
	}
	out := &llm.EmbedResponse{Vectors: r.Embeddings, Model: model, Usage: llm.Usage{InputTokens: r.PromptEvalCount}}
	if r.Model != "" {
		out.Model = r.Model
	}
	return out, nil
}

// embedOverflow adds to an error of llm.KindContextOverflow the length of
// the longest input text; other errors are returned as they are.
func embedOverflow(err error, input []string) error {
	e, ok := err.(*llm.Error)
	if !ok || e.Kind != llm.KindContextOverflow {
		return err
	}
	longest, at := 0, 0
	for i, s := range input {
		if n := utf8.RuneCountInString(s); n > longest {
			longest, at = n, i
		}
	}
	c := *e
	c.Message = fmt.Sprintf("%s (the longest input text, number %d of %d, has %d characters, about %d tokens at 4 characters a token)", e.Message, at+1, len(input), longest, (longest+3)/4)
	return &c
}
