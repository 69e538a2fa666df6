// Package ollama is an llm.Model for Ollama's native chat API
// (POST /api/chat), a thin client over net/http.
//
// Streaming uses Ollama's newline-delimited JSON; structured output sends
// Request.Schema as the "format" field; tools are sent as function tools
// and the model's tool calls come back whole (Ollama does not split their
// arguments). Temperature, MaxTokens (num_predict), ContextTokens
// (num_ctx), Stop and Seed go into "options". Every request says
// "truncate": false, so that a prompt longer than the context is refused
// (an *llm.Error of llm.KindContextOverflow) instead of cut silently by
// the server. Effort, when set, is sent as "think" ("low", "medium",
// "high"); it is not sent otherwise, since a model that does not think
// refuses it, with an *llm.Error of llm.KindUnsupported.
//
// FinishReason is llm.FinishStop, llm.FinishLength (done_reason
// "length": the reply was cut at num_predict or the context) or
// llm.FinishToolCalls (a reply with tool calls, which Ollama marks
// "stop"); another done_reason is passed on as it is. A reply that ends
// without its final done line, or a whole reply marked "done": false (as
// Ollama stops a reply that repeats one token), is an *llm.Error of
// llm.KindIncomplete, never a reply.
//
// Ollama's native tool calls may carry no id; the client then names them
// "call_0", "call_1", ... in the order of the reply. Tool results are sent
// with both tool_name and tool_call_id (Ollama matches them by name).
package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/weftlang/weft/llm/internal/wire"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/weftlang/weft/llm"
)

// DefaultHost is the server used when neither Config.BaseURL nor
// OLLAMA_HOST says otherwise; it is where Ollama's own client looks.
const DefaultHost = "http://127.0.0.1:11434"

const provider = "ollama"

// Config configures a Client.
type Config struct {
	// BaseURL is the server's root URL, e.g. http://127.0.0.1:11434; a
	// path prefix is kept (for a proxy). Empty means DefaultHost.
	BaseURL string
	// APIKey, when set, is sent as a Bearer token (for ollama.com or an
	// authenticating proxy; a local Ollama needs none).
	APIKey string
	// Model is the model used when Request.Model is empty, e.g. "llama3.1".
	Model string
	// MaxReplyBytes is the most bytes of one reply read, streamed or not
	// (and of an embedding reply): a longer reply fails with an
	// *llm.Error of Kind llm.KindReplyTooLarge naming the limit. 0 means
	// llm.DefaultMaxReplyBytes (8 MiB); a negative value means no limit.
	MaxReplyBytes int64
	// HTTPClient sends the requests; nil means a client of the package's
	// own that keeps up to 16 idle connections per host. Timeouts come
	// from the ctx given to Chat, not from here.
	HTTPClient *http.Client
	// Options are extra Ollama options sent with every request, such as
	// num_ctx; the request's own settings take precedence.
	Options map[string]any
	// KeepAlive, when set, is how long Ollama keeps the model loaded after
	// the request, e.g. "10m".
	KeepAlive string
	// Header holds extra headers sent with every request.
	Header http.Header
}

// Client is an llm.Model talking to one Ollama server. It is safe for
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
	base := cfg.BaseURL
	if base == "" {
		base = DefaultHost
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = wire.NewHTTPClient()
	}
	return &Client{cfg: cfg, endpoint: strings.TrimRight(base, "/") + "/api/chat", hc: hc, red: wire.NewRedactor(base, cfg.APIKey, cfg.Header), maxReply: wire.MaxReply(cfg.MaxReplyBytes)}
}

// FromEnv returns a client for model configured from the environment, read
// through getenv (os.Getenv if nil): OLLAMA_HOST, in any form Ollama
// accepts ("host", "host:port", ":port", "http://host:port/prefix";
// default DefaultHost), and OLLAMA_API_KEY if set.
func FromEnv(getenv func(string) string, model string) (*Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if model == "" {
		return nil, &llm.Error{Provider: provider, Message: "no model named (use ollama:MODEL, e.g. ollama:llama3.1)"}
	}
	base, err := ParseHost(getenv("OLLAMA_HOST"))
	if err != nil {
		return nil, err
	}
	return New(Config{BaseURL: base, APIKey: getenv("OLLAMA_API_KEY"), Model: model}), nil
}

