package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
)

// NewModel makes the Model under test, configured to talk to the fake
// server at baseURL (Server.BaseURL). For protocols that carry an API key
// (OpenAI, Anthropic) it must configure one.
type NewModel func(tb testing.TB, baseURL string) llm.Model

// hangLimit is how long the suite waits for a call before it declares a
// hang; callTimeout is the ctx deadline it gives each call.
const (
	hangLimit   = 20 * time.Second
	callTimeout = 10 * time.Second
)

// TestModel runs the conformance suite: every check is a subtest of t
// that starts its own fake server for protocol p and calls newModel for a
// Model talking to it. It checks a plain reply, a streamed reply equal to
// the non-streamed one, usage, the request model and its override, the
// system prompt, sampling options, tool calls (whole, streamed, parallel)
// and the tool-result round trip, structured output (object and scalar
// schemas, and a reply that breaks the schema), cancellation before and
// during a stream, an error from onChunk, every fault of Reply (with the
// *llm.Error each must give: Status, Retryable, RetryAfter), connection
// reuse over 20 calls, and concurrent calls. No call may panic or take
// longer than 20 seconds.
func TestModel(t *testing.T, p Protocol, newModel NewModel) {
	c := &suite{p: p, newModel: newModel}
	t.Run("Text", c.text)
	t.Run("StreamEqualsWhole", c.streamEqualsWhole)
	t.Run("ModelOverride", c.modelOverride)
	t.Run("SystemPrompt", c.systemPrompt)
	t.Run("Options", c.options)
	t.Run("ToolCall", c.toolCall)
	t.Run("ParallelToolCalls", c.parallelToolCalls)
	t.Run("ToolRoundTrip", c.toolRoundTrip)
	t.Run("StructuredOutput", c.structured)
	t.Run("StructuredScalar", c.structuredScalar)
	t.Run("BreakSchema", c.breakSchema)
	t.Run("CancelBeforeReply", c.cancelBeforeReply)
	t.Run("CancelMidStream", c.cancelMidStream)
	t.Run("OnChunkError", c.onChunkError)
	t.Run("Faults", c.faults)
	t.Run("ConnectionReuse", c.connectionReuse)
	t.Run("Concurrent", c.concurrent)
}

type suite struct {
	p        Protocol
	newModel NewModel
}

func (c *suite) start(t *testing.T, script ...Reply) (*Server, llm.Model) {
	t.Helper()
	s := NewServer(c.p, script...)
	t.Cleanup(s.Close)
	return s, c.newModel(t, s.BaseURL())
}

// result is what one call gave.
type result struct {
	resp    *llm.Response
	chunks  []llm.Chunk
	err     error
	elapsed time.Duration
}

// text concatenates the streamed text.
func (r *result) text() string {
	var b strings.Builder
	for _, c := range r.chunks {
		b.WriteString(c.Text)
	}
	return b.String()
}

// call runs m.Chat with a deadline, failing the test on a panic or a hang.
// With stream set it collects the chunks; each chunk is also passed to
// also, if not nil, whose error stops the stream.
func call(t *testing.T, m llm.Model, ctx context.Context, req *llm.Request, stream bool, also func(llm.Chunk) error) result {
	t.Helper()
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
	}
	done := make(chan result, 1)
	var panicked = make(chan any, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				panicked <- p
				return
			}
			done <- r
		}()
		var cb func(llm.Chunk) error
		if stream {
			cb = func(ch llm.Chunk) error {
				r.chunks = append(r.chunks, ch)
				if also != nil {
					return also(ch)
				}
				return nil
			}
		}
		start := time.Now()
		r.resp, r.err = m.Chat(ctx, req, cb)
		r.elapsed = time.Since(start)
	}()
	select {
	case r := <-done:
		if r.err == nil && r.resp == nil {
			t.Fatalf("Chat returned neither a response nor an error")
		}
		return r
	case p := <-panicked:
		t.Fatalf("Chat panicked: %v", p)
	case <-time.After(hangLimit):
		t.Fatalf("Chat did not return within %v", hangLimit)
	}
	return result{}
}

func userReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: text}}}
}

// mustOK fails the test if the call failed.
func mustOK(t *testing.T, r result) *llm.Response {
	t.Helper()
	if r.err != nil {
		t.Fatalf("Chat: %v", r.err)
	}
	return r.resp
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// requests returns the server's requests, failing unless there are n.
func requests(t *testing.T, s *Server, n int) []Received {
	t.Helper()
	got := s.Requests()
	if len(got) != n {
		t.Fatalf("server received %d requests, want %d", len(got), n)
	}
	return got
}

// lastUser returns the content of the last user message of a request.
func lastUser(r *llm.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.User {
			return r.Messages[i].Content
		}
	}
	return ""
}

// checkHeaders checks, without printing any value, that the protocol's
// headers were sent.
func (c *suite) checkHeaders(t *testing.T, rec Received) {
	t.Helper()
	if ct := rec.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	switch c.p {
	case OpenAI:
		if a := rec.Header.Get("Authorization"); !strings.HasPrefix(a, "Bearer ") || len(a) <= len("Bearer ") {
			t.Errorf("no Bearer token in the Authorization header")
		}
	case Anthropic:
		if rec.Header.Get("X-Api-Key") == "" {
			t.Errorf("no x-api-key header")
		}
		if v := rec.Header.Get("Anthropic-Version"); v != "2023-06-01" {
			t.Errorf("anthropic-version = %q, want 2023-06-01", v)
		}
	}
}

func (c *suite) text(t *testing.T) {
	want := "Hello from the fake model."
	s, m := c.start(t, Reply{Text: want, Usage: llm.Usage{InputTokens: 12, OutputTokens: 7}})
	resp := mustOK(t, call(t, m, nil, userReq("Say hello."), false, nil))
	if resp.Message.Role != llm.Assistant {
		t.Errorf("Role = %q, want assistant", resp.Message.Role)
	}
	if resp.Message.Content != want {
		t.Errorf("Content = %q, want %q", resp.Message.Content, want)
	}
	if len(resp.Message.ToolCalls) != 0 {
		t.Errorf("unexpected tool calls %v", resp.Message.ToolCalls)
	}
	if resp.Usage != (llm.Usage{InputTokens: 12, OutputTokens: 7}) {
		t.Errorf("Usage = %+v, want {12 7}", resp.Usage)
	}
	if resp.FinishReason == "" {
		t.Errorf("no FinishReason")
	}
	if resp.Model == "" {
		t.Errorf("no Model in the response")
	}
	rec := requests(t, s, 1)[0]
	if rec.Stream {
		t.Errorf("a call without onChunk asked for a stream")
	}
	if rec.Request.Model == "" {
		t.Errorf("the request names no model")
	}
	if got := lastUser(&rec.Request); got != "Say hello." {
		t.Errorf("user message received = %q, want %q", got, "Say hello.")
	}
	c.checkHeaders(t, rec)
}

func (c *suite) streamEqualsWhole(t *testing.T) {
	r := Reply{Text: "Streaming works, one small piece at a time — ünïcödé too.", ChunkSize: 3, Usage: llm.Usage{InputTokens: 20, OutputTokens: 15}}
	s, m := c.start(t, r, r)
	whole := mustOK(t, call(t, m, nil, userReq("Stream, please."), false, nil))
	sr := call(t, m, nil, userReq("Stream, please."), true, nil)
	streamed := mustOK(t, sr)
	if len(sr.chunks) < 2 {
		t.Errorf("got %d chunks, want the reply in several", len(sr.chunks))
	}
	for i, ch := range sr.chunks {
		if ch.Text == "" && ch.ToolCall == nil {
			t.Errorf("chunk %d is empty", i)
		}
	}
	if got := sr.text(); got != r.Text {
		t.Errorf("streamed text = %q, want %q", got, r.Text)
	}
	if !reflect.DeepEqual(streamed.Message, whole.Message) {
		t.Errorf("streamed message %+v != whole message %+v", streamed.Message, whole.Message)
	}
	if streamed.Usage != whole.Usage || streamed.Usage != r.Usage {
		t.Errorf("streamed usage %+v, whole usage %+v, want %+v", streamed.Usage, whole.Usage, r.Usage)
	}
	if streamed.FinishReason != whole.FinishReason {
		t.Errorf("streamed finish %q != whole finish %q", streamed.FinishReason, whole.FinishReason)
	}
	recs := requests(t, s, 2)
	if recs[0].Stream || !recs[1].Stream {
		t.Errorf("stream flags = %v, %v; want false, true", recs[0].Stream, recs[1].Stream)
	}
	c.checkHeaders(t, recs[1])
}

