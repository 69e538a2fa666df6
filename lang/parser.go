package lang

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weftlang/weft/flow"
)

// maxErrors is the number of errors after which ParseFile stops.
const maxErrors = 10

// maxNest bounds the nesting of expressions and types.
const maxNest = 1000

// Diagnostic codes reported by ParseFile.
const (
	CodeSyntax       = "syntax"        // malformed source
	CodeUnknownField = "unknown-field" // a field, section or entry name that does not exist there
	CodeUnknownType  = "unknown-type"  // a type name that is not a built-in type
	CodeUnknownValue = "unknown-value" // an LLM mode or edge trigger that does not exist
	CodeDuplicate    = "duplicate"     // a field or section written twice
	CodeMissing      = "missing"       // a required field is absent
)

// fieldKind says how a field's value is written.
type fieldKind int

const (
	fkExpr    fieldKind = iota // name: expr
	fkIdent                    // name: identifier
	fkString                   // name: "string"
	fkEntries                  // name { key: expr ... }
	fkAssigns                  // name: { key = expr ... }
	fkDecls                    // name { key: Type ... }
)

type fieldSpec struct {
	kind   fieldKind
	values []string // for fkIdent: the accepted values (case-insensitive); nil for any
	keys   []string // for fkEntries: the accepted keys; nil for any
}

var (
	llmModes  = []string{"generate", "classify", "extract"}
	retryKeys = []string{"max", "backoff", "factor", "max_backoff"}
	limitKeys = []string{"max_steps", "max_time"}
)

// nodeFieldNames lists node fields in documentation order.
var nodeFieldNames = []string{
	"type", "action", "description", "inputs", "outputs", "prompt", "system", "model",
	"temperature", "max_tokens", "mode", "question", "tool", "url", "method", "headers", "body",
	"context_tokens", "workflow", "retry", "timeout", "fallback", "map", "as", "parallelism", "set",
}

// implFields are the fields that describe an implementation: nodes and
// action bindings both accept them.
var implFields = map[string]fieldSpec{
	"type":           {kind: fkIdent}, // checked by the compiler
	"description":    {kind: fkExpr},
	"prompt":         {kind: fkExpr},
	"system":         {kind: fkExpr},
	"model":          {kind: fkExpr},
	"temperature":    {kind: fkExpr},
	"max_tokens":     {kind: fkExpr},
	"mode":           {kind: fkIdent, values: llmModes},
	"question":       {kind: fkExpr},
	"url":            {kind: fkExpr},
	"method":         {kind: fkExpr},
	"headers":        {kind: fkExpr},
	"body":           {kind: fkExpr},
	"tool":           {kind: fkExpr},
	"tools":          {kind: fkExpr},
	"fallback":       {kind: fkExpr},
	"context_tokens": {kind: fkExpr},
}

var nodeFields = withFields(implFields, map[string]fieldSpec{
	"action":      {kind: fkString},
	"inputs":      {kind: fkEntries},
	"outputs":     {kind: fkDecls},
	"tool":        {kind: fkString},
	"workflow":    {kind: fkIdent},
	"retry":       {kind: fkEntries, keys: retryKeys},
	"timeout":     {kind: fkExpr},
	"map":         {kind: fkExpr},
	"as":          {kind: fkIdent},
	"parallelism": {kind: fkExpr},
	"set":         {kind: fkAssigns},
})

var actionFieldNames = []string{
	"type", "description", "prompt", "system", "model", "temperature", "max_tokens", "mode",
	"question", "url", "method", "headers", "body", "tool", "tools", "context_tokens", "fallback",
}

var actionFields = implFields

// MCPFields are the fields of an `mcp` declaration, in documentation
// order: the config of the tool.mcp component (its name is the
// declaration's).
var MCPFields = []string{"command", "args", "env", "dir", "url", "headers", "timeout", "max_restarts", "max_inline"}

var mcpFields = func() map[string]fieldSpec {
	m := map[string]fieldSpec{}
	for _, n := range MCPFields {
		m[n] = fieldSpec{kind: fkExpr}
	}
	return m
}()

// withFields returns base with extra added (extra wins).
func withFields(base, extra map[string]fieldSpec) map[string]fieldSpec {
	out := make(map[string]fieldSpec, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

var (
	edgeFieldNames  = []string{"from", "to", "join", "on", "condition", "update", "override"}
	workflowClauses = []string{"description", "model", "context_tokens", "parameters", "variables", "slots", "nodes", "edges", "initial", "finals", "limits"}
	topKeywords     = []string{"workflow", "action", "mcp", "import"}
	edgeTriggers    = []string{"error"}
)

// Item keywords of each kind of block, as sets.
var (
	topKeys         = set(topKeywords)
	workflowKeys    = set(workflowClauses)
	nodeKeys        = set(nodeFieldNames)
	actionKeys      = set(actionFieldNames)
	mcpKeys         = set(MCPFields)
	edgeKeys        = set(edgeFieldNames)
	nodeSectionKeys = set([]string{"node"})
	edgeSectionKeys = set([]string{"edge"})
	retryKeySet     = set(retryKeys)
	limitKeySet     = set(limitKeys)
)

func set(names ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, ns := range names {
		for _, n := range ns {
			m[n] = true
		}
	}
	return m
}

// ParseFile parses the .wf source src; filename is used in positions. It
// returns as much of the file as it could parse, even when there are
// errors, and the diagnostics found (at most one per line, and parsing
// stops after 10 errors). It never panics.
func ParseFile(filename string, src []byte) (*File, flow.Diagnostics) {
	p := &parser{file: filename}
	p.sc = newScanner(filename, src, p.report)
	f := &File{Name: filename}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(bailout); !ok {
					panic(r)
				}
			}
		}()
		p.next()
		p.parseFile(f)
	}()
	f.Comments = p.sc.comments
	return f, p.diags
}

