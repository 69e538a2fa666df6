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

// NewEmbedder makes the Embedder under test, configured with a default
// model and talking to the fake server at baseURL (Server.BaseURL). For
// protocols that carry an API key (OpenAI) it must configure one.
type NewEmbedder func(tb testing.TB, baseURL string) llm.Embedder

// TestEmbedder runs the conformance suite for embeddings: every check is
// a subtest of t that starts its own fake server for protocol p (Ollama or
// OpenAI; Anthropic has no embeddings) and calls newEmbedder for an
// Embedder talking to it. It checks one vector per text in input order
// (100 texts, and OpenAI data listed out of order), equal lengths, the
// fake's vectors decoded exactly, identical texts giving identical
// vectors, usage, the default model and its per-request override, the
// request's path, headers and body, an empty input, a nil request, every
// fault (HTTP errors with Status, Retryable and RetryAfter, malformed and
// cut bodies, a reset connection, replies with the wrong number of vectors
// or mixed lengths), cancellation and deadlines, connection reuse and
// concurrent calls. No call may panic or take longer than 20 seconds.
func TestEmbedder(t *testing.T, p Protocol, newEmbedder NewEmbedder) {
	if p != Ollama && p != OpenAI {
		t.Fatalf("llmtest: protocol %q has no embedding endpoint", p)
	}
	c := &embedSuite{p: p, newEmbedder: newEmbedder}
	t.Run("Vectors", c.vectors)
	t.Run("Order", c.order)
	t.Run("OrderByIndex", c.orderByIndex)
	t.Run("IdenticalTexts", c.identical)
	t.Run("Similarity", c.similarity)
	t.Run("Usage", c.usage)
	t.Run("ModelOverride", c.modelOverride)
	t.Run("RequestShape", c.requestShape)
	t.Run("EmptyInput", c.emptyInput)
	t.Run("NilRequest", c.nilRequest)
	t.Run("Faults", c.faults)
	t.Run("CancelBeforeReply", c.cancelBeforeReply)
	t.Run("CancelledContext", c.cancelledContext)
	t.Run("Deadline", c.deadline)
	t.Run("ConnectionReuse", c.connectionReuse)
	t.Run("Concurrent", c.concurrent)
}

type embedSuite struct {
	p           Protocol
	newEmbedder NewEmbedder
}

func (c *embedSuite) start(t *testing.T, script ...Reply) (*Server, llm.Embedder) {
	t.Helper()
	s := NewServer(c.p)
	s.PushEmbed(script...)
	t.Cleanup(s.Close)
	return s, c.newEmbedder(t, s.BaseURL())
}

// embedResult is what one call gave.
type embedResult struct {
	resp    *llm.EmbedResponse
	err     error
	elapsed time.Duration
}

// embed runs e.Embed with a deadline (when ctx is nil), failing the test
// on a panic, a hang, or a call that returns neither a reply nor an
// error.
func embed(t *testing.T, e llm.Embedder, ctx context.Context, req *llm.EmbedRequest) embedResult {
	t.Helper()
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
	}
	done := make(chan embedResult, 1)
	panicked := make(chan any, 1)
	go func() {
		var r embedResult
		defer func() {
			if p := recover(); p != nil {
				panicked <- p
				return
			}
			done <- r
		}()
		start := time.Now()
		r.resp, r.err = e.Embed(ctx, req)
		r.elapsed = time.Since(start)
	}()
	select {
	case r := <-done:
		if r.err == nil && r.resp == nil {
			t.Fatalf("Embed returned neither a response nor an error")
		}
		return r
	case p := <-panicked:
		t.Fatalf("Embed panicked: %v", p)
	case <-time.After(hangLimit):
		t.Fatalf("Embed did not return within %v", hangLimit)
	}
	return embedResult{}
}

