package lang

import (
	"time"

	"github.com/weftlang/weft/flow"
)

// File is a parsed .wf source file.
type File struct {
	Name     string     // file name as given to ParseFile
	Decls    []Decl     // *ImportDecl, *WorkflowDecl, *ActionDecl and *MCPDecl, in source order
	Comments []*Comment // every comment of the file, in source order
}

// Comment is one line comment. Text holds the comment as written, with its
// marker ("//", "#" or ";") and without the line end or trailing blanks.
type Comment struct {
	Pos  flow.Pos
	Text string
}

// Decl is a top-level declaration: *ImportDecl, *WorkflowDecl, *ActionDecl
// or *MCPDecl.
type Decl interface {
	// Start returns the position of the declaration's keyword.
	Start() flow.Pos
	declNode()
}

// ImportDecl is `import "path"`.
type ImportDecl struct {
	Pos  flow.Pos // "import"
	Path *StringLit
}

// WorkflowDecl is `workflow Name { ... }`. The typed fields hold the
// contents of every section; Clauses records which sections and fields were
// written, in source order, so that an empty `parameters { }` survives
// formatting.
type WorkflowDecl struct {
	Pos         flow.Pos // "workflow"
	Name        *Ident
	Description Expr
	Model       Expr // the default model of the workflow's LLM actions, e.g. "ollama:llama3.1"
	// ContextTokens is the default context window of the workflow's LLM
	// actions, in tokens (Ollama's num_ctx).
	ContextTokens Expr
	Parameters    []*VarDecl
	Variables     []*VarDecl
	Slots         []*VarDecl
	Nodes         []*NodeDecl
	Edges         []*EdgeDecl
	Initial       *Ident
	Finals        []*Ident
	Limits        *Limits
	Clauses       []*Clause // sections and fields as written, in source order
	Lbrace        flow.Pos
	Rbrace        flow.Pos
}

// Clause records where a section of a workflow or a field of an edge was
// written. Lbrace and Rbrace are set for braced sections and fields; End is
// the position just past the clause's last token.
type Clause struct {
	Name   string // keyword as written: "parameters", "nodes", "condition", ...
	Pos    flow.Pos
	Lbrace flow.Pos
	Rbrace flow.Pos
	End    flow.Pos
}

// VarDecl declares a parameter, a variable, a slot or a node output:
// `name: Type [= default] [reduce reducer]`.
type VarDecl struct {
	Pos     flow.Pos // the name
	Name    *Ident
	Type    TypeExpr
	Default Expr   // nil when absent
	Reducer *Ident // nil when absent (replace); e.g. append, sum, max, min, merge
	End     flow.Pos
}

// NodeDecl is `node name { fields }`. Fields are kept in source order; see
// NodeFields for the accepted names.
type NodeDecl struct {
	Pos    flow.Pos // "node"
	Name   *Ident
	Fields []*Field
	Lbrace flow.Pos
	Rbrace flow.Pos
}

// Field returns the last field called name, or nil.
func (n *NodeDecl) Field(name string) *Field { return lookupField(n.Fields, name) }

// ActionDecl is `action name { fields }`: it binds the action name used by
// nodes (`action: "name"`) to an implementation described by its fields
// (see ActionFields). The name may be written as an identifier or a string.
type ActionDecl struct {
	Pos    flow.Pos // "action"
	Name   *Ident
	Fields []*Field
	Lbrace flow.Pos
	Rbrace flow.Pos
}

// Field returns the last field called name, or nil.
func (a *ActionDecl) Field(name string) *Field { return lookupField(a.Fields, name) }

// MCPDecl is `mcp name { fields }`: an MCP server whose tools the
// workflows call as name__tool (see MCPFields for the fields, the config
// of the tool.mcp component).
type MCPDecl struct {
	Pos    flow.Pos // "mcp"
	Name   *Ident
	Fields []*Field
	Lbrace flow.Pos
	Rbrace flow.Pos
}

// Field returns the last field called name, or nil.
func (d *MCPDecl) Field(name string) *Field { return lookupField(d.Fields, name) }

func lookupField(fs []*Field, name string) *Field {
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].Name != nil && fs[i].Name.Name == name {
			return fs[i]
		}
	}
	return nil
}

// Field is one field of a node or an action. Scalar fields (type, action,
// prompt, timeout, ...) have a Value; block fields (inputs, outputs, retry,
// set) have a Block.
type Field struct {
	Pos   flow.Pos // the field name
	Name  *Ident
	Value Expr   // scalar fields; an *Ident for type, mode, workflow and as
	Block *Block // block fields
	End   flow.Pos
}

// Block is the braced value of a block field. Entries holds `name: expr`
// entries (inputs, retry, limits) or `name = expr` assignments (set);
// Decls holds `name: Type` declarations (outputs).
type Block struct {
	Lbrace  flow.Pos
	Rbrace  flow.Pos
	Entries []*Assign
	Decls   []*VarDecl
}

