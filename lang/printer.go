package lang

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
)

// maxInline is the longest line an inline update, override or set block
// may make.
const maxInline = 100

// Format returns the canonical source of f, as `weft fmt` writes it. The
// rules, chosen so that the IntentQA seed is already canonical:
//
//   - Indentation is two spaces per level; a file ends with one newline;
//     top-level declarations are separated by one blank line (consecutive
//     imports keep the blank lines they had). Inside blocks, one blank line is
//     kept where the source had at least one; none after "{" or before "}".
//   - Workflow sections and fields, node and action fields, and edge fields
//     after from and to are printed in source order. A section or block with
//     nothing in it prints as `name { }`.
//   - Every field, entry and declaration takes its own line, except in edges:
//     `edge { from: a; to: b` opens the edge; further fields follow one per
//     line, aligned under "from"; the closing "}" is on its own line at the
//     indentation of "edge". An edge with only from and to is one line,
//     `edge { from: a; to: b }`. A fan-out prints `to: [ a, b ]`.
//   - inputs, outputs, retry, limits and the variable sections print one
//     entry per line, as `name {` ... `}`. update, override and set print
//     inline, as `override: { a: x; b: y }`, when that fits in 100 columns
//     and no comment is inside; otherwise one entry per line.
//   - finals prints as `[ a, b ]`; types print without blanks
//     (`Enum["a","b"]`, `List[String]`); expressions print through
//     ExprString: single blanks around binary operators, `[a, b]`,
//     `{key: value}`, minimal parentheses. Literals keep their source
//     spelling ("""...""" strings are reproduced verbatim).
//   - Comments keep their text and marker ("//", "#" or ";"). A comment on
//     its own line stays on its own line, before the item that follows it, at
//     that item's indentation. A comment after code stays after the code of
//     that line; trailing comments of consecutive lines are aligned, three
//     blanks after the longest line. Comments inside an expression or a line
//     that prints differently are moved to the end of the item's first line.
func Format(f *File) []byte {
	p := &printer{comments: f.Comments}
	var prev Decl
	for _, d := range f.Decls {
		if prev != nil {
			_, a := prev.(*ImportDecl)
			_, b := d.(*ImportDecl)
			if !a || !b {
				p.forceBlank = true
			}
		}
		prev = d
		switch d := d.(type) {
		case *ImportDecl:
			p.lead(d.Pos)
			if d.Path != nil {
				p.write("import " + ExprString(d.Path))
				p.endLine(d.Path.End())
			} else {
				p.write("import")
				p.endLine(after(d.Pos, 6))
			}
		case *WorkflowDecl:
			p.workflow(d)
		case *ActionDecl:
			p.action(d)
		case *MCPDecl:
			p.mcp(d)
		}
	}
	p.indent = ""
	p.flushBefore(flow.Pos{Line: 1 << 30}, true)
	return p.bytes()
}

type outLine struct {
	code    string
	comment string
}

type printer struct {
	out        []outLine
	cur        strings.Builder
	indent     string
	comments   []*Comment
	ci         int      // next comment to print
	lastLine   int      // source line of the last thing printed
	blockStart bool     // just after a "{" line: no blank line
	limit      flow.Pos // where the next item starts in the source
	forceBlank bool     // a blank line before the next line
}

// blank adds an empty line unless the output is empty or ends with one.
func (p *printer) blank() {
	if n := len(p.out); n > 0 && (p.out[n-1].code != "" || p.out[n-1].comment != "") {
		p.out = append(p.out, outLine{})
	}
}

// sep adds a blank line before something from source line line, where one
// belongs.
func (p *printer) sep(line int) {
	if p.forceBlank {
		p.blank()
		p.forceBlank = false
	} else if !p.blockStart && p.lastLine > 0 && line > p.lastLine+1 {
		p.blank()
	}
	p.blockStart = false
}

// before reports whether comment c is before pos; zero positions are
// before nothing.
func before(c *Comment, pos flow.Pos) bool {
	return pos.IsValid() && (c.Pos.Line < pos.Line || c.Pos.Line == pos.Line && c.Pos.Col < pos.Col)
}

