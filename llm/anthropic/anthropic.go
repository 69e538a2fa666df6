// Package anthropic is an llm.Model for Anthropic's Messages API
// (POST {base}/v1/messages), a thin client over net/http.
//
// System messages become the top-level "system" prompt (several are
// joined by blank lines). Tool results are sent as user messages holding
// tool_result blocks; consecutive messages of one role are merged into
// one, as the API wants. Streaming reads the SSE events message_start,
// content_block_start, content_block_delta (text_delta, input_json_delta),
// content_block_stop, message_delta, message_stop, ping and error;
// thinking blocks are skipped.
//
// max_tokens is required by the API: Request.MaxTokens, else
// Config.MaxTokens, else DefaultMaxTokens (1024). Seed and Effort are not
// sent (the API has no seed; extended thinking is not enabled).
//
// Structured output: the Messages API used here has no JSON-schema reply
// format, so a Request with a Schema gets an extra tool, named
// Request.SchemaName (default "structured_output"), whose input_schema is
// the Schema, and tool_choice forces it (or, when the request has tools of
// its own, tool_choice "any", so that the model either calls a tool or
// answers through this one). The input the model gives that tool is
// returned as Message.Content, not as a tool call, and streamed as text;
// FinishReason is then llm.FinishStop rather than llm.FinishToolCalls. Tool inputs must
// be objects, so a schema whose top-level type is not "object" (an Enum
// string, say) is wrapped as {"value": schema} and the value is unwrapped
// from the reply; such a reply is delivered as one chunk when complete.
//
// FinishReason is normalised: stop_reason "max_tokens" is
// llm.FinishLength (the reply was cut: not a complete answer), "tool_use"
// llm.FinishToolCalls, "end_turn" and "stop_sequence" llm.FinishStop;
// another reason is kept. A stream that ends without message_stop, or a
// whole reply without a stop_reason, is an *llm.Error of
// llm.KindIncomplete. Request.ContextTokens is ignored: the model's window
// is fixed.
package anthropic

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

// DefaultBaseURL is Anthropic's API.
const DefaultBaseURL = "https://api.anthropic.com"

// Version is the anthropic-version header sent with every request.
const Version = "2023-06-01"

// DefaultMaxTokens is max_tokens when neither the request nor the config
// sets it.
const DefaultMaxTokens = 1024

// DefaultOutputTool is the name of the structured-output tool when
// Request.SchemaName is empty.
const DefaultOutputTool = "structured_output"

const provider = "anthropic"

// Config configures a Client.
type Config struct {
	// BaseURL is the API's root, the one before /v1/messages. Empty means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent in the x-api-key header.
	APIKey string
	// Model is the model used when Request.Model is empty, e.g.
	// "claude-sonnet-4-5".
	Model string
	// MaxTokens is max_tokens for requests that do not set it; 0 means
	// DefaultMaxTokens.
	MaxTokens int
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
	// anthropic-beta).
	Header http.Header
}

// Client is an llm.Model talking to the Anthropic API. It is safe for
// concurrent use.
type Client struct {
	cfg      Config
	endpoint string
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
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = wire.NewHTTPClient()
	}
	return &Client{cfg: cfg, endpoint: base + "/v1/messages", hc: hc, red: wire.NewRedactor(base, cfg.APIKey, cfg.Header), maxReply: wire.MaxReply(cfg.MaxReplyBytes)}
}

// FromEnv returns a client for model configured from the environment, read
// through getenv (os.Getenv if nil): ANTHROPIC_BASE_URL (default
// DefaultBaseURL) and ANTHROPIC_API_KEY, which is required.
func FromEnv(getenv func(string) string, model string) (*Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if model == "" {
		return nil, &llm.Error{Provider: provider, Message: "no model named (use anthropic:MODEL, e.g. anthropic:claude-sonnet-4-5)"}
	}
	base := strings.TrimSpace(getenv("ANTHROPIC_BASE_URL"))
	if base == "" {
		base = DefaultBaseURL
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &llm.Error{Provider: provider, Message: "ANTHROPIC_BASE_URL is not an http(s) URL"}
	}
	key := strings.TrimSpace(getenv("ANTHROPIC_API_KEY"))
	if key == "" {
		return nil, &llm.Error{Provider: provider, Message: "ANTHROPIC_API_KEY is not set"}
	}
	return New(Config{BaseURL: base, APIKey: key, Model: model}), nil
}

// wire types of /v1/messages

