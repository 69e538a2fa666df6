package shipments

import (
	"github.com/weftlang/weft/examples/shipments/dataset"
)

// ArtifactESQuery is the type of the key artifact a turn that ran a search
// leaves in its TurnSummary: the query, its next offset, its page size and
// its total, for the next turn's "show me more".
const ArtifactESQuery = "es_query"

// ContextSubGoal is the sub-goal id of F01's synthetic context slot in
// State.CompletedOutputs.
const ContextSubGoal = 0

// The slots of F01's context, CompletedOutputs[ContextSubGoal]. The map
// is sparse: a slot is present only when F01 found something to put in it.
const (
	SlotPriorESQuery    = "prior_es_query"
	SlotPriorNextOffset = "prior_next_offset"
	SlotPriorPageSize   = "prior_page_size"
	SlotUserESQuery     = "user_es_query"
	SlotForceExecute    = "force_execute"
)

// The slots of an es_query artifact, and of the sub-goals that prepare or
// run a query (parse_user_query, build_query, execute_query).
const (
	SlotQuery      = "query"       // the query body, without from and size
	SlotFrom       = "from"        // the offset of the page to run
	SlotPageSize   = "page_size"   // the page size
	SlotNextOffset = "next_offset" // from + page_size
	SlotTotal      = "total"       // the number of matching shipments
	SlotReturned   = "returned"    // the hits on the page
	SlotError      = "error"       // what went wrong, when the sub-goal failed
	SlotOffset     = "offset"      // the byte offset of a JSON syntax error
	SlotCriteria   = "criteria"    // the criteria build_query found
	SlotClarify    = "clarify"     // build_query found no criterion: the question to ask
	SlotResponse   = "response"    // the reply written by summarize or clarify
)

// KeyArtifact is one artifact a turn produced, as the seed's main app
// records it in a TurnSummary: its type ("es_query"), the intent it
// served (F01's main goal) and its slots.
type KeyArtifact struct {
	Type   string `json:"type"`
	Intent string `json:"intent"`
	Slots  Slots  `json:"slots"`
}

// TurnSummary is one earlier turn of the conversation, the seed's
// TurnSummary: what the user said, what the agent answered, and the key
// artifacts of the turn.
type TurnSummary struct {
	Question     string        `json:"question"`
	Response     string        `json:"response"`
	KeyArtifacts []KeyArtifact `json:"key_artifacts"`
}

// Task is what the planner (F02) dispatches in one round: a worker node,
// the sub-goal id its outputs go under in CompletedOutputs, and its
// parameters.
type Task struct {
	// Worker is the node to run next: one of the Node* names, NodeRecordTurn
	// when the turn is done.
	Worker string `json:"worker"`
	// SubGoal is the id under which the worker writes its slots.
	SubGoal int `json:"sub_goal"`
	// Input is the sub-goal whose slots the worker reads (the seed's
	// InputRef from_sub_goal): 0 is F01's context.
	Input int `json:"input"`
	// ForceExecute tells build_query not to ask for clarification (the
	// seed's params["force_execute"]).
	ForceExecute bool `json:"force_execute,omitempty"`
	// Reason says why clarify was chosen: ReasonEmptyQuestion,
	// ReasonNothingToContinue, ReasonNoCriteria, ReasonExtractionFailed;
	// or why the turn ended early.
	Reason string `json:"reason,omitempty"`
}

// Page is one page of search results.
type Page struct {
	// Total is the number of matching shipments: exact when TotalRelation
	// is "eq", a lower bound when it is "gte".
	Total         int64  `json:"total"`
	TotalRelation string `json:"total_relation,omitempty"`
	// From and Size are the page's offset and size as requested;
	// NextOffset is From + Size, where the next page starts.
	From       int `json:"from"`
	Size       int `json:"size"`
	NextOffset int `json:"next_offset"`
	// Hits are the page's shipments, in the query's order.
	Hits []dataset.Shipment `json:"hits"`
}

// Returned is the number of shipments on the page.
func (p *Page) Returned() int {
	if p == nil {
		return 0
	}
	return len(p.Hits)
}

// More reports whether shipments remain after this page. When the total
// is unknown (-1: the query set track_total_hits to false), a full page
// means there may be more.
func (p *Page) More() bool {
	switch {
	case p == nil:
		return false
	case p.Total < 0:
		return len(p.Hits) >= p.Size && p.Size > 0
	}
	return int64(p.NextOffset) < p.Total
}