// embedOK fails the test if the call failed, or if its vectors are not
// one per input text, all of one length.
func embedOK(t *testing.T, r embedResult, inputs int) *llm.EmbedResponse {
	t.Helper()
	if r.err != nil {
		t.Fatalf("Embed: %v", r.err)
	}
	if len(r.resp.Vectors) != inputs {
		t.Fatalf("Embed gave %d vectors for %d texts", len(r.resp.Vectors), inputs)
	}
	for i, v := range r.resp.Vectors {
		if len(v) != len(r.resp.Vectors[0]) {
			t.Fatalf("vector %d has %d dimensions, vector 0 has %d", i, len(v), len(r.resp.Vectors[0]))
		}
	}
	return r.resp
}

func texts(in ...string) *llm.EmbedRequest { return &llm.EmbedRequest{Input: in} }

// embedRequests returns the server's embedding requests, failing unless
// there are n.
func embedRequests(t *testing.T, s *Server, n int) []Received {
	t.Helper()
	got := s.EmbedRequests()
	if len(got) != n {
		t.Fatalf("server received %d embedding requests, want %d", len(got), n)
	}
	return got
}

func (c *embedSuite) vectors(t *testing.T) {
	_, e := c.start(t)
	in := []string{"The cat sat on the mat.", "Stock markets fell sharply on Monday.", "ünïcödé wörds, too"}
	resp := embedOK(t, embed(t, e, nil, texts(in...)), len(in))
	for i, text := range in {
		if want := HashEmbed(text); !reflect.DeepEqual(resp.Vectors[i], want) {
			t.Errorf("vector %d (of %q) differs from the fake's HashEmbed: %v..., want %v...", i, text, head(resp.Vectors[i]), head(want))
		}
	}
}

// head is the start of a vector, for messages.
func head(v []float32) []float32 { return v[:min(len(v), 6)] }

func (c *embedSuite) order(t *testing.T) {
	s, e := c.start(t)
	s.SetEmbed(func(text string) []float32 {
		var n int
		_, _ = fmt.Sscanf(text, "text %d", &n)
		return []float32{float32(n), 1, -1}
	})
	in := make([]string, 100)
	for i := range in {
		in[i] = fmt.Sprintf("text %d", i)
	}
	resp := embedOK(t, embed(t, e, nil, texts(in...)), len(in))
	for i, v := range resp.Vectors {
		if want := []float32{float32(i), 1, -1}; !reflect.DeepEqual(v, want) {
			t.Fatalf("vector %d = %v, want %v: input order lost", i, v, want)
		}
	}
	if got := embedRequests(t, s, 1)[0].Embed.Input; !reflect.DeepEqual(got, in) {
		t.Errorf("texts received = %q..., want %q...", got[:min(3, len(got))], in[:3])
	}
}

func (c *embedSuite) orderByIndex(t *testing.T) {
	if c.p != OpenAI {
		t.Skip("only OpenAI's data carries an index")
	}
	_, e := c.start(t, Reply{Shuffle: true})
	in := []string{"alpha", "beta", "gamma", "delta"}
	resp := embedOK(t, embed(t, e, nil, texts(in...)), len(in))
	for i, text := range in {
		if !reflect.DeepEqual(resp.Vectors[i], HashEmbed(text)) {
			t.Errorf("vector %d is not that of %q: the reply's data was listed out of order and must be put in order by index", i, text)
		}
	}
}

func (c *embedSuite) identical(t *testing.T) {
	_, e := c.start(t)
	in := []string{"same words here", "something else entirely", "same words here"}
	resp := embedOK(t, embed(t, e, nil, texts(in...)), len(in))
	if !reflect.DeepEqual(resp.Vectors[0], resp.Vectors[2]) {
		t.Errorf("identical texts gave different vectors")
	}
	if cos := llm.Cosine(resp.Vectors[0], resp.Vectors[2]); cos < 0.999999 {
		t.Errorf("cosine of identical texts = %v, want 1", cos)
	}
	again := embedOK(t, embed(t, e, nil, texts(in[0])), 1)
	if !reflect.DeepEqual(again.Vectors[0], resp.Vectors[0]) {
		t.Errorf("the same text embedded alone gave a different vector")
	}
}

