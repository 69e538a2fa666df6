package shipments_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/llm/llmtest"
)

// artifact is an es_query key artifact.
func artifact(intent string, query map[string]any, next, size, total int) shipments.KeyArtifact {
	return shipments.KeyArtifact{Type: "es_query", Intent: intent, Slots: shipments.Slots{
		"query": query, "next_offset": next, "page_size": size, "total": total,
	}}
}

var maerskTerm = map[string]any{"query": map[string]any{"term": map[string]any{"shipper_name": "MAERSK"}}}

// keys returns the sorted keys of slots.
func keys(s shipments.Slots) []string { return slices.Sorted(maps.Keys(s)) }

// The seed's Behavior Examples, one by one: the main goal replaces the
// question, and completed_outputs[0] holds exactly the slots the seed
// lists.
func TestF01BehaviorExamples(t *testing.T) {
	prior := []shipments.TurnSummary{{
		Question: "Show me Maersk shipments", Response: "Found 57 shipments; showing 1-20.",
		KeyArtifacts: []shipments.KeyArtifact{artifact("Find shipments from shipper Maersk", maerskTerm, 20, 20, 57)},
	}}
	cases := []struct {
		name    string
		ask     string
		history []shipments.TurnSummary
		reply   f01
		want    map[string]any
	}{
		{"simple query", "Show me Maersk shipments to LA", nil,
			f01{goal: "Find all shipments from shipper 'Maersk' to destination 'Los Angeles'"}, map[string]any{}},
		{"multi-intent query", "what's a shipment and find me one from yesterday", nil,
			f01{goal: "(1) Explain what a shipment is (2) Find shipments that arrived yesterday"}, map[string]any{}},
		{"prior result reference", "show me more", prior,
			f01{goal: "Show next page of the previous search results", prior: true},
			map[string]any{"prior_es_query": maerskTerm, "prior_next_offset": 20, "prior_page_size": 20}},
		{"user-pasted query", `run this: {"query": {"match_all": {}}}`, nil,
			f01{goal: "Execute the provided Elasticsearch query", query: `{"query": {"match_all": {}}}`},
			map[string]any{"user_es_query": `{"query": {"match_all": {}}}`}},
		{"force execute", "just run it, don't ask me anything", nil,
			f01{goal: "just run it, don't ask me anything", force: true}, map[string]any{"force_execute": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, &script{
				f01:     map[string]llmtest.Reply{tc.ask: tc.reply.reply()},
				intents: map[string]llmtest.Reply{tc.reply.goal: intent(map[string]any{"carrier": "Maersk"})},
			}, nil, nil)
			out, _ := e.run(t, shipments.State{Question: tc.ask, ConversationHistory: tc.history})
			if out.Question != tc.reply.goal || out.UserMessage != tc.ask {
				t.Errorf("question %q, user message %q", out.Question, out.UserMessage)
			}
			got := out.CompletedOutputs[0]
			if got == nil {
				t.Fatalf("completed_outputs has no 0: %v", out.CompletedOutputs)
			}
			if !slices.Equal(keys(got), slices.Sorted(maps.Keys(tc.want))) {
				t.Errorf("slots %v, want %v", keys(got), slices.Sorted(maps.Keys(tc.want)))
			}
			jsonEq(t, "completed_outputs[0]", got, tc.want)
		})
	}
}