// Entry returns the last entry called name, or nil.
func (b *Block) Entry(name string) *Assign {
	if b == nil {
		return nil
	}
	for i := len(b.Entries) - 1; i >= 0; i-- {
		if b.Entries[i].Name.Name == name {
			return b.Entries[i]
		}
	}
	return nil
}

// Assign is `name = expr` (an update or a set) or `name: expr` (an
// override, an input, a retry or limits setting).
type Assign struct {
	Pos   flow.Pos // the name
	Name  *Ident
	Value Expr
	End   flow.Pos
}

// EdgeDecl is `edge { from: a; to: b ... }`. To has one node, or several
// for a parallel fan-out written `to: [a, b]`. Clauses records the fields
// as written, in source order.
type EdgeDecl struct {
	Pos       flow.Pos // "edge"
	From      *Ident
	To        []*Ident
	Join      *Ident
	Condition Expr
	Update    []*Assign // `update: { x = expr; ... }`
	Override  []*Assign // `override: { slot: expr; ... }`
	On        *Ident    // `on: error` makes an error edge
	Clauses   []*Clause
	Lbrace    flow.Pos
	Rbrace    flow.Pos
}

// Limits is the workflow's `limits { max_steps: 100; max_time: 30s }`.
type Limits struct {
	Pos     flow.Pos // "limits"
	Entries []*Assign
	Lbrace  flow.Pos
	Rbrace  flow.Pos
}

// MaxSteps returns the max_steps value, or nil.
func (l *Limits) MaxSteps() Expr { return l.value("max_steps") }

// MaxTime returns the max_time value, or nil.
func (l *Limits) MaxTime() Expr { return l.value("max_time") }

func (l *Limits) value(name string) Expr {
	if l == nil {
		return nil
	}
	for i := len(l.Entries) - 1; i >= 0; i-- {
		if l.Entries[i].Name.Name == name {
			return l.Entries[i].Value
		}
	}
	return nil
}

// Start returns the position of "import".
func (d *ImportDecl) Start() flow.Pos { return d.Pos }

// Start returns the position of "workflow".
func (d *WorkflowDecl) Start() flow.Pos { return d.Pos }

// Start returns the position of "action".
func (d *ActionDecl) Start() flow.Pos { return d.Pos }

// Start returns the position of "mcp".
func (d *MCPDecl) Start() flow.Pos { return d.Pos }

func (*ImportDecl) declNode()   {}
func (*MCPDecl) declNode()      {}
func (*WorkflowDecl) declNode() {}
func (*ActionDecl) declNode()   {}

// TypeExpr is a type: *NamedType, *EnumType or *ListType.
type TypeExpr interface {
	// Start returns the position of the type's first token.
	Start() flow.Pos
	typeNode()
}

// NamedType is a built-in type name: String, Int, Float, Bool, Object,
// JSON, Any or Duration.
type NamedType struct {
	Pos  flow.Pos
	Name string
}

// EnumType is `Enum["a","b"]`.
type EnumType struct {
	Pos    flow.Pos // "Enum"
	Values []*StringLit
	Rbrack flow.Pos
}

// ListType is `List[T]`.
type ListType struct {
	Pos    flow.Pos // "List"
	Elem   TypeExpr
	Rbrack flow.Pos
}

// Start returns the type name's position.
func (t *NamedType) Start() flow.Pos { return t.Pos }

// Start returns the position of "Enum".
func (t *EnumType) Start() flow.Pos { return t.Pos }

// Start returns the position of "List".
func (t *ListType) Start() flow.Pos { return t.Pos }

func (*NamedType) typeNode() {}
func (*EnumType) typeNode()  {}
func (*ListType) typeNode()  {}

// builtinTypes lists the named types of the language.
var builtinTypes = []string{"String", "Int", "Float", "Bool", "Object", "JSON", "Any", "Duration"}

// Expr is an expression. Every expression has a Pos field: the position of
// its operator for unary, binary, member ("."), index ("[") and call ("(")
// expressions, and of its first token otherwise. Start returns the position
// of the first token and End the position just past the last one.
type Expr interface {
	Start() flow.Pos
	End() flow.Pos
	exprNode()
}

// Ident is a name.
type Ident struct {
	Pos  flow.Pos
	Name string
}

// IntLit is an integer literal.
type IntLit struct {
	Pos   flow.Pos
	Raw   string // as written
	Value int64
}

// FloatLit is a floating-point literal.
type FloatLit struct {
	Pos   flow.Pos
	Raw   string
	Value float64
}

// StringLit is a "..." or """...""" literal. Value is the decoded text; Raw
// the literal as written, delimiters included.
type StringLit struct {
	Pos    flow.Pos
	Raw    string
	Value  string
	EndPos flow.Pos
}

// BoolLit is true or false.
type BoolLit struct {
	Pos   flow.Pos
	Value bool
}

// NullLit is null.
type NullLit struct {
	Pos flow.Pos
}

// DurationLit is a duration such as 200ms or 1m30s.
type DurationLit struct {
	Pos   flow.Pos
	Raw   string
	Value time.Duration
}

