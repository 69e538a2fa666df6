package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/llm/llmtest"
)

// sampleDocs is the fictional document set that ships in the repository:
// the README's first command runs on it, with nothing else on the machine.
const sampleDocs = "examples/intentqa/docs/reports.json"

// The recorded sessions of examples/intentqa: sample_* on the fictional
// reports that ship in the repository (examples/intentqa/docs), the others
// one per route of seed 000's graph on the TAT-QA documents (the real data,
// fetched with `weft data fetch tatqa`). The model's replies are scripted
// (no LLM runs here); retrieval, prompts, routing and tools are real.
func intentqaSessions() []session {
	const q = "What is the amount of total sales in 2019?"
	answer := "Total sales in fiscal 2019 were $1,496.5 million (fixed-price contracts $1,452.4 million, other $44.1 million)."
	return []session{
		{
			example: "intentqa", name: "sample_qa", file: "app.wf", files: map[string]string{"--docs": sampleDocs},
			input: sampleQuestion,
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"intent": "qa"}),
				llmtest.JSON(map[string]any{"relevance": "OK"}),
				llmtest.Text(sampleAnswer),
			},
			path:    []string{"identify_intent", "retrieve", "evaluate", "generate"},
			outputs: map[string]string{"answer": "$399.0 million"},
			vars:    map[string]string{"rephraseCount": "0"},
		},
		{
			example: "intentqa", name: "qa", file: "app.wf", data: tatqa, input: q,
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"intent": "qa"}),
				llmtest.JSON(map[string]any{"relevance": "OK"}),
				llmtest.Text(answer),
			},
			path:    []string{"identify_intent", "retrieve", "evaluate", "generate"},
			outputs: map[string]string{"answer": "$1,496.5 million"},
			vars:    map[string]string{"rephraseCount": "0"},
		},
		{
			example: "intentqa", name: "rephrase", file: "app.wf", data: tatqa,
			input: "How did the defined benefit discount rate assumptions move for plans abroad last year?",
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"intent": "qa"}),
				llmtest.JSON(map[string]any{"relevance": "BAD"}),
				llmtest.Text("international pension plans discount rate September 30 2019 2018"),
				llmtest.JSON(map[string]any{"relevance": "OK"}),
				llmtest.Text("The discount rate of the international plans is set by comparison against country-specific AA corporate indices, adjusted for the duration of the obligation."),
			},
			path:    []string{"identify_intent", "retrieve", "evaluate", "rephrase", "retrieve", "evaluate", "generate"},
			outputs: map[string]string{"answer": "country-specific AA corporate indices"},
			vars:    map[string]string{"rephraseCount": "1"},
		},
		{
			example: "intentqa", name: "exhausted", file: "app.wf", data: tatqa,
			input: "What was the dividend paid by the company's Martian subsidiary?",
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"intent": "qa"}),
				llmtest.JSON(map[string]any{"relevance": "BAD"}),
				llmtest.Text("dividends paid subsidiary"),
				llmtest.JSON(map[string]any{"relevance": "BAD"}),
				llmtest.Text("dividends paid to noncontrolling interests subsidiaries"),
				llmtest.JSON(map[string]any{"relevance": "BAD"}),
				llmtest.Text("cash dividends declared per share subsidiary"),
				llmtest.JSON(map[string]any{"relevance": "BAD"}),
				llmtest.Text("No relevant information about a Martian subsidiary was found in the reports; try asking about dividends paid or declared, with the company and fiscal year."),
			},
			path: []string{"identify_intent", "retrieve", "evaluate", "rephrase", "retrieve", "evaluate", "rephrase",
				"retrieve", "evaluate", "rephrase", "retrieve", "evaluate", "generate"},
			outputs: map[string]string{"answer": "No relevant information"},
			vars:    map[string]string{"rephraseCount": "3"},
		},
		{
			example: "intentqa", name: "summarize", file: "app.wf", data: tatqa,
			input: "Summarize the sales by contract type.",
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"intent": "summarization"}),
				llmtest.Call("call_1", "retrieve", `{"query":"sales by contract type fixed price cost plus time and material"}`),
				llmtest.Text("Substantially all contracts are fixed-price: fixed-price sales were $1,452.4 million of $1,496.5 million total sales in fiscal 2019, against $1,146.2 million of $1,202.9 million in 2018. Other contract types (cost-plus, time-and-material) made up $44.1 million in 2019."),
				llmtest.Text("Sales are almost all from fixed-price contracts: $1,452.4 million of $1,496.5 million in fiscal 2019."),
			},
			path:    []string{"identify_intent", "summarize", "generate"},
			outputs: map[string]string{"answer": "fixed-price contracts"},
		},
		{
			example: "intentqa", name: "ask_user", file: "app.wf", data: tatqa,
			input:   "numbers?",
			answers: []string{q},
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"intent": "not_clear"}),
				llmtest.JSON(map[string]any{"relevance": "OK"}),
				llmtest.Text(answer),
			},
			path:    []string{"identify_intent", "ask_user", "retrieve", "evaluate", "generate"},
			outputs: map[string]string{"answer": "$1,496.5 million"},
		},
	}
}

