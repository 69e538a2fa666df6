package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrorsPointAtTheSubcommand: a usage error says where that
// command's help is, not only the root's.
func TestUsageErrorsPointAtTheSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--nope"}, "Run 'weft run --help' for usage.\n"},
		{[]string{"run", "nofile.wf"}, "Run 'weft run --help' for usage.\n"},
		{[]string{"threads", "show", "a", "b"}, "Run 'weft threads show --help' for usage.\n"},
		{[]string{"resume"}, "Run 'weft resume --help' for usage.\n"},
		{[]string{"nosuchcommand"}, "Run 'weft --help' for usage.\n"},
	} {
		r := weft(t, tc.args)
		r.wantCode(t, exitUsage)
		if !strings.HasSuffix(r.stderr, tc.want) {
			t.Errorf("%v: stderr %q, want it to end with %q", tc.args, r.stderr, tc.want)
		}
	}
}

// TestMissingFileSameWording: every command that reads a file it is given
// reports a missing one, or a directory, in the same words: "PATH: no such
// file or directory".
func TestMissingFileSameWording(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nofile")
	for _, tc := range []struct {
		args []string
		path string
	}{
		{[]string{"run", missing + ".wf"}, missing + ".wf"},
		{[]string{"validate", missing + ".wf"}, missing + ".wf"},
		{[]string{"fmt", missing + ".wf"}, missing + ".wf"},
		{[]string{"graph", missing + ".wf"}, missing + ".wf"},
		{[]string{"convert", missing + ".json"}, missing + ".json"},
		{[]string{"test", missing + ".test.yaml"}, missing + ".test.yaml"},
		{[]string{"index", missing + ".json", "-o", filepath.Join(dir, "x.db")}, missing + ".json"},
		{[]string{"run", intentQA, "--stubs", missing + ".yaml"}, missing + ".yaml"},
	} {
		r := weft(t, tc.args)
		r.wantCode(t, exitUsage)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if !strings.HasPrefix(first, "weft: ") || !strings.HasSuffix(first, " "+tc.path+": no such file or directory") || strings.Contains(first, "open ") || strings.Contains(first, "stat ") {
			t.Errorf("%v: %q; want \"weft: [what:] %s: no such file or directory\", without the system call", tc.args, first, tc.path)
		}
	}
	for _, args := range [][]string{{"run", dir}, {"graph", dir}} {
		r := weft(t, args)
		if first, _, _ := strings.Cut(r.stderr, "\n"); first != "weft: "+dir+": is a directory" {
			t.Errorf("%v: %q, want %q", args, first, "weft: "+dir+": is a directory")
		}
	}
}

// TestVersionFlag: weft --version prints what weft version does.
func TestVersionFlag(t *testing.T) {
	r := weft(t, []string{"--version"})
	r.wantCode(t, exitOK)
	if r.stdout != versionString()+"\n" {
		t.Errorf("--version: %q, want %q", r.stdout, versionString()+"\n")
	}
}

// TestHelpMatchesBehaviour: what the help texts say of resume --embed,
// test -v and validate DIR is what they do.
func TestHelpMatchesBehaviour(t *testing.T) {
	// resume takes --embed, as its help says.
	r := weft(t, []string{"resume", "--help"})
	if !strings.Contains(r.stdout, "--embed SPEC") {
		t.Errorf("resume --help has no --embed flag, though it says --embed is reused unless given:\n%s", r.stdout)
	}
	// validate DIR picks up ollama-workflows JSON files, and says so.
	dir := t.TempDir()
	owfSrc, err := os.ReadFile(filepath.Join("..", "..", "examples", "owf", "workflow.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "flow.json"), owfSrc, 0o644)
	r = weft(t, []string{"validate", dir})
	if !strings.Contains(r.stdout, "flow.json: ok") {
		t.Errorf("validate DIR did not check the JSON file:\n%s", r.stdout)
	}
	r = weft(t, []string{"validate", "--help"})
	if !strings.Contains(r.stdout, "ollama-workflows") {
		t.Errorf("validate --help does not say DIR's JSON files are checked:\n%s", r.stdout)
	}
	// test prints a line per case without -v; -v adds the run's path.
	r = weft(t, []string{"test", filepath.Join("..", "..", "examples", "intentqa")})
	if !strings.Contains(r.stdout, "ok   qa answered from the first retrieval") || strings.Contains(r.stdout, "run: completed") {
		t.Errorf("test without -v:\n%s", r.stdout)
	}
	r = weft(t, []string{"test", "--help"})
	if strings.Contains(r.stdout, "per failing case") || !strings.Contains(r.stdout, "a line per case") {
		t.Errorf("test --help does not say it prints a line per case:\n%s", r.stdout)
	}
}