// ParseExpr parses src as one expression, as written in a condition or an
// input value; newlines may appear anywhere in it. It returns the
// expression (with *BadExpr parts where it failed) and the diagnostics.
func ParseExpr(filename string, src []byte) (Expr, flow.Diagnostics) {
	p := &parser{file: filename}
	p.sc = newScanner(filename, src, p.report)
	var x Expr
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(bailout); !ok {
					panic(r)
				}
			}
		}()
		p.exprDepth = 1
		p.next()
		x = p.parseExpr()
		if !p.is(tEOF) {
			p.errorf(p.tok.pos, CodeSyntax, "unexpected %s after expression", p.tok.describe())
		}
	}()
	if x == nil {
		x = &BadExpr{Pos: flow.Pos{File: filename, Line: 1, Col: 1}}
	}
	return x, p.diags
}

type bailout struct{}

// blockCtx describes an open braced block, for closing-brace diagnostics
// and to notice a missing "}": an item keyword of an enclosing block ends
// the current one.
type blockCtx struct {
	what  func() string // describes the block, for messages
	open  flow.Pos
	keys  map[string]bool // accepted item keywords; nil when items are free names
	names []string        // keys in documentation order, for suggestions
}

type parser struct {
	file      string
	sc        *scanner
	tok       token
	prevEnd   flow.Pos // end of the last consumed token
	exprDepth int      // > 0 inside (), [] and expression {}: newlines are skipped
	nest      int
	depths    map[Expr]int // depth of the compound nodes of the expression being parsed
	diags     flow.Diagnostics
	lastLine  int // line of the last error, to report one error per line
	ctx       []*blockCtx
	prevBrace flow.Pos // position of the "}" that ended the last parseEntries
	// closedEarly is set when a block ends without its "}", so that the
	// enclosing block resumes at the token that ended it.
	closedEarly bool
}

func (p *parser) report(pos flow.Pos, code, msg string) {
	if len(p.diags) > 0 && pos.Line == p.lastLine {
		return
	}
	p.lastLine = pos.Line
	p.diags = append(p.diags, flow.Diagnostic{Pos: pos, Severity: flow.Error, Code: code, Msg: msg})
	if len(p.diags) >= maxErrors {
		panic(bailout{})
	}
}

func (p *parser) errorf(pos flow.Pos, code, format string, args ...any) {
	p.report(pos, code, fmt.Sprintf(format, args...))
}

func (p *parser) next() {
	p.prevEnd = p.tok.end
	p.tok = p.sc.scan()
	for p.tok.kind == tNewline && p.exprDepth > 0 {
		p.tok = p.sc.scan()
	}
}

// peek returns the token after the current one without consuming anything.
func (p *parser) peek() token {
	saved := *p.sc
	p.sc.quiet = true
	t := p.sc.scan()
	*p.sc = saved
	return t
}

func (p *parser) is(kind tokenKind) bool { return p.tok.kind == kind }

func (p *parser) isKeyword(name string) bool { return p.tok.kind == tIdent && p.tok.lit == name }

// got consumes a token of the given kind and reports whether there was one.
func (p *parser) got(kind tokenKind) bool {
	if p.tok.kind == kind {
		p.next()
		return true
	}
	return false
}

func (p *parser) skipNewlines() {
	for p.tok.kind == tNewline {
		p.next()
	}
}

// short formats a position as line:col.
func short(pos flow.Pos) string { return fmt.Sprintf("%d:%d", pos.Line, pos.Col) }

// expect consumes a token of the given kind, or reports an error naming
// what it is wanted for and returns the zero Pos.
func (p *parser) expect(kind tokenKind, context string) flow.Pos {
	if p.tok.kind == kind {
		pos := p.tok.pos
		p.next()
		return pos
	}
	p.errorf(p.tok.pos, CodeSyntax, "expected %q %s, found %s", tokenText[kind], context, p.tok.describe())
	return flow.Pos{}
}

// skipItem skips to the end of the current item: a newline or ";" outside
// braces, or a "}" closing the enclosing block (not consumed). Braces opened
// on the way are skipped to their match, across lines.
func (p *parser) skipItem() {
	braces, others := 0, 0
	for {
		switch p.tok.kind {
		case tEOF:
			return
		case tNewline:
			others = 0
			if braces == 0 {
				return
			}
		case tSemi:
			if braces == 0 && others == 0 {
				return
			}
		case tLbrace:
			braces++
		case tLbrack, tLparen:
			others++
		case tRbrack, tRparen:
			if others > 0 {
				others--
			}
		case tRbrace:
			if braces == 0 {
				return
			}
			braces--
		}
		p.next()
	}
}

// parseBlock parses the items of a block whose "{" has been consumed, up
// to and including its "}", whose position it returns (zero if missing).
// item is called at the first token of each item.
func (p *parser) parseBlock(c *blockCtx, item func()) flow.Pos {
	p.ctx = append(p.ctx, c)
	defer func() { p.ctx = p.ctx[:len(p.ctx)-1] }()
	for {
		for p.is(tNewline) || p.is(tSemi) || p.is(tComma) {
			p.next()
		}
		switch p.tok.kind {
		case tRbrace:
			pos := p.tok.pos
			p.next()
			return pos
		case tEOF:
			p.errorf(p.tok.pos, CodeSyntax, "expected \"}\" to close %s opened at %s, found end of file", c.what(), short(c.open))
			p.closedEarly = true
			return flow.Pos{}
		case tIdent:
			if p.closesHere(c) {
				p.errorf(p.tok.pos, CodeSyntax, "expected \"}\" to close %s opened at %s, found %s", c.what(), short(c.open), p.tok.describe())
				p.closedEarly = true
				return flow.Pos{}
			}
		}
		start := p.tok.pos
		p.closedEarly = false
		item()
		if p.closedEarly {
			continue // an inner block lacked its "}"; reported there
		}
		switch p.tok.kind {
		case tNewline, tSemi, tComma, tRbrace, tEOF:
		default:
			p.errorf(p.tok.pos, CodeSyntax, "unexpected %s at end of %s; want a newline, \";\" or \"}\"", p.tok.describe(), itemName(c))
			p.skipItem()
			if p.tok.pos == start {
				p.next()
			}
		}
	}
}

