package shipments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
	blevesearch "github.com/weftlang/weft/search/bleve"
)

// The dataset every test searches: the program's default.
const (
	dataSeed = 2025
	dataN    = 5000
)

// loaded is the generated dataset in an in-memory Bleve index, built once
// for the package's tests and benchmarks (about 3 s).
type loaded struct {
	ships []dataset.Shipment
	b     *blevesearch.Backend
	err   error
}

var load = sync.OnceValue(func() *loaded {
	l := &loaded{ships: dataset.Generate(dataSeed, dataN)}
	l.b, l.err = blevesearch.New(blevesearch.Options{})
	if l.err == nil {
		l.err = shipments.LoadDataset(context.Background(), l.b, shipments.DefaultIndex, l.ships)
	}
	return l
})

func index(tb testing.TB) *loaded {
	tb.Helper()
	l := load()
	if l.err != nil {
		tb.Fatal(l.err)
	}
	return l
}

// today is the dataset's "today", the clock of every test.
func today() time.Time {
	t, _ := time.Parse(time.DateOnly, dataset.AsOfDate)
	return t
}

// The paths of the routes.
var (
	pathSearch   = []string{"reiterate_intention", "plan", "build_query", "plan", "execute_query", "plan", "summarize", "plan", "record_turn", graph.END}
	pathMore     = []string{"reiterate_intention", "plan", "execute_query", "plan", "summarize", "plan", "record_turn", graph.END}
	pathPasted   = []string{"reiterate_intention", "plan", "parse_user_query", "plan", "execute_query", "plan", "summarize", "plan", "record_turn", graph.END}
	pathBadPaste = []string{"reiterate_intention", "plan", "parse_user_query", "plan", "record_turn", graph.END}
	pathClarify  = []string{"reiterate_intention", "plan", "build_query", "plan", "clarify", "plan", "record_turn", graph.END}
	pathNoPrior  = []string{"reiterate_intention", "plan", "clarify", "plan", "record_turn", graph.END}
	pathFailed   = []string{"reiterate_intention", "plan", "build_query", "plan", "execute_query", "plan", "record_turn", graph.END}
)

// f01 is a scripted ReiterateResult.
type f01 struct {
	goal, reasoning string
	query           any // user_query_text: nil, a string, or any JSON
	prior, force    bool
}

func (r f01) reply() llmtest.Reply {
	return llmtest.JSON(map[string]any{
		"main_goal": r.goal, "reasoning": r.reasoning, "user_query_text": r.query,
		"references_prior_results": r.prior, "force_execute": r.force,
	})
}

// intent is a scripted search intent: the fields the model sets, the
// others empty.
func intent(fields map[string]any) llmtest.Reply {
	v := map[string]any{
		"reasoning": "test", "shipper": "", "consignee": "", "carrier": "", "origin_port": "", "destination_port": "",
		"origin_country": "", "destination_country": "", "goods": "", "status": []string{},
		"departure_from": "", "departure_to": "", "arrival_from": "", "arrival_to": "",
		"min_weight_kg": 0, "max_weight_kg": 0, "sort_by": "default", "sort_order": "desc", "page_size": 0, "clarification": "",
	}
	for k, x := range fields {
		v[k] = x
	}
	return llmtest.JSON(v)
}

// script answers the agent's three kinds of calls, told apart by their
// schema: F01 by the user message, build_query by the request (the main
// goal), summarize with a fixed text.
type script struct {
	f01     map[string]llmtest.Reply // by the user message
	intents map[string]llmtest.Reply // by the request
	summary string
}

// The summary every scripted summarize call returns.
const scriptedSummary = "Scripted summary of the page."

// lastLine returns what follows the last occurrence of prefix in s, to the
// end of its line.
func after(s, prefix string) string {
	i := strings.LastIndex(s, prefix)
	if i < 0 {
		return ""
	}
	s = s[i+len(prefix):]
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		s = s[:j]
	}
	return s
}

