package flow_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
)

// limitEnv is a scope whose cells hold the extremes of each numeric kind.
func limitEnv() (*testScope, flow.Cells) {
	s := &testScope{names: map[string]flow.Ref{}, nodes: map[string]map[string]flow.Ref{}}
	var cells flow.Cells
	for _, d := range []struct {
		name string
		t    flow.Type
		v    flow.Value
	}{
		{"maxi", flow.TInt, flow.IntValue(math.MaxInt64)},
		{"mini", flow.TInt, flow.IntValue(math.MinInt64)},
		{"m1", flow.TInt, flow.IntValue(-1)},
		{"two", flow.TInt, flow.IntValue(2)},
		{"big", flow.TFloat, flow.FloatValue(math.MaxFloat64)},
		{"tiny", flow.TFloat, flow.FloatValue(math.SmallestNonzeroFloat64)},
		{"maxd", flow.TDuration, flow.DurationValue(math.MaxInt64)},
		{"mind", flow.TDuration, flow.DurationValue(math.MinInt64)},
		{"anymax", flow.TAny, flow.IntValue(math.MaxInt64)},
		{"sinf", flow.TString, flow.StringValue("inf")},
	} {
		s.names[d.name] = flow.Ref{Cell: len(cells), Type: d.t, Name: d.name}
		cells = append(cells, d.v)
	}
	return s, cells
}

// Integer arithmetic that leaves the range of Int (or of Duration) is an
// error naming the expression and its position, never a wrapped-around
// value; so is a Float result that is not finite.
func TestEvalOverflow(t *testing.T) {
	for _, c := range []struct {
		src  string
		col  int
		expr string
		msg  string
		kind error
	}{
		{`maxi + 1`, 6, "maxi + 1", "integer overflow: 9223372036854775807 + 1", flow.ErrIntOverflow},
		{`anymax + 1`, 8, "anymax + 1", "integer overflow: 9223372036854775807 + 1", flow.ErrIntOverflow},
		{`1 + maxi`, 3, "1 + maxi", "integer overflow: 1 + 9223372036854775807", flow.ErrIntOverflow},
		{`mini - 1`, 6, "mini - 1", "integer overflow: -9223372036854775808 - 1", flow.ErrIntOverflow},
		{`0 - mini`, 3, "0 - mini", "integer overflow: 0 - -9223372036854775808", flow.ErrIntOverflow},
		{`maxi * maxi`, 6, "maxi * maxi", "integer overflow: 9223372036854775807 * 9223372036854775807", flow.ErrIntOverflow},
		{`mini * m1`, 6, "mini * m1", "integer overflow: -9223372036854775808 * -1", flow.ErrIntOverflow},
		{`m1 * mini`, 4, "m1 * mini", "integer overflow: -1 * -9223372036854775808", flow.ErrIntOverflow},
		{`maxi * two`, 6, "maxi * two", "integer overflow: 9223372036854775807 * 2", flow.ErrIntOverflow},
		{`mini / m1`, 6, "mini / m1", "integer overflow: -9223372036854775808 / -1", flow.ErrIntOverflow},
		{`-mini`, 1, "-mini", "integer overflow: -(-9223372036854775808)", flow.ErrIntOverflow},
		{`maxd + 1ns`, 6, "maxd + 1ns", "integer overflow: 2562047h47m16.854775807s + 1ns", flow.ErrIntOverflow},
		{`mind - 1ns`, 6, "mind - 1ns", "integer overflow: -2562047h47m16.854775808s - 1ns", flow.ErrIntOverflow},
		{`maxd * two`, 6, "maxd * two", "integer overflow: 2562047h47m16.854775807s * 2", flow.ErrIntOverflow},
		{`mind / m1`, 6, "mind / m1", "integer overflow: -2562047h47m16.854775808s / -1", flow.ErrIntOverflow},
		{`-mind`, 1, "-mind", "integer overflow: -(-2562047h47m16.854775808s)", flow.ErrIntOverflow},
		{`int(big)`, 1, "int(big)", "1.7976931348623157e+308 is out of the range of Int", flow.ErrIntOverflow},
		{`int(9223372036854775807.0)`, 1, "int(9.223372036854776e+18)", "9.223372036854776e+18 is out of the range of Int", flow.ErrIntOverflow},
		{`big * 2`, 5, "big * 2", "result of 1.7976931348623157e+308 * 2 is +Inf, which has no JSON form", flow.ErrNonFinite},
		{`big + big`, 5, "big + big", "result of 1.7976931348623157e+308 + 1.7976931348623157e+308 is +Inf, which has no JSON form", flow.ErrNonFinite},
		{`-big - big`, 6, "-big - big", "result of -1.7976931348623157e+308 - 1.7976931348623157e+308 is -Inf, which has no JSON form", flow.ErrNonFinite},
		{`1.0 / tiny`, 5, "1.0 / tiny", "result of 1.0 / 5e-324 is +Inf, which has no JSON form", flow.ErrNonFinite},
		{`float(sinf)`, 1, "float(sinf)", `"inf" is not a finite number`, flow.ErrNonFinite},
		{`float("NaN")`, 1, `float("NaN")`, `"NaN" is not a finite number`, flow.ErrNonFinite},
		{`float("1e999")`, 1, `float("1e999")`, `"1e999" is not a finite number`, flow.ErrNonFinite},
	} {
		s, cells := limitEnv()
		p, ds := flow.CompileExpr(ex(c.src), s, flow.Type{})
		if ds.HasErrors() {
			t.Errorf("CompileExpr(%s): %v", c.src, ds)
			continue
		}
		v, err := p.Eval(cells)
		if !checkEvalError(t, c.src, v, err, c.col, c.expr, c.msg) {
			continue
		}
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: %v is not %v", c.src, err, c.kind)
		}
	}
}

