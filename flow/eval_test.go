package flow_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
)

// testScope resolves bare names from names and node.field from nodes.
type testScope struct {
	names map[string]flow.Ref
	nodes map[string]map[string]flow.Ref
}

func (s *testScope) Lookup(name string) (flow.Ref, error) {
	if r, ok := s.names[name]; ok {
		return r, nil
	}
	var cands []string
	for n := range s.names {
		cands = append(cands, n)
	}
	slices.Sort(cands)
	return flow.Ref{}, fmt.Errorf("unknown name %s%s", name, flow.Suggest(name, cands))
}

func (s *testScope) LookupField(node, field string) (flow.Ref, bool, error) {
	fs, ok := s.nodes[node]
	if !ok {
		return flow.Ref{}, false, nil
	}
	if r, ok := fs[field]; ok {
		return r, true, nil
	}
	return flow.Ref{}, true, fmt.Errorf("node %s has no field %s", node, field)
}

// evalEnv is the scope and the cell values the eval tests run over.
func evalEnv() (*testScope, flow.Cells) {
	type def struct {
		name string
		t    flow.Type
		v    any
	}
	defs := []def{
		{"i", flow.TInt, 7},
		{"f", flow.TFloat, 2.5},
		{"s", flow.TString, "hello"},
		{"b", flow.TBool, true},
		{"no", flow.TBool, false},
		{"l", flow.ListOf(flow.TInt), []any{1, 2, 3}},
		{"ls", flow.ListOf(flow.TString), []string{"a", "b"}},
		{"o", flow.TObject, map[string]any{"a": 1, "b": "x", "n": map[string]any{"deep": true}}},
		{"intent", flow.EnumOf("qa", "summarization", "not_clear"), "qa"},
		{"a", flow.TAny, 5},
		{"astr", flow.TAny, "str"},
		{"alist", flow.TAny, []any{1, 2}},
		{"d", flow.TDuration, 90 * time.Second},
		{"n", flow.TAny, nil},
		{"zero", flow.TInt, 0},
		{"rephraseCount", flow.TInt, 2},
	}
	s := &testScope{names: map[string]flow.Ref{}, nodes: map[string]map[string]flow.Ref{}}
	var cells flow.Cells
	add := func(name string, t flow.Type, v any) flow.Ref {
		val, err := flow.FromGo(v)
		if err != nil {
			panic(err)
		}
		r := flow.Ref{Cell: len(cells), Type: t, Name: name}
		cells = append(cells, val)
		return r
	}
	for _, d := range defs {
		s.names[d.name] = add(d.name, d.t, d.v)
	}
	s.nodes["retrieve"] = map[string]flow.Ref{
		"query":  add("retrieve.query", flow.TString, "q"),
		"chunks": add("retrieve.chunks", flow.ListOf(flow.TString), []string{"c1", "c2"}),
	}
	return s, cells
}

func compileOK(t *testing.T, src string) (*flow.Program, flow.Cells) {
	t.Helper()
	s, cells := evalEnv()
	p, ds := flow.CompileExpr(ex(src), s, flow.Type{})
	if ds.HasErrors() || p == nil {
		t.Fatalf("CompileExpr(%s): %v", src, ds)
	}
	return p, cells
}