// The prior slots need both references_prior_results and an artifact.
func TestF01PriorNeedsReferenceAndArtifact(t *testing.T) {
	withArtifact := []shipments.TurnSummary{{Question: "q", Response: "r",
		KeyArtifacts: []shipments.KeyArtifact{artifact("i", maerskTerm, 40, 20, 57)}}}
	noArtifact := []shipments.TurnSummary{{Question: "q", Response: "r"}}
	cases := []struct {
		name    string
		prior   bool
		history []shipments.TurnSummary
		want    []string
	}{
		{"reference, artifact", true, withArtifact, []string{"prior_es_query", "prior_next_offset", "prior_page_size"}},
		{"reference, no artifact", true, noArtifact, nil},
		{"no reference, artifact", false, withArtifact, nil},
	}
	for _, tc := range cases {
		got := shipments.ContextSlots(shipments.ReiterateResult{MainGoal: "g", ReferencesPriorResults: tc.prior}, tc.history)
		if !slices.Equal(keys(got), tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, keys(got), tc.want)
		}
	}
	// An artifact without a page: only the query.
	partial := []shipments.TurnSummary{{KeyArtifacts: []shipments.KeyArtifact{{Type: "es_query", Slots: shipments.Slots{"query": maerskTerm}}}}}
	got := shipments.ContextSlots(shipments.ReiterateResult{ReferencesPriorResults: true}, partial)
	if !slices.Equal(keys(got), []string{"prior_es_query"}) {
		t.Errorf("partial artifact: %v", got)
	}
	// An empty user_query_text is no query.
	empty := " "
	if got := shipments.ContextSlots(shipments.ReiterateResult{UserQueryText: &empty}, nil); len(got) != 0 {
		t.Errorf("blank user_query_text: %v", got)
	}
}

// _find_prior_agent_query scans most recent first, and the whole history
// (not only the 5 turns shown to the model).
func TestFindPriorAgentQuery(t *testing.T) {
	q := func(n int) map[string]any {
		return map[string]any{"query": map[string]any{"term": map[string]any{"n": n}}}
	}
	h := []shipments.TurnSummary{
		{Question: "1", KeyArtifacts: []shipments.KeyArtifact{artifact("one", q(1), 20, 20, 100)}},
		{Question: "2"},
		{Question: "3", KeyArtifacts: []shipments.KeyArtifact{
			{Type: "explanation", Intent: "explain", Slots: shipments.Slots{"query": q(99)}},
			artifact("three-a", q(3), 40, 20, 100),
			artifact("three-b", q(4), 60, 20, 100),
		}},
		{Question: "4", KeyArtifacts: []shipments.KeyArtifact{{Type: "note", Intent: "n"}}},
	}
	got, ok := shipments.FindPriorAgentQuery(h)
	if !ok {
		t.Fatal("not found")
	}
	jsonEq(t, "prior", got, map[string]any{"query": q(3), "next_offset": 40, "page_size": 20, "total": 100})

	// Seven turns later, the artifact is beyond the five shown, still found.
	long := []shipments.TurnSummary{h[0]}
	for i := range 7 {
		long = append(long, shipments.TurnSummary{Question: fmt.Sprint("later ", i)})
	}
	if got, ok := shipments.FindPriorAgentQuery(long); !ok || got["next_offset"] != 20 {
		t.Errorf("old artifact: %v %v", got, ok)
	}
	if _, ok := shipments.FindPriorAgentQuery(h[1:2]); ok {
		t.Error("found a query in a turn without artifacts")
	}
}

// history7 is seven turns, some with artifacts.
func history7() []shipments.TurnSummary {
	var h []shipments.TurnSummary
	for i := 1; i <= 7; i++ {
		t := shipments.TurnSummary{Question: fmt.Sprintf("question %d", i), Response: fmt.Sprintf("response %d", i)}
		if i%2 == 1 {
			t.KeyArtifacts = []shipments.KeyArtifact{artifact(fmt.Sprintf("intent %d", i), maerskTerm, 20*i, 20, 500)}
		}
		if i == 5 {
			t.KeyArtifacts = append(t.KeyArtifacts, shipments.KeyArtifact{Type: "note", Intent: "second intent"})
		}
		h = append(h, t)
	}
	return h
}

// The last 5 turns, in the seed's format.
const history7Text = `Human: question 3
AI: response 3
[Prior queries: intent 3]
Human: question 4
AI: response 4
Human: question 5
AI: response 5
[Prior queries: intent 5, second intent]
Human: question 6
AI: response 6
Human: question 7
AI: response 7
[Prior queries: intent 7]`

