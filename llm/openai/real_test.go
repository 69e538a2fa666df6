package openai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/openai"
)

// ollamaV1 is a fake of Ollama's /v1 knowing the recorded server's
// models: tiny (no thinking), tiny-loop, tiny-repeat.
func ollamaV1(t *testing.T, script ...llmtest.Reply) *llmtest.Server {
	s := llmtest.NewOllamaV1Server(script...)
	t.Cleanup(s.Close)
	s.SetModels(llmtest.Model{Name: "tiny"}, llmtest.Model{Name: "tiny-loop"}, llmtest.Model{Name: "tiny-repeat"})
	return s
}

// reliable is a client of base behind llm.Reliable with 3 attempts and
// no waits; the counter counts the requests sent.
func reliable(base string) (llm.Model, *llmtest.CountingTransport) {
	c := &llmtest.CountingTransport{}
	cl := openai.New(openai.Config{BaseURL: base, Model: "tiny", HTTPClient: &http.Client{Transport: c}})
	return llm.Reliable(cl, llm.Policy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}), c
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

// TestOllamaV1Refusals runs each refusal of Ollama's /v1 through the
// client, streamed and not: one request each, the Kind, Status and the
// server's words.
func TestOllamaV1Refusals(t *testing.T) {
	cases := []struct {
		name   string
		base   string // appended to the server's URL
		req    *llm.Request
		kind   llm.ErrorKind
		is     error
		status int
		subs   []string
	}{
		{"UnknownModel", "/v1", user("nosuch", "hi"), llm.KindNotFound, llm.ErrNotFound, 404, []string{"model 'nosuch' not found"}},
		{"ReasoningEffortNotThinking", "/v1", &llm.Request{Model: "tiny", Effort: llm.EffortHigh, Messages: []llm.Message{{Role: llm.User, Content: "hi"}}},
			llm.KindUnsupported, llm.ErrUnsupported, 400, []string{`"tiny" does not support thinking`, `reasoning_effort "high"`}},
		{"EmptyMessages", "/v1", &llm.Request{Model: "tiny"}, llm.KindInvalidRequest, llm.ErrInvalidRequest, 400, []string{"[] is too short - 'messages'"}},
		{"BaseURLWithoutV1", "", user("tiny", "hi"), llm.KindNotFound, llm.ErrNotFound, 404, []string{"404 page not found", "/chat/completions"}},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(c.name+map[bool]string{false: "Whole", true: "Stream"}[stream], func(t *testing.T) {
				s := ollamaV1(t)
				m, n := reliable(s.URL + c.base)
				_, err := chatIn(m, c.req, stream)
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v (%T), want an *llm.Error", err, err)
				}
				if e.Kind != c.kind || e.Status != c.status || !errors.Is(err, c.is) || e.Retryable {
					t.Errorf("Kind %q, Status %d, Retryable %v; want %q, %d, false (error %q)", e.Kind, e.Status, e.Retryable, c.kind, c.status, err)
				}
				for _, sub := range c.subs {
					if !strings.Contains(err.Error(), sub) {
						t.Errorf("error %q does not say %q", err, sub)
					}
				}
				if n.Count() != 1 {
					t.Errorf("%d requests sent, want 1 (no retry)", n.Count())
				}
			})
		}
	}
}

// TestOllamaV1Replies: max_tokens cuts a reply (FinishLength); the
// repeat guard's reply, without a finish_reason, is KindIncomplete and
// not retried; a default request sends no reasoning_effort, and no
// request sends a context size (the API has none).
func TestOllamaV1Replies(t *testing.T) {
	for _, stream := range []bool{false, true} {
		s := ollamaV1(t, llmtest.Text(strings.Repeat("Xx", 50)), llmtest.Reply{Text: strings.Repeat("z", 31), ChunkSize: 1, RepeatGuard: true})
		m, n := reliable(s.URL + "/v1")
		req := user("tiny-loop", "go")
		req.MaxTokens, req.ContextTokens = 7, 4096
		resp, err := chatIn(m, req, stream)
		if err != nil {
			t.Fatal(err)
		}
		if resp.FinishReason != llm.FinishLength || len(resp.Message.Content) != 28 {
			t.Errorf("stream %v: finish %q, content %q; want %q and 28 characters", stream, resp.FinishReason, resp.Message.Content, llm.FinishLength)
		}
		_, err = chatIn(m, user("tiny-repeat", "go"), stream)
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.KindIncomplete || !errors.Is(err, llm.ErrIncomplete) || e.Retryable || !strings.Contains(err.Error(), "not complete") {
			t.Errorf("stream %v: repeat guard: err = %v, want a non-retryable KindIncomplete", stream, err)
		}
		if n.Count() != 2 {
			t.Errorf("stream %v: %d requests, want 2", stream, n.Count())
		}
		for _, r := range s.Requests() {
			if b := string(r.Body); strings.Contains(b, "reasoning_effort") || strings.Contains(b, "num_ctx") {
				t.Errorf("request sends reasoning_effort or num_ctx: %s", b)
			}
		}
	}
}
