package owf

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
)

// fake starts a fake Ollama server and returns Options using it for chat
// and embeddings.
func fake(t *testing.T, script ...llmtest.Reply) (*llmtest.Server, Options) {
	t.Helper()
	srv := llmtest.NewOllamaServer(script...)
	t.Cleanup(srv.Close)
	c := ollama.New(ollama.Config{BaseURL: srv.BaseURL(), Model: "llama3.1"})
	return srv, Options{Model: c, ModelName: "llama3.1", Embedder: c, EmbedModel: "mxbai-embed-large"}
}

func TestScenario12PromptFilling(t *testing.T) {
	srv, opts := fake(t, llmtest.Reply{Text: "ok"}, llmtest.Reply{Text: "ok"})
	inputs := `[{"name":"a","value":{"type":"string","key":"X"},"required":true},{"name":"h","value":{"type":"get_all","key":"s"},"required":false},{"name":"n","value":{"type":"read","key":"none"},"required":false}]`
	src := `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["p","q"]},"tasks":[
	{"id":"A","operator":"generation","messages":[{"role":"system","content":"sys {a}"},{"role":"assistant","content":"prev {h}"},{"role":"user","content":"[{a}] [{{a}}] [{missing}] [{h}] [{n}]"}],"inputs":` + inputs + `},
	{"id":"B","operator":"function_calling","messages":[{"role":"system","content":"not sent {a}"},{"role":"user","content":"only {a}"}],"inputs":` + inputs + `}],
	"steps":[{"source":"A","target":"B"},{"source":"B","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	mustRun(t, src, opts)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	got := reqs[0].Request.Messages
	want := []llm.Message{{Role: llm.System, Content: "sys X"}, {Role: llm.Assistant, Content: "prev p \nq \n"}, {Role: llm.User, Content: "[X] [{X}] [{missing}] [p \nq \n] []"}}
	if len(got) != len(want) {
		t.Fatalf("messages = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Content != want[i].Content {
			t.Errorf("message %d = %s %q, want %s %q", i, got[i].Role, got[i].Content, want[i].Role, want[i].Content)
		}
	}
	fc := reqs[1].Request.Messages
	if len(fc) != 1 || fc[0].Role != llm.User || fc[0].Content != "only X" {
		t.Errorf("function calling sent %+v, want the last message alone as user", fc)
	}

	// The Ollama dialect turns system into user and asks for 250 tokens.
	srv, opts = fake(t, llmtest.Reply{Text: "ok"}, llmtest.Reply{Text: "ok"})
	opts.Dialect = DialectOllama
	mustRun(t, src, opts)
	r := srv.Requests()[0].Request
	if r.Messages[0].Role != llm.User || r.MaxTokens != 250 {
		t.Errorf("ollama dialect: role %s, max_tokens %d; want user and 250", r.Messages[0].Role, r.MaxTokens)
	}
}

func calcTools(mode string) string {
	if mode == "custom" {
		return `"custom_tools":[{"name":"calculator","description":"adds","mode":"custom","parameters":{"type":"object","properties":{"lhs":{"type":"number"},"rhs":{"type":"number"}}}}]`
	}
	return `"custom_tools":[]`
}

func fcDoc(op, tools string) string {
	return `{"config":{"max_steps":10,"max_time":10,"tools":` + tools + `,` + calcTools("custom") + `},"tasks":[` +
		task("A", op, []string{"add"}, "", `[{"type":"write","key":"r","value":"__result"}]`) +
		`],"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
}

func TestScenario18FunctionCalling(t *testing.T) {
	two := llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "1", Name: "calculator", Arguments: json.RawMessage(`{"lhs": 1}`)}, {ID: "2", Name: "calculator", Arguments: json.RawMessage(`{"rhs":2}`)}}}
	srv, opts := fake(t, two)
	out, res := mustRun(t, fcDoc("function_calling_raw", "[]"), opts)
	want := `{"arguments":{"lhs":1},"name":"calculator"}` + "\n\n" + `{"arguments":{"rhs":2},"name":"calculator"}`
	if out != want {
		t.Errorf("raw, two calls = %q, want %q", out, want)
	}
	if e, _ := cacheEntry(t, res, "r"); e.JSON {
		t.Errorf("two calls are stored as JSON; want a plain string")
	}
	if tl := srv.Requests()[0].Request.Tools; len(tl) != 1 || tl[0].Name != "calculator" || !strings.Contains(string(tl[0].Parameters), `"lhs"`) {
		t.Errorf("tools declared = %+v, want the custom calculator with its schema", tl)
	}

	_, opts = fake(t, llmtest.Reply{ToolCalls: two.ToolCalls[:1]})
	_, res = mustRun(t, fcDoc("function_calling_raw", "[]"), opts)
	if e, _ := cacheEntry(t, res, "r"); !e.JSON || e.Text != `{"arguments":{"lhs":1},"name":"calculator"}` {
		t.Errorf("raw, one call = %+v, want it stored as JSON", e)
	}

	_, opts = fake(t, llmtest.Reply{Text: "no tools needed"})
	out, _ = mustRun(t, fcDoc("function_calling_raw", "[]"), opts)
	if out != "" {
		t.Errorf("raw, no call = %q, want empty", out)
	}

	_, opts = fake(t, llmtest.Reply{ToolCalls: two.ToolCalls[:1]})
	_, _, err := run(t, fcDoc("function_calling", "[]"), nil, opts)
	wantWorkflowError(t, err, `FunctionCallFailed("Custom mode can't execute tools, use function_calling_raw")`)

	for _, tools := range []string{`["nope"]`, `["ALL","jina"]`} {
		_, opts = fake(t, two)
		_, _, err := run(t, fcDoc("function_calling", tools), nil, opts)
		var we *WorkflowError
		if !errors.As(err, &we) || !strings.Contains(err.Error(), "nope") && !strings.Contains(err.Error(), "ALL") {
			t.Errorf("tools %s: error = %v, want a run failure naming the tool", tools, err)
		}
	}
}

