package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weftlang/weft/flow"
)

// Module is a loaded .wf program: a root file, the files it imports, and
// the workflows and action bindings they declare, compiled to the IR.
type Module struct {
	Files     []*File          // root first, then imports in load order
	Workflows []*flow.Workflow // every workflow, in load order
	Bindings  []*flow.Binding  // every action binding
	// MCPServers are the MCP servers the files declare, in load order.
	MCPServers []*flow.MCPServer
	Sources    map[string][]byte // file name -> source, for diagnostics
	byName     map[string]*flow.Workflow
}

// NewModule returns a Module holding workflows another front-end produced
// (an ollama-workflows document, say) from the file called file, so that
// tools that take a Module treat every front-end alike. Its Files is empty.
func NewModule(file string, src []byte, ws ...*flow.Workflow) *Module {
	m := &Module{Workflows: ws, Sources: map[string][]byte{file: src}, byName: map[string]*flow.Workflow{}}
	for _, w := range ws {
		m.byName[w.Name] = w
		m.Bindings = append(m.Bindings, w.Bindings...)
	}
	return m
}

// Main returns the workflow a run starts with: the first workflow of the
// root file (or of the first file that declares one).
func (m *Module) Main() *flow.Workflow {
	if len(m.Workflows) == 0 {
		return nil
	}
	return m.Workflows[0]
}

// Workflow returns the workflow called name, or nil.
func (m *Module) Workflow(name string) *flow.Workflow { return m.byName[name] }

// Source returns the text of a loaded file (nil if unknown); it fits
// FormatDiagnostics.
func (m *Module) Source(file string) []byte { return m.Sources[file] }

// ReadFileFunc reads an imported file. Load uses ImportReader.
type ReadFileFunc func(name string) ([]byte, error)

// Load reads the .wf file at path and the files it imports (paths relative
// to the importing file), and compiles them. The Module is returned even
// when there are errors, with whatever could be compiled and the sources
// for printing the diagnostics.
//
// Imports are confined: an import names a .wf file by a relative path that
// stays inside the directory of the root file (for every loader), and the
// reader of Load, ImportReader, also refuses symbolic links that lead out
// of it, special files and files over MaxImportSize.
func Load(path string) (*Module, flow.Diagnostics) {
	imports := ImportReader(filepath.Dir(path))
	return LoadFunc(path, func(name string) ([]byte, error) {
		if name == path {
			// The root file: regular and not too large, but it may be
			// a link to anywhere.
			return ReadImport(name)
		}
		return imports(name)
	})
}

// LoadSource compiles src as the root file called name; imports are read
// with read (nil forbids imports).
func LoadSource(name string, src []byte, read ReadFileFunc) (*Module, flow.Diagnostics) {
	if read == nil {
		read = func(string) ([]byte, error) { return nil, fmt.Errorf("imports are not available here") }
	}
	return load(name, src, true, read)
}

// LoadFunc is Load with a custom file reader.
func LoadFunc(path string, read ReadFileFunc) (*Module, flow.Diagnostics) {
	return load(path, nil, false, read)
}

func load(root string, rootSrc []byte, haveSrc bool, read ReadFileFunc) (*Module, flow.Diagnostics) {
	m := &Module{Sources: map[string][]byte{}, byName: map[string]*flow.Workflow{}}
	var diags flow.Diagnostics
	seen := map[string]bool{}
	rootDir := filepath.Dir(root)
	broken := map[string]bool{} // imported files with syntax errors
	var visit func(name string, src []byte, from flow.Pos)
	visit = func(name string, src []byte, from flow.Pos) {
		clean := filepath.Clean(name)
		if seen[clean] {
			return
		}
		seen[clean] = true
		if src == nil {
			b, err := read(name)
			if err != nil {
				diags = append(diags, flow.Diagnostic{Pos: from, Code: "import", Msg: fmt.Sprintf("cannot read %s: %v", name, unwrapPathErr(err))})
				return
			}
			src = b
		}
		m.Sources[name] = src
		f, ds := ParseFile(name, src)
		if len(m.Files) > 0 && ds.HasErrors() {
			broken[name] = true
		}
		diags = append(diags, ds...)
		m.Files = append(m.Files, f)
		for _, d := range f.Decls {
			if imp, ok := d.(*ImportDecl); ok && imp.Path != nil {
				p := imp.Path.Value
				target := filepath.Join(filepath.Dir(name), p)
				if why := checkImportPath(p, target, rootDir); why != "" {
					diags = append(diags, flow.Diagnostic{Pos: imp.Pos, Code: "import", Msg: fmt.Sprintf("import %s: %s", clipQuote(p), why)})
					continue
				}
				visit(target, nil, imp.Pos)
			}
		}
	}
	if haveSrc {
		if rootSrc == nil {
			rootSrc = []byte{}
		}
		visit(root, rootSrc, flow.Pos{})
	} else {
		visit(root, nil, flow.Pos{File: root})
	}
	c := &compiler{m: m}
	c.compile()
	diags = append(diags, c.diags...)
	diags.Sort()
	return m, quoteBrokenOnce(diags, broken)
}

