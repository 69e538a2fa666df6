package flow

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Env is what a compiled expression reads at run time: the value of each
// state cell (a variable, parameter, slot, or node field) by index. The
// engine provides it.
type Env interface {
	Get(cell int) Value
}

// Cells is the simplest Env: a slice indexed by cell.
type Cells []Value

// Get implements Env.
func (c Cells) Get(cell int) Value { return c[cell] }

// Ref is a resolved name: the state cell that holds it and its static type.
type Ref struct {
	Cell int
	Type Type
	Name string // the name as the user should read it, e.g. "retrieve.query"
}

// Scope resolves names while an expression compiles.
type Scope interface {
	// Lookup resolves a bare name. It returns an error (a message, without
	// position) when the name is unknown or ambiguous.
	Lookup(name string) (Ref, error)
	// LookupField resolves node.field. ok is false when node does not name
	// a node, in which case the selector is an Object member access.
	LookupField(node, field string) (ref Ref, ok bool, err error)
}

// Program is a compiled, type-checked expression.
type Program struct {
	Expr   Expr  // the source expression
	Type   Type  // its static type
	Refs   []Ref // the cells it reads, in order of first use, for messages
	eval   func(Env) (Value, error)
	direct int // 1 + the cell the program only reads, or 0: Eval then skips the closure
}

// Eval evaluates the program over env. Errors are *EvalError.
func (p *Program) Eval(env Env) (Value, error) {
	if p.direct > 0 {
		return env.Get(p.direct - 1), nil
	}
	return p.eval(env)
}

// EvalBool evaluates a condition.
func (p *Program) EvalBool(env Env) (bool, error) {
	v, err := p.Eval(env)
	if err != nil {
		return false, err
	}
	return v.Truthy(), nil
}

// Explain lists the values the program reads, "name = value" joined by
// commas: used to say what a failed routing compared.
func (p *Program) Explain(env Env) string {
	parts := make([]string, len(p.Refs))
	for i, r := range p.Refs {
		parts[i] = r.Name + " = " + Brief(env.Get(r.Cell))
	}
	return strings.Join(parts, ", ")
}

// EvalError is a failure while evaluating an expression (division by zero,
// an index out of range, a value of the wrong kind behind an Any, an
// overflow).
type EvalError struct {
	Pos  Pos
	Expr string
	Msg  string
	// Err is the underlying error when there is one: ErrIntOverflow or
	// ErrNonFinite for a result out of range, or the error of a function.
	// errors.Is and errors.As see it through the EvalError.
	Err error
}

// ErrIntOverflow is the kind of an error for integer arithmetic (on Ints
// or Durations) whose result does not fit in 64 bits: weft never wraps
// around silently.
var ErrIntOverflow = errors.New("integer overflow")

// ErrNonFinite is the kind of an error for a Float that is NaN or
// infinite. Such a number has no JSON form, so no step may make one: the
// expression, reducer or conversion that would is an error instead.
var ErrNonFinite = errors.New("non-finite number")

// Unwrap returns the underlying error, if any.
func (e *EvalError) Unwrap() error { return e.Err }

// Error names the position, the expression and the problem.
func (e *EvalError) Error() string {
	if e.Pos.IsValid() {
		return fmt.Sprintf("%s: evaluating %s: %s", e.Pos, e.Expr, e.Msg)
	}
	return fmt.Sprintf("evaluating %s: %s", e.Expr, e.Msg)
}

type evalFn = func(Env) (Value, error)

type compiler struct {
	scope Scope
	diags Diagnostics
	refs  []Ref
}

// CompileExpr resolves the names in e through scope, type-checks it, and
// compiles it to closures. want, if not zero, is the type the context
// expects (a condition wants Bool); a mismatch is reported. All problems
// are returned at once, each with the position of the offending part.
func CompileExpr(e Expr, scope Scope, want Type) (*Program, Diagnostics) {
	if exprDeeperThan(e, MaxExprDepth) {
		// Compiling, printing and evaluating recurse on the tree.
		return nil, Diagnostics{{Pos: e.Pos(), Severity: Error, Code: "syntax",
			Msg: fmt.Sprintf("expression nested too deeply: more than %d levels (each operator of a chain such as a + b + c counts one)", MaxExprDepth)}}
	}
	c := &compiler{scope: scope}
	t, fn := c.expr(e)
	// A string literal stored where an Enum is wanted must be one of its
	// values: mode = "fsat" is as wrong as mode == "fsat".
	switch {
	case want.Kind == KindEnum:
		if _, ok := e.(*Lit); ok {
			c.enumLiteral(want, e)
		}
	case want.Kind == KindList && want.ElemType().Kind == KindEnum:
		if _, ok := e.(*ListExpr); ok {
			c.enumLiteral(want.ElemType(), e)
		}
	}
	if !want.IsZero() && !t.IsZero() && !t.AssignableTo(want) {
		c.errorf(e.Pos(), "type-mismatch", "%s has type %s, want %s", e, t, want)
	}
	if !c.diags.HasErrors() && isConstant(e) {
		// An expression of constants is evaluated now, so that one that
		// overflows is reported before any run.
		if _, err := fn(nil); err != nil {
			var ee *EvalError
			if errors.As(err, &ee) && (errors.Is(err, ErrIntOverflow) || errors.Is(err, ErrNonFinite)) {
				c.errorf(ee.Pos, "overflow", "%s: %s", ee.Expr, ee.Msg)
			}
		}
	}
	if c.diags.HasErrors() {
		return nil, c.diags
	}
	return &Program{Expr: e, Type: t, Refs: c.refs, eval: fn, direct: c.directCell(e) + 1}, c.diags
}

