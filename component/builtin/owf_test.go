package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/owf"
)

// runOWF registers the actions of the action.owf component x into a new
// registry, compiles the ollama-workflows document at path against it and
// runs it with input.
func runOWF(t *testing.T, x component.Component, path, input string) (*engine.Result, error) {
	t.Helper()
	reg := engine.NewRegistry()
	if err := x.(component.ActionProvider).RegisterActions(reg); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := owf.Load(path, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := owf.Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	plan, ds := flow.Compile(w, &flow.CompileOptions{HasAction: reg.Has})
	if plan == nil {
		t.Fatal(ds)
	}
	return (&engine.Runner{Registry: reg}).Run(context.Background(), plan, map[string]flow.Value{flow.InputText: flow.StringValue(input)}, nil)
}

// TestOWFRunsTheExample runs examples/owf/workflow.json with the
// component built by OWFSpec from the CLI's flags and environment, the
// model being a fake Ollama server.
func TestOWFRunsTheExample(t *testing.T) {
	srv := llmtest.NewOllamaServer(
		llmtest.Text("Mount Everest, in the Himalaya on the border of Nepal and China, is the tallest mountain above sea level at 8,849 metres."),
		llmtest.Text("Mount Everest is the tallest mountain, at 8,849 metres."),
	)
	defer srv.Close()
	vars := map[string]string{"OLLAMA_HOST": srv.BaseURL()}
	getenv := func(k string) string { return vars[k] }
	spec, err := builtin.OWFSpec("ollama:llama3.1", "", getenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	x, err := registry(t).Load(context.Background(), spec, &component.Env{Getenv: getenv, Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer component.CloseAll(x)
	res, err := runOWF(t, x, "../../examples/owf/workflow.json", "What is the tallest mountain?")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Output("result").Str(); got != "Mount Everest is the tallest mountain, at 8,849 metres." {
		t.Errorf("result = %q", got)
	}
	if want := []string{"__start", "answer", "condense", "__return"}; !slices.Equal(res.Path, want) {
		t.Errorf("path %v, want %v", res.Path, want)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q with a model", warnings)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	// The Ollama dialect: the system message goes as a user one, and
	// max_tokens is the reference's 250.
	m := reqs[0].Request.Messages
	if reqs[0].Request.Model != "llama3.1" || m[0].Role != llm.User || m[0].Content != "You answer questions about geography accurately." || m[1].Content != "What is the tallest mountain?" {
		t.Errorf("first request: model %q, messages %+v", reqs[0].Request.Model, m)
	}
	if reqs[1].Request.MaxTokens != 250 || !strings.Contains(reqs[1].Request.Messages[0].Content, "Mount Everest, in the Himalaya") {
		t.Errorf("second request: max_tokens %d, messages %+v", reqs[1].Request.MaxTokens, reqs[1].Request.Messages)
	}
}

// TestOWFWithoutAModelWarnsAndFails: no llm, a warning, and the
// generation tasks fail when they run (never an empty success).
func TestOWFWithoutAModelWarnsAndFails(t *testing.T) {
	var warnings []string
	x, err := registry(t).Load(context.Background(), component.Spec{ID: "action.owf"}, &component.Env{
		Getenv: func(string) string { return "" },
		Warn:   func(m string) { warnings = append(warnings, m) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer component.CloseAll(x)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "action.owf") || !strings.Contains(warnings[0], "no model") {
		t.Errorf("warnings %q, want one saying there is no model", warnings)
	}
	res, err := runOWF(t, x, "../../examples/owf/workflow.json", "What is the tallest mountain?")
	// The run ends in __fail with the reference's message, which names
	// the task's error.
	if err == nil || res.Status != engine.Failed || !strings.Contains(err.Error(), `GenerationFailed("no model is configured")`) {
		t.Fatalf("run without a model: status %v, %v; want it failed for want of a model", res.Status, err)
	}
	if !slices.Equal(res.Path, []string{"__start", "answer", "__fail"}) {
		t.Errorf("path %v: want answer failed, and no other task run", res.Path)
	}
}

// TestOWFSpecHoldsNoSecret builds the spec with every key set in the
// environment: it names the variables, and holds none of their values.
func TestOWFSpecHoldsNoSecret(t *testing.T) {
	vars := map[string]string{
		"WEFT_LLM":          "openai:gpt-4o-mini",
		"OPENAI_API_KEY":    "sk-SECRET-openai",
		"JINA_API_KEY":      "SECRET-jina",
		"SERPER_API_KEY":    "SECRET-serper",
		"BROWSERLESS_TOKEN": "SECRET-browserless",
		"API_KEY":           "SECRET-api",
		"WEFT_JINA_URL":     "http://jina.test/",
		"WEFT_STOCK_URL":    "http://stock.test/",
	}
	getenv := func(k string) string { return vars[k] }
	spec, err := builtin.OWFSpec("", "", getenv, &builtin.Policy{MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "SECRET") {
		t.Fatalf("the spec holds a secret: %s", b)
	}
	// The model of WEFT_LLM, the embedder the reference picks when
	// OPENAI_API_KEY is set, the endpoints, and the keys by name.
	want := `{"id":"action.owf","config":{` +
		`"llm":{"id":"llm.openai","config":{"api_key":{"env":"OPENAI_API_KEY"},"model":"gpt-4o-mini","policy":{"max_attempts":2}}},` +
		`"embed":{"id":"embed.openai","config":{"api_key":{"env":"OPENAI_API_KEY"},"model":"text-embedding-ada-002"}},` +
		`"tools":{"jina_url":"http://jina.test/","stock_url":"http://stock.test/",` +
		`"jina_key":{"env":"JINA_API_KEY"},"serper_key":{"env":"SERPER_API_KEY"},"browserless_token":{"env":"BROWSERLESS_TOKEN"},"api_key":{"env":"API_KEY"}}}}`
	if string(b) != want {
		t.Errorf("spec\n%s\nwant\n%s", b, want)
	}
	// It loads from the environment alone.
	x, err := registry(t).Load(context.Background(), spec, &component.Env{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if err := component.CloseAll(x, x); err != nil {
		t.Errorf("Close twice: %v", err)
	}
}

// TestOWFSpecDefaults: without flags or WEFT_*, no model and the
// reference's Ollama embedder; a bad spec is a *providers.SpecError.
func TestOWFSpecDefaults(t *testing.T) {
	spec, err := builtin.OWFSpec("", "", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cfg builtin.OWF
	if err := json.Unmarshal(spec.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.LLM != nil {
		t.Errorf("llm = %s, want none", cfg.LLM.Config)
	}
	if cfg.Embed == nil || cfg.Embed.ID != "embed.ollama" || !strings.Contains(string(cfg.Embed.Config), `"model":"hellord/mxbai-embed-large-v1:f16"`) {
		t.Errorf("embed = %+v, want the reference's Ollama embedder", cfg.Embed)
	}
	if got := builtin.OWFDefaultEmbed(func(string) string { return "" }); got != "ollama:hellord/mxbai-embed-large-v1:f16" {
		t.Errorf("OWFDefaultEmbed = %q", got)
	}
	if _, err := builtin.OWFSpec("ollama", "", func(string) string { return "" }, nil); err == nil || !strings.Contains(err.Error(), "no model after the provider") {
		t.Errorf("OWFSpec(ollama) = %v, want a spec error", err)
	}
	if _, err := builtin.OWFSpec("", "anthropic:x", func(string) string { return "" }, nil); err == nil || !strings.Contains(err.Error(), "has no embeddings") {
		t.Errorf("OWFSpec(embed anthropic) = %v, want a spec error", err)
	}
}

// TestOWFEmbedderPrefixesOllamaQueries checks that an embed.ollama
// embedder gets the reference's query prefix on a file-system search, and
// an embed.openai one does not.
func TestOWFEmbedderPrefixesOllamaQueries(t *testing.T) {
	doc := `{"config": {"max_steps": 10, "max_time": 10},
	  "external_memory": {"notes": ["the harbour opens at six", "the bakery sells rye"]},
	  "tasks": [{"id": "find", "operator": "search", "prompt": "{q}",
	    "inputs": [{"name": "q", "value": {"type": "input", "key": ""}, "required": true}],
	    "outputs": [{"type": "write", "key": "hit", "value": "__result"}]}],
	  "steps": [{"source": "find", "target": "__end"}],
	  "return_value": {"input": {"type": "read", "key": "hit"}}}`
	path := t.TempDir() + "/search.json"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	x, err := registry(t).Load(context.Background(), component.Spec{ID: "action.owf", Config: json.RawMessage(
		`{"embed":{"id":"embed.ollama","config":{"base_url":"` + srv.URL + `","model":"mxbai"}}}`)}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer component.CloseAll(x)
	_, _ = runOWF(t, x, path, "when does the harbour open")
	var queries []string
	for _, r := range srv.EmbedRequests() {
		queries = append(queries, r.Embed.Input...)
	}
	if !slices.Contains(queries, owf.OllamaQueryPrefix+"when does the harbour open") {
		t.Errorf("embedded %q; want the query with the Ollama prefix", queries)
	}
}