func itemName(c *blockCtx) string {
	if c.keys == nil {
		return "entry"
	}
	return "field"
}

// closesHere reports whether the identifier at hand belongs to an enclosing
// block rather than to c, which means c lacks its "}".
func (p *parser) closesHere(c *blockCtx) bool {
	name := p.tok.lit
	if c.keys != nil && c.keys[name] {
		return false
	}
	if p.tok.pos.Col > c.open.Col {
		// Indented deeper than the block's opening line: more likely a
		// misspelled item of this block than the end of it.
		return false
	}
	outside := false
	for i := len(p.ctx) - 2; i >= 0; i-- {
		if k := p.ctx[i].keys; k != nil && k[name] {
			outside = true
			break
		}
	}
	if !outside {
		return false
	}
	if c.keys == nil {
		// Free names: `name:` or `name =` is an entry of this block.
		if t := p.peek(); t.kind == tColon || t.kind == tAssign {
			return false
		}
	}
	return true
}

// endOfDecl checks that a top-level declaration ends its line.
func (p *parser) endOfDecl(what string) {
	switch p.tok.kind {
	case tNewline, tSemi, tEOF:
		return
	case tIdent:
		if topKeys[p.tok.lit] {
			return // a block closed early; already reported
		}
	}
	p.errorf(p.tok.pos, CodeSyntax, "unexpected %s after %s", p.tok.describe(), what)
	p.skipItem()
}

func (p *parser) parseFile(f *File) {
	top := &blockCtx{what: func() string { return "file" }, keys: topKeys}
	p.ctx = append(p.ctx, top)
	for !p.is(tEOF) {
		start := p.tok.pos
		switch {
		case p.is(tNewline), p.is(tSemi):
			p.next()
			continue
		case p.isKeyword("import"):
			p.parseImport(f)
			p.endOfDecl("import")
		case p.isKeyword("workflow"):
			d := p.parseWorkflow(f)
			p.endOfDecl("workflow " + identName(d.Name))
		case p.isKeyword("action"):
			d := p.parseAction(f)
			p.endOfDecl("action " + identName(d.Name))
		case p.isKeyword("mcp"):
			d := p.parseMCP(f)
			p.endOfDecl("mcp " + identName(d.Name))
		default:
			msg := fmt.Sprintf("expected workflow, action, mcp or import, found %s", p.tok.describe())
			if p.is(tIdent) {
				msg += suggest(p.tok.lit, topKeywords)
			}
			p.report(p.tok.pos, CodeSyntax, msg)
			p.skipItem()
			if p.is(tRbrace) {
				p.next()
			}
		}
		if p.tok.pos == start {
			p.next()
		}
	}
}

func identName(id *Ident) string {
	if id == nil {
		return "?"
	}
	return id.Name
}

func (p *parser) parseIdent(what string) *Ident {
	if p.is(tIdent) {
		id := &Ident{Pos: p.tok.pos, Name: p.tok.lit}
		p.next()
		return id
	}
	p.errorf(p.tok.pos, CodeSyntax, "expected %s, found %s", what, p.tok.describe())
	return nil
}

func (p *parser) parseImport(f *File) *ImportDecl {
	d := &ImportDecl{Pos: p.tok.pos}
	f.Decls = append(f.Decls, d)
	p.next()
	if !p.is(tString) {
		p.errorf(p.tok.pos, CodeSyntax, "expected import path string, found %s", p.tok.describe())
		return d
	}
	d.Path = p.stringLit()
	return d
}

func (p *parser) stringLit() *StringLit {
	s := &StringLit{Pos: p.tok.pos, Raw: p.tok.lit, Value: p.tok.val, EndPos: p.tok.end}
	p.next()
	return s
}

// openBrace consumes the "{" of a block introduced by what.
func (p *parser) openBrace(what string) (flow.Pos, bool) {
	if p.is(tLbrace) {
		pos := p.tok.pos
		p.next()
		return pos, true
	}
	p.errorf(p.tok.pos, CodeSyntax, "expected \"{\" after %s, found %s", what, p.tok.describe())
	p.skipItem()
	return flow.Pos{}, false
}