func (c *embedSuite) similarity(t *testing.T) {
	_, e := c.start(t)
	in := []string{"the quick brown fox jumps", "a quick brown fox sleeps", "quarterly revenue grew"}
	resp := embedOK(t, embed(t, e, nil, texts(in...)), len(in))
	near, far := llm.Cosine(resp.Vectors[0], resp.Vectors[1]), llm.Cosine(resp.Vectors[0], resp.Vectors[2])
	if !(near > far) {
		t.Errorf("cosine of texts sharing words = %v, not above that of unrelated texts = %v", near, far)
	}
}

func (c *embedSuite) usage(t *testing.T) {
	_, e := c.start(t, Reply{}, Reply{Usage: llm.Usage{InputTokens: 17}})
	first := embedOK(t, embed(t, e, nil, texts("count my tokens, please")), 1)
	if first.Usage.InputTokens <= 0 {
		t.Errorf("Usage.InputTokens = %d, want the fake's estimate", first.Usage.InputTokens)
	}
	second := embedOK(t, embed(t, e, nil, texts("x")), 1)
	if second.Usage != (llm.Usage{InputTokens: 17}) {
		t.Errorf("Usage = %+v, want {InputTokens: 17}", second.Usage)
	}
}

func (c *embedSuite) modelOverride(t *testing.T) {
	s, e := c.start(t, Reply{}, Reply{}, Reply{Model: "served-model"})
	first := embedOK(t, embed(t, e, nil, texts("x")), 1)
	second := embedOK(t, embed(t, e, nil, &llm.EmbedRequest{Model: "override-model", Input: []string{"y"}}), 1)
	third := embedOK(t, embed(t, e, nil, texts("z")), 1)
	recs := embedRequests(t, s, 3)
	def := recs[0].Embed.Model
	if def == "" || def == "override-model" {
		t.Errorf("default model sent = %q", def)
	}
	if first.Model != def {
		t.Errorf("Response.Model = %q, want %q", first.Model, def)
	}
	if recs[1].Embed.Model != "override-model" {
		t.Errorf("model sent = %q, want the EmbedRequest.Model override", recs[1].Embed.Model)
	}
	if second.Model != "override-model" {
		t.Errorf("Response.Model = %q, want override-model", second.Model)
	}
	if third.Model != "served-model" {
		t.Errorf("Response.Model = %q, want the model the server named, served-model", third.Model)
	}
}

func (c *embedSuite) requestShape(t *testing.T) {
	s, e := c.start(t)
	embedOK(t, embed(t, e, nil, texts("one text")), 1)
	embedOK(t, embed(t, e, nil, texts("first", "second")), 2)
	for i, rec := range embedRequests(t, s, 2) {
		want := map[Protocol]string{Ollama: "/api/embed", OpenAI: "/v1/embeddings"}[c.p]
		if rec.Method != http.MethodPost || rec.Path != want {
			t.Errorf("request %d: %s %s, want POST %s", i, rec.Method, rec.Path, want)
		}
		if ct := rec.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("request %d: Content-Type = %q, want application/json", i, ct)
		}
		if c.p == OpenAI {
			if a := rec.Header.Get("Authorization"); !strings.HasPrefix(a, "Bearer ") || len(a) <= len("Bearer ") {
				t.Errorf("request %d: no Bearer token in the Authorization header", i)
			}
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body, &body); err != nil {
			t.Fatalf("request %d: body is not a JSON object: %v", i, err)
		}
		var model string
		if json.Unmarshal(body["model"], &model) != nil || model == "" {
			t.Errorf("request %d: no model string in the body", i)
		}
		if _, ok := body["input"]; !ok {
			t.Errorf("request %d: no input in the body", i)
		}
		if _, ok := body["prompt"]; ok {
			t.Errorf("request %d: body has the legacy prompt field", i)
		}
		if c.p == OpenAI {
			var f string
			if raw, ok := body["encoding_format"]; ok && (json.Unmarshal(raw, &f) != nil || f != "float" && f != "base64") {
				t.Errorf("request %d: encoding_format = %s, want \"float\" (or \"base64\")", i, raw)
			}
		}
	}
	recs := s.EmbedRequests()
	if got := recs[1].Embed.Input; !reflect.DeepEqual(got, []string{"first", "second"}) {
		t.Errorf("texts received = %q, want [first second] in one request", got)
	}
}