// MaxExprDepth is the deepest expression tree CompileExpr accepts (the
// .wf parser has the same bound): a chain a + b + c is one level deeper
// per operator, like any nesting.
const MaxExprDepth = 1000

// exprDeeperThan reports whether the tree e is more than limit levels deep.
// It walks with an explicit stack, and stops at the first path too deep,
// so a hostile tree costs neither stack nor more than limit steps down.
func exprDeeperThan(e Expr, limit int) bool {
	type item struct {
		e Expr
		d int
	}
	stack := []item{{e, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.e == nil {
			continue
		}
		if it.d > limit {
			return true
		}
		push := func(xs ...Expr) {
			for _, x := range xs {
				stack = append(stack, item{x, it.d + 1})
			}
		}
		switch x := it.e.(type) {
		case *Selector:
			push(x.X)
		case *Index:
			push(x.X, x.Index)
		case *Unary:
			push(x.X)
		case *Binary:
			push(x.X, x.Y)
		case *Call:
			push(x.Args...)
		case *ListExpr:
			push(x.Elems...)
		case *ObjectExpr:
			push(x.Values...)
		}
	}
	return false
}

// isConstant reports whether e is made of literals and operators only, so
// that its value is known without an Env.
func isConstant(e Expr) bool {
	constant := true
	WalkExpr(e, func(x Expr) bool {
		switch x.(type) {
		case *Lit, *Unary, *Binary, *ListExpr, *ObjectExpr:
		default:
			constant = false
		}
		return constant
	})
	return constant
}

func (c *compiler) errorf(at Pos, code, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: at, Severity: Error, Code: code, Msg: fmt.Sprintf(format, args...)})
}

func (c *compiler) use(r Ref) {
	for _, x := range c.refs {
		if x.Cell == r.Cell {
			return
		}
	}
	c.refs = append(c.refs, r)
}

func fail(e Expr, format string, args ...any) error {
	return &EvalError{Pos: e.Pos(), Expr: exprText(e), Msg: fmt.Sprintf(format, args...)}
}

// failKind is fail for an error of a kind errors.Is finds (ErrIntOverflow,
// ErrNonFinite).
func failKind(e Expr, kind error, format string, args ...any) error {
	return &EvalError{Pos: e.Pos(), Expr: exprText(e), Msg: fmt.Sprintf(format, args...), Err: kind}
}

// kindError is an error message of a kind errors.Is finds.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// overflowError says that a op b does not fit in an Int (or a Duration).
func overflowError(a Value, op string, b Value) error {
	return &kindError{ErrIntOverflow, fmt.Sprintf("integer overflow: %s %s %s", a, op, b)}
}

// nonFiniteError says that a op b made r, a NaN or an infinity.
func nonFiniteError(a Value, op string, b Value, r float64) error {
	return &kindError{ErrNonFinite, fmt.Sprintf("result of %s %s %s is %s, which has no JSON form", a, op, b, formatFloat(r))}
}

// atExpr turns an error of an operator into an *EvalError naming e.
func atExpr(e Expr, err error) error {
	return &EvalError{Pos: e.Pos(), Expr: exprText(e), Msg: err.Error(), Err: errors.Unwrap(err)}
}

func isFinite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// addInt, subInt, mulInt and divInt are the Int operators, with ok false
// when the result does not fit in an int64.
func addInt(x, y int64) (int64, bool) {
	s := x + y
	return s, (s > x) == (y > 0)
}

func subInt(x, y int64) (int64, bool) {
	s := x - y
	return s, (s < x) == (y > 0)
}

func mulInt(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	p := x * y
	if x == -1 && y == math.MinInt64 || y == -1 && x == math.MinInt64 || p/y != x {
		return p, false
	}
	return p, true
}

func divInt(x, y int64) (int64, bool) {
	if x == math.MinInt64 && y == -1 {
		return 0, false
	}
	return x / y, true
}

// intArith applies an Int operator (+ - * / %) to two Ints or, for + - and
// the * / of a Duration by an Int, Durations; mk builds the result. y must
// not be 0 for / and %.
func intArith(op string, a, b Value, x, y int64, mk func(int64) Value) (Value, error) {
	var r int64
	ok := true
	switch op {
	case "+":
		r, ok = addInt(x, y)
	case "-":
		r, ok = subInt(x, y)
	case "*":
		r, ok = mulInt(x, y)
	case "/":
		r, ok = divInt(x, y)
	case "%":
		if y == -1 {
			r = 0 // MinInt64 % -1 is 0, and so is any x % -1
		} else {
			r = x % y
		}
	}
	if !ok {
		return Null, overflowError(a, op, b)
	}
	return mk(r), nil
}

func constFn(v Value) evalFn { return func(Env) (Value, error) { return v, nil } }

func cellFn(cell int) evalFn { return func(env Env) (Value, error) { return env.Get(cell), nil } }

