package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
)

// realServer is a fake Ollama that knows the models of the recorded
// server: tiny (a window of 2048 tokens, no thinking), tiny-loop,
// tiny-repeat.
func realServer(t *testing.T, script ...llmtest.Reply) *llmtest.Server {
	s := llmtest.NewOllamaServer(script...)
	t.Cleanup(s.Close)
	s.SetModels(llmtest.Model{Name: "tiny", ContextLength: 2048}, llmtest.Model{Name: "tiny-loop"}, llmtest.Model{Name: "tiny-repeat"})
	return s
}

// reliable is a client of base behind llm.Reliable with 3 attempts and
// no waits; the counter counts the requests sent.
func reliable(base string) (llm.Model, *ollama.Client, *llmtest.CountingTransport) {
	c := &llmtest.CountingTransport{}
	cl := ollama.New(ollama.Config{BaseURL: base, Model: "tiny", HTTPClient: &http.Client{Transport: c}})
	return llm.Reliable(cl, llm.Policy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}), cl, c
}

func chatIn(m llm.Model, req *llm.Request, stream bool) (*llm.Response, error) {
	var onChunk func(llm.Chunk) error
	if stream {
		onChunk = func(llm.Chunk) error { return nil }
	}
	return m.Chat(context.Background(), req, onChunk)
}

func user(model, text string) *llm.Request {
	return &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.User, Content: text}}}
}