func (p *parser) parseWorkflow(f *File) *WorkflowDecl {
	d := &WorkflowDecl{Pos: p.tok.pos}
	f.Decls = append(f.Decls, d)
	p.next()
	d.Name = p.parseIdent("workflow name")
	if d.Name == nil {
		p.skipItem()
		return d
	}
	var ok bool
	if d.Lbrace, ok = p.openBrace("workflow " + d.Name.Name); !ok {
		return d
	}
	c := &blockCtx{what: func() string { return fmt.Sprintf("workflow %q", d.Name.Name) }, open: d.Pos, keys: workflowKeys}
	seen := map[string]*Clause{}
	d.Rbrace = p.parseBlock(c, func() {
		if !p.is(tIdent) {
			p.errorf(p.tok.pos, CodeSyntax, "expected a workflow section or field, found %s", p.tok.describe())
			p.skipItem()
			return
		}
		name, pos := p.tok.lit, p.tok.pos
		if !c.keys[name] {
			p.errorf(pos, CodeUnknownField, "unknown section %q in workflow %q%s", name, d.Name.Name, suggestOrList(name, workflowClauses))
			p.skipItem()
			return
		}
		cl := &Clause{Name: name, Pos: pos}
		if prev := seen[name]; prev != nil {
			p.errorf(pos, CodeDuplicate, "duplicate %q in workflow %q (first at %s)", name, d.Name.Name, short(prev.Pos))
		} else {
			seen[name] = cl
		}
		d.Clauses = append(d.Clauses, cl)
		p.next()
		switch name {
		case "description":
			if p.expect(tColon, "after description") != (flow.Pos{}) {
				d.Description = p.parseExpr()
			}
		case "model":
			if p.expect(tColon, "after model") != (flow.Pos{}) {
				d.Model = p.parseExpr()
			}
		case "context_tokens":
			if p.expect(tColon, "after context_tokens") != (flow.Pos{}) {
				d.ContextTokens = p.parseExpr()
			}
		case "initial":
			if p.expect(tColon, "after initial") != (flow.Pos{}) {
				d.Initial = p.parseIdent("initial node name")
			}
		case "finals":
			if p.expect(tColon, "after finals") != (flow.Pos{}) {
				d.Finals = p.parseIdentList("final node name")
			}
		case "parameters", "variables", "slots":
			p.optColon()
			var ok bool
			if cl.Lbrace, ok = p.openBrace(name); !ok {
				break
			}
			bc := &blockCtx{what: func() string { return fmt.Sprintf("section %q", name) }, open: pos}
			var decls []*VarDecl
			cl.Rbrace = p.parseBlock(bc, func() {
				if v := p.parseVarDecl(); v != nil {
					decls = append(decls, v)
				}
			})
			switch name {
			case "parameters":
				d.Parameters = append(d.Parameters, decls...)
			case "variables":
				d.Variables = append(d.Variables, decls...)
			default:
				d.Slots = append(d.Slots, decls...)
			}
		case "nodes":
			p.optColon()
			var ok bool
			if cl.Lbrace, ok = p.openBrace(name); !ok {
				break
			}
			cl.Rbrace = p.parseItems("nodes", "node", pos, nodeSectionKeys, func() { p.parseNode(d) })
		case "edges":
			p.optColon()
			var ok bool
			if cl.Lbrace, ok = p.openBrace(name); !ok {
				break
			}
			cl.Rbrace = p.parseItems("edges", "edge", pos, edgeSectionKeys, func() { p.parseEdge(d) })
		case "limits":
			p.optColon()
			l := &Limits{Pos: pos}
			var ok bool
			if l.Lbrace, ok = p.openBrace(name); !ok {
				break
			}
			cl.Lbrace = l.Lbrace
			l.Entries = p.parseEntries(&blockCtx{what: func() string { return `section "limits"` }, open: pos, keys: limitKeySet, names: limitKeys}, false)
			l.Rbrace = p.prevBrace
			cl.Rbrace = l.Rbrace
			if d.Limits == nil {
				d.Limits = l
			} else {
				d.Limits.Entries = append(d.Limits.Entries, l.Entries...)
			}
		}
		cl.End = p.prevEnd
	})
	return d
}

func (p *parser) optColon() {
	if p.is(tColon) {
		p.next()
	}
}

// parseIdentList parses `name` or `[ name, ... ]`.
func (p *parser) parseIdentList(what string) []*Ident {
	if !p.is(tLbrack) {
		if id := p.parseIdent(what); id != nil {
			return []*Ident{id}
		}
		return nil
	}
	open := p.tok.pos
	p.exprDepth++
	p.next()
	var ids []*Ident
	for !p.is(tRbrack) && !p.is(tEOF) {
		id := p.parseIdent(what)
		if id == nil {
			break
		}
		ids = append(ids, id)
		if !p.is(tComma) {
			break
		}
		p.next()
	}
	p.closeBracket(tRbrack, "list", open)
	if len(ids) == 0 {
		p.errorf(open, CodeSyntax, "empty list; want at least one %s", what)
	}
	return ids
}

// closeBracket consumes the closing token of a bracket opened at open.
func (p *parser) closeBracket(kind tokenKind, what string, open flow.Pos) flow.Pos {
	p.exprDepth--
	if p.is(kind) {
		pos := p.tok.pos
		p.next()
		return pos
	}
	p.errorf(p.tok.pos, CodeSyntax, "expected %q to close %s opened at %s, found %s", tokenText[kind], what, short(open), p.tok.describe())
	return flow.Pos{}
}

// parseVarDecl parses `name: Type [= expr] [reduce name]`.
func (p *parser) parseVarDecl() *VarDecl {
	v := p.parseNameType("name")
	if v == nil || v.Type == nil {
		return v
	}
	if p.is(tAssign) {
		p.next()
		v.Default = p.parseExpr()
	}
	if p.isKeyword("reduce") {
		p.next()
		v.Reducer = p.parseIdent("reducer name (" + strings.Join(flow.BuiltinReducerNames(), ", ") + ")")
	}
	v.End = p.prevEnd
	return v
}

// parseTypeOnly parses `name: Type`, as in outputs.
func (p *parser) parseTypeOnly() *VarDecl { return p.parseNameType("output name") }