func TestEval(t *testing.T) {
	for _, c := range []struct {
		src  string
		want any    // converted with FromGo
		typ  string // static type; "" to skip
	}{
		// literals and names
		{`1`, 1, "Int"},
		{`1.5`, 1.5, "Float"},
		{`"x"`, "x", "String"},
		{`true`, true, "Bool"},
		{`null`, nil, "Any"},
		{`90s`, 90 * time.Second, "Duration"},
		{`i`, 7, "Int"},
		{`intent`, "qa", `Enum["qa","summarization","not_clear"]`},
		{`retrieve.query`, "q", "String"},
		{`retrieve.chunks`, []string{"c1", "c2"}, "List[String]"},
		// arithmetic
		{`i + 1`, 8, "Int"},
		{`i - 10`, -3, "Int"},
		{`i * 3`, 21, "Int"},
		{`i / 2`, 3, "Int"},
		{`i % 4`, 3, "Int"},
		{`-i`, -7, "Int"},
		{`-f`, -2.5, "Float"},
		{`-d`, -90 * time.Second, "Duration"},
		{`i + f`, 9.5, "Float"},
		{`f * 2`, 5.0, "Float"},
		{`f / 2`, 1.25, "Float"},
		{`7.5 % 2`, 1.5, "Float"},
		{`1 + 2 * 3`, 7, "Int"},
		{`(1 + 2) * 3`, 9, "Int"},
		{`10 - 2 - 3`, 5, "Int"},
		{`10 - (2 - 3)`, 11, "Int"},
		{`a + 1`, 6, "Any"},
		{`s + " world"`, "hello world", "String"},
		{`intent + "!"`, "qa!", "String"},
		{`l + [4]`, []any{1, 2, 3, 4}, "List[Int]"},
		{`ls + ["c"]`, []string{"a", "b", "c"}, "List[String]"},
		{`l + alist`, []any{1, 2, 3, 1, 2}, "List[Any]"},
		{`d + 30s`, 2 * time.Minute, "Duration"},
		{`d - 30s`, time.Minute, "Duration"},
		{`d * 2`, 3 * time.Minute, "Duration"},
		{`d / 3`, 30 * time.Second, "Duration"},
		// comparison
		{`i == 7`, true, "Bool"},
		{`i != 7`, false, "Bool"},
		{`i == 7.0`, true, "Bool"},
		{`f == 2.5`, true, "Bool"},
		{`s == "hello"`, true, "Bool"},
		{`intent == "qa"`, true, "Bool"},
		{`"qa" == intent`, true, "Bool"},
		{`intent != "not_clear"`, true, "Bool"},
		{`n == null`, true, "Bool"},
		{`l == [1, 2, 3]`, true, "Bool"},
		{`o == {a: 1, b: "x", n: {deep: true}}`, true, "Bool"},
		{`i < 8`, true, "Bool"},
		{`i <= 7`, true, "Bool"},
		{`i > 7`, false, "Bool"},
		{`i >= 7`, true, "Bool"},
		{`f < i`, true, "Bool"},
		{`s < "help"`, true, "Bool"},
		{`intent < "r"`, true, "Bool"},
		{`d > 1m`, true, "Bool"},
		{`a > 4`, true, "Bool"},
		{`rephraseCount < 3`, true, "Bool"},
		// logic
		{`b && i > 1`, true, "Bool"},
		{`b && no`, false, "Bool"},
		{`no || b`, true, "Bool"},
		{`no || no`, false, "Bool"},
		{`!b`, false, "Bool"},
		{`!no`, true, "Bool"},
		{`!(i > 1)`, false, "Bool"},
		{`intent == "qa" && rephraseCount < 3 || false`, true, "Bool"},
		{`false || true && false`, false, "Bool"},
		// short circuit: the right side would fail with index out of range
		{`no && l[10] == 1`, false, "Bool"},
		{`b || l[10] == 1`, true, "Bool"},
		{`i > 100 && 1 / zero == 1`, false, "Bool"},
		// in
		{`2 in l`, true, "Bool"},
		{`5 in l`, false, "Bool"},
		{`2.0 in l`, true, "Bool"},
		{`"ell" in s`, true, "Bool"},
		{`"xyz" in s`, false, "Bool"},
		{`"a" in o`, true, "Bool"},
		{`"z" in o`, false, "Bool"},
		{`intent in ["qa", "summarization"]`, true, "Bool"},
		{`intent in ["not_clear"]`, false, "Bool"},
		{`"a" in ls`, true, "Bool"},
		{`1 in alist`, true, "Bool"},
		{`"q" in n`, false, "Bool"},
		// literals and access
		{`[1, "a", [true]]`, []any{1, "a", []any{true}}, "List[Any]"},
		{`[1, 2.5]`, []any{1, 2.5}, "List[Float]"},
		{`[]`, []any{}, "List[Any]"},
		{`{x: i, "y z": [s]}`, map[string]any{"x": 7, "y z": []any{"hello"}}, "Object"},
		{`{}`, map[string]any{}, "Object"},
		{`l[0]`, 1, "Int"},
		{`l[2]`, 3, "Int"},
		{`l[-1]`, 3, "Int"},
		{`l[-3]`, 1, "Int"},
		{`ls[i - 6]`, "b", "String"},
		{`o["b"]`, "x", "Any"},
		{`o["missing"]`, nil, "Any"},
		{`o.a`, 1, "Any"},
		{`o.n.deep`, true, "Any"},
		{`o.missing`, nil, "Any"},
		{`n.x`, nil, "Any"},
		{`n[0]`, nil, "Any"},
		{`alist[1]`, 2, "Any"},
		{`[1, 2][1]`, 2, "Int"},
		{`{k: 1}.k`, 1, "Any"},
		// builtins
		{`len(s)`, 5, "Int"},
		{`len(l)`, 3, "Int"},
		{`len(o)`, 3, "Int"},
		{`len(intent)`, 2, "Int"},
		{`contains(ls, "b")`, true, "Bool"},
		{`contains(s, "lo")`, true, "Bool"},
		{`contains(o, "zz")`, false, "Bool"},
		{`lower("AbC")`, "abc", "String"},
		{`upper(s)`, "HELLO", "String"},
		{`trim("  x ")`, "x", "String"},
		{`startswith(s, "he")`, true, "Bool"},
		{`startswith(s, "lo")`, false, "Bool"},
		{`endswith(s, "lo")`, true, "Bool"},
		{`join(ls, "+")`, "a+b", "String"},
		{`join(l, ",")`, "1,2,3", "String"},
		{`split("a,b,,c", ",")`, []string{"a", "b", "", "c"}, "List[String]"},
		{`str(i)`, "7", "String"},
		{`str(s)`, "hello", "String"},
		{`str(l)`, "[1, 2, 3]", "String"},
		{`int("42")`, 42, "Int"},
		{`int(" -3 ")`, -3, "Int"},
		{`int(f)`, 2, "Int"},
		{`int(true)`, 1, "Int"},
		{`int(no)`, 0, "Int"},
		{`float("2.5")`, 2.5, "Float"},
		{`float(i)`, 7.0, "Float"},
		{`default(n, "fallback")`, "fallback", "Any"},
		{`default(s, "fallback")`, "hello", "String"},
		{`keys(o)`, []string{"a", "b", "n"}, "List[String]"},
		{`first(l)`, 1, "Int"},
		{`last(ls)`, "b", "String"},
		{`first([])`, nil, "Any"},
		{`last([])`, nil, "Any"},
		{`min(3, 1, 2)`, 1, "Int"},
		{`max(3, 1, 2)`, 3, "Int"},
		{`max(i, f)`, 7, "Float"},
		{`min(i)`, 7, "Int"},
		{`min(2, 2.0)`, 2, "Float"},
	} {
		p, cells := compileOK(t, c.src)
		got, err := p.Eval(cells)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		want, err := flow.FromGo(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Errorf("%s = %v, want %v", c.src, got, want)
		}
		if c.typ != "" && p.Type.String() != c.typ {
			t.Errorf("%s: static type %v, want %s", c.src, p.Type, c.typ)
		}
		if p.Expr == nil || p.Expr.String() == "" {
			t.Errorf("%s: Program.Expr not kept", c.src)
		}
	}
}

