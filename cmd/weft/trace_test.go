package main

import (
	"strings"
	"testing"
)

// TestTraceOneLinePerStep: --trace prints one line per node step, with its
// inputs, outputs and the edge taken; the tokens of an LLM action are
// gathered into its step's line, not printed one per chunk.
func TestTraceOneLinePerStep(t *testing.T) {
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm", "--answer", "net income 2023", "--trace"})
	r.wantCode(t, exitOK)
	want := `step 1: identify_intent {input_text: "hmm"} -> {intent: "not_clear"}  → ask_user [intent == "not_clear"]
step 2: ask_user {question: "Could you clarify your request?"} -> {query: "net income 2023"}  → retrieve set {from_query: "net income 2023"}
step 3: retrieve {query: "net income 2023"} -> {chunks: ["Net income was $1.1M."]}  → evaluate
step 4: evaluate {chunks: ["Net income was $1.1M."]} -> {relevance: "OK"}  → generate [relevance == "OK"] set {result_source: ["Net income was $1.1M."]}
step 5: generate {source: ["Net income was $1.1M."]} -> {answer: "Net income was $1.1M."}
`
	if r.stderr != want {
		t.Errorf("trace:\n%s\nwant:\n%s", r.stderr, want)
	}

	r = weft(t, []string{"run", "../../examples/route/route.wf", "--llm", "replay:../../examples/route/route.replay.jsonl", "--input", "What was the 2019 revenue?", "--trace"})
	r.wantCode(t, exitOK)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if len(lines) != 2 || strings.Contains(r.stderr, "token:") {
		t.Fatalf("want 2 lines, one per step, tokens gathered:\n%s", r.stderr)
	}
	for _, w := range []string{
		`step 1: classify {input_text: "What was the 2019 revenue?"} -> {intent: "qa"} (4 token chunks; tokens 32 in, 4 out)  → reply`,
		`step 2: reply {question: "What was the 2019 revenue?"} -> {text: "Total revenue in fiscal 2019 was $4.2M, up from $3.1M in 2018."} (16 token chunks; tokens 11 in, 16 out)`,
	} {
		if !strings.Contains(r.stderr, w+"\n") {
			t.Errorf("trace lacks %q:\n%s", w, r.stderr)
		}
	}

	// --trace=full prints every event, tokens one by one.
	r = weft(t, []string{"run", "../../examples/route/route.wf", "--llm", "replay:../../examples/route/route.replay.jsonl", "--input", "What was the 2019 revenue?", "--trace=full"})
	r.wantCode(t, exitOK)
	if n := strings.Count(r.stderr, "token: "); n != 20 || !strings.Contains(r.stderr, "run started\n") {
		t.Errorf("--trace=full: %d token lines, want 20, and every event:\n%s", n, r.stderr)
	}
	r = weft(t, []string{"run", intentQA, "--trace=some"})
	r.wantCode(t, exitUsage)
}

// TestTraceClipsValues: a long value is clipped in a step's line, saying
// how long it was; --trace=full prints it whole.
func TestTraceClipsValues(t *testing.T) {
	long := strings.Repeat("revenue ", 40) // 320 bytes
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", long, "--answer", "x", "--trace"})
	r.wantCode(t, exitOK)
	first, _, _ := strings.Cut(r.stderr, "\n")
	if want := `step 1: identify_intent {input_text: "` + long[:79] + `…(322 bytes)} -> {intent: "not_clear"}`; !strings.HasPrefix(first, want) {
		t.Errorf("first line:\n%s\nwant it to start with:\n%s", first, want)
	}
	r = weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", long, "--answer", "x", "--trace=full"})
	if !strings.Contains(r.stderr, `{input_text: "`+long+`"}`) {
		t.Errorf("--trace=full clipped the input:\n%s", r.stderr)
	}
}

// TestWaitingPrintedOnce: a run that waits says so once, with or without
// --trace.
func TestWaitingPrintedOnce(t *testing.T) {
	for _, trace := range []string{"", "--trace", "--trace=full"} {
		args := []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm"}
		if trace != "" {
			args = append(args, trace)
		}
		r := weft(t, args)
		r.wantCode(t, exitWaiting)
		if n := strings.Count(r.stdout+r.stderr, "waiting at ask_user"); n != 1 {
			t.Errorf("%q: \"waiting at ask_user\" printed %d times:\n%s%s", trace, n, r.stdout, r.stderr)
		}
	}
}
