package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/component/componenttest"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/tools"
)

func registry(t *testing.T) *component.Registry {
	t.Helper()
	r, err := builtin.New()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func env(vars map[string]string) *component.Env {
	return &component.Env{Getenv: func(k string) string { return vars[k] }}
}

func TestRegistryHoldsTheBuiltins(t *testing.T) {
	r := registry(t)
	want := []string{
		"action.builtin", "action.owf", "action.stubs", "embed.ollama", "embed.openai",
		"llm.anthropic", "llm.ollama", "llm.openai", "llm.replay",
		"search.bleve", "search.elasticsearch",
		"store.memory", "store.postgres", "store.sqlite",
		"tool.es", "tool.http", "tool.mcp", "tool.retrieve", "tool.sql",
	}
	if got := r.IDs(); !slices.Equal(got, want) {
		t.Errorf("IDs() = %v\nwant %v", got, want)
	}
	// A registry the caller owns: registering twice is refused, and a
	// second registry is independent of the first.
	if err := builtin.Register(r); !errors.Is(err, component.ErrDuplicate) {
		t.Errorf("Register twice = %v, want ErrDuplicate", err)
	}
	if other := component.NewRegistry(); len(other.IDs()) != 0 {
		t.Errorf("a new registry holds %v", other.IDs())
	}
}

// TestConformance runs componenttest for every built-in module; a module
// with no case here fails, so a new module cannot go unchecked.
func TestConformance(t *testing.T) {
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	oa := llmtest.NewOpenAIServer()
	defer oa.Close()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.jsonl")
	if err := os.WriteFile(rec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-oa-test", "PG_PW": "pw"})
	cases := map[string]struct {
		valid string
		opts  []componenttest.Option
	}{
		"action.builtin": {valid: `{}`},
		"action.owf": {valid: `{"llm":{"id":"llm.ollama","config":{"base_url":"` + srv.URL + `","model":"llama3.1"}},"embed":{"id":"embed.ollama","config":{"base_url":"` + srv.URL + `","model":"nomic-embed-text"}},"tools":{"jina_url":"http://127.0.0.1:9/","jina_key":{"env":"PG_PW"}}}`,
			opts: []componenttest.Option{
				componenttest.Invalid(`{"tools":{"serper_key":"sk-literal"}}`, component.ErrConfig),
				componenttest.Invalid(`{"llm":{"id":"embed.ollama","config":{"model":"m"}}}`, component.ErrWrongKind),
				componenttest.Invalid(`{"embed":{"id":"llm.ollama","config":{"model":"m"}}}`, component.ErrWrongKind),
				componenttest.Invalid(`{"llm":{"id":"llm.ollama","config":{"modle":"m"}}}`, component.ErrConfig),
				componenttest.Invalid(`{"llm":{"id":"llm.ollama"}}`, component.ErrProvision),
				componenttest.Invalid(`{"model":"llama3.1"}`, component.ErrProvision),
			}},
		"action.stubs": {valid: `{"stubs":{"classify":[{"kind":"quote"},{"error":"503"}],"fetch":[{"price":187.5,"n":3}]}}`,
			opts: []componenttest.Option{
				componenttest.Invalid(`{}`, component.ErrProvision),
				componenttest.Invalid(`{"file":"testdata/missing.yaml"}`, component.ErrProvision),
				componenttest.Invalid(`{"stubs":{"classify":[{"error":1}]}}`, component.ErrInvalid),
			}},
		"embed.ollama": {valid: `{"base_url":"` + srv.URL + `","model":"nomic-embed-text"}`,
			opts: []componenttest.Option{componenttest.Invalid(`{}`, component.ErrProvision)}},
		"embed.openai": {valid: `{"base_url":"` + oa.BaseURL() + `","model":"text-embedding-3-small"}`,
			opts: []componenttest.Option{componenttest.Invalid(`{"model":"m","api_key":"sk-x"}`, component.ErrConfig)}},
		"llm.anthropic": {valid: `{"model":"claude-sonnet-4-5","policy":{"timeout":"30s","max_attempts":2}}`,
			opts: []componenttest.Option{
				componenttest.Invalid(`{"api_key":{"env":"UNSET_KEY"}}`, component.ErrSecret),
				componenttest.Invalid(`{"max_tokens":-1}`, component.ErrInvalid),
				componenttest.Invalid(`{"policy":{"timeout":30}}`, component.ErrConfig),
			}},
		"llm.ollama": {valid: `{"base_url":"` + srv.URL + `","model":"llama3.1","options":{"num_ctx":8192}}`,
			opts: []componenttest.Option{componenttest.Invalid(`{"policy":{"jitter":2}}`, component.ErrInvalid)}},
		"llm.openai": {valid: `{"model":"gpt-4o-mini"}`,
			opts: []componenttest.Option{
				componenttest.Invalid(`{"max_tokens_field":"tokens"}`, component.ErrInvalid),
				componenttest.Invalid(`{"api_key":{"env":"UNSET_KEY"}}`, component.ErrSecret),
			}},
		"llm.replay":   {valid: `{"file":"` + rec + `"}`},
		"search.bleve": {valid: `{}`},
		"search.elasticsearch": {valid: `{"addresses":["http://127.0.0.1:9"],"username":"u","password":{"env":"PG_PW"}}`,
			opts: []componenttest.Option{
				componenttest.Invalid(`{"password":{"env":"PG_PW"}}`, component.ErrInvalid),
				componenttest.Invalid(`{"addresses":["http://u:p@h:9200"]}`, component.ErrProvision),
			}},
		"store.memory": {valid: `{}`},
		"store.postgres": {valid: "", opts: []componenttest.Option{
			componenttest.Invalid(`{"dsn":"postgres://u:literal@h/db"}`, component.ErrProvision),
		}},
		"store.sqlite": {valid: `{"path":"` + filepath.Join(dir, "threads.db") + `"}`,
			opts: []componenttest.Option{componenttest.Invalid(`{}`, component.ErrProvision)}},
		"tool.es": {valid: `{"search":{"id":"search.bleve"}}`,
			opts: []componenttest.Option{
				componenttest.Invalid(`{}`, component.ErrProvision),
				componenttest.Invalid(`{"search":{"id":"store.memory"}}`, component.ErrWrongKind),
			}},
		"tool.http": {valid: `{"allow_hosts":["example.com"],"timeout":"10s"}`,
			opts: []componenttest.Option{componenttest.Invalid(`{"max_body":-1}`, component.ErrInvalid)}},
		"tool.mcp": {valid: mcpServerConfig(t),
			opts: []componenttest.Option{
				componenttest.Invalid(`{"name":"x"}`, component.ErrProvision),
				componenttest.Invalid(`{"name":"a.b","command":"true"}`, component.ErrProvision),
				componenttest.Invalid(`{"name":"x","command":"true","url":"http://h/mcp"}`, component.ErrProvision),
				componenttest.Invalid(`{"name":"x","url":"http://h/mcp","headers":{"Authorization":{"env":"UNSET_KEY"}}}`, component.ErrSecret),
				componenttest.Invalid(`{"name":"x","command":"true","env":{"K":{"value":"v"}}}`, component.ErrConfig),
				componenttest.Invalid(`{"name":"x","command":"true","timeout":30}`, component.ErrConfig),
			}},
		"tool.retrieve": {valid: `{"docs":"testdata/docs.json","embed":{"id":"embed.ollama","config":{"base_url":"` + srv.URL + `","model":"nomic-embed-text"}}}`,
			opts: []componenttest.Option{
				componenttest.Invalid(`{"docs":"testdata/missing.json"}`, component.ErrProvision),
				componenttest.Invalid(`{"docs":"testdata/docs.json","embed":{"id":"embed.ollama","config":{"modle":"x"}}}`, component.ErrConfig),
			}},
		"tool.sql": {valid: `{"db":"postgres://reader@db.example/shop","password":{"env":"PG_PW"},"timeout":"5s"}`,
			opts: []componenttest.Option{
				componenttest.Invalid(`{"db":"postgres://reader:hunter2@db.example/shop"}`, component.ErrProvision),
				componenttest.Invalid(`{"db":"shop.db","password":{"env":"PG_PW"}}`, component.ErrProvision),
				componenttest.Invalid(`{"db":"x.db","max_rows":-1}`, component.ErrInvalid),
			}},
	}
	r := registry(t)
	for _, id := range r.IDs() {
		t.Run(id, func(t *testing.T) {
			c, ok := cases[id]
			if !ok {
				t.Fatalf("no conformance case for %s", id)
			}
			if id == "store.postgres" {
				t.Skip("needs a PostgreSQL server: TestPostgres runs it")
			}
			componenttest.Run(t, r, id, json.RawMessage(c.valid), append([]componenttest.Option{componenttest.WithEnv(e)}, c.opts...)...)
		})
	}
}

func TestRetrieveReturnsTheRightPassage(t *testing.T) {
	for _, hybrid := range []bool{false, true} {
		srv := llmtest.NewOllamaServer()
		defer srv.Close()
		cfg := `{"docs":"testdata/docs.json"}`
		if hybrid {
			cfg = `{"docs":"testdata/docs.json","embed":{"id":"embed.ollama","config":{"base_url":"` + srv.URL + `","model":"nomic-embed-text"}}}`
		}
		x, err := registry(t).Load(context.Background(), component.Spec{ID: "tool.retrieve", Config: json.RawMessage(cfg)}, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := x.(component.ToolProvider).Tools(context.Background())
		if err != nil || len(ts) != 1 || ts[0].Def.Name != tools.Retrieve {
			t.Fatalf("Tools = %v, %v; want retrieve alone", ts, err)
		}
		out, err := ts[0].Call(context.Background(), json.RawMessage(`{"query":"pear blossom frost","k":1}`))
		if err != nil {
			t.Fatal(err)
		}
		var res tools.RetrieveResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Sources) != 1 || res.Sources[0] != "orchard-harvest" || !strings.Contains(res.Chunks[0], "late frost damaged the pear blossom") {
			t.Errorf("hybrid=%v: retrieve = %+v, want the orchard passage", hybrid, res)
		}
		if got := len(srv.EmbedRequests()) > 0; got != hybrid {
			t.Errorf("hybrid=%v: the embedder was called: %v", hybrid, got)
		}
		if err := x.(interface{ Close() error }).Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestSQLiteStoreWorks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	ctx := context.Background()
	r := registry(t)
	set, err := r.LoadAll(ctx, []component.Spec{{ID: "store.sqlite", Config: json.RawMessage(`{"path":"` + path + `"}`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := component.Of[component.StoreProvider](set)[0].Store()
	if err := st.CreateThread(ctx, &store.Thread{ID: "t-1", Workflow: "greet", Meta: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened from the same spec: the thread is in the file.
	set, err = r.LoadAll(ctx, []component.Spec{{ID: "store.sqlite", Config: json.RawMessage(`{"path":"` + path + `"}`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	th, err := component.Of[component.StoreProvider](set)[0].Store().Thread(ctx, "t-1")
	if err != nil || th.Workflow != "greet" || th.Meta["k"] != "v" {
		t.Fatalf("Thread = %+v, %v", th, err)
	}
}

func TestOllamaAnswers(t *testing.T) {
	srv := llmtest.NewOllamaServer(llmtest.Text("The tide turns at noon."))
	defer srv.Close()
	set, err := registry(t).LoadAll(context.Background(), []component.Spec{
		{ID: "llm.ollama", Config: json.RawMessage(`{"base_url":"` + srv.URL + `","model":"llama3.1","policy":{"max_attempts":1}}`)},
	}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ms, err := set.Models()
	if err != nil {
		t.Fatal(err)
	}
	if ms.Default() != "ollama:llama3.1" {
		t.Errorf("Default = %q", ms.Default())
	}
	m, err := ms.Open("ollama:qwen2.5:7b")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Chat(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "When does the tide turn?"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "The tide turns at noon." {
		t.Errorf("reply = %q", resp.Message.Content)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Request.Model != "qwen2.5:7b" {
		t.Errorf("the server got %d requests, model %q; want one for qwen2.5:7b", len(reqs), reqs[0].Request.Model)
	}
}

// TestSecretFromEnvNeverSerialised loads llm.openai with its key in the
// environment: the key reaches the server, and nothing marshalled holds it.
func TestSecretFromEnvNeverSerialised(t *testing.T) {
	const key = "sk-proj-SECRET-abcdef0123456789"
	srv := llmtest.NewOpenAIServer(llmtest.Text("ok"))
	defer srv.Close()
	spec := component.Spec{ID: "llm.openai", Config: json.RawMessage(`{"base_url":"` + srv.BaseURL() + `","model":"gpt-4o-mini","api_key":{"env":"MY_OPENAI_KEY"}}`)}
	set, err := registry(t).LoadAll(context.Background(), []component.Spec{spec}, env(map[string]string{"MY_OPENAI_KEY": key}))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ms, _ := set.Models()
	m, err := ms.Open("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Chat(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Error("the server did not get the key from the environment")
	}
	x := set.Components()[0]
	again, err := component.SpecOf("llm.openai", x)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{x, again, component.RunSpec{Workflow: "sha256:0", Components: []component.Spec{again}}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), key) || !strings.Contains(string(b), `"api_key":{"env":"MY_OPENAI_KEY"}`) {
			t.Errorf("%T marshals as %s: want the reference, never the key", v, b)
		}
	}
	// The default reference is OPENAI_API_KEY, and it is written out, so
	// that a stored spec says where the key comes from.
	def, err := registry(t).Load(context.Background(), component.Spec{ID: "llm.openai", Config: json.RawMessage(`{"base_url":"` + srv.BaseURL() + `"}`)}, env(map[string]string{"OPENAI_API_KEY": key}))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(def); strings.Contains(string(b), key) || !strings.Contains(string(b), `"api_key":{"env":"OPENAI_API_KEY"}`) {
		t.Errorf("default config marshals as %s", b)
	}
}

func TestLiteralSecretsRefused(t *testing.T) {
	const value = "sk-literal-0123456789"
	r := registry(t)
	for _, tc := range []struct{ id, config, path string }{
		{"llm.openai", `{"api_key":"` + value + `"}`, ".api_key"},
		{"llm.anthropic", `{"api_key":{"value":"` + value + `"}}`, ".api_key"},
		{"tool.sql", `{"db":"x.db","password":"` + value + `"}`, ".password"},
		{"tool.retrieve", `{"docs":"testdata/docs.json","embed":{"id":"embed.openai","config":{"model":"m","api_key":"` + value + `"}}}`, ".api_key"},
	} {
		_, err := r.Load(context.Background(), component.Spec{ID: tc.id, Config: json.RawMessage(tc.config)}, env(nil))
		// The error of a nested component's config is that component's,
		// wrapped by the one that loads it.
		if !errors.Is(err, component.ErrConfig) || !errors.Is(err, component.ErrLiteralSecret) || !strings.Contains(fmt.Sprint(err), "config "+tc.path+":") {
			t.Errorf("%s %s: err = %v, want ErrConfig at %s", tc.id, tc.config, err, tc.path)
		}
		if err != nil && strings.Contains(err.Error(), value) {
			t.Errorf("%s: the error echoes the secret: %v", tc.id, err)
		}
	}
}

func TestDSNPasswords(t *testing.T) {
	r := registry(t)
	for _, tc := range []struct{ db, want string }{
		{"postgres://reader:hunter2@db.example/shop", "holds a password"},
		{"postgresql://reader@db.example/shop?password=hunter2", "holds a password"},
		{"host=db.example user=reader password=hunter2", "holds a password"},
	} {
		_, err := r.Load(context.Background(), component.Spec{ID: "tool.sql", Config: json.RawMessage(`{"db":"` + tc.db + `"}`)}, env(nil))
		if !errors.Is(err, component.ErrProvision) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("db %s: err = %v, want a refusal that does not echo the password", tc.db, err)
		}
	}
	_, err := r.Load(context.Background(), component.Spec{ID: "store.postgres", Config: json.RawMessage(`{"dsn":"postgres://u@h/db","password":{"env":"NOPE"}}`)}, env(nil))
	if !errors.Is(err, component.ErrSecret) {
		t.Errorf("store.postgres with an unset password variable: err = %v, want ErrSecret", err)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func TestSetToolsRefusesTwoToolsOfOneName(t *testing.T) {
	set, err := registry(t).LoadAll(context.Background(), []component.Spec{{ID: "tool.http"}, {ID: "tool.retrieve", Config: json.RawMessage(`{"docs":"testdata/docs.json"}`)}, {ID: "tool.http"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if _, err := set.Tools(context.Background()); !errors.Is(err, component.ErrDuplicate) || !strings.Contains(err.Error(), `"http_request"`) {
		t.Errorf("Tools() err = %v, want ErrDuplicate naming http_request", err)
	}
}