func TestEvalBool(t *testing.T) {
	for src, want := range map[string]bool{`b`: true, `no`: false, `i == 7`: true, `a`: true, `n`: false} {
		p, cells := compileOK(t, src)
		got, err := p.EvalBool(cells)
		if err != nil || got != want {
			t.Errorf("EvalBool(%s) = %v, %v", src, got, err)
		}
	}
	p, cells := compileOK(t, `l[9]`)
	if _, err := p.EvalBool(cells); err == nil {
		t.Error("EvalBool: error lost")
	}
}

// checkEvalError checks that v, err, from evaluating src, is an
// *EvalError at column col of line 1 that names expr and says msg, and
// that its Error() spells all three; it reports whether err is one.
func checkEvalError(t *testing.T, src string, v flow.Value, err error, col int, expr, msg string) bool {
	t.Helper()
	var ee *flow.EvalError
	if !errors.As(err, &ee) {
		t.Errorf("%s = %v, %v; want an *EvalError", src, v, err)
		return false
	}
	if ee.Pos != P(1, col) || ee.Expr != expr || ee.Msg != msg {
		t.Errorf("%s: got %v %q %q, want %v %q %q", src, ee.Pos, ee.Expr, ee.Msg, P(1, col), expr, msg)
	}
	if want := fmt.Sprintf("t.wf:1:%d: evaluating %s: %s", col, expr, msg); err.Error() != want {
		t.Errorf("%s: Error() = %q, want %q", src, err, want)
	}
	return true
}

