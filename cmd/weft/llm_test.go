package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm/llmtest"
)

// A workflow whose actions are LLM prompts runs against an OpenAI-compatible
// server chosen by --llm; --record writes the exchanges, and --llm
// replay:FILE runs the same workflow again offline, with the same result.
func TestRunLLMRecordReplay(t *testing.T) {
	srv := llmtest.NewOpenAIServer(llmtest.JSON(map[string]any{"intent": "qa"}), llmtest.Text("Revenue in 2019 was $4.2M."))
	defer srv.Close()
	getenv := openAIEnv(srv, "sk-test-secret")
	rec := filepath.Join(t.TempDir(), "route.jsonl")
	args := []string{"run", "testdata/llm_route.wf", "--input", "What was the 2019 revenue?"}

	live := weft(t, append(args, "--llm", "openai:gpt-test", "--record", rec), func(e *env) { e.getenv = getenv })
	live.wantCode(t, 0)
	if !strings.Contains(live.stdout, "text: Revenue in 2019 was $4.2M.") {
		t.Fatalf("stdout = %q", live.stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("server got %d requests, want 2", len(reqs))
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "sk-test-secret") {
		t.Fatal("the recording holds the API key")
	}
	if n := strings.Count(strings.TrimSpace(string(data)), "\n") + 1; n != 2 {
		t.Errorf("recording has %d lines, want one per exchange", n)
	}

	srv.Close() // replay must not need the server
	replayed := weft(t, append(args, "--llm", "replay:"+rec, "--json"))
	replayed.wantCode(t, 0)
	if !strings.Contains(replayed.stdout, `"text":"Revenue in 2019 was $4.2M."`) && !strings.Contains(replayed.stdout, `"Revenue in 2019 was $4.2M."`) {
		t.Errorf("replayed stdout = %q", replayed.stdout)
	}

	// A request that was never recorded fails, naming the closest one.
	miss := weft(t, []string{"run", "testdata/llm_route.wf", "--input", "What was the 2020 revenue?", "--llm", "replay:" + rec})
	miss.wantCode(t, 1)
	if !strings.Contains(miss.stderr, "2019") || !strings.Contains(miss.stderr, "classify") {
		t.Errorf("miss stderr = %q: want the node and the closest recorded request", miss.stderr)
	}
}

// Without --llm and WEFT_LLM, a run whose LLM action needs a model stops
// before its first step, a usage error saying how to choose one.
func TestRunLLMWithoutModel(t *testing.T) {
	r := weft(t, []string{"run", "testdata/llm_route.wf", "--input", "hi"})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "--llm") {
		t.Errorf("stderr = %q", r.stderr)
	}
}