// ParseHost turns an OLLAMA_HOST value into a base URL the way Ollama
// does: the scheme defaults to http, the host to 127.0.0.1 and the port to
// 11434 (80 for an explicit http:// scheme, 443 for https://); a path is
// kept. An empty value gives DefaultHost.
func ParseHost(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultHost, nil
	}
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	default:
		return "", &llm.Error{Provider: provider, Message: fmt.Sprintf("OLLAMA_HOST: unsupported scheme %q (want http or https)", scheme)}
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", &llm.Error{Provider: provider, Message: fmt.Sprintf("OLLAMA_HOST: invalid port %q", port)}
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + strings.TrimRight(path, "/")
	}
	return u.String(), nil
}

// wire types of /api/chat

type chatRequest struct {
	Model     string          `json:"model"`
	Messages  []message       `json:"messages"`
	Stream    bool            `json:"stream"`
	Format    json.RawMessage `json:"format,omitempty"`
	Tools     []tool          `json:"tools,omitempty"`
	Options   map[string]any  `json:"options,omitempty"`
	KeepAlive string          `json:"keep_alive,omitempty"`
	Think     string          `json:"think,omitempty"`
	Truncate  bool            `json:"truncate"` // always false: refuse a prompt longer than the context
}

type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
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

type chatResponse struct {
	Model   string `json:"model"`
	Message struct {
		Content   string     `json:"content"`
		ToolCalls []toolCall `json:"tool_calls"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
	Error           string `json:"error"`
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
	if b, ok := c.encodeFast(req, model, stream); ok {
		return b, model, nil
	}
	return c.encodeSlow(req, model, stream)
}

// encodeFast writes the body of a request of plain messages (no tools,
// schema, tool calls or Config.Options) without reflection, byte for byte
// as encodeSlow writes it; ok is false for any other request, and for a
// temperature encoding/json refuses.
func (c *Client) encodeFast(req *llm.Request, model string, stream bool) (b []byte, ok bool) {
	if len(req.Tools) > 0 || len(req.Schema) > 0 || len(c.cfg.Options) > 0 {
		return nil, false
	}
	n := 96 + len(model) + len(c.cfg.KeepAlive)
	for _, m := range req.Messages {
		if len(m.ToolCalls) > 0 {
			return nil, false
		}
		n += 64 + len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID)
	}
	for _, s := range req.Stop {
		n += 4 + len(s)
	}
	b = make([]byte, 0, n+n/16) // room for a few escapes
	b = append(b, `{"model":`...)
	b = wire.AppendString(b, model)
	b = append(b, `,"messages":[`...)
	for i, m := range req.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = wire.AppendString(b, string(m.Role))
		b = append(b, `,"content":`...)
		b = wire.AppendString(b, m.Content)
		if m.Role == llm.ToolRole && m.Name != "" {
			b = append(b, `,"tool_name":`...)
			b = wire.AppendString(b, m.Name)
		}
		if m.Role == llm.ToolRole && m.ToolCallID != "" {
			b = append(b, `,"tool_call_id":`...)
			b = wire.AppendString(b, m.ToolCallID)
		}
		b = append(b, '}')
	}
	b = append(b, `],"stream":`...)
	b = strconv.AppendBool(b, stream)
	if req.Temperature != nil || req.MaxTokens > 0 || req.ContextTokens > 0 || len(req.Stop) > 0 || req.Seed != nil {
		// encoding/json writes a map's keys in sorted order.
		b = append(b, `,"options":{`...)
		sep := false
		key := func(k string) {
			if sep {
				b = append(b, ',')
			}
			sep = true
			b = append(b, k...)
		}
		if req.ContextTokens > 0 {
			key(`"num_ctx":`)
			b = strconv.AppendInt(b, int64(req.ContextTokens), 10)
		}
		if req.MaxTokens > 0 {
			key(`"num_predict":`)
			b = strconv.AppendInt(b, int64(req.MaxTokens), 10)
		}
		if req.Seed != nil {
			key(`"seed":`)
			b = strconv.AppendInt(b, *req.Seed, 10)
		}
		if len(req.Stop) > 0 {
			key(`"stop":[`)
			for i, s := range req.Stop {
				if i > 0 {
					b = append(b, ',')
				}
				b = wire.AppendString(b, s)
			}
			b = append(b, ']')
		}
		if req.Temperature != nil {
			key(`"temperature":`)
			if b, ok = wire.AppendFloat(b, *req.Temperature); !ok {
				return nil, false
			}
		}
		b = append(b, '}')
	}
	if c.cfg.KeepAlive != "" {
		b = append(b, `,"keep_alive":`...)
		b = wire.AppendString(b, c.cfg.KeepAlive)
	}
	if req.Effort != "" {
		b = append(b, `,"think":`...)
		b = wire.AppendString(b, string(req.Effort))
	}
	return append(b, `,"truncate":false}`...), true
}

// encodeSlow writes the body of any request with encoding/json.
func (c *Client) encodeSlow(req *llm.Request, model string, stream bool) ([]byte, string, error) {
	w := chatRequest{Model: model, Stream: stream, KeepAlive: c.cfg.KeepAlive, Think: string(req.Effort)}
	w.Messages = make([]message, 0, len(req.Messages))
	for _, m := range req.Messages {
		wm := message{Role: string(m.Role), Content: m.Content}
		if m.Role == llm.ToolRole {
			wm.ToolName, wm.ToolCallID = m.Name, m.ToolCallID
		}
		for _, tc := range m.ToolCalls {
			var t toolCall
			t.ID = tc.ID
			t.Function.Name = tc.Name
			t.Function.Arguments = asObject(tc.Arguments)
			wm.ToolCalls = append(wm.ToolCalls, t)
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
		w.Format = req.Schema
	}
	if len(c.cfg.Options) > 0 || req.Temperature != nil || req.MaxTokens > 0 || req.ContextTokens > 0 || len(req.Stop) > 0 || req.Seed != nil {
		w.Options = make(map[string]any, len(c.cfg.Options)+4)
		for k, v := range c.cfg.Options {
			w.Options[k] = v
		}
		if req.Temperature != nil {
			w.Options["temperature"] = *req.Temperature
		}
		if req.MaxTokens > 0 {
			w.Options["num_predict"] = req.MaxTokens
		}
		if req.ContextTokens > 0 {
			w.Options["num_ctx"] = req.ContextTokens
		}
		if len(req.Stop) > 0 {
			w.Options["stop"] = req.Stop
		}
		if req.Seed != nil {
			w.Options["seed"] = *req.Seed
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, "", &llm.Error{Provider: provider, Message: "cannot encode the request: " + err.Error(), Err: err}
	}
	return b, model, nil
}

// Chat sends req to /api/chat; see llm.Model. Every failure is an
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
	var own http.Header
	if c.cfg.APIKey != "" {
		own = http.Header{"Authorization": {"Bearer " + c.cfg.APIKey}}
	}
	resp, err := wire.Post(ctx, provider, c.hc, c.endpoint, body, c.cfg.Header, own, onChunk != nil, "application/x-ndjson", statusError)
	if err != nil {
		return nil, wire.Annotate(err, req, "think", "num_ctx")
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
	var r chatResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return wire.Malformed(provider, err, "the reply", 0)
	}
	if r.Error != "" {
		return &llm.Error{Provider: provider, Message: wire.Clip(r.Error)}
	}
	if !r.Done {
		return &llm.Error{Provider: provider, Kind: llm.KindIncomplete,
			Message: fmt.Sprintf(`the reply is marked "done": false, so it is not complete (Ollama stops a reply that repeats itself so); %d bytes of text received`, len(r.Message.Content))}
	}
	out.Message.Content = r.Message.Content
	for _, tc := range r.Message.ToolCalls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, toLLM(tc, len(out.Message.ToolCalls)))
	}
	finish(out, &r)
	return nil
}

func readStream(ctx context.Context, body io.Reader, out *llm.Response, onChunk func(llm.Chunk) error) error {
	lr := wire.NewLineReader(body)
	defer lr.Release()
	var text wire.Text
	var r chatResponse
	events := 0
	for {
		line, err := lr.Next()
		if err != nil {
			if e := wire.ReadError(provider, ctx, err); e != nil {
				return e
			}
			return wire.StreamEnd(provider, err, fmt.Sprintf("%d bytes: %d events, %d bytes of text and %d tool calls received, no final event",
				lr.Off, events, text.Len(), len(out.Message.ToolCalls)))
		}
		if len(line) == 0 {
			continue
		}
		events++
		r = chatResponse{}
		if content, esc, ok := fastEvent(line, &r); ok {
			r.Message.Content = text.AppendQuoted(content, esc)
		} else {
			r = chatResponse{}
			if err := json.Unmarshal(line, &r); err != nil {
				return wire.Malformed(provider, err, fmt.Sprintf("stream line %d", lr.Line), lr.Start)
			}
			if r.Error != "" {
				return &llm.Error{Provider: provider, Message: "error in the stream: " + wire.Clip(r.Error)}
			}
			text.AppendString(r.Message.Content)
		}
		if s := r.Message.Content; s != "" {
			if err := onChunk(llm.Chunk{Text: s}); err != nil {
				return err
			}
		}
		for _, tc := range r.Message.ToolCalls {
			i := len(out.Message.ToolCalls)
			call := toLLM(tc, i)
			out.Message.ToolCalls = append(out.Message.ToolCalls, call)
			d := &llm.ToolCallDelta{Index: i, ID: call.ID, Name: call.Name, Arguments: string(call.Arguments)}
			if err := onChunk(llm.Chunk{ToolCall: d}); err != nil {
				return err
			}
		}
		if r.Done {
			out.Message.Content = text.String()
			finish(out, &r)
			wire.Drain(body)
			return nil
		}
	}
}

func finish(out *llm.Response, r *chatResponse) {
	out.FinishReason = finishReason(r.DoneReason, len(out.Message.ToolCalls))
	if r.Model != "" {
		out.Model = r.Model
	}
	out.Usage = llm.Usage{InputTokens: r.PromptEvalCount, OutputTokens: r.EvalCount}
}

// finishReason normalises a done_reason: "length" is llm.FinishLength, a
// reply with tool calls llm.FinishToolCalls (Ollama says "stop"), "stop"
// or none llm.FinishStop; another reason is kept.
func finishReason(reason string, calls int) string {
	switch {
	case reason == "length":
		return llm.FinishLength
	case calls > 0:
		return llm.FinishToolCalls
	case reason == "" || reason == "stop":
		return llm.FinishStop
	}
	return reason
}

// toLLM converts the i-th tool call of a reply.
func toLLM(tc toolCall, i int) llm.ToolCall {
	id := tc.ID
	if id == "" {
		id = "call_" + strconv.Itoa(i)
	}
	args := tc.Function.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return llm.ToolCall{ID: id, Name: tc.Function.Name, Arguments: args}
}

// asObject returns args if it is a JSON object and {} otherwise: Ollama
// wants tool-call arguments as an object.
func asObject(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// errors

// statusError reads a non-200 reply, {"error": "..."}, into an
// *llm.Error with the Kind wire.StatusError gives it.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	wire.Drain(resp.Body)
	var e struct {
		Error string `json:"error"`
	}
	msg := ""
	if json.Unmarshal(b, &e) == nil {
		msg = wire.Clip(e.Error)
	}
	return wire.StatusError(provider, resp, msg, b)
}