func (c *embedSuite) emptyInput(t *testing.T) {
	_, e := c.start(t)
	for _, req := range []*llm.EmbedRequest{{}, {Input: []string{}}} {
		r := embed(t, e, nil, req)
		if r.err != nil {
			t.Fatalf("Embed of no texts: %v", r.err)
		}
		if len(r.resp.Vectors) != 0 {
			t.Errorf("Embed of no texts gave %d vectors", len(r.resp.Vectors))
		}
	}
}

func (c *embedSuite) nilRequest(t *testing.T) {
	_, e := c.start(t)
	r := embed(t, e, nil, nil)
	var le *llm.Error
	if !errors.As(r.err, &le) {
		t.Errorf("Embed(nil) err = %v, want an *llm.Error", r.err)
	}
}

// embedFault is one fault case and the error it must give.
type embedFault struct {
	name       string
	reply      Reply
	status     int
	retryable  bool
	retryAfter time.Duration
	contains   []string // in the error message
	kind       llm.ErrorKind
}

func (c *embedSuite) faults(t *testing.T) {
	in := []string{"one", "two", "three"}
	huge := make([]float32, 400_000) // three take some 13 MB as JSON
	for i := range huge {
		huge[i] = 0.12345678
	}
	cases := []embedFault{
		{name: "429RetryAfter", reply: RateLimited("2"), status: 429, retryable: true, retryAfter: 2 * time.Second, contains: []string{"rate limit reached"}},
		{name: "500", reply: Status(500, "internal failure"), status: 500, retryable: true, contains: []string{"internal failure"}},
		{name: "503", reply: Status(503, "overloaded, try later"), status: 503, retryable: true, contains: []string{"overloaded, try later"}},
		{name: "400", reply: Status(400, "input is too long"), status: 400, contains: []string{"input is too long"}, kind: llm.KindInvalidRequest},
		{name: "401", reply: Status(401, "invalid api key"), status: 401, contains: []string{"invalid api key"}},
		{name: "404", reply: Status(404, `model "nope" not found`), status: 404, contains: []string{`model "nope" not found`}, kind: llm.KindNotFound},
		{name: "Malformed", reply: Reply{Malformed: true}, contains: []string{"malformed JSON"}},
		{name: "Cut", reply: Reply{Cut: true}, retryable: true, contains: []string{"cut"}, kind: llm.KindUnavailable},
		{name: "Reset", reply: Reply{Reset: true}, retryable: true, kind: llm.KindUnavailable},
		{name: "FewerVectors", reply: Reply{Vectors: [][]float32{{1, 0}, {0, 1}}}, contains: []string{"2", "3"}},
		{name: "MoreVectors", reply: Reply{Vectors: [][]float32{{1, 0}, {0, 1}, {1, 1}, {0, 0}}}, contains: []string{"4", "3"}},
		{name: "MixedLengths", reply: Reply{Vectors: [][]float32{{1, 0, 0}, {0, 1}, {1, 1, 0}}}},
		{name: "EmptyVectors", reply: Reply{Vectors: [][]float32{{}, {}, {}}}},
		// A reply past llm.DefaultMaxReplyBytes is refused, not read whole.
		{name: "ReplyTooLarge", reply: Reply{Vectors: [][]float32{huge, huge, huge}}, kind: llm.KindReplyTooLarge, contains: []string{"8388608 bytes"}},
	}
	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			_, e := c.start(t, fc.reply)
			r := embed(t, e, nil, texts(in...))
			if r.err == nil {
				t.Fatalf("Embed succeeded with %d vectors, want an error", len(r.resp.Vectors))
			}
			if r.resp != nil {
				t.Errorf("Embed returned a response with its error")
			}
			var le *llm.Error
			if !errors.As(r.err, &le) {
				t.Fatalf("error %q (%T) is not an *llm.Error", r.err, r.err)
			}
			if le.Provider == "" || !strings.HasPrefix(r.err.Error(), le.Provider+": ") {
				t.Errorf("error %q does not start with the provider's name", r.err)
			}
			if le.Status != fc.status {
				t.Errorf("Status = %d, want %d (error %q)", le.Status, fc.status, r.err)
			}
			if le.Retryable != fc.retryable {
				t.Errorf("Retryable = %v, want %v (error %q)", le.Retryable, fc.retryable, r.err)
			}
			if le.RetryAfter != fc.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", le.RetryAfter, fc.retryAfter)
			}
			for _, sub := range fc.contains {
				if !strings.Contains(r.err.Error(), sub) {
					t.Errorf("error %q does not mention %q", r.err, sub)
				}
			}
			if le.Kind != fc.kind {
				t.Errorf("Kind = %q, want %q (error %q)", le.Kind, fc.kind, r.err)
			}
		})
	}
	t.Run("Latency", func(t *testing.T) {
		_, e := c.start(t, Reply{Latency: 200 * time.Millisecond})
		r := embed(t, e, nil, texts("late but fine"))
		embedOK(t, r, 1)
		if r.elapsed < 200*time.Millisecond {
			t.Errorf("reply came after %v, before the fake's latency", r.elapsed)
		}
	})
}

