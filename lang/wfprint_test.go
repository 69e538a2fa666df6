package lang

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
)

// wfOptions compare workflows as FormatWorkflow promises to keep them:
// positions aside, values by kind and content (an Int is not a Float),
// types by Type.Equal (the zero Type being Any), and literal lists, objects
// and negative numbers in whatever form the .wf compiler builds them.
var wfOptions = cmp.Options{
	cmpopts.IgnoreTypes(flow.Pos{}),
	cmpopts.IgnoreFields(flow.Workflow{}, "FinalsPos", "InitialPos", "ToolRefs"),
	cmpopts.IgnoreFields(flow.MCPServer{}, "ConfigPos"),
	cmpopts.IgnoreFields(flow.Edge{}, "ToPos"),
	cmpopts.IgnoreFields(flow.Node{}, "ConfigPos"),
	cmpopts.IgnoreFields(flow.Binding{}, "ConfigPos"),
	cmpopts.EquateEmpty(),
	cmp.Comparer(strictEqual),
	cmp.Comparer(func(a, b flow.Type) bool { return anyIfZero(a).Equal(anyIfZero(b)) }),
	// Only at places typed flow.Expr: the concrete *flow.Lit inside is an
	// Expr too, and transforming it again would never end.
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() == exprType }, cmp.Transformer("literal", canonExpr)),
}

var exprType = reflect.TypeFor[flow.Expr]()

// strictEqual is Value.Equal that also tells an Int from a Float, 0.0 from
// -0.0, and a Duration from an Int.
func strictEqual(a, b flow.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case flow.KindNull:
		return true
	case flow.KindBool:
		return a.Bool() == b.Bool()
	case flow.KindInt:
		return a.Int() == b.Int()
	case flow.KindFloat:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case flow.KindString:
		return a.Str() == b.Str()
	case flow.KindDuration:
		return a.Duration() == b.Duration()
	case flow.KindList:
		return slices.EqualFunc(a.List(), b.List(), strictEqual)
	case flow.KindObject:
		return maps.EqualFunc(a.Object(), b.Object(), strictEqual)
	}
	panic("unknown kind " + a.Kind().String())
}

func anyIfZero(t flow.Type) flow.Type {
	if t.IsZero() {
		return flow.TAny
	}
	return t
}

// canonExpr rewrites the top of an expression the way the .wf compiler
// builds it: a literal List or Object becomes a list or object expression
// (keys sorted), and -x of a number literal becomes the negative literal.
// cmp applies it again below each step.
func canonExpr(e flow.Expr) flow.Expr {
	switch x := e.(type) {
	case *flow.Lit:
		switch x.Value.Kind() {
		case flow.KindList:
			l := &flow.ListExpr{At: x.At}
			for _, v := range x.Value.List() {
				l.Elems = append(l.Elems, &flow.Lit{Value: v})
			}
			return l
		case flow.KindObject:
			m := x.Value.Object()
			o := &flow.ObjectExpr{At: x.At}
			for _, k := range slices.Sorted(maps.Keys(m)) {
				o.Keys = append(o.Keys, k)
				o.Values = append(o.Values, &flow.Lit{Value: m[k]})
			}
			return o
		}
	case *flow.Unary:
		if lit, ok := x.X.(*flow.Lit); ok && x.Op == "-" {
			switch lit.Value.Kind() {
			case flow.KindInt:
				return &flow.Lit{At: x.At, Value: flow.IntValue(-lit.Value.Int())}
			case flow.KindFloat:
				return &flow.Lit{At: x.At, Value: flow.FloatValue(-lit.Value.Float())}
			}
		}
	}
	return e
}

// roundTrip prints w, checks that the text is canonical and compiles, and
// returns the text and the workflow it compiles to.
func roundTrip(t *testing.T, w *flow.Workflow) ([]byte, *flow.Workflow) {
	t.Helper()
	out, err := FormatWorkflow(w)
	if err != nil {
		t.Fatalf("FormatWorkflow(%s): %v", w.Name, err)
	}
	f := mustParse(t, "out.wf", out)
	if again := Format(f); !bytes.Equal(again, out) {
		t.Fatalf("%s: output is not canonical:\n--- printed:\n%s\n--- formatted:\n%s", w.Name, out, again)
	}
	m, ds := LoadSource("out.wf", out, nil)
	if ds.HasErrors() {
		t.Fatalf("%s: printed source does not compile: %v\n%s", w.Name, ds, out)
	}
	back := m.Main()
	if back == nil || back.Name != w.Name {
		t.Fatalf("%s: the printed source's first workflow is %v\n%s", w.Name, back, out)
	}
	if d := cmp.Diff(w, back, wfOptions); d != "" {
		t.Fatalf("%s: round trip changed the workflow (-original +printed):\n%s\n--- printed:\n%s", w.Name, d, out)
	}
	// The compiled workflow prints the same text again.
	if out2, err := FormatWorkflow(back); err != nil || !bytes.Equal(out, out2) {
		t.Fatalf("%s: printing the compiled output again differs (err %v):\n--- first:\n%s\n--- second:\n%s", w.Name, err, out, out2)
	}
	comparePlans(t, w, back)
	return out, back
}