type messagesRequest struct {
	Model         string      `json:"model"`
	MaxTokens     int         `json:"max_tokens"`
	System        string      `json:"system,omitempty"`
	Messages      []message   `json:"messages"`
	Tools         []tool      `json:"tools,omitempty"`
	ToolChoice    *toolChoice `json:"tool_choice,omitempty"`
	Temperature   *float64    `json:"temperature,omitempty"`
	StopSequences []string    `json:"stop_sequences,omitempty"`
	Stream        bool        `json:"stream,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type toolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (u *usage) input() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// replyBlock is a content block of a reply.
type replyBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type messageReply struct {
	Model      string       `json:"model"`
	Content    []replyBlock `json:"content"`
	StopReason string       `json:"stop_reason"`
	Usage      usage        `json:"usage"`
	Error      *apiError    `json:"error"`
}

// streamEvent is any of the SSE events' data.
type streamEvent struct {
	Type         string        `json:"type"`
	Message      *messageReply `json:"message"`
	Index        int           `json:"index"`
	ContentBlock *replyBlock   `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *usage    `json:"usage"`
	Error *apiError `json:"error"`
}

const emptyObjectSchema = `{"type":"object","properties":{}}`

// output describes the structured-output tool of a request.
type output struct {
	name    string
	wrapped bool // the schema was wrapped as {"value": schema}
}

