package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
)

// sleeps records the waits of a policy instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func fake(t *testing.T, script ...llmtest.Reply) (*llmtest.Server, llm.Model) {
	t.Helper()
	s := llmtest.NewOllamaServer(script...)
	t.Cleanup(s.Close)
	return s, ollama.New(ollama.Config{BaseURL: s.BaseURL(), Model: "test"})
}

func ask(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: text}}}
}

func chat(t *testing.T, m llm.Model, ctx context.Context, stream bool) (*llm.Response, error) {
	t.Helper()
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
	}
	var cb func(llm.Chunk) error
	if stream {
		cb = func(llm.Chunk) error { return nil }
	}
	return m.Chat(ctx, ask("x"), cb)
}

func TestReliableRetryAfter(t *testing.T) {
	s, m := fake(t, llmtest.RateLimited("2"), llmtest.Text("ok"))
	var sl sleeps
	r := llm.Reliable(m, llm.Policy{MaxAttempts: 3, Backoff: 10 * time.Millisecond, Jitter: 0.5, Sleep: sl.sleep})
	resp, err := chat(t, r, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "ok" {
		t.Errorf("Content = %q", resp.Message.Content)
	}
	got := sl.all()
	if len(got) != 1 || got[0] < 2*time.Second || got[0] > 3*time.Second {
		t.Errorf("waits = %v, want one of at least the 2s Retry-After (plus at most 50%% jitter)", got)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestReliable503Twice(t *testing.T) {
	s, m := fake(t, llmtest.Status(503, "busy"), llmtest.Status(503, "busy"), llmtest.Text("ok"))
	var sl sleeps
	r := llm.Reliable(m, llm.Policy{MaxAttempts: 4, Backoff: 100 * time.Millisecond, MaxBackoff: time.Second, Jitter: 0.5, Sleep: sl.sleep})
	resp, err := chat(t, r, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "ok" {
		t.Errorf("Content = %q", resp.Message.Content)
	}
	got := sl.all()
	if len(got) != 2 ||
		got[0] <= 50*time.Millisecond || got[0] > 100*time.Millisecond ||
		got[1] <= 100*time.Millisecond || got[1] > 200*time.Millisecond {
		t.Errorf("waits = %v, want (50ms,100ms] then (100ms,200ms]", got)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestReliableExhausted(t *testing.T) {
	s, m := fake(t, llmtest.Status(503, "busy 1"), llmtest.Status(502, "busy 2"), llmtest.Status(503, "busy 3"), llmtest.Text("never"))
	var sl sleeps
	r := llm.Reliable(m, llm.Policy{MaxAttempts: 3, Sleep: sl.sleep})
	_, err := chat(t, r, nil, true)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 503 || !e.Retryable || !strings.Contains(e.Message, "busy 3") {
		t.Fatalf("err = %v, want the last attempt's *llm.Error (503, busy 3)", err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if n := len(sl.all()); n != 2 {
		t.Errorf("%d waits, want 2", n)
	}
}

func TestReliableConcurrency(t *testing.T) {
	for _, limit := range []int{2, 0} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			s, m := fake(t)
			s.Repeat(llmtest.Reply{Text: "ok", Latency: 50 * time.Millisecond})
			r := llm.Reliable(m, llm.Policy{Concurrency: limit})
			var wg sync.WaitGroup
			for i := range 10 {
				wg.Go(func() {
					if _, err := chat(t, r, nil, i%2 == 0); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			got := s.MaxInFlight()
			switch {
			case limit > 0 && got != limit:
				t.Errorf("max in flight at the server = %d, want %d", got, limit)
			case limit == 0 && got <= 2:
				t.Errorf("max in flight without a limit = %d, want more than 2", got)
			}
		})
	}
}

func TestReliableCancelDuringBackoff(t *testing.T) {
	_, m := fake(t, llmtest.Status(503, "busy"), llmtest.Text("ok"))
	r := llm.Reliable(m, llm.Policy{MaxAttempts: 3, Backoff: 10 * time.Second, MaxBackoff: time.Minute})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := chat(t, r, ctx, false)
	if el := time.Since(start); el > time.Second {
		t.Errorf("returned after %v", el)
	}
	var e *llm.Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &e) || !strings.Contains(err.Error(), "busy") {
		t.Errorf("err = %v, want an *llm.Error wrapping context.Canceled that names the last error", err)
	}
}

func TestReliableNoRetryAfterChunk(t *testing.T) {
	s, m := fake(t, llmtest.Reply{Text: strings.Repeat("abc", 20), ChunkSize: 2, Cut: true, FaultAfter: 3}, llmtest.Text("ok"))
	var sl sleeps
	r := llm.Reliable(m, llm.Policy{MaxAttempts: 3, Sleep: sl.sleep})
	chunks := 0
	_, err := r.Chat(t.Context(), ask("x"), func(llm.Chunk) error { chunks++; return nil })
	if !llm.IsRetryable(err) {
		t.Fatalf("err = %v, want the retryable cut", err)
	}
	if chunks == 0 {
		t.Errorf("no chunk delivered before the cut")
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: no retry once a chunk was delivered", n)
	}
	// The error says why the cut was not retried, and still wraps it.
	want := fmt.Sprintf("not retried, because %d chunks of the reply had already been delivered to onChunk", chunks)
	var e *llm.Error
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "stream cut") || !errors.As(err, &e) ||
		!strings.HasPrefix(err.Error(), "ollama: stream cut") {
		t.Errorf("err = %v, want it to say %q", err, want)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		t.Errorf("err = %v no longer wraps the read error", err)
	}
	// Without onChunk the same cut is retried from the start.
	s2, m2 := fake(t, llmtest.Reply{Text: strings.Repeat("abc", 20), Cut: true}, llmtest.Text("ok"))
	resp, err := llm.Reliable(m2, llm.Policy{MaxAttempts: 3, Sleep: sl.sleep}).Chat(t.Context(), ask("x"), nil)
	if err != nil || resp.Message.Content != "ok" || len(s2.Requests()) != 2 {
		t.Errorf("unstreamed cut: %v, %v after %d requests", resp, err, len(s2.Requests()))
	}
}

func TestReliableRetriesBeforeFirstChunk(t *testing.T) {
	for name, first := range map[string]llmtest.Reply{
		"cut":   {Text: "lost", Cut: true},
		"reset": {Reset: true},
	} {
		t.Run(name, func(t *testing.T) {
			s, m := fake(t, first, llmtest.Text("ok"))
			var sl sleeps
			r := llm.Reliable(m, llm.Policy{Sleep: sl.sleep})
			resp, err := chat(t, r, nil, true)
			if err != nil || resp.Message.Content != "ok" {
				t.Fatalf("resp %v, err %v", resp, err)
			}
			if n := len(s.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

func TestReliableTimeout(t *testing.T) {
	s, m := fake(t, llmtest.Reply{Text: "slow", Latency: 5 * time.Second}, llmtest.Text("ok"))
	var sl sleeps
	r := llm.Reliable(m, llm.Policy{Timeout: 100 * time.Millisecond, Sleep: sl.sleep})
	start := time.Now()
	resp, err := chat(t, r, nil, false)
	if err != nil || resp.Message.Content != "ok" {
		t.Fatalf("resp %v, err %v", resp, err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}

	// A timeout on the last attempt says so.
	_, m = fake(t, llmtest.Reply{Latency: 5 * time.Second})
	r = llm.Reliable(m, llm.Policy{Timeout: 50 * time.Millisecond, MaxAttempts: 1})
	_, err = chat(t, r, nil, false)
	var e *llm.Error
	if !errors.As(err, &e) || !e.Retryable || !strings.Contains(err.Error(), "timed out after 50ms") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a retryable timeout", err)
	}
}

func TestReliableNotRetryable(t *testing.T) {
	s, m := fake(t, llmtest.Status(400, "bad request"), llmtest.Text("ok"))
	var sl sleeps
	r := llm.Reliable(m, llm.Policy{Sleep: sl.sleep})
	_, err := chat(t, r, nil, false)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 400 {
		t.Fatalf("err = %v, want the 400", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestReliableRetryAfterTooLong(t *testing.T) {
	s, m := fake(t, llmtest.RateLimited("3600"), llmtest.Text("ok"))
	var sl sleeps
	r := llm.Reliable(m, llm.Policy{MaxBackoff: 30 * time.Second, Sleep: sl.sleep})
	_, err := chat(t, r, nil, false)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 429 || e.RetryAfter != time.Hour {
		t.Fatalf("err = %v, want the 429 with its hour-long Retry-After", err)
	}
	if n := len(s.Requests()); n != 1 || len(sl.all()) != 0 {
		t.Errorf("%d requests and waits %v, want 1 request and no wait", n, sl.all())
	}
	// The error says why it came at once: the wait asked for and the limit.
	want := "ollama: HTTP 429: rate limit reached, slow down; the server asked to retry after 1h0m0s, more than the 30s this model waits at most (Policy.MaxBackoff)"
	if err.Error() != want || e.Kind != llm.KindRetryAfterTooLong || !errors.Is(err, llm.ErrRetryAfterTooLong) {
		t.Errorf("err = %q (kind %q), want %q", err, e.Kind, want)
	}

	// A shorter Retry-After is honoured: waited for, then retried.
	s2, m2 := fake(t, llmtest.RateLimited("3"), llmtest.Text("ok"))
	var sl2 sleeps
	resp, err := llm.Reliable(m2, llm.Policy{MaxBackoff: 30 * time.Second, Sleep: sl2.sleep}).Chat(t.Context(), ask("x"), nil)
	if err != nil || resp.Message.Content != "ok" || len(s2.Requests()) != 2 {
		t.Fatalf("resp %v, err %v", resp, err)
	}
	if w := sl2.all(); len(w) != 1 || w[0] != 3*time.Second {
		t.Errorf("waits %v, want the 3s asked for", w)
	}
}

func TestReliableWaitPastDeadline(t *testing.T) {
	s, m := fake(t, llmtest.Status(503, "busy"), llmtest.Text("ok"))
	r := llm.Reliable(m, llm.Policy{Backoff: 5 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := chat(t, r, ctx, false)
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("returned after %v; a wait past the deadline should not start", el)
	}
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 503 {
		t.Errorf("err = %v, want the 503", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if !strings.Contains(err.Error(), "HTTP 503: busy; not retried: waiting 5s to retry would pass the call's deadline") {
		t.Errorf("err = %v, want it to say why it was not retried", err)
	}
}

func TestReliableSlotWaitHonoursContext(t *testing.T) {
	s, m := fake(t)
	s.Repeat(llmtest.Reply{Text: "ok", Latency: time.Second})
	r := llm.Reliable(m, llm.Policy{Concurrency: 1})
	done := make(chan error, 1)
	go func() {
		_, err := chat(t, r, nil, false)
		done <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := chat(t, r, ctx, false)
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("waited %v for a slot", el)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
	if err := <-done; err != nil {
		t.Errorf("first call: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"2":                             2 * time.Second,
		" 120 ":                         2 * time.Minute,
		"1.5":                           1500 * time.Millisecond,
		"-1":                            0,
		"soon":                          0,
		"Sun, 01 Mar 2026 12:00:30 GMT": 30 * time.Second,
		"Sun, 01 Mar 2026 11:00:00 GMT": 0,
	}
	for in, want := range cases {
		if got := llm.ParseRetryAfter(in, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	for _, s := range []int{408, 429, 500, 502, 503, 504, 529} {
		if !llm.RetryableStatus(s) {
			t.Errorf("%d not retryable", s)
		}
	}
	for _, s := range []int{200, 400, 401, 403, 404, 422, 501} {
		if llm.RetryableStatus(s) {
			t.Errorf("%d retryable", s)
		}
	}
}

func TestIsTransient(t *testing.T) {
	yes := []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, fmt.Errorf("read: %w", syscall.ECONNREFUSED)}
	no := []error{nil, context.Canceled, context.DeadlineExceeded, errors.New("bad url"), http.ErrSchemeMismatch}
	for _, err := range yes {
		if !llm.IsTransient(err) {
			t.Errorf("IsTransient(%v) = false", err)
		}
	}
	for _, err := range no {
		if llm.IsTransient(err) {
			t.Errorf("IsTransient(%v) = true", err)
		}
	}
}
