// Package adaptiverag is seed 001, an adaptive RAG service first built
// with LangGraph, written with weft's typed Go API (package graph).
//
// The graph classifies the question's intent (SIMPLE_QA,
// COMPLEX_REASONING, EXPLORATORY, OUT_OF_DOMAIN) in two layers, fast
// patterns then an LLM with a domain-relevance score; refuses questions
// outside the domain; analyses the others (quality, rewritten queries,
// company and year filters) and asks for clarification when they are too
// vague; otherwise retrieves passages for every query (without filters
// when the filtered search finds nothing), reranks them, and answers with
// the strategy and reasoning effort of the intent:
//
//	classify_intent -> [OOD?] -> generate_ood_response -> finalize -> END
//	                -> [in domain] -> analyze_query -> [clarify?] -> clarify -> finalize -> END
//	                                                -> retrieve -> rerank -> generate_answer -> finalize -> END
//
// Every node receives the State and returns its own partial update type
// (IntentUpdate, QueryAnalysisUpdate, RetrievalUpdate, AnswerUpdate,
// OODResponseUpdate, ...), recovers from its LLM and retriever errors
// with fallback values recorded in State.Errors, and logs
// ---NODE_NAME--- through the logger given in Deps. Dependencies are
// passed to New in a Deps value; nothing is global.
//
// Conversations run in threads (graph.Compiled.Threads over a
// store.Store): State.Messages has the append reducer, so a thread's next
// question sees the earlier turns in its prompts.
//
// The program cmd/adaptiverag runs it from the command line; README.md
// maps each requirement of the seed to the code.
package adaptiverag
