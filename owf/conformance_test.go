package owf

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/llm/openai"
	"github.com/weftlang/weft/owf/tools"
)

// conformanceDir is where the reference's own test workflows are kept.
const conformanceDir = "../../shared/conformance/ollama-workflows"

// conformanceFiles lists every JSON file under conformanceDir, or skips.
func conformanceFiles(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(conformanceDir); err != nil {
		t.Skipf("the reference's workflows are not at %s (they come with ../shared): %v", conformanceDir, err)
	}
	var files []string
	err := filepath.WalkDir(conformanceDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("found %d workflows under %s, want the 47 of both eras", len(files), conformanceDir)
	}
	return files
}

// toolHosts is one local server standing in for every host a tool calls
// (r.jina.ai, google.serper.dev, duckduckgo.com, www.google.com/finance,
// api.gemini.com), reached through a transport that sends every request
// to it, so the documents run unchanged. It records the requests.
type toolHosts struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []string // "host path"
}

func newToolHosts(t *testing.T) *toolHosts {
	h := &toolHosts{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Header.Get("X-Original-Host")
		h.mu.Lock()
		h.hits = append(h.hits, host+" "+r.URL.Path)
		h.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		switch {
		case host == "r.jina.ai":
			fmt.Fprint(w, "Cappadocia is a region of central Anatolia known for its fairy chimneys.")
		case host == "google.serper.dev":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"organic":[{"title":"Cities","link":"https://example.com/cities","snippet":"Zurich tops the list","position":1}]}`)
		case host == "duckduckgo.com":
			fmt.Fprint(w, `<html><body><div class="result web-result"><h2 class="result__title"><a class="result__a" href="https://example.com/zurich">Zurich</a></h2>
<a class="result__snippet" href="https://example.com/zurich">Zurich is the most expensive city.</a><a class="result__url" href="https://example.com/zurich">example.com/zurich</a></div>
<div class="result web-result"><h2 class="result__title"><a class="result__a" href="https://example.com/geneva">Geneva</a></h2>
<a class="result__snippet" href="https://example.com/geneva">Geneva follows.</a><a class="result__url" href="https://example.com/geneva">example.com/geneva</a></div></body></html>`)
		case host == "www.google.com":
			fmt.Fprint(w, `<html><body><div class="gyFHrc"><div class="mfs7Fc">Previous close</div><div class="P6K39c">$227.52</div></div>
<div class="gyFHrc"><div class="mfs7Fc">Market cap</div><div class="P6K39c">3.44T USD</div></div></body></html>`)
		case host == "api.gemini.com":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"pair":"BTCUSDT","price":"97000.12","percentChange24h":"0.0123"}]`)
		default:
			http.Error(w, "no such host here: "+host, http.StatusNotFound)
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// client returns an HTTP client whose every request goes to the local
// server, keeping the original host in X-Original-Host.
func (h *toolHosts) client() *http.Client {
	target, _ := url.Parse(h.srv.URL)
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("X-Original-Host", r.URL.Hostname())
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		r.Host = target.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
}

func (h *toolHosts) hosts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, x := range h.hits {
		host, _, _ := strings.Cut(x, " ")
		if !slices.Contains(out, host) {
			out = append(out, host)
		}
	}
	slices.Sort(out)
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// scriptedReply is the LLM's answer to every request: "Yes" (which the
// prompt era's check task expects) and a call of every tool the documents
// offer; function-calling tasks run those they declared and skip the
// others, as the reference does.
func scriptedReply() llmtest.Reply {
	call := func(id, name, args string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	return llmtest.Reply{Text: "Yes", ToolCalls: []llm.ToolCall{
		call("1", "jina_web_scraper", `{"website":"https://en.wikipedia.org/wiki/Cappadocia"}`),
		call("2", "stock_scraper", `{"exchange":"NASDAQ","ticker":"AAPL"}`),
		call("3", "pricefeedrequest", `{}`),
		call("4", "google_search_tool", `{"query":"Cappadocia"}`),
		call("5", "ddg_searcher", `{"query":"Cappadocia"}`),
		call("6", "calculator", `{"lfs":10932,"rhs":20934}`),
	}}
}

// outcome is what each conformance file is expected to do with the
// scripted LLM: "" for success, else the start of the run's error.
var outcomes = map[string]string{
	// HEAD's insert.json is stale: its search task's prompt is not a JSON
	// query, so the web search fails (reference §8).
	"insert.json": `Workflow execution failed: WebSearchFailed("Query parameter is required")`,
}

func TestConformanceWorkflowsLoadAndRun(t *testing.T) {
	files := conformanceFiles(t)
	for _, f := range files {
		rel, _ := filepath.Rel(conformanceDir, f)
		t.Run(rel, func(t *testing.T) {
			doc, err := LoadFile(f, nil)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			wantEra := EraMessages
			if strings.HasPrefix(rel, "_history") {
				wantEra = EraPrompt
			}
			if doc.Era != wantEra {
				t.Errorf("era = %s, want %s", doc.Era, wantEra)
			}
			// Each structured_output file is written for one provider; the
			// others run on (the fake of) Ollama, the reference's default.
			srv := llmtest.NewOllamaServer()
			defer srv.Close()
			srv.Repeat(scriptedReply())
			ol := ollama.New(ollama.Config{BaseURL: srv.BaseURL(), Model: "llama3.1"})
			hosts := newToolHosts(t)
			opts := Options{Model: ol, ModelName: "llama3.1", Dialect: DialectOllama, Embedder: ol, EmbedModel: "mxbai-embed-large",
				QueryPrefix: OllamaQueryPrefix, Tools: tools.Options{Client: hosts.client()}}
			if strings.Contains(rel, "d42618e") { // its tools are serper and jina
				opts.Tools.SerperKey, opts.Tools.SerperKeySet = "test-key", true
			}
			switch filepath.Base(rel) {
			case "openai.json":
				osrv := llmtest.NewOpenAIServer()
				defer osrv.Close()
				osrv.Repeat(llmtest.Reply{JSON: json.RawMessage(`{"answer":"Zurich"}`)})
				opts.Model, opts.ModelName, opts.Dialect = openai.New(openai.Config{BaseURL: osrv.BaseURL(), Model: "gpt-4o-mini"}), "gpt-4o-mini", DialectOpenAI
			case "gemini.json":
				opts.Dialect = DialectPlain
			}
			x, err := NewExecutor(opts)
			if err != nil {
				t.Fatal(err)
			}
			in := "What is the most expensive city in the world?"
			out, res, err := x.Execute(context.Background(), doc, &in, nil)
			want := outcomes[filepath.Base(rel)]
			if strings.HasPrefix(rel, "_history") {
				want = "" // the prompt era's search searches the file system
			}
			switch {
			case want == "" && err != nil:
				t.Fatalf("run: %v", err)
			case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
				t.Fatalf("run error = %v, want %q", err, want)
			}
			if res != nil {
				t.Logf("%d steps, path %s; tool hosts %v; %d LLM requests; result %.80q", res.Steps, strings.Join(res.Path, " "), hosts.hosts(), len(srv.Requests()), out)
			}
			checkConformanceResult(t, filepath.Base(rel), rel, out, hosts.hosts(), srv)
		})
	}
}

// checkConformanceResult asserts what each kind of workflow must have done.
func checkConformanceResult(t *testing.T, base, rel, out string, hosts []string, srv *llmtest.Server) {
	t.Helper()
	era := "messages"
	if strings.HasPrefix(rel, "_history") {
		era = "prompt"
	}
	switch base {
	case "ticker.json":
		if !slices.Contains(hosts, "www.google.com") || !strings.Contains(out, "227.52") {
			t.Errorf("ticker: result %q, hosts %v; want the stock scraper's quote", out, hosts)
		}
	case "custom_tools_http.json":
		if !slices.Contains(hosts, "api.gemini.com") || !strings.Contains(out, "97000.12") {
			t.Errorf("custom HTTP tool: result %q, hosts %v; want the price feed", out, hosts)
		}
	case "all.json":
		if !slices.Contains(hosts, "r.jina.ai") || !slices.Contains(hosts, "www.google.com") {
			t.Errorf("ALL tools: hosts %v; want jina and the stock scraper called", hosts)
		}
	case "custom_tool.json", "raw_tools.json":
		if !strings.Contains(out, `"name":"calculator"`) && !strings.Contains(out, `"name":"jina_web_scraper"`) {
			t.Errorf("raw function calling: result %q; want the calls as JSON", out)
		}
	case "search.json":
		if era == "messages" && (!slices.Contains(hosts, "duckduckgo.com") || !strings.Contains(out, "Zurich")) {
			t.Errorf("web search: result %q, hosts %v; want DuckDuckGo's results", out, hosts)
		}
		if era == "prompt" && out != "Yes" {
			t.Errorf("check agent: result %q, want Yes", out)
		}
	case "insert.json":
		if era == "prompt" && len(srv.EmbedRequests()) == 0 {
			t.Errorf("insert: no embedding requests")
		}
	case "simple.json":
		if era == "messages" && out != "Yes \nYes \n" {
			t.Errorf("simple: result %q, want the poem twice", out)
		}
	}
}
