package adaptiverag

import (
	"strings"
)

// FormatHistory renders the last turns turns of msgs (a turn is a human
// message and the replies after it) as the seed's _format_chat_history
// does, one "Human: ..." or "AI: ..." line per message, oldest first. A
// last human message equal to question is the current turn, not history,
// and is left out. It returns "" when there is no earlier turn or turns
// is not positive.
func FormatHistory(msgs []Message, question string, turns int) string {
	if n := len(msgs); n > 0 && msgs[n-1].Role == RoleHuman && msgs[n-1].Content == question {
		msgs = msgs[:n-1]
	}
	if turns <= 0 || len(msgs) == 0 {
		return ""
	}
	// Walk back to the start of the turns-th last turn.
	start, seen := len(msgs), 0
	for i := len(msgs) - 1; i >= 0; i-- {
		start = i
		if msgs[i].Role == RoleHuman {
			seen++
			if seen == turns {
				break
			}
		}
	}
	var b strings.Builder
	for _, m := range msgs[start:] {
		who := "AI"
		if m.Role == RoleHuman {
			who = "Human"
		}
		b.WriteString(who)
		b.WriteString(": ")
		b.WriteString(strings.TrimSpace(m.Content))
		b.WriteByte('\n')
	}
	return b.String()
}