// The edges of the range still compute.
func TestEvalNoOverflowAtTheEdges(t *testing.T) {
	for _, c := range []struct {
		src  string
		want flow.Value
	}{
		{`maxi + 0`, flow.IntValue(math.MaxInt64)},
		{`mini + maxi`, flow.IntValue(-1)},
		{`maxi * 1`, flow.IntValue(math.MaxInt64)},
		{`mini * 1`, flow.IntValue(math.MinInt64)},
		{`maxi * m1`, flow.IntValue(-math.MaxInt64)},
		{`mini % m1`, flow.IntValue(0)},
		{`mini / 1`, flow.IntValue(math.MinInt64)},
		{`-maxi - 1`, flow.IntValue(math.MinInt64)},
		{`0 * mini`, flow.IntValue(0)},
		{`maxd - 1ns`, flow.DurationValue(math.MaxInt64 - 1)},
		{`int(-9223372036854775807.0 - 1024.0)`, flow.IntValue(math.MinInt64)},
		{`big + 1.0`, flow.FloatValue(math.MaxFloat64)},
		{`tiny / 2`, flow.FloatValue(0)},
	} {
		s, cells := limitEnv()
		p, ds := flow.CompileExpr(ex(c.src), s, flow.Type{})
		if ds.HasErrors() {
			t.Errorf("CompileExpr(%s): %v", c.src, ds)
			continue
		}
		v, err := p.Eval(cells)
		if err != nil || !v.Equal(c.want) || v.Kind() != c.want.Kind() {
			t.Errorf("%s = %v, %v; want %v", c.src, v, err, c.want)
		}
	}
}

// An expression of constants that overflows is a compile-time diagnostic
// at the operator, not a failure of the run that reaches it.
func TestCompileConstantOverflow(t *testing.T) {
	for _, c := range []struct {
		src string
		col int
		msg string
	}{
		{`9223372036854775807 + 1`, 21, "9223372036854775807 + 1: integer overflow: 9223372036854775807 + 1"},
		{`-(-9223372036854775807 - 1)`, 1, "-(-9223372036854775807 - 1): integer overflow: -(-9223372036854775808)"},
		{`[1, 2 * 4611686018427387904]`, 7, "2 * 4611686018427387904: integer overflow: 2 * 4611686018427387904"},
		{`1e308 * 10.0`, 7, "1e+308 * 10.0: result of 1e+308 * 10.0 is +Inf, which has no JSON form"},
	} {
		s, _ := limitEnv()
		_, ds := flow.CompileExpr(ex(c.src), s, flow.Type{})
		if len(ds) != 1 || ds[0].Pos != P(1, c.col) || ds[0].Code != "overflow" || ds[0].Msg != c.msg || ds[0].Severity != flow.Error {
			t.Errorf("CompileExpr(%s) = %#v; want one overflow error at column %d: %q", c.src, ds, c.col, c.msg)
		}
	}
	// A constant that does not overflow compiles, and one that fails
	// otherwise (a division by zero) is left to run time as before.
	s, cells := limitEnv()
	for _, src := range []string{`9223372036854775806 + 1`, `1 / 0`} {
		p, ds := flow.CompileExpr(ex(src), s, flow.Type{})
		if ds.HasErrors() || p == nil {
			t.Errorf("CompileExpr(%s): %v", src, ds)
			continue
		}
		if src == `1 / 0` {
			if _, err := p.Eval(cells); err == nil || !strings.Contains(err.Error(), "division by zero") {
				t.Errorf("%s: %v", src, err)
			}
		}
	}
}