// comparePlans compiles both workflows and compares what Compile found and
// the shape of the plans: cells, nodes, edges.
func comparePlans(t *testing.T, a, b *flow.Workflow) {
	t.Helper()
	pa, da := flow.Compile(a, nil)
	pb, db := flow.Compile(b, nil)
	msgs := func(ds flow.Diagnostics) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Severity.String()+" "+d.Code+": "+d.Msg)
		}
		return out
	}
	if d := cmp.Diff(msgs(da), msgs(db)); d != "" {
		t.Fatalf("%s: Compile reports differ (-original +printed):\n%s", a.Name, d)
	}
	if (pa == nil) != (pb == nil) {
		t.Fatalf("%s: one plan compiled, the other did not", a.Name)
	}
	if pa == nil {
		return
	}
	type cell struct {
		Name, Type, Reducer string
		Kind, Node          int
	}
	cells := func(p *flow.Plan) []cell {
		var out []cell
		for _, c := range p.Cells {
			out = append(out, cell{c.Name, c.Type.String(), c.Red.String(), int(c.Kind), c.Node})
		}
		return out
	}
	if d := cmp.Diff(cells(pa), cells(pb)); d != "" {
		t.Fatalf("%s: plan cells differ (-original +printed):\n%s", a.Name, d)
	}
	type edge struct {
		From, Join int
		To         []int
	}
	shape := func(p *flow.Plan) (out []string) {
		for _, n := range p.Nodes {
			var es []edge
			for _, e := range append(slices.Clone(n.Edges), n.OnError...) {
				es = append(es, edge{e.From, e.Join, e.To})
			}
			out = append(out, fmt.Sprintf("%s %+v", n.Name, es))
		}
		return out
	}
	if d := cmp.Diff(shape(pa), shape(pb)); d != "" || pa.Initial != pb.Initial || pa.MaxSteps != pb.MaxSteps || pa.MaxTime != pb.MaxTime {
		t.Fatalf("%s: plans differ (-original +printed):\n%s", a.Name, d)
	}
}

// Every workflow of every .wf file under lang/testdata and examples that
// loads prints to source that compiles to the same workflow.
func TestFormatWorkflowRoundTripFiles(t *testing.T) {
	root := moduleRoot(t)
	files := append(wfFiles(t, filepath.Join(root, "lang", "testdata")), wfFiles(t, filepath.Join(root, "examples"))...)
	seed := filepath.Join(root, "lang", "testdata", "intentqa.wf")
	if !slices.Contains(files, seed) {
		t.Fatalf("the seed %s is not among %v", seed, files)
	}
	n := 0
	for _, file := range files {
		m, ds := Load(file)
		if ds.HasErrors() {
			if file == seed {
				t.Fatalf("the seed does not load: %v", ds)
			}
			continue // the error and format test files
		}
		for _, w := range m.Workflows {
			t.Run(filepath.Base(file)+"/"+w.Name, func(t *testing.T) {
				roundTrip(t, w)
			})
			n++
		}
	}
	if n < 9 {
		t.Fatalf("only %d workflows were printed", n)
	}
}

// The seed prints as itself but for what the IR does not keep: its comment
// and the empty parameters section.
func TestFormatWorkflowSeed(t *testing.T) {
	m, ds := Load("testdata/intentqa.wf")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	out, err := FormatWorkflow(m.Main())
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/intentqa.wf")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(src), "  parameters { }\n", "", 1)
	want = strings.Replace(want, "   ; either summary or chunks or error", "", 1)
	if string(out) != want {
		t.Fatalf("the seed prints differently:\n%s", cmp.Diff(want, string(out)))
	}
}

func irLit(v flow.Value) *flow.Lit             { return &flow.Lit{Value: v} }
func irStr(s string) *flow.Lit                 { return irLit(flow.StringValue(s)) }
func irNum(i int64) *flow.Lit                  { return irLit(flow.IntValue(i)) }
func irIdent(name string) *flow.Ident          { return &flow.Ident{Name: name} }
func irSel(x flow.Expr, name string) flow.Expr { return &flow.Selector{X: x, Name: name} }
func irBin(op string, x, y flow.Expr) flow.Expr {
	return &flow.Binary{Op: op, X: x, Y: y}
}

func irObj(kv ...any) *flow.ObjectExpr {
	o := &flow.ObjectExpr{}
	for i := 0; i < len(kv); i += 2 {
		o.Keys = append(o.Keys, kv[i].(string))
		o.Values = append(o.Values, kv[i+1].(flow.Expr))
	}
	return o
}

func irList(es ...flow.Expr) *flow.ListExpr { return &flow.ListExpr{Elems: es} }

