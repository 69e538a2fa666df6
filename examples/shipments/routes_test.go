package shipments_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/search"
)

const (
	askMaersk  = "Show me Maersk shipments to LA"
	goalMaersk = "Find shipments carried by Maersk to Los Angeles"
	askMore    = "show me more"
	goalMore   = "Show next page of the previous search results"
)

// maerskScript scripts the simple query and its "show me more".
func maerskScript() *script {
	return &script{
		f01: map[string]llmtest.Reply{
			askMaersk: f01{goal: goalMaersk, reasoning: "Maersk is a carrier; LA is Los Angeles."}.reply(),
			askMore:   f01{goal: goalMore, reasoning: "Wants the next page.", prior: true}.reply(),
		},
		intents: map[string]llmtest.Reply{
			goalMaersk: intent(map[string]any{"carrier": "Maersk", "destination_port": "Los Angeles"}),
		},
	}
}

// The simple query: F01, a built query, one page, a summary with the
// counts, and the turn recorded with its es_query artifact.
func TestRouteSimpleQuery(t *testing.T) {
	e := newEnv(t, maerskScript(), nil, nil)
	out, path := e.run(t, shipments.State{Question: askMaersk})
	checkPath(t, path, pathSearch)
	want := expected(e.l.ships, maerskToLA)
	if len(want) != count(e.l.ships, maerskToLA) || len(want) <= 20 {
		t.Fatalf("the dataset has %d Maersk shipments to Los Angeles; the test wants more than a page", len(want))
	}
	if out.Page == nil || out.Page.Total != int64(len(want)) {
		t.Fatalf("page %+v, want a total of %d", out.Page, len(want))
	}
	if got := ids(out.Page); !slices.Equal(got, want[:20]) {
		t.Errorf("page 1 %v\nwant %v", got, want[:20])
	}
	head := fmt.Sprintf("Found %d shipments; showing 1-20.", len(want))
	if !strings.HasPrefix(out.Response, head) || !strings.Contains(out.Response, scriptedSummary) ||
		!strings.HasSuffix(out.Response, `Say "show me more" for the next 20.`) {
		t.Errorf("response %q", out.Response)
	}
	if out.Question != goalMaersk || out.MainGoal != goalMaersk || out.UserMessage != askMaersk {
		t.Errorf("question %q, main goal %q, user message %q", out.Question, out.MainGoal, out.UserMessage)
	}
	if n := e.calls(); n != 3 {
		t.Errorf("%d LLM calls, want 3 (F01, build_query, summarize)", n)
	}
	if len(out.Errors) != 0 || len(out.Warnings) != 0 {
		t.Errorf("errors %v, warnings %v", out.Errors, out.Warnings)
	}
	// The turn, with the artifact the next turn's F01 reads.
	if len(out.ConversationHistory) != 1 {
		t.Fatalf("history %+v", out.ConversationHistory)
	}
	turn := out.ConversationHistory[0]
	if turn.Question != askMaersk || turn.Response != out.Response || len(turn.KeyArtifacts) != 1 {
		t.Fatalf("turn %+v", turn)
	}
	a := turn.KeyArtifacts[0]
	if a.Type != "es_query" || a.Intent != goalMaersk {
		t.Errorf("artifact %+v", a)
	}
	q, _ := shipments.BuildQuery(shipments.SearchIntent{Carrier: "Maersk", DestinationPort: "Los Angeles"})
	jsonEq(t, "artifact slots", a.Slots, map[string]any{"query": q, "next_offset": 20, "page_size": 20, "total": len(want)})
	jsonEq(t, "es_query", out.ESQuery, shipments.WithPage(q, 0, 20))
	// Each node on the path logged its id and name.
	for _, line := range []string{"node_id=F01 node=reiterate_intention", "node_id=F02 node=plan", "node_id=F06 node=build_query", "node_id=F07 node=execute_query", "node_id=SUM node=summarize", "node_id=REC node=record_turn"} {
		if !strings.Contains(e.logs.String(), line) {
			t.Errorf("log lacks %q", line)
		}
	}
	if strings.Contains(e.logs.String(), "node=clarify") {
		t.Error("clarify ran")
	}
}

