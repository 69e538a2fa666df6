package owf

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/weftlang/weft/flow"
)

// The names Compile gives to the workflow's state and its own nodes.
const (
	varCache   = "cache"         // Object: key -> entry
	varStacks  = "stacks"        // Object: key -> List of entries
	varFiles   = "files"         // List[Object]: {text, vector} chunks
	varSteps   = "steps"         // Int: tasks executed in this run
	slotError  = "error_message" // String: the failure __fail reports
	nodeStart  = "__start"
	nodeReturn = "__return"
	nodeFail   = "__fail"
)

// Compile turns a Document into weft's IR. The workflow's state is the
// reference's memory (cache, stacks and file system, which carry over from
// run to run in a thread, as the reference's memory does when a caller
// reuses it) and the count of steps. Each step source becomes a node whose
// action carries out the task and the routing of its first step, and
// reports the next task's id; the edges follow those ids, so routing is
// visible in the graph. __start loads external memory and the input,
// __return computes the return value, and __fail ends a failed run with
// the reference's message.
func Compile(doc *Document) (*flow.Workflow, error) {
	c := &compiler{doc: doc, names: map[string]string{}, used: map[string]bool{}}
	return c.compile()
}

type compiler struct {
	doc     *Document
	names   map[string]string // task id -> node name
	used    map[string]bool
	tasks   map[string]*Task
	sources map[string]*Step // step source -> its first step
}

func lit(v flow.Value) flow.Expr              { return &flow.Lit{Value: v} }
func ident(name string) flow.Expr             { return &flow.Ident{Name: name} }
func sel(n, f string) flow.Expr               { return &flow.Selector{X: ident(n), Name: f} }
func bin(op string, x, y flow.Expr) flow.Expr { return &flow.Binary{Op: op, X: x, Y: y} }