// quoteBrokenOnce keeps, of the diagnostics in each imported file that did
// not parse, only the first, saying how many more there were: whatever was
// imported by mistake is quoted one line at most.
func quoteBrokenOnce(ds flow.Diagnostics, broken map[string]bool) flow.Diagnostics {
	if len(broken) == 0 {
		return ds
	}
	count := map[string]int{}
	for _, d := range ds {
		if broken[d.Pos.File] {
			count[d.Pos.File]++
		}
	}
	out := ds[:0]
	kept := map[string]bool{}
	for _, d := range ds {
		f := d.Pos.File
		if broken[f] {
			if kept[f] {
				continue
			}
			kept[f] = true
			if n := count[f] - 1; n > 0 {
				d.Msg += fmt.Sprintf(" (%d more diagnostics in %s not shown)", n, f)
			}
		}
		out = append(out, d)
	}
	return out
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Compile compiles one parsed file (imports are not followed) into a
// Module.
func Compile(f *File) (*Module, flow.Diagnostics) {
	m := &Module{Files: []*File{f}, Sources: map[string][]byte{}, byName: map[string]*flow.Workflow{}}
	c := &compiler{m: m}
	c.compile()
	c.diags.Sort()
	return m, c.diags
}

type compiler struct {
	m     *Module
	diags flow.Diagnostics
	decls map[string]*WorkflowDecl
	subs  []subRef
	// bindingRefs are the tool names the bindings write; nodeRefs those
	// of the nodes of the workflow being compiled.
	bindingRefs, nodeRefs []flow.ToolRef
}

type subRef struct {
	node *flow.Node
	name *Ident
}

func (c *compiler) errorf(at flow.Pos, format string, args ...any) {
	c.diags = append(c.diags, flow.Diagnostic{Pos: at, Severity: flow.Error, Code: "syntax", Msg: fmt.Sprintf(format, args...)})
}

func (c *compiler) compile() {
	c.decls = map[string]*WorkflowDecl{}
	for _, f := range c.m.Files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ActionDecl:
				if b := c.binding(d); b != nil {
					for _, prev := range c.m.Bindings {
						if prev.Name == b.Name {
							c.errorf(d.Pos, "action %q is already bound at %s", b.Name, prev.Pos)
						}
					}
					c.m.Bindings = append(c.m.Bindings, b)
				}
			case *MCPDecl:
				if srv := c.mcpServer(d); srv != nil {
					if prev := c.mcpByName(srv.Name); prev != nil {
						c.errorf(d.Name.Pos, "mcp server %s is already declared at %s", srv.Name, prev.Pos)
						continue
					}
					c.m.MCPServers = append(c.m.MCPServers, srv)
				}
			case *WorkflowDecl:
				if d.Name == nil {
					continue
				}
				if prev, ok := c.decls[d.Name.Name]; ok {
					c.errorf(d.Name.Pos, "workflow %s is already declared at %s", d.Name.Name, prev.Pos)
					continue
				}
				c.decls[d.Name.Name] = d
				w := c.workflow(d)
				c.m.Workflows = append(c.m.Workflows, w)
				c.m.byName[w.Name] = w
			}
		}
	}
	for _, w := range c.m.Workflows {
		w.Bindings = withModel(c.m.Bindings, w)
		w.MCPServers = c.m.MCPServers
		w.ToolRefs = append(w.ToolRefs, c.bindingRefs...)
	}
	for _, s := range c.subs {
		w := c.m.byName[s.name.Name]
		if w == nil {
			var names []string
			for n := range c.m.byName {
				names = append(names, n)
			}
			c.errorf(s.name.Pos, "node %s: unknown workflow %s%s", s.node.Name, s.name.Name, flow.Suggest(s.name.Name, names))
			continue
		}
		s.node.Subflow = w
	}
	c.checkRecursion()
}