// "show me more" after a search: F01 finds the prior query, the planner
// sends it straight to execute_query at the next offset.
func TestRouteShowMore(t *testing.T) {
	e := newEnv(t, maerskScript(), nil, nil)
	first, _ := e.run(t, shipments.State{Question: askMaersk})
	before := e.calls()
	out, path := e.run(t, shipments.State{Question: askMore, ConversationHistory: first.ConversationHistory})
	checkPath(t, path, pathMore)
	if n := e.calls() - before; n != 2 {
		t.Errorf("%d LLM calls, want 2 (F01, summarize)", n)
	}
	want := expected(e.l.ships, maerskToLA)
	if got := ids(out.Page); !slices.Equal(got, want[20:]) {
		t.Errorf("page 2 %v\nwant %v", got, want[20:])
	}
	head := fmt.Sprintf("Found %d shipments; showing 21-%d.", len(want), len(want))
	if !strings.HasPrefix(out.Response, head) || !strings.HasSuffix(out.Response, "That is the last page.") {
		t.Errorf("response %q", out.Response)
	}
	if len(out.ConversationHistory) != 2 {
		t.Fatalf("history has %d turns", len(out.ConversationHistory))
	}
	a := out.ConversationHistory[1].KeyArtifacts[0]
	if n, _ := a.Slots.Int("next_offset"); n != 40 {
		t.Errorf("next_offset %d, want 40", n)
	}
}

// "show me more" with no earlier search: nothing to continue, no search.
func TestRouteShowMoreWithoutPriorQuery(t *testing.T) {
	e := newEnv(t, maerskScript(), nil, nil)
	out, path := e.run(t, shipments.State{Question: askMore})
	checkPath(t, path, pathNoPrior)
	if out.Response != shipments.NothingToContinueReply || out.Page != nil || e.calls() != 1 {
		t.Errorf("response %q, page %v, %d calls", out.Response, out.Page, e.calls())
	}
	if arts := out.ConversationHistory[0].KeyArtifacts; len(arts) != 0 {
		t.Errorf("artifacts %+v", arts)
	}
}

// The multi-intent example: the search part is extracted, the summary
// prompt carries the whole goal.
func TestRouteMultiIntent(t *testing.T) {
	const ask = "what's a shipment and find me one from yesterday"
	const goal = "(1) Explain what a shipment is (2) Find shipments that arrived yesterday"
	e := newEnv(t, &script{
		f01:     map[string]llmtest.Reply{ask: f01{goal: goal, reasoning: "Two requests."}.reply()},
		intents: map[string]llmtest.Reply{goal: intent(map[string]any{"arrival_from": "2025-06-29", "arrival_to": "2025-06-29"})},
		summary: "A shipment is goods moved under one bill of lading. Eight shipments arrived yesterday.",
	}, nil, nil)
	out, path := e.run(t, shipments.State{Question: ask})
	checkPath(t, path, pathSearch)
	n := count(e.l.ships, func(s dataset.Shipment) bool { return s.ArrivalDate == "2025-06-29" })
	if n == 0 {
		t.Fatal("nothing arrived on 2025-06-29")
	}
	if !strings.HasPrefix(out.Response, fmt.Sprintf("Found %d shipments; showing 1-%d.", n, n)) || !strings.Contains(out.Response, "A shipment is goods") {
		t.Errorf("response %q", out.Response)
	}
	// build_query's prompt resolves "yesterday" against the clock.
	if sys := e.request(t, 1).Messages[0].Content; !strings.Contains(sys, "Today is 2025-06-30") || !strings.Contains(sys, "yesterday was 2025-06-29") {
		t.Errorf("build_query prompt: %s", sys)
	}
	if p := e.request(t, 2).Messages[1].Content; !strings.HasPrefix(p, "Request: "+goal+"\n") {
		t.Errorf("summarize prompt: %s", p)
	}
}

// A pasted query is parsed and run as given, its size as the page size.
func TestRoutePastedQuery(t *testing.T) {
	const query = `{"query": {"term": {"status": "delayed"}}, "size": 5}`
	ask := "run this: " + query
	e := newEnv(t, &script{f01: map[string]llmtest.Reply{
		ask: f01{goal: "Execute the provided Elasticsearch query", query: query}.reply(),
	}}, nil, nil)
	out, path := e.run(t, shipments.State{Question: ask})
	checkPath(t, path, pathPasted)
	delayed := count(e.l.ships, func(s dataset.Shipment) bool { return s.Status == dataset.StatusDelayed })
	if out.Page == nil || out.Page.Total != int64(delayed) || len(out.Page.Hits) != 5 {
		t.Fatalf("page %+v, want 5 of %d", out.Page, delayed)
	}
	for _, h := range out.Page.Hits {
		if h.Status != dataset.StatusDelayed {
			t.Errorf("hit %s is %s", h.ShipmentID, h.Status)
		}
	}
	jsonEq(t, "es_query", out.ESQuery, map[string]any{"query": map[string]any{"term": map[string]any{"status": "delayed"}}, "from": 0, "size": 5})
	if !strings.HasPrefix(out.Response, fmt.Sprintf("Found %d shipments; showing 1-5.", delayed)) || !strings.HasSuffix(out.Response, `Say "show me more" for the next 5.`) {
		t.Errorf("response %q", out.Response)
	}
	if e.calls() != 2 {
		t.Errorf("%d LLM calls, want 2", e.calls())
	}
}

