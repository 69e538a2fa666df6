package flow_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
)

// ---- positions ----

// P returns a position in the test file t.wf.
func P(line, col int) flow.Pos { return flow.Pos{File: "t.wf", Line: line, Col: col} }

// ---- expression trees, built directly ----

func lit(x any) *flow.Lit {
	v, err := flow.FromGo(x)
	if err != nil {
		panic(err)
	}
	return &flow.Lit{Value: v}
}

func ident(name string) *flow.Ident { return &flow.Ident{Name: name} }

func sel(x flow.Expr, name string) *flow.Selector { return &flow.Selector{X: x, Name: name} }

func bin(op string, x, y flow.Expr) *flow.Binary { return &flow.Binary{Op: op, X: x, Y: y} }

func unary(op string, x flow.Expr) *flow.Unary { return &flow.Unary{Op: op, X: x} }

func index(x, i flow.Expr) *flow.Index { return &flow.Index{X: x, Index: i} }

func call(fn string, args ...flow.Expr) *flow.Call { return &flow.Call{Fn: fn, Args: args} }

func list(elems ...flow.Expr) *flow.ListExpr { return &flow.ListExpr{Elems: elems} }

// ---- expression trees, parsed from a compact source form ----
//
// ex parses src, a small subset of the .wf expression syntax, into a
// flow.Expr tree. Every node gets a position: line 1 in the file t.wf, the
// column of its first byte (for binary operators: of the operator), as a
// front-end would set them. exAt does the same with src starting at pos.
// It exists so that test tables stay readable; it is not the .wf parser.

func ex(src string) flow.Expr { return exAt(P(1, 1), src) }

func exAt(at flow.Pos, src string) flow.Expr {
	p := &miniParser{src: src, at: at}
	p.next()
	e := p.binary(1)
	if p.tok.kind != tEOF {
		panic(fmt.Sprintf("ex(%q): unexpected %q at column %d", src, p.tok.text, p.tok.off+1))
	}
	return e
}

const (
	tEOF = iota
	tIdent
	tInt
	tFloat
	tDur
	tStr
	tOp
)

type miniTok struct {
	kind int
	text string
	off  int
}

type miniParser struct {
	src string
	off int
	at  flow.Pos
	tok miniTok
}

func (p *miniParser) pos(off int) flow.Pos {
	return flow.Pos{File: p.at.File, Line: p.at.Line, Col: p.at.Col + off}
}