// parseNameType parses `name: Type`. It returns nil when there is no name,
// and a VarDecl without Type when the colon is missing (both reported).
func (p *parser) parseNameType(what string) *VarDecl {
	name := p.parseIdent(what)
	if name == nil {
		p.skipItem()
		return nil
	}
	v := &VarDecl{Pos: name.Pos, Name: name}
	if !p.got(tColon) {
		p.errorf(p.tok.pos, CodeSyntax, "expected \":\" after %q, found %s", name.Name, p.tok.describe())
		p.skipItem()
		return v
	}
	v.Type = p.parseType()
	v.End = p.prevEnd
	return v
}

var typeNames = append(append([]string{}, builtinTypes...), "Enum", "List")

func (p *parser) parseType() TypeExpr {
	if !p.is(tIdent) {
		p.errorf(p.tok.pos, CodeSyntax, "expected type, found %s", p.tok.describe())
		return nil
	}
	p.nest++
	defer func() { p.nest-- }()
	if p.nest > maxNest {
		p.errorf(p.tok.pos, CodeSyntax, "type nested too deeply")
		panic(bailout{})
	}
	name, pos := p.tok.lit, p.tok.pos
	p.next()
	switch name {
	case "Enum":
		t := &EnumType{Pos: pos}
		if !p.is(tLbrack) {
			p.errorf(p.tok.pos, CodeSyntax, "expected \"[\" after Enum, found %s", p.tok.describe())
			return t
		}
		open := p.tok.pos
		p.exprDepth++
		p.next()
		seen := map[string]bool{}
		for !p.is(tRbrack) && !p.is(tEOF) {
			if !p.is(tString) {
				p.errorf(p.tok.pos, CodeSyntax, "expected enum value string, found %s", p.tok.describe())
				break
			}
			s := p.stringLit()
			if seen[s.Value] {
				p.errorf(s.Pos, CodeDuplicate, "duplicate enum value %q", s.Value)
			}
			seen[s.Value] = true
			t.Values = append(t.Values, s)
			if !p.is(tComma) {
				break
			}
			p.next()
		}
		t.Rbrack = p.closeBracket(tRbrack, "Enum", open)
		if len(t.Values) == 0 {
			p.errorf(pos, CodeSyntax, "Enum needs at least one value")
		}
		return t
	case "List":
		t := &ListType{Pos: pos}
		if !p.is(tLbrack) {
			p.errorf(p.tok.pos, CodeSyntax, "expected \"[\" after List, found %s", p.tok.describe())
			return t
		}
		open := p.tok.pos
		p.exprDepth++
		p.next()
		t.Elem = p.parseType()
		t.Rbrack = p.closeBracket(tRbrack, "List", open)
		return t
	}
	known := false
	for _, b := range builtinTypes {
		if b == name {
			known = true
		}
	}
	if !known {
		p.errorf(pos, CodeUnknownType, "unknown type %q%s", name, suggestOrList(name, typeNames))
	}
	return &NamedType{Pos: pos, Name: name}
}

func (p *parser) parseNode(d *WorkflowDecl) {
	n := &NodeDecl{Pos: p.tok.pos}
	p.next()
	n.Name = p.parseIdent("node name")
	if n.Name == nil {
		p.skipItem()
		return
	}
	d.Nodes = append(d.Nodes, n)
	var ok bool
	if n.Lbrace, ok = p.openBrace("node " + n.Name.Name); !ok {
		return
	}
	what := func() string { return fmt.Sprintf("node %q", n.Name.Name) }
	n.Rbrace = p.parseFields(&n.Fields, what, n.Pos, nodeFields, nodeKeys, nodeFieldNames)
}

// declName parses the name of a declaration (what it is: "action"): an
// identifier, or a string for a name that is no identifier ("my-server");
// nil when it reported what it found instead.
func (p *parser) declName(what string) *Ident {
	var id *Ident
	switch {
	case p.is(tIdent):
		id = &Ident{Pos: p.tok.pos, Name: p.tok.lit}
	case p.is(tString):
		id = &Ident{Pos: p.tok.pos, Name: p.tok.val}
	default:
		p.errorf(p.tok.pos, CodeSyntax, "expected %s name, found %s", what, p.tok.describe())
		p.skipItem()
		return nil
	}
	p.next()
	return id
}

func (p *parser) parseAction(f *File) *ActionDecl {
	a := &ActionDecl{Pos: p.tok.pos}
	f.Decls = append(f.Decls, a)
	p.next()
	if a.Name = p.declName("action"); a.Name == nil {
		return a
	}
	var ok bool
	if a.Lbrace, ok = p.openBrace("action " + a.Name.Name); !ok {
		return a
	}
	what := func() string { return fmt.Sprintf("action %q", a.Name.Name) }
	a.Rbrace = p.parseFields(&a.Fields, what, a.Pos, actionFields, actionKeys, actionFieldNames)
	return a
}

func (p *parser) parseMCP(f *File) *MCPDecl {
	d := &MCPDecl{Pos: p.tok.pos}
	f.Decls = append(f.Decls, d)
	p.next()
	if d.Name = p.declName("MCP server"); d.Name == nil {
		return d
	}
	var ok bool
	if d.Lbrace, ok = p.openBrace("mcp " + d.Name.Name); !ok {
		return d
	}
	what := func() string { return fmt.Sprintf("mcp %s", d.Name.Name) }
	d.Rbrace = p.parseFields(&d.Fields, what, d.Pos, mcpFields, mcpKeys, MCPFields)
	return d
}

