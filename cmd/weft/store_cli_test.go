package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLookupsCreateNoStore: commands that only look a thread up (resume,
// threads show, list, history, fork, prune) never create a store file nor
// its folders: against a missing path they fail with a usage error that
// says no store is there.
func TestLookupsCreateNoStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "no", "such", "threads.db")
	for _, args := range [][]string{
		{"resume", "q1", "--answer", "x"},
		{"resume", "q1"},
		{"threads", "show", "q1"},
		{"threads", "list"},
		{"threads", "history", "q1"},
		{"threads", "fork", "q1", "--at", "2", "--to", "q2"},
		{"threads", "prune", "q1", "--keep", "1"},
	} {
		r := weft(t, append(args, "--store", db))
		r.wantCode(t, exitUsage)
		if want := "weft: no store at " + db + ": no thread has been recorded there (weft run --thread ID --store " + db + " creates it)\n"; !strings.HasPrefix(r.stderr, want) {
			t.Errorf("%v: stderr %q, want it to start with %q", args, r.stderr, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "no")); !os.IsNotExist(err) {
			t.Fatalf("%v created %s (%v)", args, filepath.Join(dir, "no"), err)
		}
	}
	// The default store, from $XDG_DATA_HOME, is not created either.
	xdg := filepath.Join(dir, "xdg")
	r := weft(t, []string{"threads", "list"}, func(e *env) {
		e.getenv = func(k string) string { return map[string]string{"XDG_DATA_HOME": xdg}[k] }
	})
	r.wantCode(t, exitUsage)
	if _, err := os.Stat(xdg); !os.IsNotExist(err) {
		t.Errorf("threads list created %s (%v)", xdg, err)
	}
}

// TestStoreFailureExitCode: a store that cannot be opened (here a file
// that is not a database) exits with code 4, as docs/cli.md says, with
// the same wording from every command.
func TestStoreFailureExitCode(t *testing.T) {
	db := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(db, []byte(strings.Repeat("this is not a database\n", 200)), 0o644)
	for _, args := range [][]string{
		{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "x", "--thread", "q1"},
		{"resume", "q1"},
		{"threads", "show", "q1"},
		{"threads", "list"},
	} {
		r := weft(t, append(args, "--store", db))
		r.wantCode(t, exitInternal)
		if want := "weft: opening the store " + db + ": "; !strings.HasPrefix(r.stderr, want) {
			t.Errorf("%v: stderr %q, want it to start with %q", args, r.stderr, want)
		}
	}
}

// TestHintsNameTheStore: every `weft resume` hint printed for a thread in
// a store that is not the default names it with --store, so that the
// hint can be pasted as is; with the default store it does not.
func TestHintsNameTheStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "my threads.db") // a space: the hint quotes it
	q := "'" + db + "'"
	stubs := "testdata/intentqa_unclear.yaml"
	r := weft(t, []string{"run", intentQA, "--stubs", stubs, "--input", "hmm", "--thread", "q1", "--store", db})
	r.wantCode(t, exitWaiting)
	if want := "answer it with: weft resume q1 --store " + q + " --answer TEXT\n"; !strings.HasSuffix(r.stderr, want) {
		t.Errorf("run: stderr %q, want it to end with %q", r.stderr, want)
	}
	r = weft(t, []string{"threads", "show", "q1", "--store", db})
	if want := "answer with: weft resume q1 --store " + q + " --answer TEXT\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("show: stdout %q lacks %q", r.stdout, want)
	}
	r = weft(t, []string{"threads", "fork", "q1", "--store", db, "--at", "3", "--to", "q2"})
	if want := "weft: q2 waits for an answer: weft resume q2 --store " + q + " --answer TEXT\n"; r.stderr != want {
		t.Errorf("fork: stderr %q, want %q", r.stderr, want)
	}
	r = weft(t, []string{"threads", "fork", "q1", "--store", db, "--at", "2", "--to", "q3"})
	if want := "weft: continue the run with: weft resume q3 --store " + q + "\n"; r.stderr != want {
		t.Errorf("fork: stderr %q, want %q", r.stderr, want)
	}
	// The hint pasted as is (its words split as a shell would) works.
	r = weft(t, []string{"resume", "q1", "--store", db, "--answer", "net income 2023"})
	r.wantCode(t, exitOK)

	// With the default store ($XDG_DATA_HOME/weft/threads.db) no --store.
	xdg := filepath.Join(dir, "xdg")
	getenv := func(e *env) {
		e.getenv = func(k string) string { return map[string]string{"XDG_DATA_HOME": xdg}[k] }
	}
	r = weft(t, []string{"run", intentQA, "--stubs", stubs, "--input", "hmm", "--thread", "d1"}, getenv)
	r.wantCode(t, exitWaiting)
	if want := "answer it with: weft resume d1 --answer TEXT\n"; !strings.HasSuffix(r.stderr, want) {
		t.Errorf("default store: stderr %q, want it to end with %q", r.stderr, want)
	}
}

// TestForkListShowAgree: threads list and threads show give a forked
// thread the same run and status, whether it was forked where its run
// waits or in the middle of its steps.
func TestForkListShowAgree(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm", "--thread", "q1", "--store", db, "--answer", "net income 2023"})
	r.wantCode(t, exitOK)
	for at, want := range map[string]string{"2": "running", "3": "waiting", "7": "completed"} {
		to := "f" + at
		weft(t, []string{"threads", "fork", "q1", "--store", db, "--at", at, "--to", to}).wantCode(t, exitOK)
		r = weft(t, []string{"threads", "show", to, "--store", db, "--json"})
		var show struct {
			Run    int    `json:"run"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &show); err != nil {
			t.Fatal(err, r.stdout)
		}
		r = weft(t, []string{"threads", "list", "--store", db, "--json"})
		var list []struct {
			ID     string `json:"id"`
			Runs   int    `json:"runs"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatal(err, r.stdout)
		}
		for _, l := range list {
			if l.ID == to && (l.Runs != show.Run || l.Status != show.Status || show.Status != want) {
				t.Errorf("fork at %s: list says %d runs, %s; show says run %d, %s; want run 1, %s", at, l.Runs, l.Status, show.Run, show.Status, want)
			}
		}
		r = weft(t, []string{"threads", "list", "--store", db})
		if !regexp.MustCompile(to + `\s+IntentQA\s+1\s+` + want).MatchString(r.stdout) {
			t.Errorf("fork at %s: list = %q", at, r.stdout)
		}
	}
}

// TestNewRunInWaitingThreadHint: a new run refused because the thread
// waits says how to answer it, with the store.
func TestNewRunInWaitingThreadHint(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	args := []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm", "--thread", "q1", "--store", db}
	weft(t, args).wantCode(t, exitWaiting)
	r := weft(t, args)
	r.wantCode(t, exitFailed)
	if want := "weft: thread q1, run 1 (waiting): waits for an answer; answer it with Resume before starting a new run: weft resume q1 --store " + db + " --answer TEXT\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}