// checkRecursion rejects workflows that contain themselves.
func (c *compiler) checkRecursion() {
	state := map[*flow.Workflow]int{} // 1 visiting, 2 done
	var visit func(w *flow.Workflow, path []string) bool
	visit = func(w *flow.Workflow, path []string) bool {
		switch state[w] {
		case 1:
			c.errorf(w.Pos, "workflow %s contains itself: %s", w.Name, strings.Join(append(path, w.Name), " -> "))
			return false
		case 2:
			return true
		}
		state[w] = 1
		for _, n := range w.Nodes {
			if n.Subflow != nil && !visit(n.Subflow, append(path, w.Name)) {
				n.Subflow = nil
				state[w] = 2
				return false
			}
		}
		state[w] = 2
		return true
	}
	for _, w := range c.m.Workflows {
		visit(w, nil)
	}
}

func (c *compiler) workflow(d *WorkflowDecl) *flow.Workflow {
	w := &flow.Workflow{Name: d.Name.Name, Pos: d.Pos}
	if d.Description != nil {
		w.Description = c.literalString(d.Description, "description")
	}
	if d.Model != nil {
		w.Model = c.literalString(d.Model, "model")
	}
	if d.ContextTokens != nil {
		w.ContextTokens = c.contextTokens(d.ContextTokens, "workflow "+w.Name)
	}
	c.nodeRefs = nil
	defer func() { w.ToolRefs = c.nodeRefs }()
	w.Params = c.vars(d.Parameters)
	w.Vars = c.vars(d.Variables)
	w.Slots = c.vars(d.Slots)
	for _, nd := range d.Nodes {
		if n := c.node(nd); n != nil {
			w.Nodes = append(w.Nodes, n)
		}
	}
	for _, ed := range d.Edges {
		w.Edges = append(w.Edges, c.edge(ed))
	}
	if d.Initial != nil {
		w.Initial, w.InitialPos = d.Initial.Name, d.Initial.Pos
	}
	for _, f := range d.Finals {
		w.Finals = append(w.Finals, f.Name)
		w.FinalsPos = append(w.FinalsPos, f.Pos)
	}
	if d.Limits != nil {
		if e := d.Limits.MaxSteps(); e != nil {
			if lit, ok := e.(*IntLit); ok && lit.Value > 0 {
				w.Limits.MaxSteps = int(lit.Value)
			} else {
				c.errorf(e.Start(), "limits: max_steps must be a positive integer")
			}
		}
		if e := d.Limits.MaxTime(); e != nil {
			w.Limits.MaxTime = c.duration(e, "limits: max_time")
		}
		for _, en := range d.Limits.Entries {
			if n := en.Name.Name; n != "max_steps" && n != "max_time" {
				c.errorf(en.Pos, "limits: unknown setting %s%s", n, flow.Suggest(n, []string{"max_steps", "max_time"}))
			}
		}
	}
	return w
}

func (c *compiler) vars(ds []*VarDecl) []*flow.Var {
	out := make([]*flow.Var, 0, len(ds))
	for _, d := range ds {
		if d.Name == nil {
			continue
		}
		v := &flow.Var{Name: d.Name.Name, Type: c.typ(d.Type), Pos: d.Pos}
		if d.Default != nil {
			v.Default = c.expr(d.Default)
		}
		if d.Reducer != nil {
			v.Reducer = flow.ParseReducer(d.Reducer.Name)
		}
		out = append(out, v)
	}
	return out
}

func (c *compiler) typ(t TypeExpr) flow.Type {
	switch t := t.(type) {
	case *NamedType:
		if ft, ok := flow.TypeByName(t.Name); ok {
			return ft
		}
		c.errorf(t.Pos, "unknown type %s%s", t.Name, flow.Suggest(t.Name, builtinTypes))
	case *EnumType:
		vals := make([]string, 0, len(t.Values))
		seen := map[string]bool{}
		for _, v := range t.Values {
			if seen[v.Value] {
				c.errorf(v.Pos, "Enum lists %q twice", v.Value)
			}
			seen[v.Value] = true
			vals = append(vals, v.Value)
		}
		if len(vals) == 0 {
			c.errorf(t.Pos, "Enum needs at least one value")
		}
		return flow.EnumOf(vals...)
	case *ListType:
		return flow.ListOf(c.typ(t.Elem))
	}
	return flow.TAny
}

