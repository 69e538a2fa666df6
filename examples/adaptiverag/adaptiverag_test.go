package adaptiverag_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/examples/adaptiverag"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/llm/openai"
	"github.com/weftlang/weft/store/sqlite"
)

// The paths of the graph.
var (
	pathOOD     = []string{"classify_intent", "generate_ood_response", "finalize", graph.END}
	pathClarify = []string{"classify_intent", "analyze_query", "clarify", "finalize", graph.END}
	pathAnswer  = []string{"classify_intent", "analyze_query", "retrieve", "rerank", "generate_answer", "finalize", graph.END}
)

// env is one compiled graph with its fake model server, documents and log.
type env struct {
	c      *graph.Compiled[adaptiverag.State]
	server *llmtest.Server
	logs   *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
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

func loadDocs(t testing.TB) []adaptiverag.Passage {
	t.Helper()
	docs, err := adaptiverag.LoadPassages(filepath.Join("testdata", "docs.json"))
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// newEnv starts a fake server of protocol p answering with script and
// compiles the graph on it. edit adjusts the dependencies.
func newEnv(t testing.TB, p llmtest.Protocol, script []llmtest.Reply, edit func(*adaptiverag.Deps)) *env {
	t.Helper()
	s := llmtest.NewServer(p, script...)
	t.Cleanup(s.Close)
	var m llm.Model
	switch p {
	case llmtest.OpenAI:
		m = openai.New(openai.Config{BaseURL: s.BaseURL(), Model: "test-model"})
	default:
		m = ollama.New(ollama.Config{BaseURL: s.BaseURL(), Model: "test-model"})
	}
	logs := &syncBuffer{}
	deps := adaptiverag.Deps{
		Model:     m,
		Retriever: adaptiverag.NewMemoryRetriever(loadDocs(t)),
		Logger:    slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&deps)
	}
	c, err := adaptiverag.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	return &env{c: c, server: s, logs: logs}
}

// run runs question and returns the final state and the path taken.
func (e *env) run(t testing.TB, question string) (adaptiverag.State, []string) {
	t.Helper()
	res, err := e.c.Run(context.Background(), adaptiverag.State{Question: question}, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Status != engine.Completed {
		t.Fatalf("status %v", res.Status)
	}
	out, err := e.c.State(res)
	if err != nil {
		t.Fatal(err)
	}
	return out, res.Path
}

// checkLogs checks that the log has the ---NAME--- line of every node of
// path, and of no other node.
func (e *env) checkLogs(t testing.TB, path []string) {
	t.Helper()
	logs := e.logs.String()
	for _, n := range []string{"classify_intent", "analyze_query", "clarify", "retrieve", "rerank", "generate_answer", "generate_ood_response", "finalize"} {
		line := "---" + strings.ToUpper(n) + "---"
		if got, want := strings.Contains(logs, line), slices.Contains(path, n); got != want {
			t.Errorf("log has %s: %v, want %v\n%s", line, got, want, logs)
		}
	}
}

func intentReply(intent adaptiverag.Intent, relevance float64) llmtest.Reply {
	return llmtest.JSON(map[string]any{"reasoning": "test", "intent": intent, "domain_relevance": relevance})
}

func queryReply(quality float64, queries []string, company string, year int) llmtest.Reply {
	if queries == nil {
		queries = []string{}
	}
	return llmtest.JSON(map[string]any{"query_quality": quality, "queries": queries, "company": company, "year": year})
}

func checkPath(t testing.TB, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("path %v, want %v", got, want)
	}
}

func checkMessages(t testing.TB, out adaptiverag.State, reply string) {
	t.Helper()
	want := []adaptiverag.Message{{Role: adaptiverag.RoleHuman, Content: out.Question}, {Role: adaptiverag.RoleAI, Content: reply}}
	if !slices.Equal(out.Messages, want) {
		t.Errorf("messages %+v, want %+v", out.Messages, want)
	}
}

func TestOutOfDomainByPatternCallsNoLLM(t *testing.T) {
	cases := []struct{ question, pattern, reply string }{
		{"What's the weather like in Paris tomorrow?", "weather", "only answer questions about"},
		{"hi there!", "greeting", "Hello!"},
		{"Thanks a lot", "greeting", "Hello!"},
		{"Who won the World Cup in 2022?", "sports", "only answer questions about"},
		{"Can you write a Python function that reverses a list?", "coding", "only answer questions about"},
		{"I get a stack trace when I run my app", "coding", "only answer questions about"},
	}
	for _, tc := range cases {
		t.Run(tc.pattern+"/"+tc.question, func(t *testing.T) {
			e := newEnv(t, llmtest.Ollama, nil, nil)
			out, path := e.run(t, tc.question)
			checkPath(t, path, pathOOD)
			if n := len(e.server.Requests()); n != 0 {
				t.Errorf("%d LLM calls, want 0", n)
			}
			if out.Intent != adaptiverag.OutOfDomain || out.ClassifiedBy != "pattern:"+tc.pattern || out.DomainRelevance != 0 {
				t.Errorf("intent %s by %s, relevance %v", out.Intent, out.ClassifiedBy, out.DomainRelevance)
			}
			if !strings.Contains(out.FinalResponse, tc.reply) || out.FinalResponse != out.Answer {
				t.Errorf("response %q", out.FinalResponse)
			}
			checkMessages(t, out, out.Answer)
			if len(out.Errors) != 0 {
				t.Errorf("errors %v", out.Errors)
			}
			e.checkLogs(t, path)
		})
	}
}

// A pattern word next to a domain term leaves the decision to the LLM.
func TestDomainTermsOverrulePatterns(t *testing.T) {
	e := newEnv(t, llmtest.Ollama, []llmtest.Reply{
		intentReply(adaptiverag.ComplexReasoning, 0.8),
		queryReply(0.9, nil, "Acme", 2023),
		llmtest.Text("Weather is not mentioned [1]."),
	}, nil)
	out, path := e.run(t, "How did the weather affect Acme's revenue in 2023?")
	checkPath(t, path, pathAnswer)
	if out.ClassifiedBy != "llm" || len(e.server.Requests()) != 3 {
		t.Errorf("classified by %s with %d calls", out.ClassifiedBy, len(e.server.Requests()))
	}
}

func TestOutOfDomainByLowRelevanceOverridesIntent(t *testing.T) {
	e := newEnv(t, llmtest.Ollama, []llmtest.Reply{intentReply(adaptiverag.SimpleQA, 0.2)}, nil)
	out, path := e.run(t, "Write me a limerick about invoices")
	checkPath(t, path, pathOOD)
	if out.Intent != adaptiverag.OutOfDomain || out.DomainRelevance != 0.2 || out.ClassifiedBy != "llm" {
		t.Errorf("intent %s, relevance %v, by %s", out.Intent, out.DomainRelevance, out.ClassifiedBy)
	}
	reqs := e.server.Requests()
	if len(reqs) != 1 || reqs[0].Request.Schema == nil {
		t.Fatalf("%d requests, want one structured call", len(reqs))
	}
	if !strings.Contains(e.logs.String(), "low domain relevance overrides the intent") {
		t.Errorf("logs:\n%s", e.logs)
	}
	checkMessages(t, out, out.Answer)
	e.checkLogs(t, path)

	// At the threshold, the intent stands.
	e = newEnv(t, llmtest.Ollama, []llmtest.Reply{intentReply(adaptiverag.SimpleQA, adaptiverag.RelevanceThreshold), queryReply(0.9, nil, "", 0), llmtest.Text("ok")}, nil)
	out, path = e.run(t, "What did Acme earn?")
	checkPath(t, path, pathAnswer)
	if out.Intent != adaptiverag.SimpleQA {
		t.Errorf("intent %s", out.Intent)
	}
}

func TestClarifyOnLowQuality(t *testing.T) {
	e := newEnv(t, llmtest.Ollama, []llmtest.Reply{
		intentReply(adaptiverag.SimpleQA, 0.9),
		queryReply(0.1, nil, "", 0),
		llmtest.Text("Which company and which year do you mean?"),
	}, nil)
	out, path := e.run(t, "numbers?")
	checkPath(t, path, pathClarify)
	if out.Clarification != "Which company and which year do you mean?" || out.FinalResponse != out.Clarification || out.Answer != "" {
		t.Errorf("clarification %q, response %q, answer %q", out.Clarification, out.FinalResponse, out.Answer)
	}
	if out.QueryQuality != 0.1 || len(out.Documents) != 0 {
		t.Errorf("quality %v, documents %d", out.QueryQuality, len(out.Documents))
	}
	checkMessages(t, out, out.Clarification)
	e.checkLogs(t, path)
	reqs := e.server.Requests()
	if len(reqs) != 3 || reqs[2].Request.Schema != nil {
		t.Errorf("%d requests; the clarification must be a plain call", len(reqs))
	}

	// A negative MinQueryQuality never clarifies.
	e = newEnv(t, llmtest.Ollama, []llmtest.Reply{intentReply(adaptiverag.SimpleQA, 0.9), queryReply(0, nil, "", 0), llmtest.Text("ok")},
		func(d *adaptiverag.Deps) { d.MinQueryQuality = -1 })
	_, path = e.run(t, "revenue numbers?")
	checkPath(t, path, pathAnswer)
}

func TestIntentStrategies(t *testing.T) {
	cases := []struct {
		intent   adaptiverag.Intent
		strategy string
		effort   llm.Effort
		prompt   string // in the answer's system prompt
	}{
		{adaptiverag.SimpleQA, "concise", llm.EffortLow, "one to three sentences"},
		{adaptiverag.ComplexReasoning, "step_by_step", llm.EffortHigh, "Reason step by step"},
		{adaptiverag.Exploratory, "broad", llm.EffortMedium, "broad overview"},
	}
	for _, tc := range cases {
		t.Run(string(tc.intent), func(t *testing.T) {
			const answer = "Acme's revenue was $1,496.5 million in fiscal 2023 [1]."
			e := newEnv(t, llmtest.OpenAI, []llmtest.Reply{
				intentReply(tc.intent, 0.95),
				queryReply(0.9, []string{"Acme total revenue fiscal 2023", "Acme sales 2023"}, "Acme", 2023),
				llmtest.Text(answer),
			}, nil)
			q := "What was Acme's revenue in 2023?"
			out, path := e.run(t, q)
			checkPath(t, path, pathAnswer)
			if out.Intent != tc.intent || out.Strategy != tc.strategy || out.ReasoningEffort != string(tc.effort) {
				t.Errorf("intent %s: strategy %s, effort %s", out.Intent, out.Strategy, out.ReasoningEffort)
			}
			if got := adaptiverag.StrategyFor(tc.intent); got.Name != tc.strategy || got.Effort != tc.effort {
				t.Errorf("StrategyFor %+v", got)
			}
			if !slices.Equal(out.Queries, []string{q, "Acme total revenue fiscal 2023", "Acme sales 2023"}) {
				t.Errorf("queries %q", out.Queries)
			}
			if out.Filters != (adaptiverag.Filters{Company: "Acme", Year: 2023}) || out.FallbackSearch {
				t.Errorf("filters %+v, fallback %v", out.Filters, out.FallbackSearch)
			}
			for _, d := range out.Documents {
				if d.Company != "Acme" || d.Year != 2023 {
					t.Errorf("document %s does not match the filters", d.ID)
				}
			}
			if len(out.RerankedDocuments) == 0 || len(out.RerankedDocuments) > adaptiverag.DefaultTopK || out.RerankedDocuments[0].ID != "acme-2023-revenue" {
				t.Errorf("reranked %+v", out.RerankedDocuments)
			}
			if out.Answer != answer || !strings.HasPrefix(out.FinalResponse, answer+"\n\nSources: [1] acme-2023-revenue; [2] ") {
				t.Errorf("answer %q, response %q", out.Answer, out.FinalResponse)
			}
			checkMessages(t, out, answer)
			e.checkLogs(t, path)

			reqs := e.server.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			gen := reqs[2].Request
			if gen.Schema != nil || gen.Effort != tc.effort {
				t.Errorf("answer request: schema %s, effort %q; want a plain call with effort %q", gen.Schema, gen.Effort, tc.effort)
			}
			if len(gen.Messages) != 2 || !strings.Contains(gen.Messages[0].Content, tc.prompt) ||
				!strings.Contains(gen.Messages[1].Content, "[1] (acme_annual_report_2023, Acme, 2023) Acme's total revenue for fiscal 2023") ||
				!strings.HasSuffix(gen.Messages[1].Content, "Question: "+q) {
				t.Errorf("answer prompt %+v", gen.Messages)
			}
			for i, r := range reqs[:2] {
				if r.Request.Schema == nil {
					t.Errorf("request %d is not a structured call", i)
				}
			}
		})
	}
}

// recordingRetriever records the searches made through it.
type recordingRetriever struct {
	adaptiverag.Retriever
	mu       sync.Mutex
	searches []adaptiverag.Filters
	fail     error
}

func (r *recordingRetriever) Search(ctx context.Context, q string, f adaptiverag.Filters, k int) ([]adaptiverag.Passage, error) {
	r.mu.Lock()
	r.searches = append(r.searches, f)
	r.mu.Unlock()
	if r.fail != nil {
		return nil, r.fail
	}
	return r.Retriever.Search(ctx, q, f, k)
}

func TestEmptyFilteredSearchFallsBack(t *testing.T) {
	var rec *recordingRetriever
	e := newEnv(t, llmtest.Ollama, []llmtest.Reply{
		intentReply(adaptiverag.SimpleQA, 0.9),
		queryReply(0.8, []string{"Umbrella revenue 2023"}, "Umbrella", 2023), // no such company in the documents
		llmtest.Text("The documents do not cover Umbrella."),
	}, func(d *adaptiverag.Deps) {
		rec = &recordingRetriever{Retriever: d.Retriever}
		d.Retriever = rec
	})
	out, path := e.run(t, "What was Umbrella's revenue in 2023?")
	checkPath(t, path, pathAnswer)
	if !out.FallbackSearch || len(out.Documents) == 0 {
		t.Fatalf("fallback %v, %d documents", out.FallbackSearch, len(out.Documents))
	}
	umbrella := adaptiverag.Filters{Company: "Umbrella", Year: 2023}
	want := []adaptiverag.Filters{umbrella, umbrella, {}, {}} // two queries, filtered then not
	if !slices.Equal(rec.searches, want) {
		t.Errorf("searches %+v, want %+v", rec.searches, want)
	}
	ids := map[string]bool{}
	for _, d := range out.Documents {
		if ids[d.ID] {
			t.Errorf("document %s twice", d.ID)
		}
		ids[d.ID] = true
	}
	if !strings.Contains(e.logs.String(), "filtered search found nothing") {
		t.Errorf("logs:\n%s", e.logs)
	}

	// A filtered search that finds something is not repeated.
	rec = nil
	e = newEnv(t, llmtest.Ollama, []llmtest.Reply{
		intentReply(adaptiverag.SimpleQA, 0.9), queryReply(0.8, nil, "Globex", 0), llmtest.Text("ok"),
	}, func(d *adaptiverag.Deps) {
		rec = &recordingRetriever{Retriever: d.Retriever}
		d.Retriever = rec
	})
	out, _ = e.run(t, "What dividend did Globex pay?")
	if out.FallbackSearch || len(rec.searches) != 1 || out.RerankedDocuments[0].ID != "globex-2023-dividend" {
		t.Errorf("fallback %v, searches %+v, reranked %+v", out.FallbackSearch, rec.searches, out.RerankedDocuments)
	}
}

// failingReranker always fails.
type failingReranker struct{}

func (failingReranker) Rerank(context.Context, string, []adaptiverag.Passage, int) ([]adaptiverag.Passage, error) {
	return nil, errors.New("cross-encoder unavailable")
}

func TestNodeErrorsFallBack(t *testing.T) {
	const q = "What was Acme's revenue in 2023?"
	ok := []llmtest.Reply{intentReply(adaptiverag.SimpleQA, 0.9), queryReply(0.9, nil, "Acme", 2023), llmtest.Text("fine")}
	failure := llmtest.Status(500, "model crashed")
	cases := []struct {
		name   string
		script []llmtest.Reply
		edit   func(*adaptiverag.Deps)
		path   []string
		check  func(t *testing.T, out adaptiverag.State)
	}{
		{"classify_intent", []llmtest.Reply{failure, ok[1], ok[2]}, nil, pathAnswer, func(t *testing.T, out adaptiverag.State) {
			if out.Intent != adaptiverag.FallbackIntent || out.DomainRelevance != adaptiverag.FallbackRelevance || out.ClassifiedBy != "fallback" {
				t.Errorf("intent %s, relevance %v, by %s", out.Intent, out.DomainRelevance, out.ClassifiedBy)
			}
		}},
		{"analyze_query", []llmtest.Reply{ok[0], failure, ok[2]}, nil, pathAnswer, func(t *testing.T, out adaptiverag.State) {
			if !slices.Equal(out.Queries, []string{q}) || !out.Filters.IsZero() || out.QueryQuality != adaptiverag.DefaultMinQueryQuality {
				t.Errorf("queries %q, filters %+v, quality %v", out.Queries, out.Filters, out.QueryQuality)
			}
			if out.Answer != "fine" {
				t.Errorf("answer %q", out.Answer)
			}
		}},
		{"retrieve", ok[:2], func(d *adaptiverag.Deps) {
			d.Retriever = &recordingRetriever{fail: errors.New("index offline")}
		}, pathAnswer, func(t *testing.T, out adaptiverag.State) {
			if len(out.Documents) != 0 || len(out.RerankedDocuments) != 0 || out.Answer != adaptiverag.NoDocumentsAnswer {
				t.Errorf("documents %d, answer %q", len(out.Documents), out.Answer)
			}
			if !strings.Contains(out.Errors[0], "index offline") {
				t.Errorf("errors %q", out.Errors)
			}
		}},
		{"rerank", ok, func(d *adaptiverag.Deps) { d.Reranker = failingReranker{} }, pathAnswer, func(t *testing.T, out adaptiverag.State) {
			want := out.Documents[:min(len(out.Documents), adaptiverag.DefaultTopK)]
			if !slices.Equal(out.RerankedDocuments, want) || out.Answer != "fine" {
				t.Errorf("reranked %+v, want the retrieval order %+v", out.RerankedDocuments, want)
			}
		}},
		{"generate_answer", []llmtest.Reply{ok[0], ok[1], failure}, nil, pathAnswer, func(t *testing.T, out adaptiverag.State) {
			if !strings.HasPrefix(out.Answer, "I could not generate an answer just now.") || !strings.Contains(out.Answer, "[1] (acme_annual_report_2023, Acme, 2023)") {
				t.Errorf("answer %q", out.Answer)
			}
			checkMessages(t, out, out.Answer)
		}},
		{"clarify", []llmtest.Reply{ok[0], queryReply(0.1, nil, "", 0), failure}, nil, pathClarify, func(t *testing.T, out adaptiverag.State) {
			if out.Clarification != adaptiverag.FallbackClarification || out.FinalResponse != out.Clarification {
				t.Errorf("clarification %q", out.Clarification)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, llmtest.Ollama, tc.script, tc.edit)
			out, path := e.run(t, q)
			checkPath(t, path, tc.path)
			if len(out.Errors) != 1 || !strings.HasPrefix(out.Errors[0], tc.name+": ") {
				t.Errorf("errors %q, want one from %s", out.Errors, tc.name)
			}
			if out.FinalResponse == "" {
				t.Error("no final response")
			}
			logs := e.logs.String()
			if !strings.Contains(logs, "node failed; using fallback values") || !strings.Contains(logs, "node="+tc.name) {
				t.Errorf("logs:\n%s", logs)
			}
			e.checkLogs(t, path)
			tc.check(t, out)
		})
	}
}

func TestBrokenJSONFallsBack(t *testing.T) {
	// Each structured call gets a reply that is not JSON, then, asked to
	// repair it, one that breaks the schema: it falls back.
	e := newEnv(t, llmtest.Ollama, []llmtest.Reply{
		llmtest.Text("SIMPLE_QA, I think {"), {BreakSchema: true},
		llmtest.Text(`{"query_quality": "high"`), {BreakSchema: true},
		llmtest.Text("Acme's revenue was $1,496.5 million [1]."),
	}, func(d *adaptiverag.Deps) { d.MaxRepairs = 1 })
	q := "What was Acme's revenue in 2023?"
	out, path := e.run(t, q)
	checkPath(t, path, pathAnswer)
	if out.ClassifiedBy != "fallback" || out.Intent != adaptiverag.FallbackIntent || !slices.Equal(out.Queries, []string{q}) {
		t.Errorf("state %+v", out)
	}
	if len(out.Errors) != 2 || !strings.HasPrefix(out.Errors[0], "classify_intent: structured: the reply did not match the schema after 2 attempt(s)") ||
		!strings.HasPrefix(out.Errors[1], "analyze_query: structured: the reply did not match the schema") {
		t.Errorf("errors %q", out.Errors)
	}
	if out.Answer != "Acme's revenue was $1,496.5 million [1]." || len(e.server.Requests()) != 5 {
		t.Errorf("answer %q after %d calls", out.Answer, len(e.server.Requests()))
	}

	// A repaired reply is used.
	e = newEnv(t, llmtest.Ollama, []llmtest.Reply{
		llmtest.Text("not json"), intentReply(adaptiverag.Exploratory, 0.7),
		queryReply(0.9, nil, "", 0), llmtest.Text("overview"),
	}, nil)
	out, _ = e.run(t, "What risks do the companies report?")
	if out.Intent != adaptiverag.Exploratory || out.ClassifiedBy != "llm" || len(out.Errors) != 0 {
		t.Errorf("intent %s by %s, errors %q", out.Intent, out.ClassifiedBy, out.Errors)
	}
}

// A cancelled run stops instead of falling back.
func TestCancelledRunFails(t *testing.T) {
	e := newEnv(t, llmtest.Ollama, []llmtest.Reply{intentReply(adaptiverag.SimpleQA, 0.9)}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.c.Invoke(ctx, adaptiverag.State{Question: "What was Acme's revenue in 2023?"}); err == nil {
		t.Fatal("a cancelled run succeeded")
	}
}

// The thread's second turn sees the first in its prompts.
func TestMultiTurnThreadOnSQLite(t *testing.T) {
	answers := map[string]string{
		"What was Acme's revenue in 2023?": "Acme's revenue was $1,496.5 million in fiscal 2023 [1].",
		"And in 2022?":                     "It was $1,202.9 million in fiscal 2022 [1].",
	}
	e := newEnv(t, llmtest.Ollama, nil, nil)
	e.server.RepeatFunc(func(req llm.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		q := last[strings.LastIndex(last, "Question: ")+len("Question: "):]
		switch {
		case strings.Contains(string(req.Schema), "domain_relevance"):
			return intentReply(adaptiverag.SimpleQA, 0.9)
		case strings.Contains(string(req.Schema), "query_quality"):
			if q == "And in 2022?" {
				return queryReply(0.8, []string{"Acme revenue 2022"}, "Acme", 2022)
			}
			return queryReply(0.9, nil, "Acme", 2023)
		}
		return llmtest.Text(answers[q])
	})
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "threads.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	th := e.c.Threads(st, nil)

	out1, err := th.Invoke(ctx, "slack-1712.42", adaptiverag.State{Question: "What was Acme's revenue in 2023?"})
	if err != nil {
		t.Fatal(err)
	}
	if out1.Answer != answers[out1.Question] || len(out1.Messages) != 2 {
		t.Fatalf("turn 1: %+v", out1)
	}
	first := len(e.server.Requests())
	for _, r := range e.server.Requests() {
		if strings.Contains(r.Request.Messages[len(r.Request.Messages)-1].Content, "Conversation so far") {
			t.Errorf("turn 1 has a history: %q", r.Request.Messages)
		}
	}

	out2, err := th.Invoke(ctx, "slack-1712.42", adaptiverag.State{Question: "And in 2022?"})
	if err != nil {
		t.Fatal(err)
	}
	if out2.Answer != answers["And in 2022?"] || out2.Filters.Year != 2022 || out2.RerankedDocuments[0].ID != "acme-2022-revenue" {
		t.Errorf("turn 2: answer %q, filters %+v, reranked %+v", out2.Answer, out2.Filters, out2.RerankedDocuments)
	}
	wantMsgs := []adaptiverag.Message{
		{Role: "user", Content: "What was Acme's revenue in 2023?"},
		{Role: "assistant", Content: answers["What was Acme's revenue in 2023?"]},
		{Role: "user", Content: "And in 2022?"},
		{Role: "assistant", Content: answers["And in 2022?"]},
	}
	if !slices.Equal(out2.Messages, wantMsgs) {
		t.Errorf("messages %+v", out2.Messages)
	}
	history := "Conversation so far:\nHuman: What was Acme's revenue in 2023?\nAI: " + answers["What was Acme's revenue in 2023?"] + "\n\n"
	reqs := e.server.Requests()[first:]
	if len(reqs) != 3 {
		t.Fatalf("turn 2 made %d calls", len(reqs))
	}
	for i, r := range reqs {
		if p := r.Request.Messages[len(r.Request.Messages)-1].Content; !strings.HasPrefix(p, history) {
			t.Errorf("turn 2, call %d: prompt %q does not start with the first turn", i+1, p)
		}
	}
	// The thread holds the conversation, and fields without a reducer
	// started the turn afresh.
	now, err := th.State(ctx, "slack-1712.42")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(now.Messages, wantMsgs) || now.Question != "And in 2022?" || len(now.Errors) != 0 {
		t.Errorf("thread state %+v", now)
	}
	// A new process (a new store handle) sees the same thread.
	hist, err := th.Engine().History(ctx, "slack-1712.42", 1)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, h := range hist {
		if h.Run == 2 && h.Node != "" {
			nodes = append(nodes, h.Node)
		}
	}
	checkPath(t, nodes, pathAnswer[:len(pathAnswer)-1]) // END completes without a record
}

func TestNewChecksDeps(t *testing.T) {
	_, err := adaptiverag.New(adaptiverag.Deps{})
	if err == nil || !strings.Contains(err.Error(), "Deps.Model is nil") || !strings.Contains(err.Error(), "Deps.Retriever is nil") {
		t.Errorf("error %v", err)
	}
}

func TestIR(t *testing.T) {
	e := newEnv(t, llmtest.Ollama, nil, nil)
	w := e.c.Workflow()
	var edges []string
	for _, ed := range w.Edges {
		s := ed.From + "->" + strings.Join(ed.To, ",")
		if ed.Cond != nil {
			s += " [" + ed.Cond.String() + "]"
		}
		edges = append(edges, s)
	}
	want := []string{
		`classify_intent->generate_ood_response [classify_intent.route == "generate_ood_response"]`,
		`classify_intent->analyze_query [classify_intent.route == "analyze_query"]`,
		`analyze_query->clarify [analyze_query.route == "clarify"]`,
		`analyze_query->retrieve [analyze_query.route == "retrieve"]`,
		"clarify->finalize",
		"retrieve->rerank",
		"rerank->generate_answer",
		"generate_answer->finalize",
		"generate_ood_response->finalize",
		"finalize->" + graph.END,
	}
	if !slices.Equal(edges, want) {
		t.Errorf("edges\n%s\nwant\n%s", strings.Join(edges, "\n"), strings.Join(want, "\n"))
	}
	if w.Initial != "classify_intent" || len(e.c.Warnings()) != 0 {
		t.Errorf("initial %s, warnings %v", w.Initial, e.c.Warnings())
	}
	for _, v := range w.Vars {
		if (v.Name == "messages") != (v.Reducer.String() == "append") {
			t.Errorf("variable %s has reducer %q", v.Name, v.Reducer)
		}
	}
}

func ExampleNew() {
	// The model is a fake Ollama server here; use ollama.New with a real
	// server, or providers.Open("ollama:llama3.1", nil).
	s := llmtest.NewOllamaServer()
	defer s.Close()
	c, err := adaptiverag.New(adaptiverag.Deps{
		Model:     ollama.New(ollama.Config{BaseURL: s.BaseURL(), Model: "llama3.1"}),
		Retriever: adaptiverag.NewMemoryRetriever([]adaptiverag.Passage{{ID: "1", Text: "Acme's revenue was $1.5 billion in 2023.", Company: "Acme", Year: 2023}}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := c.Invoke(context.Background(), adaptiverag.State{Question: "Hello!"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Intent, out.ClassifiedBy)
	fmt.Println(out.FinalResponse)
	// Output:
	// OUT_OF_DOMAIN pattern:greeting
	// Hello! I answer questions about company annual reports and financial filings (revenue, profit, costs, cash, segments, risks, strategy). What would you like to know?
}
