// Package openai is an llm.Model for OpenAI-compatible chat completions
// (POST {base}/chat/completions), a thin client over net/http. Any server
// speaking that API works by base URL: OpenAI itself, vLLM, the llama.cpp
// server, LM Studio, OpenRouter, Ollama's /v1.
//
// Streaming uses server-sent events with stream_options.include_usage, so
// a streamed reply reports its usage too; streamed tool-call deltas are
// assembled by their index. Structured output sends Request.Schema as
// response_format {type: json_schema, json_schema: {name, schema,
// strict}}; the reply's content is the JSON. Effort is sent as
// reasoning_effort, and only when set: a server whose model does not think
// refuses it (Ollama's /v1 with HTTP 400 "does not support thinking"),
// which is an *llm.Error of llm.KindUnsupported naming the field; the
// field is never dropped silently. Request.ContextTokens is ignored: the
// API has no field for the context window (Ollama's /v1 runs a model with
// its own num_ctx; use the ollama package to set it). Tool-call arguments
// that are not valid JSON arrive as a JSON string holding the raw text, so
// that the tool layer can report them to the model.
//
// FinishReason is llm.FinishStop, llm.FinishLength (finish_reason
// "length": cut at the token limit) or llm.FinishToolCalls; another
// finish_reason (content_filter) is passed on as it is. A reply without a
// finish_reason (a stream that ends without one, or a whole reply with
// "finish_reason": null, as Ollama's /v1 sends when it stops a reply that
// repeats itself) is an *llm.Error of llm.KindIncomplete, never a reply.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/weftlang/weft/llm/internal/wire"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/weftlang/weft/llm"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

const provider = "openai"

// Config configures a Client.
type Config struct {
	// BaseURL is the API's base URL, the one that ends before
	// /chat/completions, e.g. http://localhost:8000/v1 for vLLM. Empty
	// means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a Bearer token when set.
	APIKey string
	// Model is the model used when Request.Model is empty.
	Model string
	// MaxReplyBytes is the most bytes of one reply read, streamed or not
	// (and of an embedding reply): a longer reply fails with an
	// *llm.Error of Kind llm.KindReplyTooLarge naming the limit. 0 means
	// llm.DefaultMaxReplyBytes (8 MiB); a negative value means no limit.
	MaxReplyBytes int64
	// HTTPClient sends the requests; nil means a client of the package's
	// own that keeps up to 16 idle connections per host. Timeouts come
	// from the ctx given to Chat.
	HTTPClient *http.Client
	// Header holds extra headers sent with every request (for example
	// OpenRouter's HTTP-Referer and X-Title).
	Header http.Header
	// MaxTokensField is the request field that carries Request.MaxTokens:
	// "max_tokens" or "max_completion_tokens". Empty means
	// max_completion_tokens for api.openai.com (whose reasoning models
	// reject max_tokens) and max_tokens for every other server.
	MaxTokensField string
	// NonStrict sends json_schema with strict: false, for schemas that
	// OpenAI's strict mode rejects (it wants every property required and
	// additionalProperties: false).
	NonStrict bool
}

// Client is an llm.Model talking to one OpenAI-compatible server. It is
// safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint string
	maxField string
	hc       *http.Client
	red      *wire.Redactor // the credentials of cfg, kept out of errors
	maxReply int64          // bytes of one reply read at most; -1: no limit
}

var _ llm.Model = (*Client)(nil)

// New returns a client for cfg.
func New(cfg Config) *Client {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = wire.NewHTTPClient()
	}
	field := cfg.MaxTokensField
	if field == "" {
		field = "max_tokens"
		if u, err := url.Parse(base); err == nil && u.Hostname() == "api.openai.com" {
			field = "max_completion_tokens"
		}
	}
	return &Client{cfg: cfg, endpoint: base + "/chat/completions", maxField: field, hc: hc, red: wire.NewRedactor(base, cfg.APIKey, cfg.Header), maxReply: wire.MaxReply(cfg.MaxReplyBytes)}
}

