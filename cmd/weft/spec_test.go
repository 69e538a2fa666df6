package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/store/sqlite"
)

// TestResumeFromTheStoreAlone: a thread keeps its run spec (the
// workflow's source in the store, the stubs as a component), so resume
// needs neither the workflow file (deleted here) nor the flags of the
// first run, and the thread carries no flag labels.
func TestResumeFromTheStoreAlone(t *testing.T) {
	dir := t.TempDir()
	wf := copyFile(t, intentQA, dir, 0o644)
	stubs := copyFile(t, "testdata/intentqa_unclear.yaml", dir, 0o644)
	db := filepath.Join(t.TempDir(), "threads.db")
	r := weft(t, []string{"run", wf, "--stubs", stubs, "--input", "What was it?", "--thread", "q1", "--store", db})
	r.wantCode(t, exitWaiting)
	if err := os.Remove(wf); err != nil {
		t.Fatal(err)
	}
	r = weft(t, []string{"resume", "q1", "--store", db, "--answer", "net income 2023"})
	r.wantCode(t, 0)
	if r.stdout != "answer: Net income was $1.1M.\n" {
		t.Errorf("resumed stdout %q", r.stdout)
	}

	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	thr, err := st.Thread(context.Background(), "q1")
	if err != nil {
		t.Fatal(err)
	}
	if len(thr.Meta) != 0 {
		t.Errorf("the thread keeps flag labels: %v", thr.Meta)
	}
	var spec struct {
		Workflow   string `json:"workflow"`
		Components []struct {
			ID     string          `json:"id"`
			Config json.RawMessage `json:"config"`
		} `json:"components"`
	}
	if err := json.Unmarshal(thr.Spec, &spec); err != nil {
		t.Fatalf("spec %s: %v", thr.Spec, err)
	}
	if spec.Workflow != thr.Source || !strings.HasPrefix(spec.Workflow, "sha256:") {
		t.Errorf("spec names workflow %q, thread source %q", spec.Workflow, thr.Source)
	}
	var ids []string
	for _, c := range spec.Components {
		ids = append(ids, c.ID)
		if c.ID == "action.stubs" && !strings.Contains(string(c.Config), `"file":"`+stubs+`"`) {
			t.Errorf("stubs config %s, want the absolute path %s", c.Config, stubs)
		}
	}
	if strings.Join(ids, ",") != "tool.http,action.stubs" {
		t.Errorf("components %v", ids)
	}
	src, err := st.Source(context.Background(), thr.Source)
	if err != nil || !strings.Contains(string(src), "workflow IntentQA") {
		t.Errorf("stored source: %v", err)
	}
}

// TestRunSpecKeepsNoPassword: a password in --db's URL reaches the run
// but not the thread's spec, which names PGPASSWORD instead.
func TestRunSpecKeepsNoPassword(t *testing.T) {
	o := &runOptions{}
	specs, err := runSpecs(env{getenv: func(string) string { return "" }}, o, &toolset{db: "postgres://reader:s3cret-PW@db.example:5432/chinook"}, false, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(specs.components)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret-PW") || !strings.Contains(string(b), `"password":{"env":"PGPASSWORD"}`) || !strings.Contains(string(b), `postgres://reader@db.example:5432/chinook`) {
		t.Errorf("spec %s", b)
	}
	if specs.secrets[envPGPassword] != "s3cret-PW" {
		t.Errorf("secrets %v", specs.secrets)
	}
}
