package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/llm/llmtest"
)

// updateSessions re-records the examples' sessions: each runs against the
// fake OpenAI-compatible server with its scripted replies, through the
// real wire protocol, and --record writes the exchanges.
var updateSessions = flag.Bool("update-sessions", false, "re-record examples/*/sessions/*.jsonl against the fake LLM server")

// session is one recorded run of an example: a route of its graph.
type session struct {
	example string            // examples/<example>
	name    string            // sessions/<name>.jsonl
	file    string            // the workflow file, in the example's directory
	data    map[string]string // tool flag -> dataset under the data directory (skipped when absent)
	files   map[string]string // tool flag -> file in the repository, from its root (always there)
	input   string
	answers []string
	// script is what the model answers, in order, when recording.
	script []llmtest.Reply
	// path is the nodes the run takes; outputs, substrings of the final
	// outputs by name; vars, final variables by name (JSON).
	path    []string
	outputs map[string]string
	vars    map[string]string
}

// dataFlags maps a tool flag to the dataset it reads.
var (
	tatqa   = map[string]string{"--docs": "tatqa/tatqa_dataset_dev.json"}
	chinook = map[string]string{"--db": "chinook/Chinook_Sqlite.sqlite"}
)

func (s session) recording() string {
	return filepath.Join("..", "..", "examples", s.example, "sessions", s.name+".jsonl")
}

// args are the command line of the session, without --llm.
func (s session) args(tb testing.TB) []string {
	args := []string{"run", filepath.Join("..", "..", "examples", s.example, s.file), "--input", s.input, "--json"}
	keys := make([]string, 0, len(s.data))
	for k := range s.data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		args = append(args, k, datadir.Require(tb, s.data[k]))
	}
	keys = keys[:0]
	for k := range s.files {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		args = append(args, k, filepath.Join("..", "..", filepath.FromSlash(s.files[k])))
	}
	for _, a := range s.answers {
		args = append(args, "--answer", a)
	}
	return args
}

// runSessions records (with -update-sessions) and replays each session,
// checking the route it takes and its outputs.
func runSessions(t *testing.T, sessions []session) {
	for _, s := range sessions {
		t.Run(s.example+"/"+s.name, func(t *testing.T) {
			args := s.args(t)
			if *updateSessions {
				srv := llmtest.NewOpenAIServer(s.script...)
				defer srv.Close()
				getenv := openAIEnv(srv, "sk-scripted")
				if err := os.MkdirAll(filepath.Dir(s.recording()), 0o755); err != nil {
					t.Fatal(err)
				}
				r := weft(t, append(args, "--llm", "openai:scripted", "--record", s.recording()), func(e *env) { e.getenv = getenv })
				r.wantCode(t, 0)
				if n := len(srv.Requests()); n != len(s.script) {
					t.Fatalf("the run made %d model calls, the script has %d replies", n, len(s.script))
				}
			}
			r := weft(t, append(args, "--llm", "replay:"+s.recording()))
			r.wantCode(t, 0)
			var res struct {
				Status  string                     `json:"status"`
				Path    []string                   `json:"path"`
				Outputs map[string]json.RawMessage `json:"outputs"`
				Vars    map[string]json.RawMessage `json:"vars"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
			}
			if res.Status != "completed" {
				t.Errorf("status = %s", res.Status)
			}
			if !slices.Equal(res.Path, s.path) {
				t.Errorf("path:\n got  %v\n want %v", res.Path, s.path)
			}
			for name, want := range s.outputs {
				if got := string(res.Outputs[name]); !strings.Contains(got, want) {
					t.Errorf("output %s = %s, want it to contain %q", name, got, want)
				}
			}
			for name, want := range s.vars {
				if got := string(res.Vars[name]); got != want {
					t.Errorf("variable %s = %s, want %s", name, got, want)
				}
			}
		})
	}
}

// BenchmarkSessions times each recorded session replayed offline: the whole
// `weft run` (load, check, index or open the data, every node, tools,
// replayed model calls) without a model's own time.
func BenchmarkSessions(b *testing.B) {
	all := append(intentqaSessions(), sqlanalystSessions()...)
	for _, s := range all {
		b.Run(s.example+"/"+s.name, func(b *testing.B) {
			args := append(s.args(b), "--llm", "replay:"+s.recording())
			for b.Loop() {
				var stdout, stderr strings.Builder
				if code := run(args, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr}); code != 0 {
					b.Fatalf("exit %d: %s", code, stderr.String())
				}
			}
		})
	}
}

// The graphs in the examples' READMEs are what `weft graph` draws.
func TestExampleREADMEGraphs(t *testing.T) {
	for _, c := range []struct{ readme, file, workflow string }{
		{"intentqa/README.md", "intentqa/intentqa.wf", ""},
		{"sqlanalyst/README.md", "sqlanalyst/sqlanalyst.wf", ""},
		{"sqlanalyst/README.md", "sqlanalyst/sqlanalyst.wf", "ProcessQuery"},
	} {
		dir := filepath.Join("..", "..", "examples")
		args := []string{"graph", filepath.Join(dir, c.file)}
		if c.workflow != "" {
			args = append(args, "--workflow", c.workflow)
		}
		r := weft(t, args)
		r.wantCode(t, 0)
		readme, err := os.ReadFile(filepath.Join(dir, c.readme))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```mermaid\n"+r.stdout+"```") {
			t.Errorf("examples/%s does not hold the graph `weft %s` draws; paste it in again", c.readme, strings.Join(args, " "))
		}
	}
}

// A workflow that calls a built-in tool whose flag is not set stops before
// it runs, naming the first node that calls it and the flag.
func TestToolFlagCheckedBeforeTheRun(t *testing.T) {
	r := weft(t, []string{"run", filepath.Join("..", "..", "examples", "sqlanalyst", "sqlanalyst.wf"), "--input", "How many albums?", "--llm", "replay:/dev/null"})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "node load_schema (action get_schema) calls the sql_schema tool, which needs --db DSN (or $WEFT_DB)") {
		t.Errorf("stderr = %q", r.stderr)
	}
	r = weft(t, []string{"run", filepath.Join("..", "..", "examples", "intentqa", "app.wf"), "--input", "x", "--llm", "replay:/dev/null"})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "node retrieve (action retrieve_financial_documents) calls the retrieve tool, which needs --docs PATH") {
		t.Errorf("stderr = %q", r.stderr)
	}
}
