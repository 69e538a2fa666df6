// Package llmtest holds fake LLM servers and a conformance suite for
// llm.Model implementations.
//
// A Server is an httptest server that speaks one provider's real wire
// protocol (Ollama's /api/chat with NDJSON streaming, OpenAI's
// /v1/chat/completions with SSE, Anthropic's /v1/messages with SSE),
// answers each request with the next scripted Reply, and records what it
// received. A Reply can inject a fault: latency, an HTTP error status with
// Retry-After, malformed JSON, a stream cut mid-way, a mid-stream error
// event, a connection reset, or structured output that breaks the schema.
//
// TestModel is a conformance suite in the spirit of testing/slogtest: a
// provider's tests call it with a constructor for their Model and the
// suite checks plain and streamed replies, usage, tool calls, structured
// output, system prompts, options, cancellation, every fault and
// connection reuse against the fake for that protocol.
//
// The Ollama and OpenAI fakes also answer their embedding endpoints
// (/api/embed, /v1/embeddings) with deterministic bag-of-words vectors
// (HashEmbed), or vectors from a function set with SetEmbed; PushEmbed
// scripts faults for them, and TestEmbedder is the conformance suite for
// llm.Embedder implementations. The Anthropic fake, like Anthropic, has no
// embedding endpoint.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/weftlang/weft/llm"
)

// Protocol names a provider wire protocol.
type Protocol string

// The protocols the fakes speak.
const (
	Ollama    Protocol = "ollama"    // POST /api/chat, NDJSON streaming
	OpenAI    Protocol = "openai"    // POST /v1/chat/completions, SSE streaming
	Anthropic Protocol = "anthropic" // POST /v1/messages, SSE streaming
)

// DefaultChunkSize is the number of characters (runes) of text, or of
// tool-call arguments, in one streamed event when Reply.ChunkSize is 0.
const DefaultChunkSize = 4

// BrokenJSON is the structured output a Reply with BreakSchema sends. It
// violates every schema that requires a property, forbids additional
// properties, or is not an object schema.
const BrokenJSON = `{"llmtest_unexpected":true}`

// Reply is one scripted answer. The zero Reply is an empty text reply.
//
// Content: Text is the reply's text; ToolCalls are calls the model asks
// for; JSON, when set, is structured output and replaces Text (Ollama and
// OpenAI send it as the message content; Anthropic sends it as the input
// of the tool the request forced with tool_choice, wrapped as
// {"value": JSON} when it is not an object, or as text when no tool was
// forced).
//
// Faults: Latency delays the answer (cut short if the client goes away).
// A Status other than 0 and 200 answers with that status, the protocol's
// error body carrying ErrorMessage, and a Retry-After header when
// RetryAfter is set. Reset resets the TCP connection without answering.
// Cut closes the connection after FaultAfter streamed events (after half
// the body when not streaming). Malformed sends an event (or a body) that
// is not valid JSON after FaultAfter events. StreamError sends the
// protocol's mid-stream error event, with that message, after FaultAfter
// events (when not streaming it answers with HTTP 500 instead).
//
// A stream without ChunkDelay or fault is written at once, in one write to
// the socket (still chunked, as a stream of unknown length is); with a
// ChunkDelay, each event is flushed on its own.
type Reply struct {
	Text         string
	ToolCalls    []llm.ToolCall
	JSON         json.RawMessage
	BreakSchema  bool      // send BrokenJSON as the structured output
	Usage        llm.Usage // zero: estimated at 4 characters per token
	FinishReason string    // zero: the protocol's usual one
	Model        string    // zero: the requested model

	ChunkSize  int           // runes per streamed event; 0 means DefaultChunkSize
	ChunkDelay time.Duration // wait before each streamed event with content but the first

	Latency      time.Duration
	Status       int
	ErrorMessage string
	RetryAfter   string // a Retry-After header value: seconds or an HTTP date
	Reset        bool
	Cut          bool
	Malformed    bool
	StreamError  string
	FaultAfter   int // streamed events sent before a Cut, Malformed or StreamError fault
	// EchoHeaders, with a Status, appends the request's headers (API keys
	// included) to the error message, one "Name: value" each, as a proxy
	// or gateway quoting the request in its 401 does: a client must not
	// pass them on.
	EchoHeaders bool

	// Vectors, for an embedding request (see PushEmbed), are the vectors
	// sent instead of computed ones; they need not match the input, so
	// that a reply with the wrong count or mixed lengths can be scripted.
	Vectors [][]float32
	// Shuffle, for an OpenAI embedding request, lists the vectors in
	// reverse order, each with its index, as a server may: clients must
	// order them by index.
	Shuffle bool

	// RepeatGuard ends the reply as Ollama ends one whose model repeats a
	// token 30 times: the text, then nothing more. A stream has no final
	// event (no done line, no finish_reason, usage or [DONE]; Anthropic:
	// no message_delta and message_stop); a whole reply is marked
	// "done": false (Ollama), has "finish_reason": null and zero usage
	// (OpenAI) or a null stop_reason (Anthropic).
	RepeatGuard bool
}