func (c *Client) encode(req *llm.Request, stream bool) ([]byte, string, *output, error) {
	model := req.Model
	if model == "" {
		model = c.cfg.Model
	}
	if model == "" {
		return nil, "", nil, &llm.Error{Provider: provider, Message: "no model: set Config.Model or Request.Model"}
	}
	w := messagesRequest{Model: model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, StopSequences: req.Stop, Stream: stream}
	if w.MaxTokens <= 0 {
		w.MaxTokens = c.cfg.MaxTokens
	}
	var system []string
	for _, m := range req.Messages {
		var role string
		var blocks []block
		switch m.Role {
		case llm.System:
			if m.Content != "" {
				system = append(system, m.Content)
			}
			continue
		case llm.ToolRole:
			role = "user"
			blocks = []block{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}
		case llm.Assistant:
			role = "assistant"
			if m.Content != "" {
				blocks = append(blocks, block{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: asObject(tc.Arguments)})
			}
		default:
			role = "user"
			if m.Content != "" {
				blocks = append(blocks, block{Type: "text", Text: m.Content})
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
		} else {
			w.Messages = append(w.Messages, message{Role: role, Content: blocks})
		}
	}
	w.System = strings.Join(system, "\n\n")
	for _, t := range req.Tools {
		p := t.Parameters
		if len(p) == 0 {
			p = json.RawMessage(emptyObjectSchema)
		}
		w.Tools = append(w.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: p})
	}
	var out *output
	if len(req.Schema) > 0 {
		out = &output{name: wire.SafeName(req.SchemaName, DefaultOutputTool)}
		schema := req.Schema
		if !isObjectSchema(schema) {
			out.wrapped = true
			schema = json.RawMessage(`{"type":"object","properties":{"value":` + string(schema) + `},"required":["value"],"additionalProperties":false}`)
		}
		w.Tools = append(w.Tools, tool{Name: out.name, Description: "Give your final answer by calling this tool: its input is the answer.", InputSchema: schema})
		if len(req.Tools) == 0 {
			w.ToolChoice = &toolChoice{Type: "tool", Name: out.name}
		} else {
			w.ToolChoice = &toolChoice{Type: "any"}
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, "", nil, &llm.Error{Provider: provider, Message: "cannot encode the request: " + err.Error(), Err: err}
	}
	return b, model, out, nil
}

// isObjectSchema reports whether a schema's top-level type is "object".
func isObjectSchema(s json.RawMessage) bool {
	var v struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(s, &v) == nil && v.Type == "object"
}

// asObject returns args if it is a JSON object and {} otherwise: a
// tool_use input must be an object.
func asObject(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// Chat sends req to /v1/messages; see llm.Model. Every failure is an
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
	body, model, out, err := c.encode(req, onChunk != nil)
	if err != nil {
		return nil, err
	}
	own := http.Header{}
	own.Set("Anthropic-Version", Version)
	if c.cfg.APIKey != "" {
		own.Set("X-Api-Key", c.cfg.APIKey)
	}
	resp, err := wire.Post(ctx, provider, c.hc, c.endpoint, body, c.cfg.Header, own, onChunk != nil, "text/event-stream", statusError)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &llm.Response{Message: llm.Message{Role: llm.Assistant}, Model: model}
	if onChunk == nil {
		err = readWhole(ctx, wire.Cap(resp.Body, c.maxReply), r, out)
	} else {
		err = readStream(ctx, wire.Cap(resp.Body, c.maxReply), r, out, onChunk)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// unwrap returns the answer held by the structured-output tool's input.
func (o *output) unwrap(input []byte) string {
	t := bytes.TrimSpace(input)
	if len(t) == 0 {
		t = []byte("{}")
	}
	if !o.wrapped {
		return string(t)
	}
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(t, &v) == nil && len(v.Value) > 0 {
		return string(v.Value)
	}
	return string(t) // not as asked: left for the schema check to report
}

func (o *output) is(name string) bool { return o != nil && name == o.name }

// finishReason normalises a stop_reason: "max_tokens" (and
// "model_context_window_exceeded") is llm.FinishLength, "tool_use"
// llm.FinishToolCalls, "end_turn" and "stop_sequence" llm.FinishStop, as
// is a reply given through the structured-output tool alone; another
// reason (refusal, pause_turn) is kept.
func finishReason(stop string, structured bool, calls int) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "tool_use":
		if structured && calls == 0 {
			return llm.FinishStop
		}
		return llm.FinishToolCalls
	case "end_turn", "stop_sequence":
		return llm.FinishStop
	}
	return stop
}

func readWhole(ctx context.Context, body io.Reader, r *llm.Response, out *output) error {
	b, err := wire.ReadBody(provider, ctx, body)
	if err != nil {
		return err
	}
	var m messageReply
	if err := json.Unmarshal(b, &m); err != nil {
		return wire.Malformed(provider, err, "the reply", 0)
	}
	if m.Error != nil {
		return &llm.Error{Provider: provider, Message: wire.Clip(m.Error.Message), Retryable: retryableType(m.Error.Type)}
	}
	var text strings.Builder
	structured := false
	for _, bl := range m.Content {
		switch {
		case bl.Type == "text":
			text.WriteString(bl.Text)
		case bl.Type == "tool_use" && out.is(bl.Name):
			r.Message.Content = out.unwrap(bl.Input)
			structured = true
		case bl.Type == "tool_use":
			r.Message.ToolCalls = append(r.Message.ToolCalls, llm.ToolCall{ID: bl.ID, Name: bl.Name, Arguments: inputJSON(bl.Input)})
		}
	}
	if !structured {
		r.Message.Content = text.String()
	}
	if m.StopReason == "" {
		return &llm.Error{Provider: provider, Kind: llm.KindIncomplete,
			Message: fmt.Sprintf("the reply has no stop_reason, so it is not complete; %d bytes of text received", len(r.Message.Content))}
	}
	r.FinishReason = finishReason(m.StopReason, structured, len(r.Message.ToolCalls))
	if m.Model != "" {
		r.Model = m.Model
	}
	r.Usage = llm.Usage{InputTokens: m.Usage.input(), OutputTokens: m.Usage.OutputTokens}
	return nil
}

// inputJSON is a tool call's input, {} if empty.
func inputJSON(b []byte) json.RawMessage {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}")
	}
	if !json.Valid(t) {
		s, _ := json.Marshal(string(t))
		return s
	}
	return json.RawMessage(bytes.Clone(t))
}

// blockState is a content block being streamed.
type blockState struct {
	kind byte // 't' text, 'c' tool call, 'o' structured output, 0 other
	call int  // index of the tool call
	json strings.Builder
}