func mustValue(t *testing.T, x any) flow.Value {
	t.Helper()
	v, err := flow.FromGo(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// trickyStrings are strings that a printer can get wrong.
var trickyStrings = []string{
	"",
	`say "hi"`,
	`back\slash \n not a newline`,
	"Write {query}\n\nnext",
	"tab\there",
	"crlf\r\nline",
	"lone\rreturn",
	"unicode: é 世界 🙂 \u00a0nbsp \u2028sep \ufeffbom",
	"{x} and {{x}} and {{ json x }} and }}{{",
	`"""triple""" quotes`,
	"  indented\n  lines\n",
	"trailing blanks  \nhere",
	"\n\nleading newlines",
	"ends with a quote\"\n\"",
	"; not a comment // nor this # nor this",
	"nul\x00byte and bell\a",
	"invalid utf-8: \xff\xfe",
	"line one\n\tline two\n  line three",
	"\n",
	"\\",
}

// taskInputs is the kind of input the ollama-workflows converter writes: a
// task description as nested object and list literals.
func taskInputs() flow.Expr {
	return irObj(
		"id", irStr("A"),
		"operator", irStr("generation"),
		"messages", irList(irObj("role", irStr("user"), "content", irStr("Write {query}\n\nnext"))),
		"inputs", irList(irObj(
			"name", irStr("query"),
			"value", irObj("type", irStr("input"), "key", irStr("")),
			"required", irLit(flow.BoolValue(true)),
		)),
		"outputs", irList(irObj("type", irStr("write"), "key", irStr("result"), "value", irStr("__result"))),
		"not an ident", irNum(1),
		"a-b", irNum(2),
		"", irStr("empty key"),
		"9lives", irLit(flow.FloatValue(1.0)),
		"type", irStr("object key called type"),
		"true", irLit(flow.Null),
	)
}

// goWorkflow builds, in Go, a workflow that uses every part of the IR.
func goWorkflow(t *testing.T) *flow.Workflow {
	sub := &flow.Workflow{
		Name:   "Helper",
		Params: []*flow.Var{{Name: "topic", Type: flow.TString}},
		Nodes: []*flow.Node{
			{Name: "look", Type: flow.Function, Action: "lookup", Inputs: []*flow.Input{{Name: "q", Expr: irIdent("topic")}},
				Outputs: []*flow.Field{{Name: "answer", Type: flow.TString}}},
		},
		Initial: "look",
		Finals:  []string{"look"},
	}
	tricky := make([]flow.Expr, len(trickyStrings))
	for i, s := range trickyStrings {
		tricky[i] = irStr(s)
	}
	w := &flow.Workflow{
		Name:        "GoBuilt",
		Description: "Built in Go.\nIt has \"quotes\", a \\ and {braces}.",
		Model:       "ollama:llama3.1",
		Params: []*flow.Var{
			{Name: "query", Type: flow.TString, Default: irStr("what is {x}?")},
			{Name: "opts", Type: flow.TObject, Default: irLit(mustValue(t, map[string]any{"k": 1, "nested key": []any{"a", 2.5, true, nil}}))},
		},
		Vars: []*flow.Var{
			{Name: "memory", Type: flow.TObject, Reducer: flow.ParseReducer("merge")},
			{Name: "steps", Type: flow.TInt, Default: irNum(0)},
			{Name: "log", Type: flow.ListOf(flow.TString), Default: irList(), Reducer: flow.ParseReducer("append")},
			{Name: "wait", Type: flow.TDuration, Default: irLit(flow.DurationValue(1500 * time.Millisecond))},
			{Name: "ratio", Type: flow.TFloat, Default: irLit(flow.FloatValue(-0.5)), Reducer: flow.ParseReducer("max")},
			{Name: "floor", Type: flow.TInt, Default: &flow.Unary{Op: "-", X: irNum(3)}},
			{Name: "mode", Type: flow.EnumOf("a", "b c", `q"uote`), Default: irStr("a")},
			{Name: "nested", Type: flow.ListOf(flow.ListOf(flow.EnumOf("x"))), Reducer: flow.ParseReducer("replace")},
			{Name: "anything", Type: flow.TAny, Default: irLit(flow.Null)},
		},
		Slots: []*flow.Var{{Name: "next_query", Type: flow.TString}},
		Nodes: []*flow.Node{
			{Name: "__start", Type: flow.Function, Action: "owf:start", Description: "entry, with \"quotes\"",
				Inputs: []*flow.Input{
					{Name: "task", Expr: taskInputs()},
					{Name: "strings", Expr: irList(tricky...)},
					{Name: "expr", Expr: irBin("+", irSel(irSel(irIdent("opts"), "k"), "in"), &flow.Index{X: irIdent("log"), Index: &flow.Unary{Op: "-", X: irNum(1)}})},
					{Name: "neg", Expr: &flow.Selector{X: &flow.Unary{Op: "-", X: irIdent("steps")}, Name: "x"}},
					{Name: "call", Expr: &flow.Call{Fn: "default", Args: []flow.Expr{irSel(irIdent("memory"), "x"), irLit(mustValue(t, []any{map[string]any{"type": "input", "key": "", "required": true}}))}}},
					{Name: "prec", Expr: irBin("*", irBin("-", irNum(1), irBin("-", irNum(2), irNum(3))), &flow.Unary{Op: "!", X: irBin("in", irStr("a"), irList(irStr("a")))})},
				},
				Outputs: []*flow.Field{{Name: "next", Type: flow.TString}, {Name: "failure", Type: flow.TString}, {Name: "plan", Type: flow.ListOf(flow.TString)}},
				Set:     []*flow.Assign{{Name: "memory", Expr: irObj("last", irIdent("next"))}, {Name: "steps", Expr: irBin("+", irIdent("steps"), irNum(1))}},
				Retry:   &flow.RetryPolicy{MaxAttempts: 4, Backoff: 100 * time.Millisecond, Factor: 1.5, MaxBackoff: 5 * time.Second},
				Timeout: 90 * time.Second,
			},
			{Name: "B", Type: flow.LLM,
				Config: map[string]flow.Value{
					"prompt":      flow.StringValue("Answer {{query}}.\n\nUse {{json opts}}; say \"done\"."),
					"system":      flow.StringValue("You are terse.\tReally."),
					"model":       flow.StringValue("openai:gpt-4o"),
					"temperature": flow.FloatValue(0.7),
					"max_tokens":  flow.IntValue(256),
					"mode":        flow.StringValue("extract"),
					"tools":       flow.StringList("search", "calc"),
				},
				Inputs:  []*flow.Input{{Name: "query", Expr: irIdent("query")}, {Name: "opts", Expr: irIdent("opts")}},
				Outputs: []*flow.Field{{Name: "text", Type: flow.TString}, {Name: "score", Type: flow.TFloat}},
			},
			{Name: "inline_llm", Type: flow.LLM,
				Config: map[string]flow.Value{"prompt": flow.StringValue("Hi {{query}}"), "model": flow.StringValue("ollama:llama3.1")},
				Inputs: []*flow.Input{{Name: "query", Expr: irIdent("query")}},
			},
			{Name: "fetch", Type: flow.Tool,
				Config: map[string]flow.Value{
					"url":     flow.StringValue("https://example.com/{{id}}?q={{query}}"),
					"method":  flow.StringValue("POST"),
					"headers": mustValue(t, map[string]any{"Authorization": "Bearer {{token}}", "X-Tries": 3}),
					"body":    flow.StringValue(`{"q": "{{query}}"}`),
				},
				Inputs:  []*flow.Input{{Name: "id", Expr: irStr("x/y")}, {Name: "query", Expr: irIdent("query")}, {Name: "token", Expr: irStr("t")}},
				Outputs: []*flow.Field{{Name: "body", Type: flow.TAny}},
				Retry:   &flow.RetryPolicy{},
			},
			{Name: "search", Type: flow.Tool, Action: "web.search", Config: map[string]flow.Value{"tool": flow.StringValue("web.search")},
				Inputs: []*flow.Input{{Name: "query", Expr: irIdent("next_query")}}, Outputs: []*flow.Field{{Name: "hits", Type: flow.ListOf(flow.TString)}}},
			{Name: "ask", Type: flow.Human,
				Inputs:  []*flow.Input{{Name: "question", Expr: irBin("+", irStr("Which year for "), irIdent("query"))}, {Name: "hint", Expr: irStr("a year")}},
				Outputs: []*flow.Field{{Name: "year", Type: flow.TInt}}},
			{Name: "confirm", Type: flow.Human, Action: "confirm_it",
				Inputs:  []*flow.Input{{Name: "hint", Expr: irStr("yes or no")}, {Name: "question", Expr: irStr("Sure?\nReally?")}},
				Outputs: []*flow.Field{{Name: "ok", Type: flow.TBool}}},
			{Name: "middle", Type: flow.Human,
				Inputs: []*flow.Input{{Name: "a", Expr: irNum(1)}, {Name: "question", Expr: irStr("q")}, {Name: "b", Expr: irNum(2)}}},
			{Name: "each", Type: flow.LLM, Action: "summarize.report", Map: irSel(irIdent("__start"), "plan"), As: "part", Parallelism: 3,
				Inputs:  []*flow.Input{{Name: "query", Expr: irIdent("part")}},
				Outputs: []*flow.Field{{Name: "summary", Type: flow.TString}},
				Set:     []*flow.Assign{{Name: "log", Expr: irIdent("summary")}}},
			{Name: "help", Type: flow.Subflow, Subflow: sub,
				Inputs:  []*flow.Input{{Name: "topic", Expr: irIdent("query")}},
				Outputs: []*flow.Field{{Name: "answer", Type: flow.TString}}},
			{Name: "__fail", Type: flow.End, Description: "failure"},
			{Name: "__return", Type: flow.End},
		},
		Edges: []*flow.Edge{
			{From: "__start", To: []string{"__fail"}, Cond: irBin("!=", irIdent("failure"), irStr(""))},
			{From: "__start", To: []string{"B"}, Cond: irBin("&&", irBin("==", irIdent("next"), irStr("B")), irBin("<", irIdent("steps"), irNum(5)))},
			{From: "__start", To: []string{"fetch", "search"}, Join: "ask",
				Cond:      irBin("||", irBin("==", irIdent("next"), irStr("par")), irBin(">=", irIdent("steps"), irLit(flow.FloatValue(1e21)))),
				Overrides: []*flow.Assign{{Name: "next_query", Expr: irBin("+", irIdent("query"), irStr(" more"))}}},
			{From: "__start", To: []string{"__fail"}, OnError: true, Updates: []*flow.Assign{{Name: "memory", Expr: irObj("error", irIdent("error"))}}},
			{From: "__start", To: []string{"__return"}},
			{From: "B", To: []string{"inline_llm"}},
			{From: "inline_llm", To: []string{"each"}},
			{From: "fetch", To: []string{"ask"}, Updates: []*flow.Assign{{Name: "log", Expr: irList(irStr("fetched"))}}},
			{From: "fetch", To: []string{"__fail"}, OnError: true, Cond: &flow.Call{Fn: "contains", Args: []flow.Expr{irIdent("error"), irStr("404")}}},
			{From: "search", To: []string{"ask"}},
			{From: "ask", To: []string{"confirm"}},
			{From: "confirm", To: []string{"middle"}, Cond: irIdent("ok")},
			{From: "confirm", To: []string{"__fail"}},
			{From: "middle", To: []string{"each"}},
			{From: "each", To: []string{"help"}, Updates: []*flow.Assign{{Name: "steps", Expr: irNum(0)}, {Name: "wait", Expr: irLit(flow.DurationValue(2*time.Hour + 3*time.Nanosecond))}}},
			{From: "help", To: []string{"__return"}},
		},
		Initial: "__start",
		Finals:  []string{"__return", "__fail"},
		Limits:  flow.Limits{MaxSteps: 50, MaxTime: 90 * time.Second},
		Bindings: []*flow.Binding{
			{Name: "summarize.report", Type: flow.LLM, Config: map[string]flow.Value{
				"prompt": flow.StringValue("Summarize:\n{{query}}\n"), "mode": flow.StringValue("generate"), "model": flow.StringValue("ollama:llama3.1"),
				"description": flow.StringValue("a binding whose name is not an identifier"),
			}},
			{Name: "confirm_it", Type: flow.Human, Config: map[string]flow.Value{"question": flow.StringValue("Confirm?")}},
			{Name: "lookup", Type: flow.Tool, Config: map[string]flow.Value{"url": flow.StringValue("https://example.com/lookup?q={{q}}"), "method": flow.StringValue("GET"), "tool": flow.StringValue("x")}},
		},
		MCPServers: []*flow.MCPServer{
			{Name: "everything", Config: map[string]flow.Value{
				"command": flow.StringValue("node"), "args": flow.ListValue(flow.StringValue("dist/index.js"), flow.StringValue("stdio")),
				"env": flow.ObjectValue(map[string]flow.Value{
					"LOG_LEVEL": flow.StringValue("info"),
					"TOKEN":     flow.ObjectValue(map[string]flow.Value{"env": flow.StringValue("EVERYTHING_TOKEN")}),
				}),
				"dir": flow.StringValue("/srv"), "timeout": flow.DurationValue(30 * time.Second),
				"max_restarts": flow.IntValue(2), "max_inline": flow.IntValue(-1),
			}},
			{Name: "web-search", Config: map[string]flow.Value{
				"url":     flow.StringValue("https://mcp.example.com/mcp"),
				"headers": flow.ObjectValue(map[string]flow.Value{"Authorization": flow.ObjectValue(map[string]flow.Value{"env": flow.StringValue("SEARCH_AUTH")})}),
			}},
		},
	}
	sub.Bindings, sub.MCPServers = w.Bindings, w.MCPServers
	return w
}

// A workflow built in Go, with the literals the ollama-workflows converter
// writes and every field of the IR, prints and compiles back to itself.
func TestFormatWorkflowGoBuilt(t *testing.T) {
	w := goWorkflow(t)
	out, back := roundTrip(t, w)
	golden := filepath.Join("testdata", "wfprint", "gobuilt.wf")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./lang -run GoBuilt -update writes it)", err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("output differs from %s (-want +got):\n%s", golden, cmp.Diff(string(want), string(out)))
	}
	// Printing is deterministic (Config and Object values are maps).
	for range 20 {
		again, err := FormatWorkflow(goWorkflow(t))
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("a second print differs (err %v)", err)
		}
	}
	// Every tricky string is kept exactly.
	got := back.Node("__start").Inputs[1].Expr.(*flow.ListExpr)
	for i, s := range trickyStrings {
		if v := got.Elems[i].(*flow.Lit).Value; v.Kind() != flow.KindString || v.Str() != s {
			t.Errorf("string %q came back as %s", s, v)
		}
	}
	// The ollama-workflows task keeps its keys, quoted where they are not
	// identifiers.
	for _, s := range []string{`"not an ident": 1`, `"a-b": 2`, `"": "empty key"`, `"9lives": 1.0`, `type: "input", key: ""`, `required: true`, `true: null`} {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("output lacks %s", s)
		}
	}
	if !bytes.Contains(out, []byte("workflow Helper {")) || !bytes.Contains(out, []byte(`action "summarize.report" {`)) {
		t.Errorf("subworkflow or binding missing:\n%s", out)
	}
}