// Text returns a Reply with text t.
func Text(t string) Reply { return Reply{Text: t} }

// JSON returns a Reply whose structured output is v encoded as JSON. A
// value that cannot be encoded gives a reply with BrokenJSON.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		return Reply{JSON: json.RawMessage(BrokenJSON)}
	}
	return Reply{JSON: b}
}

// Call returns a Reply asking for one call of tool name with arguments
// args, a JSON object.
func Call(id, name, args string) Reply {
	return Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}}}
}

// Status returns a Reply that answers with HTTP status code and message.
func Status(code int, message string) Reply {
	return Reply{Status: code, ErrorMessage: message}
}

// RateLimited returns a 429 Reply with the given Retry-After value.
func RateLimited(retryAfter string) Reply {
	return Reply{Status: http.StatusTooManyRequests, ErrorMessage: "rate limit reached, slow down", RetryAfter: retryAfter}
}

// Received is one request the server received.
type Received struct {
	Method string
	Path   string
	// Header is the request's headers, API keys included: compare them,
	// never print them.
	Header http.Header
	Body   []byte // the raw JSON body
	Stream bool   // whether the client asked for a streamed reply
	// Truncate is the "truncate" field of an Ollama request as sent,
	// "true" or "false", and "" if the request has none.
	Truncate string
	// Think is the "think" field of an Ollama request as sent ("true",
	// "\"high\""), "" if none; Request.Effort holds a level sent so.
	Think string
	// ContextTokens is an Ollama request's options.num_ctx, 0 if none.
	ContextTokens int
	// Request is the body decoded back into llm terms: system prompts as
	// System messages first, tool results as ToolRole messages, the
	// structured-output schema (Anthropic: the input_schema of the tool
	// forced by tool_choice, which is then not listed in Tools), and the
	// options the protocol carries.
	Request llm.Request
	// StreamUsage is whether an OpenAI client asked for usage in the
	// stream (stream_options.include_usage).
	StreamUsage bool
	// FirstEvent is the time from the handler's start to the flush of the
	// first streamed event that carries content, or to the written body.
	// A stream that nothing delays (no Reply.ChunkDelay) is written at
	// once, and flushed in one write as the handler returns: FirstEvent
	// is then the time to writing it, just before that flush.
	FirstEvent time.Duration
	// Embed is the decoded body of an embedding request (model and input
	// texts); nil for a chat request.
	Embed *llm.EmbedRequest
}

// Server is a fake LLM server for one protocol. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the root URL of the server, e.g. http://127.0.0.1:38211.
	URL string

	proto Protocol
	wire  wire
	hs    *httptest.Server

	mu          sync.Mutex
	models      map[string]Model // nil: every model exists
	script      []Reply
	next        int
	repeat      *Reply
	repeatFunc  func(llm.Request) Reply
	discard     bool // KeepRequests(false): do not record requests
	received    []Received
	inFlight    int
	maxInFlight int
	conns       int
	open        int // connections open now
	maxOpen     int
	cache       map[cacheKey]rendered
	embed       embedState
	bufs        sync.Pool // *streamBuf: memory for replies rendered per request, reused
}

// NewServer starts a fake server for protocol p answering with script, in
// order. Close it when done. When the script is exhausted, requests get
// the Repeat reply (or RepeatFunc's) if one is set, and otherwise HTTP 400
// with a message saying so.
func NewServer(p Protocol, script ...Reply) *Server {
	s := &Server{proto: p, script: script, cache: map[cacheKey]rendered{}}
	switch p {
	case OpenAI:
		s.wire = openaiWire{}
	case ollamaV1:
		s.proto, s.wire = OpenAI, openaiWire{ollama: true}
	case Anthropic:
		s.wire = anthropicWire{}
	default:
		s.proto = Ollama
		s.wire = ollamaWire{}
	}
	s.hs = httptest.NewUnstartedServer(s)
	s.hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.mu.Lock()
			s.conns++
			s.open++
			s.maxOpen = max(s.maxOpen, s.open)
			s.mu.Unlock()
		case http.StateClosed, http.StateHijacked:
			s.mu.Lock()
			s.open--
			s.mu.Unlock()
		}
	}
	s.hs.Start()
	s.URL = s.hs.URL
	return s
}

