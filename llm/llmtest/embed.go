package llmtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"unicode"

	"github.com/weftlang/weft/llm"
)

// EmbedDims is the length of the fake servers' default vectors.
const EmbedDims = 256

// HashEmbed is the fake servers' default embedding of text:
// BagOfWords(text, EmbedDims).
func HashEmbed(text string) []float32 { return BagOfWords(text, EmbedDims) }

// BagOfWords embeds text as a hashed bag of words: text is lower-cased and
// split into words (runs of letters and digits); each word's FNV-1a hash
// picks one of dims dimensions, which gets +1; the vector is then scaled
// to length 1. Identical texts (up to case and punctuation) get identical
// vectors, with cosine 1; texts sharing words score higher than texts
// sharing none, which score 0 unless two words collide. A text with no
// words gets the vector of the empty word. dims < 1 means EmbedDims.
func BagOfWords(text string, dims int) []float32 {
	if dims < 1 {
		dims = EmbedDims
	}
	v := make([]float32, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) == 0 {
		words = []string{""}
	}
	for _, w := range words {
		h := uint32(2166136261) // FNV-1a, 32 bits
		for i := 0; i < len(w); i++ {
			h ^= uint32(w[i])
			h *= 16777619
		}
		v[h%uint32(dims)]++
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	n := float32(math.Sqrt(sum))
	for i := range v {
		v[i] /= n
	}
	return v
}

// embedState is a Server's embedding script and function.
type embedState struct {
	script []Reply
	next   int
	fn     func(string) []float32
}

// SetEmbed sets the function that computes the vector of each input text
// of an embedding request; nil restores HashEmbed. f is called from the
// server's handlers, concurrently, and must be safe for that.
func (s *Server) SetEmbed(f func(text string) []float32) {
	s.mu.Lock()
	s.embed.fn = f
	s.mu.Unlock()
}

// PushEmbed appends replies to the script of embedding requests, which is
// apart from the chat script. Each embedding request takes the next one;
// once they are used up, every request gets the vectors of the embedding
// function (HashEmbed unless SetEmbed said otherwise). Of a Reply, an
// embedding request uses Vectors (sent as they are), Model, Usage
// (InputTokens), Shuffle and the faults: Latency, Status with
// ErrorMessage and RetryAfter, Reset, Malformed (a body that is not valid
// JSON), Cut (half the body, then the connection closed) and StreamError
// (HTTP 500 with that message). The zero Reply is a normal answer.
func (s *Server) PushEmbed(replies ...Reply) {
	s.mu.Lock()
	s.embed.script = append(s.embed.script, replies...)
	s.mu.Unlock()
}

// EmbedRequests returns the embedding requests received so far (those of
// Requests whose Embed is set), in order of arrival.
func (s *Server) EmbedRequests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Received
	for _, r := range s.received {
		if r.Embed != nil {
			out = append(out, r)
		}
	}
	return out
}

// embedWire is a protocol with an embedding endpoint.
type embedWire interface {
	embedPath() string
	// decodeEmbed decodes a request; an error is answered with HTTP 400
	// and its message.
	decodeEmbed(body []byte) (embedInbound, error)
	embedBody(r *embedReply) []byte
	embedMalformed() []byte
}

// embedInbound is a decoded embedding request.
type embedInbound struct {
	req      llm.EmbedRequest
	base64   bool // OpenAI: encoding_format "base64"
	truncate int8 // Ollama: "truncate": 0 if absent, 1 true, -1 false
	numCtx   int  // Ollama: options.num_ctx
}

// embedReply is what the server answers with.
type embedReply struct {
	model   string
	vectors [][]float32
	tokens  int
	shuffle bool
	base64  bool
}

// serveEmbed answers an embedding request.
func (s *Server) serveEmbed(w http.ResponseWriter, r *http.Request, ew embedWire) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	in, err := ew.decodeEmbed(body)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, err.Error(), "")
		return
	}
	if a := s.refuseEmbed(&in); a != nil {
		s.mu.Lock()
		if !s.discard {
			s.received = append(s.received, Received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Embed: &in.req, Truncate: truncateText(in.truncate), ContextTokens: in.numCtx})
		}
		s.mu.Unlock()
		writeRaw(w, a.status, a.ctype, a.body)
		return
	}
	s.mu.Lock()
	var rp Reply
	if s.embed.next < len(s.embed.script) {
		rp = s.embed.script[s.embed.next]
		s.embed.next++
	}
	fn := s.embed.fn
	if !s.discard {
		s.received = append(s.received, Received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Embed: &in.req, Truncate: truncateText(in.truncate), ContextTokens: in.numCtx})
	}
	s.mu.Unlock()

	if rp.Latency > 0 && !wait(r.Context(), rp.Latency) {
		return
	}
	rc := http.NewResponseController(w)
	switch {
	case rp.Reset:
		reset(rc)
		return
	case rp.Status != 0 && rp.Status != http.StatusOK:
		s.writeError(w, rp.Status, errorMessage(&rp, r), rp.RetryAfter)
		return
	case rp.StreamError != "":
		s.writeError(w, http.StatusInternalServerError, rp.StreamError, "")
		return
	}
	er := embedReply{model: rp.Model, vectors: rp.Vectors, tokens: rp.Usage.InputTokens, shuffle: rp.Shuffle, base64: in.base64}
	if er.model == "" {
		er.model = in.req.Model
	}
	if er.vectors == nil {
		if fn == nil {
			fn = HashEmbed
		}
		er.vectors = make([][]float32, len(in.req.Input))
		for i, text := range in.req.Input {
			er.vectors[i] = fn(text)
		}
	}
	if er.tokens == 0 && len(in.req.Input) > 0 {
		n := 0
		for _, text := range in.req.Input {
			n += len(text)
		}
		er.tokens = max(1, (n+3)/4)
	}
	out := ew.embedBody(&er)
	if rp.Malformed {
		out = ew.embedMalformed()
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", fmt.Sprint(len(out)))
	w.WriteHeader(http.StatusOK)
	if rp.Cut {
		_, _ = w.Write(out[:len(out)/2])
		cut(rc)
		return
	}
	_, _ = w.Write(out)
}

