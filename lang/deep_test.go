package lang_test

import (
	"strings"
	"testing"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

// deepExprs are expressions n levels deep, of each shape that nests.
func deepExprs(n int) map[string]string {
	return map[string]string{
		"plus chain":    "a" + strings.Repeat(" + a", n),
		"or chain":      "a" + strings.Repeat(" || a", n),
		"mixed chain":   "a" + strings.Repeat(" * a + a", n/2),
		"right chain":   strings.Repeat("a + (", n) + "a" + strings.Repeat(")", n),
		"parentheses":   strings.Repeat("(", n) + "a" + strings.Repeat(")", n),
		"members":       "a" + strings.Repeat(".b", n),
		"indexes":       "a" + strings.Repeat("[0]", n),
		"negations":     strings.Repeat("-", n) + "a",
		"lists":         strings.Repeat("[", n) + "a" + strings.Repeat("]", n),
		"chain in list": "[" + strings.Repeat("[a", n/3) + strings.Repeat(" + a", n/3) + strings.Repeat("]", n/3) + "]",
	}
}

// An expression nested deeper than the bound (150,000 terms of a + a + ...,
// as deep as any other shape) is a diagnostic, not a stack overflow and not
// seconds of work: parsing stops at the bound.
func TestDeepExpressionsAreRefused(t *testing.T) {
	for name, src := range deepExprs(150000) {
		t.Run(name, func(t *testing.T) {
			_, ds := lang.ParseExpr("x.wf", []byte(src))
			if !ds.HasErrors() || !strings.Contains(ds.Error(), "nested too deeply") {
				t.Errorf("ParseExpr: %.300v", ds)
			}
			file := "workflow W {\n  variables {\n    a: Any\n  }\n  nodes {\n    node n {\n      type: END\n      set: { a = " + src + " }\n    }\n  }\n  initial: n\n  finals: [ n ]\n}\n"
			_, ds = lang.LoadSource("x.wf", []byte(file), nil)
			if !ds.HasErrors() || !strings.Contains(ds.Error(), "nested too deeply") {
				t.Errorf("LoadSource: %.300v", ds)
			}
		})
	}
}

// Below the bound the same shapes parse, compile, print and run.
func TestDeepExpressionsBelowTheBound(t *testing.T) {
	for name, src := range deepExprs(400) {
		t.Run(name, func(t *testing.T) {
			x, ds := lang.ParseExpr("x.wf", []byte(src))
			if ds.HasErrors() {
				t.Fatalf("ParseExpr: %.300v", ds)
			}
			if lang.ExprString(x) == "" {
				t.Error("no text")
			}
		})
	}
	src := "a" + strings.Repeat(" + a", 900)
	file := "workflow W {\n  variables {\n    a: Int = 1\n    b: Int = 0\n  }\n  nodes {\n    node n {\n      type: END\n      set: { b = " + src + " }\n    }\n  }\n  initial: n\n  finals: [ n ]\n}\n"
	m, ds := lang.LoadSource("x.wf", []byte(file), nil)
	if ds.HasErrors() {
		t.Fatalf("LoadSource: %.300v", ds)
	}
	if _, ds := flow.Compile(m.Main(), nil); ds.HasErrors() {
		t.Fatalf("Compile: %.300v", ds)
	}
	f, ds := lang.ParseFile("x.wf", []byte(file))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if out := lang.Format(f); !strings.Contains(string(out), src) {
		t.Errorf("Format lost the expression")
	}
}