func readStream(ctx context.Context, body io.Reader, r *llm.Response, out *output, onChunk func(llm.Chunk) error) error {
	sr := wire.NewSSEReader(body)
	defer sr.Release()
	var text strings.Builder
	blocks := map[int]*blockState{}
	var calls []*blockState
	var ids, names []string
	events := 0
	structured := ""
	hasStructured := false
	stop := ""
	var ev streamEvent
	for {
		_, data, err := sr.Next()
		if err != nil {
			if e := wire.ReadError(provider, ctx, err); e != nil {
				return e
			}
			return wire.StreamEnd(provider, err, fmt.Sprintf("%d bytes: %d events, %d bytes of text and %d tool calls received, no message_stop",
				sr.Off, events, text.Len(), len(calls)))
		}
		events++
		ev = streamEvent{}
		if index, kind, s, ok := fastDelta(data); ok {
			ev.Type, ev.Index, ev.Delta.Type = "content_block_delta", index, "text_delta"
			if kind == 't' {
				ev.Delta.Text = s
			} else {
				ev.Delta.Type, ev.Delta.PartialJSON = "input_json_delta", s
			}
		} else if err := json.Unmarshal(data, &ev); err != nil {
			return wire.Malformed(provider, err, fmt.Sprintf("stream event %d (line %d)", events, sr.First), sr.Start)
		}
		switch ev.Type {
		case "message_start":
			if m := ev.Message; m != nil {
				if m.Model != "" {
					r.Model = m.Model
				}
				r.Usage = llm.Usage{InputTokens: m.Usage.input(), OutputTokens: m.Usage.OutputTokens}
			}
		case "content_block_start":
			cb := ev.ContentBlock
			if cb == nil {
				continue
			}
			st := &blockState{}
			blocks[ev.Index] = st
			switch {
			case cb.Type == "text":
				st.kind = 't'
				if cb.Text != "" {
					text.WriteString(cb.Text)
					if err := onChunk(llm.Chunk{Text: cb.Text}); err != nil {
						return err
					}
				}
			case cb.Type == "tool_use" && out.is(cb.Name):
				st.kind = 'o'
			case cb.Type == "tool_use":
				st.kind, st.call = 'c', len(calls)
				calls = append(calls, st)
				ids, names = append(ids, cb.ID), append(names, cb.Name)
				if err := onChunk(llm.Chunk{ToolCall: &llm.ToolCallDelta{Index: st.call, ID: cb.ID, Name: cb.Name}}); err != nil {
					return err
				}
			}
		case "content_block_delta":
			st := blocks[ev.Index]
			if st == nil {
				continue
			}
			switch {
			case st.kind == 't' && ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
				text.WriteString(ev.Delta.Text)
				if err := onChunk(llm.Chunk{Text: ev.Delta.Text}); err != nil {
					return err
				}
			case st.kind == 'c' && ev.Delta.Type == "input_json_delta" && ev.Delta.PartialJSON != "":
				st.json.WriteString(ev.Delta.PartialJSON)
				if err := onChunk(llm.Chunk{ToolCall: &llm.ToolCallDelta{Index: st.call, Arguments: ev.Delta.PartialJSON}}); err != nil {
					return err
				}
			case st.kind == 'o' && ev.Delta.Type == "input_json_delta" && ev.Delta.PartialJSON != "":
				st.json.WriteString(ev.Delta.PartialJSON)
				if !out.wrapped {
					if err := onChunk(llm.Chunk{Text: ev.Delta.PartialJSON}); err != nil {
						return err
					}
				}
			}
		case "content_block_stop":
			st := blocks[ev.Index]
			if st == nil || st.kind != 'o' {
				continue
			}
			structured, hasStructured = out.unwrap([]byte(st.json.String())), true
			if out.wrapped || st.json.Len() == 0 {
				if err := onChunk(llm.Chunk{Text: structured}); err != nil {
					return err
				}
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				stop = ev.Delta.StopReason
			}
			if u := ev.Usage; u != nil {
				if u.OutputTokens > 0 {
					r.Usage.OutputTokens = u.OutputTokens
				}
				if in := u.input(); in > 0 {
					r.Usage.InputTokens = in
				}
			}
		case "message_stop":
			wire.Drain(body)
			if hasStructured {
				r.Message.Content = structured
			} else {
				r.Message.Content = text.String()
			}
			for i, st := range calls {
				r.Message.ToolCalls = append(r.Message.ToolCalls, llm.ToolCall{ID: ids[i], Name: names[i], Arguments: inputJSON([]byte(st.json.String()))})
			}
			r.FinishReason = finishReason(stop, hasStructured, len(calls))
			return nil
		case "error":
			e := ev.Error
			if e == nil {
				e = &apiError{Message: "unreadable error event"}
			}
			return &llm.Error{Provider: provider, Message: "error in the stream: " + wire.Clip(e.Message), Retryable: retryableType(e.Type)}
		}
	}
}

// errors

// retryableType reports whether an error type names a transient failure.
func retryableType(t string) bool {
	switch t {
	case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
		return true
	}
	return false
}

// statusError reads a non-200 reply: {"type":"error","error":{...}}.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	wire.Drain(resp.Body)
	var e struct {
		Error *apiError `json:"error"`
	}
	msg := ""
	if json.Unmarshal(b, &e) == nil && e.Error != nil {
		msg = wire.Clip(e.Error.Message)
	}
	if msg == "" && resp.StatusCode == 529 {
		msg = "Overloaded"
	}
	return wire.StatusError(provider, resp, msg, b)
}
