package lang

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
)

// FormatWorkflow prints w, with its action bindings (w.Bindings) and any
// subworkflows it runs, as .wf source in the canonical form `weft fmt`
// prints. LoadSource of the result compiles to a workflow equal to w except
// for positions. A workflow that .wf cannot express (a name that is not an
// identifier, a Config value of a field .wf has no syntax for, ...) is an
// error naming the workflow, node and field.
//
// The file holds the MCP server declarations first (w.MCPServers, then
// those of its subworkflows that w lacks), then the action bindings (w's,
// then those of its subworkflows that w lacks), then w, then every workflow it runs as a
// subworkflow, depth first in node order. It has no comments: a caller that
// wants a header prepends one.
//
// Some workflows have no exact spelling in .wf and come back as the
// equivalent workflow the .wf compiler builds:
//
//   - a literal List or Object value (a Lit) comes back as a list or object
//     expression of literals, with the object's keys sorted; -x of a number
//     literal comes back as the negative literal;
//   - a node whose Type is "" is printed as a FUNCTION node; a binding of
//     type HTTP comes back as TOOL (an HTTP action either way);
//   - a mapped node without As gets "item", its default; a TOOL node whose
//     action is empty gets its tool's name as its action;
//   - a type left zero is printed as Any;
//   - the workflow's Model is given to its LLM bindings and prompt nodes
//     that name no model, as the compiler does; every workflow in the file
//     sees every binding printed.
//
// What .wf cannot express is reported as *PrintError values, every one
// found, joined with errors.Join.
func FormatWorkflow(w *flow.Workflow) ([]byte, error) {
	if w == nil {
		return nil, errors.New("FormatWorkflow: nil workflow")
	}
	p := &wfPrinter{}
	f := p.file(w)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	name := w.Name + ".wf"
	out := Format(f)
	// Print what `weft fmt` prints for the text: the canonical form is
	// defined on parsed source.
	g, ds := ParseFile(name, out)
	if ds.HasErrors() {
		return nil, fmt.Errorf("workflow %s: the printed source does not parse (a bug in FormatWorkflow): %v\n%s", w.Name, ds, out)
	}
	out = Format(g)
	if _, ds := LoadSource(name, out, nil); ds.HasErrors() {
		return nil, fmt.Errorf("workflow %s: the printed source does not compile: %v\n%s", w.Name, ds.Errors(), out)
	}
	return out, nil
}

// PrintError reports a part of a workflow that .wf cannot express.
type PrintError struct {
	Workflow string // the workflow's name
	Item     string // "node fetch", "edge 2 (from a)", "action x", "variable n"; "" for the workflow itself
	Field    string // the field, e.g. "timeout", "inputs.task", "config mode"; "" for the item itself
	Msg      string
}