func (c *embedSuite) cancelBeforeReply(t *testing.T) {
	_, e := c.start(t, Reply{Latency: 30 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	r := embed(t, e, ctx, texts("x"))
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want one that wraps context.Canceled", r.err)
	}
	if r.elapsed > 2*time.Second {
		t.Errorf("cancellation took %v", r.elapsed)
	}
	if llm.IsRetryable(r.err) {
		t.Errorf("a cancelled call is marked retryable")
	}
}

func (c *embedSuite) cancelledContext(t *testing.T) {
	_, e := c.start(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := embed(t, e, ctx, texts("x"))
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want one that wraps context.Canceled", r.err)
	}
}

func (c *embedSuite) deadline(t *testing.T) {
	_, e := c.start(t, Reply{Latency: 30 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	r := embed(t, e, ctx, texts("x"))
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want one that wraps context.DeadlineExceeded", r.err)
	}
	if r.elapsed > 2*time.Second {
		t.Errorf("the deadline took %v to end the call", r.elapsed)
	}
}

func (c *embedSuite) connectionReuse(t *testing.T) {
	s, e := c.start(t)
	for i := range 12 {
		switch i {
		case 3:
			s.PushEmbed(Status(503, "busy"))
		case 6:
			s.PushEmbed(Status(400, "bad input"))
		case 9:
			s.PushEmbed(Reply{Vectors: [][]float32{{1}}})
		default:
			s.PushEmbed(Reply{})
		}
	}
	for i := range 12 {
		r := embed(t, e, nil, texts(fmt.Sprintf("call %d", i), "and a second text"))
		if (i == 3 || i == 6 || i == 9) != (r.err != nil) {
			t.Fatalf("call %d: err = %v", i, r.err)
		}
	}
	if n := s.Connections(); n != 1 {
		t.Errorf("12 sequential calls used %d TCP connections, want 1 (are bodies drained and closed?)", n)
	}
}

func (c *embedSuite) concurrent(t *testing.T) {
	s, e := c.start(t)
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for g := range 8 {
		wg.Go(func() {
			for i := range 3 {
				text := fmt.Sprintf("goroutine %d call %d", g, i)
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				resp, err := e.Embed(ctx, texts(text, "shared text"))
				cancel()
				if err == nil && (len(resp.Vectors) != 2 || !reflect.DeepEqual(resp.Vectors[0], HashEmbed(text)) || !reflect.DeepEqual(resp.Vectors[1], HashEmbed("shared text"))) {
					err = fmt.Errorf("%q: wrong vectors", text)
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
	if n := len(s.EmbedRequests()); n != 24 {
		t.Errorf("server received %d embedding requests, want 24", n)
	}
}