// NewOllamaServer starts a fake Ollama server.
func NewOllamaServer(script ...Reply) *Server { return NewServer(Ollama, script...) }

// NewOpenAIServer starts a fake OpenAI-compatible server.
func NewOpenAIServer(script ...Reply) *Server { return NewServer(OpenAI, script...) }

// NewAnthropicServer starts a fake Anthropic server.
func NewAnthropicServer(script ...Reply) *Server { return NewServer(Anthropic, script...) }

// Protocol returns the protocol the server speaks.
func (s *Server) Protocol() Protocol { return s.proto }

// BaseURL returns the base URL a client of the protocol is configured
// with: the root URL for Ollama and Anthropic, the root URL plus "/v1" for
// OpenAI.
func (s *Server) BaseURL() string {
	if s.proto == OpenAI {
		return s.URL + "/v1"
	}
	return s.URL
}

// Close shuts the server down, closing its connections.
func (s *Server) Close() {
	s.hs.CloseClientConnections()
	s.hs.Close()
}

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	s.script = append(s.script, replies...)
	s.mu.Unlock()
}

// Repeat sets the reply given to every request once the script is
// exhausted. Its rendered events are cached, which makes it the reply to
// use in benchmarks.
func (s *Server) Repeat(r Reply) {
	s.mu.Lock()
	s.repeat = &r
	s.repeatFunc = nil
	clear(s.cache)
	s.mu.Unlock()
}

// RepeatFunc sets a function whose reply to a request is given to every
// request once the script is exhausted, so that a reply can depend on what
// was asked (a benchmark checking that data flows from call to call, say).
// Its replies are rendered for each request, not cached. It replaces a
// reply set by Repeat, and Repeat replaces it; nil unsets it. f is called
// concurrently and must not keep or modify the request.
func (s *Server) RepeatFunc(f func(req llm.Request) Reply) {
	s.mu.Lock()
	s.repeatFunc = f
	if f != nil {
		s.repeat = nil
	}
	s.mu.Unlock()
}

// KeepRequests says whether the server records the requests it receives
// (it does by default). A long benchmark turns recording off so that the
// server's memory stays flat; Requests and EmbedRequests then list only
// the requests received while recording was on. MaxInFlight and Connections are kept
// either way.
func (s *Server) KeepRequests(keep bool) {
	s.mu.Lock()
	s.discard = !keep
	s.mu.Unlock()
}

// Requests returns the requests received so far, in order of arrival.
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// MaxInFlight returns the largest number of requests the server was
// handling at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Connections returns the number of TCP connections the server accepted.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// MaxConnections returns the largest number of TCP connections that were
// open at once. It is less than Connections when clients closed
// connections and opened others.
func (s *Server) MaxConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxOpen
}

// inbound is a decoded request.
type inbound struct {
	req         llm.Request
	stream      bool
	streamUsage bool            // OpenAI: stream_options.include_usage
	forcedTool  string          // Anthropic: the tool named by tool_choice {type: tool}
	think       string          // Ollama: "think" as sent, "" if none; OpenAI: reasoning_effort
	truncate    int8            // Ollama: "truncate": 0 if absent, 1 true, -1 false
	numCtx      int             // Ollama: options.num_ctx
	format      json.RawMessage // Ollama: "format" as sent
	ctxLimit    int             // the context window the reply is computed with, in tokens; 0: none
}

// event is one streamed event; content marks events that carry reply
// content (text or tool-call data).
type event struct {
	data    []byte
	content bool
}

type rendered struct {
	events []event    // streamed
	body   []byte     // not streamed
	buf    *streamBuf // the memory of events, to reuse once they are written; nil if not to reuse
}

// streamBuf is memory for the events of one streamed reply.
type streamBuf struct {
	data   []byte
	events []event
}

// bufStreamer is a wire that can render its events into a streamBuf.
type bufStreamer interface {
	streamInto(sb *streamBuf, r *reply, in *inbound) []event
}