// What .wf spells differently comes back as the equivalent workflow the
// compiler builds, as FormatWorkflow documents.
func TestFormatWorkflowNormalizes(t *testing.T) {
	w := &flow.Workflow{
		Name: "N",
		Nodes: []*flow.Node{
			{Name: "a", Action: "do_a", Map: irList(irNum(1), irNum(2)), Outputs: []*flow.Field{{Name: "x", Type: flow.Type{}}}},
			{Name: "b", Type: flow.Tool, Config: map[string]flow.Value{"tool": flow.StringValue("web.search")}},
			{Name: "c", Type: flow.Function, Action: "http_thing"},
		},
		Edges:   []*flow.Edge{{From: "a", To: []string{"b"}}, {From: "b", To: []string{"c"}}},
		Initial: "a",
		Finals:  []string{"c"},
		Bindings: []*flow.Binding{
			{Name: "http_thing", Type: "HTTP", Config: map[string]flow.Value{"url": flow.StringValue("https://example.com")}},
		},
	}
	out, err := FormatWorkflow(w)
	if err != nil {
		t.Fatal(err)
	}
	m, ds := LoadSource("n.wf", out, nil)
	if ds.HasErrors() {
		t.Fatalf("%v\n%s", ds, out)
	}
	back := m.Main()
	a, b := back.Node("a"), back.Node("b")
	if a.Type != flow.Function || a.As != "item" || !a.Outputs[0].Type.Equal(flow.TAny) {
		t.Errorf("node a: type %q, as %q, output type %s", a.Type, a.As, a.Outputs[0].Type)
	}
	if b.Action != "web.search" {
		t.Errorf("node b: action %q", b.Action)
	}
	if bd := back.Binding("http_thing"); bd == nil || bd.Type != flow.Tool || bd.Config["url"].Str() != "https://example.com" {
		t.Errorf("binding http_thing: %+v", bd)
	}
	// Apart from those, the workflow is the same.
	w.Nodes[0].Type, w.Nodes[0].As, w.Nodes[0].Outputs[0].Type = flow.Function, "item", flow.TAny
	w.Nodes[1].Action = "web.search"
	w.Bindings[0].Type = flow.Tool
	roundTrip(t, w)
}