// wantErr checks err is an *llm.Error of kind and status, not retryable,
// whose text holds every one of subs, and that errors.Is finds sentinel.
func wantErr(t *testing.T, err error, kind llm.ErrorKind, sentinel error, status int, subs ...string) {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *llm.Error", err, err)
	}
	if e.Kind != kind || e.Status != status || !errors.Is(err, sentinel) {
		t.Errorf("Kind %q, Status %d, errors.Is %v; want %q, %d, true (error %q)", e.Kind, e.Status, errors.Is(err, sentinel), kind, status, err)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

// TestRealRefusals runs each refusal of the real server through the
// client, streamed and not: each fails at once (one request), with its
// Kind, Status and the server's words.
func TestRealRefusals(t *testing.T) {
	long := strings.Repeat("word ", 2000) // 2500 tokens of the fake's
	cases := []struct {
		name   string
		req    *llm.Request
		kind   llm.ErrorKind
		is     error
		status int
		subs   []string
	}{
		{"UnknownModel", user("nosuch", "hi"), llm.KindNotFound, llm.ErrNotFound, 404, []string{"model 'nosuch' not found"}},
		{"ContextOverflow", user("tiny", long), llm.KindContextOverflow, llm.ErrContextOverflow, 400,
			[]string{"the input length exceeds the context length", "10000 characters"}},
		{"ContextOverflowNumCtx", &llm.Request{Model: "tiny", ContextTokens: 100, Messages: []llm.Message{{Role: llm.User, Content: strings.Repeat("abcd", 101)}}},
			llm.KindContextOverflow, llm.ErrContextOverflow, 400, []string{"the input length exceeds the context length", "a context of 100 tokens, num_ctx"}},
		{"SchemaLlamaCppRejects", &llm.Request{Model: "tiny", Messages: []llm.Message{{Role: llm.User, Content: "hi"}},
			Schema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/definitions/nope"}}}`)},
			llm.KindInvalidRequest, llm.ErrInvalidRequest, 500, []string{"invalid JSON schema in format"}},
		{"ThinkUnsupported", &llm.Request{Model: "tiny", Effort: llm.EffortHigh, Messages: []llm.Message{{Role: llm.User, Content: "hi"}}},
			llm.KindUnsupported, llm.ErrUnsupported, 400, []string{`"tiny" does not support thinking`, `think "high"`}},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(c.name+map[bool]string{false: "Whole", true: "Stream"}[stream], func(t *testing.T) {
				s := realServer(t)
				m, _, n := reliable(s.URL)
				_, err := chatIn(m, c.req, stream)
				wantErr(t, err, c.kind, c.is, c.status, c.subs...)
				if llm.IsRetryable(err) {
					t.Errorf("error %q is retryable", err)
				}
				if n.Count() != 1 {
					t.Errorf("%d requests sent, want 1 (no retry)", n.Count())
				}
			})
		}
	}
}

// TestRealRequestFields checks what every request says: "truncate":
// false always, num_ctx from ContextTokens, think only with an Effort.
func TestRealRequestFields(t *testing.T) {
	s := realServer(t, llmtest.Text("a"), llmtest.Text("b"))
	m := ollama.New(ollama.Config{BaseURL: s.URL})
	if _, err := m.Chat(t.Context(), user("tiny", "hi"), nil); err != nil {
		t.Fatal(err)
	}
	s.SetModels(llmtest.Model{Name: "tiny", Thinks: true})
	req := user("tiny", "hi")
	req.ContextTokens, req.Effort = 4096, llm.EffortLow
	if _, err := m.Chat(t.Context(), req, func(llm.Chunk) error { return nil }); err != nil {
		t.Fatal(err)
	}
	rs := s.Requests()
	if tr := rs[0].Truncate; tr != "false" {
		t.Errorf("plain request: truncate = %q, want false", tr)
	}
	if strings.Contains(string(rs[0].Body), `"think"`) || strings.Contains(string(rs[0].Body), `"num_ctx"`) {
		t.Errorf("plain request sends think or num_ctx: %s", rs[0].Body)
	}
	if tr := rs[1].Truncate; tr != "false" {
		t.Errorf("request with options: truncate = %q, want false", tr)
	}
	if rs[1].ContextTokens != 4096 || rs[1].Think != `"low"` {
		t.Errorf("num_ctx %d, think %q; want 4096, \"low\" (body %s)", rs[1].ContextTokens, rs[1].Think, rs[1].Body)
	}
}

// TestRealFinishReasons: a reply cut at num_predict is FinishLength, a
// complete one FinishStop, one with tool calls FinishToolCalls; and a
// reply Ollama's repeat guard ended is an error of KindIncomplete, not a
// reply, and is not retried.
func TestRealFinishReasons(t *testing.T) {
	for _, stream := range []bool{false, true} {
		s := realServer(t)
		m, _, n := reliable(s.URL)
		s.Push(llmtest.Text(strings.Repeat("Xx", 50)))
		req := user("tiny-loop", "go")
		req.MaxTokens = 5
		resp, err := chatIn(m, req, stream)
		if err != nil {
			t.Fatal(err)
		}
		if resp.FinishReason != llm.FinishLength || resp.Message.Content != strings.Repeat("Xx", 10) {
			t.Errorf("stream %v: cut reply: finish %q, content %q; want %q, 20 characters", stream, resp.FinishReason, resp.Message.Content, llm.FinishLength)
		}
		s.Push(llmtest.Text("Okay, fine."), llmtest.Call("c1", "get_weather", `{"city":"Paris"}`))
		if resp, err = chatIn(m, user("tiny", "hi"), stream); err != nil || resp.FinishReason != llm.FinishStop {
			t.Errorf("stream %v: finish %v, err %v; want %q", stream, resp, err, llm.FinishStop)
		}
		if resp, err = chatIn(m, user("tiny", "hi"), stream); err != nil || resp.FinishReason != llm.FinishToolCalls {
			t.Errorf("stream %v: finish %v, err %v; want %q", stream, resp, err, llm.FinishToolCalls)
		}
		s.Push(llmtest.Reply{Text: strings.Repeat("z", 31), ChunkSize: 1, RepeatGuard: true})
		before := n.Count()
		_, err = chatIn(m, user("tiny-repeat", "go"), stream)
		wantErr(t, err, llm.KindIncomplete, llm.ErrIncomplete, 0, "not complete")
		if sent := n.Count() - before; sent != 1 {
			t.Errorf("stream %v: repeat guard: %d requests, want 1", stream, sent)
		}
	}
}

// TestRealRetries: a 500 that says nothing about the request is retried
// until the attempts run out, and the error says so; an unreachable
// server is KindUnavailable with the network's words.
func TestRealRetries(t *testing.T) {
	s := realServer(t, llmtest.Status(500, "boom"), llmtest.Status(500, "boom"), llmtest.Status(500, "boom"))
	m, _, n := reliable(s.URL)
	_, err := chatIn(m, user("tiny", "hi"), false)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 500 || !strings.Contains(err.Error(), "boom; gave up after 3 attempts") || n.Count() != 3 {
		t.Errorf("err = %v after %d requests; want HTTP 500 boom, gave up after 3 attempts, 3 requests", err, n.Count())
	}

	dead := llmtest.NewOllamaServer()
	url := dead.URL
	dead.Close()
	m, _, n = reliable(url)
	_, err = chatIn(m, user("tiny", "hi"), true)
	wantErr(t, err, llm.KindUnavailable, llm.ErrUnavailable, 0, "connection refused", "gave up after 3 attempts", url+"/api/chat")
	if n.Count() != 3 {
		t.Errorf("%d requests to a dead server, want 3", n.Count())
	}
}

// TestRealNoSuchPath: a base URL with a path the server does not serve
// (here /v1, which belongs to OpenAI clients) gets "404 page not found",
// and the error names the URL asked for.
func TestRealNoSuchPath(t *testing.T) {
	s := realServer(t)
	m, _, n := reliable(s.URL + "/v1")
	_, err := chatIn(m, user("tiny", "hi"), false)
	wantErr(t, err, llm.KindNotFound, llm.ErrNotFound, 404, "404 page not found", "POST "+s.URL+"/v1/api/chat")
	if n.Count() != 1 {
		t.Errorf("%d requests, want 1", n.Count())
	}
}

// TestRealEmbedRefusals: the embedding endpoint's refusals, each at once.
func TestRealEmbedRefusals(t *testing.T) {
	cases := []struct {
		name   string
		model  string
		input  []string
		kind   llm.ErrorKind
		status int
		sub    string
	}{
		{"UnknownModel", "nosuch", []string{"a"}, llm.KindNotFound, 404, `model "nosuch" not found, try pulling it first`},
		{"EmptyString", "tiny", []string{"a", ""}, llm.KindInvalidRequest, 500, "Failed to create new sequence: no input provided"},
		{"ContextOverflow", "tiny", []string{"a", strings.Repeat("word ", 2000)}, llm.KindContextOverflow, 400, "the input length exceeds the context length (the longest input text, number 2 of 2, has 10000 characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := realServer(t)
			n := &llmtest.CountingTransport{}
			e := ollama.New(ollama.Config{BaseURL: s.URL, HTTPClient: &http.Client{Transport: n}})
			_, err := e.Embed(t.Context(), &llm.EmbedRequest{Model: c.model, Input: c.input})
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != c.kind || le.Status != c.status || le.Retryable || !strings.Contains(err.Error(), c.sub) {
				t.Errorf("err = %v; want a non-retryable %s, HTTP %d, saying %q", err, c.kind, c.status, c.sub)
			}
			if tr := s.EmbedRequests()[0].Truncate; tr != "false" {
				t.Errorf("truncate = %q, want false", tr)
			}
		})
	}
}
