package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/lang"
)

const tidy = `workflow Tidy {
  nodes {
    node a {
      type: FUNCTION
      action: "x"
      outputs {
        y: String
      }
    }
  }
  initial: a
  finals: [ a ]
}
`

func TestFmtStdout(t *testing.T) {
	r := weft(t, []string{"fmt", "testdata/unformatted.wf"})
	r.wantCode(t, exitOK)
	if r.stdout != tidy {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, tidy)
	}
}

func TestFmtListAndWrite(t *testing.T) {
	dir := t.TempDir()
	messy := copyFile(t, "testdata/unformatted.wf", dir, 0o600)
	clean := filepath.Join(dir, "clean.wf")
	if err := os.WriteFile(clean, []byte(tidy), 0o644); err != nil {
		t.Fatal(err)
	}

	r := weft(t, []string{"fmt", "-l", dir})
	r.wantCode(t, exitFailed)
	if r.stdout != messy+"\n" {
		t.Errorf("-l listed %q, want %q", r.stdout, messy+"\n")
	}

	r = weft(t, []string{"fmt", "-w", messy, clean})
	r.wantCode(t, exitOK)
	if r.stdout != "" {
		t.Errorf("-w printed %q", r.stdout)
	}
	got, err := os.ReadFile(messy)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != tidy {
		t.Errorf("rewritten file:\n%s", got)
	}
	if fi, err := os.Stat(messy); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("permissions after -w: %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}

	// Idempotent: nothing more to do.
	r = weft(t, []string{"fmt", "-l", dir})
	r.wantCode(t, exitOK)
	if r.stdout != "" {
		t.Errorf("-l after -w listed %q", r.stdout)
	}
}

func TestFmtSyntaxErrorUntouched(t *testing.T) {
	dir := t.TempDir()
	bad := copyFile(t, "testdata/syntax_error.wf", dir, 0o644)
	before, _ := os.ReadFile(bad)
	r := weft(t, []string{"fmt", "-w", bad})
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "syntax_error.wf:7:11: expected \":\" after \"y\", found \"String\"\n        y String\n          ^\n") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	after, _ := os.ReadFile(bad)
	if !bytes.Equal(before, after) {
		t.Errorf("a file with a syntax error was rewritten:\n%s", after)
	}
	r = weft(t, []string{"fmt", "-l", bad})
	r.wantCode(t, exitFailed)
	if r.stdout != "" {
		t.Errorf("-l listed a file it cannot format: %q", r.stdout)
	}
}

func TestFmtIdempotentOnExamples(t *testing.T) {
	files, err := expandFiles([]string{"testdata", filepath.Join("..", "..", "examples")})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, ds := lang.ParseFile(path, src)
		if ds.HasErrors() {
			continue
		}
		once := lang.Format(f)
		f2, ds := lang.ParseFile(path, once)
		if ds.HasErrors() {
			t.Errorf("%s: formatted source does not parse: %v", path, ds)
			continue
		}
		if twice := lang.Format(f2); !bytes.Equal(once, twice) {
			t.Errorf("%s: formatting is not idempotent:\n%s\n---\n%s", path, once, twice)
		}
	}
}

func TestWriteFileAtomicFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.wf")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.wf")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := writeFileAtomic(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target = %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("target permissions = %v", fi.Mode().Perm())
	}
}

// TestFmtExamplesClean: every .wf file of examples/ is in canonical form,
// and fmt of a directory leaves its ollama-workflows JSON files alone
// (they are not .wf source); one named on the command line is refused.
func TestFmtExamplesClean(t *testing.T) {
	r := weft(t, []string{"fmt", "-l", filepath.Join("..", "..", "examples")})
	r.wantCode(t, exitOK)
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("fmt -l examples/: stdout %q, stderr %q; want nothing", r.stdout, r.stderr)
	}
	owfFile := filepath.Join("..", "..", "examples", "owf", "workflow.json")
	r = weft(t, []string{"fmt", owfFile})
	r.wantCode(t, exitUsage)
	if want := "weft: " + owfFile + ": fmt formats .wf files; this is an ollama-workflows JSON file (weft convert prints it as .wf)\n"; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("fmt FILE.json: stderr %q, want %q", r.stderr, want)
	}
}
