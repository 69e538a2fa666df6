package shipments_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
)

// scriptedModel is an in-process llm.Model answering as a script does,
// with no HTTP: the cost weft and the nodes add to the model calls.
type scriptedModel struct {
	sc    *script
	calls atomic.Int64
}

func (m *scriptedModel) Chat(ctx context.Context, req *llm.Request, _ func(llm.Chunk) error) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.calls.Add(1)
	r := m.sc.reply(*req)
	if r.Status != 0 {
		return nil, &llm.Error{Provider: "scripted", Status: r.Status, Message: r.ErrorMessage}
	}
	text := r.Text
	if len(r.JSON) > 0 {
		text = string(r.JSON)
	}
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, Content: text}, FinishReason: "stop"}, nil
}

func benchGraph(b *testing.B, m llm.Model) *graph.Compiled[shipments.State] {
	b.Helper()
	c, err := shipments.New(shipments.Deps{Model: m, Backend: index(b).b, Now: today})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// One new-search turn: F01, build_query, a search of the 5,000 shipments
// on the embedded index, summarize, record_turn (9 steps, 3 model calls
// to an in-process scripted model).
func BenchmarkTurnNewSearch(b *testing.B) {
	m := &scriptedModel{sc: maerskScript()}
	c := benchGraph(b, m)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := c.Invoke(ctx, shipments.State{Question: askMaersk})
		if err != nil || out.Page == nil || len(out.Page.Hits) != 20 || len(out.Errors) != 0 {
			b.Fatalf("%v %+v", err, out.Errors)
		}
	}
	b.ReportMetric(float64(m.calls.Load())/float64(b.N), "llm-calls/op")
}

// One "show me more" turn after a search: F01 finds the prior query, the
// page is run at the next offset (7 steps, 2 model calls).
func BenchmarkTurnShowMore(b *testing.B) {
	m := &scriptedModel{sc: maerskScript()}
	c := benchGraph(b, m)
	ctx := context.Background()
	first, err := c.Invoke(ctx, shipments.State{Question: askMaersk})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := c.Invoke(ctx, shipments.State{Question: askMore, ConversationHistory: first.ConversationHistory})
		if err != nil || out.Page == nil || out.Page.From != 20 {
			b.Fatalf("%v %+v", err, out.Page)
		}
	}
}

// The new-search turn with the model behind the fake Ollama server: the
// client, JSON and loopback HTTP included.
func BenchmarkTurnOllamaWire(b *testing.B) {
	s := llmtest.NewOllamaServer()
	defer s.Close()
	s.KeepRequests(false)
	s.RepeatFunc(maerskScript().reply)
	c := benchGraph(b, ollama.New(ollama.Config{BaseURL: s.BaseURL(), Model: "bench"}))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := c.Invoke(ctx, shipments.State{Question: askMaersk})
		if err != nil || out.Page == nil || len(out.Errors) != 0 {
			b.Fatalf("%v %+v", err, out.Errors)
		}
	}
}

// A new-search turn in a durable thread, every step checkpointed (Sync),
// in memory and in SQLite on disk; each iteration is a new thread.
func BenchmarkThreadTurn(b *testing.B) {
	for _, kind := range []string{"memory", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			c := benchGraph(b, &scriptedModel{sc: maerskScript()})
			ctx := context.Background()
			var th *graph.Threads[shipments.State]
			if kind == "memory" {
				th = c.Threads(memory.New(), nil)
			} else {
				st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				th = c.Threads(st, nil)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				out, err := th.Invoke(ctx, fmt.Sprintf("t%d", i), shipments.State{Question: askMaersk})
				if err != nil || out.Page == nil {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}

// The search of one page alone, on the 5,000 shipments (the query a turn
// builds for "Maersk shipments to LA").
func BenchmarkSearchPage(b *testing.B) {
	l := index(b)
	q, _ := shipments.BuildQuery(shipments.SearchIntent{Carrier: "Maersk", DestinationPort: "Los Angeles"})
	body := mustJSON(b, shipments.WithPage(q, 0, 20))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.b.Search(ctx, "shipments", body); err != nil {
			b.Fatal(err)
		}
	}
}

// The deterministic builder alone.
func BenchmarkBuildQuery(b *testing.B) {
	in := shipments.SearchIntent{Carrier: "Maersk", DestinationPort: "Los Angeles", Goods: "coffee", Status: []string{"in_transit"},
		DepartureFrom: "2025-01-01", DepartureTo: "2025-03-31", MinWeightKg: 10000}
	b.ReportAllocs()
	for b.Loop() {
		if body, _ := shipments.BuildQuery(in); body == nil {
			b.Fatal("nil")
		}
	}
}