// flushBefore prints the pending comments before pos on their own lines.
func (p *printer) flushBefore(pos flow.Pos, sep bool) {
	for p.ci < len(p.comments) && before(p.comments[p.ci], pos) {
		c := p.comments[p.ci]
		p.ci++
		if sep {
			p.sep(c.Pos.Line)
		}
		p.out = append(p.out, outLine{code: p.indent + c.Text})
		p.lastLine = max(p.lastLine, c.Pos.Line)
		p.blockStart = false
	}
}

// lead starts the line of an item that begins at pos in the source.
func (p *printer) lead(pos flow.Pos) {
	p.flushBefore(pos, true)
	line := pos.Line
	if !pos.IsValid() {
		line = p.lastLine
	}
	p.sep(line)
	p.cur.Reset()
	p.cur.WriteString(p.indent)
}

// write appends s to the current line; newlines in s (multi-line strings)
// end lines without comments.
func (p *printer) write(s string) {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			p.cur.WriteString(s)
			return
		}
		p.cur.WriteString(s[:i])
		p.out = append(p.out, outLine{code: p.cur.String()})
		p.cur.Reset()
		s = s[i+1:]
	}
}

// endLine ends the current line, which prints source up to end: the
// pending comments before end, or on end's line unless the next item
// (p.limit) starts on that line before them, become its trailing comment.
func (p *printer) endLine(end flow.Pos) {
	var cs []string
	for p.ci < len(p.comments) {
		c := p.comments[p.ci]
		sameLine := end.IsValid() && c.Pos.Line == end.Line &&
			!(p.limit.Line == end.Line && !before(c, p.limit))
		if !before(c, end) && !sameLine {
			break
		}
		cs = append(cs, c.Text)
		p.ci++
	}
	p.out = append(p.out, outLine{code: p.cur.String(), comment: strings.Join(cs, " ")})
	p.cur.Reset()
	if end.IsValid() {
		p.lastLine = max(p.lastLine, end.Line)
	}
	p.blockStart = false
}

// hasComments reports whether a pending comment lies between a and b.
func (p *printer) hasComments(a, b flow.Pos) bool {
	if !a.IsValid() || !b.IsValid() {
		return false
	}
	for _, c := range p.comments[p.ci:] {
		if before(c, a) {
			continue
		}
		return before(c, b)
	}
	return false
}

// open ends the current line after "{" and indents.
func (p *printer) open(lbrace flow.Pos) {
	p.write(" {")
	p.endLine(after(lbrace, 1))
	p.indent += "  "
	p.blockStart = true
}

// close prints the comments left before rbrace, dedents and prints "}".
func (p *printer) close(rbrace flow.Pos, indent string) {
	p.flushBefore(rbrace, true)
	p.indent = indent
	p.cur.Reset()
	p.cur.WriteString(p.indent + "}")
	p.endLine(after(rbrace, 1))
}

// block prints ` { }`, or ` {`, n items and `}`; the header has been
// written. start gives the source position of item i.
func (p *printer) block(lbrace, rbrace flow.Pos, n int, start func(i int) flow.Pos, item func(i int)) {
	if n == 0 && !p.hasComments(lbrace, rbrace) {
		p.write(" { }")
		p.endLine(after(rbrace, 1))
		return
	}
	indent, outer := p.indent, p.limit
	next := func(i int) flow.Pos {
		if i < n {
			return start(i)
		}
		return rbrace
	}
	p.limit = next(0)
	p.open(lbrace)
	for i := 0; i < n; i++ {
		p.limit = next(i + 1)
		item(i)
	}
	p.limit = outer
	p.close(rbrace, indent)
}

func assignStart(l []*Assign) func(int) flow.Pos {
	return func(i int) flow.Pos { return l[i].Pos }
}

func declStart(l []*VarDecl) func(int) flow.Pos {
	return func(i int) flow.Pos { return l[i].Pos }
}

func fieldStart(l []*Field) func(int) flow.Pos {
	return func(i int) flow.Pos { return l[i].Pos }
}