// irNodeTypes maps the spellings of node types to the IR's.
var irNodeTypes = map[string]flow.NodeType{
	"FUNCTION": flow.Function, "LLM": flow.LLM, "HUMAN": flow.Human, "TOOL": flow.Tool,
	"WORKFLOW": flow.Subflow, "SUBWORKFLOW": flow.Subflow, "END": flow.End, "HTTP": flow.Tool,
}

func (c *compiler) nodeType(e Expr) flow.NodeType {
	id, ok := e.(*Ident)
	if !ok {
		c.errorf(e.Start(), "type must be one of FUNCTION, LLM, HUMAN, TOOL, WORKFLOW, END")
		return flow.Function
	}
	if t, ok := irNodeTypes[strings.ToUpper(id.Name)]; ok {
		return t
	}
	c.errorf(id.Pos, "unknown node type %s%s", id.Name, flow.Suggest(strings.ToUpper(id.Name), []string{"FUNCTION", "LLM", "HUMAN", "TOOL", "WORKFLOW", "END"}))
	return flow.Function
}

// configFields are node and action fields that configure the
// implementation; they must be literals.
var configFields = map[string]bool{
	"prompt": true, "system": true, "model": true, "temperature": true, "mode": true,
	"url": true, "method": true, "tool": true, "tools": true, "max_tokens": true, "headers": true, "body": true,
	"fallback": true, "context_tokens": true,
}

func (c *compiler) node(d *NodeDecl) *flow.Node {
	if d.Name == nil {
		return nil
	}
	n := &flow.Node{Name: d.Name.Name, Pos: d.Pos}
	typed := false
	for _, f := range d.Fields {
		name := f.Name.Name
		switch {
		case name == "type" && f.Value != nil:
			n.Type = c.nodeType(f.Value)
			typed = true
		case name == "action" && f.Value != nil:
			n.Action = c.literalString(f.Value, "action")
		case name == "description" && f.Value != nil:
			n.Description = c.literalString(f.Value, "description")
		case name == "inputs":
			for _, e := range f.Block.entries() {
				n.Inputs = append(n.Inputs, &flow.Input{Name: e.Name.Name, Expr: c.expr(e.Value), Pos: e.Pos})
			}
		case name == "outputs":
			for _, v := range f.Block.decls() {
				if v.Name != nil {
					n.Outputs = append(n.Outputs, &flow.Field{Name: v.Name.Name, Type: c.typ(v.Type), Pos: v.Pos})
				}
			}
		case name == "set":
			for _, e := range f.Block.entries() {
				n.Set = append(n.Set, &flow.Assign{Name: e.Name.Name, Expr: c.expr(e.Value), Pos: e.Pos})
			}
		case name == "question" && f.Value != nil:
			n.Inputs = append(n.Inputs, &flow.Input{Name: "question", Expr: c.expr(f.Value), Pos: f.Pos})
		case name == "retry":
			n.Retry = c.retry(f)
		case name == "timeout" && f.Value != nil:
			n.Timeout = c.duration(f.Value, "node "+n.Name+": timeout")
		case name == "map" && f.Value != nil:
			n.Map = c.expr(f.Value)
		case name == "as" && f.Value != nil:
			if id, ok := f.Value.(*Ident); ok {
				n.As = id.Name
			} else {
				c.errorf(f.Value.Start(), "node %s: as must be a name", n.Name)
			}
		case name == "parallelism" && f.Value != nil:
			if lit, ok := f.Value.(*IntLit); ok && lit.Value > 0 {
				n.Parallelism = int(lit.Value)
			} else {
				c.errorf(f.Value.Start(), "node %s: parallelism must be a positive integer", n.Name)
			}
		case name == "workflow" && f.Value != nil:
			if id, ok := f.Value.(*Ident); ok {
				c.subs = append(c.subs, subRef{node: n, name: id})
			} else if s, ok := f.Value.(*StringLit); ok {
				c.subs = append(c.subs, subRef{node: n, name: &Ident{Pos: s.Pos, Name: s.Value}})
			} else {
				c.errorf(f.Value.Start(), "node %s: workflow must name a workflow", n.Name)
			}
		case configFields[name] && f.Value != nil:
			if name == "context_tokens" {
				c.contextTokens(f.Value, "node "+n.Name)
			}
			if name == "tool" || name == "tools" {
				c.nodeRefs = appendToolRefs(c.nodeRefs, f.Value, n.Name, "")
			}
			c.config(&n.Config, &n.ConfigPos, name, f)
		}
	}
	if !typed {
		switch {
		case n.Action != "":
			n.Type = flow.Function
		case n.Config["prompt"].Kind() != flow.KindNull:
			n.Type = flow.LLM
		case len(c.subs) > 0 && c.subs[len(c.subs)-1].node == n:
			n.Type = flow.Subflow
		case d.Field("question") != nil:
			n.Type = flow.Human
		default:
			n.Type = flow.Function
		}
	}
	if n.Map != nil && n.As == "" {
		n.As = "item"
	}
	if n.Type == flow.Tool && n.Action == "" {
		// `tool: "web.search"` names the tool the node calls: the action.
		if t := n.Config["tool"]; t.Kind() == flow.KindString {
			n.Action = t.Str()
		}
	}
	return n
}