func (c *suite) modelOverride(t *testing.T) {
	s, m := c.start(t, Text("a"), Text("b"))
	mustOK(t, call(t, m, nil, userReq("x"), false, nil))
	req := userReq("y")
	req.Model = "override-model"
	resp := mustOK(t, call(t, m, nil, req, true, nil))
	recs := requests(t, s, 2)
	if recs[0].Request.Model == "override-model" || recs[0].Request.Model == "" {
		t.Errorf("default model = %q", recs[0].Request.Model)
	}
	if recs[1].Request.Model != "override-model" {
		t.Errorf("model sent = %q, want the Request.Model override", recs[1].Request.Model)
	}
	if resp.Model != "override-model" {
		t.Errorf("Response.Model = %q, want override-model", resp.Model)
	}
}

func (c *suite) systemPrompt(t *testing.T) {
	s, m := c.start(t, Text("ok"))
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.System, Content: "You are terse."},
		{Role: llm.User, Content: "Hi"},
	}}
	mustOK(t, call(t, m, nil, req, false, nil))
	got := requests(t, s, 1)[0].Request.Messages
	if len(got) != 2 || got[0].Role != llm.System || got[0].Content != "You are terse." || got[1].Role != llm.User || got[1].Content != "Hi" {
		t.Errorf("messages received = %+v, want the system prompt then the user message", got)
	}
}

func (c *suite) options(t *testing.T) {
	s, m := c.start(t, Text("ok"))
	temp, seed := 0.25, int64(42)
	req := userReq("x")
	req.Temperature, req.MaxTokens, req.Stop, req.Seed, req.Effort = &temp, 77, []string{"END"}, &seed, llm.EffortHigh
	mustOK(t, call(t, m, nil, req, false, nil))
	got := requests(t, s, 1)[0].Request
	if got.Temperature == nil || *got.Temperature != temp {
		t.Errorf("temperature not sent")
	}
	if got.MaxTokens != 77 {
		t.Errorf("max tokens = %d, want 77", got.MaxTokens)
	}
	if !reflect.DeepEqual(got.Stop, []string{"END"}) {
		t.Errorf("stop = %q, want [END]", got.Stop)
	}
	if c.p != Anthropic && (got.Seed == nil || *got.Seed != seed) { // Anthropic has no seed
		t.Errorf("seed not sent")
	}
	if c.p == OpenAI && got.Effort != llm.EffortHigh {
		t.Errorf("reasoning effort = %q, want high", got.Effort)
	}
}

