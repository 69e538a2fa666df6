package lang_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

const okLib = "action greet {\n  type: LLM\n  prompt: \"hi\"\n}\n"

// importTree writes root/app.wf importing imp, root/lib/ok.wf, and
// outside/secret.wf next to root, and returns the path of app.wf.
func importTree(t *testing.T, imp string) (app, root string) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "root")
	for _, d := range []string{root, filepath.Join(root, "lib"), filepath.Join(dir, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, src string) {
		if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "lib", "ok.wf"), okLib)
	write(filepath.Join(dir, "outside", "secret.wf"), "SECRET_TOKEN=abc123 is not .wf\n")
	write(filepath.Join(dir, "outside", "secret.txt"), "SECRET_TOKEN=abc123\n")
	app = filepath.Join(root, "app.wf")
	write(app, "import \""+imp+"\"\n")
	return app, root
}

// loadBoth loads app with lang.Load and with LoadSource and the reader the
// weft command uses, and checks they agree; it returns the diagnostics,
// formatted with their source lines.
func loadBoth(t *testing.T, app string) (flow.Diagnostics, string) {
	t.Helper()
	_, ds := lang.Load(app)
	src, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	m2, ds2 := lang.LoadSource(app, src, lang.ImportReader(filepath.Dir(app)))
	if ds.Error() != ds2.Error() {
		t.Errorf("Load and LoadSource disagree:\n%v\n%v", ds, ds2)
	}
	var out bytes.Buffer
	if err := lang.FormatDiagnostics(&out, ds2, m2.Source); err != nil {
		t.Fatal(err)
	}
	return ds, out.String()
}

// An import resolves inside the directory tree of the root file, and reads
// only a regular .wf file of bounded size; anything else is refused with
// an error at the import that says why, and prints none of the content.
func TestImportConfinement(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("paths and special files of Unix")
	}
	for _, c := range []struct {
		name  string
		imp   string
		setup func(t *testing.T, root string)
		want  string // in the one diagnostic's message
	}{
		{"absolute", "/etc/passwd.wf", nil, `import "/etc/passwd.wf": an absolute path cannot be imported`},
		{"proc environ", "/proc/self/environ", nil, `import "/proc/self/environ": only .wf files can be imported`},
		{"dotdot", "../outside/secret.wf", nil, `import "../outside/secret.wf": the path leaves the directory of the root file`},
		{"dotdot inside", "lib/../../outside/secret.wf", nil, `import "lib/../../outside/secret.wf": the path leaves the directory of the root file`},
		{"not wf", "lib/notes.txt", func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, "lib", "notes.txt"), []byte("SECRET_TOKEN=abc123"), 0o644)
		}, `import "lib/notes.txt": only .wf files can be imported`},
		{"symlink out", "lib/link.wf", func(t *testing.T, root string) {
			if err := os.Symlink(filepath.Join(root, "..", "outside", "secret.wf"), filepath.Join(root, "lib", "link.wf")); err != nil {
				t.Fatal(err)
			}
		}, "the file is outside the directory of the root file (through a symbolic link)"},
		{"symlinked dir out", "up/secret.wf", func(t *testing.T, root string) {
			if err := os.Symlink(filepath.Join(root, "..", "outside"), filepath.Join(root, "up")); err != nil {
				t.Fatal(err)
			}
		}, "the file is outside the directory of the root file (through a symbolic link)"},
		{"symlink to proc", "env.wf", func(t *testing.T, root string) {
			if err := os.Symlink("/proc/self/environ", filepath.Join(root, "env.wf")); err != nil {
				t.Fatal(err)
			}
		}, "the file is outside the directory of the root file (through a symbolic link)"},
		{"symlink to dev zero", "zero.wf", func(t *testing.T, root string) {
			if err := os.Symlink("/dev/zero", filepath.Join(root, "zero.wf")); err != nil {
				t.Fatal(err)
			}
		}, "the file is outside the directory of the root file (through a symbolic link)"},
		{"fifo", "pipe.wf", func(t *testing.T, root string) {
			if err := mkfifo(filepath.Join(root, "pipe.wf")); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, "not a regular file (a named pipe)"},
		{"directory", "dir.wf", func(t *testing.T, root string) {
			os.Mkdir(filepath.Join(root, "dir.wf"), 0o755)
		}, "not a regular file (a directory)"},
		{"too large", "big.wf", func(t *testing.T, root string) {
			big := bytes.Repeat([]byte("# SECRET_TOKEN comment line\n"), lang.MaxImportSize/28+1)
			os.WriteFile(filepath.Join(root, "big.wf"), big, 0o644)
		}, "larger than 4 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			app, root := importTree(t, c.imp)
			if c.setup != nil {
				c.setup(t, root)
			}
			done := make(chan struct{})
			var ds flow.Diagnostics
			var out string
			go func() {
				defer close(done)
				ds, out = loadBoth(t, app)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("loading blocked")
			}
			if len(ds) != 1 || ds[0].Pos != (flow.Pos{File: app, Line: 1, Col: 1}) || ds[0].Code != "import" || !strings.Contains(ds[0].Msg, c.want) {
				t.Errorf("diagnostics = %v; want one import error at %s:1:1 with %q", ds, app, c.want)
			}
			if strings.Contains(out, "SECRET") || strings.Contains(out, "abc123") {
				t.Errorf("the diagnostics quote the refused file:\n%s", out)
			}
		})
	}
}

