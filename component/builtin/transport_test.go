package builtin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/llm"
)

// marking is a transport that marks each request it sends.
type marking struct{ base http.RoundTripper }

func (m marking) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Wrapped", "yes")
	return m.base.RoundTrip(r)
}

// Every built-in module that makes HTTP requests sends them through the
// transport component.Env.Transport wraps (as the CLI's tracing does with
// telemetry.Transport), and through none when the Env sets none.
func TestModulesUseEnvTransport(t *testing.T) {
	var mu sync.Mutex
	var seen []string // "path wrapped?"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("X-Wrapped"))
		mu.Unlock()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		http.Error(w, `{"error":"test"}`, http.StatusTeapot)
	}))
	defer srv.Close()
	u := srv.URL
	calls := []struct {
		spec component.Spec
		call func(ctx context.Context, c component.Component) // its error is the server's: ignored
	}{
		{component.Spec{ID: "llm.ollama", Config: json.RawMessage(`{"base_url":"` + u + `","model":"m"}`)}, chat},
		{component.Spec{ID: "llm.openai", Config: json.RawMessage(`{"base_url":"` + u + `/v1","model":"m"}`)}, chat},
		{component.Spec{ID: "llm.anthropic", Config: json.RawMessage(`{"base_url":"` + u + `","model":"m","api_key":{"env":"KEY"}}`)}, chat},
		{component.Spec{ID: "embed.ollama", Config: json.RawMessage(`{"base_url":"` + u + `","model":"e"}`)}, embed},
		{component.Spec{ID: "embed.openai", Config: json.RawMessage(`{"base_url":"` + u + `/v1","model":"e"}`)}, embed},
		{component.Spec{ID: "tool.http"}, func(ctx context.Context, c component.Component) {
			callTool(ctx, c, `{"url":"`+u+`/page"}`)
		}},
		{component.Spec{ID: "tool.es", Config: json.RawMessage(`{"backend":"` + u + `"}`)}, func(ctx context.Context, c component.Component) {
			callTool(ctx, c, `{"index":"docs","body":{"query":{"match_all":{}}}}`)
		}},
		{component.Spec{ID: "search.elasticsearch", Config: json.RawMessage(`{"addresses":["` + u + `"]}`)}, func(ctx context.Context, c component.Component) {
			c.(component.SearchProvider).Backend().Search(ctx, "docs", []byte(`{}`))
		}},
	}
	reg, err := builtin.New()
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "KEY" {
			return "k"
		}
		return ""
	}
	for _, wrap := range []bool{true, false} {
		for _, c := range calls {
			env := &component.Env{Getenv: getenv}
			if wrap {
				env.Transport = func(b http.RoundTripper) http.RoundTripper { return marking{b} }
			}
			ctx := context.Background()
			x, err := reg.Load(ctx, c.spec, env)
			if err != nil {
				t.Fatalf("%s: %v", c.spec.ID, err)
			}
			mu.Lock()
			seen = nil
			mu.Unlock()
			c.call(ctx, x)
			if err := component.CloseAll(x); err != nil {
				t.Errorf("%s: close: %v", c.spec.ID, err)
			}
			mu.Lock()
			got := seen
			mu.Unlock()
			if len(got) == 0 {
				t.Errorf("%s: no request reached the server", c.spec.ID)
			}
			for _, s := range got {
				if w := s[len(s)-3:] == "yes"; w != wrap {
					t.Errorf("%s (Env.Transport set: %v): request %q", c.spec.ID, wrap, s)
				}
			}
		}
	}
}

func chat(ctx context.Context, c component.Component) {
	m, err := c.(component.ModelProvider).Open("")
	if err == nil {
		m.Chat(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}}, nil)
	}
}

func embed(ctx context.Context, c component.Component) {
	c.(component.EmbedderProvider).Embedder().Embed(ctx, &llm.EmbedRequest{Input: []string{"hi"}})
}

func callTool(ctx context.Context, c component.Component, args string) {
	tls, err := c.(component.ToolProvider).Tools(ctx)
	if err == nil && len(tls) > 0 {
		tls[0].Run(ctx, json.RawMessage(args))
	}
}
