package adaptiverag

// Intent is the kind of question classify_intent finds: it picks the
// route (OutOfDomain goes to generate_ood_response) and, for questions in
// the domain, the generation strategy and reasoning effort.
type Intent string

// The intents of the seed's intent classifier.
const (
	SimpleQA         Intent = "SIMPLE_QA"         // one fact: a concise answer, low effort
	ComplexReasoning Intent = "COMPLEX_REASONING" // several facts combined: step by step, high effort
	Exploratory      Intent = "EXPLORATORY"       // an overview: a broad answer, medium effort
	OutOfDomain      Intent = "OUT_OF_DOMAIN"     // not about the documents: a polite refusal
)

// Intents lists the intents in the order the classifier's schema gives
// them.
func Intents() []Intent {
	return []Intent{SimpleQA, ComplexReasoning, Exploratory, OutOfDomain}
}

// Roles of the messages in State.Messages, as chat APIs name them.
const (
	RoleHuman = "user"
	RoleAI    = "assistant"
)

// Message is one message of the conversation: the seed's HumanMessage
// (Role RoleHuman) or AIMessage (Role RoleAI).
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Filters are the metadata filters query analysis extracts from a
// question: the seed's RetrievalFilters. A zero field does not filter.
type Filters struct {
	Company string `json:"company,omitempty"`
	Year    int    `json:"year,omitempty"`
}

// IsZero reports whether f filters nothing.
func (f Filters) IsZero() bool { return f.Company == "" && f.Year == 0 }

// Passage is one retrievable piece of a document, with its metadata and,
// in a result, its score (higher is better; comparable within one result
// only).
type Passage struct {
	ID      string  `json:"id"`
	Text    string  `json:"text"`
	Source  string  `json:"source,omitempty"`
	Company string  `json:"company,omitempty"`
	Year    int     `json:"year,omitempty"`
	Score   float64 `json:"score,omitempty"`
}

// State is the workflow's state, the seed's AdaptiveRAGState. Messages
// has the append reducer (the seed's operator.add): each node's message
// is appended, and in a thread the conversation carries over from turn
// to turn. Every other field is replaced when written and, in a thread,
// starts each turn from the value the turn is invoked with.
type State struct {
	// Question is the user's question for this turn (the run's input).
	Question string `weft:"question"`
	// Messages is the conversation, oldest first: classify_intent
	// appends the question, and the node that answers (generate_answer,
	// generate_ood_response or clarify) appends its reply.
	Messages []Message `weft:"messages,append"`

	// Intent is the classified intent, after the domain-relevance
	// override.
	Intent Intent `weft:"intent"`
	// DomainRelevance is how much the question is about the domain, in
	// [0,1]; below RelevanceThreshold the intent becomes OutOfDomain.
	DomainRelevance float64 `weft:"domain_relevance"`
	// ClassifiedBy says which layer decided the intent: "pattern:NAME"
	// (the fast patterns, no LLM call), "llm", or "fallback" when the LLM
	// call failed.
	ClassifiedBy string `weft:"classified_by"`

	// QueryQuality is query analysis' score of the question, in [0,1];
	// below Deps.MinQueryQuality the graph asks for clarification.
	QueryQuality float64 `weft:"query_quality"`
	// Queries are the search queries: the question first, then the
	// rewritten alternatives.
	Queries []string `weft:"queries"`
	// Filters are the metadata filters for retrieval.
	Filters Filters `weft:"filters"`

	// Documents are the passages retrieved for all queries, deduplicated.
	Documents []Passage `weft:"documents"`
	// FallbackSearch reports that a filtered search found nothing and a
	// search without filters was used instead.
	FallbackSearch bool `weft:"fallback_search"`
	// RerankedDocuments are the best Deps.TopK documents, best first: the
	// generation context.
	RerankedDocuments []Passage `weft:"reranked_documents"`

	// Strategy is the generation strategy picked from the intent:
	// "concise", "step_by_step" or "broad".
	Strategy string `weft:"strategy"`
	// ReasoningEffort is the thinking effort mapped from the intent:
	// "low", "medium" or "high".
	ReasoningEffort string `weft:"reasoning_effort"`
	// Answer is generate_answer's answer, or generate_ood_response's
	// reply.
	Answer string `weft:"answer"`
	// Clarification is the clarifying question asked by clarify.
	Clarification string `weft:"clarification"`
	// FinalResponse is what the user is shown, set by finalize.
	FinalResponse string `weft:"final_response"`

	// Errors lists what went wrong in this turn, one "node: error" each.
	// A node that fails records its error here and returns fallback
	// values: the run always completes.
	Errors []string `weft:"errors"`
}

// IntentUpdate is classify_intent's update.
type IntentUpdate struct {
	Intent          Intent
	DomainRelevance float64
	ClassifiedBy    string
	Messages        Message // the question, appended as the human message
	Errors          *[]string
}

// QueryAnalysisUpdate is analyze_query's update.
type QueryAnalysisUpdate struct {
	QueryQuality float64
	Queries      []string
	Filters      Filters
	Errors       *[]string
}

// RetrievalUpdate is the update of retrieve and of rerank. As the seed's
// TypedDict(total=False), each writes only the fields it sets: a nil
// field writes nothing.
type RetrievalUpdate struct {
	Documents         *[]Passage
	FallbackSearch    *bool
	RerankedDocuments *[]Passage
	Errors            *[]string
}

// AnswerUpdate is generate_answer's update.
type AnswerUpdate struct {
	Strategy        string
	ReasoningEffort string
	Answer          string
	Messages        Message // the answer, appended as the AI message
	Errors          *[]string
}

// OODResponseUpdate is generate_ood_response's update.
type OODResponseUpdate struct {
	Answer   string
	Messages Message // the reply, appended as the AI message
}

// ClarifyUpdate is clarify's update.
type ClarifyUpdate struct {
	Clarification string
	Messages      Message // the clarifying question, appended as the AI message
	Errors        *[]string
}

// FinalizeUpdate is finalize's update.
type FinalizeUpdate struct {
	FinalResponse string
}