func TestEvalRuntimeErrors(t *testing.T) {
	for _, c := range []struct {
		src  string
		col  int
		expr string // the expression the error names
		msg  string
	}{
		{`i / zero`, 3, "i / zero", "division by zero"},
		{`i % zero`, 3, "i % zero", "division by zero"},
		{`f / 0`, 3, "f / 0", "division by zero"},
		{`f % 0.0`, 3, "f % 0.0", "division by zero"},
		{`d / zero`, 3, "d / zero", "division by zero"},
		{`1 + l[3]`, 5, "l[3]", "index 3 out of range (length 3)"},
		{`l[-4]`, 1, "l[-4]", "index -4 out of range (length 3)"},
		{`[][0]`, 1, "[][0]", "index 0 out of range (length 0)"},
		{`b && l[10] == 1`, 6, "l[10]", "index 10 out of range (length 3)"},
		{`no || l[10] == 1`, 7, "l[10]", "index 10 out of range (length 3)"},
		{`alist[astr]`, 1, `alist[astr]`, "list index is String, not Int"},
		{`astr.x`, 1, "astr.x", "astr is String, not an Object"},
		{`a[0]`, 1, "a[0]", "cannot index Int"},
		{`-astr`, 1, "-astr", "cannot negate String"},
		{`astr < 1`, 6, "astr < 1", "cannot compare String with Int"},
		{`a + astr`, 3, "a + astr", "operator + cannot combine Int and String"},
		{`int("4x")`, 1, `int("4x")`, `"4x" is not an integer`},
		{`int(l)`, 1, `int(l)`, "cannot convert List to Int"},
		{`float("x")`, 1, `float("x")`, `"x" is not a number`},
		{`float(l)`, 1, `float(l)`, "cannot convert List to Float"},
		{`max(a, astr)`, 1, `max(a, astr)`, "cannot compare String with Int"},
	} {
		p, cells := compileOK(t, c.src)
		v, err := p.Eval(cells)
		checkEvalError(t, c.src, v, err, c.col, c.expr, c.msg)
	}
	// Without a position.
	e := &flow.EvalError{Expr: "x / 0", Msg: "division by zero"}
	if e.Error() != "evaluating x / 0: division by zero" {
		t.Errorf("Error() = %q", e)
	}
}

