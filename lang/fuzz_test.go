package lang

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/weftlang/weft/flow"
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
		"mcp \"s-1\" { command: \"node\"; args: [\"a\"]; env: {A: {env: \"B\"}, C: \"d\"}; timeout: 1s; max_inline: -1 }",
	} {
		f.Add([]byte(s))
	}
	for _, s := range hostileSeeds() {
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

// hostileSeeds are the inputs of the attack of issue 14, kept as seeds of
// every fuzz target of the package: chains past the depth bound (smaller
// than the attack's 150,000 terms, to keep fuzzing fast), overflowing and
// non-finite arithmetic, imports that try to leave the tree or read
// special files, a huge line, invalid UTF-8 and terminal escapes.
func hostileSeeds() []string {
	wf := func(expr string) string {
		return "workflow W {\n  variables {\n    a: Int = 1\n  }\n  nodes {\n    node n {\n      type: END\n      set: { a = " + expr + " }\n    }\n  }\n  initial: n\n  finals: [ n ]\n}\n"
	}
	return []string{
		"a" + strings.Repeat(" + a", 1500),
		wf("a" + strings.Repeat(" + a", 1500)),
		wf("a" + strings.Repeat(" + a", 200)), // below the bound: round-trips through Format
		strings.Repeat("(", 1200) + "a" + strings.Repeat(")", 1200),
		"a" + strings.Repeat(".b", 1200),
		"a" + strings.Repeat("[0]", 1200),
		strings.Repeat("-", 1200) + "a",
		"9223372036854775807 + 1",
		"9223372036854775807 * 9223372036854775807",
		"-(-9223372036854775807 - 1)",
		"(-9223372036854775807 - 1) / -1",
		"(-9223372036854775807 - 1) % -1",
		"9223372036854775808",
		"1e308 * 10.0",
		"1e999",
		"float(\"inf\") + float(\"NaN\")",
		"int(1e300)",
		"2562047h47m16s + 2562047h47m16s",
		wf("9223372036854775807 + 1"),
		"import \"/proc/self/environ\"\n",
		"import \"/etc/shadow\"\n",
		"import \"../../x.wf\"\n",
		"import \"/dev/zero\"\nimport \"/dev/urandom\"\n",
		"import \"lib/../../../etc/passwd.wf\"\n",
		"workflow W { description: \"" + strings.Repeat("x", 20000) + "\" }",
		strings.Repeat("Q", 10000) + " {",
		"workflow \xff\xfe { description: \"\x00\x1b[2J\u202e\" }",
		"action a { prompt: \"\xc3\x28 \xed\xa0\x80\" }\x00",
	}
}

// FuzzDiagnostics checks that whatever a file holds, the printed
// diagnostics of loading it are bounded in size per diagnostic, valid
// UTF-8, free of raw control characters, and never quote an imported file
// (imports are refused here).
func FuzzDiagnostics(f *testing.F) {
	for _, s := range hostileSeeds() {
		f.Add([]byte(s))
	}
	f.Add([]byte("workflow W {\n\tnodes {\n\t\tnode a { typ: X }\n\t}\n}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, ds := LoadSource("fuzz.wf", src, nil)
		var b bytes.Buffer
		if err := FormatDiagnostics(&b, ds, m.Source); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		// A message is at most MaxMessage runes (4 bytes each, plus the
		// note of what was cut and the position), a quoted line at most
		// 2*QuoteWindow+1 runes of up to 6 bytes each (an escape), and
		// its caret line as many runes.
		if limit := len(ds) * (4*MaxMessage + 100 + 2*6*(2*QuoteWindow+3)); len(out) > limit {
			t.Fatalf("%d bytes of diagnostics for %d diagnostics (limit %d)", len(out), len(ds), limit)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("diagnostics are not valid UTF-8: %q", out)
		}
		for i := 0; i < len(out); i++ {
			if c := out[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				t.Fatalf("raw control byte %#x in diagnostics: %q", c, out)
			}
		}
	})
}

// FuzzEval parses an expression, compiles it over cells of every numeric
// extreme, and evaluates it: it must never panic, and a value it returns
// always has a JSON form (no NaN, no infinity, no wrapped-around Int
// reported as a success is checked by the unit tests).
func FuzzEval(f *testing.F) {
	for _, s := range hostileSeeds() {
		f.Add([]byte(s))
	}
	for _, s := range []string{"maxi + one", "-mini", "mini / m1", "big * big", "big / tiny", "float(s) * 2.0", "int(big)", "maxd * maxi", "l + l", "[maxi, big][one]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		x, ds := ParseExpr("fuzz", src)
		if ds.HasErrors() {
			return
		}
		c := &compiler{m: &Module{}}
		e := c.expr(x)
		if c.diags.HasErrors() || e == nil {
			return
		}
		scope, cells := extremeCells()
		p, ds := flow.CompileExpr(e, scope, flow.Type{})
		if ds.HasErrors() {
			return
		}
		v, err := p.Eval(cells)
		if err != nil {
			return
		}
		if _, err := v.MarshalJSON(); err != nil {
			t.Fatalf("%s = %v, which does not encode: %v", src, v, err)
		}
	})
}

// extremeScope resolves the names of extremeCells.
type extremeScope map[string]flow.Ref

func (s extremeScope) Lookup(name string) (flow.Ref, error) {
	if r, ok := s[name]; ok {
		return r, nil
	}
	return flow.Ref{}, fmt.Errorf("unknown name %s", name)
}

func (s extremeScope) LookupField(string, string) (flow.Ref, bool, error) {
	return flow.Ref{}, false, nil
}

func extremeCells() (extremeScope, flow.Cells) {
	s := extremeScope{}
	var cells flow.Cells
	for _, d := range []struct {
		name string
		t    flow.Type
		v    flow.Value
	}{
		{"maxi", flow.TInt, flow.IntValue(math.MaxInt64)},
		{"mini", flow.TInt, flow.IntValue(math.MinInt64)},
		{"m1", flow.TInt, flow.IntValue(-1)},
		{"one", flow.TInt, flow.IntValue(1)},
		{"big", flow.TFloat, flow.FloatValue(math.MaxFloat64)},
		{"tiny", flow.TFloat, flow.FloatValue(math.SmallestNonzeroFloat64)},
		{"maxd", flow.TDuration, flow.DurationValue(math.MaxInt64)},
		{"s", flow.TString, flow.StringValue("1e308")},
		{"l", flow.ListOf(flow.TInt), flow.ListValue(flow.IntValue(math.MaxInt64))},
		{"a", flow.TAny, flow.FloatValue(-math.MaxFloat64)},
	} {
		s[d.name] = flow.Ref{Cell: len(cells), Type: d.t, Name: d.name}
		cells = append(cells, d.v)
	}
	return s, cells
}