// weatherTool is the tool the suite offers.
func weatherTool() llm.Tool {
	return llm.Tool{
		Name:        "get_weather",
		Description: "Current weather in a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}
}

// assemble rebuilds tool calls from streamed deltas.
func assemble(t *testing.T, chunks []llm.Chunk) []llm.ToolCall {
	t.Helper()
	var calls []llm.ToolCall
	var args []strings.Builder
	for _, ch := range chunks {
		d := ch.ToolCall
		if d == nil {
			continue
		}
		if d.Index < 0 || d.Index > len(calls) {
			t.Fatalf("tool-call delta index %d out of order (have %d calls)", d.Index, len(calls))
		}
		if d.Index == len(calls) {
			calls = append(calls, llm.ToolCall{})
			args = append(args, strings.Builder{})
		}
		if d.ID != "" {
			calls[d.Index].ID = d.ID
		}
		if d.Name != "" {
			calls[d.Index].Name = d.Name
		}
		args[d.Index].WriteString(d.Arguments)
	}
	for i := range calls {
		calls[i].Arguments = json.RawMessage(args[i].String())
	}
	return calls
}

func checkCalls(t *testing.T, what string, got []llm.ToolCall, want []llm.ToolCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d tool calls, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].ID == "" {
			t.Errorf("%s: call %d has no ID", what, i)
		}
		if want[i].ID != "" && got[i].ID != want[i].ID {
			t.Errorf("%s: call %d ID = %q, want %q", what, i, got[i].ID, want[i].ID)
		}
		if got[i].Name != want[i].Name {
			t.Errorf("%s: call %d name = %q, want %q", what, i, got[i].Name, want[i].Name)
		}
		if !jsonEqual(got[i].Arguments, want[i].Arguments) {
			t.Errorf("%s: call %d arguments = %s, want %s", what, i, got[i].Arguments, want[i].Arguments)
		}
	}
}

func (c *suite) toolCall(t *testing.T) {
	r := Call("call_abc", "get_weather", `{"city":"Paris"}`)
	r.ChunkSize = 3
	s, m := c.start(t, r, r)
	req := userReq("Weather in Paris?")
	req.Tools = []llm.Tool{weatherTool()}
	whole := mustOK(t, call(t, m, nil, req, false, nil))
	checkCalls(t, "whole", whole.Message.ToolCalls, r.ToolCalls)
	if whole.Message.Content != "" {
		t.Errorf("Content = %q, want none", whole.Message.Content)
	}
	sr := call(t, m, nil, req, true, nil)
	streamed := mustOK(t, sr)
	checkCalls(t, "streamed", streamed.Message.ToolCalls, r.ToolCalls)
	checkCalls(t, "assembled deltas", assemble(t, sr.chunks), streamed.Message.ToolCalls)
	if !reflect.DeepEqual(streamed.Message.ToolCalls, whole.Message.ToolCalls) {
		t.Errorf("streamed calls %+v != whole calls %+v", streamed.Message.ToolCalls, whole.Message.ToolCalls)
	}
	want := weatherTool()
	for _, rec := range requests(t, s, 2) {
		got := rec.Request.Tools
		if len(got) != 1 || got[0].Name != want.Name || got[0].Description != want.Description || !jsonEqual(got[0].Parameters, want.Parameters) {
			t.Errorf("tools received = %+v, want %+v", got, want)
		}
	}
}

