package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm/llmtest"
)

func ollamaEnv(srv *llmtest.Server) func(*env) {
	return func(e *env) {
		e.getenv = func(k string) string {
			if k == "OLLAMA_HOST" {
				return srv.BaseURL()
			}
			return ""
		}
	}
}

// A dead model server (500 on every call, after the retries; a 404 for
// a model it does not have; a 400 for a prompt over the context window)
// is a failed run, exit 1, naming the node and
// carrying the server's message: never a "completed" run of defaults.
func TestRunDeadModelServerFails(t *testing.T) {
	for _, reply := range []llmtest.Reply{
		llmtest.Status(500, "model runner has unexpectedly stopped"),
		llmtest.Status(404, `model "tiny" not found, try pulling it first`),
		// A prompt longer than the context window: the server's counts
		// reach the user, with the node.
		llmtest.Status(400, "the input length (9000 tokens) exceeds the context length (8192 tokens)"),
	} {
		srv := llmtest.NewOllamaServer()
		srv.Repeat(reply)
		r := weft(t, []string{"run", "testdata/llm_route.wf", "--llm", "ollama:tiny", "--input", "hi", "--json"}, ollamaEnv(srv))
		srv.Close()
		r.wantCode(t, exitFailed)
		var got struct {
			Status    string `json:"status"`
			Error     string `json:"error"`
			Fallbacks []any  `json:"fallbacks"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		if got.Status != "failed" || !strings.Contains(got.Error, "node classify") || !strings.Contains(got.Error, reply.ErrorMessage) ||
			got.Fallbacks == nil || len(got.Fallbacks) != 0 {
			t.Errorf("HTTP %d: %+v", reply.Status, got)
		}
		if !strings.Contains(r.stderr, "node classify") || !strings.Contains(r.stderr, reply.ErrorMessage) {
			t.Errorf("HTTP %d: stderr %q", reply.Status, r.stderr)
		}
	}
}

// A fallback the workflow asks for is taken, and seen: a line on stderr
// for each, and the fallbacks list of --json.
func TestRunFallbackIsVisible(t *testing.T) {
	src, err := os.ReadFile("testdata/llm_route.wf")
	if err != nil {
		t.Fatal(err)
	}
	wf := strings.Replace(string(src), `prompt: "Classify the request as qa, summarization or not_clear: {{input_text}}"`,
		`prompt: "Classify the request as qa, summarization or not_clear: {{input_text}}"
  fallback: { intent: "not_clear" }`, 1)
	wf = strings.Replace(wf, `prompt: "Answer briefly: {{question}}"`, `prompt: "Answer briefly: {{question}}"
  fallback: { text: "The model is unavailable." }`, 1)
	path := filepath.Join(t.TempDir(), "route.wf")
	if err := os.WriteFile(path, []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	srv.Repeat(llmtest.Status(500, "model runner has unexpectedly stopped"))

	r := weft(t, []string{"run", path, "--llm", "ollama:tiny", "--input", "hi"}, ollamaEnv(srv))
	r.wantCode(t, exitOK)
	if r.stdout != "text: The model is unavailable.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	want := `weft: node classify fell back to {intent: "not_clear"}: structured: attempt 1: ollama: HTTP 500: model runner has unexpectedly stopped; gave up after 3 attempts`
	if !strings.Contains(r.stderr, want+"\n") || !strings.Contains(r.stderr, `weft: node reply fell back to {text: "The model is unavailable."}: ollama: HTTP 500`) {
		t.Errorf("stderr %q\nwant a line %q", r.stderr, want)
	}

	r = weft(t, []string{"run", path, "--llm", "ollama:tiny", "--input", "hi", "--json"}, ollamaEnv(srv))
	r.wantCode(t, exitOK)
	var got struct {
		Status    string `json:"status"`
		Fallbacks []struct {
			Kind    string         `json:"kind"`
			Node    string         `json:"node"`
			Step    int            `json:"step"`
			Message string         `json:"message"`
			Values  map[string]any `json:"values"`
		} `json:"fallbacks"`
		Notices []any `json:"notices"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if got.Status != "completed" || len(got.Fallbacks) != 2 || len(got.Notices) != 2 {
		t.Fatalf("%s", r.stdout)
	}
	fb := got.Fallbacks[0]
	if fb.Kind != "fallback" || fb.Node != "classify" || fb.Step != 1 || fb.Values["intent"] != "not_clear" || !strings.Contains(fb.Message, "HTTP 500: model runner has unexpectedly stopped") {
		t.Errorf("fallback %+v", fb)
	}
}

// A text reply cut at the token limit is the output, with a warning on
// stderr and in the notices of --json.
func TestRunCutReplyWarns(t *testing.T) {
	srv := llmtest.NewOllamaServer(llmtest.JSON(map[string]any{"intent": "qa"}), llmtest.Reply{Text: "Revenue in 2019", FinishReason: "length"})
	defer srv.Close()
	r := weft(t, []string{"run", "testdata/llm_route.wf", "--llm", "ollama:tiny", "--input", "hi", "--json"}, ollamaEnv(srv))
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stderr, "weft: warning: node reply: the reply was cut at the token limit") {
		t.Errorf("stderr %q", r.stderr)
	}
	if !strings.Contains(r.stdout, `"kind": "truncated"`) || !strings.Contains(r.stdout, `"fallbacks": []`) {
		t.Errorf("stdout %s", r.stdout)
	}
}

// --context-tokens sets the context window of every LLM action that sets
// none: the requests carry it (as the recording shows); a negative one is
// a usage error.
func TestRunContextTokensFlag(t *testing.T) {
	srv := llmtest.NewOllamaServer(llmtest.JSON(map[string]any{"intent": "qa"}), llmtest.Text("ok"))
	defer srv.Close()
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	r := weft(t, []string{"run", "testdata/llm_route.wf", "--llm", "ollama:tiny", "--input", "hi", "--context-tokens", "8192", "--record", rec}, ollamaEnv(srv))
	r.wantCode(t, exitOK)
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"context_tokens":8192`); n != 2 {
		t.Errorf("%d requests carry the context window, want 2:\n%s", n, data)
	}
	r = weft(t, []string{"run", "testdata/llm_route.wf", "--llm", "ollama:tiny", "--input", "hi", "--context-tokens", "-3"}, ollamaEnv(srv))
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "--context-tokens") {
		t.Errorf("stderr %q", r.stderr)
	}
}