func (p *printer) workflow(d *WorkflowDecl) {
	p.lead(d.Pos)
	p.write("workflow " + identName(d.Name))
	clauses := d.Clauses
	if len(clauses) == 0 {
		clauses = workflowClausesOf(d)
	}
	done := map[string]bool{}
	var todo []*Clause
	for _, c := range clauses {
		if !done[c.Name] {
			done[c.Name] = true
			todo = append(todo, c)
		}
	}
	p.block(d.Lbrace, d.Rbrace, len(todo), func(i int) flow.Pos { return todo[i].Pos }, func(i int) { p.workflowClause(d, todo[i]) })
}

// workflowClausesOf lists the sections a workflow built without the parser
// has, in canonical order.
func workflowClausesOf(d *WorkflowDecl) []*Clause {
	var cs []*Clause
	add := func(name string, ok bool) {
		if ok {
			cs = append(cs, &Clause{Name: name})
		}
	}
	add("description", d.Description != nil)
	add("model", d.Model != nil)
	add("context_tokens", d.ContextTokens != nil)
	add("parameters", len(d.Parameters) > 0)
	add("variables", len(d.Variables) > 0)
	add("slots", len(d.Slots) > 0)
	add("nodes", len(d.Nodes) > 0)
	add("edges", len(d.Edges) > 0)
	add("initial", d.Initial != nil)
	add("finals", len(d.Finals) > 0)
	add("limits", d.Limits != nil)
	return cs
}

func (p *printer) workflowClause(d *WorkflowDecl, c *Clause) {
	p.lead(c.Pos)
	switch c.Name {
	case "description":
		p.write("description: " + p.expr(d.Description))
		p.endLine(c.End)
	case "model":
		p.write("model: " + p.expr(d.Model))
		p.endLine(c.End)
	case "context_tokens":
		p.write("context_tokens: " + p.expr(d.ContextTokens))
		p.endLine(c.End)
	case "initial":
		p.write("initial: " + identName(d.Initial))
		p.endLine(c.End)
	case "finals":
		p.write("finals: " + identList(d.Finals))
		p.endLine(c.End)
	case "parameters", "variables", "slots":
		decls := d.Parameters
		if c.Name == "variables" {
			decls = d.Variables
		} else if c.Name == "slots" {
			decls = d.Slots
		}
		p.write(c.Name)
		p.block(c.Lbrace, c.Rbrace, len(decls), func(i int) flow.Pos { return decls[i].Pos }, func(i int) { p.varDecl(decls[i]) })
	case "nodes":
		p.write("nodes")
		p.block(c.Lbrace, c.Rbrace, len(d.Nodes), func(i int) flow.Pos { return d.Nodes[i].Pos }, func(i int) { p.node(d.Nodes[i]) })
	case "edges":
		p.write("edges")
		p.block(c.Lbrace, c.Rbrace, len(d.Edges), func(i int) flow.Pos { return d.Edges[i].Pos }, func(i int) { p.edge(d.Edges[i]) })
	case "limits":
		p.write("limits")
		l := d.Limits
		if l == nil {
			l = &Limits{}
		}
		p.block(l.Lbrace, l.Rbrace, len(l.Entries), assignStart(l.Entries), func(i int) { p.entry(l.Entries[i], ": ") })
	default:
		p.write(c.Name)
		p.endLine(c.End)
	}
}

func identList(ids []*Ident) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = identName(id)
	}
	return "[ " + strings.Join(names, ", ") + " ]"
}

func (p *printer) varDecl(v *VarDecl) {
	p.lead(v.Pos)
	p.write(p.varDeclString(v))
	p.endLine(v.End)
}

func varDeclString(v *VarDecl) string { return (&printer{}).varDeclString(v) }

func (p *printer) varDeclString(v *VarDecl) string {
	s := identName(v.Name) + ": " + TypeString(v.Type)
	if v.Default != nil {
		s += " = " + p.expr(v.Default)
	}
	if v.Reducer != nil {
		s += " reduce " + v.Reducer.Name
	}
	return s
}

func (p *printer) entry(a *Assign, op string) {
	p.lead(a.Pos)
	p.write(p.entryString(a, op))
	p.endLine(a.End)
}

func (p *printer) entryString(a *Assign, op string) string {
	return identName(a.Name) + op + p.expr(a.Value)
}