func (p *miniParser) next() {
	for p.off < len(p.src) && p.src[p.off] == ' ' {
		p.off++
	}
	start := p.off
	if p.off >= len(p.src) {
		p.tok = miniTok{kind: tEOF, off: start}
		return
	}
	c := p.src[p.off]
	isAlpha := func(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	switch {
	case isAlpha(c):
		for p.off < len(p.src) && (isAlpha(p.src[p.off]) || isDigit(p.src[p.off])) {
			p.off++
		}
		p.tok = miniTok{kind: tIdent, text: p.src[start:p.off], off: start}
	case isDigit(c):
		kind := tInt
		for p.off < len(p.src) && (isDigit(p.src[p.off]) || p.src[p.off] == '.' || isAlpha(p.src[p.off]) ||
			(p.src[p.off] == '+' || p.src[p.off] == '-') && (p.src[p.off-1] == 'e')) {
			switch ch := p.src[p.off]; {
			case ch == '.' || ch == 'e':
				if kind == tInt {
					kind = tFloat
				}
			case isAlpha(ch):
				kind = tDur
			}
			p.off++
		}
		p.tok = miniTok{kind: kind, text: p.src[start:p.off], off: start}
	case c == '"':
		p.off++
		for p.off < len(p.src) && p.src[p.off] != '"' {
			if p.src[p.off] == '\\' {
				p.off++
			}
			p.off++
		}
		p.off++
		p.tok = miniTok{kind: tStr, text: p.src[start:p.off], off: start}
	default:
		for _, op := range []string{"||", "&&", "==", "!=", "<=", ">="} {
			if strings.HasPrefix(p.src[p.off:], op) {
				p.off += 2
				p.tok = miniTok{kind: tOp, text: op, off: start}
				return
			}
		}
		p.off++
		p.tok = miniTok{kind: tOp, text: p.src[start:p.off], off: start}
	}
}

func (p *miniParser) expect(op string) {
	if p.tok.kind != tOp || p.tok.text != op {
		panic(fmt.Sprintf("ex(%q): want %q at column %d, got %q", p.src, op, p.tok.off+1, p.tok.text))
	}
	p.next()
}

func miniPrec(t miniTok) int {
	if t.kind == tIdent && t.text == "in" {
		return 4
	}
	if t.kind != tOp {
		return 0
	}
	switch t.text {
	case "||":
		return 1
	case "&&":
		return 2
	case "==", "!=":
		return 3
	case "<", "<=", ">", ">=":
		return 4
	case "+", "-":
		return 5
	case "*", "/", "%":
		return 6
	}
	return 0
}

func (p *miniParser) binary(minPrec int) flow.Expr {
	x := p.unary()
	for {
		prec := miniPrec(p.tok)
		if prec == 0 || prec < minPrec {
			return x
		}
		op := p.tok
		p.next()
		y := p.binary(prec + 1)
		x = &flow.Binary{At: p.pos(op.off), Op: op.text, X: x, Y: y}
	}
}

func (p *miniParser) unary() flow.Expr {
	if p.tok.kind == tOp && (p.tok.text == "!" || p.tok.text == "-") {
		op := p.tok
		p.next()
		return &flow.Unary{At: p.pos(op.off), Op: op.text, X: p.unary()}
	}
	return p.postfix()
}

func (p *miniParser) postfix() flow.Expr {
	start := p.tok.off
	x := p.primary()
	for p.tok.kind == tOp {
		switch p.tok.text {
		case ".":
			p.next()
			x = &flow.Selector{At: p.pos(start), X: x, Name: p.tok.text}
			p.next()
		case "[":
			p.next()
			i := p.binary(1)
			p.expect("]")
			x = &flow.Index{At: p.pos(start), X: x, Index: i}
		case "(":
			id, ok := x.(*flow.Ident)
			if !ok {
				panic("ex: call of a non-name")
			}
			p.next()
			var args []flow.Expr
			for !(p.tok.kind == tOp && p.tok.text == ")") {
				args = append(args, p.binary(1))
				if p.tok.kind == tOp && p.tok.text == "," {
					p.next()
				}
			}
			p.next()
			x = &flow.Call{At: id.At, Fn: id.Name, Args: args}
		default:
			return x
		}
	}
	return x
}

func (p *miniParser) primary() flow.Expr {
	t := p.tok
	at := p.pos(t.off)
	switch t.kind {
	case tIdent:
		p.next()
		switch t.text {
		case "true":
			return &flow.Lit{At: at, Value: flow.BoolValue(true)}
		case "false":
			return &flow.Lit{At: at, Value: flow.BoolValue(false)}
		case "null":
			return &flow.Lit{At: at, Value: flow.Null}
		}
		return &flow.Ident{At: at, Name: t.text}
	case tInt:
		p.next()
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			panic(err)
		}
		return &flow.Lit{At: at, Value: flow.IntValue(n)}
	case tFloat:
		p.next()
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			panic(err)
		}
		return &flow.Lit{At: at, Value: flow.FloatValue(f)}
	case tDur:
		p.next()
		d, err := time.ParseDuration(t.text)
		if err != nil {
			panic(err)
		}
		return &flow.Lit{At: at, Value: flow.DurationValue(d)}
	case tStr:
		p.next()
		s, err := strconv.Unquote(t.text)
		if err != nil {
			panic(err)
		}
		return &flow.Lit{At: at, Value: flow.StringValue(s)}
	case tOp:
		switch t.text {
		case "(":
			p.next()
			e := p.binary(1)
			p.expect(")")
			return e
		case "[":
			p.next()
			l := &flow.ListExpr{At: at}
			for !(p.tok.kind == tOp && p.tok.text == "]") {
				l.Elems = append(l.Elems, p.binary(1))
				if p.tok.kind == tOp && p.tok.text == "," {
					p.next()
				}
			}
			p.next()
			return l
		case "{":
			p.next()
			o := &flow.ObjectExpr{At: at}
			for !(p.tok.kind == tOp && p.tok.text == "}") {
				k := p.tok.text
				if p.tok.kind == tStr {
					k, _ = strconv.Unquote(k)
				}
				p.next()
				p.expect(":")
				o.Keys = append(o.Keys, k)
				o.Values = append(o.Values, p.binary(1))
				if p.tok.kind == tOp && p.tok.text == "," {
					p.next()
				}
			}
			p.next()
			return o
		}
	}
	panic(fmt.Sprintf("ex(%q): unexpected %q at column %d", p.src, t.text, t.off+1))
}

func TestMiniParser(t *testing.T) {
	// The helper itself: the trees it builds print back as written.
	for _, src := range []string{
		`a + b * c`, `(a + b) * c`, `a.b[1]`, `f(1, "x")`, `!a && -b < 3`, `x in [1, 2]`,
		`{a: 1, "b c": [true, null]}`, `1.5 + 2.0`, `90s`, `1e+21`,
	} {
		if got := ex(src).String(); got != src && !(src == "90s" && got == "1m30s") {
			t.Errorf("ex(%q).String() = %q", src, got)
		}
	}
	b := ex(`abc == "x"`).(*flow.Binary)
	if b.At.Col != 5 || b.X.Pos().Col != 1 || b.Y.Pos().Col != 8 {
		t.Errorf("positions: op %v, x %v, y %v", b.At, b.X.Pos(), b.Y.Pos())
	}
}