// reset closes the connection with a TCP RST instead of answering.
func reset(rc *http.ResponseController) {
	conn, _, err := rc.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// stringOrList reads an input field: a string (one text; Ollama drops an
// empty one), a list of strings, or nothing.
func stringOrList(raw json.RawMessage, dropEmpty bool) ([]string, error) {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" && dropEmpty {
			return nil, nil
		}
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("input must be a string or a list of strings")
	}
	return list, nil
}

// Ollama: POST /api/embed {model, input} -> {model, embeddings, prompt_eval_count}.

func (ollamaWire) embedPath() string { return "/api/embed" }

func (ollamaWire) decodeEmbed(body []byte) (embedInbound, error) {
	var w struct {
		Model    string          `json:"model"`
		Input    json.RawMessage `json:"input"`
		Truncate *bool           `json:"truncate"`
		Options  struct {
			NumCtx int `json:"num_ctx"`
		} `json:"options"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return embedInbound{}, fmt.Errorf("llmtest: cannot decode the request: %v", err)
	}
	if w.Model == "" {
		return embedInbound{}, errors.New("model is required")
	}
	input, err := stringOrList(w.Input, true)
	if err != nil {
		return embedInbound{}, errors.New("invalid input type")
	}
	in := embedInbound{req: llm.EmbedRequest{Model: w.Model, Input: input}, numCtx: w.Options.NumCtx}
	if w.Truncate != nil {
		in.truncate = -1
		if *w.Truncate {
			in.truncate = 1
		}
	}
	return in, nil
}

func (ollamaWire) embedBody(r *embedReply) []byte {
	vecs := r.vectors
	if vecs == nil {
		vecs = [][]float32{} // Ollama answers an empty input with "embeddings": []
	}
	return mustJSON(struct {
		Model           string      `json:"model"`
		Embeddings      [][]float32 `json:"embeddings"`
		TotalDuration   int64       `json:"total_duration"`
		LoadDuration    int64       `json:"load_duration"`
		PromptEvalCount int         `json:"prompt_eval_count"`
	}{r.model, vecs, 1e6, 0, r.tokens})
}

func (ollamaWire) embedMalformed() []byte {
	return []byte(`{"model":"llmtest","embeddings":[[0.6,0.8],,[1,0]],"prompt_eval_count":3}`)
}

// OpenAI: POST /v1/embeddings {model, input, encoding_format} ->
// {object, data: [{object, index, embedding}], model, usage}.

func (openaiWire) embedPath() string { return "/v1/embeddings" }

func (openaiWire) decodeEmbed(body []byte) (embedInbound, error) {
	var w struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return embedInbound{}, fmt.Errorf("llmtest: cannot decode the request: %v", err)
	}
	if w.Model == "" {
		return embedInbound{}, errors.New("you must provide a model parameter")
	}
	input, err := stringOrList(w.Input, false)
	if err != nil || len(input) == 0 {
		return embedInbound{}, errors.New("'$.input' is invalid: want a non-empty string or a non-empty list of strings")
	}
	switch w.EncodingFormat {
	case "", "float", "base64":
	default:
		return embedInbound{}, fmt.Errorf("invalid encoding_format %q: want float or base64", w.EncodingFormat)
	}
	return embedInbound{req: llm.EmbedRequest{Model: w.Model, Input: input}, base64: w.EncodingFormat == "base64"}, nil
}

type oaEmbedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

func (openaiWire) embedBody(r *embedReply) []byte {
	data := make([]oaEmbedding, len(r.vectors))
	for i, v := range r.vectors {
		d := oaEmbedding{Object: "embedding", Index: i, Embedding: v}
		if r.base64 {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			d.Embedding = base64.StdEncoding.EncodeToString(b)
		}
		if r.shuffle {
			data[len(data)-1-i] = d
		} else {
			data[i] = d
		}
	}
	return mustJSON(map[string]any{
		"object": "list",
		"data":   data,
		"model":  r.model,
		"usage":  map[string]int{"prompt_tokens": r.tokens, "total_tokens": r.tokens},
	})
}

func (openaiWire) embedMalformed() []byte {
	return []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]},,],"model":"llmtest"}`)
}