func TestFileSystemInsertSearchHaveSimilar(t *testing.T) {
	_, opts := fake(t)
	facts := []string{
		"The Cappadocia region in Turkey is famous for its fairy chimneys and balloons.",
		"Photosynthesis converts light energy into chemical energy in green plants.",
		"The Rust programming language guarantees memory safety without a garbage collector.",
	}
	mk := func(era, condExpected string) string {
		msgs := func(m string) string { return `"messages":[{"role":"user","content":"` + m + `"}]` }
		if era == "prompt" {
			msgs = func(m string) string { return `"prompt":"` + m + `"` }
		}
		var inserts []string
		for _, f := range facts {
			inserts = append(inserts, `{"type":"insert","key":"","value":"`+f+`"}`)
		}
		return `{"config":{"max_steps":20,"max_time":10},"tasks":[
		{"id":"I","operator":"sample",` + msgs("facts") + `,"outputs":[` + strings.Join(inserts, ",") + `]},
		{"id":"S","operator":"search",` + msgs("{q}") + `,"inputs":[{"name":"q","value":{"type":"string","key":"memory safety Rust garbage collector"},"required":true}],"outputs":[{"type":"write","key":"hits","value":"__result"}]},
		{"id":"H","operator":"sample",` + msgs("similar") + `,"outputs":[{"type":"write","key":"sim","value":"__result"}]},
		{"id":"N","operator":"sample",` + msgs("not similar") + `,"outputs":[{"type":"write","key":"sim","value":"__result"}]}],
		"steps":[{"source":"I","target":"S"},
		{"source":"S","target":"H","condition":{"input":{"type":"read","key":"x"},"expression":"HaveSimilar","expected":` + condExpected + `,"target_if_not":"N"}},
		{"source":"H","target":"__end"},{"source":"N","target":"__end"}],
		"return_value":{"input":[{"type":"read","key":"hits"},{"type":"read","key":"sim"}]}}`
	}
	exact, _ := json.Marshal(facts[1])
	out, res, err := run(t, mk("prompt", string(exact)), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The prompt era's search: the three passages, best first, rendered as
	// a list; then the HaveSimilar branch's value.
	if !strings.HasPrefix(out, `{"passage":"The Rust programming language`) || strings.Count(out, `"passage"`) != 3 {
		t.Errorf("search hits = %q, want three passages, the Rust fact first", out)
	}
	if !strings.HasSuffix(out, " \n \nsimilar \n") {
		t.Errorf("result = %q, want HaveSimilar of a stored passage to take the similar branch", out)
	}
	for _, v := range res.Vars {
		if v.Name == varFiles && v.Value.Len() != 3 {
			t.Errorf("file system holds %d chunks, want 3", v.Value.Len())
		}
	}
	out, _, err = run(t, mk("prompt", `"quantum chromodynamics of gluons"`), nil, opts)
	if err != nil || !strings.HasSuffix(out, "not similar \n") {
		t.Errorf("HaveSimilar of an unrelated text: %q, %v; want not similar", out, err)
	}
}

func TestHaveSimilarOnEmptyFileSystemIsAnError(t *testing.T) {
	_, opts := fake(t)
	src := `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["a","b"]},"tasks":[` + task("A", "sample", []string{"x"}, "", "") +
		`],"steps":[{"source":"A","target":"__end","condition":{"input":{"type":"pop","key":"s"},"expression":"HaveSimilar","expected":"x","target_if_not":"A"}}],"return_value":{"input":{"type":"get_all","key":"s"}}}`
	_, res, err := run(t, src, nil, opts)
	var we *WorkflowError
	if !errors.As(err, &we) || !strings.Contains(we.Msg, "file system is empty") {
		t.Fatalf("error = %v, want a run failure (the reference panics)", err)
	}
	if got := stack(t, res, "s"); len(got) != 1 {
		t.Errorf("stack s = %q: the condition's pop should have happened", got)
	}
}

func TestMaxTimeIsPreemptive(t *testing.T) {
	_, opts := fake(t, llmtest.Reply{Text: "late", Latency: 5 * time.Second})
	src := `{"config":{"max_steps":10,"max_time":1},"tasks":[` + task("A", "generation", []string{"slow"}, "", `[{"type":"write","key":"r","value":"__result"}]`) +
		`],"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	start := time.Now()
	_, _, err := run(t, src, nil, opts)
	wantWorkflowError(t, err, "Max execution time exceeded")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the run took %v: max_time 1 s should cut the 5 s LLM call short", d)
	}
}

func TestGenerationErrorsAndSchemas(t *testing.T) {
	_, opts := fake(t, llmtest.Reply{Status: 400, ErrorMessage: "model not found"})
	src := func(schema string) string {
		s := ""
		if schema != "" {
			s = `,"schema":` + schema
		}
		return `{"config":{"max_steps":10,"max_time":10,"max_tokens":77},"tasks":[{"id":"A","operator":"generation","messages":[{"role":"user","content":"q"}]` + s + `,"outputs":[{"type":"write","key":"r","value":"__result"}]}],` +
			`"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	}
	_, _, err := run(t, src(""), nil, opts)
	var we *WorkflowError
	if !errors.As(err, &we) || !strings.HasPrefix(we.Msg, `GenerationFailed("`) || !strings.Contains(we.Msg, "model not found") {
		t.Errorf("error = %v, want GenerationFailed with the provider's message", err)
	}

	// Ollama: a base64 schema becomes a leading assistant message.
	srv, opts := fake(t, llmtest.Reply{Text: `{"b":2, "a":1}`})
	opts.Dialect = DialectOllama
	out, _ := mustRun(t, src(`"eyJhIjogMX0="`), opts)
	r := srv.Requests()[0].Request
	if out != `{"a":1,"b":2}` || r.Messages[0].Role != llm.Assistant || r.Messages[0].Content != `{"a": 1}` || r.MaxTokens != 77 {
		t.Errorf("ollama schema: result %q, first message %+v, max_tokens %d", out, r.Messages[0], r.MaxTokens)
	}
	_, opts = fake(t)
	opts.Dialect = DialectOllama
	_, _, err = run(t, src(`"not base64!"`), nil, opts)
	wantWorkflowError(t, err, `GenerationFailed("Schema format invalid")`)
}

func TestInsertSplitsIntoChunks(t *testing.T) {
	srv, opts := fake(t)
	long := strings.Repeat("Fairy chimneys rise over the valleys of Cappadocia. ", 12) + "\n\nok\n\n" + strings.Repeat("Balloons fly at dawn above the rock churches. ", 6)
	lit, _ := json.Marshal(long)
	src := `{"config":{"max_steps":10,"max_time":10},"tasks":[{"id":"A","operator":"sample","messages":[{"role":"user","content":"x"}],"outputs":[{"type":"insert","key":"","value":` + string(lit) + `}]}],` +
		`"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	_, res := mustRun(t, src, opts)
	var chunks []string
	for _, v := range res.Vars {
		if v.Name == varFiles {
			for _, c := range v.Value.List() {
				ch, ok := chunkOf(c)
				if !ok {
					t.Fatalf("file system holds %v", c)
				}
				chunks = append(chunks, ch.text)
			}
		}
	}
	if len(chunks) < 3 {
		t.Fatalf("%d chunks: %q", len(chunks), chunks)
	}
	for _, c := range chunks {
		if n := len([]rune(c)); n > 250 || len(c) < minChunk || c != strings.TrimSpace(c) {
			t.Errorf("chunk of %d runes %q: want trimmed, 25 bytes to 250 runes", n, c)
		}
		if c == "ok" {
			t.Errorf("the 2-byte chunk was kept")
		}
	}
	if reqs := srv.EmbedRequests(); len(reqs) != 1 || len(reqs[0].Embed.Input) != len(chunks) {
		t.Errorf("embedding requests: %d; want one with every chunk", len(reqs))
	}
}
