package shipments

import (
	"strings"
)

// The reasons a Task gives for a clarification or for ending the turn.
const (
	ReasonEmptyQuestion     = "empty_question"      // the message was empty
	ReasonNothingToContinue = "nothing_to_continue" // "show me more" with no earlier query
	ReasonNoCriteria        = "no_criteria"         // the request names nothing to search on
	ReasonExtractionFailed  = "extraction_failed"   // the model could not extract a search
	ReasonQueryInvalid      = "query_invalid"       // the pasted query cannot be run
	ReasonSearchFailed      = "search_failed"       // the backend failed or rejected the query
	ReasonDone              = "done"                // the turn has its response
	ReasonMaxRounds         = "max_rounds"          // Deps.MaxRounds reached
)

// Plan is the deterministic planner, F02: the task of the next round from
// the state after the last one. Round 1 reads F01's context through its
// presence flags (ContextFlags):
//
//   - an empty question: clarify;
//   - has_user_es_query: parse_user_query (then execute_query);
//   - has_prior_es_query: execute_query on the prior query at
//     prior_next_offset with prior_page_size ("show me more");
//   - references to prior results with no prior query: clarify, saying
//     there is nothing to continue (unless force_execute: then build);
//   - otherwise build_query, with force_execute passed on (no
//     clarification).
//
// Later rounds read the slots of the last worker's sub-goal: a query
// (parsed or built) is executed; a built intent without criteria is
// clarified; an executed page is summarized; a response ends the turn
// with record_turn, as does a failure that already wrote its response.
// Each worker's sub-goal id is its round.
func Plan(s State, maxRounds int) Task {
	round := s.Round + 1
	if round == 1 {
		if strings.TrimSpace(s.Question) == "" {
			return Task{Worker: NodeClarify, SubGoal: round, Reason: ReasonEmptyQuestion}
		}
		f := ContextFlags(s.CompletedOutputs, round)
		switch {
		case f.HasUserESQuery:
			return Task{Worker: NodeParseQuery, SubGoal: round, Input: ContextSubGoal}
		case f.HasPriorESQuery:
			return Task{Worker: NodeExecute, SubGoal: round, Input: ContextSubGoal}
		case s.ReferencesPriorResults && !f.ForceExecute:
			return Task{Worker: NodeClarify, SubGoal: round, Reason: ReasonNothingToContinue}
		}
		return Task{Worker: NodeBuildQuery, SubGoal: round, Input: ContextSubGoal, ForceExecute: f.ForceExecute}
	}
	if round > maxRounds {
		return Task{Worker: NodeRecordTurn, SubGoal: round, Reason: ReasonMaxRounds}
	}
	last := s.Task
	out := s.CompletedOutputs[last.SubGoal]
	switch last.Worker {
	case NodeParseQuery, NodeBuildQuery:
		switch {
		case out.Has(SlotQuery):
			return Task{Worker: NodeExecute, SubGoal: round, Input: last.SubGoal}
		case out.Has(SlotClarify):
			return Task{Worker: NodeClarify, SubGoal: round, Input: last.SubGoal, Reason: ReasonNoCriteria}
		case last.Worker == NodeBuildQuery:
			return Task{Worker: NodeClarify, SubGoal: round, Input: last.SubGoal, Reason: ReasonExtractionFailed}
		}
		return Task{Worker: NodeRecordTurn, SubGoal: round, Reason: ReasonQueryInvalid}
	case NodeExecute:
		if out.Has(SlotError) || !out.Has(SlotTotal) {
			return Task{Worker: NodeRecordTurn, SubGoal: round, Reason: ReasonSearchFailed}
		}
		return Task{Worker: NodeSummarize, SubGoal: round, Input: last.SubGoal}
	}
	return Task{Worker: NodeRecordTurn, SubGoal: round, Reason: ReasonDone}
}
