package lang

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/weftlang/weft/flow"
)

var update = flag.Bool("update", false, "rewrite golden files")

// astOptions compare ASTs ignoring positions, the file name, comments (see
// commentTexts) and the spelling of string literals, whose value is
// compared. The order of clauses is not compared: the printer moves an
// edge's from and to first.
var astOptions = cmp.Options{
	cmpopts.IgnoreTypes(flow.Pos{}),
	cmpopts.IgnoreFields(File{}, "Name", "Comments"),
	cmpopts.IgnoreFields(StringLit{}, "Raw"),
	cmpopts.SortSlices(func(a, b *Clause) bool { return a.Name < b.Name }),
}

// diffAST returns a description of the differences between a and b,
// ignoring positions, or "".
func diffAST(a, b *File) string { return cmp.Diff(a, b, astOptions) }

func commentTexts(f *File) []string {
	var out []string
	for _, c := range f.Comments {
		out = append(out, c.Text)
	}
	return out
}

// moduleRoot returns the directory holding go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if gomod := strings.TrimSpace(string(out)); err == nil && gomod != "" && gomod != os.DevNull {
		return filepath.Dir(gomod)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// wfFiles lists every .wf file under root.
func wfFiles(t testing.TB, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".wf") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func mustParse(t testing.TB, name string, src []byte) *File {
	t.Helper()
	f, ds := ParseFile(name, src)
	if len(ds) > 0 {
		var b bytes.Buffer
		FormatDiagnostics(&b, ds, func(string) []byte { return src })
		t.Fatalf("parse %s:\n%s", name, b.String())
	}
	return f
}

// checkFormat asserts, for a source that parses without errors, that
// formatting is idempotent and that the formatted source parses to the
// same AST.
func checkFormat(t testing.TB, name string, src []byte, f *File) []byte {
	t.Helper()
	out := Format(f)
	g, ds := ParseFile(name, out)
	if len(ds) > 0 {
		t.Fatalf("%s: formatted source does not parse: %v\n--- formatted:\n%s", name, ds, out)
	}
	if d := diffAST(f, g); d != "" {
		t.Fatalf("%s: formatting changed the AST (-source +formatted):\n%s\n--- formatted:\n%s", name, d, out)
	}
	if out2 := Format(g); !bytes.Equal(out, out2) {
		t.Fatalf("%s: Format is not idempotent:\n--- first:\n%s\n--- second:\n%s", name, out, out2)
	}
	return out
}