// ---- workflows ----

// fnode returns a FUNCTION node; parts are *flow.Input and *flow.Field.
func fnode(at flow.Pos, name, action string, parts ...any) *flow.Node {
	n := &flow.Node{Name: name, Type: flow.Function, Action: action, Pos: at}
	for _, x := range parts {
		switch x := x.(type) {
		case *flow.Input:
			n.Inputs = append(n.Inputs, x)
		case *flow.Field:
			n.Outputs = append(n.Outputs, x)
		case setPart:
			n.Set = append(n.Set, x.Assign)
		default:
			panic(fmt.Sprintf("fnode: %T", x))
		}
	}
	return n
}

// input is `name: src` written at `at`; the expression starts after "name: ".
func input(at flow.Pos, name, src string) *flow.Input {
	return &flow.Input{Name: name, Pos: at, Expr: exAt(flow.Pos{File: at.File, Line: at.Line, Col: at.Col + len(name) + 2}, src)}
}

func field(at flow.Pos, name string, t flow.Type) *flow.Field {
	return &flow.Field{Name: name, Type: t, Pos: at}
}

type (
	condPart struct{ flow.Expr }
	updPart  struct{ *flow.Assign }
	ovrPart  struct{ *flow.Assign }
	setPart  struct{ *flow.Assign }
	joinPart string
)

// when is `condition: src` with the expression at `at`.
func when(at flow.Pos, src string) condPart { return condPart{exAt(at, src)} }

func assign(at flow.Pos, name, sep, src string) *flow.Assign {
	return &flow.Assign{Name: name, Pos: at, Expr: exAt(flow.Pos{File: at.File, Line: at.Line, Col: at.Col + len(name) + len(sep)}, src)}
}

// upd is `name = src` in an update block.
func upd(at flow.Pos, name, src string) updPart { return updPart{assign(at, name, " = ", src)} }

// ovr is `name: src` in an override block.
func ovr(at flow.Pos, name, src string) ovrPart { return ovrPart{assign(at, name, ": ", src)} }

// set is `name = src` in a node's set block.
func set(at flow.Pos, name, src string) setPart { return setPart{assign(at, name, " = ", src)} }

// edge returns an edge from `from` to the comma-separated targets `to`.
func edge(at flow.Pos, from, to string, parts ...any) *flow.Edge {
	e := &flow.Edge{From: from, To: strings.Split(to, ","), Pos: at}
	for _, x := range parts {
		switch x := x.(type) {
		case condPart:
			e.Cond = x.Expr
		case updPart:
			e.Updates = append(e.Updates, x.Assign)
		case ovrPart:
			e.Overrides = append(e.Overrides, x.Assign)
		case joinPart:
			e.Join = string(x)
		default:
			panic(fmt.Sprintf("edge: %T", x))
		}
	}
	return e
}

