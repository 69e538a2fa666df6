package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// This file makes the fakes refuse what a real server refuses, with the
// real server's status, content type and body, byte for byte: Ollama
// 0.17.4's native API and its OpenAI-compatible /v1, as recorded in
// testdata/ollama-wire (see TestOllamaWire).

// TokenChars is the number of characters the fakes count as one token:
// in the usage they report, against a request's limit on the reply's
// tokens (for Ollama and OpenAI, a longer reply is cut there and ends
// with finish reason "length"), and against a model's context window (see
// Model).
const TokenChars = 4

// Model is a model a fake server knows, set with SetModels.
type Model struct {
	// Name is the model's name; a request naming Name+":latest" asks for
	// it too, as with Ollama.
	Name string
	// ContextLength is the model's context window in tokens (at
	// TokenChars characters a token); 0 means no limit. An Ollama
	// request's options.num_ctx replaces it. An Ollama chat or embedding
	// request whose prompt (or one input text) is longer than the window
	// is refused with HTTP 400 "the input length exceeds the context
	// length" when it says "truncate": false; otherwise its prompt is
	// cut, as Ollama cuts it, and the reply's input tokens are the
	// window's.
	ContextLength int
	// Thinks says whether the model can think: a request to a model that
	// cannot, with an Ollama "think" (other than false) or an OpenAI
	// reasoning_effort, is refused with HTTP 400 `"name" does not support
	// thinking`, as Ollama refuses it.
	Thinks bool
}

// SetModels sets the models the server knows. Once set, a request for
// another model is refused as Ollama refuses it: HTTP 404 with
// "model 'name' not found" (chat) or `model "name" not found, try
// pulling it first` (embeddings), in the protocol's error body. Without a
// call to SetModels, or after SetModels() with no models, every model
// exists, without a context window (unless an Ollama request sets
// num_ctx) and able to think.
//
// Whatever the models, the Ollama fake also answers, as Ollama does, a
// body that is not JSON (400 with the decoder's error), a request without
// a model (400 "model is required"), a request without messages (200, an
// empty reply with done_reason "load", no scripted reply used), a format
// that is neither "json" nor a schema (500 "invalid format: ..."), a
// schema with a $ref that does not resolve within it (500 "invalid JSON
// schema in format"), and an embedding input list holding an empty text
// (500 "Failed to create new sequence: no input provided"). The OpenAI
// fake answers a request without messages with 400 "[] is too short -
// 'messages'". Refused requests use no scripted reply, and are recorded.
func (s *Server) SetModels(models ...Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(models) == 0 {
		s.models = nil
		return
	}
	s.models = make(map[string]Model, len(models))
	for _, m := range models {
		s.models[m.Name] = m
	}
}

// lookup returns the model named name; known is false if the server has
// a list of models without it. Without a list every model is known and
// thinks.
func (s *Server) lookup(name string) (m Model, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.models == nil {
		return Model{Name: name, Thinks: true}, true
	}
	if m, ok := s.models[name]; ok {
		return m, true
	}
	m, ok := s.models[strings.TrimSuffix(name, ":latest")]
	return m, ok
}

// ollamaV1 is the protocol of NewOllamaV1Server: OpenAI's, as Ollama's
// /v1 speaks it.
const ollamaV1 Protocol = "ollama-v1"

// NewOllamaV1Server starts a fake of Ollama's OpenAI-compatible API
// (POST /v1/chat/completions, /v1/embeddings): an OpenAI server
// (Protocol returns OpenAI) whose replies have Ollama's shape, byte for
// byte up to ids and times: a system_fingerprint of "fp_ollama", the
// role in every streamed delta, a newline after a whole reply.
func NewOllamaV1Server(script ...Reply) *Server { return NewServer(ollamaV1, script...) }

// answer is a reply the server gives instead of a scripted one.
type answer struct {
	status int
	ctype  string
	body   []byte
}

// olErrorType is the content type of Ollama's native error bodies.
const olErrorType = "application/json; charset=utf-8"

// olErrorBody is an error body of Ollama's native API.
func olErrorBody(msg string) []byte { return mustJSON(map[string]string{"error": msg}) }

func olError(status int, msg string) *answer {
	return &answer{status: status, ctype: olErrorType, body: olErrorBody(msg)}
}

// v1Error is an error body of Ollama's /v1.
type v1Error struct {
	Error v1ErrorBody `json:"error"`
}

type v1ErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// v1APIError is the error of Ollama's /v1 for what its native handler
// refused: type api_error, encoded with a newline after it.
func v1APIError(status int, msg string) *answer {
	b := append(mustJSON(v1Error{Error: v1ErrorBody{Message: msg, Type: "api_error"}}), '\n')
	return &answer{status: status, ctype: "application/json", body: b}
}

// v1InvalidRequest is the error of Ollama's /v1 for a request it refuses
// itself: type invalid_request_error.
func v1InvalidRequest(msg string) *answer {
	return &answer{status: http.StatusBadRequest, ctype: olErrorType,
		body: mustJSON(v1Error{Error: v1ErrorBody{Message: msg, Type: "invalid_request_error"}})}
}

