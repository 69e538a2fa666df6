package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const leakWF = `
action lookup {
  type: HTTP
  method: "GET"
  url: "BASE/lookup"
}

workflow Leak {
  nodes {
    node call {
      type: FUNCTION
      action: "lookup"
      outputs {
        x: String
      }
    }
  }
  initial: call
  finals: [ call ]
}
`

// TestRunRedactsCredentialsFromAnyActionError checks that a credential
// of the run's configuration (an API key in the environment, the password
// of the --store URL) that an action's error quotes, here a server that
// answers with the key it should not know, appears nowhere: not on stderr,
// not in --json, not in the thread's stored run.
func TestRunRedactsCredentialsFromAnyActionError(t *testing.T) {
	const key = "sk-ENV-SECRET-42"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte("the key " + key + " is revoked"))
	}))
	defer hs.Close()
	dir := t.TempDir()
	wf := filepath.Join(dir, "leak.wf")
	if err := os.WriteFile(wf, []byte(strings.ReplaceAll(leakWF, "BASE", hs.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "threads.db")
	getenv := func(name string) string {
		if name == "OPENAI_API_KEY" {
			return key
		}
		return ""
	}
	r := weft(t, []string{"run", wf, "--json", "--trace", "--thread", "t1", "--store", db}, func(e *env) { e.getenv = getenv })
	r.wantCode(t, exitFailed)
	if strings.Contains(r.stdout+r.stderr, key) {
		t.Errorf("the key was shown\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "[REDACTED] is revoked") {
		t.Errorf("stdout does not show the redacted error:\n%s", r.stdout)
	}
	for _, f := range []string{db, db + "-wal"} {
		raw, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), key) {
			t.Errorf("the key is in the thread store (%s)", filepath.Base(f))
		}
	}
}
