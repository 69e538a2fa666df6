package adaptiverag

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
)

// Strategy is how an answer is generated for an intent: the seed's
// get_generation_strategy().
type Strategy struct {
	// Name is "concise", "step_by_step" or "broad".
	Name string
	// Effort is the reasoning effort sent with the request (providers
	// without such a knob ignore it).
	Effort llm.Effort
	// Instructions are the answer's system-prompt instructions.
	Instructions string
}

// StrategyFor returns the strategy of intent: SimpleQA is concise with
// low effort, ComplexReasoning step by step with high effort, Exploratory
// broad with medium effort. Any other intent gets SimpleQA's.
func StrategyFor(intent Intent) Strategy {
	switch intent {
	case ComplexReasoning:
		return Strategy{Name: "step_by_step", Effort: llm.EffortHigh, Instructions: "Reason step by step: first list the facts from the documents that bear on the question, each with its citation [n]; then combine them (compute, compare, explain); then state the conclusion in one or two sentences."}
	case Exploratory:
		return Strategy{Name: "broad", Effort: llm.EffortMedium, Instructions: "Give a broad overview: the main themes across the documents as short bullet points, each with its citations [n], then one sentence on what stands out."}
	}
	return Strategy{Name: "concise", Effort: llm.EffortLow, Instructions: "Answer directly in one to three sentences, citing the documents you use as [n]."}
}

// The schemas of the structured-output calls.
func intentFields() []*flow.Field {
	values := make([]string, 0, 4)
	for _, i := range Intents() {
		values = append(values, string(i))
	}
	return []*flow.Field{
		{Name: "reasoning", Type: flow.TString},
		{Name: "intent", Type: flow.EnumOf(values...)},
		{Name: "domain_relevance", Type: flow.TFloat},
	}
}

func queryFields() []*flow.Field {
	return []*flow.Field{
		{Name: "query_quality", Type: flow.TFloat},
		{Name: "queries", Type: flow.ListOf(flow.TString)},
		{Name: "company", Type: flow.TString},
		{Name: "year", Type: flow.TInt},
	}
}

// withHistory prefixes body with the conversation so far, if any.
func withHistory(history, body string) string {
	if history == "" {
		return body
	}
	return "Conversation so far:\n" + history + "\n" + body
}

func (s *settings) intentPrompt(question, history string) (system, user string) {
	system = `You classify the questions sent to an assistant that answers questions about ` + s.Domain + ` from a collection of documents.
Reply with one JSON object with these fields:
- "reasoning": one short sentence on what the question asks.
- "intent": one of
  "SIMPLE_QA" (one fact, answered by one passage: "What was Acme's revenue in 2023?"),
  "COMPLEX_REASONING" (several facts combined, compared, computed or explained: "Why did the margin fall while sales grew?"),
  "EXPLORATORY" (an open question asking for an overview or themes: "What risks does Acme report?"),
  "OUT_OF_DOMAIN" (not about ` + s.Domain + `).
- "domain_relevance": a number from 0 (nothing to do with ` + s.Domain + `) to 1 (squarely about it).
A follow-up question ("and in 2022?") takes its subject from the conversation.`
	return system, withHistory(history, "Question: "+question)
}

func (s *settings) queryPrompt(question, history string) (system, user string) {
	system = `You prepare questions about ` + s.Domain + ` for a keyword search over the documents.
Reply with one JSON object with these fields:
- "query_quality": a number from 0 to 1: how clearly the question, read with the conversation, says what to look for. Specific (an entity, a metric, a period): 0.7 to 1. Vague ("numbers?", "tell me more" with nothing to refer to): below 0.3.
- "queries": up to ` + strconv.Itoa(s.MaxQueries) + ` alternative search queries: rephrasings with synonyms, and the standalone form of a follow-up question. [] when there is nothing to add.
- "company": the company the question is about, or "" if it names none.
- "year": the fiscal year the question is about, or 0 if it names none.`
	return system, withHistory(history, "Question: "+question)
}

func (s *settings) answerPrompt(st Strategy, question, history string, docs []Passage) (system, user string) {
	system = `You answer questions about ` + s.Domain + ` using only the numbered documents given. If they do not hold the answer, say so plainly; do not guess.
` + st.Instructions
	var b strings.Builder
	b.WriteString("Documents:\n")
	for i, d := range docs {
		fmt.Fprintf(&b, "[%d] %s%s\n", i+1, docLabel(d), strings.TrimSpace(d.Text))
	}
	b.WriteString("\nQuestion: ")
	b.WriteString(question)
	return system, withHistory(history, b.String())
}

func (s *settings) clarifyPrompt(question, history string) (system, user string) {
	system = `You help users ask questions about ` + s.Domain + `. The user's question is too vague to search for. Ask one short clarifying question (which company, which metric, which period) and nothing else.`
	return system, withHistory(history, "Question: "+question)
}

// docLabel is "(source, company, year) " for a passage's known metadata.
func docLabel(d Passage) string {
	var parts []string
	if d.Source != "" {
		parts = append(parts, d.Source)
	}
	if d.Company != "" {
		parts = append(parts, d.Company)
	}
	if d.Year != 0 {
		parts = append(parts, strconv.Itoa(d.Year))
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + ") "
}