// Ollama's messages.
const (
	msgContextOverflow = "the input length exceeds the context length"
	msgNoInput         = "Failed to create new sequence: no input provided"
)

func chatNotFound(model string) string { return fmt.Sprintf("model '%s' not found", model) }
func embedNotFound(model string) string {
	return fmt.Sprintf("model %q not found, try pulling it first", model)
}
func noThinking(model string) string { return fmt.Sprintf("%q does not support thinking", model) }

// refuse returns the answer a real server gives to in instead of a
// reply, or nil; it sets in.ctxLimit.
func (s *Server) refuse(in *inbound) *answer {
	switch s.proto {
	case Ollama:
		return s.refuseOllama(in)
	case OpenAI:
		if len(in.req.Messages) == 0 {
			return v1InvalidRequest("[] is too short - 'messages'")
		}
		m, known := s.lookup(in.req.Model)
		if !known {
			return v1APIError(http.StatusNotFound, chatNotFound(in.req.Model))
		}
		if in.think != "" && !m.Thinks {
			return v1APIError(http.StatusBadRequest, noThinking(in.req.Model))
		}
		in.ctxLimit = m.ContextLength
	}
	return nil
}

func (s *Server) refuseOllama(in *inbound) *answer {
	name := in.req.Model
	if name == "" {
		return olError(http.StatusBadRequest, "model is required")
	}
	m, known := s.lookup(name)
	if !known {
		return olError(http.StatusNotFound, chatNotFound(name))
	}
	if len(in.req.Messages) == 0 {
		// Ollama loads the model and says so.
		b := mustJSON(olResponse{Model: name, CreatedAt: now(), Message: olMessage{Role: "assistant"}, Done: true, DoneReason: "load"})
		ctype := "application/json; charset=utf-8"
		if in.stream {
			ctype, b = "application/x-ndjson", append(b, '\n')
		}
		return &answer{status: http.StatusOK, ctype: ctype, body: b}
	}
	if in.think != "" && in.think != "false" && !m.Thinks {
		return olError(http.StatusBadRequest, noThinking(name))
	}
	if f := bytes.TrimSpace(in.format); len(f) > 0 && f[0] == '"' && string(f) != `"json"` {
		return olError(http.StatusInternalServerError, fmt.Sprintf(`invalid format: %q; expected "json" or a valid JSON Schema object`, f))
	}
	if f := bytes.TrimSpace(in.format); len(f) > 0 && f[0] == '{' && !refsResolve(f) {
		return olError(http.StatusInternalServerError, "invalid JSON schema in format")
	}
	in.ctxLimit = m.ContextLength
	if in.numCtx > 0 {
		in.ctxLimit = in.numCtx
	}
	if in.ctxLimit > 0 && in.truncate < 0 {
		n := 0
		for _, msg := range in.req.Messages {
			n += len(msg.Content)
		}
		if (n+TokenChars-1)/TokenChars > in.ctxLimit {
			return olError(http.StatusBadRequest, msgContextOverflow)
		}
	}
	return nil
}

// refuseEmbed returns the answer a real server gives to an embedding
// request instead of vectors, or nil.
func (s *Server) refuseEmbed(in *embedInbound) *answer {
	m, known := s.lookup(in.req.Model)
	if s.proto == OpenAI {
		if !known {
			return v1APIError(http.StatusNotFound, embedNotFound(in.req.Model))
		}
		return nil
	}
	if !known {
		return olError(http.StatusNotFound, embedNotFound(in.req.Model))
	}
	limit := m.ContextLength
	if in.numCtx > 0 {
		limit = in.numCtx
	}
	for _, t := range in.req.Input {
		if t == "" {
			return olError(http.StatusInternalServerError, msgNoInput)
		}
		if limit > 0 && in.truncate < 0 && (len(t)+TokenChars-1)/TokenChars > limit {
			return olError(http.StatusBadRequest, msgContextOverflow)
		}
	}
	return nil
}

// refsResolve reports whether every "$ref" of a JSON Schema points into
// the schema itself ("#", "#/$defs/name", ...) at something that is
// there, as llama.cpp's grammar conversion needs.
func refsResolve(schema []byte) bool {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return false
	}
	ok := true
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if ref, isStr := x.(string); k == "$ref" && isStr && !resolves(root, ref) {
					ok = false
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(root)
	return ok
}

// resolves reports whether ref, a JSON pointer in a fragment, names a
// value within root.
func resolves(root any, ref string) bool {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return false
	}
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if p == "" {
			break
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			if cur, ok = c[tok]; !ok {
				return false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return false
			}
			cur = c[i]
		default:
			return false
		}
	}
	return true
}

// jsonError is what Ollama says of a request body that it cannot decode:
// for a body that is not JSON, the error of a json.Decoder reading it
// ("unexpected EOF" for a body cut short); else err, the decoder's.
func jsonError(body []byte, err error) string {
	var v any
	if derr := json.NewDecoder(bytes.NewReader(body)).Decode(&v); derr != nil {
		return derr.Error()
	}
	return err.Error()
}

// writeRaw writes a whole reply.
func writeRaw(w http.ResponseWriter, status int, ctype string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