func TestFormatHistory(t *testing.T) {
	got, err := shipments.FormatHistory(history7())
	if err != nil || got != history7Text {
		t.Errorf("got %q (%v)\nwant %q", got, err, history7Text)
	}
	if got, err := shipments.FormatHistory(nil); got != "" || err != nil {
		t.Errorf("no history: %q %v", got, err)
	}
	one := []shipments.TurnSummary{{Question: "Show me Maersk shipments to LA", Response: "Found 29.", KeyArtifacts: []shipments.KeyArtifact{}}}
	if got, _ := shipments.FormatHistory(one); got != "Human: Show me Maersk shipments to LA\nAI: Found 29." {
		t.Errorf("one turn: %q", got)
	}
}

// The F01 request: the seed's schema, its system prompt, and the last 5
// turns with the message.
func TestF01Request(t *testing.T) {
	const ask = "and the ones to Hamburg?"
	e := newEnv(t, &script{f01: map[string]llmtest.Reply{ask: f01{goal: "g"}.reply()}}, nil, nil)
	e.run(t, shipments.State{Question: ask, ConversationHistory: history7()})
	req := e.request(t, 0)
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" {
		t.Fatalf("messages %+v", req.Messages)
	}
	if want := "Conversation so far:\n" + history7Text + "\n\nUser message: " + ask; req.Messages[1].Content != want {
		t.Errorf("user message:\n%s\nwant:\n%s", req.Messages[1].Content, want)
	}
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(schema.Required, []string{"force_execute", "main_goal", "reasoning", "references_prior_results", "user_query_text"}) {
		t.Errorf("required %v", schema.Required)
	}
	if string(schema.Properties["user_query_text"]) != "{}" || string(schema.Properties["force_execute"]) != `{"type":"boolean"}` {
		t.Errorf("properties %s", req.Schema)
	}
	// The whole request, as the model receives it.
	golden := filepath.Join("testdata", "f01_request.golden.json")
	got, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err != nil || string(want) != string(got) {
		t.Errorf("the F01 request differs from %s (%v); run go test -run TestF01Request -update and review:\n%s", golden, err, got)
	}
	// Without history.
	e = newEnv(t, &script{f01: map[string]llmtest.Reply{ask: f01{goal: "g"}.reply()}}, nil, nil)
	e.run(t, shipments.State{Question: ask})
	if got := e.request(t, 0).Messages[1].Content; got != "Conversation so far:\n(no earlier turns)\n\nUser message: "+ask {
		t.Errorf("user message %q", got)
	}
}

// An empty question: F01 changes nothing, logs a warning, calls nothing.
func TestF01EmptyQuestion(t *testing.T) {
	e := newEnv(t, &script{}, nil, nil)
	out, _ := e.run(t, shipments.State{Question: ""})
	if out.Question != "" || out.UserMessage != "" || out.MainGoal != "" {
		t.Errorf("question %q, user message %q, goal %q", out.Question, out.UserMessage, out.MainGoal)
	}
	if _, ok := out.CompletedOutputs[0]; ok {
		t.Errorf("completed_outputs[0] written: %v", out.CompletedOutputs)
	}
	if e.calls() != 0 || !strings.Contains(e.logs.String(), `level=WARN msg="F01: the question is empty; state unchanged"`) {
		t.Errorf("%d calls; logs:\n%s", e.calls(), e.logs)
	}
	if len(out.Errors) != 0 {
		t.Errorf("errors %v", out.Errors)
	}
}

// An empty main goal: the original question stays; the context is still
// written.
func TestF01EmptyMainGoal(t *testing.T) {
	const ask = "just run it"
	e := newEnv(t, &script{
		f01:     map[string]llmtest.Reply{ask: f01{goal: "  ", force: true}.reply()},
		intents: map[string]llmtest.Reply{ask: intent(nil)},
	}, nil, nil)
	out, path := e.run(t, shipments.State{Question: ask})
	checkPath(t, path, pathSearch)
	if out.Question != ask || out.MainGoal != ask {
		t.Errorf("question %q, goal %q", out.Question, out.MainGoal)
	}
	jsonEq(t, "completed_outputs[0]", out.CompletedOutputs[0], map[string]any{"force_execute": true})
	if !strings.Contains(e.logs.String(), "F01: empty main_goal; keeping the question") {
		t.Errorf("logs:\n%s", e.logs)
	}
}

