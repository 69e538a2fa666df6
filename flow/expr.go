package flow

import (
	"strconv"
	"strings"
)

// Expr is an expression of the weft expression language, as front-ends hand
// it to the IR: unresolved names, operators and literals, each with the
// position it was written at. Compile resolves and type-checks an Expr into
// a Program. The concrete types are Lit, Ident, Selector, Index, Unary,
// Binary, Call, ListExpr and ObjectExpr.
type Expr interface {
	// Pos returns where the expression starts (or, for operators, where the
	// operator is).
	Pos() Pos
	// String prints the expression in .wf syntax.
	String() string
}

// Lit is a literal value.
type Lit struct {
	At    Pos
	Value Value
}

// Ident is a bare name: a variable, parameter, slot, or an output of the
// node the expression belongs to.
type Ident struct {
	At   Pos
	Name string
}

// Selector is X.Name: a node's field (retrieve.query) or an Object member.
type Selector struct {
	At   Pos
	X    Expr
	Name string
}

// Index is X[Index] over a List (by Int) or an Object (by String).
type Index struct {
	At       Pos
	X, Index Expr
}

// Unary is "!" X or "-" X.
type Unary struct {
	At Pos
	Op string
	X  Expr
}

// Binary is X Op Y with Op one of || && == != < <= > >= in + - * / %.
type Binary struct {
	At   Pos
	Op   string
	X, Y Expr
}

// Call is a call of a built-in function; see Builtins().
type Call struct {
	At   Pos
	Fn   string
	Args []Expr
}

// ListExpr is a list literal [a, b, c].
type ListExpr struct {
	At    Pos
	Elems []Expr
}

// ObjectExpr is an object literal {k: v, ...}; Keys and Values are parallel.
type ObjectExpr struct {
	At     Pos
	Keys   []string
	Values []Expr
}

// Pos implements Expr.
func (e *Lit) Pos() Pos { return e.At }

// Pos implements Expr.
func (e *Ident) Pos() Pos { return e.At }

// Pos implements Expr.
func (e *Selector) Pos() Pos { return e.At }

// Pos implements Expr.
func (e *Index) Pos() Pos { return e.At }

// Pos implements Expr.
func (e *Unary) Pos() Pos { return e.At }

// Pos implements Expr.
func (e *Binary) Pos() Pos { return e.At }

// Pos implements Expr.
func (e *Call) Pos() Pos { return e.At }

// Pos implements Expr.
func (e *ListExpr) Pos() Pos { return e.At }

// Pos implements Expr.
func (e *ObjectExpr) Pos() Pos { return e.At }

// Precedence returns the binding power of a binary operator of the
// expression language (higher binds tighter), or 0 for anything else. The
// .wf parser and printer use it, so the language has one table.
func Precedence(op string) int {
	switch op {
	case "||":
		return 1
	case "&&":
		return 2
	case "==", "!=":
		return 3
	case "<", "<=", ">", ">=", "in":
		return 4
	case "+", "-":
		return 5
	case "*", "/", "%":
		return 6
	}
	return 0
}

// String implements Expr.
func (e *Lit) String() string {
	if e.Value.Kind() == KindDuration {
		return e.Value.Duration().String()
	}
	return e.Value.String()
}

// String implements Expr.
func (e *Ident) String() string { return e.Name }

// String implements Expr.
func (e *Selector) String() string { return postfixOperand(e.X) + "." + e.Name }

// String implements Expr.
func (e *Index) String() string { return postfixOperand(e.X) + "[" + e.Index.String() + "]" }

// String implements Expr.
func (e *Unary) String() string { return e.Op + operand(e.X, 7) }

// String implements Expr.
func (e *Binary) String() string {
	p := Precedence(e.Op)
	return operand(e.X, p) + " " + e.Op + " " + operand(e.Y, p+1)
}

// String implements Expr.
func (e *Call) String() string { return e.Fn + "(" + joinExprs(e.Args) + ")" }

// String implements Expr.
func (e *ListExpr) String() string { return "[" + joinExprs(e.Elems) + "]" }

// String implements Expr.
func (e *ObjectExpr) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range e.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		if isIdentName(k) {
			b.WriteString(k)
		} else {
			b.WriteString(strconv.Quote(k))
		}
		b.WriteString(": ")
		b.WriteString(e.Values[i].String())
	}
	b.WriteByte('}')
	return b.String()
}

func operand(e Expr, min int) string {
	if b, ok := e.(*Binary); ok && Precedence(b.Op) < min {
		return "(" + b.String() + ")"
	}
	return e.String()
}

// postfixOperand prints the operand of .name or [i]: postfix operators bind
// tighter than prefix ones, so (-a).b needs its parentheses.
func postfixOperand(e Expr) string {
	if _, ok := e.(*Unary); ok {
		return "(" + e.String() + ")"
	}
	return operand(e, 7)
}

func joinExprs(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

func isIdentName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// WalkExpr calls fn for e and every expression inside it, parents first. It
// stops descending where fn returns false.
func WalkExpr(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch e := e.(type) {
	case *Selector:
		WalkExpr(e.X, fn)
	case *Index:
		WalkExpr(e.X, fn)
		WalkExpr(e.Index, fn)
	case *Unary:
		WalkExpr(e.X, fn)
	case *Binary:
		WalkExpr(e.X, fn)
		WalkExpr(e.Y, fn)
	case *Call:
		for _, a := range e.Args {
			WalkExpr(a, fn)
		}
	case *ListExpr:
		for _, a := range e.Elems {
			WalkExpr(a, fn)
		}
	case *ObjectExpr:
		for _, a := range e.Values {
			WalkExpr(a, fn)
		}
	}
}