// Invalid JSON: a response naming the problem and its byte offset; nothing
// runs.
func TestRoutePastedQueryInvalidJSON(t *testing.T) {
	const query = `{"query": {"match_all": {}}` // one brace short: the end, byte 27
	e := newEnv(t, &script{f01: map[string]llmtest.Reply{
		"run " + query: f01{goal: "Execute the provided Elasticsearch query", query: query}.reply(),
	}}, nil, nil)
	out, path := e.run(t, shipments.State{Question: "run " + query})
	checkPath(t, path, pathBadPaste)
	if !strings.Contains(out.Response, "not valid JSON: unexpected end of JSON input at byte offset 27 (line 1, column 28)") {
		t.Errorf("response %q", out.Response)
	}
	if out.Page != nil || out.ESQuery != nil || len(out.ConversationHistory[0].KeyArtifacts) != 0 {
		t.Errorf("page %v, query %v, artifacts %v", out.Page, out.ESQuery, out.ConversationHistory[0].KeyArtifacts)
	}
	if n, _ := out.CompletedOutputs[1].Int("offset"); n != 27 {
		t.Errorf("sub-goal 1: %v", out.CompletedOutputs[1])
	}
}

// A pasted query the embedded backend does not support: the response says
// what and where.
func TestRoutePastedQueryUnsupported(t *testing.T) {
	const query = `{"query": {"fuzzy": {"carrier": "maersk"}}}`
	e := newEnv(t, &script{f01: map[string]llmtest.Reply{
		query: f01{goal: "Execute the provided Elasticsearch query", query: query}.reply(),
	}}, nil, nil)
	out, path := e.run(t, shipments.State{Question: query})
	checkPath(t, path, []string{"reiterate_intention", "plan", "parse_user_query", "plan", "execute_query", "plan", "record_turn", graph.END})
	if !strings.Contains(out.Response, "query.fuzzy is not supported") || len(out.Errors) != 1 || !strings.HasPrefix(out.Errors[0], "execute_query: ") {
		t.Errorf("response %q, errors %v", out.Response, out.Errors)
	}
}

// force_execute with no query: build_query builds one without asking,
// even from a request with no criterion.
func TestRouteForceExecuteBuilds(t *testing.T) {
	const ask = "just run it, don't ask me anything"
	e := newEnv(t, &script{
		f01:     map[string]llmtest.Reply{ask: f01{goal: ask, force: true}.reply()},
		intents: map[string]llmtest.Reply{ask: intent(map[string]any{"clarification": "Which carrier?"})},
	}, nil, nil)
	out, path := e.run(t, shipments.State{Question: ask})
	checkPath(t, path, pathSearch)
	if out.Task.Worker != "record_turn" || out.Page == nil || out.Page.Total != dataN {
		t.Fatalf("page %+v", out.Page)
	}
	if !out.CompletedOutputs[0].Bool("force_execute") {
		t.Errorf("completed_outputs[0] %v", out.CompletedOutputs[0])
	}
	want := expected(e.l.ships, func(dataset.Shipment) bool { return true })
	if got := ids(out.Page); !slices.Equal(got, want[:20]) {
		t.Errorf("page %v\nwant %v", got, want[:20])
	}
}

// force_execute when a query exists (the previous one): executed
// directly, no build_query.
func TestRouteForceExecuteWithPriorQuery(t *testing.T) {
	const ask = "just run the next page, no questions"
	sc := maerskScript()
	sc.f01[ask] = f01{goal: "Show the next page of the previous search", prior: true, force: true}.reply()
	e := newEnv(t, sc, nil, nil)
	first, _ := e.run(t, shipments.State{Question: askMaersk})
	out, path := e.run(t, shipments.State{Question: ask, ConversationHistory: first.ConversationHistory})
	checkPath(t, path, pathMore)
	if out.Page == nil || out.Page.From != 20 {
		t.Errorf("page %+v", out.Page)
	}
}