// ListLit is `[a, b, ...]`.
type ListLit struct {
	Pos    flow.Pos // "["
	Elems  []Expr
	Rbrack flow.Pos
}

// ObjectLit is `{key: value, "other key": value}`.
type ObjectLit struct {
	Pos    flow.Pos // "{"
	Fields []*ObjectField
	Rbrace flow.Pos
}

// ObjectField is one `key: value` of an ObjectLit; the key may have been
// written as an identifier or a string.
type ObjectField struct {
	Pos   flow.Pos // the key
	Key   string
	Value Expr
}

// UnaryExpr is `!x` or `-x`.
type UnaryExpr struct {
	Pos flow.Pos // operator
	Op  string
	X   Expr
}

// BinaryExpr is `x op y`; Op is one of || && == != < <= > >= in + - * / %.
type BinaryExpr struct {
	Pos flow.Pos // operator
	Op  string
	X   Expr
	Y   Expr
}

// MemberExpr is `x.name`.
type MemberExpr struct {
	Pos flow.Pos // "."
	X   Expr
	Sel *Ident
}

// IndexExpr is `x[index]`.
type IndexExpr struct {
	Pos    flow.Pos // "["
	X      Expr
	Index  Expr
	Rbrack flow.Pos
}

// CallExpr is `fun(args)`.
type CallExpr struct {
	Pos    flow.Pos // "("
	Fun    Expr
	Args   []Expr
	Rparen flow.Pos
}

// BadExpr stands for an expression that failed to parse.
type BadExpr struct {
	Pos flow.Pos
}

func (*Ident) exprNode()       {}
func (*IntLit) exprNode()      {}
func (*FloatLit) exprNode()    {}
func (*StringLit) exprNode()   {}
func (*BoolLit) exprNode()     {}
func (*NullLit) exprNode()     {}
func (*DurationLit) exprNode() {}
func (*ListLit) exprNode()     {}
func (*ObjectLit) exprNode()   {}
func (*UnaryExpr) exprNode()   {}
func (*BinaryExpr) exprNode()  {}
func (*MemberExpr) exprNode()  {}
func (*IndexExpr) exprNode()   {}
func (*CallExpr) exprNode()    {}
func (*BadExpr) exprNode()     {}

// Start returns the position of the first token.
func (e *Ident) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *IntLit) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *FloatLit) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *StringLit) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *BoolLit) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *NullLit) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *DurationLit) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *ListLit) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *ObjectLit) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *UnaryExpr) Start() flow.Pos { return e.Pos }

// Start returns the position of the first token.
func (e *BinaryExpr) Start() flow.Pos { return e.X.Start() }

// Start returns the position of the first token.
func (e *MemberExpr) Start() flow.Pos { return e.X.Start() }

// Start returns the position of the first token.
func (e *IndexExpr) Start() flow.Pos { return e.X.Start() }

// Start returns the position of the first token.
func (e *CallExpr) Start() flow.Pos { return e.Fun.Start() }

// Start returns the position of the first token.
func (e *BadExpr) Start() flow.Pos { return e.Pos }

func after(p flow.Pos, n int) flow.Pos {
	if !p.IsValid() {
		return p
	}
	p.Col += n
	return p
}

// End returns the position just past the last token.
func (e *Ident) End() flow.Pos { return after(e.Pos, len(e.Name)) }

// End returns the position just past the last token.
func (e *IntLit) End() flow.Pos { return after(e.Pos, len(e.Raw)) }

// End returns the position just past the last token.
func (e *FloatLit) End() flow.Pos { return after(e.Pos, len(e.Raw)) }

// End returns the position just past the last token.
func (e *StringLit) End() flow.Pos {
	if e.EndPos.IsValid() {
		return e.EndPos
	}
	return after(e.Pos, len(e.Raw))
}

// End returns the position just past the last token.
func (e *BoolLit) End() flow.Pos {
	if e.Value {
		return after(e.Pos, 4)
	}
	return after(e.Pos, 5)
}

// End returns the position just past the last token.
func (e *NullLit) End() flow.Pos { return after(e.Pos, 4) }

// End returns the position just past the last token.
func (e *DurationLit) End() flow.Pos { return after(e.Pos, len(e.Raw)) }

// End returns the position just past the last token.
func (e *ListLit) End() flow.Pos { return after(e.Rbrack, 1) }

// End returns the position just past the last token.
func (e *ObjectLit) End() flow.Pos { return after(e.Rbrace, 1) }

// End returns the position just past the last token.
func (e *UnaryExpr) End() flow.Pos { return e.X.End() }

// End returns the position just past the last token.
func (e *BinaryExpr) End() flow.Pos { return e.Y.End() }

// End returns the position just past the last token.
func (e *MemberExpr) End() flow.Pos { return e.Sel.End() }

// End returns the position just past the last token.
func (e *IndexExpr) End() flow.Pos { return after(e.Rbrack, 1) }

// End returns the position just past the last token.
func (e *CallExpr) End() flow.Pos { return after(e.Rparen, 1) }

// End returns the position just past the last token.
func (e *BadExpr) End() flow.Pos { return e.Pos }