func (c *compiler) config(dst *map[string]flow.Value, pos *map[string]flow.Pos, name string, f *Field) {
	v, ok := c.literal(f.Value)
	if id, isIdent := f.Value.(*Ident); isIdent && !ok {
		v, ok = flow.StringValue(id.Name), true // mode: classify, method: GET
	}
	if !ok {
		c.errorf(f.Value.Start(), "%s must be a literal value", name)
		return
	}
	if *dst == nil {
		*dst, *pos = map[string]flow.Value{}, map[string]flow.Pos{}
	}
	(*dst)[name] = v
	(*pos)[name] = f.Pos
}

// contextTokens checks a context_tokens value: a positive Int.
func (c *compiler) contextTokens(e Expr, owner string) int {
	if lit, ok := e.(*IntLit); ok && lit.Value > 0 && lit.Value <= 1<<31-1 {
		return int(lit.Value)
	}
	c.errorf(e.Start(), "%s: context_tokens must be a positive integer (the context window in tokens, Ollama's num_ctx)", owner)
	return 0
}

func (c *compiler) retry(f *Field) *flow.RetryPolicy {
	r := &flow.RetryPolicy{}
	for _, e := range f.Block.entries() {
		switch e.Name.Name {
		case "max", "attempts", "max_attempts":
			if lit, ok := e.Value.(*IntLit); ok && lit.Value >= 1 {
				r.MaxAttempts = int(lit.Value)
			} else {
				c.errorf(e.Value.Start(), "retry: %s must be a positive integer (the total number of attempts)", e.Name.Name)
			}
		case "backoff":
			r.Backoff = c.duration(e.Value, "retry: backoff")
		case "max_backoff":
			r.MaxBackoff = c.duration(e.Value, "retry: max_backoff")
		case "factor":
			switch lit := e.Value.(type) {
			case *IntLit:
				r.Factor = float64(lit.Value)
			case *FloatLit:
				r.Factor = lit.Value
			default:
				c.errorf(e.Value.Start(), "retry: factor must be a number")
			}
		default:
			c.errorf(e.Pos, "retry: unknown setting %s%s", e.Name.Name, flow.Suggest(e.Name.Name, []string{"max", "backoff", "factor", "max_backoff"}))
		}
	}
	return r
}

func (c *compiler) duration(e Expr, what string) time.Duration {
	switch lit := e.(type) {
	case *DurationLit:
		if lit.Value < 0 {
			c.errorf(lit.Pos, "%s must not be negative", what)
		}
		return lit.Value
	case *StringLit:
		d, err := time.ParseDuration(lit.Value)
		if err == nil {
			return d
		}
	case *IntLit:
		if lit.Value == 0 {
			return 0
		}
	}
	c.errorf(e.Start(), "%s must be a duration such as 30s or 1m30s", what)
	return 0
}