type cacheKey struct {
	stream      bool
	streamUsage bool
	model       string
	forcedTool  string
	usage       llm.Usage
	finish      string
	textLen     int // the text's length, which a limit on the tokens cuts
}

// reply is a Reply resolved against its request: content chosen, defaults
// applied.
type reply struct {
	model     string
	text      string // text or structured output, unless sent as a tool input
	toolInput string // Anthropic: the forced tool's input
	calls     []llm.ToolCall
	usage     llm.Usage
	finish    string
	chunk     int
	repeat    bool // Reply.RepeatGuard
}

// wire is one protocol.
type wire interface {
	path() string
	decode(body []byte) (inbound, error)
	stream(r *reply, in *inbound) []event
	whole(r *reply, in *inbound) []byte
	errorBody(status int, msg string) []byte
	streamError(msg string) []byte
	malformed(stream bool) []byte
	contentType(stream bool) string
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.mu.Lock()
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	keep := !s.discard
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	if ew, ok := s.wire.(embedWire); ok && r.Method == http.MethodPost && r.URL.Path == ew.embedPath() {
		s.serveEmbed(w, r, ew)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != s.wire.path() {
		// As Ollama (and any server built on gin) answers a path it
		// does not serve: a client whose base URL lacks /v1 meets this.
		writeRaw(w, http.StatusNotFound, "text/plain", []byte("404 page not found"))
		return
	}
	body, err := readBody(r)
	if err != nil {
		return
	}
	in, err := s.wire.decode(body)
	if err != nil {
		if s.proto == Ollama {
			writeRaw(w, http.StatusBadRequest, olErrorType, olErrorBody(jsonError(body, err)))
			return
		}
		s.writeError(w, http.StatusBadRequest, "llmtest: cannot decode the request: "+err.Error(), "")
		return
	}
	var rec Received
	if keep {
		rec = Received{
			Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body,
			Stream: in.stream, Request: in.req, StreamUsage: in.streamUsage,
			Truncate: truncateText(in.truncate), Think: in.think, ContextTokens: in.numCtx,
		}
		if s.proto != Ollama {
			rec.Think = ""
		}
	}
	if a := s.refuse(&in); a != nil {
		if keep {
			s.mu.Lock()
			s.received = append(s.received, rec)
			s.mu.Unlock()
		}
		writeRaw(w, a.status, a.ctype, a.body)
		return
	}

	s.mu.Lock()
	var rp Reply
	repeated := false
	var f func(llm.Request) Reply
	switch {
	case s.next < len(s.script):
		rp = s.script[s.next]
		s.next++
	case s.repeat != nil:
		rp = *s.repeat
		repeated = true
	case s.repeatFunc != nil:
		f = s.repeatFunc
	default:
		n := len(s.script)
		if keep {
			s.received = append(s.received, rec)
		}
		s.mu.Unlock()
		s.writeError(w, http.StatusBadRequest, fmt.Sprintf("llmtest: no scripted reply left (%d scripted)", n), "")
		return
	}
	idx := -1
	if keep {
		idx = len(s.received)
		s.received = append(s.received, rec)
	}
	s.mu.Unlock()
	if f != nil {
		rp = f(in.req)
	}

	first := s.serve(w, r, &rp, &in, repeated, start)
	if first > 0 && idx >= 0 {
		s.mu.Lock()
		s.received[idx].FirstEvent = first
		s.mu.Unlock()
	}
}

// putBuf returns sb to the pool once its events are written, unless it
// grew too large to keep.
func (s *Server) putBuf(sb *streamBuf) {
	if cap(sb.data) > 64<<10 || cap(sb.events) > 1024 {
		return
	}
	clear(sb.events[:cap(sb.events)]) // events may hold data outgrown by sb.data
	sb.data, sb.events = sb.data[:0], sb.events[:0]
	s.bufs.Put(sb)
}

// readBody reads a request's body, into a buffer of the right size when
// the request says how long it is.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= 16<<20 {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(r.Body)
}