func TestCompileExprErrors(t *testing.T) {
	for _, c := range []struct {
		src  string
		code string
		col  int
		msg  string
	}{
		{`intnt + 1`, "unknown-name", 1, `unknown name intnt; did you mean "intent"?`},
		{`retrieve.qery`, "unknown-name", 1, "node retrieve has no field qery"},
		{`"a" < 1`, "type-mismatch", 5, `operator < wants two numbers, strings or durations: "a" has type String, 1 has type Int`},
		{`b < no`, "type-mismatch", 3, `operator < wants two numbers, strings or durations: b has type Bool, no has type Bool`},
		{`o < o`, "type-mismatch", 3, `operator < wants two numbers, strings or durations`},
		{`!3`, "type-mismatch", 1, "operator ! wants Bool, 3 has type Int"},
		{`-s`, "type-mismatch", 1, "operator - wants a number, s has type String"},
		{`i + true`, "type-mismatch", 3, "operator + wants two numbers, strings, lists or durations: i has type Int, true has type Bool"},
		{`s - "x"`, "type-mismatch", 3, `operator - wants two numbers or durations: s has type String, "x" has type String`},
		{`d + 1`, "type-mismatch", 3, `operator + wants two numbers, strings, lists or durations`},
		{`s * 2`, "type-mismatch", 3, `operator * wants two numbers, or a duration and an Int`},
		{`s % 2`, "type-mismatch", 3, `operator % wants two numbers`},
		{`i && b`, "type-mismatch", 3, "operator && wants Bool operands: i has type Int, b has type Bool"},
		{`b || s`, "type-mismatch", 3, "operator || wants Bool operands"},
		{`s == 1`, "type-mismatch", 3, `operator == compares values that can never be equal: s has type String, 1 has type Int`},
		{`l == ls`, "type-mismatch", 3, `operator == compares values that can never be equal`},
		{`1 in ls`, "type-mismatch", 3, "operator in looks for an element of the wrong type"},
		{`1 in s`, "type-mismatch", 3, "operator in looks for a non-string in a string"},
		{`1 in i`, "type-mismatch", 3, "operator in wants a List, String or Object on the right"},
		{`intent == "qaa"`, "enum-literal", 11, `"qaa" is not a value of Enum["qa","summarization","not_clear"]`},
		{`"qaa" != intent`, "enum-literal", 1, `"qaa" is not a value of Enum["qa","summarization","not_clear"]`},
		{`intent in ["qa", "sumarization"]`, "enum-literal", 18, `"sumarization" is not a value of Enum`},
		{`s[0]`, "type-mismatch", 1, "cannot index s of type String"},
		{`l["x"]`, "type-mismatch", 3, `list index "x" has type String, want Int`},
		{`o[1]`, "type-mismatch", 3, "object key 1 has type Int, want String"},
		{`s.x`, "type-mismatch", 1, "cannot select .x from s of type String"},
		{`len(s, s)`, "type-mismatch", 1, "len takes 1 argument, got 2: len(String|List|Object) Int"},
		{`len()`, "type-mismatch", 1, "len takes 1 argument, got 0"},
		{`contains(s)`, "type-mismatch", 1, "contains takes 2 arguments, got 1"},
		{`min()`, "type-mismatch", 1, "min takes at least 1 argument, got 0"},
		{`len(i)`, "type-mismatch", 1, "len: argument has type Int, want String, List or Object"},
		{`lower(i)`, "type-mismatch", 1, "lower: argument 1 has type Int, want String"},
		{`join(s, ",")`, "type-mismatch", 1, "join: argument 1 has type String, want List"},
		{`keys(l)`, "type-mismatch", 1, "keys: argument 1 has type List[Int], want Object"},
		{`max(1, s)`, "type-mismatch", 1, "max: argument 2 has type String, want a number"},
		{`lenn(s)`, "unknown-name", 1, `unknown function lenn; did you mean "len"?`},
	} {
		s, _ := evalEnv()
		p, ds := flow.CompileExpr(ex(c.src), s, flow.Type{})
		if p != nil {
			t.Errorf("%s: compiled despite errors", c.src)
		}
		if len(ds) != 1 {
			t.Errorf("%s: want one diagnostic, got %d:\n%v", c.src, len(ds), ds)
			if len(ds) == 0 {
				continue
			}
		}
		d := ds[0]
		if d.Code != c.code || d.Severity != flow.Error || d.Pos != P(1, c.col) || !strings.HasPrefix(d.Msg, c.msg) {
			t.Errorf("%s:\n got  %s %v %v %q\n want %s error %v %q", c.src, d.Code, d.Severity, d.Pos, d.Msg, c.code, P(1, c.col), c.msg)
		}
	}
}

func TestCompileExprReportsEveryProblemOnce(t *testing.T) {
	s, _ := evalEnv()
	// Two independent mistakes are both reported; the enclosing operators do
	// not report them again.
	_, ds := flow.CompileExpr(ex(`(foo + true) && bar == 1`), s, flow.TBool)
	if len(ds) != 2 || ds[0].Code != "unknown-name" || ds[1].Code != "unknown-name" ||
		ds[0].Pos != P(1, 2) || ds[1].Pos != P(1, 17) {
		t.Errorf("got:\n%v", ds)
	}
	// The expected type is checked.
	_, ds = flow.CompileExpr(ex(`i + 1`), s, flow.TBool)
	if len(ds) != 1 || ds[0].Code != "type-mismatch" || ds[0].Msg != "i + 1 has type Int, want Bool" || ds[0].Pos != P(1, 3) {
		t.Errorf("want Bool: %v", ds)
	}
	if p, ds := flow.CompileExpr(ex(`i`), s, flow.TFloat); p == nil || len(ds) != 0 {
		t.Errorf("Int where Float is wanted: %v", ds)
	}
	// A missing expression.
	_, ds = flow.CompileExpr(nil, s, flow.Type{})
	if len(ds) != 1 || ds[0].Code != "syntax" {
		t.Errorf("nil expression: %v", ds)
	}
	// Operators that do not exist.
	for _, e := range []flow.Expr{bin("^", lit(1), lit(2)), unary("~", lit(1))} {
		_, ds := flow.CompileExpr(e, s, flow.Type{})
		if len(ds) != 1 || ds[0].Code != "syntax" || !strings.Contains(ds[0].Msg, "unknown operator") {
			t.Errorf("%s: %v", e, ds)
		}
	}
}