// seedWorkflow builds seed 000, IntentQA, as a front-end would hand it over;
// positions follow the formal description (line 1 is `workflow IntentQA {`).
func seedWorkflow() *flow.Workflow {
	intent := flow.EnumOf("qa", "summarization", "not_clear")
	return &flow.Workflow{
		Name: "IntentQA",
		Pos:  P(1, 1),
		Vars: []*flow.Var{{Name: "rephraseCount", Type: flow.TInt, Default: exAt(P(4, 26), "0"), Pos: P(4, 5)}},
		Nodes: []*flow.Node{
			fnode(P(7, 5), "identify_intent", "identify_user_intent",
				field(P(11, 9), "intent", intent)),
			fnode(P(14, 5), "ask_user", "ask_user",
				input(P(18, 9), "question", `"Could you clarify your request?"`),
				field(P(21, 9), "query", flow.TString)),
			fnode(P(24, 5), "retrieve", "retrieve_financial_documents",
				input(P(28, 9), "query", "from_query"),
				field(P(31, 9), "chunks", flow.ListOf(flow.TString))),
			fnode(P(34, 5), "evaluate", "evaluate_relevance",
				input(P(38, 9), "chunks", "chunks"),
				field(P(41, 9), "relevance", flow.EnumOf("OK", "BAD"))),
			fnode(P(44, 5), "rephrase", "rephrase_query",
				input(P(48, 9), "query", "from_query"),
				field(P(51, 9), "new_query", flow.TString)),
			fnode(P(54, 5), "summarize", "summarize",
				input(P(58, 9), "query", "original_query"),
				field(P(61, 9), "summary", flow.TString)),
			fnode(P(64, 5), "generate", "generate_answer",
				input(P(68, 9), "source", "result_source"),
				field(P(71, 9), "answer", flow.TString)),
		},
		Edges: []*flow.Edge{
			edge(P(76, 5), "identify_intent", "retrieve",
				when(P(77, 23), `intent == "qa"`),
				ovr(P(78, 24), "from_query", "identify_intent.input_text")),
			edge(P(80, 5), "identify_intent", "summarize",
				when(P(81, 23), `intent == "summarization"`),
				ovr(P(82, 24), "original_query", "identify_intent.input_text")),
			edge(P(84, 5), "identify_intent", "ask_user",
				when(P(85, 23), `intent == "not_clear"`)),
			edge(P(87, 5), "ask_user", "retrieve",
				ovr(P(88, 24), "from_query", "ask_user.query")),
			edge(P(90, 5), "retrieve", "evaluate"),
			edge(P(91, 5), "summarize", "generate",
				ovr(P(92, 24), "result_source", "summarize.summary")),
			edge(P(94, 5), "evaluate", "generate",
				when(P(95, 23), `relevance == "OK"`),
				ovr(P(96, 24), "result_source", "evaluate.chunks")),
			edge(P(98, 5), "evaluate", "rephrase",
				when(P(99, 23), `relevance == "BAD" && rephraseCount < 3`),
				upd(P(100, 22), "rephraseCount", "rephraseCount + 1"),
				ovr(P(101, 24), "from_query", "retrieve.query")),
			edge(P(103, 5), "evaluate", "generate",
				when(P(104, 23), `relevance == "BAD" && rephraseCount >= 3`),
				ovr(P(105, 24), "result_source", `"ERROR: no relevant chunks after retries"`)),
			edge(P(107, 5), "rephrase", "retrieve",
				ovr(P(108, 24), "from_query", "rephrase.new_query")),
		},
		Initial:    "identify_intent",
		InitialPos: P(111, 12),
		Finals:     []string{"generate"},
		FinalsPos:  []flow.Pos{P(112, 12)},
	}
}

// seedActions are the actions seed 000 calls.
var seedActions = []string{
	"identify_user_intent", "ask_user", "retrieve_financial_documents", "evaluate_relevance",
	"rephrase_query", "summarize", "generate_answer",
}

func hasAction(names ...string) func(string) bool {
	return func(a string) bool {
		for _, n := range names {
			if n == a {
				return true
			}
		}
		return false
	}
}

// mustCompile compiles w and fails the test on any error.
func mustCompile(t *testing.T, w *flow.Workflow, opts *flow.CompileOptions) *flow.Plan {
	t.Helper()
	p, ds := flow.Compile(w, opts)
	if ds.HasErrors() || p == nil {
		t.Fatalf("Compile: unexpected errors:\n%v", ds)
	}
	return p
}

// findDiag returns the diagnostics with the given code.
func findDiag(ds flow.Diagnostics, code string) []flow.Diagnostic {
	var out []flow.Diagnostic
	for _, d := range ds {
		if d.Code == code {
			out = append(out, d)
		}
	}
	return out
}

// wantDiag asserts that ds holds exactly one diagnostic with code, with the
// severity, position and message fragments given, and returns it.
func wantDiag(t *testing.T, ds flow.Diagnostics, code string, sev flow.Severity, at flow.Pos, frags ...string) flow.Diagnostic {
	t.Helper()
	got := findDiag(ds, code)
	if len(got) != 1 {
		t.Fatalf("want one %s diagnostic, got %d in:\n%v", code, len(got), ds)
	}
	d := got[0]
	if d.Severity != sev {
		t.Errorf("%s: severity %v, want %v", code, d.Severity, sev)
	}
	if d.Pos != at {
		t.Errorf("%s: position %v, want %v (%s)", code, d.Pos, at, d.Msg)
	}
	for _, f := range frags {
		if !strings.Contains(d.Msg, f) {
			t.Errorf("%s: message %q does not contain %q", code, d.Msg, f)
		}
	}
	return d
}

// cellByName finds a plan cell.
func cellByName(t *testing.T, p *flow.Plan, name string) (int, flow.Cell) {
	t.Helper()
	for i, c := range p.Cells {
		if c.Name == name {
			return i, c
		}
	}
	t.Fatalf("no cell %q", name)
	return -1, flow.Cell{}
}

func planNode(t *testing.T, p *flow.Plan, name string) *flow.PlanNode {
	t.Helper()
	for _, n := range p.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %q", name)
	return nil
}
