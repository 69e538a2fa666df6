package graph_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
)

// The adaptive RAG service of seed 001, in the shape its LangGraph version
// has: a TypedDict state with an append `messages` field, nodes that
// return specific update types, and routing functions.

type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type Doc struct {
	ID    string  `json:"id"`
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

type RAGState struct {
	Question           string    `weft:"question"`
	Messages           []Message `weft:"messages,append"`
	Intent             string    `weft:"intent"`
	DomainRelevance    float64   `weft:"domain_relevance"`
	QueryQuality       float64
	Queries            []string
	NeedsClarification bool
	Documents          []Doc
	Answer             string
	Thinking           string
	Finalized          bool
}

type IntentUpdate struct {
	Intent          string
	DomainRelevance float64
	Messages        Message // one element appended
}

type QueryAnalysisUpdate struct {
	QueryQuality       float64
	Queries            []string
	NeedsClarification bool
}

type RetrievalUpdate struct {
	Documents []Doc
}

type AnswerUpdate struct {
	Answer   string
	Thinking string
	Messages []Message
}

type OODResponseUpdate struct {
	Answer   string
	Messages Message
}

type FinalizeUpdate struct {
	Finalized bool
}

const (
	simpleQA = "SIMPLE_QA"
	complexQ = "COMPLEX_REASONING"
	ood      = "OUT_OF_DOMAIN"
)

func buildRAG(t testing.TB) *graph.Compiled[RAGState] {
	t.Helper()
	g := graph.New[RAGState]("adaptive_rag")
	graph.AddNode(g, "classify_intent", func(_ context.Context, s RAGState) (IntentUpdate, error) {
		q := strings.ToLower(s.Question)
		up := IntentUpdate{Intent: simpleQA, DomainRelevance: 0.9, Messages: Message{Role: "user", Content: s.Question}}
		switch {
		case strings.Contains(q, "weather"): // the fast pattern layer
			up.Intent, up.DomainRelevance = ood, 0.05
		case strings.Contains(q, "poem"): // in-domain words, low relevance
			up.Intent, up.DomainRelevance = simpleQA, 0.2
		case strings.Contains(q, "why"):
			up.Intent = complexQ
		}
		return up, nil
	})
	graph.AddNode(g, "analyze_query", func(_ context.Context, s RAGState) (QueryAnalysisUpdate, error) {
		words := strings.Fields(s.Question)
		if len(words) < 3 {
			return QueryAnalysisUpdate{QueryQuality: 0.2, NeedsClarification: true}, nil
		}
		return QueryAnalysisUpdate{QueryQuality: 0.8, Queries: []string{s.Question, strings.Join(words[1:], " ")}}, nil
	})
	graph.AddNode(g, "clarify", func(_ context.Context, s RAGState) (OODResponseUpdate, error) {
		return OODResponseUpdate{Answer: "Could you say more?", Messages: Message{Role: "assistant", Content: "Could you say more?"}}, nil
	})
	graph.AddNode(g, "retrieve", func(_ context.Context, s RAGState) (RetrievalUpdate, error) {
		var docs []Doc
		for i, q := range s.Queries {
			docs = append(docs, Doc{ID: string(rune('a' + i)), Text: "about " + q, Score: float64(i) / 10})
		}
		return RetrievalUpdate{Documents: docs}, nil
	})
	graph.AddNode(g, "rerank", func(_ context.Context, s RAGState) (RetrievalUpdate, error) {
		docs := slices.Clone(s.Documents)
		slices.SortFunc(docs, func(a, b Doc) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return 0
		})
		return RetrievalUpdate{Documents: docs}, nil
	})
	graph.AddNode(g, "generate_answer", func(_ context.Context, s RAGState) (AnswerUpdate, error) {
		effort := map[string]string{simpleQA: "low", complexQ: "high"}[s.Intent]
		ans := "answer from " + s.Documents[0].ID
		return AnswerUpdate{Answer: ans, Thinking: effort, Messages: []Message{{Role: "assistant", Content: ans}}}, nil
	})
	graph.AddNode(g, "generate_ood_response", func(_ context.Context, s RAGState) (OODResponseUpdate, error) {
		return OODResponseUpdate{Answer: "I can only answer questions about the documents.", Messages: Message{Role: "assistant", Content: "out of domain"}}, nil
	})
	graph.AddNode(g, "finalize", func(_ context.Context, s RAGState) (FinalizeUpdate, error) {
		return FinalizeUpdate{Finalized: true}, nil
	})

	g.SetEntry("classify_intent")
	g.AddConditionalEdges("classify_intent", func(s RAGState) string {
		if s.Intent == ood || s.DomainRelevance < 0.3 {
			return "generate_ood_response"
		}
		return "analyze_query"
	}, "generate_ood_response", "analyze_query")
	g.AddConditionalEdges("analyze_query", func(s RAGState) string {
		if s.NeedsClarification {
			return "clarify"
		}
		return "retrieve"
	}, "clarify", "retrieve")
	g.AddEdge("generate_ood_response", "finalize")
	g.AddEdge("clarify", "finalize")
	g.AddEdge("retrieve", "rerank")
	g.AddEdge("rerank", "generate_answer")
	g.AddEdge("generate_answer", "finalize")
	g.AddEdge("finalize", graph.END)

	c, err := g.Compile(graph.Options{MaxSteps: 50})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSeed001Paths(t *testing.T) {
	c := buildRAG(t)
	history := []Message{{Role: "user", Content: "earlier"}, {Role: "assistant", Content: "reply"}}
	cases := []struct {
		question string
		path     []string
		intent   string
		answer   string
		messages int // appended by this run
	}{
		{"what is the weather today", []string{"classify_intent", "generate_ood_response", "finalize", graph.END}, ood, "I can only answer questions about the documents.", 2},
		{"write a poem about invoices", []string{"classify_intent", "generate_ood_response", "finalize", graph.END}, simpleQA, "I can only answer questions about the documents.", 2},
		{"revenue?", []string{"classify_intent", "analyze_query", "clarify", "finalize", graph.END}, simpleQA, "Could you say more?", 2},
		{"why did revenue grow in 2019", []string{"classify_intent", "analyze_query", "retrieve", "rerank", "generate_answer", "finalize", graph.END}, complexQ, "answer from b", 2},
	}
	for _, tc := range cases {
		t.Run(tc.question, func(t *testing.T) {
			res, err := c.Run(context.Background(), RAGState{Question: tc.question, Messages: history}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Path, tc.path) {
				t.Errorf("path %v, want %v", res.Path, tc.path)
			}
			out, err := c.State(res)
			if err != nil {
				t.Fatal(err)
			}
			if out.Intent != tc.intent || out.Answer != tc.answer || !out.Finalized {
				t.Errorf("state %+v", out)
			}
			if out.Question != tc.question {
				t.Errorf("question changed to %q", out.Question)
			}
			if len(out.Messages) != len(history)+tc.messages || !slices.Equal(out.Messages[:2], history) {
				t.Fatalf("messages %+v", out.Messages)
			}
			if out.Messages[2] != (Message{Role: "user", Content: tc.question}) || out.Messages[3].Role != "assistant" {
				t.Errorf("messages %+v", out.Messages)
			}
		})
	}
	// The full path: reranked documents, thinking effort from the intent.
	out, err := c.Invoke(context.Background(), RAGState{Question: "why did revenue grow in 2019"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Documents) != 2 || out.Documents[0].ID != "b" || out.Documents[0].Score != 0.1 || out.Thinking != "high" || out.QueryQuality != 0.8 {
		t.Errorf("state %+v", out)
	}
	if len(history) != 2 || history[1].Content != "reply" {
		t.Errorf("the caller's history changed: %+v", history)
	}
}

func TestSeed001IR(t *testing.T) {
	c := buildRAG(t)
	w := c.Workflow()
	// The IR passes the static checks on its own.
	if _, ds := flow.Compile(w, nil); ds.HasErrors() {
		t.Fatal(ds)
	}
	var names []string
	for _, n := range w.Nodes {
		names = append(names, n.Name)
	}
	want := []string{"classify_intent", "analyze_query", "clarify", "retrieve", "rerank", "generate_answer", "generate_ood_response", "finalize", graph.END}
	if !slices.Equal(names, want) {
		t.Errorf("nodes %v, want %v", names, want)
	}
	if w.Initial != "classify_intent" {
		t.Errorf("initial %s", w.Initial)
	}
	var edges []string
	for _, e := range w.Edges {
		s := e.From + "->" + strings.Join(e.To, ",")
		if e.Cond != nil {
			s += " [" + e.Cond.String() + "]"
		}
		edges = append(edges, s)
	}
	wantEdges := []string{
		`classify_intent->generate_ood_response [classify_intent.route == "generate_ood_response"]`,
		`classify_intent->analyze_query [classify_intent.route == "analyze_query"]`,
		`analyze_query->clarify [analyze_query.route == "clarify"]`,
		`analyze_query->retrieve [analyze_query.route == "retrieve"]`,
		"clarify->finalize",
		"retrieve->rerank",
		"rerank->generate_answer",
		"generate_answer->finalize",
		"generate_ood_response->finalize",
		"finalize->" + graph.END,
	}
	if !slices.Equal(edges, wantEdges) {
		t.Errorf("edges\n%s\nwant\n%s", strings.Join(edges, "\n"), strings.Join(wantEdges, "\n"))
	}
	// Variables carry the reducers and types of the state.
	var msgs *flow.Var
	for _, v := range w.Vars {
		if v.Name == "messages" {
			msgs = v
		}
	}
	if msgs == nil || msgs.Reducer.Kind != flow.ReduceAppend || msgs.Type.String() != "List[Object]" {
		t.Fatalf("messages variable %+v", msgs)
	}
	n := w.Node("classify_intent")
	var outs []string
	for _, o := range n.Outputs {
		outs = append(outs, o.Name+":"+o.Type.String())
	}
	if got := strings.Join(outs, " "); got != `intent:String domain_relevance:Float messages:Object route:Enum["generate_ood_response","analyze_query"]` {
		t.Errorf("outputs %s", got)
	}
	if n.Action != "go:classify_intent" || n.Type != flow.Function {
		t.Errorf("node %+v", n)
	}
	if len(c.Warnings()) != 0 {
		t.Errorf("warnings: %v", c.Warnings())
	}
}

func TestSeed001Events(t *testing.T) {
	c := buildRAG(t)
	var changed []string
	var finished []string
	obs := engine.ObserverFunc(func(e engine.Event) {
		switch e.Type {
		case engine.NodeFinished:
			finished = append(finished, e.Node)
			for _, ch := range e.Changes {
				changed = append(changed, e.Node+"."+ch.Name)
			}
		}
	})
	res, err := c.Run(context.Background(), RAGState{Question: "what is the weather"}, obs)
	if err != nil || res.Status != engine.Completed {
		t.Fatal(res.Status, err)
	}
	if !slices.Equal(finished, []string{"classify_intent", "generate_ood_response", "finalize", graph.END}) {
		t.Errorf("finished %v", finished)
	}
	if !slices.Contains(changed, "classify_intent.intent") || !slices.Contains(changed, "finalize.finalized") || slices.Contains(changed, "finalize.answer") {
		t.Errorf("changes %v", changed)
	}
	if errors.Unwrap(err) != nil {
		t.Error(err)
	}
}