func (p *printer) node(n *NodeDecl) {
	p.lead(n.Pos)
	p.write("node " + identName(n.Name))
	p.block(n.Lbrace, n.Rbrace, len(n.Fields), fieldStart(n.Fields), func(i int) { p.field(n.Fields[i], nodeFields) })
}

// declName is how a declaration's name is written: as it is when an
// identifier, else quoted; "?" for none.
func declName(id *Ident) string {
	switch {
	case id == nil:
		return "?"
	case isIdent(id.Name):
		return id.Name
	}
	return strconv.Quote(id.Name)
}

func (p *printer) action(a *ActionDecl) {
	p.lead(a.Pos)
	p.write("action " + declName(a.Name))
	p.block(a.Lbrace, a.Rbrace, len(a.Fields), fieldStart(a.Fields), func(i int) { p.field(a.Fields[i], actionFields) })
}

func (p *printer) mcp(d *MCPDecl) {
	p.lead(d.Pos)
	p.write("mcp " + declName(d.Name))
	p.block(d.Lbrace, d.Rbrace, len(d.Fields), fieldStart(d.Fields), func(i int) { p.field(d.Fields[i], mcpFields) })
}

func (p *printer) field(f *Field, specs map[string]fieldSpec) {
	p.lead(f.Pos)
	name := identName(f.Name)
	if f.Block == nil {
		p.write(name + ": " + p.expr(f.Value))
		p.endLine(f.End)
		return
	}
	b := f.Block
	switch specs[name].kind {
	case fkDecls:
		p.write(name)
		p.block(b.Lbrace, b.Rbrace, len(b.Decls), declStart(b.Decls), func(i int) { p.varDecl(b.Decls[i]) })
	case fkAssigns:
		p.write(name + ":")
		p.inlineBlock(b.Entries, " = ", b.Lbrace, b.Rbrace)
	default:
		p.write(name)
		if len(b.Decls) > 0 {
			p.block(b.Lbrace, b.Rbrace, len(b.Decls), declStart(b.Decls), func(i int) { p.varDecl(b.Decls[i]) })
			return
		}
		p.block(b.Lbrace, b.Rbrace, len(b.Entries), assignStart(b.Entries), func(i int) { p.entry(b.Entries[i], ": ") })
	}
}

// inlineBlock prints update, override and set blocks: inline when short.
func (p *printer) inlineBlock(list []*Assign, op string, lbrace, rbrace flow.Pos) {
	if len(list) > 0 && !p.hasComments(lbrace, rbrace) {
		parts := make([]string, len(list))
		for i, a := range list {
			parts[i] = p.entryString(a, op)
		}
		s := " { " + strings.Join(parts, "; ") + " }"
		if !strings.Contains(s, "\n") && utf8.RuneCountInString(p.cur.String())+utf8.RuneCountInString(s) <= maxInline {
			p.write(s)
			p.endLine(after(rbrace, 1))
			return
		}
	}
	p.block(lbrace, rbrace, len(list), assignStart(list), func(i int) { p.entry(list[i], op) })
}