// No criterion: the clarification is the turn's response.
func TestRouteClarification(t *testing.T) {
	const ask = "show me some shipments"
	const question = "Which shipments: a carrier, a port, the goods or dates?"
	e := newEnv(t, &script{
		f01:     map[string]llmtest.Reply{ask: f01{goal: "Find shipments"}.reply()},
		intents: map[string]llmtest.Reply{"Find shipments": intent(map[string]any{"clarification": question, "sort_by": "weight_kg", "page_size": 5})},
	}, nil, nil)
	out, path := e.run(t, shipments.State{Question: ask})
	checkPath(t, path, pathClarify)
	if out.Response != question || out.Page != nil || e.calls() != 2 {
		t.Errorf("response %q, page %v, %d calls", out.Response, out.Page, e.calls())
	}
	if out.Task.Reason != shipments.ReasonDone || len(out.ConversationHistory[0].KeyArtifacts) != 0 {
		t.Errorf("task %+v, turn %+v", out.Task, out.ConversationHistory[0])
	}
	// The model gave no question: the default one.
	e = newEnv(t, &script{
		f01:     map[string]llmtest.Reply{ask: f01{goal: "Find shipments"}.reply()},
		intents: map[string]llmtest.Reply{"Find shipments": intent(nil)},
	}, nil, nil)
	out, _ = e.run(t, shipments.State{Question: ask})
	if out.Response != shipments.DefaultClarification {
		t.Errorf("response %q", out.Response)
	}
}

// An empty message: no model call, a fixed reply.
func TestRouteEmptyQuestion(t *testing.T) {
	e := newEnv(t, &script{}, nil, nil)
	out, path := e.run(t, shipments.State{Question: "  "})
	checkPath(t, path, pathNoPrior)
	if out.Response != shipments.EmptyQuestionReply || e.calls() != 0 {
		t.Errorf("response %q, %d calls", out.Response, e.calls())
	}
}

// The model fails in build_query: a clarification saying so, the error
// recorded.
func TestRouteExtractionFails(t *testing.T) {
	e := newEnv(t, &script{f01: map[string]llmtest.Reply{askMaersk: f01{goal: goalMaersk}.reply()}}, nil, nil)
	out, path := e.run(t, shipments.State{Question: askMaersk})
	checkPath(t, path, pathClarify)
	if out.Response != shipments.ExtractionFailedReply || len(out.Errors) != 1 || !strings.HasPrefix(out.Errors[0], "build_query: ") {
		t.Errorf("response %q, errors %v", out.Response, out.Errors)
	}
	if !strings.Contains(e.logs.String(), "level=WARN msg=\"node failed; falling back\" node_id=F06") {
		t.Errorf("logs:\n%s", e.logs)
	}
}

// The model fails in summarize: the counts are still there.
func TestRouteSummaryFails(t *testing.T) {
	e := newEnv(t, nil, []llmtest.Reply{
		f01{goal: goalMaersk}.reply(),
		intent(map[string]any{"carrier": "Maersk", "destination_port": "USLAX"}),
		llmtest.Status(503, "overloaded"),
	}, nil)
	out, path := e.run(t, shipments.State{Question: askMaersk})
	checkPath(t, path, pathSearch)
	n := count(e.l.ships, maerskToLA)
	want := fmt.Sprintf("Found %d shipments; showing 1-20.\n\nSay \"show me more\" for the next 20.", n)
	if out.Response != want || len(out.Errors) != 1 || !strings.HasPrefix(out.Errors[0], "summarize: ") {
		t.Errorf("response %q, errors %v", out.Response, out.Errors)
	}
}

// failingBackend fails every search.
type failingBackend struct{ search.Backend }

func (failingBackend) Search(context.Context, string, []byte) (*search.Response, error) {
	return nil, errors.New("connection refused")
}

// The backend fails: the response says so, the turn ends, no artifact.
func TestRouteSearchFails(t *testing.T) {
	e := newEnv(t, maerskScript(), nil, func(d *shipments.Deps) { d.Backend = failingBackend{} })
	out, path := e.run(t, shipments.State{Question: askMaersk})
	checkPath(t, path, pathFailed)
	if out.Response != "I could not run the search: the search failed: connection refused." || out.Page != nil {
		t.Errorf("response %q", out.Response)
	}
	if out.Task.Reason != shipments.ReasonSearchFailed || len(out.ConversationHistory[0].KeyArtifacts) != 0 {
		t.Errorf("task %+v", out.Task)
	}
}

// A cancelled run fails instead of falling back.
func TestCancelledRunFails(t *testing.T) {
	e := newEnv(t, maerskScript(), nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.c.Invoke(ctx, shipments.State{Question: askMaersk}); err == nil {
		t.Fatal("a cancelled run succeeded")
	}
}

func TestNewNeedsModelAndBackend(t *testing.T) {
	_, err := shipments.New(shipments.Deps{})
	if err == nil || !strings.Contains(err.Error(), "Deps.Model is nil") || !strings.Contains(err.Error(), "Deps.Backend is nil") {
		t.Errorf("err %v", err)
	}
}