// FromEnv returns a client for model configured from the environment, read
// through getenv (os.Getenv if nil): OPENAI_BASE_URL (default
// DefaultBaseURL) and OPENAI_API_KEY. The key is required for OpenAI's own
// API and optional for other servers.
func FromEnv(getenv func(string) string, model string) (*Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if model == "" {
		return nil, &llm.Error{Provider: provider, Message: "no model named (use openai:MODEL, e.g. openai:gpt-4o-mini)"}
	}
	base := strings.TrimSpace(getenv("OPENAI_BASE_URL"))
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &llm.Error{Provider: provider, Message: "OPENAI_BASE_URL is not an http(s) URL"}
	}
	key := strings.TrimSpace(getenv("OPENAI_API_KEY"))
	if key == "" && u.Hostname() == "api.openai.com" {
		return nil, &llm.Error{Provider: provider, Message: "OPENAI_API_KEY is not set (needed for api.openai.com; set OPENAI_BASE_URL for another server)"}
	}
	return New(Config{BaseURL: base, APIKey: key, Model: model}), nil
}

// wire types of /chat/completions

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []message       `json:"messages"`
	Tools          []tool          `json:"tools,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	MaxCompletion  int             `json:"max_completion_tokens,omitempty"`
	Stop           []string        `json:"stop,omitempty"`
	Seed           *int64          `json:"seed,omitempty"`
	Effort         string          `json:"reasoning_effort,omitempty"`
	Stream         bool            `json:"stream,omitempty"`
	StreamOptions  *streamOptions  `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type responseFormat struct {
	Type       string     `json:"type"`
	JSONSchema jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type tool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// apiError is {"message": ..., "type": ..., "code": ...}.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

type streamChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   string     `json:"content"`
			ToolCalls []toolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type completion struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   *string    `json:"content"`
			ToolCalls []toolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

const emptyObjectSchema = `{"type":"object","properties":{}}`

func (c *Client) encode(req *llm.Request, stream bool) ([]byte, string, error) {
	model := req.Model
	if model == "" {
		model = c.cfg.Model
	}
	if model == "" {
		return nil, "", &llm.Error{Provider: provider, Message: "no model: set Config.Model or Request.Model"}
	}
	w := chatRequest{Model: model, Temperature: req.Temperature, Stop: req.Stop, Seed: req.Seed, Effort: string(req.Effort)}
	if stream {
		w.Stream, w.StreamOptions = true, &streamOptions{IncludeUsage: true}
	}
	if req.MaxTokens > 0 {
		if c.maxField == "max_completion_tokens" {
			w.MaxCompletion = req.MaxTokens
		} else {
			w.MaxTokens = req.MaxTokens
		}
	}
	w.Messages = make([]message, 0, len(req.Messages))
	for i := range req.Messages {
		m := &req.Messages[i]
		wm := message{Role: string(m.Role), Content: &m.Content}
		if m.Role == llm.ToolRole {
			wm.ToolCallID = m.ToolCallID
		}
		for _, tc := range m.ToolCalls {
			var t toolCall
			t.ID, t.Type = tc.ID, "function"
			t.Function.Name = tc.Name
			t.Function.Arguments = argsText(tc.Arguments)
			wm.ToolCalls = append(wm.ToolCalls, t)
		}
		if len(wm.ToolCalls) > 0 && m.Content == "" {
			wm.Content = nil
		}
		w.Messages = append(w.Messages, wm)
	}
	for _, t := range req.Tools {
		p := t.Parameters
		if len(p) == 0 {
			p = json.RawMessage(emptyObjectSchema)
		}
		w.Tools = append(w.Tools, tool{Type: "function", Function: toolFunction{Name: t.Name, Description: t.Description, Parameters: p}})
	}
	if len(req.Schema) > 0 {
		w.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{
			Name: wire.SafeName(req.SchemaName, "output"), Schema: req.Schema, Strict: !c.cfg.NonStrict,
		}}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, "", &llm.Error{Provider: provider, Message: "cannot encode the request: " + err.Error(), Err: err}
	}
	return b, model, nil
}

// argsText is the arguments of a tool call as OpenAI carries them: a
// string of JSON. A JSON string (raw text kept from a malformed call) is
// sent back as its text.
func argsText(args json.RawMessage) string {
	t := bytes.TrimSpace(args)
	if len(t) == 0 {
		return "{}"
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			return s
		}
	}
	return string(t)
}

// argsJSON turns streamed or whole argument text into a JSON value.
func argsJSON(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(s)
	return b
}