// nodeName gives a task id a node name: the id itself when it is an
// identifier that names nothing else, else task_<id> made safe.
func (c *compiler) nodeName(id string) string {
	if n, ok := c.names[id]; ok {
		return n
	}
	name := id
	if !isIdent(id) || reserved(id) {
		var b strings.Builder
		b.WriteString("task_")
		for _, r := range id {
			if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
		name = b.String()
	}
	base := name
	for i := 2; c.used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	c.used[name] = true
	c.names[id] = name
	return name
}

func reserved(id string) bool {
	switch id {
	case varCache, varStacks, varFiles, varSteps, slotError, nodeStart, nodeReturn, nodeFail, flow.InputText, "true", "false", "null", "in":
		return true
	}
	return false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r >= 128 || !(unicode.IsLetter(r) || r == '_' || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

func (c *compiler) compile() (*flow.Workflow, error) {
	doc := c.doc
	c.used[nodeStart], c.used[nodeReturn], c.used[nodeFail] = true, true, true
	c.tasks = map[string]*Task{}
	for _, t := range doc.Tasks {
		if _, dup := c.tasks[t.ID]; !dup { // the first task with an id wins
			c.tasks[t.ID] = t
		}
	}
	c.sources = map[string]*Step{}
	var order []string
	for _, st := range doc.Steps {
		if st.Source == endID {
			continue
		}
		if _, dup := c.sources[st.Source]; !dup { // the first step from a source wins
			c.sources[st.Source] = st
			order = append(order, st.Source)
		}
	}
	w := &flow.Workflow{
		Name:        workflowName(doc),
		Description: doc.Description,
		Vars: []*flow.Var{
			{Name: varCache, Type: flow.TObject, Default: lit(flow.ObjectValue(nil)), Reducer: flow.ReducerRef{Kind: flow.ReduceMerge}},
			{Name: varStacks, Type: flow.TObject, Default: lit(flow.ObjectValue(nil)), Reducer: flow.ReducerRef{Kind: flow.ReduceMerge}},
			{Name: varFiles, Type: flow.ListOf(flow.TObject), Default: lit(flow.ListValue()), Reducer: flow.ReducerRef{Kind: flow.ReduceAppend}},
			{Name: varSteps, Type: flow.TInt, Default: lit(flow.IntValue(0))},
		},
		Slots:   []*flow.Var{{Name: slotError, Type: flow.TString}},
		Initial: nodeStart,
		Finals:  []string{nodeReturn},
	}
	w.Limits.MaxSteps = int(min(uint64(doc.Config.MaxSteps)+3, math.MaxInt32))
	if doc.Config.MaxTime > 0 {
		w.Limits.MaxTime = time.Duration(min(doc.Config.MaxTime, uint64(math.MaxInt64/int64(time.Second)))) * time.Second
	}

	w.Nodes = append(w.Nodes, &flow.Node{
		Name: nodeStart, Type: flow.Function, Action: string(opStart),
		Description: "load external memory and the input",
		Inputs: []*flow.Input{
			{Name: varCache, Expr: ident(varCache)},
			{Name: varStacks, Expr: ident(varStacks)},
			{Name: "input", Expr: ident(flow.InputText)},
			{Name: "external", Expr: lit(externalValue(doc.External))},
		},
		Outputs: []*flow.Field{{Name: "cache_writes", Type: flow.TObject}, {Name: "stack_writes", Type: flow.TObject}},
		Set:     []*flow.Assign{{Name: varCache, Expr: ident("cache_writes")}, {Name: varStacks, Expr: ident("stack_writes")}},
	})
	first := ""
	if len(doc.Steps) > 0 {
		first = doc.Steps[0].Source
	}
	switch {
	case doc.Config.MaxTime == 0:
		w.Edges = append(w.Edges, c.failEdge(nodeStart, nil, lit(str(msgMaxTime))))
	case doc.Config.MaxSteps == 0:
		w.Edges = append(w.Edges, c.failEdge(nodeStart, nil, lit(str(msgMaxSteps))))
	case first == "" || first == endID:
		w.Edges = append(w.Edges, &flow.Edge{From: nodeStart, To: []string{nodeReturn}})
	case c.tasks[first] == nil:
		w.Edges = append(w.Edges, c.failEdge(nodeStart, nil, lit(str(notFound(first)))))
	default:
		w.Edges = append(w.Edges, &flow.Edge{From: nodeStart, To: []string{c.nodeName(first)}})
	}

	for _, src := range order {
		t := c.tasks[src]
		if t == nil {
			continue // reaching it fails with "not found" on the edge
		}
		n, edges := c.taskNode(t, c.sources[src])
		w.Nodes = append(w.Nodes, n)
		w.Edges = append(w.Edges, edges...)
	}

	w.Nodes = append(w.Nodes,
		&flow.Node{
			Name: nodeReturn, Type: flow.Function, Action: string(opReturn),
			Description: "compute return_value",
			Inputs: []*flow.Input{
				{Name: varCache, Expr: ident(varCache)},
				{Name: varStacks, Expr: ident(varStacks)},
				{Name: varFiles, Expr: ident(varFiles)},
				{Name: "return", Expr: lit(returnValueValue(&doc.Return))},
			},
			Outputs: []*flow.Field{{Name: "result", Type: flow.TString}, {Name: "cache_writes", Type: flow.TObject}, {Name: "stack_writes", Type: flow.TObject}},
			Set:     []*flow.Assign{{Name: varCache, Expr: ident("cache_writes")}, {Name: varStacks, Expr: ident("stack_writes")}},
		},
	)
	// __fail only when something leads to it (a workflow without tasks
	// cannot fail).
	for _, e := range w.Edges {
		if e.To[0] == nodeFail {
			w.Nodes = append(w.Nodes, &flow.Node{
				Name: nodeFail, Type: flow.Function, Action: string(opFail),
				Description: "fail the run with the reference's message",
				Inputs:      []*flow.Input{{Name: "message", Expr: ident(slotError)}},
			})
			w.Finals = append(w.Finals, nodeFail)
			break
		}
	}
	return w, nil
}

func workflowName(doc *Document) string {
	name := doc.Name
	if name == "" && doc.File != "" {
		name = strings.TrimSuffix(filepath.Base(doc.File), filepath.Ext(doc.File))
	}
	var b strings.Builder
	up := true
	for _, r := range name {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if up {
				r = unicode.ToUpper(r)
			}
			b.WriteRune(r)
			up = false
		default:
			up = true
		}
	}
	s := b.String()
	if s == "" || unicode.IsDigit(rune(s[0])) {
		s = "Workflow" + s
	}
	return s
}

// failEdge is an edge to __fail that sets the message.
func (c *compiler) failEdge(from string, cond, msg flow.Expr) *flow.Edge {
	return &flow.Edge{From: from, To: []string{nodeFail}, Cond: cond, Overrides: []*flow.Assign{{Name: slotError, Expr: msg}}}
}

// taskNode builds the node of task t, the source of step st, and its
// edges: a failure, the step limit, each task it may go to, and the end.
func (c *compiler) taskNode(t *Task, st *Step) (*flow.Node, []*flow.Edge) {
	name := c.nodeName(t.ID)
	spec := &nodeSpec{Op: opFor(t.Operator, c.doc.Era), Task: t, Step: st}
	switch spec.Op {
	case opGeneration:
		spec.MaxTokens = c.doc.Config.MaxTokens
	case opFunctionCalling, opFunctionCallingRaw:
		spec.Tools = c.doc.Config.Tools
		if spec.Tools == nil {
			spec.Tools = []string{}
		}
		spec.CustomTools = c.doc.Config.CustomTools
	}
	typ := flow.Function
	switch spec.Op {
	case opGeneration, opFunctionCalling, opFunctionCallingRaw:
		typ = flow.LLM
	case opWebSearch:
		typ = flow.Tool
	}
	desc := t.Name
	if t.Description != "" {
		if desc != "" {
			desc += ": "
		}
		desc += t.Description
	}
	n := &flow.Node{
		Name: name, Type: typ, Action: string(spec.Op), Description: desc,
		Inputs: []*flow.Input{
			{Name: varCache, Expr: ident(varCache)},
			{Name: varStacks, Expr: ident(varStacks)},
			{Name: varFiles, Expr: ident(varFiles)},
			{Name: "task", Expr: lit(taskValue(spec))},
			{Name: "step", Expr: lit(stepValue(st))},
		},
		Outputs: []*flow.Field{
			{Name: "result", Type: flow.TString},
			{Name: "next", Type: flow.TString},
			{Name: "failure", Type: flow.TString},
			{Name: "cache_writes", Type: flow.TObject},
			{Name: "stack_writes", Type: flow.TObject},
			{Name: "new_files", Type: flow.ListOf(flow.TObject)},
		},
		Set: []*flow.Assign{
			{Name: varCache, Expr: ident("cache_writes")},
			{Name: varStacks, Expr: ident("stack_writes")},
			{Name: varFiles, Expr: ident("new_files")},
			{Name: varSteps, Expr: bin("+", ident(varSteps), lit(flow.IntValue(1)))},
		},
	}
	edges := []*flow.Edge{
		c.failEdge(name, bin("!=", ident("failure"), lit(str(""))), sel(name, "failure")),
		c.failEdge(name, bin(">=", ident(varSteps), lit(flow.IntValue(int64(c.doc.Config.MaxSteps)))), lit(str(msgMaxSteps))),
	}
	seen := map[string]bool{}
	targets := []string{st.Target}
	if st.Condition != nil {
		targets = append(targets, st.Condition.TargetIfNot)
	}
	if st.Fallback != nil {
		targets = append(targets, *st.Fallback)
	}
	for _, tg := range targets {
		if seen[tg] || tg == endID || c.sources[tg] == nil {
			continue // not a step source: the run ends
		}
		seen[tg] = true
		cond := bin("==", ident("next"), lit(str(tg)))
		if c.tasks[tg] == nil {
			edges = append(edges, c.failEdge(name, cond, lit(str(notFound(tg)))))
			continue
		}
		edges = append(edges, &flow.Edge{From: name, To: []string{c.nodeName(tg)}, Cond: cond})
	}
	edges = append(edges, &flow.Edge{From: name, To: []string{nodeReturn}})
	return n, edges
}