func TestBuiltinsAllCovered(t *testing.T) {
	// Every documented builtin compiles with its documented arity.
	args := map[string]string{
		"len": `len(s)`, "contains": `contains(s, "h")`, "lower": `lower(s)`, "upper": `upper(s)`,
		"trim": `trim(s)`, "startswith": `startswith(s, "h")`, "endswith": `endswith(s, "o")`,
		"join": `join(ls, "")`, "split": `split(s, "l")`, "str": `str(i)`, "int": `int(f)`,
		"float": `float(i)`, "default": `default(n, 1)`, "keys": `keys(o)`, "first": `first(l)`,
		"last": `last(l)`, "min": `min(1, 2)`, "max": `max(1, 2)`,
	}
	for name, doc := range flow.Builtins() {
		src, ok := args[name]
		if !ok {
			t.Errorf("builtin %s (%s) has no test", name, doc)
			continue
		}
		p, cells := compileOK(t, src)
		if _, err := p.Eval(cells); err != nil {
			t.Errorf("%s: %v", src, err)
		}
		if !strings.HasPrefix(doc, name+"(") {
			t.Errorf("Builtins[%s] = %q does not document the call", name, doc)
		}
	}
	if len(args) != len(flow.Builtins()) {
		t.Errorf("test lists %d builtins, Builtins has %d", len(args), len(flow.Builtins()))
	}
}

func TestExprString(t *testing.T) {
	a, b, c := ident("a"), ident("b"), ident("c")
	for _, x := range []struct {
		e    flow.Expr
		want string
	}{
		{bin("+", a, bin("*", b, c)), "a + b * c"},
		{bin("*", bin("+", a, b), c), "(a + b) * c"},
		{bin("-", bin("-", a, b), c), "a - b - c"},
		{bin("-", a, bin("-", b, c)), "a - (b - c)"},
		{bin("&&", bin("||", a, b), c), "(a || b) && c"},
		{bin("||", a, bin("&&", b, c)), "a || b && c"},
		{bin("==", bin("<", a, b), c), "a < b == c"},
		{bin("<", a, bin("==", b, c)), "a < (b == c)"},
		{bin("in", a, list(b, c)), "a in [b, c]"},
		{bin("&&", bin("in", a, b), bin("==", c, lit("x"))), `a in b && c == "x"`},
		{unary("!", bin("&&", a, b)), "!(a && b)"},
		{unary("-", lit(1)), "-1"},
		{unary("-", sel(a, "b")), "-a.b"},
		{sel(unary("-", a), "b"), "(-a).b"},
		{index(unary("!", a), lit(0)), "(!a)[0]"},
		{unary("!", a), "!a"},
		{sel(sel(a, "b"), "c"), "a.b.c"},
		{sel(bin("+", a, b), "c"), "(a + b).c"},
		{index(a, bin("-", b, lit(1))), "a[b - 1]"},
		{index(bin("+", a, b), lit(0)), "(a + b)[0]"},
		{call("max", a, bin("+", b, c)), "max(a, b + c)"},
		{call("len"), "len()"},
		{list(), "[]"},
		{&flow.ObjectExpr{Keys: []string{"k", "two words", ""}, Values: []flow.Expr{a, lit(1), lit(true)}}, `{k: a, "two words": 1, "": true}`},
		{lit("q\"uote"), `"q\"uote"`},
		{lit(2.0), "2.0"},
		{lit(0.5), "0.5"},
		{lit(90 * time.Second), "1m30s"},
		{lit(nil), "null"},
		{lit([]any{1, "x"}), `[1, "x"]`},
	} {
		if got := x.e.String(); got != x.want {
			t.Errorf("String() = %q, want %q", got, x.want)
		}
	}
}