// parseFields parses the fields of a node or an action up to its "}".
func (p *parser) parseFields(fields *[]*Field, what func() string, open flow.Pos, specs map[string]fieldSpec, keys map[string]bool, names []string) flow.Pos {
	seen := map[string]*Field{}
	c := &blockCtx{what: what, open: open, keys: keys}
	rbrace := p.parseBlock(c, func() {
		if !p.is(tIdent) {
			p.errorf(p.tok.pos, CodeSyntax, "expected field name in %s, found %s", what(), p.tok.describe())
			p.skipItem()
			return
		}
		name := &Ident{Pos: p.tok.pos, Name: p.tok.lit}
		spec, ok := specs[name.Name]
		if !ok {
			p.errorf(name.Pos, CodeUnknownField, "unknown field %q in %s%s", name.Name, what(), suggestOrList(name.Name, names))
			p.skipItem()
			return
		}
		if prev := seen[name.Name]; prev != nil {
			p.errorf(name.Pos, CodeDuplicate, "duplicate field %q in %s (first at %s)", name.Name, what(), short(prev.Pos))
		}
		p.next()
		f := &Field{Pos: name.Pos, Name: name}
		seen[name.Name] = f
		*fields = append(*fields, f)
		switch spec.kind {
		case fkEntries, fkAssigns, fkDecls:
			p.optColon()
			lb, ok := p.openBrace(name.Name)
			if !ok {
				break
			}
			b := &Block{Lbrace: lb}
			bc := &blockCtx{what: func() string { return fmt.Sprintf("field %s of %s", name.Name, what()) }, open: name.Pos}
			switch spec.kind {
			case fkEntries:
				if spec.keys != nil {
					bc.keys, bc.names = retryKeySet, spec.keys
				}
				b.Entries = p.parseEntries(bc, false)
				b.Rbrace = p.prevBrace
			case fkAssigns:
				b.Entries = p.parseEntries(bc, true)
				b.Rbrace = p.prevBrace
			case fkDecls:
				b.Rbrace = p.parseBlock(bc, func() {
					if v := p.parseTypeOnly(); v != nil {
						b.Decls = append(b.Decls, v)
					}
				})
			}
			f.Block = b
		default:
			if !p.got(tColon) {
				p.errorf(p.tok.pos, CodeSyntax, "expected \":\" after field %q, found %s", name.Name, p.tok.describe())
				p.skipItem()
				break
			}
			f.Value = p.parseFieldValue(name.Name, spec, what)
		}
		f.End = p.prevEnd
	})
	return rbrace
}

// parseFieldValue parses the value of a scalar field and checks its shape.
func (p *parser) parseFieldValue(name string, spec fieldSpec, what func() string) Expr {
	switch spec.kind {
	case fkIdent:
		if !p.is(tIdent) {
			p.errorf(p.tok.pos, CodeSyntax, "expected identifier for field %q, found %s", name, p.tok.describe())
			p.skipItem()
			return nil
		}
		id := p.parseIdent("")
		if spec.values != nil {
			ok := false
			for _, v := range spec.values {
				if strings.EqualFold(v, id.Name) {
					ok = true
				}
			}
			if !ok {
				p.errorf(id.Pos, CodeUnknownValue, "unknown %s %q in %s%s", name, id.Name, what(), suggestOrList(id.Name, spec.values))
			}
		}
		return id
	case fkString:
		x := p.parseExpr()
		if _, ok := x.(*StringLit); !ok {
			if _, bad := x.(*BadExpr); !bad {
				p.errorf(x.Start(), CodeSyntax, "field %q of %s wants a string literal, found %s", name, what(), ExprString(x))
			}
		}
		return x
	}
	return p.parseExpr()
}

// parseEntries parses `name: expr` (or, when assign, `name = expr`) entries
// of a block whose "{" has been consumed, up to its "}", whose position it
// leaves in p.prevBrace.
func (p *parser) parseEntries(c *blockCtx, assign bool) []*Assign {
	var list []*Assign
	p.prevBrace = p.parseBlock(c, func() {
		if a := p.parseAssign(c, assign); a != nil {
			list = append(list, a)
		}
	})
	return list
}

func (p *parser) parseAssign(c *blockCtx, assign bool) *Assign {
	name := p.parseIdent("name")
	if name == nil {
		p.skipItem()
		return nil
	}
	if c.keys != nil && !c.keys[name.Name] {
		p.errorf(name.Pos, CodeUnknownField, "unknown setting %q in %s%s", name.Name, c.what(), suggestOrList(name.Name, c.names))
		p.skipItem()
		return nil
	}
	a := &Assign{Pos: name.Pos, Name: name}
	op, other := tColon, tAssign
	if assign {
		op, other = tAssign, tColon
	}
	switch {
	case p.is(op):
		p.next()
	case p.is(other):
		if assign {
			p.errorf(p.tok.pos, CodeSyntax, "expected \"=\" after %q, found \":\" (assignments are written name = expr)", name.Name)
		} else {
			p.errorf(p.tok.pos, CodeSyntax, "expected \":\" after %q, found \"=\" (entries are written name: expr)", name.Name)
		}
		p.next()
	default:
		p.errorf(p.tok.pos, CodeSyntax, "expected %q after %q, found %s", tokenText[op], name.Name, p.tok.describe())
		p.skipItem()
		return nil
	}
	a.Value = p.parseExpr()
	a.End = p.prevEnd
	return a
}