// expr returns the static type of e and its evaluator. On error it records a
// diagnostic and returns the zero Type (which is compatible with anything,
// so one mistake is not reported again by every enclosing operator).
func (c *compiler) expr(e Expr) (Type, evalFn) {
	switch e := e.(type) {
	case *Lit:
		return litType(e.Value), constFn(e.Value)
	case *Ident:
		r, err := c.scope.Lookup(e.Name)
		if err != nil {
			c.errorf(e.At, "unknown-name", "%s", err)
			return Type{}, constFn(Null)
		}
		c.use(r)
		return r.Type, cellFn(r.Cell)
	case *Selector:
		if id, ok := e.X.(*Ident); ok {
			r, isNode, err := c.scope.LookupField(id.Name, e.Name)
			if err != nil {
				c.errorf(e.At, "unknown-name", "%s", err)
				return Type{}, constFn(Null)
			}
			if isNode {
				c.use(r)
				return r.Type, cellFn(r.Cell)
			}
		}
		xt, x := c.expr(e.X)
		switch xt.Kind {
		case KindObject, KindAny, KindNull:
		default:
			c.errorf(e.At, "type-mismatch", "cannot select .%s from %s of type %s", e.Name, e.X, xt)
			return Type{}, constFn(Null)
		}
		name := e.Name
		return TAny, func(env Env) (Value, error) {
			v, err := x(env)
			if err != nil {
				return Null, err
			}
			switch v.Kind() {
			case KindObject:
				return v.Object()[name], nil
			case KindNull:
				return Null, nil
			}
			return Null, fail(e, "%s is %s, not an Object", e.X, kindOf(v))
		}
	case *Index:
		return c.index(e)
	case *Unary:
		return c.unary(e)
	case *Binary:
		return c.binary(e)
	case *Call:
		return c.call(e)
	case *ListExpr:
		var elem Type
		fns := make([]evalFn, len(e.Elems))
		for i, el := range e.Elems {
			var t Type
			t, fns[i] = c.expr(el)
			elem = Join(elem, t)
		}
		if elem.IsZero() {
			elem = TAny
		}
		return ListOf(elem), func(env Env) (Value, error) {
			vs := make([]Value, len(fns))
			for i, f := range fns {
				v, err := f(env)
				if err != nil {
					return Null, err
				}
				vs[i] = v
			}
			return ListValue(vs...), nil
		}
	case *ObjectExpr:
		keys := slices.Clone(e.Keys)
		fns := make([]evalFn, len(e.Values))
		for i, v := range e.Values {
			_, fns[i] = c.expr(v)
		}
		return TObject, func(env Env) (Value, error) {
			m := make(map[string]Value, len(keys))
			for i, f := range fns {
				v, err := f(env)
				if err != nil {
					return Null, err
				}
				m[keys[i]] = v
			}
			return ObjectValue(m), nil
		}
	case nil:
		c.errorf(Pos{}, "syntax", "missing expression")
		return Type{}, constFn(Null)
	}
	c.errorf(e.Pos(), "syntax", "unsupported expression %T", e)
	return Type{}, constFn(Null)
}

func litType(v Value) Type {
	switch v.Kind() {
	case KindNull:
		return TAny
	case KindList:
		var elem Type
		for _, e := range v.List() {
			elem = Join(elem, litType(e))
		}
		if elem.IsZero() {
			elem = TAny
		}
		return ListOf(elem)
	}
	return Type{Kind: v.Kind()}
}

func (c *compiler) index(e *Index) (Type, evalFn) {
	xt, x := c.expr(e.X)
	it, ix := c.expr(e.Index)
	var rt Type
	switch xt.Kind {
	case KindList:
		if !it.AssignableTo(TInt) {
			c.errorf(e.Index.Pos(), "type-mismatch", "list index %s has type %s, want Int", e.Index, it)
		}
		rt = xt.ElemType()
	case KindObject:
		if !it.AssignableTo(TString) {
			c.errorf(e.Index.Pos(), "type-mismatch", "object key %s has type %s, want String", e.Index, it)
		}
		rt = TAny
	case KindAny, KindNull:
		rt = TAny
	default:
		c.errorf(e.At, "type-mismatch", "cannot index %s of type %s", e.X, xt)
		return Type{}, constFn(Null)
	}
	return rt, func(env Env) (Value, error) {
		v, err := x(env)
		if err != nil {
			return Null, err
		}
		i, err := ix(env)
		if err != nil {
			return Null, err
		}
		switch v.Kind() {
		case KindList:
			if i.Kind() != KindInt {
				return Null, fail(e, "list index is %s, not Int", kindOf(i))
			}
			l := v.List()
			n := i.Int()
			if n < 0 {
				n += int64(len(l))
			}
			if n < 0 || n >= int64(len(l)) {
				return Null, fail(e, "index %d out of range (length %d)", i.Int(), len(l))
			}
			return l[n], nil
		case KindObject:
			return v.Object()[i.Text()], nil
		case KindNull:
			return Null, nil
		}
		return Null, fail(e, "cannot index %s", kindOf(v))
	}
}