func TestWalkExpr(t *testing.T) {
	e := ex(`f(a.b, [c, d[e]], {k: -g}) && h`)
	var seen []string
	flow.WalkExpr(e, func(x flow.Expr) bool {
		if id, ok := x.(*flow.Ident); ok {
			seen = append(seen, id.Name)
		}
		return true
	})
	if got := strings.Join(seen, " "); got != "a c d e g h" {
		t.Errorf("walk saw %q", got)
	}
	// Returning false prunes.
	n := 0
	flow.WalkExpr(e, func(x flow.Expr) bool { n++; return false })
	if n != 1 {
		t.Errorf("pruned walk visited %d", n)
	}
	flow.WalkExpr(nil, func(flow.Expr) bool { t.Error("visited nil"); return true })
}

func TestExplain(t *testing.T) {
	p, cells := compileOK(t, `intent == "qa" && rephraseCount < 3 || rephraseCount > 9 || retrieve.query == s`)
	want := `intent = "qa", rephraseCount = 2, retrieve.query = "q", s = "hello"`
	if got := p.Explain(cells); got != want {
		t.Errorf("Explain = %q, want %q", got, want)
	}
	if len(p.Refs) != 4 || p.Refs[0].Name != "intent" {
		t.Errorf("Refs = %v", p.Refs)
	}
	p, cells = compileOK(t, `1 < 2`)
	if got := p.Explain(cells); got != "" {
		t.Errorf("Explain of a constant = %q", got)
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"retrieve", "rephrase", "generate", "ask_user", "id"}
	for _, c := range []struct{ name, want string }{
		{"retreive", `; did you mean "retrieve"?`},
		{"Generate", `; did you mean "generate"?`},
		{"gen", ""},
		{"idx", `; did you mean "id"?`},
		{"xyz", ""},
		{"completely_different", ""},
	} {
		if got := flow.Suggest(c.name, cands); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDiagnosticFormatting(t *testing.T) {
	d := flow.Diagnostic{Pos: P(3, 4), Severity: flow.Error, Code: "x", Msg: "bad"}
	w := flow.Diagnostic{Pos: P(1, 2), Severity: flow.Warning, Code: "y", Msg: "odd"}
	n := flow.Diagnostic{Severity: flow.Warning, Code: "z", Msg: "somewhere"}
	if d.Error() != "t.wf:3:4: bad" || w.Error() != "t.wf:1:2: warning: odd" || n.Error() != "warning: somewhere" {
		t.Errorf("Error(): %q %q %q", d.Error(), w.Error(), n.Error())
	}
	for _, c := range []struct {
		p    flow.Pos
		want string
	}{
		{flow.Pos{}, "-"}, {flow.Pos{File: "f"}, "f"}, {flow.Pos{Line: 2}, "2"}, {flow.Pos{Line: 2, Col: 3}, "2:3"},
		{flow.Pos{File: "f", Line: 2, Col: 3}, "f:2:3"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("Pos%v.String() = %q, want %q", c.p, got, c.want)
		}
	}
	ds := flow.Diagnostics{d, w, n}
	if !ds.HasErrors() || len(ds.Errors()) != 1 || len(ds.Warnings()) != 2 || ds.Err() == nil {
		t.Error("filters")
	}
	if ds.Warnings().Err() != nil || ds.Warnings().HasErrors() {
		t.Error("warnings alone are not an error")
	}
	ds.Sort()
	if ds[0].Code != "z" || ds[1].Code != "y" || ds[2].Code != "x" {
		t.Errorf("Sort: %v", ds)
	}
	if ds.Error() != "warning: somewhere\nt.wf:1:2: warning: odd\nt.wf:3:4: bad" {
		t.Errorf("Diagnostics.Error() = %q", ds.Error())
	}
	if (flow.Diagnostics{}).Error() != "no errors" || (flow.Diagnostics{d}).Error() != d.Error() {
		t.Error("Diagnostics.Error() of 0 or 1")
	}
	var target flow.Diagnostics
	if err := fmt.Errorf("wrapped: %w", ds.Err()); !errors.As(err, &target) || len(target) != 3 {
		t.Error("errors.As through wrapping")
	}
	if flow.Error.String() != "error" || flow.Warning.String() != "warning" {
		t.Error("Severity.String")
	}
}