// State is the workflow's state. ConversationHistory has the append
// reducer: in a thread it carries over from turn to turn, and each turn
// appends its TurnSummary at the end. Every other field is replaced when
// written and starts each turn from the value the turn is invoked with
// (empty but for Question).
type State struct {
	// Question is the user's message; F01 replaces it with the main goal.
	Question string `weft:"question"`
	// UserMessage is the user's message as typed, kept by F01 before it
	// rewrites Question (the turn summary records it).
	UserMessage string `weft:"user_message"`
	// ConversationHistory is the earlier turns, oldest first.
	ConversationHistory []TurnSummary `weft:"conversation_history,append"`
	// CompletedOutputs holds each sub-goal's slots by sub-goal id: 0 is
	// F01's synthetic context (sparse: see the Slot* constants), then one
	// id per round of the planner.
	CompletedOutputs map[int]Slots `weft:"completed_outputs"`

	// MainGoal is F01's restatement of the user's intent.
	MainGoal string `weft:"main_goal"`
	// Reasoning is how F01 read the message.
	Reasoning string `weft:"reasoning"`
	// ReferencesPriorResults is F01's reading that the user wants more of
	// the earlier results, whether or not an earlier query was found.
	ReferencesPriorResults bool `weft:"references_prior_results"`

	// Round counts the planner's rounds in this turn, from 1.
	Round int `weft:"round"`
	// Task is the planner's latest dispatch.
	Task Task `weft:"task"`
	// SearchIntent is what build_query extracted from the request.
	SearchIntent *SearchIntent `weft:"search_intent"`
	// ESQuery is the request body of the search that ran (with from and
	// size), built by build_query, given by the user, or an earlier turn's
	// query paged on.
	ESQuery map[string]any `weft:"es_query"`
	// Page is the page of results.
	Page *Page `weft:"page"`
	// Response is the turn's reply to the user.
	Response string `weft:"response"`

	// Errors lists what failed in this turn, "node: error" each; the node
	// fell back and the turn went on.
	Errors []string `weft:"errors"`
	// Warnings lists what the nodes ignored or adjusted: a criterion that
	// could not be used, a page size capped.
	Warnings []string `weft:"warnings"`
}

// SearchIntent is the typed search the model extracts from a request:
// build_query turns it into a query-DSL body with BuildQuery. An empty
// field does not restrict the search.
type SearchIntent struct {
	Shipper            string   `json:"shipper,omitempty"`
	Consignee          string   `json:"consignee,omitempty"`
	Carrier            string   `json:"carrier,omitempty"`
	OriginPort         string   `json:"origin_port,omitempty"`      // a name or a UN/LOCODE
	DestinationPort    string   `json:"destination_port,omitempty"` // a name or a UN/LOCODE
	OriginCountry      string   `json:"origin_country,omitempty"`   // a name or an ISO 3166 code
	DestinationCountry string   `json:"destination_country,omitempty"`
	Goods              string   `json:"goods,omitempty"`
	Status             []string `json:"status,omitempty"`
	DepartureFrom      string   `json:"departure_from,omitempty"` // YYYY-MM-DD, inclusive
	DepartureTo        string   `json:"departure_to,omitempty"`
	ArrivalFrom        string   `json:"arrival_from,omitempty"`
	ArrivalTo          string   `json:"arrival_to,omitempty"`
	MinWeightKg        int64    `json:"min_weight_kg,omitempty"`
	MaxWeightKg        int64    `json:"max_weight_kg,omitempty"`
	SortBy             string   `json:"sort_by,omitempty"`    // SortDefault, or a field of SortFields
	SortOrder          string   `json:"sort_order,omitempty"` // "asc" or "desc"
	PageSize           int      `json:"page_size,omitempty"`
	// Clarification is the model's question to the user when the request
	// names no criterion.
	Clarification string `json:"clarification,omitempty"`
}

// ReiterateResult is F01's structured output, the seed's ReiterateResult.
type ReiterateResult struct {
	MainGoal               string  `json:"main_goal"`
	Reasoning              string  `json:"reasoning"`
	UserQueryText          *string `json:"user_query_text"` // nil: null
	ReferencesPriorResults bool    `json:"references_prior_results"`
	ForceExecute           bool    `json:"force_execute"`
}

// ReiterateUpdate is F01's update. A nil field writes nothing: on an empty
// question or an LLM failure F01 leaves Question and CompletedOutputs as
// they are.
type ReiterateUpdate struct {
	Question               *string
	UserMessage            *string
	MainGoal               *string
	Reasoning              *string
	ReferencesPriorResults *bool
	CompletedOutputs       *map[int]Slots
	Errors                 *[]string
}

// PlanUpdate is the planner's update.
type PlanUpdate struct {
	Round int
	Task  Task
}

// The workers' updates. Each writes its sub-goal's slots into
// CompletedOutputs (the whole map, its entry added: the field has no
// reducer, so that nothing of an earlier turn's sub-goals carries over in a
// thread) and the state fields it owns; a nil *T field writes nothing.

// ParseUpdate is parse_user_query's update.
type ParseUpdate struct {
	CompletedOutputs map[int]Slots
	Response         *string // set when the pasted query cannot be run
}

// BuildUpdate is build_query's update.
type BuildUpdate struct {
	CompletedOutputs map[int]Slots
	SearchIntent     *SearchIntent // nil when the model failed
	Errors           *[]string
	Warnings         *[]string
}

// ExecuteUpdate is execute_query's update.
type ExecuteUpdate struct {
	CompletedOutputs map[int]Slots
	ESQuery          map[string]any
	Page             *Page   // nil when the search failed
	Response         *string // set when the search failed or went past the end
	Errors           *[]string
	Warnings         *[]string
}

// ReplyUpdate is the update of summarize and clarify: the turn's response.
type ReplyUpdate struct {
	CompletedOutputs map[int]Slots
	Response         string
	Errors           *[]string
}

// RecordUpdate is record_turn's update: the turn's summary, appended to
// the conversation history.
type RecordUpdate struct {
	ConversationHistory TurnSummary
}