func (p *parser) parseEdge(d *WorkflowDecl) {
	e := &EdgeDecl{Pos: p.tok.pos}
	d.Edges = append(d.Edges, e)
	p.next()
	var ok bool
	if e.Lbrace, ok = p.openBrace("edge"); !ok {
		return
	}
	c := &blockCtx{what: func() string { return "edge" }, open: e.Pos, keys: edgeKeys}
	seen := map[string]*Clause{}
	desc := func() string {
		if e.From != nil {
			return fmt.Sprintf("edge from %q", e.From.Name)
		}
		return "edge"
	}
	e.Rbrace = p.parseBlock(c, func() {
		if !p.is(tIdent) {
			p.errorf(p.tok.pos, CodeSyntax, "expected edge field, found %s", p.tok.describe())
			p.skipItem()
			return
		}
		name, pos := p.tok.lit, p.tok.pos
		if !c.keys[name] {
			p.errorf(pos, CodeUnknownField, "unknown field %q in %s%s", name, desc(), suggestOrList(name, edgeFieldNames))
			p.skipItem()
			return
		}
		cl := &Clause{Name: name, Pos: pos}
		if prev := seen[name]; prev != nil {
			p.errorf(pos, CodeDuplicate, "duplicate field %q in %s (first at %s)", name, desc(), short(prev.Pos))
		} else {
			seen[name] = cl
		}
		e.Clauses = append(e.Clauses, cl)
		p.next()
		switch name {
		case "update", "override":
			p.optColon()
			lb, ok := p.openBrace(name)
			if !ok {
				break
			}
			cl.Lbrace = lb
			bc := &blockCtx{what: func() string { return fmt.Sprintf("%s of %s", name, desc()) }, open: pos}
			list := p.parseEntries(bc, name == "update")
			cl.Rbrace = p.prevBrace
			if name == "update" {
				e.Update = append(e.Update, list...)
			} else {
				e.Override = append(e.Override, list...)
			}
		default:
			if !p.got(tColon) {
				p.errorf(p.tok.pos, CodeSyntax, "expected \":\" after %q, found %s", name, p.tok.describe())
				p.skipItem()
				break
			}
			switch name {
			case "from":
				e.From = p.parseIdent("node name")
			case "to":
				e.To = p.parseIdentList("node name")
			case "join":
				e.Join = p.parseIdent("join node name")
			case "on":
				e.On = p.parseIdent("edge trigger (error)")
				if e.On != nil && e.On.Name != "error" {
					p.errorf(e.On.Pos, CodeUnknownValue, "unknown edge trigger %q%s", e.On.Name, suggestOrList(e.On.Name, edgeTriggers))
				}
			case "condition":
				e.Condition = p.parseExpr()
			}
		}
		cl.End = p.prevEnd
	})
	if e.From == nil && seen["from"] == nil {
		p.errorf(e.Pos, CodeMissing, "edge has no \"from\" field")
	} else if len(e.To) == 0 && seen["to"] == nil {
		p.errorf(e.Pos, CodeMissing, "edge has no \"to\" field")
	}
}

// Expressions.

func binaryOp(t token) (string, int) {
	switch t.kind {
	case tOr:
		return "||", 1
	case tAnd:
		return "&&", 2
	case tEq, tNeq:
		return tokenText[t.kind], 3
	case tLt, tLe, tGt, tGe:
		return tokenText[t.kind], 4
	case tIdent:
		if t.lit == "in" {
			return "in", 4
		}
	case tAdd, tSub:
		return tokenText[t.kind], 5
	case tMul, tDiv, tRem:
		return tokenText[t.kind], 6
	}
	return "", 0
}

func (p *parser) parseExpr() Expr {
	start := p.tok.pos
	x := p.parseBinary(1)
	if p.nest == 0 {
		// A whole expression: lists, calls and the like nest too.
		p.checkDepth(x, start)
		p.depths = nil
	}
	return x
}

// checkDepth stops the parse when e is nested more than maxNest levels
// deep. Every later pass (compile, print, evaluate) recurses on the
// expression tree, so its depth, not only the parser's own recursion,
// must be bounded: a chain a + a + ... is parsed by a loop but is one
// level deeper per operator.
func (p *parser) checkDepth(e Expr, at flow.Pos) int {
	d := p.depth(e)
	if d > maxNest {
		p.errorf(at, CodeSyntax, "expression nested too deeply: more than %d levels (each operator of a chain such as a + b + c counts one)", maxNest)
		panic(bailout{})
	}
	return d
}

// depth returns the depth of the tree e, remembering that of every
// compound node so that checking a growing chain costs O(1) per link.
func (p *parser) depth(e Expr) int {
	var kids []Expr
	switch e := e.(type) {
	case *UnaryExpr:
		kids = []Expr{e.X}
	case *BinaryExpr:
		kids = []Expr{e.X, e.Y}
	case *MemberExpr:
		kids = []Expr{e.X}
	case *IndexExpr:
		kids = []Expr{e.X, e.Index}
	case *CallExpr:
		kids = append([]Expr{e.Fun}, e.Args...)
	case *ListLit:
		kids = e.Elems
	case *ObjectLit:
		for _, f := range e.Fields {
			kids = append(kids, f.Value)
		}
	default:
		return 1
	}
	if d, ok := p.depths[e]; ok {
		return d
	}
	d := 0
	for _, k := range kids {
		if k != nil {
			d = max(d, p.depth(k))
		}
	}
	d++
	if p.depths == nil {
		p.depths = map[Expr]int{}
	}
	p.depths[e] = d
	return d
}

func (p *parser) parseBinary(minPrec int) Expr {
	start := p.tok.pos
	x := p.parseUnary()
	for {
		op, prec := binaryOp(p.tok)
		if prec < minPrec {
			return x
		}
		pos := p.tok.pos
		p.next()
		p.skipNewlines()
		y := p.parseBinary(prec + 1)
		x = &BinaryExpr{Pos: pos, Op: op, X: x, Y: y}
		p.checkDepth(x, start)
	}
}

func (p *parser) enter() {
	p.nest++
	if p.nest > maxNest {
		p.errorf(p.tok.pos, CodeSyntax, "expression nested too deeply")
		panic(bailout{})
	}
}