func (p *printer) edge(e *EdgeDecl) {
	p.lead(e.Pos)
	var head []string
	var headEnd flow.Pos
	clauses := e.Clauses
	if len(clauses) == 0 {
		clauses = edgeClausesOf(e)
	}
	done := map[string]bool{}
	var rest []*Clause
	for _, c := range clauses {
		if done[c.Name] {
			continue
		}
		done[c.Name] = true
		switch c.Name {
		case "from", "to":
			if c.End.IsValid() && (!headEnd.IsValid() || headEnd.Before(c.End)) {
				headEnd = c.End
			}
		default:
			rest = append(rest, c)
		}
	}
	if e.From != nil || done["from"] {
		head = append(head, "from: "+identName(e.From))
	}
	if len(e.To) > 0 || done["to"] {
		to := identList(e.To)
		if len(e.To) == 1 {
			to = identName(e.To[0])
		}
		head = append(head, "to: "+to)
	}
	p.write("edge { " + strings.Join(head, "; "))
	if len(rest) == 0 {
		p.write(" }")
		p.endLine(after(e.Rbrace, 1))
		return
	}
	outer := p.limit
	p.limit = rest[0].Pos
	p.endLine(headEnd)
	indent := p.indent
	p.indent += "       " // len("edge { ")
	p.blockStart = true
	for i, c := range rest {
		p.limit = e.Rbrace
		if i+1 < len(rest) {
			p.limit = rest[i+1].Pos
		}
		p.lead(c.Pos)
		switch c.Name {
		case "join":
			p.write("join: " + identName(e.Join))
			p.endLine(c.End)
		case "on":
			p.write("on: " + identName(e.On))
			p.endLine(c.End)
		case "condition":
			p.write("condition: " + p.expr(e.Condition))
			p.endLine(c.End)
		case "update":
			p.write("update:")
			p.inlineBlock(e.Update, " = ", c.Lbrace, c.Rbrace)
		case "override":
			p.write("override:")
			p.inlineBlock(e.Override, ": ", c.Lbrace, c.Rbrace)
		default:
			p.write(c.Name)
			p.endLine(c.End)
		}
	}
	p.limit = outer
	p.close(e.Rbrace, indent)
}

// edgeClausesOf lists the fields of an edge built without the parser, in
// canonical order.
func edgeClausesOf(e *EdgeDecl) []*Clause {
	var cs []*Clause
	add := func(name string, ok bool) {
		if ok {
			cs = append(cs, &Clause{Name: name})
		}
	}
	add("from", e.From != nil)
	add("to", len(e.To) > 0)
	add("join", e.Join != nil)
	add("on", e.On != nil)
	add("condition", e.Condition != nil)
	add("update", len(e.Update) > 0)
	add("override", len(e.Override) > 0)
	return cs
}