func (c *compiler) unary(e *Unary) (Type, evalFn) {
	t, x := c.expr(e.X)
	switch e.Op {
	case "!":
		if !t.AssignableTo(TBool) {
			c.errorf(e.At, "type-mismatch", "operator ! wants Bool, %s has type %s", e.X, t)
		}
		return TBool, func(env Env) (Value, error) {
			v, err := x(env)
			if err != nil {
				return Null, err
			}
			return BoolValue(!v.Truthy()), nil
		}
	case "-":
		switch t.Kind {
		case KindInt, KindFloat, KindDuration, KindAny, KindNull:
		default:
			c.errorf(e.At, "type-mismatch", "operator - wants a number, %s has type %s", e.X, t)
		}
		return t, func(env Env) (Value, error) {
			v, err := x(env)
			if err != nil {
				return Null, err
			}
			switch v.Kind() {
			case KindInt:
				if v.Int() == math.MinInt64 {
					return Null, failKind(e, ErrIntOverflow, "integer overflow: -(%s)", v)
				}
				return IntValue(-v.Int()), nil
			case KindFloat:
				return FloatValue(-v.Float()), nil
			case KindDuration:
				if v.Int() == math.MinInt64 {
					return Null, failKind(e, ErrIntOverflow, "integer overflow: -(%s)", v)
				}
				return DurationValue(-v.Duration()), nil
			}
			return Null, fail(e, "cannot negate %s", kindOf(v))
		}
	}
	c.errorf(e.At, "syntax", "unknown operator %s", e.Op)
	return Type{}, constFn(Null)
}

// enumLiteral reports a string literal compared with an Enum that does not
// list it: the commonest typo in routing conditions.
func (c *compiler) enumLiteral(t Type, other Expr) {
	if t.Kind != KindEnum {
		return
	}
	if lit, ok := other.(*Lit); ok && lit.Value.Kind() == KindString && !t.HasValue(lit.Value.Str()) {
		c.errorf(lit.At, "enum-literal", "%s is not a value of %s", lit.Value, t)
	}
	if l, ok := other.(*ListExpr); ok {
		for _, el := range l.Elems {
			c.enumLiteral(t, el)
		}
	}
}

func (c *compiler) binary(e *Binary) (Type, evalFn) {
	xt, x := c.expr(e.X)
	yt, y := c.expr(e.Y)
	if xt.IsZero() || yt.IsZero() {
		// An operand is in error, and reported: do not report it again.
		c.enumLiteral(xt, e.Y)
		c.enumLiteral(yt, e.X)
		return Type{}, constFn(Null)
	}
	bad := func(what string) (Type, evalFn) {
		c.errorf(e.At, "type-mismatch", "operator %s %s: %s has type %s, %s has type %s", e.Op, what, e.X, xt, e.Y, yt)
		return Type{}, constFn(Null)
	}
	any := func(t Type) bool { return t.Kind == KindAny || t.IsZero() }
	num := func(t Type) bool { return t.Kind == KindInt || t.Kind == KindFloat || any(t) }
	switch e.Op {
	case "&&", "||":
		if !xt.AssignableTo(TBool) || !yt.AssignableTo(TBool) {
			return bad("wants Bool operands")
		}
		and := e.Op == "&&"
		return TBool, func(env Env) (Value, error) {
			a, err := x(env)
			if err != nil {
				return Null, err
			}
			if a.Truthy() != and {
				return BoolValue(!and), nil
			}
			b, err := y(env)
			if err != nil {
				return Null, err
			}
			return BoolValue(b.Truthy()), nil
		}
	case "==", "!=":
		c.enumLiteral(xt, e.Y)
		c.enumLiteral(yt, e.X)
		if !xt.AssignableTo(yt) && !yt.AssignableTo(xt) && !(num(xt) && num(yt)) && !enumsOverlap(xt, yt) {
			return bad("compares values that can never be equal")
		}
		eq := e.Op == "=="
		if fn := c.stringEquals(e, eq); fn != nil {
			return TBool, fn
		}
		return TBool, func(env Env) (Value, error) {
			a, err := x(env)
			if err != nil {
				return Null, err
			}
			b, err := y(env)
			if err != nil {
				return Null, err
			}
			return BoolValue(a.Equal(b) == eq), nil
		}
	case "<", "<=", ">", ">=":
		if fn := c.intCompare(e, xt, yt); fn != nil {
			return TBool, fn
		}
		ok := num(xt) && num(yt) ||
			(xt.AssignableTo(TString) && yt.AssignableTo(TString) && xt.Kind != KindList && yt.Kind != KindList) ||
			(xt.Kind == KindDuration || any(xt)) && (yt.Kind == KindDuration || any(yt))
		if !ok || xt.Kind == KindBool || yt.Kind == KindBool || xt.Kind == KindObject || yt.Kind == KindObject {
			return bad("wants two numbers, strings or durations")
		}
		op := e.Op
		test := func(c int) bool {
			switch op {
			case "<":
				return c < 0
			case "<=":
				return c <= 0
			case ">":
				return c > 0
			}
			return c >= 0
		}
		if xt.Kind == KindInt && yt.Kind == KindInt {
			// The common loop bound, count < 3: no generic compare.
			return TBool, func(env Env) (Value, error) {
				a, err := x(env)
				if err != nil {
					return Null, err
				}
				b, err := y(env)
				if err != nil {
					return Null, err
				}
				if a.Kind() == KindInt && b.Kind() == KindInt {
					return BoolValue(test(cmpOrdered(int64(a.num), int64(b.num)))), nil
				}
				return compareValues(e, test, a, b)
			}
		}
		return TBool, func(env Env) (Value, error) {
			a, err := x(env)
			if err != nil {
				return Null, err
			}
			b, err := y(env)
			if err != nil {
				return Null, err
			}
			return compareValues(e, test, a, b)
		}
	case "in":
		switch yt.Kind {
		case KindList:
			c.enumLiteral(yt.ElemType(), e.X)
			if !xt.AssignableTo(yt.ElemType()) && !yt.ElemType().AssignableTo(xt) {
				return bad("looks for an element of the wrong type")
			}
		case KindString:
			if !xt.AssignableTo(TString) {
				return bad("looks for a non-string in a string")
			}
		case KindObject, KindAny, KindNull:
		default:
			if yt.Kind == KindEnum {
				break
			}
			return bad("wants a List, String or Object on the right")
		}
		if l, ok := e.Y.(*ListExpr); ok {
			c.enumLiteral(xt, l)
		}
		return TBool, func(env Env) (Value, error) {
			a, err := x(env)
			if err != nil {
				return Null, err
			}
			b, err := y(env)
			if err != nil {
				return Null, err
			}
			return BoolValue(contains(b, a)), nil
		}
	case "+", "-", "*", "/", "%":
		var rt Type
		switch {
		case e.Op == "+" && xt.AssignableTo(TString) && yt.AssignableTo(TString) && !(any(xt) && any(yt)):
			rt = TString
		case e.Op == "+" && xt.Kind == KindList && (yt.Kind == KindList || any(yt)):
			rt = ListOf(Join(xt.ElemType(), yt.ElemType()))
		case xt.Kind == KindInt && yt.Kind == KindInt:
			rt = TInt
		case num(xt) && num(yt):
			rt = TFloat
			if any(xt) || any(yt) {
				rt = TAny
			}
		case (e.Op == "+" || e.Op == "-") && xt.Kind == KindDuration && yt.Kind == KindDuration:
			rt = TDuration
		case (e.Op == "*" || e.Op == "/") && xt.Kind == KindDuration && yt.Kind == KindInt:
			rt = TDuration
		default:
			switch e.Op {
			case "+":
				return bad("wants two numbers, strings, lists or durations")
			case "-":
				return bad("wants two numbers or durations")
			case "*", "/":
				return bad("wants two numbers, or a duration and an Int")
			}
			return bad("wants two numbers")
		}
		if rt.Kind == KindInt && e.Op == "+" {
			return rt, func(env Env) (Value, error) {
				a, err := x(env)
				if err != nil {
					return Null, err
				}
				b, err := y(env)
				if err != nil {
					return Null, err
				}
				if a.Kind() == KindInt && b.Kind() == KindInt {
					if r, ok := addInt(int64(a.num), int64(b.num)); ok {
						return IntValue(r), nil
					}
				}
				return arith(e, a, b)
			}
		}
		return rt, func(env Env) (Value, error) {
			a, err := x(env)
			if err != nil {
				return Null, err
			}
			b, err := y(env)
			if err != nil {
				return Null, err
			}
			return arith(e, a, b)
		}
	}
	c.errorf(e.At, "syntax", "unknown operator %s", e.Op)
	return Type{}, constFn(Null)
}

