package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFindFromEnv(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tatqa"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(Env, dir)
	got, err := Find("tatqa")
	if err != nil || got != filepath.Join(dir, "tatqa") {
		t.Fatalf("Find = %q, %v; want %q", got, err, filepath.Join(dir, "tatqa"))
	}
	_, err = Find("missing")
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Sub != "missing" || len(nf.Looked) != 1 {
		t.Fatalf("Find(missing) error = %v; want a *NotFoundError naming one place", err)
	}
}

func TestFindBesideModule(t *testing.T) {
	root := t.TempDir()
	mod := filepath.Join(root, "proj")
	data := filepath.Join(root, "shared", "data", "chinook")
	for _, d := range []string{filepath.Join(mod, "a", "b"), data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(Env, "")
	t.Chdir(filepath.Join(mod, "a", "b"))
	got, err := Find("chinook")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(data); mustEval(t, got) != want {
		t.Fatalf("Find = %q; want %q", got, data)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	q, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
