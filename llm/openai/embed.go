package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/internal/wire"
)

var _ llm.Embedder = (*Client)(nil)

// wire types of /embeddings

type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embedResponse struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"` // numbers, or base64 of little-endian float32s
	} `json:"data"`
	Model string `json:"model"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// embedURL is {base}/embeddings, next to /chat/completions.
func (c *Client) embedURL() string {
	return strings.TrimSuffix(c.endpoint, "/chat/completions") + "/embeddings"
}

// Embed sends req to {base}/embeddings with encoding_format "float"; see
// llm.Embedder. The model is req.Model, else Config.Model. The reply's
// vectors are put in input order by their index (a server that sends no
// indexes is taken in list order); a vector sent as base64 despite the
// format asked for is decoded. An empty Input gives an empty reply without
// a request (OpenAI rejects an empty list). Every failure is an
// *llm.Error, its text redacted as Chat's.
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
	body, err := json.Marshal(embedRequest{Model: model, Input: req.Input, EncodingFormat: "float"})
	if err != nil {
		return nil, &llm.Error{Provider: provider, Message: "cannot encode the request: " + err.Error(), Err: err}
	}
	own := http.Header{}
	if c.cfg.APIKey != "" {
		own.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := wire.Post(ctx, provider, c.hc, c.embedURL(), body, c.cfg.Header, own, false, "", statusError)
	if err != nil {
		return nil, err
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
	if e := parseError(r.Error); e != nil {
		return nil, &llm.Error{Provider: provider, Message: wire.Clip(e.Message), Retryable: retryableType(e.Type)}
	}
	vecs, err := orderVectors(&r, len(req.Input))
	if err != nil {
		return nil, err
	}
	if err := llm.CheckVectors(provider, len(req.Input), vecs); err != nil {
		return nil, err
	}
	out := &llm.EmbedResponse{Vectors: vecs, Model: model}
	if r.Model != "" {
		out.Model = r.Model
	}
	if r.Usage != nil {
		out.Usage.InputTokens = r.Usage.PromptTokens
	}
	return out, nil
}

// orderVectors decodes the reply's vectors and puts them in input order
// by their index.
func orderVectors(r *embedResponse, inputs int) ([][]float32, error) {
	if len(r.Data) != inputs {
		return nil, &llm.Error{Provider: provider, Message: fmt.Sprintf("the reply has %d vectors for %d input texts", len(r.Data), inputs)}
	}
	indexed := len(r.Data) > 0 && r.Data[0].Index != nil
	vecs := make([][]float32, inputs)
	for i, d := range r.Data {
		j := i
		if indexed {
			if d.Index == nil {
				return nil, &llm.Error{Provider: provider, Message: fmt.Sprintf("the reply's vector %d has no index, unlike vector 0", i)}
			}
			j = *d.Index
			if j < 0 || j >= inputs {
				return nil, &llm.Error{Provider: provider, Message: fmt.Sprintf("the reply's vector %d has index %d, outside the %d input texts", i, j, inputs)}
			}
			if vecs[j] != nil {
				return nil, &llm.Error{Provider: provider, Message: fmt.Sprintf("the reply has two vectors with index %d", j)}
			}
		}
		v, err := decodeVector(d.Embedding)
		if err != nil {
			return nil, &llm.Error{Provider: provider, Err: err, Message: fmt.Sprintf("the reply's vector %d: %v", i, err)}
		}
		vecs[j] = v
	}
	return vecs, nil
}

// decodeVector reads an embedding: a list of numbers, or a base64 string
// of little-endian float32s. It never returns nil without an error.
func decodeVector(raw json.RawMessage) ([]float32, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("bad base64: %w", err)
		}
		if len(b)%4 != 0 {
			return nil, fmt.Errorf("%d bytes of base64 are not float32s", len(b))
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v, nil
	}
	var v []float32
	if err := json.Unmarshal(t, &v); err != nil {
		return nil, fmt.Errorf("not a list of numbers: %w", err)
	}
	if v == nil {
		v = []float32{}
	}
	return v, nil
}