// The question and answer of the sample_qa session, which the README's
// first command runs.
const (
	sampleQuestion = "What was the total revenue of Halvorsen Marine in 2024?"
	sampleAnswer   = "Halvorsen Marine's total revenue in 2024 was $399.0 million: ferry services $212.6 million, cargo shipping $148.9 million and harbour towage $37.5 million."
)

func TestIntentQASessions(t *testing.T) { runSessions(t, intentqaSessions()) }

// The ask_user route across two processes: the run waits in a thread, and
// `weft resume` answers it with the thread's --docs and --llm.
func TestIntentQAAskUserResumes(t *testing.T) {
	docs := datadir.Require(t, "tatqa/tatqa_dataset_dev.json")
	rec := filepath.Join("..", "..", "examples", "intentqa", "sessions", "ask_user.jsonl")
	store := filepath.Join(t.TempDir(), "threads.db")
	r := weft(t, []string{"run", filepath.Join("..", "..", "examples", "intentqa", "app.wf"), "--input", "numbers?",
		"--docs", docs, "--llm", "replay:" + rec, "--thread", "q1", "--store", store})
	r.wantCode(t, exitWaiting)
	if !strings.Contains(r.stdout+r.stderr, "Could you clarify your request?") {
		t.Errorf("the waiting run does not show the question: %q %q", r.stdout, r.stderr)
	}
	r = weft(t, []string{"resume", "q1", "--store", store, "--answer", "What is the amount of total sales in 2019?"})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "$1,496.5 million") {
		t.Errorf("resumed stdout = %q", r.stdout)
	}
}

// weft index writes a retrieval index that --docs opens instead of indexing
// TAT-QA again; the recorded qa session runs the same on it.
func TestIntentQAOnAnIndexFile(t *testing.T) {
	docs := datadir.Require(t, "tatqa/tatqa_dataset_dev.json")
	idx := filepath.Join(t.TempDir(), "tatqa.db")
	r := weft(t, []string{"index", docs, "-o", idx})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "278 documents") {
		t.Errorf("index stdout = %q", r.stdout)
	}
	r = weft(t, []string{"run", filepath.Join("..", "..", "examples", "intentqa", "app.wf"), "--docs", idx,
		"--llm", "replay:" + filepath.Join("..", "..", "examples", "intentqa", "sessions", "qa.jsonl"),
		"--input", "What is the amount of total sales in 2019?"})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "$1,496.5 million") {
		t.Errorf("stdout = %q", r.stdout)
	}
	if r := weft(t, []string{"index", docs}); r.code != exitUsage {
		t.Errorf("index without -o: exit %d", r.code)
	}
}
