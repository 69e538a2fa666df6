package adaptiverag_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftlang/weft/examples/adaptiverag"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
)

// scriptedModel is an in-process llm.Model that answers each kind of call
// the graph makes (told apart by the schema) with a fixed reply.
type scriptedModel struct {
	intent, query, answer string
	calls                 atomic.Int64
}

func newScriptedModel(intent adaptiverag.Intent) *scriptedModel {
	in, _ := json.Marshal(map[string]any{"reasoning": "needs two years compared", "intent": intent, "domain_relevance": 0.92})
	q, _ := json.Marshal(map[string]any{"query_quality": 0.85, "queries": []string{"Acme gross margin 2023", "Acme material costs fixed-price contracts"}, "company": "Acme", "year": 2023})
	return &scriptedModel{intent: string(in), query: string(q), answer: "Material costs rose faster than fixed-price contract prices [1], so the gross margin fell to 31.2% [1] while revenue grew 24% [2]."}
}

func (m *scriptedModel) Chat(ctx context.Context, req *llm.Request, _ func(llm.Chunk) error) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.calls.Add(1)
	text := m.answer
	switch s := string(req.Schema); {
	case strings.Contains(s, "domain_relevance"):
		text = m.intent
	case strings.Contains(s, "query_quality"):
		text = m.query
	}
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, Content: text}, FinishReason: "stop"}, nil
}

func benchGraph(b *testing.B, m llm.Model) *graph.Compiled[adaptiverag.State] {
	b.Helper()
	c, err := adaptiverag.New(adaptiverag.Deps{Model: m, Retriever: adaptiverag.NewMemoryRetriever(loadDocs(b))})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

const benchQuestion = "Why did Acme's gross margin fall in 2023 while revenue grew?"

// One in-domain run (classify_intent, analyze_query, retrieve, rerank,
// generate_answer, finalize) with an in-process scripted model: the cost
// weft and the nodes add to the three LLM calls.
func BenchmarkInDomainRun(b *testing.B) {
	m := newScriptedModel(adaptiverag.ComplexReasoning)
	c := benchGraph(b, m)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := c.Invoke(ctx, adaptiverag.State{Question: benchQuestion})
		if err != nil || out.Answer != m.answer || out.Strategy != "step_by_step" || len(out.Errors) != 0 {
			b.Fatalf("%v %+v", err, out)
		}
	}
	b.ReportMetric(float64(m.calls.Load())/float64(b.N), "llm-calls/op")
}

// The same run with the model behind the fake Ollama server: the client,
// JSON encoding and loopback HTTP included.
func BenchmarkInDomainRunOllamaWire(b *testing.B) {
	sm := newScriptedModel(adaptiverag.ComplexReasoning)
	s := llmtest.NewOllamaServer()
	defer s.Close()
	s.KeepRequests(false)
	s.RepeatFunc(func(req llm.Request) llmtest.Reply {
		resp, _ := sm.Chat(context.Background(), &req, nil)
		return llmtest.Text(resp.Message.Content)
	})
	c := benchGraph(b, ollama.New(ollama.Config{BaseURL: s.BaseURL(), Model: "bench"}))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := c.Invoke(ctx, adaptiverag.State{Question: benchQuestion})
		if err != nil || out.Answer != sm.answer {
			b.Fatalf("%v %+v", err, out)
		}
	}
}

// An out-of-domain question decided by the fast patterns: no LLM call.
func BenchmarkOODPatternRun(b *testing.B) {
	m := newScriptedModel(adaptiverag.SimpleQA)
	c := benchGraph(b, m)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := c.Invoke(ctx, adaptiverag.State{Question: "What's the weather in Paris tomorrow?"})
		if err != nil || out.Intent != adaptiverag.OutOfDomain {
			b.Fatalf("%v %+v", err, out)
		}
	}
	if m.calls.Load() != 0 {
		b.Fatalf("%d LLM calls", m.calls.Load())
	}
}

// One in-domain turn in a durable thread, each step checkpointed (Sync):
// in memory, and in SQLite on disk. Each iteration is a new thread.
func BenchmarkThreadTurn(b *testing.B) {
	for _, kind := range []string{"memory", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			m := newScriptedModel(adaptiverag.SimpleQA)
			c := benchGraph(b, m)
			ctx := context.Background()
			var th *graph.Threads[adaptiverag.State]
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
				out, err := th.Invoke(ctx, fmt.Sprintf("t%d", i), adaptiverag.State{Question: benchQuestion})
				if err != nil || out.Answer != m.answer {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
}