// bytes aligns trailing comments and joins the lines.
func (p *printer) bytes() []byte {
	if p.cur.Len() > 0 {
		p.out = append(p.out, outLine{code: p.cur.String()})
		p.cur.Reset()
	}
	for i := 0; i < len(p.out); {
		if p.out[i].comment == "" {
			i++
			continue
		}
		j, width := i, 0
		for ; j < len(p.out) && p.out[j].comment != ""; j++ {
			width = max(width, utf8.RuneCountInString(p.out[j].code))
		}
		for k := i; k < j; k++ {
			l := &p.out[k]
			pad := width - utf8.RuneCountInString(l.code) + 3
			if l.code == "" {
				pad = 0 // a comment alone on a line
			}
			l.code += strings.Repeat(" ", pad) + l.comment
			l.comment = ""
		}
		i = j
	}
	// Drop blank lines at the end.
	for len(p.out) > 0 && p.out[len(p.out)-1].code == "" {
		p.out = p.out[:len(p.out)-1]
	}
	var b strings.Builder
	for _, l := range p.out {
		b.WriteString(l.code)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// TypeString returns the canonical spelling of a type: `String`,
// `Enum["a","b"]`, `List[Int]`.
func TypeString(t TypeExpr) string {
	switch t := t.(type) {
	case *NamedType:
		return t.Name
	case *EnumType:
		vals := make([]string, len(t.Values))
		for i, v := range t.Values {
			vals[i] = stringLitString(v)
		}
		return "Enum[" + strings.Join(vals, ",") + "]"
	case *ListType:
		return "List[" + TypeString(t.Elem) + "]"
	}
	return "?"
}

func stringLitString(s *StringLit) string {
	if s.Raw != "" {
		return s.Raw
	}
	return strconv.Quote(s.Value)
}

// ExprString returns the canonical spelling of an expression, with the
// fewest parentheses that keep its tree: binary operators are
// left-associative and bind, from loosest to tightest, || then && then
// == != then < <= > >= in then + - then * / %; unary ! and - bind tighter.
func ExprString(e Expr) string {
	w := exprWriter{}
	w.expr(e, 0)
	return w.b.String()
}

// exprWriter prints expressions. When indent is set, multi-line """
// strings are re-indented to it (see reindentRaw).
type exprWriter struct {
	b      strings.Builder
	indent string
}

const (
	precUnary   = 7
	precPostfix = 8
)

func exprPrec(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		return flow.Precedence(e.Op)
	case *UnaryExpr:
		return precUnary
	}
	return precPostfix
}

func (w *exprWriter) expr(e Expr, ctx int) {
	b := &w.b
	if e == nil {
		b.WriteString("<nil>")
		return
	}
	if exprPrec(e) < ctx {
		b.WriteByte('(')
		w.expr(e, 0)
		b.WriteByte(')')
		return
	}
	switch e := e.(type) {
	case *Ident:
		b.WriteString(e.Name)
	case *IntLit:
		if e.Raw != "" {
			b.WriteString(e.Raw)
		} else {
			b.WriteString(strconv.FormatInt(e.Value, 10))
		}
	case *FloatLit:
		if e.Raw != "" {
			b.WriteString(e.Raw)
		} else {
			s := strconv.FormatFloat(e.Value, 'g', -1, 64)
			if !strings.ContainsAny(s, ".eIN") {
				s += ".0"
			}
			b.WriteString(s)
		}
	case *StringLit:
		if w.indent != "" && e.Raw != "" {
			b.WriteString(reindentRaw(e.Raw, e.Value, w.indent))
		} else {
			b.WriteString(stringLitString(e))
		}
	case *BoolLit:
		b.WriteString(strconv.FormatBool(e.Value))
	case *NullLit:
		b.WriteString("null")
	case *DurationLit:
		if e.Raw != "" {
			b.WriteString(e.Raw)
		} else {
			b.WriteString(e.Value.String())
		}
	case *ListLit:
		b.WriteByte('[')
		for i, x := range e.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			w.expr(x, 0)
		}
		b.WriteByte(']')
	case *ObjectLit:
		b.WriteByte('{')
		for i, f := range e.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			if isIdent(f.Key) {
				b.WriteString(f.Key)
			} else {
				b.WriteString(strconv.Quote(f.Key))
			}
			b.WriteString(": ")
			w.expr(f.Value, 0)
		}
		b.WriteByte('}')
	case *UnaryExpr:
		b.WriteString(e.Op)
		w.expr(e.X, precUnary)
	case *BinaryExpr:
		p := flow.Precedence(e.Op)
		w.expr(e.X, p)
		b.WriteString(" " + e.Op + " ")
		w.expr(e.Y, p+1)
	case *MemberExpr:
		w.expr(e.X, precPostfix)
		b.WriteByte('.')
		b.WriteString(identName(e.Sel))
	case *IndexExpr:
		w.expr(e.X, precPostfix)
		b.WriteByte('[')
		w.expr(e.Index, 0)
		b.WriteByte(']')
	case *CallExpr:
		w.expr(e.Fun, precPostfix)
		b.WriteByte('(')
		for i, x := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			w.expr(x, 0)
		}
		b.WriteByte(')')
	case *BadExpr:
		b.WriteString("<bad expression>")
	}
}

// reindentRaw returns a """ literal whose opening """ ends its line and
// whose closing """ starts one (after blanks) in canonical form: each
// non-empty line of the value indented by indent, and the closing """ on
// its own line at indent. Other literals, and any whose value the change
// would alter, are returned as written.
func reindentRaw(raw, value, indent string) string {
	if len(raw) < 6 || !strings.HasPrefix(raw, `"""`) || strings.Contains(value, "\r") {
		return raw
	}
	body := raw[3 : len(raw)-3]
	first := strings.IndexByte(body, '\n')
	last := strings.LastIndexByte(body, '\n')
	if first < 0 || !isBlank(body[:first]) || !isBlank(body[last+1:]) {
		return raw
	}
	var b strings.Builder
	b.WriteString(`"""` + "\n")
	for _, l := range strings.Split(value, "\n") {
		if l != "" {
			b.WriteString(indent + l)
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + `"""`)
	out := b.String()
	if dedent(out[3:len(out)-3]) != value {
		return raw
	}
	return out
}

// expr prints e for a line at the current indentation.
func (p *printer) expr(e Expr) string {
	if e == nil {
		return ""
	}
	w := exprWriter{indent: p.indent + "  "}
	w.expr(e, 0)
	return w.b.String()
}
