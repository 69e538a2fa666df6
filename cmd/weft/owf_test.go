package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm/llmtest"
)

// A pure ollama-workflows document: sample tasks, a loop on a stack's size.
const owfLoop = `{
  "name": "Loop",
  "config": {"max_steps": 10, "max_time": 10},
  "external_memory": {"w": ["x"]},
  "tasks": [
    {"id": "A", "operator": "sample", "messages": [{"role": "user", "content": "{v}"}],
     "inputs": [{"name": "v", "value": {"type": "string", "key": "w"}, "required": true}],
     "outputs": [{"type": "push", "key": "acc", "value": "__result"}]}
  ],
  "steps": [{"source": "A", "target": "__end",
    "condition": {"input": {"type": "size", "key": "acc"}, "expression": "GreaterThan", "expected": "2", "target_if_not": "A"}}],
  "return_value": {"input": {"type": "get_all", "key": "acc"}, "to_json": true}
}`

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunOWF(t *testing.T) {
	p := writeTemp(t, "loop.json", owfLoop)
	r := weft(t, []string{"run", p})
	r.wantCode(t, 0)
	if r.stdout != `["w: x","w: x","w: x"]`+"\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	// The reference's errors, exit 1.
	p = writeTemp(t, "short.json", strings.Replace(owfLoop, `"max_steps": 10`, `"max_steps": 3`, 1))
	r = weft(t, []string{"run", p})
	r.wantCode(t, 1)
	if !strings.Contains(r.stderr, "Workflow execution failed: Max steps reached") {
		t.Errorf("stderr = %q", r.stderr)
	}
}

func TestValidateOWFNamesThePlace(t *testing.T) {
	p := writeTemp(t, "bad.json", strings.Replace(owfLoop, `"type": "string"`, `"type": "strng"`, 1))
	r := weft(t, []string{"validate", p})
	r.wantCode(t, 1)
	want := p + `:7:49: tasks[0].inputs[0].value.type: unknown type "strng"; did you mean "string"?`
	if !strings.Contains(r.stdout, want) {
		t.Errorf("stdout = %q\nwant it to contain %q", r.stdout, want)
	}
	dir := filepath.Dir(writeTemp(t, "ok.json", owfLoop))
	writeTemp(t, "package.json", `{"name": "not a workflow"}`)
	r = weft(t, []string{"validate", dir})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "ok.json: ok") || strings.Contains(r.stdout, "package.json") {
		t.Errorf("validate DIR: %q; want ok.json checked and package.json left alone", r.stdout)
	}
}

func TestConvertOWFRunsToTheSameResult(t *testing.T) {
	p := writeTemp(t, "loop.json", owfLoop)
	out := filepath.Join(t.TempDir(), "loop.wf")
	weft(t, []string{"convert", p, "-o", out}).wantCode(t, 0)
	src, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `action: "owf.sample"`) || !strings.Contains(string(src), `next == "A"`) {
		t.Errorf("converted source:\n%s", src)
	}
	a := weft(t, []string{"run", p})
	b := weft(t, []string{"run", out})
	a.wantCode(t, 0)
	b.wantCode(t, 0)
	if !strings.Contains(b.stdout, `result: ["w: x","w: x","w: x"]`) || !strings.Contains(a.stdout, `["w: x","w: x","w: x"]`) {
		t.Errorf("JSON printed %q, .wf printed %q", a.stdout, b.stdout)
	}
	r := weft(t, []string{"convert", out})
	r.wantCode(t, 2)
}

func TestRunOWFWithModelInAThread(t *testing.T) {
	srv := llmtest.NewOllamaServer(llmtest.Reply{Text: "first"}, llmtest.Reply{Text: "second"})
	defer srv.Close()
	getenv := func(k string) string {
		if k == "OLLAMA_HOST" {
			return srv.BaseURL()
		}
		return ""
	}
	doc := `{"config": {"max_steps": 10, "max_time": 10},
	  "tasks": [{"id": "A", "operator": "generation", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "{q} (before: {h})"}],
	    "inputs": [{"name": "q", "value": {"type": "input", "key": ""}, "required": true}, {"name": "h", "value": {"type": "get_all", "key": "answers"}, "required": false}],
	    "outputs": [{"type": "push", "key": "answers", "value": "__result"}]}],
	  "steps": [{"source": "A", "target": "__end"}],
	  "return_value": {"input": {"type": "get_all", "key": "answers"}}}`
	p := writeTemp(t, "chat.json", doc)
	store := filepath.Join(t.TempDir(), "threads.db")
	args := []string{"run", p, "--llm", "ollama:llama3.1", "--thread", "t1", "--store", store}
	r := weft(t, append(args, "--input", "hello"), func(e *env) { e.getenv = getenv })
	r.wantCode(t, 0)
	if r.stdout != "first \n" {
		t.Errorf("first run: %q", r.stdout)
	}
	r = weft(t, append(args, "--input", "again"), func(e *env) { e.getenv = getenv })
	r.wantCode(t, 0)
	if r.stdout != "first \nsecond \n" {
		t.Errorf("second run in the thread: %q, want the memory carried over", r.stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	m := reqs[1].Request.Messages
	if m[0].Role != "user" || m[0].Content != "be brief" || m[1].Content != "again (before: first \n)" {
		t.Errorf("second request = %+v; want the Ollama dialect (system as user) and the carried memory", m)
	}
	if reqs[1].Request.MaxTokens != 250 {
		t.Errorf("max_tokens = %d, want the reference's Ollama default 250", reqs[1].Request.MaxTokens)
	}
}
