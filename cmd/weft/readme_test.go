package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeFirstCommand returns the arguments of the first `go run ./cmd/weft`
// command of README.md's Set-up section, as a shell would split them.
func readmeFirstCommand(t *testing.T, readme string) []string {
	t.Helper()
	_, setup, ok := strings.Cut(readme, "\n## Set-up\n")
	if !ok {
		t.Fatal("README.md has no ## Set-up section")
	}
	setup, _, _ = strings.Cut(setup, "\n## ")
	_, block, ok := strings.Cut(setup, "```sh\n")
	if !ok {
		t.Fatal("README.md's Set-up has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	block = strings.ReplaceAll(block, "\\\n", " ")
	for _, line := range strings.Split(block, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "go run ./cmd/weft ")
		if !ok {
			continue
		}
		if err := shellFree(rest); err != nil {
			t.Fatalf("README.md's first command: %v", err)
		}
		args, err := shellWords(rest)
		if err != nil {
			t.Fatalf("README.md's first command %q: %v", line, err)
		}
		return args
	}
	t.Fatal("README.md's Set-up runs no `go run ./cmd/weft` command")
	return nil
}

// The README's first command works on a fresh clone with nothing beside
// it: no ../shared/data, no $WEFT_DATA, no model, no network. The test
// copies what a clone has (README.md, go.mod and examples/) into an empty
// directory and runs exactly the README's arguments there.
func TestREADMEFirstCommandOnAFreshClone(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	args := readmeFirstCommand(t, string(readme))
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("README.md's first command is weft %v, want a run", args)
	}
	clone := filepath.Join(t.TempDir(), "weft")
	for _, p := range []string{"README.md", "go.mod", "examples"} {
		copyTree(t, filepath.Join("..", "..", p), filepath.Join(clone, p))
	}
	home := t.TempDir() // an empty home: no data fetched before
	t.Setenv("WEFT_DATA", "")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Chdir(clone)
	if _, err := os.Stat(filepath.Join("..", "shared")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("../shared is visible from the clone: %v", err)
	}
	r := weft(t, args)
	r.wantCode(t, 0)
	const answer = "answer: Halvorsen Marine's total revenue in 2024 was $399.0 million"
	if !strings.HasPrefix(r.stdout, answer) {
		t.Errorf("stdout = %q, want it to start with %q", r.stdout, answer)
	}
	// --trace shows the real retrieval finding the right report.
	for _, want := range []string{"step 2: retrieve {query: ", "Ferry services | $ 212.6 | $ 198.4", "step 4: generate"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the trace does not show %q:\n%s", want, r.stderr)
		}
	}
}

// copyTree copies the file or directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