func (p *parser) parseUnary() Expr {
	p.enter()
	defer func() { p.nest-- }()
	switch p.tok.kind {
	case tNot, tSub:
		pos, op := p.tok.pos, tokenText[p.tok.kind]
		p.next()
		return &UnaryExpr{Pos: pos, Op: op, X: p.parseUnary()}
	}
	return p.parsePostfix(p.parsePrimary())
}

func (p *parser) parsePostfix(x Expr) Expr {
	start := x.Start()
	for {
		switch p.tok.kind {
		case tDot:
			pos := p.tok.pos
			p.next()
			sel := p.parseIdent("field name after \".\"")
			if sel == nil {
				return &BadExpr{Pos: pos}
			}
			x = &MemberExpr{Pos: pos, X: x, Sel: sel}
		case tLbrack:
			pos := p.tok.pos
			p.exprDepth++
			p.next()
			idx := p.parseExpr()
			rb := p.closeBracket(tRbrack, "index", pos)
			x = &IndexExpr{Pos: pos, X: x, Index: idx, Rbrack: rb}
		case tLparen:
			pos := p.tok.pos
			p.exprDepth++
			p.next()
			var args []Expr
			for !p.is(tRparen) && !p.is(tEOF) {
				a := p.parseExpr()
				args = append(args, a)
				if _, bad := a.(*BadExpr); bad || !p.is(tComma) {
					break
				}
				p.next()
			}
			rp := p.closeBracket(tRparen, "call", pos)
			x = &CallExpr{Pos: pos, Fun: x, Args: args, Rparen: rp}
		default:
			return x
		}
		p.checkDepth(x, start)
	}
}

func (p *parser) parsePrimary() Expr {
	t := p.tok
	switch t.kind {
	case tIdent:
		switch t.lit {
		case "true", "false":
			p.next()
			return &BoolLit{Pos: t.pos, Value: t.lit == "true"}
		case "null":
			p.next()
			return &NullLit{Pos: t.pos}
		case "in":
			p.errorf(t.pos, CodeSyntax, "expected expression, found \"in\"")
			return &BadExpr{Pos: t.pos}
		}
		p.next()
		return &Ident{Pos: t.pos, Name: t.lit}
	case tInt:
		p.next()
		v, err := strconv.ParseInt(t.lit, 10, 64)
		if err != nil {
			p.errorf(t.pos, CodeSyntax, "integer %s out of range", t.lit)
		}
		return &IntLit{Pos: t.pos, Raw: t.lit, Value: v}
	case tFloat:
		p.next()
		v, err := strconv.ParseFloat(t.lit, 64)
		if err != nil {
			p.errorf(t.pos, CodeSyntax, "number %s out of range", t.lit)
			v = 0
		}
		return &FloatLit{Pos: t.pos, Raw: t.lit, Value: v}
	case tDuration:
		p.next()
		v, _ := time.ParseDuration(t.lit) // a bad duration was reported by the scanner
		return &DurationLit{Pos: t.pos, Raw: t.lit, Value: v}
	case tString:
		return p.stringLit()
	case tLparen:
		p.exprDepth++
		p.next()
		x := p.parseExpr()
		p.closeBracket(tRparen, "parenthesis", t.pos)
		return x
	case tLbrack:
		l := &ListLit{Pos: t.pos}
		p.exprDepth++
		p.next()
		for !p.is(tRbrack) && !p.is(tEOF) {
			e := p.parseExpr()
			l.Elems = append(l.Elems, e)
			if _, bad := e.(*BadExpr); bad || !p.is(tComma) {
				break
			}
			p.next()
		}
		l.Rbrack = p.closeBracket(tRbrack, "list", t.pos)
		return l
	case tLbrace:
		o := &ObjectLit{Pos: t.pos}
		p.exprDepth++
		p.next()
		for !p.is(tRbrace) && !p.is(tEOF) {
			var f *ObjectField
			switch p.tok.kind {
			case tIdent:
				f = &ObjectField{Pos: p.tok.pos, Key: p.tok.lit}
			case tString:
				f = &ObjectField{Pos: p.tok.pos, Key: p.tok.val}
			default:
				p.errorf(p.tok.pos, CodeSyntax, "expected object key, found %s", p.tok.describe())
			}
			if f == nil {
				break
			}
			p.next()
			if !p.got(tColon) {
				p.errorf(p.tok.pos, CodeSyntax, "expected \":\" after object key %q, found %s", f.Key, p.tok.describe())
				break
			}
			f.Value = p.parseExpr()
			o.Fields = append(o.Fields, f)
			if _, bad := f.Value.(*BadExpr); bad || !(p.is(tComma) || p.is(tSemi)) {
				break
			}
			p.next()
		}
		o.Rbrace = p.closeBracket(tRbrace, "object", t.pos)
		return o
	}
	p.errorf(t.pos, CodeSyntax, "expected expression, found %s", t.describe())
	return &BadExpr{Pos: t.pos}
}

// parseItems parses the block of a section whose items all start with one
// keyword ("nodes" holds "node" items, "edges" holds "edge" items), and
// returns the position of its closing brace.
func (p *parser) parseItems(section, keyword string, open flow.Pos, keys map[string]bool, item func()) flow.Pos {
	bc := &blockCtx{what: func() string { return fmt.Sprintf("section %q", section) }, open: open, keys: keys}
	return p.parseBlock(bc, func() {
		if !p.isKeyword(keyword) {
			msg := fmt.Sprintf("expected %q in section %q, found %s", keyword, section, p.tok.describe())
			if p.is(tIdent) {
				msg += suggest(p.tok.lit, []string{keyword})
			}
			p.report(p.tok.pos, CodeSyntax, msg)
			p.skipItem()
			return
		}
		item()
	})
}