// enumsOverlap reports whether two Enums share a value, so that values of
// the one may equal values of the other.
func enumsOverlap(t, u Type) bool {
	return t.Kind == KindEnum && u.Kind == KindEnum && slices.ContainsFunc(t.Values, u.HasValue)
}

func compareValues(e *Binary, test func(int) bool, a, b Value) (Value, error) {
	c, ok := a.Compare(b)
	if !ok {
		return Null, fail(e, "cannot compare %s with %s", kindOf(a), kindOf(b))
	}
	return BoolValue(test(c)), nil
}

func contains(hay, needle Value) bool {
	switch hay.Kind() {
	case KindList:
		return slices.ContainsFunc(hay.List(), needle.Equal)
	case KindString:
		return needle.Kind() == KindString && strings.Contains(hay.Str(), needle.Str())
	case KindObject:
		_, ok := hay.Object()[needle.Text()]
		return ok
	}
	return false
}

func arith(e *Binary, a, b Value) (Value, error) {
	v, err := arithValues(e.Op, a, b)
	if err != nil {
		if err == errDivZero {
			return Null, fail(e, "division by zero")
		}
		if _, ok := err.(*kindError); ok {
			return Null, atExpr(e, err)
		}
		return Null, fail(e, "%s", err)
	}
	return v, nil
}

var errDivZero = errors.New("division by zero")