// tokens(x) is an expression function of every command that compiles
// workflows.
func TestTokensInConditions(t *testing.T) {
	r := weft(t, []string{"validate", "testdata/budget.wf"})
	r.wantCode(t, 0)
	stubs := filepath.Join(t.TempDir(), "stubs.yaml")
	long := strings.Repeat("row 1, Rock, 3.99; ", 200)
	if err := os.WriteFile(stubs, []byte("stubs:\n  execute_sql: [{result: \""+long+"\"}]\n  refine_sql: [{}]\n  create_query_analysis: [{}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = weft(t, []string{"run", "testdata/budget.wf", "--stubs", stubs, "--json"})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, `"refine"`) {
		t.Errorf("a 1,400-token result did not go through refine: %s", r.stdout)
	}
}

var updateReplay = flag.Bool("update-replay", false, "record examples/route/route.replay.jsonl again, from the fake server")

// The route example runs offline from its committed recording, with the
// same answer every time.
func TestExampleRouteReplay(t *testing.T) {
	const wf, rec = "../../examples/route/route.wf", "../../examples/route/route.replay.jsonl"
	args := []string{"run", wf, "--input", "What was the 2019 revenue?"}
	if *updateReplay {
		srv := llmtest.NewOpenAIServer(llmtest.JSON(map[string]any{"intent": "qa"}),
			llmtest.Text("Total revenue in fiscal 2019 was $4.2M, up from $3.1M in 2018."))
		defer srv.Close()
		getenv := openAIEnv(srv, "")
		weft(t, append(args, "--llm", "openai:fake-model", "--record", rec), func(e *env) { e.getenv = getenv }).wantCode(t, 0)
	}
	r := weft(t, append(args, "--llm", "replay:"+rec))
	r.wantCode(t, 0)
	if r.stdout != "text: Total revenue in fiscal 2019 was $4.2M, up from $3.1M in 2018.\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
}

// An API key that a provider (or a proxy in front of it) echoes in its
// error reaches none of what weft run writes: stdout with --json, the
// --trace events, the --record file, the store that keeps the run's error.
func TestRunLLMKeyEchoedInErrorIsRedacted(t *testing.T) {
	const key = "sk-e2e-SECRET-0123456789"
	for _, tc := range []struct {
		proto     llmtest.Protocol
		spec      string
		base, env string
	}{
		{llmtest.OpenAI, "openai:gpt-test", "OPENAI_BASE_URL", "OPENAI_API_KEY"},
		{llmtest.Anthropic, "anthropic:claude-test", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"},
		{llmtest.Ollama, "ollama:llama-test", "OLLAMA_HOST", "OLLAMA_API_KEY"},
	} {
		t.Run(string(tc.proto), func(t *testing.T) {
			srv := llmtest.NewServer(tc.proto)
			defer srv.Close()
			srv.Repeat(llmtest.Reply{Status: 401, ErrorMessage: "invalid credentials", EchoHeaders: true})
			getenv := func(k string) string {
				switch k {
				case tc.base:
					return srv.BaseURL()
				case tc.env:
					return key
				}
				return ""
			}
			dir := t.TempDir()
			rec := filepath.Join(dir, "run.jsonl")
			store := filepath.Join(dir, "store.db")
			r := weft(t, []string{"run", "testdata/llm_route.wf", "--input", "q?", "--llm", tc.spec,
				"--json", "--trace", "--record", rec, "--store", store}, func(e *env) { e.getenv = getenv })
			if r.code == 0 {
				t.Fatalf("the run succeeded against a 401\nstdout:\n%s", r.stdout)
			}
			if len(srv.Requests()) == 0 {
				t.Fatal("the server got no request")
			}
			if !strings.Contains(r.stdout+r.stderr, "[REDACTED]") {
				t.Errorf("the echoed key was not reported as redacted\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			for what, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if strings.Contains(text, key) {
					t.Errorf("%s holds the key:\n%s", what, text)
				}
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(data), key) {
					t.Errorf("%s holds the key", filepath.Base(f))
				}
			}
		})
	}
}

// A reply cut mid-way is retried from the start when nothing of it was
// shown (no --trace): the run succeeds, as docs/cli.md says. With --trace
// the tokens already printed cannot be taken back: the run fails, saying
// why the cut was not retried.
func TestRunLLMCutReplyIsRetried(t *testing.T) {
	answer := "Revenue in 2019 was $4.2M, as the report says on page four."
	cutJSON := llmtest.JSON(map[string]any{"intent": "qa"})
	cutJSON.Cut, cutJSON.FaultAfter, cutJSON.ChunkSize = true, 2, 3
	cutText := llmtest.Reply{Text: answer, Cut: true, FaultAfter: 3, ChunkSize: 3}
	srv := llmtest.NewOpenAIServer(cutJSON, llmtest.JSON(map[string]any{"intent": "qa"}), cutText, llmtest.Text(answer))
	defer srv.Close()
	getenv := openAIEnv(srv, "")
	args := []string{"run", "testdata/llm_route.wf", "--input", "What was the 2019 revenue?", "--llm", "openai:gpt-test"}
	r := weft(t, args, func(e *env) { e.getenv = getenv })
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, answer) {
		t.Errorf("stdout = %q", r.stdout)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests, want 4: each cut reply asked again once", n)
	}

	srv.Push(llmtest.JSON(map[string]any{"intent": "qa"}), cutText, llmtest.Text(answer))
	r = weft(t, append(args, "--trace"), func(e *env) { e.getenv = getenv })
	r.wantCode(t, 1)
	if !strings.Contains(r.stderr, "stream cut") || !strings.Contains(r.stderr, "not retried, because") {
		t.Errorf("stderr = %q: want the cut and why it was not retried", r.stderr)
	}
}

// A 429 asking to retry after an hour fails the run at once, saying so
// and naming the most weft waits.
func TestRunLLMRetryAfterTooLong(t *testing.T) {
	srv := llmtest.NewOpenAIServer()
	defer srv.Close()
	srv.Repeat(llmtest.RateLimited("3600"))
	getenv := openAIEnv(srv, "")
	r := weft(t, []string{"run", "testdata/llm_route.wf", "--input", "q?", "--llm", "openai:gpt-test"}, func(e *env) { e.getenv = getenv })
	r.wantCode(t, 1)
	if !strings.Contains(r.stderr, "the server asked to retry after 1h0m0s, more than the 30s this model waits at most") {
		t.Errorf("stderr = %q", r.stderr)
	}
}