// The sum reducer refuses to wrap an Int or a Duration around, or to make
// a Float infinite.
func TestSumReducerOverflow(t *testing.T) {
	w := seedWorkflow()
	w.Vars = append(w.Vars,
		&flow.Var{Name: "total", Type: flow.TInt, Reducer: flow.ParseReducer("sum")},
		&flow.Var{Name: "ftotal", Type: flow.TFloat, Reducer: flow.ParseReducer("sum")},
		&flow.Var{Name: "wait", Type: flow.TDuration, Reducer: flow.ParseReducer("sum")},
	)
	p := mustCompile(t, w, seedOptions())
	red := func(name string) flow.Reducer { _, c := cellByName(t, p, name); return c.Reducer }
	for _, c := range []struct {
		name     string
		old, upd flow.Value
		msg      string
		kind     error
	}{
		{"total", flow.IntValue(math.MaxInt64), flow.IntValue(1), "sum reducer: integer overflow: 9223372036854775807 + 1", flow.ErrIntOverflow},
		{"total", flow.IntValue(math.MinInt64), flow.IntValue(-1), "sum reducer: integer overflow: -9223372036854775808 + -1", flow.ErrIntOverflow},
		{"wait", flow.DurationValue(math.MaxInt64), flow.DurationValue(time.Nanosecond), "sum reducer: integer overflow: 2562047h47m16.854775807s + 1ns", flow.ErrIntOverflow},
		{"ftotal", flow.FloatValue(math.MaxFloat64), flow.FloatValue(math.MaxFloat64), "sum reducer: result of 1.7976931348623157e+308 + 1.7976931348623157e+308 is +Inf, which has no JSON form", flow.ErrNonFinite},
	} {
		v, err := red(c.name)(c.old, c.upd)
		if err == nil || err.Error() != c.msg || !errors.Is(err, c.kind) {
			t.Errorf("%s: %v + %v = %v, %v; want %q (%v)", c.name, c.old, c.upd, v, err, c.msg, c.kind)
		}
	}
}

// A non-finite Float can come from Go data (an action written in Go, a
// YAML document's .inf): FromGo refuses it and names where it was.
func TestFromGoRefusesNonFinite(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{math.Inf(1), "flow: +Inf has no JSON form"},
		{math.NaN(), "flow: NaN has no JSON form"},
		{float32(math.Inf(-1)), "flow: -Inf has no JSON form"},
		{map[string]any{"score": math.NaN()}, "flow: score: NaN has no JSON form"},
		{[]any{1.5, math.Inf(1)}, "flow: [1]: +Inf has no JSON form"},
		{struct{ X []float64 }{[]float64{0, math.Inf(1)}}, "flow: X[1]: +Inf has no JSON form"},
	} {
		v, err := flow.FromGo(c.in)
		var fe *flow.FromGoError
		if err == nil || err.Error() != c.want || !errors.As(err, &fe) || !errors.Is(err, flow.ErrNonFinite) {
			t.Errorf("FromGo(%v) = %v, %v; want %q", c.in, v, err, c.want)
		}
	}
}

// Conform refuses a non-finite Float anywhere in a value, so that a step
// that makes one (an action written in Go) fails there, with the field,
// instead of the run failing later when its result is encoded.
func TestConformRefusesNonFinite(t *testing.T) {
	inf := flow.FloatValue(math.Inf(1))
	nan := flow.FloatValue(math.NaN())
	for _, c := range []struct {
		v    flow.Value
		t    flow.Type
		want string
	}{
		{inf, flow.TFloat, "+Inf has no JSON form"},
		{nan, flow.TAny, "NaN has no JSON form"},
		{flow.ListValue(flow.FloatValue(1), nan), flow.ListOf(flow.TFloat), "[1]: NaN has no JSON form"},
		{flow.ListValue(flow.IntValue(1), inf), flow.TAny, "[1]: +Inf has no JSON form"},
		{flow.ObjectValue(map[string]flow.Value{"a": flow.ListValue(inf)}), flow.TObject, "a[0]: +Inf has no JSON form"},
		{flow.ObjectValue(map[string]flow.Value{"a b": nan}), flow.TAny, `"a b": NaN has no JSON form`},
	} {
		v, err := flow.Conform(c.v, c.t)
		if err == nil || err.Error() != c.want || !errors.Is(err, flow.ErrNonFinite) {
			t.Errorf("Conform(%v, %v) = %v, %v; want %q", c.v, c.t, v, err, c.want)
		}
		if err := flow.CheckFinite(c.v); err == nil || err.Error() != c.want {
			t.Errorf("CheckFinite(%v) = %v; want %q", c.v, err, c.want)
		}
	}
	if err := flow.CheckFinite(flow.ObjectValue(map[string]flow.Value{"a": flow.FloatValue(1.5), "b": flow.StringList("x")})); err != nil {
		t.Errorf("CheckFinite of finite data: %v", err)
	}
}

