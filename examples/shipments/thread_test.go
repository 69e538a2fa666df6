package shipments_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/store/sqlite"
)

// Two turns of a durable thread on SQLite, the second in a new store
// handle and a new graph (as a new process would): the history carries
// over, F01 finds the first turn's query, page 2 follows page 1.
func TestThreadTwoTurnsOnSQLite(t *testing.T) {
	const ask = "Show me Maersk shipments to Los Angeles"
	sc := maerskScript()
	sc.f01[ask] = f01{goal: goalMaersk}.reply()
	e := newEnv(t, sc, nil, nil)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "threads.db")

	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	first, err := e.c.Threads(st, nil).Invoke(ctx, "slack-1712.42", shipments.State{Question: ask})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	want := expected(e.l.ships, maerskToLA)
	if !slices.Equal(ids(first.Page), want[:20]) || len(first.ConversationHistory) != 1 {
		t.Fatalf("turn 1: %v, history %d", ids(first.Page), len(first.ConversationHistory))
	}

	st, err = sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e2 := newEnv(t, sc, nil, nil)
	th := e2.c.Threads(st, nil)
	second, err := th.Invoke(ctx, "slack-1712.42", shipments.State{Question: askMore})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(second.Page), want[20:]) {
		t.Errorf("turn 2: %v\nwant %v", ids(second.Page), want[20:])
	}
	jsonEq(t, "turn 2 completed_outputs[0]", second.CompletedOutputs[0], map[string]any{
		"prior_es_query": first.ConversationHistory[0].KeyArtifacts[0].Slots["query"], "prior_next_offset": 20, "prior_page_size": 20,
	})
	// Turn 2's F01 prompt shows turn 1 with its query's intent.
	wantPrompt := fmt.Sprintf("Conversation so far:\nHuman: %s\nAI: %s\n[Prior queries: %s]\n\nUser message: %s",
		ask, first.Response, goalMaersk, askMore)
	if got := e2.request(t, 0).Messages[1].Content; got != wantPrompt {
		t.Errorf("turn 2 F01 prompt:\n%s\nwant:\n%s", got, wantPrompt)
	}
	// The thread holds both turns; the other fields started afresh.
	now, err := th.State(ctx, "slack-1712.42")
	if err != nil {
		t.Fatal(err)
	}
	if len(now.ConversationHistory) != 2 || now.ConversationHistory[0].Question != ask || now.ConversationHistory[1].Question != askMore {
		t.Errorf("thread history %+v", now.ConversationHistory)
	}
	if now.Round != 3 || len(now.CompletedOutputs) != 3 {
		t.Errorf("turn 2 rounds %d, sub-goals %v", now.Round, now.CompletedOutputs)
	}
	hist, err := th.Engine().History(ctx, "slack-1712.42", 1)
	if err != nil {
		t.Fatal(err)
	}
	var run2 []string
	for _, h := range hist {
		if h.Run == 2 && h.Node != "" {
			run2 = append(run2, h.Node)
		}
	}
	if !slices.Equal(run2, pathMore[:len(pathMore)-1]) {
		t.Errorf("run 2 recorded %v", run2)
	}
	if !strings.HasPrefix(second.Response, fmt.Sprintf("Found %d shipments; showing 21-%d.", len(want), len(want))) {
		t.Errorf("turn 2 response %q", second.Response)
	}
}

// The replies of a thread with a model that fails: the turn still ends,
// and is recorded.
func TestThreadTurnWithFailingModel(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	e.server.Repeat(llmtest.Status(500, "down"))
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, err := e.c.Threads(st, nil).Invoke(context.Background(), "t", shipments.State{Question: askMaersk})
	if err != nil {
		t.Fatal(err)
	}
	if out.Response != shipments.ExtractionFailedReply || len(out.Errors) != 2 || len(out.ConversationHistory) != 1 {
		t.Errorf("response %q, errors %v", out.Response, out.Errors)
	}
}