func (c *compiler) edge(d *EdgeDecl) *flow.Edge {
	e := &flow.Edge{Pos: d.Pos}
	if d.From != nil {
		e.From = d.From.Name
	} else {
		c.errorf(d.Pos, "edge has no from")
	}
	for _, t := range d.To {
		e.To = append(e.To, t.Name)
		e.ToPos = append(e.ToPos, t.Pos)
	}
	if len(d.To) == 0 {
		c.errorf(d.Pos, "edge from %s has no to", e.From)
	}
	if d.Join != nil {
		e.Join = d.Join.Name
	}
	if d.Condition != nil {
		e.Cond = c.expr(d.Condition)
	}
	for _, a := range d.Update {
		e.Updates = append(e.Updates, &flow.Assign{Name: a.Name.Name, Expr: c.expr(a.Value), Pos: a.Pos})
	}
	for _, a := range d.Override {
		e.Overrides = append(e.Overrides, &flow.Assign{Name: a.Name.Name, Expr: c.expr(a.Value), Pos: a.Pos})
	}
	if d.On != nil {
		if d.On.Name == "error" {
			e.OnError = true
		} else {
			c.errorf(d.On.Pos, "edge on: %s; the only trigger is error", d.On.Name)
		}
	}
	return e
}

func (c *compiler) binding(d *ActionDecl) *flow.Binding {
	if d.Name == nil {
		return nil
	}
	b := &flow.Binding{Name: d.Name.Name, Pos: d.Pos}
	typed := false
	for _, f := range d.Fields {
		name := f.Name.Name
		switch {
		case name == "type" && f.Value != nil:
			b.Type = c.nodeType(f.Value)
			typed = true
		case name == "description" && f.Value != nil:
			c.config(&b.Config, &b.ConfigPos, name, f)
		case name == "question" && f.Value != nil:
			c.config(&b.Config, &b.ConfigPos, name, f)
		case configFields[name] && f.Value != nil:
			if name == "context_tokens" {
				c.contextTokens(f.Value, "action "+b.Name)
			}
			if name == "tool" || name == "tools" {
				c.bindingRefs = appendToolRefs(c.bindingRefs, f.Value, "", b.Name)
			}
			c.config(&b.Config, &b.ConfigPos, name, f)
		}
	}
	if !typed {
		switch {
		case b.Config["prompt"].Kind() != flow.KindNull:
			b.Type = flow.LLM
		case b.Config["question"].Kind() != flow.KindNull:
			b.Type = flow.Human
		case b.Config["url"].Kind() != flow.KindNull:
			b.Type = flow.Tool
		default:
			c.errorf(d.Pos, "action %s: say what implements it (type: LLM with a prompt, HUMAN with a question, TOOL with a url)", b.Name)
		}
	}
	if b.Type == flow.LLM && b.Config["prompt"].Kind() == flow.KindNull {
		c.errorf(d.Pos, "action %s: an LLM action needs a prompt", b.Name)
	}
	return b
}

func (c *compiler) literalString(e Expr, what string) string {
	if s, ok := e.(*StringLit); ok {
		return s.Value
	}
	if id, ok := e.(*Ident); ok {
		return id.Name
	}
	c.errorf(e.Start(), "%s must be a string", what)
	return ""
}

// literal evaluates a constant expression: literals, lists and objects of
// literals, and negative numbers.
func (c *compiler) literal(e Expr) (flow.Value, bool) {
	switch e := e.(type) {
	case *StringLit:
		return flow.StringValue(e.Value), true
	case *IntLit:
		return flow.IntValue(e.Value), true
	case *FloatLit:
		return flow.FloatValue(e.Value), true
	case *BoolLit:
		return flow.BoolValue(e.Value), true
	case *NullLit:
		return flow.Null, true
	case *DurationLit:
		return flow.DurationValue(e.Value), true
	case *UnaryExpr:
		if e.Op == "-" {
			switch x := e.X.(type) {
			case *IntLit:
				return flow.IntValue(-x.Value), true
			case *FloatLit:
				return flow.FloatValue(-x.Value), true
			}
		}
	case *ListLit:
		vs := make([]flow.Value, len(e.Elems))
		for i, el := range e.Elems {
			v, ok := c.literal(el)
			if !ok {
				return flow.Null, false
			}
			vs[i] = v
		}
		return flow.ListValue(vs...), true
	case *ObjectLit:
		m := map[string]flow.Value{}
		for _, f := range e.Fields {
			v, ok := c.literal(f.Value)
			if !ok {
				return flow.Null, false
			}
			m[f.Key] = v
		}
		return flow.ObjectValue(m), true
	}
	return flow.Null, false
}

