package lang

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks that the parser never panics, and that a source that
// parses without errors formats to a source that parses to the same AST
// and formats identically again. Crashers found are kept in
// testdata/fuzz/FuzzParse as regression seeds.
func FuzzParse(f *testing.F) {
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".wf") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			f.Add(src)
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"workflow W { description: a.b[c](d, -e) in [1, 2.5, 3s, \"x\", null, true] }",
		"action a { prompt: \"\"\"\n  x\n  \"\"\" }",
		"workflow W { edges { edge { from: a; to: [b, c]; join: d; on: error } } }",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if x, ds := ParseExpr("fuzz", src); !ds.HasErrors() {
			s := ExprString(x)
			y, ds := ParseExpr("fuzz", []byte(s))
			if ds.HasErrors() {
				t.Fatalf("ExprString output %q does not parse: %v", s, ds)
			}
			if d := cmp.Diff(x, y, astOptions); d != "" {
				t.Fatalf("ExprString(%q) = %q parses differently:\n%s", src, s, d)
			}
		}
		file, ds := ParseFile("fuzz.wf", src)
		out := Format(file) // must not panic, even with errors
		if ds.HasErrors() {
			return
		}
		g, ds2 := ParseFile("fuzz.wf", out)
		if ds2.HasErrors() {
			t.Fatalf("formatted source does not parse: %v\n--- source:\n%s\n--- formatted:\n%s", ds2, src, out)
		}
		if d := diffAST(file, g); d != "" {
			t.Fatalf("formatting changed the AST:\n%s\n--- source:\n%q\n--- formatted:\n%s", d, src, out)
		}
		if out2 := Format(g); !bytes.Equal(out, out2) {
			t.Fatalf("Format is not idempotent\n--- source:\n%q\n--- first:\n%s\n--- second:\n%s", src, out, out2)
		}
	})
}