// arithValues applies an arithmetic operator to two values. Results out
// of range are *kindError.
func arithValues(op string, a, b Value) (Value, error) {
	switch {
	case op == "+" && a.Kind() == KindString && b.Kind() == KindString:
		return StringValue(a.str() + b.str()), nil
	case op == "+" && a.Kind() == KindList && b.Kind() == KindList:
		l := make([]Value, 0, a.Len()+b.Len())
		l = append(append(l, a.List()...), b.List()...)
		return ListValue(l...), nil
	case a.Kind() == KindInt && b.Kind() == KindInt:
		if (op == "/" || op == "%") && b.Int() == 0 {
			return Null, errDivZero
		}
		return intArith(op, a, b, a.Int(), b.Int(), IntValue)
	case isNum(a.Kind()) && isNum(b.Kind()):
		x, y := a.Float(), b.Float()
		var r float64
		switch op {
		case "+":
			r = x + y
		case "-":
			r = x - y
		case "*":
			r = x * y
		case "/":
			if y == 0 {
				return Null, errDivZero
			}
			r = x / y
		case "%":
			if y == 0 {
				return Null, errDivZero
			}
			r = math.Mod(x, y)
		default:
			return Null, fmt.Errorf("operator %s cannot combine %s and %s", op, kindOf(a), kindOf(b))
		}
		if !isFinite(r) {
			return Null, nonFiniteError(a, op, b, r)
		}
		return FloatValue(r), nil
	case a.Kind() == KindDuration && b.Kind() == KindDuration && (op == "+" || op == "-"):
		return intArith(op, a, b, a.Int(), b.Int(), func(n int64) Value { return DurationValue(time.Duration(n)) })
	case a.Kind() == KindDuration && b.Kind() == KindInt && (op == "*" || op == "/"):
		if op == "/" && b.Int() == 0 {
			return Null, errDivZero
		}
		return intArith(op, a, b, a.Int(), b.Int(), func(n int64) Value { return DurationValue(time.Duration(n)) })
	}
	return Null, fmt.Errorf("operator %s cannot combine %s and %s", op, kindOf(a), kindOf(b))
}

// builtin describes a function callable from expressions.
// ExprFunc is an expression function supplied by the caller of Compile
// (CompileOptions.Functions), for what flow itself cannot compute: weft
// adds tokens(text), the token count of a text, this way.
type ExprFunc struct {
	Doc      string                       // the signature, for messages: "tokens(String) Int"
	Min, Max int                          // bounds on the argument count; Max -1: any number
	Result   func(args []Type) Type       // the result type; nil means Any
	Check    func(args []Type) string     // a problem with the argument types, or ""
	Call     func([]Value) (Value, error) // the function
}

// FunctionScope is a Scope that also offers functions beyond the
// built-in ones.
type FunctionScope interface {
	Scope
	// Function returns the function called name.
	Function(name string) (*ExprFunc, bool)
	// FunctionNames lists the functions offered, for suggestions.
	FunctionNames() []string
}

// function looks up a function the scope offers, with its signature.
func (c *compiler) function(name string) (builtin, string, bool) {
	fs, ok := c.scope.(FunctionScope)
	if !ok {
		return builtin{}, "", false
	}
	f, ok := fs.Function(name)
	if !ok || f == nil || f.Call == nil {
		return builtin{}, "", false
	}
	return builtin{min: f.Min, max: f.Max, typ: f.Result, check: f.Check, fn: f.Call}, f.Doc, true
}

type builtin struct {
	min, max int                      // argument count bounds (max -1: variadic)
	typ      func(args []Type) Type   // result type; nil means Any
	check    func(args []Type) string // returns a problem with the argument types, or ""
	fn       func([]Value) (Value, error)
}

// Builtins returns the functions expressions may call, by name, each with
// its signature as documentation. The map is a fresh copy.
func Builtins() map[string]string { return maps.Clone(builtinDocs) }

// builtinDocs documents the built-in functions; see lookupBuiltin.
var builtinDocs = map[string]string{
	"len":        "len(String|List|Object) Int",
	"contains":   "contains(String|List|Object, x) Bool",
	"lower":      "lower(String) String",
	"upper":      "upper(String) String",
	"trim":       "trim(String) String",
	"startswith": "startswith(String, String) Bool",
	"endswith":   "endswith(String, String) Bool",
	"join":       "join(List, String) String",
	"split":      "split(String, String) List[String]",
	"str":        "str(x) String",
	"int":        "int(x) Int",
	"float":      "float(x) Float",
	"default":    "default(x, fallback): x unless it is null",
	"keys":       "keys(Object) List[String]",
	"first":      "first(List) element, null when empty",
	"last":       "last(List) element, null when empty",
	"min":        "min(a, b, ...) number",
	"max":        "max(a, b, ...) number",
}

func fixed(t Type) func([]Type) Type { return func([]Type) Type { return t } }

func wantKinds(kinds ...Kind) func([]Type) string {
	return func(args []Type) string {
		for i, k := range kinds {
			if i >= len(args) {
				break
			}
			t := args[i]
			if k == KindAny || t.Kind == KindAny || t.IsZero() || t.Kind == k || k == KindString && t.Kind == KindEnum {
				continue
			}
			return fmt.Sprintf("argument %d has type %s, want %s", i+1, t, k)
		}
		return ""
	}
}

