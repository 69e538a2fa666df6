package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite testdata/demo.replay.jsonl and demo.expected.txt from the scripted fake server")

const (
	testdata   = "../../testdata"
	docs       = testdata + "/docs.json"
	questions  = testdata + "/demo.questions.txt"
	demoReplay = testdata + "/demo.replay.jsonl"
	demoOut    = testdata + "/demo.expected.txt"
)

// demoModel answers the demo's questions as a model might, telling the
// calls apart by their schema and the question at the end of the prompt.
func demoModel(req llm.Request) llmtest.Reply {
	last := req.Messages[len(req.Messages)-1].Content
	q := last[strings.LastIndex(last, "Question: ")+len("Question: "):]
	schema := string(req.Schema)
	intent := func(intent string, rel float64, why string) llmtest.Reply {
		return llmtest.JSON(map[string]any{"reasoning": why, "intent": intent, "domain_relevance": rel})
	}
	query := func(quality float64, queries []string, company string, year int) llmtest.Reply {
		return llmtest.JSON(map[string]any{"query_quality": quality, "queries": queries, "company": company, "year": year})
	}
	switch {
	case strings.Contains(schema, "domain_relevance"):
		switch q {
		case "What was Acme's revenue in 2023?":
			return intent("SIMPLE_QA", 0.97, "Asks for one figure: Acme's 2023 revenue.")
		case "Why did its gross margin fall that year?":
			return intent("COMPLEX_REASONING", 0.93, "Asks for the causes of Acme's 2023 margin decline.")
		}
		return intent("SIMPLE_QA", 0.6, "Asks for figures without saying which.")
	case strings.Contains(schema, "query_quality"):
		switch q {
		case "What was Acme's revenue in 2023?":
			return query(0.92, []string{"Acme total revenue fiscal 2023", "Acme net sales 2023"}, "Acme", 2023)
		case "Why did its gross margin fall that year?":
			return query(0.81, []string{"Acme gross margin 2023 decline", "Acme material costs fixed-price contracts 2023"}, "Acme", 2023)
		}
		return query(0.15, []string{}, "", 0)
	case strings.Contains(last, "too vague"), strings.Contains(req.Messages[0].Content, "too vague"):
		return llmtest.Text("Which figures do you mean: revenue, margin or cash, and for which company and year?")
	case q == "What was Acme's revenue in 2023?":
		return llmtest.Text("Acme's revenue for fiscal 2023 was $1,496.5 million, up 24% from $1,202.9 million in fiscal 2022 [1].")
	case q == "Why did its gross margin fall that year?":
		return llmtest.Text("1. Acme's gross margin fell to 31.2% in fiscal 2023 from 34.0% in 2022 [1].\n2. Material costs rose faster than contract prices on fixed-price contracts [1].\n3. Revenue grew 24%, driven by fixed-price contracts [2], so a growing share of sales carried that cost risk.\nConclusion: rising material costs on a growing share of fixed-price contracts squeezed the margin.")
	}
	return llmtest.Text("I do not know.")
}

