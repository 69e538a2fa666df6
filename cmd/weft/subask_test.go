package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestThreadSubworkflowQuestionCLI: a question asked inside a subworkflow
// waits in the thread, named by its path, and `weft resume --answer`
// answers it, its answer typed by the inner node's outputs.
func TestThreadSubworkflowQuestionCLI(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	r := weft(t, []string{"run", "testdata/sub_ask.wf", "--thread", "s1", "--store", db})
	r.wantCode(t, exitWaiting)
	if !strings.Contains(r.stdout, "waiting at review/ask") || !strings.Contains(r.stdout, "Which year for tides?") {
		t.Errorf("stdout = %q", r.stdout)
	}
	r = weft(t, []string{"resume", "s1", "--store", db, "--answer", "last year"})
	r.wantCode(t, exitUsage) // not an Int: refused, the thread still waits
	if !strings.Contains(r.stderr, "want Int") {
		t.Errorf("stderr = %q", r.stderr)
	}
	r = weft(t, []string{"resume", "s1", "--store", db, "--answer", "2023"})
	r.wantCode(t, exitOK)
	if r.stdout != "year: 2023\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	r = weft(t, []string{"threads", "history", "s1", "--store", db})
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stdout, "review/ask (answered)") {
		t.Errorf("history lacks the inner node's answer:\n%s", r.stdout)
	}
}