// The model fails: the question is preserved, nothing of F01 is written,
// the error is logged and recorded.
func TestF01LLMFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		msg   string
	}{
		{"HTTP 500", llmtest.Status(500, "model crashed"), "model crashed"},
		{"schema never matched", llmtest.JSON(map[string]any{"main_goal": 7}), "the reply did not match the schema after 3 attempt(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil, []llmtest.Reply{tc.reply, tc.reply, tc.reply}, func(d *shipments.Deps) {})
			e.server.Repeat(llmtest.Status(500, "down"))
			out, _ := e.run(t, shipments.State{Question: askMaersk})
			if out.Question != askMaersk || out.MainGoal != "" || out.UserMessage != "" {
				t.Errorf("question %q, goal %q", out.Question, out.MainGoal)
			}
			if _, ok := out.CompletedOutputs[0]; ok {
				t.Errorf("completed_outputs[0] written: %v", out.CompletedOutputs)
			}
			if len(out.Errors) == 0 || !strings.HasPrefix(out.Errors[0], "reiterate_intention: ") || !strings.Contains(out.Errors[0], tc.msg) {
				t.Errorf("errors %v", out.Errors)
			}
			if !strings.Contains(e.logs.String(), `level=ERROR msg="node failed; falling back" node_id=F01`) {
				t.Errorf("logs:\n%s", e.logs)
			}
			// The turn is recorded under the original question.
			if out.ConversationHistory[0].Question != askMaersk {
				t.Errorf("turn %+v", out.ConversationHistory[0])
			}
		})
	}
}

// user_query_text is "str | None": an object the model pasted as JSON
// becomes its text; a number is ignored with a warning.
func TestF01UserQueryTextShapes(t *testing.T) {
	const ask = "run {\"query\": {\"match_all\": {}}}"
	e := newEnv(t, &script{f01: map[string]llmtest.Reply{
		ask: f01{goal: "Execute the provided Elasticsearch query", query: map[string]any{"query": map[string]any{"match_all": map[string]any{}}}}.reply(),
	}}, nil, nil)
	out, path := e.run(t, shipments.State{Question: ask})
	checkPath(t, path, pathPasted)
	if got, _ := out.CompletedOutputs[0].String("user_es_query"); got != `{"query":{"match_all":{}}}` {
		t.Errorf("user_es_query %q", got)
	}
	e = newEnv(t, &script{
		f01:     map[string]llmtest.Reply{ask: f01{goal: "g", query: 42}.reply()},
		intents: map[string]llmtest.Reply{"g": intent(map[string]any{"status": []string{"delayed"}})},
	}, nil, nil)
	out, _ = e.run(t, shipments.State{Question: ask})
	if len(out.CompletedOutputs[0]) != 0 || !strings.Contains(e.logs.String(), "user_query_text is Int, not a string or null: ignored") {
		t.Errorf("completed_outputs[0] %v; logs:\n%s", out.CompletedOutputs[0], e.logs)
	}
}

// F01 runs once per turn; the planner sees its flags in round 1 only.
func TestF01OncePerTurnAndFlagsInRoundOne(t *testing.T) {
	e := newEnv(t, maerskScript(), nil, nil)
	_, path := e.run(t, shipments.State{Question: askMaersk})
	if n := strings.Count(strings.Join(path, " "), "reiterate_intention"); n != 1 {
		t.Errorf("F01 ran %d times", n)
	}
	completed := map[int]shipments.Slots{0: {"user_es_query": "{}", "prior_es_query": maerskTerm, "force_execute": true}}
	if f := shipments.ContextFlags(completed, 1); !f.HasPriorESQuery || !f.HasUserESQuery || !f.ForceExecute {
		t.Errorf("round 1: %v", f)
	}
	if f := shipments.ContextFlags(completed, 2); f != (shipments.F01Flags{}) {
		t.Errorf("round 2: %v", f)
	}
	if s := shipments.ContextFlags(completed, 1).String(); s != "has_prior_es_query=true has_user_es_query=true force_execute=true" {
		t.Errorf("flags %q", s)
	}
}