// A workflow's model reaches the LLM bindings and prompt nodes that name
// none; the printer leaves it to the compiler, so that a subworkflow with
// another model keeps its own.
func TestFormatWorkflowModels(t *testing.T) {
	src := `action gen {
  type: LLM
  prompt: "Say {{x}}"
}

action pinned {
  type: LLM
  model: "openai:gpt-4o"
  prompt: "Say {{x}}"
}

workflow Outer {
  model: "ollama:llama3.1"
  nodes {
    node a {
      type: LLM
      action: "gen"
    }
    node p {
      type: LLM
      prompt: "Hi"
    }
    node s {
      type: WORKFLOW
      workflow: Inner
    }
  }
  edges {
    edge { from: a; to: p }
    edge { from: p; to: s }
  }
  initial: a
  finals: [ s ]
}

workflow Inner {
  model: "anthropic:claude"
  nodes {
    node b {
      type: LLM
      action: "pinned"
    }
    node c {
      type: LLM
      action: "gen"
    }
  }
  edges {
    edge { from: b; to: c }
  }
  initial: b
  finals: [ c ]
}
`
	m, ds := LoadSource("models.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	out, _ := roundTrip(t, m.Main())
	if string(out) != src {
		t.Errorf("printed (-want +got):\n%s", cmp.Diff(src, string(out)))
	}
	// Two workflows that bind one action differently cannot share a file.
	inner := m.Main().Node("s").Subflow
	inner.Bindings = slices.Clone(inner.Bindings)
	inner.Bindings[0] = &flow.Binding{Name: "gen", Type: flow.LLM, Config: map[string]flow.Value{"prompt": flow.StringValue("other")}}
	_, err := FormatWorkflow(m.Main())
	if err == nil || !strings.Contains(err.Error(), `action "gen"`) || !strings.Contains(err.Error(), "bind it differently") {
		t.Errorf("conflicting bindings: err = %v", err)
	}
}

// A workflow built with the Go graph API prints too: its parameters default
// to Go zero values (literal lists and objects).
func TestFormatWorkflowGraphAPI(t *testing.T) {
	type Doc struct {
		Title string   `json:"title"`
		Tags  []string `json:"tags"`
	}
	type State struct {
		Count int            `weft:"count"`
		Log   []string       `weft:"log,append"`
		Meta  map[string]int `weft:"meta"`
		Doc   Doc            `weft:"doc"`
		Wait  time.Duration  `weft:"wait"`
		Ratio float64        `weft:"ratio"`
	}
	type Step struct {
		Count int
		Log   string
	}
	g := graph.New[State]("counter")
	graph.AddNode(g, "inc", func(ctx context.Context, s State) (Step, error) { return Step{Count: s.Count + 1}, nil })
	graph.AddNode(g, "left", func(ctx context.Context, s State) (Step, error) { return Step{Log: "l"}, nil })
	graph.AddNode(g, "right", func(ctx context.Context, s State) (Step, error) { return Step{Log: "r"}, nil })
	graph.AddNode(g, "report", func(ctx context.Context, s State) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.SetEntry("inc")
	g.AddConditionalEdges("inc", func(s State) string {
		if s.Count < 3 {
			return "inc"
		}
		return "left"
	}, "inc", "left")
	g.AddEdge("left", "right")
	g.AddEdge("right", "report")
	g.AddEdge("report", graph.END)
	c, err := g.Compile(graph.Options{MaxSteps: 100, MaxTime: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c.Workflow())
}

// Strings, numbers and durations keep their exact value through a literal.
func TestFormatWorkflowLiterals(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var strs []string
	strs = append(strs, trickyStrings...)
	alphabet := []rune("ab \t\n\r\"\\{}$;#/é世🙂\x00\u2028\ufeff")
	for range 300 {
		n := r.IntN(12)
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		if r.IntN(10) == 0 {
			b.WriteByte(0xff)
		}
		strs = append(strs, b.String())
	}
	values := []flow.Value{
		flow.IntValue(0), flow.IntValue(-1), flow.IntValue(math.MaxInt64), flow.IntValue(math.MinInt64 + 1),
		flow.FloatValue(0), flow.FloatValue(math.Copysign(0, -1)), flow.FloatValue(1), flow.FloatValue(0.1), flow.FloatValue(-2.5),
		flow.FloatValue(1e21), flow.FloatValue(1e-7), flow.FloatValue(5e-324), flow.FloatValue(math.MaxFloat64), flow.FloatValue(123456789.123),
		flow.DurationValue(0), flow.DurationValue(1), flow.DurationValue(1500), flow.DurationValue(time.Hour),
		flow.DurationValue(time.Hour + 2*time.Minute + 3*time.Second + 4005006), flow.DurationValue(math.MaxInt64),
		flow.BoolValue(true), flow.BoolValue(false), flow.Null, flow.ListValue(), flow.ObjectValue(map[string]flow.Value{}),
	}
	for _, s := range strs {
		values = append(values, flow.StringValue(s))
	}
	w := &flow.Workflow{Name: "Lits", Initial: "n", Finals: []string{"n"}}
	n := &flow.Node{Name: "n", Type: flow.LLM, Config: map[string]flow.Value{"prompt": flow.ListValue(values...), "system": flow.StringValue(strs[len(strs)-1])}}
	for i, v := range values {
		n.Inputs = append(n.Inputs, &flow.Input{Name: "v" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Expr: irLit(v)})
	}
	for _, s := range strs {
		w.Vars = append(w.Vars, &flow.Var{Name: "s" + string(rune('a'+len(w.Vars)%26)) + strings.Repeat("x", len(w.Vars)/26), Type: flow.TString, Default: irStr(s)})
	}
	w.Nodes = []*flow.Node{n}
	w.Description = strs[3]
	roundTrip(t, w)
}

// What .wf cannot express is an error naming the workflow, the node (or
// other item) and the field.
func TestFormatWorkflowErrors(t *testing.T) {
	base := func() *flow.Workflow {
		return &flow.Workflow{
			Name: "W",
			Nodes: []*flow.Node{
				{Name: "a", Type: flow.Function, Action: "x", Outputs: []*flow.Field{{Name: "out", Type: flow.TString}}},
				{Name: "b", Type: flow.LLM, Config: map[string]flow.Value{"prompt": flow.StringValue("p")}},
			},
			Edges:   []*flow.Edge{{From: "a", To: []string{"b"}}},
			Initial: "a",
			Finals:  []string{"b"},
		}
	}
	if _, err := FormatWorkflow(base()); err != nil {
		t.Fatalf("the base workflow does not print: %v", err)
	}
	tests := []struct {
		name   string
		change func(w *flow.Workflow)
		want   PrintError // Msg is a substring
	}{
		{"dash in node name", func(w *flow.Workflow) { w.Nodes[0].Name = "my-node" },
			PrintError{Workflow: "W", Item: "node my-node", Msg: `"my-node" is not an identifier`}},
		{"unknown config field", func(w *flow.Workflow) { w.Nodes[1].Config["retries"] = flow.IntValue(3) },
			PrintError{Workflow: "W", Item: "node b", Field: "config retries", Msg: `no field "retries"`}},
		{"node description config", func(w *flow.Workflow) { w.Nodes[1].Config["description"] = flow.StringValue("d") },
			PrintError{Workflow: "W", Item: "node b", Field: "config description", Msg: `no field "description"`}},
		{"node question config", func(w *flow.Workflow) { w.Nodes[1].Config["question"] = flow.StringValue("?") },
			PrintError{Workflow: "W", Item: "node b", Field: "config question", Msg: `input "question"`}},
		{"unknown mode", func(w *flow.Workflow) { w.Nodes[1].Config["mode"] = flow.StringValue("chat") },
			PrintError{Workflow: "W", Item: "node b", Field: "config mode", Msg: `"chat" is not an LLM mode`}},
		{"mode of another kind", func(w *flow.Workflow) { w.Nodes[1].Config["mode"] = flow.IntValue(2) },
			PrintError{Workflow: "W", Item: "node b", Field: "config mode", Msg: "2 is not an LLM mode"}},
		{"NaN temperature", func(w *flow.Workflow) { w.Nodes[1].Config["temperature"] = flow.FloatValue(math.NaN()) },
			PrintError{Workflow: "W", Item: "node b", Field: "config temperature", Msg: "NaN has no .wf literal"}},
		{"tool not a string", func(w *flow.Workflow) { w.Nodes[1].Config["tool"] = flow.IntValue(1) },
			PrintError{Workflow: "W", Item: "node b", Field: "config tool", Msg: "not a string"}},
		{"unknown node type", func(w *flow.Workflow) { w.Nodes[0].Type = "llm" },
			PrintError{Workflow: "W", Item: "node a", Field: "type", Msg: `unknown node type "llm"`}},
		{"negative timeout", func(w *flow.Workflow) { w.Nodes[0].Timeout = -time.Second },
			PrintError{Workflow: "W", Item: "node a", Field: "timeout", Msg: "negative duration -1s"}},
		{"infinite input", func(w *flow.Workflow) {
			w.Nodes[0].Inputs = []*flow.Input{{Name: "x", Expr: irLit(flow.FloatValue(math.Inf(1)))}}
		}, PrintError{Workflow: "W", Item: "node a", Field: "inputs.x", Msg: "+Inf has no .wf literal"}},
		{"input name", func(w *flow.Workflow) { w.Nodes[0].Inputs = []*flow.Input{{Name: "the x", Expr: irNum(1)}} },
			PrintError{Workflow: "W", Item: "node a", Field: "inputs", Msg: `"the x" is not an identifier`}},
		{"name that is a literal", func(w *flow.Workflow) { w.Nodes[0].Inputs = []*flow.Input{{Name: "x", Expr: irIdent("true")}} },
			PrintError{Workflow: "W", Item: "node a", Field: "inputs.x", Msg: `"true" cannot be written as a name`}},
		{"selector", func(w *flow.Workflow) {
			w.Nodes[0].Inputs = []*flow.Input{{Name: "x", Expr: irSel(irIdent("a"), "out put")}}
		},
			PrintError{Workflow: "W", Item: "node a", Field: "inputs.x", Msg: `write x["out put"]`}},
		{"missing expression", func(w *flow.Workflow) { w.Nodes[0].Set = []*flow.Assign{{Name: "v"}} },
			PrintError{Workflow: "W", Item: "node a", Field: "set.v", Msg: "missing expression"}},
		{"output name", func(w *flow.Workflow) { w.Nodes[0].Outputs[0].Name = "out.put" },
			PrintError{Workflow: "W", Item: "node a", Field: "outputs", Msg: `"out.put" is not an identifier`}},
		{"empty enum", func(w *flow.Workflow) { w.Nodes[0].Outputs[0].Type = flow.EnumOf() },
			PrintError{Workflow: "W", Item: "node a", Field: "outputs.out", Msg: "Enum has no values"}},
		{"edge target", func(w *flow.Workflow) { w.Edges[0].To = []string{"b c"} },
			PrintError{Workflow: "W", Item: "edge 0 (from a)", Field: "to", Msg: `"b c" is not an identifier`}},
		{"edge to nowhere", func(w *flow.Workflow) { w.Edges[0].To = nil },
			PrintError{Workflow: "W", Item: "edge 0 (from a)", Field: "to", Msg: "goes nowhere"}},
		{"condition operator", func(w *flow.Workflow) { w.Edges[0].Cond = irBin("=~", irIdent("out"), irStr("x")) },
			PrintError{Workflow: "W", Item: "edge 0 (from a)", Field: "condition", Msg: `unknown binary operator "=~"`}},
		{"variable name", func(w *flow.Workflow) { w.Vars = []*flow.Var{{Name: "my-var", Type: flow.TInt}} },
			PrintError{Workflow: "W", Item: "variable my-var", Msg: `"my-var" is not an identifier`}},
		{"reducer name", func(w *flow.Workflow) {
			w.Vars = []*flow.Var{{Name: "v", Type: flow.TInt, Reducer: flow.ParseReducer("first-wins")}}
		},
			PrintError{Workflow: "W", Item: "variable v", Field: "reduce", Msg: `"first-wins" is not an identifier`}},
		{"workflow name", func(w *flow.Workflow) { w.Name = "My Flow" },
			PrintError{Workflow: "My Flow", Field: "name", Msg: `"My Flow" is not an identifier`}},
		{"negative limit", func(w *flow.Workflow) { w.Limits.MaxTime = -time.Minute },
			PrintError{Workflow: "W", Field: "limits.max_time", Msg: "negative duration"}},
		{"binding config", func(w *flow.Workflow) {
			w.Nodes[0].Action = "bound"
			w.Bindings = []*flow.Binding{{Name: "bound", Type: flow.LLM, Config: map[string]flow.Value{"prompt": flow.StringValue("p"), "seed": flow.IntValue(1)}}}
		}, PrintError{Workflow: "W", Item: `action "bound"`, Field: "config seed", Msg: `no field "seed"`}},
		{"LLM binding without prompt", func(w *flow.Workflow) {
			w.Bindings = []*flow.Binding{{Name: "bound", Type: flow.LLM}}
		}, PrintError{Workflow: "W", Item: `action "bound"`, Field: "prompt", Msg: "needs a prompt"}},
		{"subworkflow name clash", func(w *flow.Workflow) {
			w.Nodes[1] = &flow.Node{Name: "b", Type: flow.Subflow, Subflow: &flow.Workflow{Name: "W"}}
		}, PrintError{Workflow: "W", Msg: `two different workflows are called "W"`}},
		{"recursion", func(w *flow.Workflow) {
			w.Nodes[1] = &flow.Node{Name: "b", Type: flow.Subflow, Subflow: w}
		}, PrintError{Workflow: "W", Msg: "contains itself: W -> W"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := base()
			tt.change(w)
			out, err := FormatWorkflow(w)
			if err == nil {
				t.Fatalf("no error; printed:\n%s", out)
			}
			var pe *PrintError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *PrintError", err, err)
			}
			if pe.Workflow != tt.want.Workflow || pe.Item != tt.want.Item || pe.Field != tt.want.Field || !strings.Contains(pe.Msg, tt.want.Msg) {
				t.Fatalf("error %#v, want %#v", *pe, tt.want)
			}
			msg := err.Error()
			for _, part := range []string{"workflow " + tt.want.Workflow, tt.want.Item, tt.want.Field} {
				if !strings.Contains(msg, part) {
					t.Errorf("error %q does not name %q", msg, part)
				}
			}
		})
	}
	// Every problem is reported at once.
	w := base()
	w.Nodes[0].Name, w.Nodes[1].Config["bad"] = "a-1", flow.Null
	err := printErrors(w)
	if len(err) != 2 {
		t.Errorf("want 2 errors, got %v", err)
	}
}

// printErrors returns the errors FormatWorkflow reports, unjoined.
func printErrors(w *flow.Workflow) []error {
	_, err := FormatWorkflow(w)
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// FuzzFormatWorkflow checks that every workflow of a source that compiles
// prints, and that the printed source compiles to the same workflow.
func FuzzFormatWorkflow(f *testing.F) {
	files, err := filepath.Glob("testdata/*.wf")
	if err != nil {
		f.Fatal(err)
	}
	files = append(files, "testdata/wfprint/gobuilt.wf")
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, ds := LoadSource("fuzz.wf", src, nil)
		if ds.HasErrors() {
			return
		}
		for _, w := range m.Workflows {
			roundTrip(t, w)
		}
	})
}
