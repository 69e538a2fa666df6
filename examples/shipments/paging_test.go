package shipments_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/llm/llmtest"
)

// conversation runs turns in memory, the history carried by hand as the
// program does without a thread.
type conversation struct {
	e       *env
	history []shipments.TurnSummary
}

func (c *conversation) say(t *testing.T, q string) (shipments.State, []string, int) {
	t.Helper()
	before := c.e.calls()
	out, path := c.e.run(t, shipments.State{Question: q, ConversationHistory: c.history})
	c.history = out.ConversationHistory
	return out, path, c.e.calls() - before
}

// Page after page: each "show me more" returns the next distinct
// shipments of the same query, the offsets advance, and past the end it
// says so without asking the model for a summary.
func TestPagingThroughResults(t *testing.T) {
	const ask = "Show me Maersk shipments"
	const goal = "Find shipments carried by Maersk"
	sc := maerskScript()
	sc.f01[ask] = f01{goal: goal}.reply()
	sc.intents[goal] = intent(map[string]any{"carrier": "Maersk"})
	c := &conversation{e: newEnv(t, sc, nil, nil)}
	want := expected(c.e.l.ships, func(s dataset.Shipment) bool { return s.Carrier == "Maersk" })
	if len(want) < 60 {
		t.Fatalf("%d Maersk shipments", len(want))
	}
	out, _, _ := c.say(t, ask)
	seen := map[string]bool{}
	for page := 0; page < 3; page++ {
		if page > 0 {
			var path []string
			out, path, _ = c.say(t, askMore)
			checkPath(t, path, pathMore)
		}
		from := 20 * page
		if got := ids(out.Page); !slices.Equal(got, want[from:from+20]) {
			t.Errorf("page %d: %v\nwant %v", page+1, got, want[from:from+20])
		}
		for _, id := range ids(out.Page) {
			if seen[id] {
				t.Errorf("page %d repeats %s", page+1, id)
			}
			seen[id] = true
		}
		if out.Page.From != from || out.Page.NextOffset != from+20 || out.Page.Total != int64(len(want)) {
			t.Errorf("page %d: from %d next %d total %d", page+1, out.Page.From, out.Page.NextOffset, out.Page.Total)
		}
		if head := fmt.Sprintf("Found %d shipments; showing %d-%d.", len(want), from+1, from+20); !strings.HasPrefix(out.Response, head) {
			t.Errorf("page %d response %q", page+1, out.Response)
		}
		a := c.history[len(c.history)-1].KeyArtifacts[0]
		if n, _ := a.Slots.Int("next_offset"); n != from+20 {
			t.Errorf("page %d: artifact next_offset %d", page+1, n)
		}
		if page > 0 {
			// F01 found the previous turn's artifact.
			if n, _ := out.CompletedOutputs[0].Int("prior_next_offset"); n != from {
				t.Errorf("page %d: prior_next_offset %d", page+1, n)
			}
		}
	}
}

// The last page says it is the last; the next "show me more" says there
// is nothing more, with no summary call.
func TestPagingPastTheEnd(t *testing.T) {
	c := &conversation{e: newEnv(t, maerskScript(), nil, nil)}
	want := expected(c.e.l.ships, maerskToLA)
	if len(want) <= 20 || len(want) > 40 {
		t.Fatalf("%d Maersk shipments to Los Angeles: the test wants two pages", len(want))
	}
	c.say(t, askMaersk)
	out, _, _ := c.say(t, askMore)
	if !slices.Equal(ids(out.Page), want[20:]) || !strings.HasSuffix(out.Response, "That is the last page.") || out.Page.More() {
		t.Errorf("last page: %v, %q", ids(out.Page), out.Response)
	}
	out, path, calls := c.say(t, askMore)
	checkPath(t, path, pathMore)
	wantResp := fmt.Sprintf("No more results: the search matched %d shipments and all of them have been shown.", len(want))
	if out.Response != wantResp || len(out.Page.Hits) != 0 || calls != 1 {
		t.Errorf("past the end: %q, %d hits, %d calls", out.Response, len(out.Page.Hits), calls)
	}
	if out.Page.From != 40 || out.Page.NextOffset != 60 {
		t.Errorf("past the end: from %d next %d", out.Page.From, out.Page.NextOffset)
	}
}

