package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the sessions (sessions/*.replay.jsonl and *.expected.txt) from the scripted fake server")

const sessionsDir = "../../sessions"

// The recorded sessions: sessions/NAME.txt holds the messages, one per
// line; NAME.replay.jsonl the model's exchanges; NAME.expected.txt the output.
var sessionNames = []string{"maersk_la", "multi_intent", "pasted_query", "clarify_force"}

// sharedIndex is an on-disk embedded index of the default dataset, made
// once for the package's tests (--es bleve:DIR) so that each invocation
// does not index the 5,000 shipments again.
var sharedIndex = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "shipments-cmd-test-")
	if err != nil {
		return "", err
	}
	var out, errb bytes.Buffer
	// Indexing happens before the model is needed; a replay of nothing
	// answers the empty stdin.
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		return "", err
	}
	if code := run(context.Background(), []string{"--es", "bleve:" + filepath.Join(dir, "index"), "--llm", "replay:" + empty}, strings.NewReader(""), &out, &errb, noEnv); code != 0 {
		return "", fmt.Errorf("exit %d: %s", code, errb.String())
	}
	return filepath.Join(dir, "index"), nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := sharedIndex(); err == nil {
		os.RemoveAll(filepath.Dir(dir))
	}
	os.Exit(code)
}

func bleveArg(t *testing.T) string {
	t.Helper()
	dir, err := sharedIndex()
	if err != nil {
		t.Fatal(err)
	}
	return "bleve:" + dir
}

func noEnv(string) string { return "" }

// after returns what follows the last occurrence of prefix in s, to the
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

// The messages of the sessions, and the model's restatements.
const (
	askMaersk = "Show me Maersk shipments to LA"
	askMore   = "show me more"
	askMulti  = "what's a shipment and find me one from yesterday"
	askPaste  = `run this: {"query": {"term": {"status": "delayed"}}, "size": 5}`
	askBad    = `and this one: {"query": {"bool": {"filter": [{"term": {"status": "delayed"}}]}}`
	askVague  = "show me some shipments"
	askForce  = "just run it, don't ask me anything"
)

// demoModel answers the sessions' calls as a model might. The replies are
// scripted, not produced by a model: F01 and build_query by the message;
// the summaries are computed from the page given in the prompt (the most
// common origins, goods and statuses), so they are true of the data.
func demoModel(req llm.Request) llmtest.Reply {
	user := req.Messages[len(req.Messages)-1].Content
	schema := string(req.Schema)
	reiterate := func(goal, why string, query any, prior, force bool) llmtest.Reply {
		return llmtest.JSON(map[string]any{"main_goal": goal, "reasoning": why, "user_query_text": query,
			"references_prior_results": prior, "force_execute": force})
	}
	intent := func(why string, fields map[string]any) llmtest.Reply {
		v := map[string]any{
			"reasoning": why, "shipper": "", "consignee": "", "carrier": "", "origin_port": "", "destination_port": "",
			"origin_country": "", "destination_country": "", "goods": "", "status": []string{},
			"departure_from": "", "departure_to": "", "arrival_from": "", "arrival_to": "",
			"min_weight_kg": 0, "max_weight_kg": 0, "sort_by": "default", "sort_order": "desc", "page_size": 0, "clarification": "",
		}
		for k, x := range fields {
			v[k] = x
		}
		return llmtest.JSON(v)
	}
	switch {
	case strings.Contains(schema, "main_goal"):
		switch msg := after(user, "User message: "); msg {
		case askMaersk:
			return reiterate("Find shipments carried by Maersk to Los Angeles", "Maersk is a shipping line, so it is the carrier; LA is the port of Los Angeles.", nil, false, false)
		case askMore:
			return reiterate("Show the next page of the previous search results", "The user wants more of the results of the previous search.", nil, true, false)
		case askMulti:
			return reiterate("(1) Explain what a shipment is (2) Find shipments that arrived yesterday", "Two requests: a definition, then a search by arrival date.", nil, false, false)
		case askPaste:
			return reiterate("Execute the provided Elasticsearch query", "The user pasted a query to run.", `{"query": {"term": {"status": "delayed"}}, "size": 5}`, false, false)
		case askBad:
			return reiterate("Execute the provided Elasticsearch query", "The user pasted another query to run.", `{"query": {"bool": {"filter": [{"term": {"status": "delayed"}}]}}`, false, false)
		case askVague:
			return reiterate("Find shipments", "The user asks for shipments without saying which.", nil, false, false)
		case askForce:
			return reiterate(askForce, "The user wants the search run without questions.", nil, false, true)
		default:
			return reiterate(msg, "Taken as written.", nil, false, false)
		}
	case strings.Contains(schema, "departure_from"):
		switch req := after(user, "Request: "); {
		case strings.Contains(req, "Maersk to Los Angeles"):
			return intent("Carrier Maersk, destination port Los Angeles.", map[string]any{"carrier": "Maersk", "destination_port": "Los Angeles"})
		case strings.Contains(req, "arrived yesterday"):
			return intent("Arrivals on 2025-06-29.", map[string]any{"arrival_from": "2025-06-29", "arrival_to": "2025-06-29"})
		case req == "Find shipments":
			return intent("No criterion given.", map[string]any{"clarification": "Which shipments are you after: a carrier, a route, the goods or a date range?"})
		default:
			return intent("No criterion given.", nil)
		}
	}
	return llmtest.Text(demoSummary(user))
}

// demoSummary summarizes the page in a summarize prompt.
func demoSummary(prompt string) string {
	var b strings.Builder
	if strings.Contains(after(prompt, "Request: "), "Explain what a shipment is") {
		b.WriteString("A shipment is one consignment of goods moved by a carrier from a shipper to a consignee under a single bill of lading, here in one or more ocean containers. ")
	}
	origins, goods, statuses := map[string]int{}, map[string]int{}, map[string]int{}
	n := 0
	for _, line := range strings.Split(prompt, "\n") {
		f := strings.Split(line, " | ")
		if len(f) != 8 {
			continue
		}
		n++
		origin, _, _ := strings.Cut(f[3], " -> ")
		origins[origin]++
		goods[f[5]]++
		statuses[strings.ReplaceAll(f[7], "_", " ")]++
	}
	if n == 0 {
		b.WriteString("Nothing matched that search.")
		return b.String()
	}
	fmt.Fprintf(&b, "On this page of %d, the most common origins are %s; the goods are mostly %s; by status: %s.", n, top(origins, 2), top(goods, 2), top(statuses, 4))
	return b.String()
}

// top lists the k most frequent keys of m with their counts, ties by name.
func top(m map[string]int, k int) string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, key := range keys[:min(k, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s (%d)", key, m[key]))
	}
	return strings.Join(parts, ", ")
}

func runCLI(t *testing.T, args []string, stdin string, getenv func(string) string) (stdout, stderr string, code int) {
	t.Helper()
	if getenv == nil {
		getenv = noEnv
	}
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb, getenv)
	return out.String(), errb.String(), code
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ollamaEnv(s *llmtest.Server) func(string) string {
	return func(k string) string {
		if k == "OLLAMA_HOST" {
			return s.URL
		}
		return ""
	}
}

// Each session, recorded against the fake Ollama server, replays offline
// to the same output with no model; -update writes it to sessions/.
func TestRecordThenReplaySessions(t *testing.T) {
	for _, name := range sessionNames {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewOllamaServer()
			defer s.Close()
			s.RepeatFunc(demoModel)
			rec := filepath.Join(t.TempDir(), name+".replay.jsonl")
			msgs := readFile(t, filepath.Join(sessionsDir, name+".txt"))
			live, stderr, code := runCLI(t, []string{"--llm", "ollama:llama3.1", "--record", rec, "--es", bleveArg(t)}, msgs, ollamaEnv(s))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			replayed, stderr2, code := runCLI(t, []string{"--llm", "replay:" + rec, "--es", bleveArg(t)}, msgs, nil)
			if code != 0 || stderr2 != stderr {
				t.Fatalf("replay: exit %d: %s (live: %s)", code, stderr2, stderr)
			}
			if replayed != live {
				t.Errorf("replayed output differs:\n%s\nlive:\n%s", replayed, live)
			}
			if *update {
				if err := os.WriteFile(filepath.Join(sessionsDir, name+".replay.jsonl"), []byte(readFile(t, rec)), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(sessionsDir, name+".expected.txt"), []byte(live), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// The checked-in sessions replay offline, as the README says: the first
// exactly as the README's command runs it (in-memory index of the default
// dataset), the others on the shared on-disk index of the same dataset.
func TestReplaySessions(t *testing.T) {
	for i, name := range sessionNames {
		t.Run(name, func(t *testing.T) {
			args := []string{"--llm", "replay:" + filepath.Join(sessionsDir, name+".replay.jsonl")}
			if i > 0 {
				args = append(args, "--es", bleveArg(t))
			}
			out, stderr, code := runCLI(t, args, readFile(t, filepath.Join(sessionsDir, name+".txt")), nil)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if want := readFile(t, filepath.Join(sessionsDir, name+".expected.txt")); out != want {
				t.Errorf("output:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}

// What each session shows, with counts computed from the generated data.
func TestSessionsContent(t *testing.T) {
	ships := dataset.Generate(DefaultSeed, DefaultN)
	count := func(pred func(dataset.Shipment) bool) int {
		n := 0
		for _, s := range ships {
			if pred(s) {
				n++
			}
		}
		return n
	}
	la := count(func(s dataset.Shipment) bool { return s.Carrier == "Maersk" && s.DestinationPortCode == "USLAX" })
	yesterday := count(func(s dataset.Shipment) bool { return s.ArrivalDate == "2025-06-29" })
	delayed := count(func(s dataset.Shipment) bool { return s.Status == dataset.StatusDelayed })
	want := map[string][]string{
		"maersk_la": {
			fmt.Sprintf("Found %d shipments; showing 1-20.", la),
			fmt.Sprintf("Found %d shipments; showing 21-%d.", la, la),
			"That is the last page.",
			fmt.Sprintf("No more results: the search matched %d shipments and all of them have been shown.", la),
		},
		"multi_intent": {"A shipment is one consignment", fmt.Sprintf("Found %d shipments; showing 1-%d.", yesterday, yesterday)},
		"pasted_query": {
			fmt.Sprintf("Found %d shipments; showing 1-5.", delayed),
			fmt.Sprintf("Found %d shipments; showing 6-10.", delayed),
			"I did not run that query: not valid JSON: unexpected end of JSON input at byte offset 65 (line 1, column 66).",
		},
		"clarify_force": {"Which shipments are you after", fmt.Sprintf("Found %d shipments; showing 1-20.", DefaultN)},
	}
	for _, name := range sessionNames {
		out := readFile(t, filepath.Join(sessionsDir, name+".expected.txt"))
		for _, w := range want[name] {
			if !strings.Contains(out, w) {
				t.Errorf("%s.expected.txt lacks %q", name, w)
			}
		}
	}
}

// A thread carries the conversation from one invocation to the next.
func TestThreadAcrossInvocations(t *testing.T) {
	s := llmtest.NewOllamaServer()
	defer s.Close()
	s.RepeatFunc(demoModel)
	getenv := func(k string) string {
		switch k {
		case "OLLAMA_HOST":
			return s.URL
		case "WEFT_LLM":
			return "ollama:llama3.1"
		}
		return ""
	}
	db := filepath.Join(t.TempDir(), "shipments.db")
	args := []string{"--es", bleveArg(t), "--thread", "C42", "--store", db, "--trace", "--log", "info", "--hits=false"}
	out, stderr, code := runCLI(t, append(args, "--input", askMaersk), "", getenv)
	if code != 0 || !strings.Contains(out, "showing 1-20.") || strings.Contains(out, "SHP-") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	for _, want := range []string{"node_id=F01 node=reiterate_intention", "node_id=F07 node=execute_query", "step 1: reiterate_intention", "reiterate_intention -> plan", "thread C42 run 1: completed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	first := len(s.Requests())
	out, stderr, code = runCLI(t, append(args, "--input", askMore), "", getenv)
	if code != 0 || !strings.Contains(out, "showing 21-") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "thread C42 run 2: completed") || strings.Contains(stderr, ": build_query {") {
		t.Errorf("trace of run 2:\n%s", stderr)
	}
	if p := s.Requests()[first].Request.Messages[1].Content; !strings.Contains(p, "Human: "+askMaersk+"\nAI: Found ") || !strings.Contains(p, "[Prior queries: Find shipments carried by Maersk to Los Angeles]") {
		t.Errorf("second invocation's F01 prompt lacks the first turn: %q", p)
	}
}

func TestTraceWithoutThread(t *testing.T) {
	s := llmtest.NewOllamaServer()
	defer s.Close()
	s.RepeatFunc(demoModel)
	out, stderr, code := runCLI(t, []string{"--llm", "ollama:x", "--es", bleveArg(t), "--trace", "--input", askVague}, "", ollamaEnv(s))
	if code != 0 || !strings.HasPrefix(out, "Which shipments are you after") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	for _, want := range []string{"run started", "step 1: reiterate_intention", "plan -> clarify", "finished at __end__"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("trace lacks %q:\n%s", want, stderr)
		}
	}
}

// --es with a URL: the agent's bodies reach the cluster; --load creates
// the index and sends the dataset in bulk first.
func TestElasticsearchURL(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	docs := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/shipments":
			_, _ = io.WriteString(w, `{"acknowledged": true, "shards_acknowledged": true, "index": "shipments"}`)
		case strings.HasSuffix(r.URL.Path, "/_bulk"):
			mu.Lock()
			docs += bytes.Count(body, []byte("\n")) / 2
			mu.Unlock()
			_, _ = io.WriteString(w, `{"took": 5, "errors": false, "items": []}`)
		case strings.HasSuffix(r.URL.Path, "/_search"):
			var req map[string]any
			if err := json.Unmarshal(body, &req); err != nil || req["from"] != 0.0 || req["size"] != 20.0 || req["track_total_hits"] != true {
				t.Errorf("search body %s", body)
			}
			_, _ = io.WriteString(w, `{"took": 1, "timed_out": false, "hits": {"total": {"value": 1, "relation": "eq"}, "max_score": null,
				"hits": [{"_index": "shipments", "_id": "SHP-0000007", "_score": null, "_source": {"shipment_id": "SHP-0000007", "carrier": "Maersk", "destination_port": "Los Angeles", "destination_port_code": "USLAX", "status": "arrived"}}]}}`)
		default:
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error": "unexpected", "status": 404}`)
		}
	}))
	defer srv.Close()
	s := llmtest.NewOllamaServer()
	defer s.Close()
	s.RepeatFunc(demoModel)
	out, stderr, code := runCLI(t, []string{"--llm", "ollama:x", "--es", srv.URL, "--load", "--n", "1500", "--input", askMaersk}, "", ollamaEnv(s))
	if code != 0 || !strings.HasPrefix(out, "Found 1 shipments; showing 1-1.") || !strings.Contains(out, "1. SHP-0000007 |") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls[0] != "PUT /shipments" || docs != 1500 || calls[len(calls)-1] != "POST /shipments/_search" {
		t.Errorf("calls %v, %d documents", calls, docs)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--log", "loud"}, 2, "--log"},
		{[]string{"stray"}, 2, "unexpected arguments"},
		{[]string{"--today", "yesterday"}, 2, "--today"},
		{[]string{"--n", "0"}, 2, "--n must be positive"},
		{[]string{"--es", "ftp://x", "--input", "q"}, 1, "is not an Elasticsearch URL"},
		{[]string{"--es", "bleve:", "--input", "q"}, 1, "bleve: needs a directory"},
		{[]string{"--es", "bleve:DIR", "--input", "q"}, 1, "no model given, and WEFT_LLM is not set (known providers: anthropic, ollama, openai, replay) (pass --llm PROVIDER:MODEL or set WEFT_LLM)"},
		{[]string{"--es", "bleve:DIR", "--llm", "replay:missing.jsonl", "--input", "q"}, 1, "missing.jsonl"},
	}
	for _, tc := range cases {
		for i, a := range tc.args {
			if a == "bleve:DIR" {
				tc.args[i] = bleveArg(t)
			}
		}
		_, stderr, code := runCLI(t, tc.args, "", nil)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	// A replay that misses fails the node, which falls back and says so.
	out, stderr, code := runCLI(t, []string{"--es", bleveArg(t), "--llm", "replay:" + filepath.Join(sessionsDir, "maersk_la.replay.jsonl"), "--input", "Show me MSC shipments to Rotterdam"}, "", nil)
	if code != 0 || !strings.Contains(stderr, "recovered from reiterate_intention: ") || !strings.Contains(stderr, "no recorded exchange matches") {
		t.Errorf("exit %d, stdout %s, stderr %s", code, out, stderr)
	}
}