// serve writes the reply; it returns the time to the first content.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, rp *Reply, in *inbound, repeated bool, start time.Time) time.Duration {
	ctx := r.Context()
	if rp.Latency > 0 && !wait(ctx, rp.Latency) {
		return 0
	}
	rc := http.NewResponseController(w)
	if rp.Reset {
		conn, _, err := rc.Hijack()
		if err != nil {
			return 0
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with RST
		}
		_ = conn.Close()
		return 0
	}
	if rp.Status != 0 && rp.Status != http.StatusOK {
		s.writeError(w, rp.Status, errorMessage(rp, r), rp.RetryAfter)
		return 0
	}
	if rp.StreamError != "" && !in.stream {
		s.writeError(w, http.StatusInternalServerError, rp.StreamError, "")
		return 0
	}

	res := s.render(rp, in, repeated)
	if res.buf != nil {
		defer s.putBuf(res.buf)
	}
	h := w.Header()
	h.Set("Content-Type", s.wire.contentType(in.stream))

	if !in.stream {
		body := res.body
		if rp.Malformed {
			body = s.wire.malformed(false)
		}
		if rp.Cut {
			h.Set("Content-Length", fmt.Sprint(len(body)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(body[:len(body)/2])
			cut(rc)
			return 0
		}
		h.Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return time.Since(start)
	}

	if s.proto != Ollama {
		h.Set("Cache-Control", "no-cache")
	}
	events := res.events
	faultAt := -1
	if rp.Cut || rp.Malformed || rp.StreamError != "" {
		faultAt = min(max(rp.FaultAfter, 0), len(events)-1)
	}
	if faultAt < 0 && rp.ChunkDelay == 0 {
		// Nothing delays the events: write them all, unflushed. net/http
		// flushes them with the end of the body when the handler
		// returns, in one write to the socket, chunked as a stream of
		// unknown length is (without the header, it would send a short
		// body unflushed by the handler with a Content-Length).
		h.Set("Transfer-Encoding", "chunked")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			if _, err := w.Write(ev.data); err != nil {
				return 0
			}
		}
		return time.Since(start)
	}
	w.WriteHeader(http.StatusOK)
	var first time.Duration
	contentFlushed := false
	for i, ev := range events {
		if i == faultAt {
			switch {
			case rp.Cut:
				cut(rc)
			case rp.Malformed:
				_, _ = w.Write(s.wire.malformed(true))
				_ = rc.Flush()
			default:
				_, _ = w.Write(s.wire.streamError(rp.StreamError))
				_ = rc.Flush()
			}
			return first
		}
		if ev.content && contentFlushed && rp.ChunkDelay > 0 && !wait(ctx, rp.ChunkDelay) {
			return first
		}
		if _, err := w.Write(ev.data); err != nil {
			return first
		}
		if rp.ChunkDelay > 0 || !contentFlushed {
			if err := rc.Flush(); err != nil {
				return first
			}
			if ev.content && !contentFlushed {
				contentFlushed = true
				first = time.Since(start)
			}
		}
	}
	_ = rc.Flush()
	return first
}

// render resolves rp and renders its events or body, from the cache for a
// repeated reply.
func (s *Server) render(rp *Reply, in *inbound, repeated bool) rendered {
	r := resolve(rp, in, s.proto)
	var key cacheKey
	if repeated {
		key = cacheKey{stream: in.stream, streamUsage: in.streamUsage, model: r.model, forcedTool: in.forcedTool, usage: r.usage, finish: r.finish, textLen: len(r.text)}
		s.mu.Lock()
		res, ok := s.cache[key]
		s.mu.Unlock()
		if ok {
			return res
		}
	}
	var res rendered
	if bs, ok := s.wire.(bufStreamer); ok && in.stream && !repeated {
		// Rendered for this request only: into memory from the pool,
		// returned to it once written (serve).
		res.buf, _ = s.bufs.Get().(*streamBuf)
		if res.buf == nil {
			res.buf = &streamBuf{}
		}
		res.events = bs.streamInto(res.buf, &r, in)
	} else if in.stream {
		res.events = s.wire.stream(&r, in)
	} else {
		res.body = s.wire.whole(&r, in)
	}
	if repeated {
		s.mu.Lock()
		s.cache[key] = res
		s.mu.Unlock()
	}
	return res
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg, retryAfter string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if s.proto == Ollama {
		h.Set("Content-Type", olErrorType)
	}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	_, _ = w.Write(s.wire.errorBody(status, msg))
}

// errorMessage is a Reply's ErrorMessage, followed by the request's
// headers if it echoes them.
func errorMessage(rp *Reply, r *http.Request) string {
	if !rp.EchoHeaders {
		return rp.ErrorMessage
	}
	var b strings.Builder
	b.WriteString(rp.ErrorMessage)
	b.WriteString(" (request headers:")
	for _, k := range slices.Sorted(maps.Keys(r.Header)) {
		for _, v := range r.Header[k] {
			fmt.Fprintf(&b, " %s: %s;", k, v)
		}
	}
	b.WriteString(")")
	return b.String()
}