func (c *suite) parallelToolCalls(t *testing.T) {
	r := Reply{ToolCalls: []llm.ToolCall{
		{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{ID: "call_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tōkyō"}`)},
	}, ChunkSize: 5}
	_, m := c.start(t, r, r)
	req := userReq("Weather in Paris and Tokyo?")
	req.Tools = []llm.Tool{weatherTool()}
	whole := mustOK(t, call(t, m, nil, req, false, nil))
	checkCalls(t, "whole", whole.Message.ToolCalls, r.ToolCalls)
	sr := call(t, m, nil, req, true, nil)
	checkCalls(t, "streamed", mustOK(t, sr).Message.ToolCalls, r.ToolCalls)
	checkCalls(t, "assembled deltas", assemble(t, sr.chunks), r.ToolCalls)
}

func (c *suite) toolRoundTrip(t *testing.T) {
	s, m := c.start(t, Call("call_rt", "get_weather", `{"city":"Paris"}`), Text("It is 21 °C in Paris."))
	req := userReq("Weather in Paris?")
	req.Tools = []llm.Tool{weatherTool()}
	first := mustOK(t, call(t, m, nil, req, true, nil))
	if len(first.Message.ToolCalls) != 1 {
		t.Fatalf("got %d tool calls, want 1", len(first.Message.ToolCalls))
	}
	tc := first.Message.ToolCalls[0]
	req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.ToolRole, ToolCallID: tc.ID, Name: tc.Name, Content: `{"temp_c":21}`})
	second := mustOK(t, call(t, m, nil, req, false, nil))
	if second.Message.Content != "It is 21 °C in Paris." {
		t.Errorf("final answer = %q", second.Message.Content)
	}
	got := requests(t, s, 2)[1].Request.Messages
	var asst, res *llm.Message
	for i := range got {
		switch got[i].Role {
		case llm.Assistant:
			asst = &got[i]
		case llm.ToolRole:
			res = &got[i]
		}
	}
	if asst == nil || len(asst.ToolCalls) != 1 {
		t.Fatalf("the assistant's tool call was not sent back: %+v", got)
	}
	if asst.ToolCalls[0].Name != "get_weather" || !jsonEqual(asst.ToolCalls[0].Arguments, []byte(`{"city":"Paris"}`)) {
		t.Errorf("tool call sent back = %+v", asst.ToolCalls[0])
	}
	if res == nil {
		t.Fatalf("the tool result was not sent: %+v", got)
	}
	if res.Content != `{"temp_c":21}` {
		t.Errorf("tool result content = %q", res.Content)
	}
	if c.p == Ollama { // Ollama matches results by tool name
		if res.Name != "get_weather" {
			t.Errorf("tool result names tool %q, want get_weather", res.Name)
		}
	} else {
		if res.ToolCallID != tc.ID || asst.ToolCalls[0].ID != tc.ID {
			t.Errorf("tool call id: result answers %q, call sent back as %q, want %q", res.ToolCallID, asst.ToolCalls[0].ID, tc.ID)
		}
	}
}

const verdictSchema = `{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number"}},"required":["answer","confidence"],"additionalProperties":false}`

func (c *suite) structured(t *testing.T) {
	r := Reply{JSON: json.RawMessage(`{"answer":"42","confidence":0.9}`), ChunkSize: 5}
	s, m := c.start(t, r, r)
	req := userReq("Answer with a verdict.")
	req.Schema, req.SchemaName = json.RawMessage(verdictSchema), "verdict"
	whole := mustOK(t, call(t, m, nil, req, false, nil))
	if !jsonEqual([]byte(whole.Message.Content), r.JSON) {
		t.Errorf("Content = %q, want %s", whole.Message.Content, r.JSON)
	}
	sr := call(t, m, nil, req, true, nil)
	streamed := mustOK(t, sr)
	if !jsonEqual([]byte(streamed.Message.Content), r.JSON) {
		t.Errorf("streamed Content = %q, want %s", streamed.Message.Content, r.JSON)
	}
	if sr.text() != streamed.Message.Content {
		t.Errorf("streamed text %q != Content %q", sr.text(), streamed.Message.Content)
	}
	for _, rec := range requests(t, s, 2) {
		if !jsonEqual(rec.Request.Schema, []byte(verdictSchema)) {
			t.Errorf("schema received = %s, want %s", rec.Request.Schema, verdictSchema)
		}
		if len(rec.Request.Tools) != 0 {
			t.Errorf("structured output request lists tools %+v", rec.Request.Tools)
		}
	}
}

func (c *suite) structuredScalar(t *testing.T) {
	r := Reply{JSON: json.RawMessage(`"summarization"`)}
	s, m := c.start(t, r, r)
	req := userReq("Classify.")
	req.Schema = json.RawMessage(`{"type":"string","enum":["qa","summarization","not_clear"]}`)
	for _, stream := range []bool{false, true} {
		res := call(t, m, nil, req, stream, nil)
		resp := mustOK(t, res)
		if !jsonEqual([]byte(resp.Message.Content), r.JSON) {
			t.Errorf("stream=%v: Content = %q, want %s", stream, resp.Message.Content, r.JSON)
		}
		if stream && res.text() != resp.Message.Content {
			t.Errorf("streamed text %q != Content %q", res.text(), resp.Message.Content)
		}
	}
	for _, rec := range requests(t, s, 2) {
		if len(rec.Request.Schema) == 0 {
			t.Errorf("no schema sent")
		}
	}
}

func (c *suite) breakSchema(t *testing.T) {
	_, m := c.start(t, Reply{BreakSchema: true})
	req := userReq("Answer with a verdict.")
	req.Schema = json.RawMessage(verdictSchema)
	resp := mustOK(t, call(t, m, nil, req, true, nil))
	if !jsonEqual([]byte(resp.Message.Content), []byte(BrokenJSON)) {
		t.Errorf("Content = %q, want the schema-breaking %s passed through for validation", resp.Message.Content, BrokenJSON)
	}
}

func (c *suite) cancelBeforeReply(t *testing.T) {
	_, m := c.start(t, Reply{Text: "too late", Latency: 30 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	r := call(t, m, ctx, userReq("x"), true, nil)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want one that wraps context.Canceled", r.err)
	}
	if r.elapsed > 2*time.Second {
		t.Errorf("cancellation took %v", r.elapsed)
	}
	var e *llm.Error
	if errors.As(r.err, &e) && e.Retryable {
		t.Errorf("a cancelled call is marked retryable")
	}
}

func (c *suite) cancelMidStream(t *testing.T) {
	_, m := c.start(t, Reply{Text: strings.Repeat("slow ", 50), ChunkSize: 5, ChunkDelay: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := call(t, m, ctx, userReq("x"), true, func(llm.Chunk) error { cancel(); return nil })
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want one that wraps context.Canceled", r.err)
	}
	if len(r.chunks) == 0 || len(r.chunks) > 3 {
		t.Errorf("got %d chunks before the cancellation took effect", len(r.chunks))
	}
	if r.elapsed > 3*time.Second {
		t.Errorf("cancellation took %v", r.elapsed)
	}
}

func (c *suite) onChunkError(t *testing.T) {
	_, m := c.start(t, Reply{Text: strings.Repeat("word ", 50), ChunkSize: 5, ChunkDelay: 100 * time.Millisecond})
	stop := errors.New("consumer says stop")
	r := call(t, m, nil, userReq("x"), true, func(llm.Chunk) error { return stop })
	if !errors.Is(r.err, stop) {
		t.Fatalf("err = %v, want onChunk's error", r.err)
	}
	if len(r.chunks) != 1 {
		t.Errorf("got %d chunks, want the stream stopped after the first", len(r.chunks))
	}
	if r.elapsed > 2*time.Second {
		t.Errorf("stopping took %v", r.elapsed)
	}
}

// fault is one fault case and the error it must give.
type fault struct {
	name       string
	reply      Reply
	stream     bool
	status     int
	retryable  bool
	anyRetry   bool // Retryable follows the provider's error type
	retryAfter func(time.Duration) bool
	contains   []string // in the error message
	minChunks  int
	kind       llm.ErrorKind
}

func (c *suite) faults(t *testing.T) {
	long := strings.Repeat("abcdefghij", 8)
	huge := strings.Repeat("abcdefghi\n", llm.DefaultMaxReplyBytes/10+1)
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	cases := []fault{
		{name: "429RetryAfterSeconds", reply: RateLimited("2"), stream: true, status: 429, retryable: true,
			retryAfter: func(d time.Duration) bool { return d == 2*time.Second }, contains: []string{"rate limit reached"}},
		{name: "429RetryAfterDate", reply: RateLimited(date), status: 429, retryable: true,
			retryAfter: func(d time.Duration) bool { return d > 20*time.Second && d <= 31*time.Second }},
		{name: "500", reply: Status(500, "internal failure"), stream: true, status: 500, retryable: true, contains: []string{"internal failure"}},
		{name: "502", reply: Status(502, ""), status: 502, retryable: true},
		{name: "503", reply: Status(503, "overloaded, try later"), stream: true, status: 503, retryable: true, contains: []string{"overloaded, try later"}},
		{name: "504", reply: Status(504, ""), status: 504, retryable: true},
		{name: "400", reply: Status(400, "invalid schema: bad type"), stream: true, status: 400, contains: []string{"invalid schema: bad type"}, kind: llm.KindInvalidRequest},
		{name: "401", reply: Status(401, "invalid api key"), status: 401, contains: []string{"invalid api key"}},
		{name: "404UnknownModel", reply: Status(404, "model 'nosuch' not found"), stream: true, status: 404, contains: []string{"model 'nosuch' not found"}, kind: llm.KindNotFound},
		{name: "400ContextOverflow", reply: Status(400, "the input length exceeds the context length"), status: 400, contains: []string{"the input length exceeds the context length"}, kind: llm.KindContextOverflow},
		{name: "400NoThinking", reply: Status(400, `"m" does not support thinking`), status: 400, contains: []string{"does not support thinking"}, kind: llm.KindUnsupported},
		// Ollama's 500 for a schema llama.cpp cannot take: no retry fixes it.
		{name: "500InvalidSchema", reply: Status(500, "invalid JSON schema in format"), stream: true, status: 500, contains: []string{"invalid JSON schema in format"}, kind: llm.KindInvalidRequest},
		// A reply the server ends without its final event (Ollama's
		// repeat guard) is an error, not a reply.
		{name: "RepeatGuardStream", reply: Reply{Text: long, ChunkSize: 2, RepeatGuard: true}, stream: true, contains: []string{"not complete"}, minChunks: 1, kind: llm.KindIncomplete},
		{name: "RepeatGuardWhole", reply: Reply{Text: long, RepeatGuard: true}, contains: []string{"not complete"}, kind: llm.KindIncomplete},
		{name: "MalformedStream", reply: Reply{Text: long, ChunkSize: 2, Malformed: true, FaultAfter: 4}, stream: true, contains: []string{"malformed JSON", "offset"}},
		{name: "MalformedWhole", reply: Reply{Text: long, Malformed: true}, contains: []string{"malformed JSON", "offset"}},
		{name: "CutStream", reply: Reply{Text: long, ChunkSize: 2, Cut: true, FaultAfter: 4}, stream: true, retryable: true, contains: []string{"cut", "bytes"}, minChunks: 1, kind: llm.KindUnavailable},
		{name: "CutWhole", reply: Reply{Text: long, Cut: true}, retryable: true, contains: []string{"cut", "bytes"}, kind: llm.KindUnavailable},
		{name: "ResetStream", reply: Reply{Text: long, Reset: true}, stream: true, retryable: true, kind: llm.KindUnavailable},
		{name: "ResetWhole", reply: Reply{Text: long, Reset: true}, retryable: true, kind: llm.KindUnavailable},
		{name: "StreamErrorEvent", reply: Reply{Text: long, ChunkSize: 2, StreamError: "model crashed", FaultAfter: 4}, stream: true, anyRetry: true, contains: []string{"model crashed"}, minChunks: 1},
		// A reply past llm.DefaultMaxReplyBytes is refused, not read whole.
		{name: "ReplyTooLargeStream", reply: Reply{Text: huge, ChunkSize: 64 << 10}, stream: true, kind: llm.KindReplyTooLarge, contains: []string{"8388608 bytes"}},
		{name: "ReplyTooLargeWhole", reply: Reply{Text: huge}, kind: llm.KindReplyTooLarge, contains: []string{"8388608 bytes"}},
	}
	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			_, m := c.start(t, fc.reply)
			r := call(t, m, nil, userReq("x"), fc.stream, nil)
			if r.err == nil {
				t.Fatalf("Chat succeeded, want an error")
			}
			var e *llm.Error
			if !errors.As(r.err, &e) {
				t.Fatalf("error %q (%T) is not an *llm.Error", r.err, r.err)
			}
			if e.Provider == "" {
				t.Errorf("error %q names no provider", r.err)
			}
			if !strings.HasPrefix(r.err.Error(), e.Provider+": ") {
				t.Errorf("error %q does not start with the provider's name", r.err)
			}
			if e.Status != fc.status {
				t.Errorf("Status = %d, want %d (error %q)", e.Status, fc.status, r.err)
			}
			if !fc.anyRetry && e.Retryable != fc.retryable {
				t.Errorf("Retryable = %v, want %v (error %q)", e.Retryable, fc.retryable, r.err)
			}
			if fc.retryAfter != nil && !fc.retryAfter(e.RetryAfter) {
				t.Errorf("RetryAfter = %v, out of range", e.RetryAfter)
			}
			if fc.retryAfter == nil && e.RetryAfter != 0 {
				t.Errorf("RetryAfter = %v, want 0", e.RetryAfter)
			}
			for _, sub := range fc.contains {
				if !strings.Contains(r.err.Error(), sub) {
					t.Errorf("error %q does not mention %q", r.err, sub)
				}
			}
			if len(r.chunks) < fc.minChunks {
				t.Errorf("got %d chunks before the fault, want at least %d", len(r.chunks), fc.minChunks)
			}
			if e.Kind != fc.kind {
				t.Errorf("Kind = %q, want %q (error %q)", e.Kind, fc.kind, r.err)
			}
			if fc.kind != "" && !errors.Is(r.err, kindSentinel(fc.kind)) {
				t.Errorf("errors.Is(%q, the sentinel of %s) is false", r.err, fc.kind)
			}
		})
	}
	t.Run("Latency", func(t *testing.T) {
		_, m := c.start(t, Reply{Text: "late but fine", Latency: 200 * time.Millisecond})
		r := call(t, m, nil, userReq("x"), true, nil)
		if mustOK(t, r).Message.Content != "late but fine" {
			t.Errorf("Content = %q", r.resp.Message.Content)
		}
		if r.elapsed < 200*time.Millisecond {
			t.Errorf("reply came after %v, before the fake's latency", r.elapsed)
		}
	})
	t.Run("ScriptExhausted", func(t *testing.T) {
		_, m := c.start(t)
		r := call(t, m, nil, userReq("x"), false, nil)
		var e *llm.Error
		if !errors.As(r.err, &e) || e.Status != 400 || e.Retryable {
			t.Errorf("err = %v, want a non-retryable *llm.Error with status 400", r.err)
		}
	})
}

func (c *suite) connectionReuse(t *testing.T) {
	s, m := c.start(t)
	for i := range 20 {
		switch i {
		case 5:
			s.Push(Status(503, "busy"))
		case 12:
			s.Push(RateLimited("1"))
		default:
			s.Push(Reply{Text: fmt.Sprintf("reply %d, long enough to take a few events", i), ChunkSize: 6})
		}
	}
	for i := range 20 {
		r := call(t, m, nil, userReq(fmt.Sprintf("call %d", i)), i%2 == 0, nil)
		if (i == 5 || i == 12) != (r.err != nil) {
			t.Fatalf("call %d: err = %v", i, r.err)
		}
	}
	if n := s.Connections(); n != 1 {
		t.Errorf("20 sequential calls used %d TCP connections, want 1 (are bodies drained and closed?)", n)
	}
}

func (c *suite) concurrent(t *testing.T) {
	s, m := c.start(t)
	s.Repeat(Reply{Text: "same answer for everyone", ChunkSize: 4})
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for g := range 8 {
		wg.Go(func() {
			for i := range 3 {
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				var cb func(llm.Chunk) error
				if (g+i)%2 == 0 {
					cb = func(llm.Chunk) error { return nil }
				}
				resp, err := m.Chat(ctx, userReq("x"), cb)
				cancel()
				if err == nil && resp.Message.Content != "same answer for everyone" {
					err = fmt.Errorf("content %q", resp.Message.Content)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent call: %v", err)
	}
	if n := len(s.Requests()); n != 24 {
		t.Errorf("server received %d requests, want 24", n)
	}
}

// kindSentinel is the sentinel errors.Is finds in an *llm.Error of kind k.
func kindSentinel(k llm.ErrorKind) error {
	for _, e := range []error{llm.ErrReplyTooLarge, llm.ErrRetryAfterTooLong, llm.ErrNotFound, llm.ErrInvalidRequest,
		llm.ErrContextOverflow, llm.ErrUnsupported, llm.ErrUnavailable, llm.ErrIncomplete} {
		if (&llm.Error{Kind: k}).Is(e) {
			return e
		}
	}
	return nil
}