func (sc *script) reply(req llm.Request) llmtest.Reply {
	user := req.Messages[len(req.Messages)-1].Content
	schema := string(req.Schema)
	switch {
	case strings.Contains(schema, "main_goal"):
		if r, ok := sc.f01[after(user, "User message: ")]; ok {
			return r
		}
		return llmtest.Status(500, "unscripted F01 message")
	case strings.Contains(schema, "departure_from"):
		if r, ok := sc.intents[after(user, "Request: ")]; ok {
			return r
		}
		return llmtest.Status(500, "unscripted request")
	}
	if sc.summary != "" {
		return llmtest.Text(sc.summary)
	}
	return llmtest.Text(scriptedSummary)
}

// syncBuffer is a bytes.Buffer safe for the logger's writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is the compiled agent on the fake Ollama server and the shared
// index.
type env struct {
	c      *graph.Compiled[shipments.State]
	server *llmtest.Server
	logs   *syncBuffer
	l      *loaded
}

// newEnv starts a fake Ollama server answering with sc (or the replies
// of script, in order, when sc is nil) and compiles the agent on it.
func newEnv(t testing.TB, sc *script, replies []llmtest.Reply, edit func(*shipments.Deps)) *env {
	t.Helper()
	l := index(t)
	s := llmtest.NewOllamaServer(replies...)
	t.Cleanup(s.Close)
	if sc != nil {
		s.RepeatFunc(sc.reply)
	}
	logs := &syncBuffer{}
	deps := shipments.Deps{
		Model:   ollama.New(ollama.Config{BaseURL: s.BaseURL(), Model: "test-model"}),
		Backend: l.b,
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:     today,
	}
	if edit != nil {
		edit(&deps)
	}
	c, err := shipments.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	return &env{c: c, server: s, logs: logs, l: l}
}

// run runs one turn and returns the final state and the path.
func (e *env) run(t testing.TB, in shipments.State) (shipments.State, []string) {
	t.Helper()
	res, err := e.c.Run(context.Background(), in, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Status != engine.Completed {
		t.Fatalf("status %v: %v", res.Status, res.Err)
	}
	out, err := e.c.State(res)
	if err != nil {
		t.Fatal(err)
	}
	return out, res.Path
}

// calls returns the number of model requests so far.
func (e *env) calls() int { return len(e.server.Requests()) }

// request returns the i-th request's messages.
func (e *env) request(t testing.TB, i int) llm.Request {
	t.Helper()
	reqs := e.server.Requests()
	if i >= len(reqs) {
		t.Fatalf("request %d of %d", i, len(reqs))
	}
	return reqs[i].Request
}

func checkPath(t testing.TB, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("path %v\nwant %v", got, want)
	}
}

// jsonEq compares two values by their JSON encoding (map keys sorted, so
// int and float64 of the same integer compare equal).
func jsonEq(t testing.TB, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	g, _ = json.Marshal(gv)
	w, _ = json.Marshal(wv)
	if !bytes.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// count counts the shipments pred holds for.
func count(ships []dataset.Shipment, pred func(dataset.Shipment) bool) int {
	n := 0
	for _, s := range ships {
		if pred(s) {
			n++
		}
	}
	return n
}

// expected returns the shipments pred holds for, in the agent's default
// order: latest departure first, then shipment ID.
func expected(ships []dataset.Shipment, pred func(dataset.Shipment) bool) []string {
	var sel []dataset.Shipment
	for _, s := range ships {
		if pred(s) {
			sel = append(sel, s)
		}
	}
	slices.SortFunc(sel, func(a, b dataset.Shipment) int {
		if c := strings.Compare(b.DepartureDate, a.DepartureDate); c != 0 {
			return c
		}
		return strings.Compare(a.ShipmentID, b.ShipmentID)
	})
	ids := make([]string, len(sel))
	for i, s := range sel {
		ids[i] = s.ShipmentID
	}
	return ids
}

// ids returns the IDs of a page's hits.
func ids(p *shipments.Page) []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.Hits))
	for i, h := range p.Hits {
		out[i] = h.ShipmentID
	}
	return out
}

func maerskToLA(s dataset.Shipment) bool {
	return s.Carrier == "Maersk" && s.DestinationPortCode == "USLAX"
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