// A page size asked for is kept by "show me more"; one above the maximum
// is capped, with a warning.
func TestPagingKeepsPageSize(t *testing.T) {
	const ask, goal = "50 Maersk shipments at a time", "Find Maersk shipments, 50 per page"
	const big, bigGoal = "500 delayed at a time", "Find delayed shipments, 500 per page"
	sc := maerskScript()
	sc.f01[ask] = f01{goal: goal}.reply()
	sc.f01[big] = f01{goal: bigGoal}.reply()
	sc.intents[goal] = intent(map[string]any{"carrier": "Maersk", "page_size": 50})
	sc.intents[bigGoal] = intent(map[string]any{"status": []string{"delayed", "booked"}, "page_size": 500})
	c := &conversation{e: newEnv(t, sc, nil, nil)}
	want := expected(c.e.l.ships, func(s dataset.Shipment) bool { return s.Carrier == "Maersk" })
	out, _, _ := c.say(t, ask)
	if !slices.Equal(ids(out.Page), want[:50]) {
		t.Errorf("page 1 has %d", len(out.Page.Hits))
	}
	out, _, _ = c.say(t, askMore)
	if !slices.Equal(ids(out.Page), want[50:100]) || !strings.Contains(out.Response, "showing 51-100") {
		t.Errorf("page 2: %d hits, %q", len(out.Page.Hits), out.Response)
	}
	out, _, _ = c.say(t, big)
	if out.Page.Size != shipments.MaxPageSize || !slices.Contains(out.Warnings, "build_query: page size 500 capped at 100") {
		t.Errorf("size %d, warnings %v", out.Page.Size, out.Warnings)
	}
}

// Page arithmetic and the response's counts.
func TestComposeResponse(t *testing.T) {
	hits := func(n int) []dataset.Shipment { return make([]dataset.Shipment, n) }
	cases := []struct {
		p    shipments.Page
		sum  string
		want string
	}{
		{shipments.Page{Total: 29, Size: 20, NextOffset: 20, Hits: hits(20)}, "S.", "Found 29 shipments; showing 1-20.\n\nS.\n\nSay \"show me more\" for the next 20."},
		{shipments.Page{Total: 29, From: 20, Size: 20, NextOffset: 40, Hits: hits(9)}, "", "Found 29 shipments; showing 21-29.\n\nThat is the last page."},
		{shipments.Page{Total: 0, Size: 20, NextOffset: 20}, "Nothing.", "No shipments matched.\n\nNothing."},
		{shipments.Page{Total: 10000, TotalRelation: "gte", Size: 20, NextOffset: 20, Hits: hits(20)}, "", "Found at least 10000 shipments; showing 1-20.\n\nSay \"show me more\" for the next 20."},
		{shipments.Page{Total: -1, Size: 5, NextOffset: 5, Hits: hits(5)}, "", "Found an unknown number of shipments; showing 1-5.\n\nSay \"show me more\" for the next 5."},
	}
	for _, tc := range cases {
		if got := shipments.ComposeResponse(&tc.p, tc.sum); got != tc.want {
			t.Errorf("%+v:\n%q\nwant %q", tc.p, got, tc.want)
		}
	}
	if got := shipments.PastTheEnd(&shipments.Page{Total: 29}); got != "No more results: the search matched 29 shipments and all of them have been shown." {
		t.Errorf("%q", got)
	}
}

// A pasted query's page goes on with "show me more" too.
func TestPagingPastedQuery(t *testing.T) {
	const query = `{"query": {"term": {"status": "delayed"}}, "sort": [{"shipment_id": "asc"}], "size": 15}`
	ask := "run " + query
	sc := maerskScript()
	sc.f01[ask] = f01{goal: "Execute the provided Elasticsearch query", query: query}.reply()
	c := &conversation{e: newEnv(t, sc, []llmtest.Reply{}, nil)}
	var delayed []string
	for _, s := range c.e.l.ships {
		if s.Status == dataset.StatusDelayed {
			delayed = append(delayed, s.ShipmentID)
		}
	}
	slices.Sort(delayed)
	out, _, _ := c.say(t, ask)
	if !slices.Equal(ids(out.Page), delayed[:15]) {
		t.Errorf("page 1 %v", ids(out.Page))
	}
	out, path, _ := c.say(t, askMore)
	checkPath(t, path, pathMore)
	if !slices.Equal(ids(out.Page), delayed[15:30]) {
		t.Errorf("page 2 %v\nwant %v", ids(out.Page), delayed[15:30])
	}
	jsonEq(t, "es_query", out.ESQuery, map[string]any{"query": map[string]any{"term": map[string]any{"status": "delayed"}},
		"sort": []any{map[string]any{"shipment_id": "asc"}}, "from": 15, "size": 15})
}