// Chat sends req to /chat/completions; see llm.Model. Every failure is an
// *llm.Error, except an error returned by onChunk, which is returned as
// is. The client's credentials (Config.APIKey, the user, password and
// secret query parameters of Config.BaseURL, the credentials in
// Config.Header) and any Bearer token are replaced by "[REDACTED]" in the
// text of every error, so that a server or proxy echoing the request's
// headers does not put a key into logs; errors.Is and errors.As still
// find the errors wrapped.
func (c *Client) Chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	resp, err := c.chat(ctx, req, onChunk)
	if err != nil {
		return nil, c.red.Error(err)
	}
	return resp, nil
}

func (c *Client) chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	if req == nil {
		return nil, &llm.Error{Provider: provider, Message: "nil request"}
	}
	body, model, err := c.encode(req, onChunk != nil)
	if err != nil {
		return nil, err
	}
	own := http.Header{}
	if c.cfg.APIKey != "" {
		own.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := wire.Post(ctx, provider, c.hc, c.endpoint, body, c.cfg.Header, own, onChunk != nil, "text/event-stream", statusError)
	if err != nil {
		return nil, wire.Annotate(err, req, "reasoning_effort", "")
	}
	defer resp.Body.Close()
	out := &llm.Response{Message: llm.Message{Role: llm.Assistant}, Model: model}
	if onChunk == nil {
		err = readWhole(ctx, wire.Cap(resp.Body, c.maxReply), out)
	} else {
		err = readStream(ctx, wire.Cap(resp.Body, c.maxReply), out, onChunk)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func readWhole(ctx context.Context, body io.Reader, out *llm.Response) error {
	b, err := wire.ReadBody(provider, ctx, body)
	if err != nil {
		return err
	}
	var r completion
	if err := json.Unmarshal(b, &r); err != nil {
		return wire.Malformed(provider, err, "the reply", 0)
	}
	if e := parseError(r.Error); e != nil {
		return &llm.Error{Provider: provider, Message: wire.Clip(e.Message), Retryable: retryableType(e.Type)}
	}
	if len(r.Choices) == 0 {
		return &llm.Error{Provider: provider, Message: "the reply has no choices"}
	}
	ch := &r.Choices[0]
	if ch.Message.Content != nil {
		out.Message.Content = *ch.Message.Content
	}
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: id, Name: tc.Function.Name, Arguments: argsJSON(tc.Function.Arguments)})
	}
	if ch.FinishReason == "" {
		return &llm.Error{Provider: provider, Kind: llm.KindIncomplete,
			Message: fmt.Sprintf("the reply has no finish_reason, so it is not complete (Ollama's /v1 stops a reply that repeats itself so); %d bytes of text received", len(out.Message.Content))}
	}
	out.FinishReason = finishReason(ch.FinishReason, len(out.Message.ToolCalls))
	if r.Model != "" {
		out.Model = r.Model
	}
	if r.Usage != nil {
		out.Usage = llm.Usage{InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens}
	}
	return nil
}

// callBuf is a tool call being assembled from deltas.
type callBuf struct {
	id, name string
	args     strings.Builder
}