func lookupBuiltin(name string) (builtin, bool) {
	s := func(f func(string) string) func([]Value) (Value, error) {
		return func(a []Value) (Value, error) { return StringValue(f(a[0].Text())), nil }
	}
	switch name {
	case "len":
		return builtin{1, 1, fixed(TInt), func(a []Type) string {
			switch a[0].Kind {
			case KindString, KindEnum, KindList, KindObject, KindAny, KindNull:
				return ""
			}
			return "argument has type " + a[0].String() + ", want String, List or Object"
		}, func(a []Value) (Value, error) { return IntValue(int64(a[0].Len())), nil }}, true
	case "contains":
		return builtin{2, 2, fixed(TBool), nil, func(a []Value) (Value, error) { return BoolValue(contains(a[0], a[1])), nil }}, true
	case "lower":
		return builtin{1, 1, fixed(TString), wantKinds(KindString), s(strings.ToLower)}, true
	case "upper":
		return builtin{1, 1, fixed(TString), wantKinds(KindString), s(strings.ToUpper)}, true
	case "trim":
		return builtin{1, 1, fixed(TString), wantKinds(KindString), s(strings.TrimSpace)}, true
	case "startswith", "endswith":
		f := strings.HasPrefix
		if name == "endswith" {
			f = strings.HasSuffix
		}
		return builtin{2, 2, fixed(TBool), wantKinds(KindString, KindString), func(a []Value) (Value, error) {
			return BoolValue(f(a[0].Text(), a[1].Text())), nil
		}}, true
	case "join":
		return builtin{2, 2, fixed(TString), wantKinds(KindList, KindString), func(a []Value) (Value, error) {
			parts := make([]string, a[0].Len())
			for i, e := range a[0].List() {
				parts[i] = e.Text()
			}
			return StringValue(strings.Join(parts, a[1].Text())), nil
		}}, true
	case "split":
		return builtin{2, 2, fixed(ListOf(TString)), wantKinds(KindString, KindString), func(a []Value) (Value, error) {
			return StringList(strings.Split(a[0].Text(), a[1].Text())...), nil
		}}, true
	case "str":
		return builtin{1, 1, fixed(TString), nil, func(a []Value) (Value, error) { return StringValue(a[0].Text()), nil }}, true
	case "int":
		return builtin{1, 1, fixed(TInt), nil, func(a []Value) (Value, error) {
			switch a[0].Kind() {
			case KindInt:
				return a[0], nil
			case KindFloat:
				// float64(MaxInt64) is 2^63, one past the largest Int.
				if f := a[0].Float(); !(f >= math.MinInt64 && f < math.MaxInt64) {
					return Null, &kindError{ErrIntOverflow, formatFloat(f) + " is out of the range of Int"}
				}
				return IntValue(a[0].Int()), nil
			case KindString:
				n, err := strconv.ParseInt(strings.TrimSpace(a[0].Str()), 10, 64)
				if err != nil {
					return Null, fmt.Errorf("%s is not an integer", Brief(a[0]))
				}
				return IntValue(n), nil
			case KindBool:
				if a[0].Bool() {
					return IntValue(1), nil
				}
				return IntValue(0), nil
			}
			return Null, fmt.Errorf("cannot convert %s to Int", kindOf(a[0]))
		}}, true
	case "float":
		return builtin{1, 1, fixed(TFloat), nil, func(a []Value) (Value, error) {
			switch a[0].Kind() {
			case KindInt, KindFloat:
				return FloatValue(a[0].Float()), nil
			case KindString:
				f, err := strconv.ParseFloat(strings.TrimSpace(a[0].Str()), 64)
				if err == nil && !isFinite(f) || errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
					return Null, &kindError{ErrNonFinite, fmt.Sprintf("%s is not a finite number", Brief(a[0]))}
				}
				if err != nil {
					return Null, fmt.Errorf("%s is not a number", Brief(a[0]))
				}
				return FloatValue(f), nil
			}
			return Null, fmt.Errorf("cannot convert %s to Float", kindOf(a[0]))
		}}, true
	case "default":
		return builtin{2, 2, func(a []Type) Type { return Join(a[0], a[1]) }, nil, func(a []Value) (Value, error) {
			if a[0].IsNull() {
				return a[1], nil
			}
			return a[0], nil
		}}, true
	case "keys":
		return builtin{1, 1, fixed(ListOf(TString)), wantKinds(KindObject), func(a []Value) (Value, error) {
			m := a[0].Object()
			ks := make([]string, 0, len(m))
			for k := range m {
				ks = append(ks, k)
			}
			slices.Sort(ks)
			return StringList(ks...), nil
		}}, true
	case "first", "last":
		last := name == "last"
		return builtin{1, 1, func(a []Type) Type { return a[0].ElemType() }, wantKinds(KindList), func(a []Value) (Value, error) {
			l := a[0].List()
			if len(l) == 0 {
				return Null, nil
			}
			if last {
				return l[len(l)-1], nil
			}
			return l[0], nil
		}}, true
	case "min", "max":
		isMax := name == "max"
		return builtin{1, -1, func(a []Type) Type {
			t := Type{}
			for _, x := range a {
				t = Join(t, x)
			}
			return t
		}, func(a []Type) string {
			for i, t := range a {
				if t.Kind != KindInt && t.Kind != KindFloat && t.Kind != KindAny && !t.IsZero() {
					return fmt.Sprintf("argument %d has type %s, want a number", i+1, t)
				}
			}
			return ""
		}, func(a []Value) (Value, error) {
			best := a[0]
			for _, v := range a[1:] {
				c, ok := v.Compare(best)
				if !ok {
					return Null, fmt.Errorf("cannot compare %s with %s", kindOf(v), kindOf(best))
				}
				if c > 0 == isMax && c != 0 {
					best = v
				}
			}
			return best, nil
		}}, true
	}
	return builtin{}, false
}