// Imports inside the tree still work, through a symbolic link that stays
// inside it too, and an imported file may import its sibling through "..".
func TestImportInsideTree(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	app, root := importTree(t, "lib/ok.wf")
	if ds, _ := loadBoth(t, app); ds.HasErrors() {
		t.Fatalf("import inside the tree: %v", ds)
	}
	if err := os.Symlink(filepath.Join(root, "lib", "ok.wf"), filepath.Join(root, "alias.wf")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "lib", "more.wf"), []byte("import \"../alias.wf\"\n"), 0o644)
	os.WriteFile(app, []byte("import \"lib/more.wf\"\n"), 0o644)
	m, ds := lang.Load(app)
	if ds.HasErrors() || len(m.Files) != 3 || len(m.Bindings) != 1 {
		t.Fatalf("import through .. and a link inside the tree: %v, %d files", ds, len(m.Files))
	}
}

// Of an imported file that does not parse, the diagnostics quote one
// (clipped) line at most, and say how many more there were.
func TestImportThatDoesNotParseQuotesOneLine(t *testing.T) {
	app, root := importTree(t, "junk.wf")
	junk := "action a {\n  SECRET_A: 1\n  SECRET_B: 2\n}\naction b {\n  SECRET_C: 1\n}\nworkflow W {\n  SECRET_D\n}\n"
	os.WriteFile(filepath.Join(root, "junk.wf"), []byte(junk), 0o644)
	ds, out := loadBoth(t, app)
	// One diagnostic: its header, the quoted line, the caret.
	if n := strings.Count(out, "\n"); n != 3 || strings.Contains(out, "SECRET_") {
		t.Errorf("the diagnostics quote more than one line of the file (%d lines):\n%s", n, out)
	}
	if len(ds) != 1 || !strings.Contains(ds[0].Msg, "more diagnostics in "+filepath.Join(root, "junk.wf")+" not shown") {
		t.Errorf("diagnostics = %v", ds)
	}
}

// ReadImport reads a regular file and refuses the others by their mode,
// before opening them: /dev/zero would never end.
func TestReadImportSpecialFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("device files")
	}
	for name, want := range map[string]string{
		"/dev/zero":    "not a regular file (a device)",
		"/dev/urandom": "not a regular file (a device)",
		"/":            "not a regular file (a directory)",
	} {
		_, err := lang.ReadImport(name)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, lang.ErrImportRefused) {
			t.Errorf("ReadImport(%s) = %v; want %q", name, err, want)
		}
	}
}
