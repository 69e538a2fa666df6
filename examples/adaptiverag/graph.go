package adaptiverag

import (
	"github.com/weftlang/weft/examples/internal/modelcall"
	"github.com/weftlang/weft/graph"
)

// GraphName is the compiled workflow's name.
const GraphName = "adaptive_rag"

// The node names, as in the seed.
const (
	NodeClassifyIntent      = "classify_intent"
	NodeAnalyzeQuery        = "analyze_query"
	NodeClarify             = "clarify"
	NodeRetrieve            = "retrieve"
	NodeRerank              = "rerank"
	NodeGenerateAnswer      = "generate_answer"
	NodeGenerateOODResponse = "generate_ood_response"
	NodeFinalize            = "finalize"
)

// New builds and compiles the adaptive RAG graph of seed 001 over deps:
//
//	classify_intent -> [OOD?] -> generate_ood_response -> finalize -> END
//	                -> [in domain] -> analyze_query -> [clarify?] -> clarify -> finalize -> END
//	                                                -> retrieve -> rerank -> generate_answer -> finalize -> END
//
// Run a question with Invoke (or Run, for the path and events) on a
// State holding the Question; for a conversation, run it in a thread
// (Compiled.Threads) so that Messages carries over from turn to turn.
// Every node recovers from its own LLM and retriever errors (see State.Errors):
// a run fails only when its context is cancelled or a limit is hit.
func New(deps Deps) (*graph.Compiled[State], error) {
	s, err := deps.settings()
	if err != nil {
		return nil, err
	}
	n := &nodes{s: s, log: s.Logger, call: &modelcall.Caller{Model: s.Model, Name: s.ModelName, Timeout: s.CallTimeout, MaxRepairs: s.MaxRepairs}}
	g := graph.New[State](GraphName)
	g.Describe("Adaptive RAG (seed 001): intent classification with a fast out-of-domain layer, query analysis, retrieval with filter fallback, reranking and intent-specific generation.")
	graph.AddNode(g, NodeClassifyIntent, n.classifyIntent,
		graph.WithDescription("fast out-of-domain patterns, else LLM intent and domain relevance (structured output); relevance < 0.3 means OUT_OF_DOMAIN"))
	graph.AddNode(g, NodeAnalyzeQuery, n.analyzeQuery,
		graph.WithDescription("LLM query quality, alternative queries and filters (structured output)"))
	graph.AddNode(g, NodeClarify, n.clarify,
		graph.WithDescription("LLM clarifying question for a vague query"))
	graph.AddNode(g, NodeRetrieve, n.retrieve,
		graph.WithDescription("search every query with the filters, deduplicate; without filters when nothing is found"))
	graph.AddNode(g, NodeRerank, n.rerank,
		graph.WithDescription("rerank against the question (lexical BM25 by default), keep the best TopK"))
	graph.AddNode(g, NodeGenerateAnswer, n.generateAnswer,
		graph.WithDescription("plain LLM answer with the intent's strategy and reasoning effort, history and documents"))
	graph.AddNode(g, NodeGenerateOODResponse, n.generateOODResponse,
		graph.WithDescription("polite refusal, no LLM call"))
	graph.AddNode(g, NodeFinalize, n.finalize,
		graph.WithDescription("the final response: the clarification, or the answer with its sources"))

	g.SetEntry(NodeClassifyIntent)
	g.AddConditionalEdges(NodeClassifyIntent, RouteIntent, NodeGenerateOODResponse, NodeAnalyzeQuery)
	g.AddConditionalEdges(NodeAnalyzeQuery, func(st State) string {
		return RouteQuery(st, s.MinQueryQuality)
	}, NodeClarify, NodeRetrieve)
	g.AddEdge(NodeGenerateOODResponse, NodeFinalize)
	g.AddEdge(NodeClarify, NodeFinalize)
	g.AddEdge(NodeRetrieve, NodeRerank)
	g.AddEdge(NodeRerank, NodeGenerateAnswer)
	g.AddEdge(NodeGenerateAnswer, NodeFinalize)
	g.AddEdge(NodeFinalize, graph.END)
	return g.Compile(graph.Options{MaxSteps: s.MaxSteps})
}

// RouteIntent is the conditional edge after classify_intent: out of the
// domain (by intent, or by a domain relevance below RelevanceThreshold)
// to generate_ood_response, else to analyze_query.
func RouteIntent(s State) string {
	if s.Intent == OutOfDomain || s.DomainRelevance < RelevanceThreshold {
		return NodeGenerateOODResponse
	}
	return NodeAnalyzeQuery
}

// RouteQuery is the conditional edge after analyze_query: to clarify when
// the query quality is below minQuality, else to retrieve.
func RouteQuery(s State, minQuality float64) string {
	if s.QueryQuality < minQuality {
		return NodeClarify
	}
	return NodeRetrieve
}