func (c *compiler) call(e *Call) (Type, evalFn) {
	b, ok := lookupBuiltin(e.Fn)
	doc := builtinDocs[e.Fn]
	if !ok {
		b, doc, ok = c.function(e.Fn)
	}
	if !ok {
		names := mapKeys(builtinDocs)
		if fs, isFS := c.scope.(FunctionScope); isFS {
			names = append(names, fs.FunctionNames()...)
		}
		c.errorf(e.At, "unknown-name", "unknown function %s%s", e.Fn, suggest(e.Fn, names))
		for _, a := range e.Args {
			c.expr(a)
		}
		return Type{}, constFn(Null)
	}
	types := make([]Type, len(e.Args))
	fns := make([]evalFn, len(e.Args))
	for i, a := range e.Args {
		types[i], fns[i] = c.expr(a)
	}
	if len(e.Args) < b.min || b.max >= 0 && len(e.Args) > b.max {
		c.errorf(e.At, "type-mismatch", "%s takes %s, got %d: %s", e.Fn, arity(b.min, b.max), len(e.Args), doc)
		return Type{}, constFn(Null)
	}
	if b.check != nil {
		if msg := b.check(types); msg != "" {
			c.errorf(e.At, "type-mismatch", "%s: %s", e.Fn, msg)
			return Type{}, constFn(Null)
		}
	}
	rt := TAny
	if b.typ != nil {
		rt = b.typ(types)
	}
	return rt, func(env Env) (Value, error) {
		args := make([]Value, len(fns))
		for i, f := range fns {
			v, err := f(env)
			if err != nil {
				return Null, err
			}
			args[i] = v
		}
		v, err := b.fn(args)
		if err != nil {
			return Null, &EvalError{Pos: e.At, Expr: exprText(e), Msg: err.Error(), Err: err}
		}
		return v, nil
	}
}

// arity spells an argument count: "1 argument", "2 arguments", "at least 1
// argument".
func arity(lo, hi int) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return strconv.Itoa(n) + " arguments"
	}
	switch {
	case hi < 0:
		return "at least " + plural(lo)
	case lo == hi:
		return plural(lo)
	}
	return strconv.Itoa(lo) + " to " + plural(hi)
}

func mapKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// suggest returns `; did you mean "x"?` for the closest candidate within a
// small edit distance, or "".
func suggest(name string, candidates []string) string {
	best, bestD := "", 3
	if len(name) <= 3 {
		bestD = 2
	}
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// Suggest returns `; did you mean "x"?` naming the candidate closest to name
// (by edit distance), or "" when none is close. Front-ends use it for
// unknown fields and keywords.
func Suggest(name string, candidates []string) string { return suggest(name, candidates) }

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// directCell returns the cell an expression reads when it is nothing but a
// name or a node field, and -1 otherwise.
func (c *compiler) directCell(e Expr) int {
	switch e := e.(type) {
	case *Ident:
		if r, err := c.scope.Lookup(e.Name); err == nil {
			return r.Cell
		}
	case *Selector:
		if id, ok := e.X.(*Ident); ok {
			if r, isNode, err := c.scope.LookupField(id.Name, e.Name); err == nil && isNode {
				return r.Cell
			}
		}
	}
	return -1
}

// intCompare compiles the loop bound of most workflows, an Int cell ordered
// against an Int literal (count < 3), to one read and one comparison. It
// returns nil for any other shape.
func (c *compiler) intCompare(e *Binary, xt, yt Type) evalFn {
	if xt.Kind != KindInt || yt.Kind != KindInt {
		return nil
	}
	lit, ok := e.Y.(*Lit)
	if !ok || lit.Value.Kind() != KindInt {
		return nil
	}
	cell := c.directCell(e.X)
	if cell < 0 {
		return nil
	}
	n := int64(lit.Value.num)
	var test func(int64) bool
	switch e.Op {
	case "<":
		test = func(a int64) bool { return a < n }
	case "<=":
		test = func(a int64) bool { return a <= n }
	case ">":
		test = func(a int64) bool { return a > n }
	default:
		test = func(a int64) bool { return a >= n }
	}
	return func(env Env) (Value, error) {
		a := env.Get(cell)
		if a.Kind() != KindInt {
			return Null, fail(e, "cannot compare %s with Int", kindOf(a))
		}
		return BoolValue(test(int64(a.num))), nil
	}
}

// stringEquals compiles the routing test of most workflows, a cell
// compared with a string literal (intent == "qa"), to one read and one
// string comparison. It returns nil for any other shape.
func (c *compiler) stringEquals(e *Binary, eq bool) evalFn {
	ref, lit := e.X, e.Y
	if _, ok := ref.(*Lit); ok {
		ref, lit = lit, ref
	}
	l, ok := lit.(*Lit)
	if !ok || l.Value.Kind() != KindString {
		return nil
	}
	cell := c.directCell(ref)
	if cell < 0 {
		return nil
	}
	want := l.Value.Str()
	return func(env Env) (Value, error) {
		a := env.Get(cell)
		if _, ok := a.any.(stringptr); ok {
			return BoolValue((a.str() == want) == eq), nil
		}
		return BoolValue(!eq), nil // null or another kind never equals a string
	}
}

// maxExprText is the most bytes of an expression an EvalError quotes.
const maxExprText = 200

// exprText is e in .wf syntax, cut to maxExprText bytes with "…" when
// longer: a message names the expression, it does not copy a huge one.
func exprText(e Expr) string {
	s, cut := clip(e.String(), maxExprText)
	if cut {
		s += "…"
	}
	return s
}