func readStream(ctx context.Context, body io.Reader, out *llm.Response, onChunk func(llm.Chunk) error) error {
	sr := wire.NewSSEReader(body)
	defer sr.Release()
	var text wire.Text
	var calls []*callBuf
	byIndex := map[int]int{} // the server's tool-call index -> ours
	events := 0
	finished := false
	var ch streamChunk
	for {
		_, data, err := sr.Next()
		if err != nil {
			if e := wire.ReadError(provider, ctx, err); e != nil {
				return e
			}
			if err == io.EOF && finished {
				break // no [DONE], but the reply was complete
			}
			return wire.StreamEnd(provider, err, fmt.Sprintf("%d bytes: %d events, %d bytes of text and %d tool calls received, no finish_reason and no [DONE]",
				sr.Off, events, text.Len(), len(calls)))
		}
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			wire.Drain(body)
			break
		}
		events++
		if raw, esc, ok := fastText(data); ok {
			if s := text.AppendQuoted(raw, esc); s != "" {
				if err := onChunk(llm.Chunk{Text: s}); err != nil {
					return err
				}
			}
			continue
		}
		clear(ch.Choices[:cap(ch.Choices)]) // json reuses the elements without zeroing them
		ch = streamChunk{Choices: ch.Choices[:0]}
		if err := json.Unmarshal(data, &ch); err != nil {
			return wire.Malformed(provider, err, fmt.Sprintf("stream event %d (line %d)", events, sr.First), sr.Start)
		}
		if e := parseError(ch.Error); e != nil {
			return &llm.Error{Provider: provider, Message: "error in the stream: " + wire.Clip(e.Message), Retryable: retryableType(e.Type)}
		}
		if ch.Model != "" {
			out.Model = ch.Model
		}
		if ch.Usage != nil {
			out.Usage = llm.Usage{InputTokens: ch.Usage.PromptTokens, OutputTokens: ch.Usage.CompletionTokens}
		}
		if len(ch.Choices) == 0 {
			continue
		}
		c := &ch.Choices[0]
		if s := c.Delta.Content; s != "" {
			text.AppendString(s)
			if err := onChunk(llm.Chunk{Text: s}); err != nil {
				return err
			}
		}
		for _, d := range c.Delta.ToolCalls {
			var i int
			switch {
			case d.Index != nil:
				j, ok := byIndex[*d.Index]
				if !ok {
					j = len(calls)
					byIndex[*d.Index] = j
					calls = append(calls, &callBuf{})
				}
				i = j
			case d.ID != "" || len(calls) == 0:
				i = len(calls)
				calls = append(calls, &callBuf{})
			default:
				i = len(calls) - 1
			}
			cb := calls[i]
			delta := llm.ToolCallDelta{Index: i, Arguments: d.Function.Arguments}
			if d.ID != "" && cb.id == "" {
				cb.id, delta.ID = d.ID, d.ID
			}
			if d.Function.Name != "" && cb.name == "" {
				cb.name, delta.Name = d.Function.Name, d.Function.Name
			}
			cb.args.WriteString(d.Function.Arguments)
			if delta.ID == "" && delta.Name == "" && delta.Arguments == "" {
				continue
			}
			if err := onChunk(llm.Chunk{ToolCall: &delta}); err != nil {
				return err
			}
		}
		if c.FinishReason != "" {
			out.FinishReason = c.FinishReason
			finished = true
		}
	}
	out.Message.Content = text.String()
	for i, cb := range calls {
		id := cb.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: id, Name: cb.name, Arguments: argsJSON(cb.args.String())})
	}
	if !finished {
		return &llm.Error{Provider: provider, Kind: llm.KindIncomplete,
			Message: fmt.Sprintf("the stream ended with [DONE] but no finish_reason, so the reply is not complete; %d events, %d bytes of text and %d tool calls received", events, text.Len(), len(calls))}
	}
	out.FinishReason = finishReason(out.FinishReason, len(out.Message.ToolCalls))
	return nil
}

// finishReason normalises a finish_reason: "length" is llm.FinishLength,
// "tool_calls", "function_call" or any reply with tool calls
// llm.FinishToolCalls, "stop" llm.FinishStop; another reason is kept.
func finishReason(reason string, calls int) string {
	switch {
	case reason == "length":
		return llm.FinishLength
	case reason == "tool_calls" || reason == "function_call" || calls > 0:
		return llm.FinishToolCalls
	case reason == "stop":
		return llm.FinishStop
	}
	return reason
}

// errors

// parseError reads an "error" field: an object with a message, or a
// string. It returns nil if there is none.
func parseError(raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var e apiError
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return &e
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return &apiError{Message: s}
	}
	return &apiError{Message: "unreadable error"}
}

// retryableType reports whether an error type names a transient failure.
func retryableType(t string) bool {
	switch t {
	case "server_error", "rate_limit_error", "rate_limit_exceeded", "overloaded_error", "timeout":
		return true
	}
	return false
}

// statusError reads a non-200 reply. Servers put the message in
// error.message (OpenAI, llama.cpp, OpenRouter), error (a string),
// message (vLLM) or detail (FastAPI servers).
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	wire.Drain(resp.Body)
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(b, &e) == nil {
		if ae := parseError(e.Error); ae != nil {
			msg = ae.Message
		} else if e.Message != "" {
			msg = e.Message
		} else {
			var d string
			if json.Unmarshal(e.Detail, &d) == nil {
				msg = d
			}
		}
	}
	return wire.StatusError(provider, resp, wire.Clip(msg), b)
}
