package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadServeConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("weft.json", `{
  "graphs": {
    "approval": "flows/approval.wf",
    "qa": {"path": "/abs/qa.wf", "workflow": "IntentQA", "components": [{"id": "llm.replay", "config": {"path": "r.json"}}], "context_tokens": 4096}
  },
  "components": [{"id": "llm.ollama", "config": {"model": "llama3.2"}}],
  "store": "weft.db",
  "cors": ["*"]
}`)
	c, err := readServeConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.graphIDs(), ","); got != "approval,qa" {
		t.Fatalf("graph ids %s", got)
	}
	if c.Graphs["approval"].Path != filepath.Join(dir, "flows/approval.wf") || c.Graphs["qa"].Path != "/abs/qa.wf" {
		t.Fatalf("paths %+v", c.Graphs)
	}
	if q := c.Graphs["qa"]; q.Workflow != "IntentQA" || q.ContextTokens != 4096 || len(q.Components) != 1 || q.Components[0].ID != "llm.replay" {
		t.Fatalf("qa %+v", q)
	}
	if len(c.Components) != 1 || c.Store != "weft.db" || c.CORS[0] != "*" {
		t.Fatalf("config %+v", c)
	}
	for _, bad := range []struct{ text, want string }{
		{`{"graphs": {}}`, "graphs: no workflow to serve"},
		{`{"graphs": {"a": "x.wf"}, "stroe": "x"}`, `unknown field "stroe"`},
		{`{"graphs": {"a": {"path": "x.wf", "wrkflow": "A"}}}`, `unknown field "wrkflow"`},
		{`{"graphs": {"a": {"workflow": "A"}}}`, "graphs.a.path: required"},
		{`{"graphs": {"a/b": "x.wf"}}`, `"a/b" is not a graph id`},
		{"{\n  \"graphs\": {\"a\": 3}\n}", "2:"},
		{"{\n  \"graphs\": \n}", "2:"},
	} {
		_, err := readServeConfig(write("bad.json", bad.text))
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s: %v, want %q", bad.text, err, bad.want)
		}
	}
	if _, err := readServeConfig(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Errorf("missing file: %v", err)
	}
}
