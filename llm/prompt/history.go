package prompt

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weftlang/weft/flow"
)

// A history value is a List of entries, oldest first. Each entry is one of:
//
//   - a turn summary, as seed 003's TurnSummary: an Object with the user's
//     words under "question" (or "human", "user", "input") and the reply
//     under "response" (or "answer", "ai", "assistant", "output"), and
//     optionally "key_artifacts", a List of Objects whose "intent" fields
//     are listed after the turn as "[Prior queries: ...]";
//   - a chat message: an Object with "role" ("user"/"human",
//     "assistant"/"ai", "system", "tool") and "content"; a turn starts at
//     each user message;
//   - a String, written as is, one turn.
//
// It renders as
//
//	Human: <question>
//	AI: <response>
//	[Prior queries: <intent>, <intent>]

// humanKeys names the user's side of a turn summary, in order of
// preference.
func humanKeys() []string { return []string{"question", "human", "user", "input"} }

// aiKeys names the model's side of a turn summary, in order of preference.
func aiKeys() []string { return []string{"response", "answer", "ai", "assistant", "output"} }

// renderHistory writes the last turns of a history value (all when turns
// is 0).
func renderHistory(b *strings.Builder, v flow.Value, turns int) error {
	if v.IsNull() {
		return nil
	}
	if v.Kind() != flow.KindList {
		return fmt.Errorf("history must be a List of turns, got %s", v.Kind())
	}
	var all [][]string // the lines of each turn
	for i, e := range v.List() {
		lines, newTurn, err := entryLines(e)
		if err != nil {
			return fmt.Errorf("history[%d]: %w", i, err)
		}
		if newTurn || len(all) == 0 {
			all = append(all, lines)
		} else {
			all[len(all)-1] = append(all[len(all)-1], lines...)
		}
	}
	if turns > 0 && len(all) > turns {
		all = all[len(all)-turns:]
	}
	first := true
	for _, t := range all {
		for _, l := range t {
			if !first {
				b.WriteByte('\n')
			}
			first = false
			b.WriteString(l)
		}
	}
	return nil
}

// entryLines renders one history entry; newTurn says whether it starts a
// turn (a summary, a string, a user message) or continues the last one.
func entryLines(e flow.Value) (lines []string, newTurn bool, err error) {
	switch e.Kind() {
	case flow.KindString:
		return []string{e.Str()}, true, nil
	case flow.KindObject:
	default:
		return nil, false, fmt.Errorf("want an Object or a String, got %s", e.Kind())
	}
	m := e.Object()
	if role, ok := m["role"]; ok {
		content := text(m["content"])
		switch strings.ToLower(role.Str()) {
		case "user", "human":
			return []string{"Human: " + content}, true, nil
		case "assistant", "ai":
			return []string{"AI: " + content}, false, nil
		case "system":
			return []string{"System: " + content}, false, nil
		case "tool":
			return []string{"Tool: " + content}, false, nil
		}
		return nil, false, fmt.Errorf("unknown role %s", role)
	}
	q, hasQ := first(m, humanKeys())
	a, hasA := first(m, aiKeys())
	if !hasQ && !hasA {
		return nil, false, fmt.Errorf("a turn needs %q or %q (or a \"role\"), got keys %s", "question", "response", keys(m))
	}
	if hasQ {
		lines = append(lines, "Human: "+text(q))
	}
	if hasA {
		lines = append(lines, "AI: "+text(a))
	}
	if intents := artifactIntents(m["key_artifacts"]); len(intents) > 0 {
		lines = append(lines, "[Prior queries: "+strings.Join(intents, ", ")+"]")
	}
	return lines, true, nil
}

// first returns the value of the first of names that m has.
func first(m map[string]flow.Value, names []string) (flow.Value, bool) {
	for _, n := range names {
		if v, ok := m[n]; ok {
			return v, true
		}
	}
	return flow.Null, false
}

// artifactIntents returns the "intent" of each key artifact that has one.
func artifactIntents(v flow.Value) []string {
	var out []string
	for _, a := range v.List() {
		if in := a.Object()["intent"]; in.Kind() == flow.KindString && in.Str() != "" {
			out = append(out, in.Str())
		}
	}
	return out
}

// text renders a value inside a history line.
func text(v flow.Value) string {
	var b strings.Builder
	if err := renderValue(&b, v); err != nil {
		return v.String()
	}
	return b.String()
}

// keys lists the keys of m, sorted, for messages.
func keys(m map[string]flow.Value) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}