// An error in a huge expression names it by its first 200 bytes, not by a
// copy of all of it.
func TestEvalErrorClipsTheExpression(t *testing.T) {
	elems := make([]flow.Expr, 100000)
	for i := range elems {
		elems[i] = &flow.Lit{Value: flow.IntValue(int64(i))}
	}
	e := &flow.Index{At: P(1, 1), X: &flow.ListExpr{Elems: elems}, Index: &flow.Lit{Value: flow.IntValue(1 << 40)}}
	s, cells := limitEnv()
	p, ds := flow.CompileExpr(e, s, flow.Type{})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	_, err := p.Eval(cells)
	var ee *flow.EvalError
	if !errors.As(err, &ee) || len(ee.Expr) > 210 || !strings.HasPrefix(ee.Expr, "[0, 1, 2, ") || !strings.HasSuffix(ee.Expr, "…") {
		t.Errorf("err = %.300v", err)
	}
}

// An expression tree deeper than MaxExprDepth, from any front-end, is a
// diagnostic of CompileExpr, not a stack overflow; one at the bound
// compiles and evaluates.
func TestCompileExprDepthBound(t *testing.T) {
	chain := func(n int) flow.Expr {
		var e flow.Expr = &flow.Lit{At: P(1, 1), Value: flow.IntValue(1)}
		for range n {
			e = &flow.Binary{At: P(1, 3), Op: "+", X: e, Y: &flow.Lit{Value: flow.IntValue(1)}}
		}
		return e
	}
	nested := func(n int) flow.Expr {
		var e flow.Expr = &flow.Lit{Value: flow.IntValue(1)}
		for range n {
			e = &flow.ListExpr{At: P(1, 1), Elems: []flow.Expr{e}}
		}
		return e
	}
	s, cells := limitEnv()
	for name, e := range map[string]flow.Expr{"chain": chain(150000), "lists": nested(150000)} {
		_, ds := flow.CompileExpr(e, s, flow.Type{})
		if len(ds) != 1 || !strings.Contains(ds[0].Msg, "nested too deeply: more than 1000 levels") {
			t.Errorf("%s: %v", name, ds)
		}
	}
	p, ds := flow.CompileExpr(chain(flow.MaxExprDepth-1), s, flow.Type{})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if v, err := p.Eval(cells); err != nil || v.Int() != flow.MaxExprDepth {
		t.Errorf("chain at the bound = %v, %v", v, err)
	}
}

// Messages about a value name it briefly: a 1 MB string in a type error,
// a failed conversion or a routing explanation is cut, visibly.
func TestMessagesAboutHugeValuesAreBrief(t *testing.T) {
	huge := flow.StringValue(strings.Repeat("x", 1<<20))
	_, err := flow.Conform(huge, flow.TInt)
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "… (1048578 bytes)") {
		t.Errorf("Conform: %.400v", err)
	}
	_, err = flow.Conform(huge, flow.EnumOf("a"))
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("Conform enum: %.400v", err)
	}
	s := &testScope{names: map[string]flow.Ref{"h": {Cell: 0, Type: flow.TString, Name: "h"}}}
	cells := flow.Cells{huge}
	for _, src := range []string{"int(h)", "float(h)"} {
		p, ds := flow.CompileExpr(ex(src), s, flow.Type{})
		if ds.HasErrors() {
			t.Fatal(ds)
		}
		if _, err := p.Eval(cells); err == nil || len(err.Error()) > 400 {
			t.Errorf("%s: %.400v", src, err)
		}
		if x := p.Explain(cells); len(x) > 300 {
			t.Errorf("Explain: %d bytes", len(x))
		}
	}
	if b := flow.Brief(flow.StringValue("short")); b != `"short"` {
		t.Errorf("Brief = %s", b)
	}
}
