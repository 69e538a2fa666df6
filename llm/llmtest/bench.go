package llmtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
)

// BenchFirstToken measures the time from a Chat call to its first chunk
// against a fake for protocol p that answers at once. It reports
// ns/first-token (what the caller sees, loopback HTTP included) and
// ns/first-token-added (that minus the fake's own time from receiving the
// request to flushing the first token: the client's added latency). The
// other events follow a microsecond apart, each flushed on its own, as
// from a model generating them (a stream that nothing delays would be
// written at once, and flushed only as the handler returns). Call it from
// a provider's benchmark:
//
//	func BenchmarkFirstToken(b *testing.B) { llmtest.BenchFirstToken(b, llmtest.Ollama, newModel) }
func BenchFirstToken(b *testing.B, p Protocol, newModel NewModel) {
	s := NewServer(p)
	defer s.Close()
	s.Repeat(Reply{Text: "The first token arrives at once, the rest follow.", ChunkSize: 4, ChunkDelay: time.Microsecond})
	m := newModel(b, s.BaseURL())
	req := &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "Say something short."}}}
	ctx := context.Background()
	var start time.Time
	var first time.Duration
	onChunk := func(llm.Chunk) error {
		if first == 0 {
			first = time.Since(start)
		}
		return nil
	}
	if _, err := m.Chat(ctx, req, onChunk); err != nil { // warm the connection
		b.Fatal(err)
	}
	skip := len(s.Requests())
	var total time.Duration
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		first, start = 0, time.Now()
		if _, err := m.Chat(ctx, req, onChunk); err != nil {
			b.Fatal(err)
		}
		total += first
		n++
	}
	var server time.Duration
	for _, r := range s.Requests()[skip:] {
		server += r.FirstEvent
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(n), "ns/first-token")
	b.ReportMetric(float64((total-server).Nanoseconds())/float64(n), "ns/first-token-added")
}

// BenchStream measures a streamed reply of tokens tokens (one per event)
// from a fake for protocol p through the client, and reports ns/token.
// The fake's events are rendered once and written back to back, so the
// figure is the client's cost per token plus the loopback transfer.
func BenchStream(b *testing.B, p Protocol, newModel NewModel, tokens int) {
	s := NewServer(p)
	defer s.Close()
	text := strings.Repeat("tok ", tokens)
	s.Repeat(Reply{Text: text, ChunkSize: 4})
	m := newModel(b, s.BaseURL())
	req := &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "Talk at length."}}}
	ctx := context.Background()
	chunks := 0
	onChunk := func(llm.Chunk) error { chunks++; return nil }
	if _, err := m.Chat(ctx, req, onChunk); err != nil {
		b.Fatal(err)
	}
	if chunks != tokens {
		b.Fatalf("got %d chunks, want %d", chunks, tokens)
	}
	n := 0
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		resp, err := m.Chat(ctx, req, onChunk)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Message.Content) != len(text) {
			b.Fatalf("got %d bytes of text, want %d", len(resp.Message.Content), len(text))
		}
		n++
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(n*tokens), "ns/token")
}
