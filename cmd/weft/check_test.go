package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm/llmtest"
)

// twoModels is a workflow whose first node calls the default model and
// whose second calls the model its action names (MODEL).
const twoModels = `
action first {
  type: LLM
  prompt: "Say something about {{input_text}}"
}

action second {
  type: LLM
  model: "MODEL"
  prompt: "Answer briefly: {{question}}"
}

workflow Two {
  nodes {
    node a {
      type: LLM
      action: "first"
      outputs { text: String }
    }
    node b {
      type: LLM
      action: "second"
      inputs { question: a.text }
      outputs { answer: String }
    }
  }
  edges {
    edge { from: a; to: b }
  }
  initial: a
  finals: [ b ]
}
`

// Configuration is checked before the first step: a bad --llm or action
// model, replay file, --embed, --docs, --db or --es is a usage error
// (exit 2) naming the problem, and no request reaches the model the run
// would have called first.
func TestConfigCheckedBeforeTheFirstStep(t *testing.T) {
	dir := t.TempDir()
	wf := func(model string) string {
		p := filepath.Join(dir, strings.NewReplacer(":", "_", "/", "_").Replace(model)+".wf")
		if err := os.WriteFile(p, []byte(strings.Replace(twoModels, "MODEL", model, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notJSON := filepath.Join(dir, "notes.jsonl")
	os.WriteFile(notJSON, []byte("# not a recording\n"), 0o644)
	app := filepath.Join("..", "..", "examples", "intentqa", "app.wf")
	sql := filepath.Join("..", "..", "examples", "sqlanalyst", "sqlanalyst.wf")
	docs := filepath.Join("..", "..", filepath.FromSlash(sampleDocs))
	missing := filepath.Join(dir, "missing.json")
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"docs missing", []string{"run", app, "--docs", missing}, nil, "--docs " + missing + ": no such file or directory"},
		{"docs from the environment missing", []string{"run", app}, map[string]string{envDocs: missing}, "$WEFT_DOCS " + missing + ": no such file or directory"},
		{"db missing", []string{"run", sql, "--db", filepath.Join(dir, "chinook.sqlite")}, nil, "--db " + filepath.Join(dir, "chinook.sqlite") + ": no such file or directory"},
		{"es not a URL", []string{"run", app, "--docs", docs, "--es", "localhost:9200"}, nil, "--es localhost:9200: want an Elasticsearch http:// or https:// URL, or bleve:DIR"},
		{"es bleve dir missing", []string{"run", app, "--docs", docs, "--es", "bleve:" + filepath.Join(dir, "ix")}, nil, "no such file or directory"},
		{"embed unknown provider", []string{"run", app, "--docs", docs, "--embed", "bogus:e"}, nil, `unknown provider "bogus"`},
		{"action model unknown provider", []string{"run", wf("bogus:m")}, nil, `node b (action second): model bogus:m: llm spec "bogus:m": unknown provider "bogus"`},
		{"action replay file missing", []string{"run", wf("replay:" + filepath.Join(dir, "gone.jsonl"))}, nil, "gone.jsonl: no such file or directory"},
		{"action replay file unreadable", []string{"run", wf("replay:" + notJSON)}, nil, "replay: line 1: invalid character"},
		{"llm unknown provider", []string{"run", app, "--docs", docs, "--llm", "bogus:x"}, nil, `--llm bogus:x: llm spec "bogus:x": unknown provider "bogus"`},
		{"llm replay file missing", []string{"run", app, "--docs", docs, "--llm", "replay:" + filepath.Join(dir, "gone.jsonl")}, nil, "gone.jsonl: no such file or directory"},
		{"no model", []string{"run", app, "--docs", docs}, map[string]string{"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}, "node identify_intent (action identify_user_intent) calls a model and none is given: pass --llm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewOpenAIServer(llmtest.JSON(map[string]any{"intent": "qa"}), llmtest.Text("one"), llmtest.Text("two"))
			defer srv.Close()
			base := openAIEnv(srv, "sk-test")
			getenv := func(k string) string {
				if v, ok := c.env[k]; ok {
					return v
				}
				return base(k)
			}
			args := c.args
			if c.name != "no model" && !strings.HasPrefix(c.name, "llm ") {
				args = append(args, "--llm", "openai:scripted")
			}
			r := weft(t, append(args, "--input", "What was the revenue?"), func(e *env) { e.getenv = getenv })
			r.wantCode(t, exitUsage)
			if !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr = %q\nwant it to say %q", r.stderr, c.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests reached the model before the error", n)
			}
		})
	}
}

// The check passes what is right: the same workflow with a good action
// model runs, and the model opened by the check is the one the run uses
// (a replay file is read once and serves the whole run).
func TestConfigCheckPassesAGoodRun(t *testing.T) {
	r := weft(t, []string{"run", filepath.Join("..", "..", "examples", "intentqa", "app.wf"),
		"--docs", filepath.Join("..", "..", filepath.FromSlash(sampleDocs)),
		"--llm", "replay:" + filepath.Join("..", "..", "examples", "intentqa", "sessions", "sample_qa.jsonl"),
		"--input", sampleQuestion})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "$399.0 million") {
		t.Errorf("stdout = %q", r.stdout)
	}
}

// An action that names a model of another provider than --llm's runs on
// it: the run's components serve the providers the workflow's actions
// name, and the check before the run opens that model with them.
func TestActionModelOfAnotherProvider(t *testing.T) {
	oa := llmtest.NewOpenAIServer(llmtest.Text("rain"))
	defer oa.Close()
	ol := llmtest.NewOllamaServer(llmtest.Text("Take an umbrella."))
	defer ol.Close()
	p := filepath.Join(t.TempDir(), "two.wf")
	if err := os.WriteFile(p, []byte(strings.Replace(twoModels, "MODEL", "ollama:tiny", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	base := openAIEnv(oa, "sk-test")
	r := weft(t, []string{"run", p, "--llm", "openai:scripted", "--input", "the weather"}, func(e *env) {
		e.getenv = func(k string) string {
			if k == "OLLAMA_HOST" {
				return ol.BaseURL()
			}
			return base(k)
		}
	})
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stdout, "answer: Take an umbrella.") {
		t.Errorf("stdout = %q", r.stdout)
	}
	if a, b := oa.Requests(), ol.Requests(); len(a) != 1 || len(b) != 1 || a[0].Request.Model != "scripted" || b[0].Request.Model != "tiny" {
		t.Errorf("requests: openai %d, ollama %d; want one each, of scripted and tiny", len(a), len(b))
	}
}