func runCLI(t *testing.T, args []string, stdin string, getenv func(string) string) (stdout, stderr string, code int) {
	t.Helper()
	if getenv == nil {
		getenv = func(string) string { return "" }
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

// Record a conversation against the fake Ollama server, then replay it
// offline: the same answers, and no request left over.
func TestRecordThenReplay(t *testing.T) {
	s := llmtest.NewOllamaServer()
	defer s.Close()
	s.RepeatFunc(demoModel)
	getenv := func(k string) string {
		if k == "OLLAMA_HOST" {
			return s.URL
		}
		return ""
	}
	dir := t.TempDir()
	rec := filepath.Join(dir, "demo.replay.jsonl")
	qs := readFile(t, questions)
	live, stderr, code := runCLI(t, []string{"--llm", "ollama:llama3.1", "--record", rec, "--docs", docs}, qs, getenv)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(s.Requests()); n != 9 { // 3 + 3 + 0 (weather) + 3 (clarify)
		t.Errorf("%d LLM calls, want 9", n)
	}
	for _, want := range []string{
		"Acme's revenue for fiscal 2023 was $1,496.5 million",
		"Sources: [1] acme-2023-revenue",
		"Conclusion: rising material costs",
		"I can only answer questions about",
		"Which figures do you mean",
	} {
		if !strings.Contains(live, want) {
			t.Errorf("output lacks %q:\n%s", want, live)
		}
	}
	// The second question's prompts hold the first turn.
	reqs := s.Requests()
	if p := reqs[3].Request.Messages[1].Content; !strings.HasPrefix(p, "Conversation so far:\nHuman: What was Acme's revenue in 2023?\nAI: Acme's revenue") {
		t.Errorf("turn 2 prompt: %q", p)
	}

	replayed, stderr, code := runCLI(t, []string{"--llm", "replay:" + rec, "--docs", docs, "--thread", "t1", "--store", filepath.Join(dir, "rag.db")}, qs, nil)
	if code != 0 || stderr != "" {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	if replayed != live {
		t.Errorf("replayed output differs:\n%s\nlive:\n%s", replayed, live)
	}
	if *update {
		if err := os.WriteFile(demoReplay, []byte(readFile(t, rec)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(demoOut, []byte(live), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The checked-in demo replays offline, as the README says.
func TestReplayDemo(t *testing.T) {
	out, stderr, code := runCLI(t, []string{"--llm", "replay:" + demoReplay, "--docs", docs}, readFile(t, questions), nil)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := readFile(t, demoOut); out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
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
	db := filepath.Join(t.TempDir(), "rag.db")
	args := []string{"--docs", docs, "--thread", "C42", "--store", db, "--trace", "--log", "info"}
	out, stderr, code := runCLI(t, append(args, "--input", "What was Acme's revenue in 2023?"), "", getenv)
	if code != 0 || !strings.Contains(out, "$1,496.5 million") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	for _, want := range []string{"---CLASSIFY_INTENT---", "---GENERATE_ANSWER---", "step 1: classify_intent", "classify_intent -> analyze_query", "thread C42 run 1: completed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	first := len(s.Requests())
	out, stderr, code = runCLI(t, append(args, "--input", "Why did its gross margin fall that year?"), "", getenv)
	if code != 0 || !strings.Contains(out, "Conclusion:") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "step 1: classify_intent") || !strings.Contains(stderr, "thread C42 run 2: completed") {
		t.Errorf("trace of run 2:\n%s", stderr)
	}
	if p := s.Requests()[first].Request.Messages[1].Content; !strings.Contains(p, "Human: What was Acme's revenue in 2023?") {
		t.Errorf("second invocation's prompt lacks the first turn: %q", p)
	}
}

func TestTraceWithoutThread(t *testing.T) {
	out, stderr, code := runCLI(t, []string{"--llm", "ollama:x", "--docs", docs, "--trace", "--input", "hello"}, "", nil)
	if code != 0 || !strings.HasPrefix(out, "Hello!") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	for _, want := range []string{"run started", "step 1: classify_intent", "classify_intent -> generate_ood_response", "finished at __end__"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("trace lacks %q:\n%s", want, stderr)
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--input", "q"}, 2, "--docs is required"},
		{[]string{"--docs", docs, "--log", "loud"}, 2, "--log"},
		{[]string{"--docs", docs, "stray"}, 2, "unexpected arguments"},
		{[]string{"--docs", "missing.json", "--llm", "ollama:x"}, 1, "--docs"},
		{[]string{"--docs", docs, "--input", "q"}, 1, "no model given, and WEFT_LLM is not set (known providers: anthropic, ollama, openai, replay) (pass --llm PROVIDER:MODEL or set WEFT_LLM)"},
		{[]string{"--docs", docs, "--llm", "replay:missing.jsonl", "--input", "q"}, 1, "missing.jsonl"},
	}
	for _, tc := range cases {
		_, stderr, code := runCLI(t, tc.args, "", nil)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	// A replay that misses fails the node, which falls back and says so.
	_, stderr, code := runCLI(t, []string{"--docs", docs, "--llm", "replay:" + demoReplay, "--input", "What did Globex pay in dividends?"}, "", nil)
	if code != 0 || !strings.Contains(stderr, "recovered from classify_intent: ") || !strings.Contains(stderr, "no recorded exchange matches") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}