// Error names the workflow, the item and the field, then the problem.
func (e *PrintError) Error() string {
	var b strings.Builder
	b.WriteString("workflow ")
	b.WriteString(e.Workflow)
	if e.Item != "" {
		b.WriteString(": " + e.Item)
	}
	if e.Field != "" {
		b.WriteString(": field " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

type wfPrinter struct {
	errs []error
	wf   string // the workflow being printed
	item string // the item being printed
}

func (p *wfPrinter) errorf(field, format string, args ...any) {
	p.errs = append(p.errs, &PrintError{Workflow: p.wf, Item: p.item, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// file builds the AST of w, its bindings and its subworkflows.
func (p *wfPrinter) file(w *flow.Workflow) *File {
	ws := p.workflows(w)
	f := &File{Name: w.Name + ".wf"}
	for _, d := range p.mcpServers(ws) {
		f.Decls = append(f.Decls, d)
	}
	for _, a := range p.bindings(ws) {
		f.Decls = append(f.Decls, a)
	}
	for _, x := range ws {
		f.Decls = append(f.Decls, p.workflow(x))
	}
	return f
}

// workflows lists w and the workflows it runs, depth first.
func (p *wfPrinter) workflows(w *flow.Workflow) []*flow.Workflow {
	var out []*flow.Workflow
	byName := map[string]*flow.Workflow{}
	state := map[*flow.Workflow]int{} // 1 visiting, 2 done
	var visit func(w *flow.Workflow, path []string)
	visit = func(w *flow.Workflow, path []string) {
		switch state[w] {
		case 1:
			p.wf, p.item = w.Name, ""
			p.errorf("", "contains itself: %s", strings.Join(append(path, w.Name), " -> "))
			return
		case 2:
			return
		}
		state[w] = 1
		if prev := byName[w.Name]; prev != nil {
			p.wf, p.item = w.Name, ""
			p.errorf("", "two different workflows are called %q; a .wf file names each workflow once", w.Name)
		}
		byName[w.Name] = w
		out = append(out, w)
		for _, n := range w.Nodes {
			if n != nil && n.Subflow != nil {
				visit(n.Subflow, append(path, w.Name))
			}
		}
		state[w] = 2
	}
	visit(w, nil)
	return out
}

// Fields of nodes and actions, in the order they are printed.
var (
	nodeConfigOrder   = []string{"mode", "model", "temperature", "max_tokens", "tools", "system", "prompt", "tool", "url", "method", "headers", "body", "context_tokens", "fallback"}
	actionConfigOrder = []string{"description", "mode", "model", "temperature", "max_tokens", "tools", "system", "prompt", "question", "tool", "url", "method", "headers", "body", "context_tokens", "fallback"}
)

// bindings prints the bindings of ws, merged by name.
func (p *wfPrinter) bindings(ws []*flow.Workflow) []*ActionDecl {
	type version struct {
		w *flow.Workflow
		b *flow.Binding
	}
	var names []string
	versions := map[string][]version{}
	for _, w := range ws {
		for _, b := range w.Bindings {
			if b == nil {
				continue
			}
			if _, ok := versions[b.Name]; !ok {
				names = append(names, b.Name)
			}
			versions[b.Name] = append(versions[b.Name], version{w, b})
		}
	}
	var out []*ActionDecl
	for _, name := range names {
		vs := versions[name]
		p.wf, p.item = vs[0].w.Name, "action "+strconv.Quote(name)
		// The compiler gives a workflow's model to the LLM bindings that
		// name none: print the binding without its model when that gives
		// every workflow its version, else with the model of one version.
		candidates := []map[string]flow.Value{withoutKey(vs[0].b.Config, "model")}
		for _, v := range vs {
			candidates = append(candidates, v.b.Config)
		}
		var config map[string]flow.Value
		for _, c := range candidates {
			ok := true
			for _, v := range vs {
				if v.b.Type != vs[0].b.Type || !configEqual(modelFor(c, v.b.Type, v.w), v.b.Config) {
					ok = false
					break
				}
			}
			if ok {
				config = c
				break
			}
		}
		if config == nil {
			msg := "the workflows bind it with different models"
			for _, v := range vs[1:] {
				if v.b.Type != vs[0].b.Type || !configEqual(withoutKey(v.b.Config, "model"), candidates[0]) {
					msg = fmt.Sprintf("workflows %s and %s bind it differently", vs[0].w.Name, v.w.Name)
					break
				}
			}
			p.errorf("", "%s; a .wf file binds each action once", msg)
			continue
		}
		out = append(out, p.action(vs[0].b, config))
	}
	return out
}

// mcpServers prints the MCP servers ws declare, each name once (the
// first workflow's), in order.
func (p *wfPrinter) mcpServers(ws []*flow.Workflow) []*MCPDecl {
	var out []*MCPDecl
	seen := map[string]bool{}
	for _, w := range ws {
		for _, s := range w.MCPServers {
			if s == nil || seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			p.wf, p.item = w.Name, "mcp "+s.Name
			d := &MCPDecl{Name: &Ident{Name: s.Name}}
			for _, k := range MCPFields {
				if v, ok := s.Config[k]; ok {
					d.Fields = append(d.Fields, &Field{Name: &Ident{Name: k}, Value: whole(p.value(v, k))})
				}
			}
			for _, k := range slices.Sorted(maps.Keys(s.Config)) {
				if !slices.Contains(MCPFields, k) {
					p.errorf(k, "an mcp declaration has no field %s", k)
				}
			}
			out = append(out, d)
		}
	}
	return out
}

// modelFor returns the configuration a workflow sees for a binding printed
// with config.
func modelFor(config map[string]flow.Value, t flow.NodeType, w *flow.Workflow) map[string]flow.Value {
	if t != flow.LLM || w.Model == "" || !config["model"].IsNull() {
		return config
	}
	out := withoutKey(config, "")
	out["model"] = flow.StringValue(w.Model)
	return out
}

func withoutKey(m map[string]flow.Value, key string) map[string]flow.Value {
	out := make(map[string]flow.Value, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func configEqual(a, b map[string]flow.Value) bool { return maps.EqualFunc(a, b, sameValue) }

// sameValue is Equal that also tells an Int from a Float (and 0.0 from
// -0.0): the compiler reads each back as it was written.
func sameValue(a, b flow.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case flow.KindList:
		return slices.EqualFunc(a.List(), b.List(), sameValue)
	case flow.KindObject:
		return maps.EqualFunc(a.Object(), b.Object(), sameValue)
	case flow.KindFloat:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	}
	return a.Equal(b)
}

// bindingTypes are the types an action declaration can have.
var bindingTypes = []flow.NodeType{flow.Function, flow.LLM, flow.Human, flow.Tool, flow.Subflow, flow.End, "HTTP"}

func (p *wfPrinter) action(b *flow.Binding, config map[string]flow.Value) *ActionDecl {
	a := &ActionDecl{Name: &Ident{Name: b.Name}}
	if !slices.Contains(bindingTypes, b.Type) {
		p.errorf("type", "unknown action type %q; want FUNCTION, LLM, HUMAN, TOOL, HTTP, WORKFLOW or END", b.Type)
	}
	a.Fields = append(a.Fields, &Field{Name: &Ident{Name: "type"}, Value: &Ident{Name: string(b.Type)}})
	if b.Type == flow.LLM && config["prompt"].IsNull() {
		p.errorf("prompt", "an LLM action needs a prompt")
	}
	a.Fields = append(a.Fields, p.config(config, actionConfigOrder, actionFields)...)
	return a
}

// config prints the Config fields in order; keys not in order are errors.
func (p *wfPrinter) config(config map[string]flow.Value, order []string, specs map[string]fieldSpec) []*Field {
	var fields []*Field
	for _, k := range order {
		v, ok := config[k]
		if !ok {
			continue
		}
		field := "config " + k
		var x Expr
		switch specs[k].kind {
		case fkIdent: // mode
			s := v.Str()
			if v.Kind() != flow.KindString || !slices.ContainsFunc(specs[k].values, func(m string) bool { return strings.EqualFold(m, s) }) || !isIdent(s) {
				p.errorf(field, "%s is not an LLM mode; want one of %s", v, strings.Join(llmModes, ", "))
				continue
			}
			x = &Ident{Name: s}
		case fkString: // a node's tool
			if v.Kind() != flow.KindString {
				p.errorf(field, "%s is not a string; .wf writes a node's tool as a string", v)
				continue
			}
			x = p.value(v, field)
		default:
			x = p.value(v, field)
		}
		fields = append(fields, &Field{Name: &Ident{Name: k}, Value: whole(x)})
	}
	var unknown []string
	for k := range config {
		if !slices.Contains(order, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		msg := fmt.Sprintf(".wf has no field %q here; the fields are %s", k, strings.Join(order, ", "))
		if k == "question" {
			msg += "; a node's question is its input \"question\""
		}
		p.errorf("config "+k, "%s", msg)
	}
	return fields
}

func (p *wfPrinter) workflow(w *flow.Workflow) *WorkflowDecl {
	p.wf, p.item = w.Name, ""
	d := &WorkflowDecl{Name: p.ident(w.Name, "name")}
	if w.Description != "" {
		d.Description = whole(stringLit(w.Description))
	}
	if w.Model != "" {
		d.Model = stringLit(w.Model)
	}
	d.Parameters = p.vars(w.Params, "parameter")
	d.Variables = p.vars(w.Vars, "variable")
	d.Slots = p.vars(w.Slots, "slot")
	for i, n := range w.Nodes {
		if n == nil {
			p.item = ""
			p.errorf(fmt.Sprintf("nodes[%d]", i), "nil node")
			continue
		}
		d.Nodes = append(d.Nodes, p.node(w, n))
	}
	for i, e := range w.Edges {
		if e == nil {
			p.item = ""
			p.errorf(fmt.Sprintf("edges[%d]", i), "nil edge")
			continue
		}
		d.Edges = append(d.Edges, p.edge(i, e))
	}
	p.item = ""
	if w.Initial != "" {
		d.Initial = p.ident(w.Initial, "initial")
	}
	for _, f := range w.Finals {
		d.Finals = append(d.Finals, p.ident(f, "finals"))
	}
	var limits []*Assign
	switch {
	case w.Limits.MaxSteps < 0:
		p.errorf("limits.max_steps", "%d is negative", w.Limits.MaxSteps)
	case w.Limits.MaxSteps > 0:
		limits = append(limits, &Assign{Name: &Ident{Name: "max_steps"}, Value: intLit(int64(w.Limits.MaxSteps))})
	}
	if w.Limits.MaxTime != 0 {
		limits = append(limits, &Assign{Name: &Ident{Name: "max_time"}, Value: p.duration(w.Limits.MaxTime, "limits.max_time")})
	}
	if len(limits) > 0 {
		d.Limits = &Limits{Entries: limits}
	}
	return d
}

func (p *wfPrinter) vars(vs []*flow.Var, what string) []*VarDecl {
	var out []*VarDecl
	for i, v := range vs {
		if v == nil {
			p.item = ""
			p.errorf(fmt.Sprintf("%ss[%d]", what, i), "nil %s", what)
			continue
		}
		p.item = what + " " + v.Name
		d := &VarDecl{Name: p.ident(v.Name, ""), Type: p.typ(v.Type, "type")}
		if v.Default != nil {
			d.Default = whole(p.expr(v.Default, "default"))
		}
		if !v.Reducer.IsReplace() {
			d.Reducer = p.ident(v.Reducer.String(), "reduce")
		}
		out = append(out, d)
	}
	return out
}

func (p *wfPrinter) typ(t flow.Type, field string) TypeExpr {
	switch t.Kind {
	case flow.KindBool, flow.KindInt, flow.KindFloat, flow.KindString, flow.KindDuration, flow.KindObject, flow.KindAny:
		return &NamedType{Name: t.Kind.String()}
	case flow.KindNull:
		if t.IsZero() {
			return &NamedType{Name: "Any"} // the zero Type is Any
		}
	case flow.KindEnum:
		e := &EnumType{}
		seen := map[string]bool{}
		for _, v := range t.Values {
			if seen[v] {
				p.errorf(field, "Enum lists %q twice", v)
			}
			seen[v] = true
			e.Values = append(e.Values, &StringLit{Value: v})
		}
		if len(t.Values) == 0 {
			p.errorf(field, "Enum has no values")
		}
		return e
	case flow.KindList:
		if t.Elem == nil {
			return &ListType{Elem: &NamedType{Name: "Any"}}
		}
		return &ListType{Elem: p.typ(*t.Elem, field)}
	}
	p.errorf(field, "type %s has no .wf spelling", t)
	return &NamedType{Name: "Any"}
}

// nodeTypes are the node types .wf spells as themselves.
var nodeTypes = []flow.NodeType{flow.Function, flow.LLM, flow.Human, flow.Tool, flow.Subflow, flow.End}

func (p *wfPrinter) node(w *flow.Workflow, n *flow.Node) *NodeDecl {
	p.item = "node " + n.Name
	d := &NodeDecl{Name: p.ident(n.Name, "")}
	add := func(name string, v Expr) { d.Fields = append(d.Fields, &Field{Name: &Ident{Name: name}, Value: v}) }
	addBlock := func(name string, b *Block) { d.Fields = append(d.Fields, &Field{Name: &Ident{Name: name}, Block: b}) }

	typ := n.Type
	switch {
	case typ == "":
		typ = flow.Function // what Compile makes of it
	case !slices.Contains(nodeTypes, typ):
		p.errorf("type", "unknown node type %q; want FUNCTION, LLM, HUMAN, TOOL, WORKFLOW or END", typ)
	}
	add("type", &Ident{Name: string(typ)})
	tool := n.Config["tool"]
	toolIsAction := typ == flow.Tool && tool.Kind() == flow.KindString && tool.Str() == n.Action && n.Action != ""
	if n.Action != "" && !toolIsAction {
		add("action", stringLit(n.Action))
	}
	if n.Subflow != nil {
		add("workflow", p.ident(n.Subflow.Name, "workflow"))
	}
	if n.Description != "" {
		add("description", whole(stringLit(n.Description)))
	}
	config := n.Config
	if typ == flow.LLM && n.Action == "" && w.Model != "" && sameValue(config["model"], flow.StringValue(w.Model)) {
		config = withoutKey(config, "model") // the compiler gives it the workflow's
	}
	d.Fields = append(d.Fields, p.config(config, nodeConfigOrder, nodeFields)...)

	// A HUMAN node's question is written as a field when that keeps the
	// order of the inputs: it is the first or the last input.
	inputs := n.Inputs
	question := -1
	if typ == flow.Human {
		for i, in := range inputs {
			if in != nil && in.Name == "question" {
				if question >= 0 {
					question = -1
					break
				}
				question = i
			}
		}
		if question > 0 && question < len(inputs)-1 {
			question = -1
		}
	}
	if question == 0 {
		add("question", whole(p.expr(inputs[0].Expr, "question")))
		inputs = inputs[1:]
	}
	if n.Map != nil {
		add("map", p.expr(n.Map, "map"))
	}
	if n.As != "" && (n.Map == nil || n.As != "item") {
		add("as", p.ident(n.As, "as"))
	}
	switch {
	case n.Parallelism < 0:
		p.errorf("parallelism", "%d is negative", n.Parallelism)
	case n.Parallelism > 0:
		add("parallelism", intLit(int64(n.Parallelism)))
	}
	var last *flow.Input
	if question > 0 {
		last = inputs[len(inputs)-1]
		inputs = inputs[:len(inputs)-1]
	}
	if len(inputs) > 0 {
		b := &Block{}
		for i, in := range inputs {
			if in == nil {
				p.errorf(fmt.Sprintf("inputs[%d]", i), "nil input")
				continue
			}
			b.Entries = append(b.Entries, &Assign{Name: p.ident(in.Name, "inputs"), Value: whole(p.expr(in.Expr, "inputs."+in.Name))})
		}
		addBlock("inputs", b)
	}
	if last != nil {
		add("question", whole(p.expr(last.Expr, "question")))
	}
	if len(n.Outputs) > 0 {
		b := &Block{}
		for i, o := range n.Outputs {
			if o == nil {
				p.errorf(fmt.Sprintf("outputs[%d]", i), "nil output")
				continue
			}
			b.Decls = append(b.Decls, &VarDecl{Name: p.ident(o.Name, "outputs"), Type: p.typ(o.Type, "outputs."+o.Name)})
		}
		addBlock("outputs", b)
	}
	if r := n.Retry; r != nil {
		b := &Block{}
		entry := func(name string, v Expr) { b.Entries = append(b.Entries, &Assign{Name: &Ident{Name: name}, Value: v}) }
		switch {
		case r.MaxAttempts < 0:
			p.errorf("retry.max", "%d is negative", r.MaxAttempts)
		case r.MaxAttempts > 0:
			entry("max", intLit(int64(r.MaxAttempts)))
		}
		if r.Backoff != 0 {
			entry("backoff", p.duration(r.Backoff, "retry.backoff"))
		}
		switch f := r.Factor; {
		case f == 0:
		case math.IsNaN(f) || math.IsInf(f, 0) || f < 0:
			p.errorf("retry.factor", "%v is not a positive number", f)
		case f == math.Trunc(f) && f < 1<<53:
			entry("factor", intLit(int64(f)))
		default:
			entry("factor", floatLit(f))
		}
		if r.MaxBackoff != 0 {
			entry("max_backoff", p.duration(r.MaxBackoff, "retry.max_backoff"))
		}
		addBlock("retry", b)
	}
	if n.Timeout != 0 {
		add("timeout", p.duration(n.Timeout, "timeout"))
	}
	if len(n.Set) > 0 {
		addBlock("set", &Block{Entries: p.assigns(n.Set, "set")})
	}
	return d
}

func (p *wfPrinter) assigns(as []*flow.Assign, field string) []*Assign {
	var out []*Assign
	for i, a := range as {
		if a == nil {
			p.errorf(fmt.Sprintf("%s[%d]", field, i), "nil assignment")
			continue
		}
		out = append(out, &Assign{Name: p.ident(a.Name, field), Value: whole(p.expr(a.Expr, field+"."+a.Name))})
	}
	return out
}

func (p *wfPrinter) edge(i int, e *flow.Edge) *EdgeDecl {
	p.item = fmt.Sprintf("edge %d (from %s)", i, e.From)
	d := &EdgeDecl{From: p.ident(e.From, "from")}
	if len(e.To) == 0 {
		p.errorf("to", "the edge goes nowhere")
	}
	for _, t := range e.To {
		d.To = append(d.To, p.ident(t, "to"))
	}
	if e.Join != "" {
		d.Join = p.ident(e.Join, "join")
	}
	if e.OnError {
		d.On = &Ident{Name: "error"}
	}
	if e.Cond != nil {
		d.Condition = p.expr(e.Cond, "condition")
	}
	d.Update = p.assigns(e.Updates, "update")
	d.Override = p.assigns(e.Overrides, "override")
	return d
}

// ident returns an Ident for a name that must be an identifier.
func (p *wfPrinter) ident(name, field string) *Ident {
	if !isIdent(name) {
		p.errorf(field, "%q is not an identifier (letters, digits and _, not starting with a digit)", name)
	}
	return &Ident{Name: name}
}

// literalNames are identifiers that an expression reads as literals or
// operators, never as names.
var literalNames = []string{"true", "false", "null", "in"}

// expr converts an IR expression to the AST.
func (p *wfPrinter) expr(e flow.Expr, field string) Expr {
	switch e := e.(type) {
	case nil:
		p.errorf(field, "missing expression")
	case *flow.Lit:
		return p.value(e.Value, field)
	case *flow.Ident:
		if !isIdent(e.Name) || slices.Contains(literalNames, e.Name) {
			p.errorf(field, "%q cannot be written as a name", e.Name)
		}
		return &Ident{Name: e.Name}
	case *flow.Selector:
		if !isIdent(e.Name) {
			p.errorf(field, "field name %q after \".\" is not an identifier; write x[%q]", e.Name, e.Name)
		}
		return &MemberExpr{X: p.expr(e.X, field), Sel: &Ident{Name: e.Name}}
	case *flow.Index:
		return &IndexExpr{X: p.expr(e.X, field), Index: p.expr(e.Index, field)}
	case *flow.Unary:
		if e.Op != "!" && e.Op != "-" {
			p.errorf(field, "unknown unary operator %q", e.Op)
		}
		return &UnaryExpr{Op: e.Op, X: p.expr(e.X, field)}
	case *flow.Binary:
		if flow.Precedence(e.Op) == 0 {
			p.errorf(field, "unknown binary operator %q", e.Op)
		}
		return &BinaryExpr{Op: e.Op, X: p.expr(e.X, field), Y: p.expr(e.Y, field)}
	case *flow.Call:
		if !isIdent(e.Fn) || slices.Contains(literalNames, e.Fn) {
			p.errorf(field, "function name %q is not an identifier", e.Fn)
		}
		c := &CallExpr{Fun: &Ident{Name: e.Fn}}
		for _, a := range e.Args {
			c.Args = append(c.Args, p.expr(a, field))
		}
		return c
	case *flow.ListExpr:
		l := &ListLit{}
		for _, x := range e.Elems {
			l.Elems = append(l.Elems, p.expr(x, field))
		}
		return l
	case *flow.ObjectExpr:
		if len(e.Keys) != len(e.Values) {
			p.errorf(field, "object has %d keys and %d values", len(e.Keys), len(e.Values))
			return &NullLit{}
		}
		o := &ObjectLit{}
		for i, k := range e.Keys {
			o.Fields = append(o.Fields, &ObjectField{Key: k, Value: p.expr(e.Values[i], field)})
		}
		return o
	default:
		p.errorf(field, "unknown expression type %T", e)
	}
	return &NullLit{}
}

// value converts a Value to the literal the compiler reads back as it.
func (p *wfPrinter) value(v flow.Value, field string) Expr {
	switch v.Kind() {
	case flow.KindNull:
		return &NullLit{}
	case flow.KindBool:
		return &BoolLit{Value: v.Bool()}
	case flow.KindInt:
		i := v.Int()
		switch {
		case i == math.MinInt64:
			p.errorf(field, "%d has no .wf literal", i)
		case i < 0:
			return &UnaryExpr{Op: "-", X: intLit(-i)}
		}
		return intLit(i)
	case flow.KindFloat:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			p.errorf(field, "%v has no .wf literal", f)
			return &NullLit{}
		}
		if math.Signbit(f) {
			return &UnaryExpr{Op: "-", X: floatLit(-f)}
		}
		return floatLit(f)
	case flow.KindString:
		return stringLit(v.Str())
	case flow.KindDuration:
		return p.duration(v.Duration(), field)
	case flow.KindList:
		l := &ListLit{}
		for _, x := range v.List() {
			l.Elems = append(l.Elems, p.value(x, field))
		}
		return l
	case flow.KindObject:
		m := v.Object()
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o := &ObjectLit{}
		for _, k := range keys {
			o.Fields = append(o.Fields, &ObjectField{Key: k, Value: p.value(m[k], field)})
		}
		return o
	}
	p.errorf(field, "a value of kind %s has no .wf literal", v.Kind())
	return &NullLit{}
}

func (p *wfPrinter) duration(d time.Duration, field string) Expr {
	if d < 0 {
		p.errorf(field, "negative duration %s has no .wf literal", d)
	}
	return &DurationLit{Raw: d.String(), Value: d}
}

func intLit(i int64) *IntLit { return &IntLit{Raw: strconv.FormatInt(i, 10), Value: i} }

func floatLit(f float64) *FloatLit {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return &FloatLit{Raw: s, Value: f}
}

// stringLit returns a quoted literal of s, with Go escapes.
func stringLit(s string) *StringLit { return &StringLit{Raw: strconv.Quote(s), Value: s} }

// whole returns the literal for a string that is the whole value of a
// field or entry: a """ string when s spans several lines and reads back
// the same that way, else a quoted string. (Inside lists and objects,
// strings stay quoted: a """ string there reads poorly.)
func whole(x Expr) Expr {
	if s, ok := x.(*StringLit); ok {
		if raw, ok := multiline(s.Value); ok {
			return &StringLit{Raw: raw, Value: s.Value}
		}
	}
	return x
}

// multiline returns s as a """ literal whose delimiters are on lines of
// their own (Format indents it), when that spelling keeps s exactly and
// shows it as it is: printable text without carriage returns, """, or
// blanks at the end of a line.
func multiline(s string) (string, bool) {
	if !strings.Contains(s, "\n") || strings.TrimSpace(s) == "" || strings.Contains(s, `"""`) || !utf8.ValidString(s) {
		return "", false
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && !strconv.IsPrint(r) {
			return "", false
		}
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimRight(l, " \t") != l {
			return "", false
		}
	}
	raw := `"""` + "\n" + s + "\n" + `"""`
	if dedent(raw[3:len(raw)-3]) != s {
		return "", false
	}
	return raw, true
}
