package shipments

import (
	"fmt"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/prompt"
)

// HistoryTurns is how many earlier turns F01 (and build_query) show the
// model: the seed's _convert_history_to_messages keeps the last 5.
const HistoryTurns = prompt.DefaultHistoryTurns

// historyTemplate renders a history the way weft's prompt package renders
// {{history}}: the last HistoryTurns turns.
const historyTemplate = "{{history}}"

// FormatHistory is the seed's _convert_history_to_messages: the last
// HistoryTurns turns of history, oldest first, each as
//
//	Human: <question>
//	AI: <response>
//	[Prior queries: <intent>, <intent>]
//
// the last line only when the turn has key artifacts with an intent. The
// lines are joined by newlines, with no newline at the end; no history is
// "". It renders through weft's llm/prompt {{history}}, so a .wf workflow
// with the same history shows the model the same text.
func FormatHistory(history []TurnSummary) (string, error) {
	if len(history) == 0 {
		return "", nil
	}
	t, err := prompt.Parse(historyTemplate)
	if err != nil {
		return "", err
	}
	return t.Render(map[string]flow.Value{prompt.HistoryName: HistoryValue(history)})
}

// HistoryValue converts history to the flow value llm/prompt reads as a
// history: a List of TurnSummary objects.
func HistoryValue(history []TurnSummary) flow.Value {
	turns := make([]flow.Value, len(history))
	for i, t := range history {
		arts := make([]flow.Value, len(t.KeyArtifacts))
		for j, a := range t.KeyArtifacts {
			arts[j] = flow.ObjectValue(map[string]flow.Value{
				"type":   flow.StringValue(a.Type),
				"intent": flow.StringValue(a.Intent),
			})
		}
		turns[i] = flow.ObjectValue(map[string]flow.Value{
			"question":      flow.StringValue(t.Question),
			"response":      flow.StringValue(t.Response),
			"key_artifacts": flow.ListValue(arts...),
		})
	}
	return flow.ListValue(turns...)
}

// FindPriorAgentQuery is the seed's _find_prior_agent_query: it scans
// history most recent turn first, each turn's artifacts in order, and
// returns the slots of the first artifact of type "es_query". ok is false
// when there is none.
func FindPriorAgentQuery(history []TurnSummary) (slots Slots, ok bool) {
	for i := len(history) - 1; i >= 0; i-- {
		for _, a := range history[i].KeyArtifacts {
			if a.Type == ArtifactESQuery {
				return a.Slots, true
			}
		}
	}
	return nil, false
}

// ContextSlots builds F01's context, CompletedOutputs[0], from its result
// and the history, as sparse as the seed's: prior_es_query,
// prior_next_offset and prior_page_size only when the user references
// prior results and an es_query artifact is found (each only when the
// artifact has it); user_es_query when the user pasted or referenced a
// query; force_execute only when true. Nothing to say is an empty map.
func ContextSlots(r ReiterateResult, history []TurnSummary) Slots {
	out := Slots{}
	if r.ReferencesPriorResults {
		if prior, ok := FindPriorAgentQuery(history); ok {
			if q, ok := prior[SlotQuery]; ok && q != nil {
				out[SlotPriorESQuery] = cloneJSON(q)
			}
			if n, ok := prior.Int(SlotNextOffset); ok {
				out[SlotPriorNextOffset] = n
			}
			if n, ok := prior.Int(SlotPageSize); ok {
				out[SlotPriorPageSize] = n
			}
		}
	}
	if r.UserQueryText != nil && strings.TrimSpace(*r.UserQueryText) != "" {
		out[SlotUserESQuery] = *r.UserQueryText
	}
	if r.ForceExecute {
		out[SlotForceExecute] = true
	}
	return out
}

// F01Flags are the presence flags the planner reads from F01's context in
// its first round: the seed's _format_f01_context.
type F01Flags struct {
	HasPriorESQuery bool
	HasUserESQuery  bool
	ForceExecute    bool
}

// ContextFlags returns the flags of F01's context in round 1 of the
// planner, and no flags in later rounds (the seed injects them in round 1
// only).
func ContextFlags(completed map[int]Slots, round int) F01Flags {
	if round != 1 {
		return F01Flags{}
	}
	c := completed[ContextSubGoal]
	_, hasUser := c.String(SlotUserESQuery)
	return F01Flags{
		HasPriorESQuery: c[SlotPriorESQuery] != nil,
		HasUserESQuery:  hasUser,
		ForceExecute:    c.Bool(SlotForceExecute),
	}
}

// String writes the flags as the seed's F02 prompt shows them.
func (f F01Flags) String() string {
	return fmt.Sprintf("has_prior_es_query=%t has_user_es_query=%t force_execute=%t", f.HasPriorESQuery, f.HasUserESQuery, f.ForceExecute)
}