// expr converts a parsed expression to the IR's.
func (c *compiler) expr(e Expr) flow.Expr {
	switch e := e.(type) {
	case nil:
		return nil
	case *Ident:
		return &flow.Ident{At: e.Pos, Name: e.Name}
	case *StringLit, *IntLit, *FloatLit, *BoolLit, *NullLit, *DurationLit:
		v, _ := c.literal(e)
		return &flow.Lit{At: e.Start(), Value: v}
	case *ListLit:
		l := &flow.ListExpr{At: e.Pos}
		for _, el := range e.Elems {
			l.Elems = append(l.Elems, c.expr(el))
		}
		return l
	case *ObjectLit:
		o := &flow.ObjectExpr{At: e.Pos}
		for _, f := range e.Fields {
			o.Keys = append(o.Keys, f.Key)
			o.Values = append(o.Values, c.expr(f.Value))
		}
		return o
	case *UnaryExpr:
		if e.Op == "-" {
			if v, ok := c.literal(e); ok {
				return &flow.Lit{At: e.Pos, Value: v}
			}
		}
		return &flow.Unary{At: e.Pos, Op: e.Op, X: c.expr(e.X)}
	case *BinaryExpr:
		return &flow.Binary{At: e.Pos, Op: e.Op, X: c.expr(e.X), Y: c.expr(e.Y)}
	case *MemberExpr:
		return &flow.Selector{At: e.Start(), X: c.expr(e.X), Name: e.Sel.Name}
	case *IndexExpr:
		return &flow.Index{At: e.Pos, X: c.expr(e.X), Index: c.expr(e.Index)}
	case *CallExpr:
		id, ok := e.Fun.(*Ident)
		if !ok {
			c.errorf(e.Start(), "only built-in functions can be called")
			return &flow.Lit{At: e.Pos}
		}
		call := &flow.Call{At: id.Pos, Fn: id.Name}
		for _, a := range e.Args {
			call.Args = append(call.Args, c.expr(a))
		}
		return call
	case *BadExpr:
		return &flow.Lit{At: e.Pos} // the parser reported it
	}
	c.errorf(e.Start(), "unsupported expression")
	return &flow.Lit{At: e.Start()}
}

func (b *Block) entries() []*Assign {
	if b == nil {
		return nil
	}
	return b.Entries
}

func (b *Block) decls() []*VarDecl {
	if b == nil {
		return nil
	}
	return b.Decls
}

// withModel returns the bindings as workflow w sees them: when w declares a
// default model, LLM bindings that name none get it (a binding's own model
// wins, and --llm comes after both), and so do LLM nodes written with their
// prompt on the node.
func withModel(bs []*flow.Binding, w *flow.Workflow) []*flow.Binding {
	if w.Model == "" && w.ContextTokens == 0 {
		return bs
	}
	defaults := map[string]flow.Value{}
	if w.Model != "" {
		defaults["model"] = flow.StringValue(w.Model)
	}
	if w.ContextTokens > 0 {
		defaults["context_tokens"] = flow.IntValue(int64(w.ContextTokens))
	}
	for _, n := range w.Nodes {
		if n.Type != flow.LLM || n.Action != "" {
			continue
		}
		for k, v := range defaults {
			if n.Config[k].IsNull() {
				if n.Config == nil {
					n.Config, n.ConfigPos = map[string]flow.Value{}, map[string]flow.Pos{}
				}
				n.Config[k] = v
			}
		}
	}
	out := make([]*flow.Binding, len(bs))
	for i, b := range bs {
		out[i] = b
		if b.Type != flow.LLM {
			continue
		}
		var cp *flow.Binding
		for k, v := range defaults {
			if !b.Config[k].IsNull() {
				continue
			}
			if cp == nil {
				c := *b
				c.Config = make(map[string]flow.Value, len(b.Config)+len(defaults))
				for k, v := range b.Config {
					c.Config[k] = v
				}
				cp = &c
			}
			cp.Config[k] = v
		}
		if cp != nil {
			out[i] = cp
		}
	}
	return out
}