// cut flushes what was written and closes the connection without ending
// the response.
func cut(rc *http.ResponseController) {
	_ = rc.Flush()
	conn, brw, err := rc.Hijack()
	if err != nil {
		return
	}
	_ = brw.Flush()
	_ = conn.Close()
}

// wait sleeps for d; false if ctx ended first.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// resolve applies a Reply's defaults against its request.
func resolve(rp *Reply, in *inbound, p Protocol) reply {
	r := reply{model: rp.Model, text: rp.Text, calls: rp.ToolCalls, usage: rp.Usage, finish: rp.FinishReason, chunk: rp.ChunkSize, repeat: rp.RepeatGuard}
	if r.model == "" {
		r.model = in.req.Model
	}
	if r.chunk <= 0 {
		r.chunk = DefaultChunkSize
	}
	structured := rp.JSON
	if rp.BreakSchema {
		structured = json.RawMessage(BrokenJSON)
	}
	if len(structured) > 0 {
		r.text = string(structured)
		if p == Anthropic && in.forcedTool != "" {
			r.text = ""
			r.toolInput = string(structured)
			if t := strings.TrimSpace(r.toolInput); !strings.HasPrefix(t, "{") {
				r.toolInput = `{"value":` + t + `}`
			}
		}
	}
	for i := range r.calls {
		if len(r.calls[i].Arguments) == 0 {
			r.calls[i].Arguments = json.RawMessage("{}")
		}
	}
	if r.usage == (llm.Usage{}) {
		n := 0
		for _, m := range in.req.Messages {
			n += len(m.Content)
		}
		out := len(r.text) + len(r.toolInput)
		for _, c := range r.calls {
			out += len(c.Name) + len(c.Arguments)
		}
		r.usage = llm.Usage{InputTokens: max(1, (n+3)/4), OutputTokens: max(1, (out+3)/4)}
	}
	// A prompt over the context is cut, as Ollama cuts it unless asked
	// for "truncate": false (refuse turns that request away).
	if in.ctxLimit > 0 && r.usage.InputTokens > in.ctxLimit {
		r.usage.InputTokens = in.ctxLimit
	}
	// A reply longer than the request's limit on tokens is cut there, at
	// TokenChars characters a token, and says so. (Not for Anthropic,
	// whose clients always send a limit: script its FinishReason
	// "max_tokens" instead.)
	if lim := in.req.MaxTokens; lim > 0 && p != Anthropic && r.usage.OutputTokens > lim && len(r.calls) == 0 {
		r.text, _ = piece(r.text, TokenChars*lim)
		r.usage.OutputTokens = lim
		if r.finish == "" {
			r.finish = "length"
		}
	}
	return r
}

// pieces splits s into pieces of n runes.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	out := make([]string, 0, utf8.RuneCountInString(s)/n+1)
	for len(s) > 0 {
		var p string
		p, s = piece(s, n)
		out = append(out, p)
	}
	return out
}

// piece splits the first n runes (or all, if fewer) off s.
func piece(s string, n int) (p, rest string) {
	i, k := 0, 0
	for i < len(s) && k < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return s[:i], s[i:]
}

// mustJSON encodes v, which is always encodable here.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"llmtest_encode_error":` + fmt.Sprintf("%q", err.Error()) + `}`)
	}
	return b
}

// sse renders one SSE event.
func sse(name string, data []byte) []byte {
	var b strings.Builder
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	return []byte(b.String())
}

// objectSchema reports whether a schema's top-level type is "object".
func objectSchema(s json.RawMessage) bool {
	var v struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(s, &v) != nil {
		return false
	}
	return v.Type == "object"
}

// asObject returns raw if it is a JSON object, and {} otherwise.
func asObject(raw json.RawMessage) json.RawMessage {
	if t := strings.TrimSpace(string(raw)); strings.HasPrefix(t, "{") && json.Valid(raw) {
		return raw
	}
	return json.RawMessage("{}")
}

// truncateText is a tri-state (0 absent, 1 true, -1 false) as it was sent.
func truncateText(v int8) string {
	switch {
	case v > 0:
		return "true"
	case v < 0:
		return "false"
	}
	return ""
}
