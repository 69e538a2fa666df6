package lang

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/weftlang/weft/flow"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// The seed's formal block must parse verbatim and already be canonical.
func TestSeedIsCanonical(t *testing.T) {
	src := readTestdata(t, "intentqa.wf")
	f := mustParse(t, "intentqa.wf", src)
	if out := Format(f); !bytes.Equal(out, src) {
		t.Errorf("Format(seed) differs from the seed:\n%s", out)
	}
	checkFormat(t, "intentqa.wf", src, f)
}

func TestSeedAST(t *testing.T) {
	src := readTestdata(t, "intentqa.wf")
	f := mustParse(t, "intentqa.wf", src)
	if len(f.Decls) != 1 {
		t.Fatalf("got %d decls, want 1", len(f.Decls))
	}
	w := f.Decls[0].(*WorkflowDecl)
	if w.Name.Name != "IntentQA" || len(w.Nodes) != 7 || len(w.Edges) != 10 {
		t.Fatalf("workflow %s: %d nodes, %d edges", w.Name.Name, len(w.Nodes), len(w.Edges))
	}
	var names []string
	for _, c := range w.Clauses {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "parameters variables nodes edges initial finals" {
		t.Errorf("clauses = %q", got)
	}
	if w.Parameters != nil {
		t.Errorf("parameters = %v, want none", w.Parameters)
	}
	v := w.Variables[0]
	if v.Name.Name != "rephraseCount" || TypeString(v.Type) != "Int" || ExprString(v.Default) != "0" || v.Reducer != nil {
		t.Errorf("variable = %s", varDeclString(v))
	}
	if v.Pos != (flow.Pos{File: "intentqa.wf", Line: 4, Col: 5}) {
		t.Errorf("variable at %v", v.Pos)
	}

	retrieve := w.Nodes[2]
	if retrieve.Name.Name != "retrieve" || retrieve.Pos.String() != "intentqa.wf:24:5" {
		t.Errorf("node 2 = %s at %v", retrieve.Name.Name, retrieve.Pos)
	}
	if typ := retrieve.Field("type").Value.(*Ident); typ.Name != "FUNCTION" {
		t.Errorf("type = %s", typ.Name)
	}
	if act := retrieve.Field("action").Value.(*StringLit); act.Value != "retrieve_financial_documents" {
		t.Errorf("action = %q", act.Value)
	}
	in := retrieve.Field("inputs").Block.Entry("query")
	if in == nil || ExprString(in.Value) != "from_query" || in.Pos.String() != "intentqa.wf:28:9" {
		t.Errorf("inputs.query = %+v", in)
	}
	out := retrieve.Field("outputs").Block.Decls[0]
	if out.Name.Name != "chunks" || TypeString(out.Type) != "List[String]" {
		t.Errorf("outputs = %s", varDeclString(out))
	}
	enum := w.Nodes[0].Field("outputs").Block.Decls[0].Type.(*EnumType)
	if len(enum.Values) != 3 || enum.Values[2].Value != "not_clear" {
		t.Errorf("enum = %s", TypeString(enum))
	}

	e := w.Edges[7]
	if e.From.Name != "evaluate" || len(e.To) != 1 || e.To[0].Name != "rephrase" {
		t.Errorf("edge 7 = %s -> %v", e.From.Name, e.To)
	}
	if got := ExprString(e.Condition); got != `relevance == "BAD" && rephraseCount < 3` {
		t.Errorf("condition = %s", got)
	}
	cond := e.Condition.(*BinaryExpr)
	if cond.Op != "&&" || cond.Pos.String() != "intentqa.wf:99:42" || cond.Start().String() != "intentqa.wf:99:23" {
		t.Errorf("condition op %s at %v, starts %v", cond.Op, cond.Pos, cond.Start())
	}
	if len(e.Update) != 1 || e.Update[0].Name.Name != "rephraseCount" || ExprString(e.Update[0].Value) != "rephraseCount + 1" {
		t.Errorf("update = %+v", e.Update)
	}
	if len(e.Override) != 1 || e.Override[0].Name.Name != "from_query" || ExprString(e.Override[0].Value) != "retrieve.query" {
		t.Errorf("override = %+v", e.Override)
	}
	if m := e.Override[0].Value.(*MemberExpr); m.Sel.Name != "query" || m.X.(*Ident).Name != "retrieve" {
		t.Errorf("override value = %#v", m)
	}
	if w.Initial.Name != "identify_intent" || len(w.Finals) != 1 || w.Finals[0].Name != "generate" {
		t.Errorf("initial %v finals %v", w.Initial, w.Finals)
	}
	if len(f.Comments) != 1 || f.Comments[0].Text != "; either summary or chunks or error" || f.Comments[0].Pos.String() != "intentqa.wf:68:33" {
		t.Errorf("comments = %+v", f.Comments)
	}
}

// Every file in testdata (not errors/) parses cleanly and is canonical.
func TestTestdataIsCanonical(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.wf")
	if len(files) < 6 {
		t.Fatalf("only %d testdata files", len(files))
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f := mustParse(t, path, src)
		if out := Format(f); !bytes.Equal(out, src) {
			t.Errorf("%s is not canonical; Format gives:\n%s", path, out)
		}
	}
}

// Idempotence and round trip over every .wf file of the module.
func TestFormatRoundTripAllFiles(t *testing.T) {
	root := moduleRoot(t)
	files := wfFiles(t, root)
	if len(files) == 0 {
		t.Fatal("no .wf files found under " + root)
	}
	clean := 0
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		t.Run(rel, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, ds := ParseFile(rel, src)
			out := Format(f) // must not panic, even on a broken file
			if ds.HasErrors() {
				// Broken files are expected only among test data.
				if !strings.Contains("/"+filepath.ToSlash(rel), "/testdata/") {
					t.Errorf("%s does not parse:\n%v", rel, ds)
				}
				// Formatting a broken file is best effort; what it prints
				// must still be stable once it parses.
				if g, ds2 := ParseFile(rel, out); !ds2.HasErrors() {
					if out2 := Format(g); !bytes.Equal(Format(mustParse(t, rel, out2)), out2) {
						t.Errorf("%s: formatting a repaired file is not idempotent", rel)
					}
				}
				return
			}
			clean++
			checkFormat(t, rel, src, f)
			g := mustParse(t, rel, out)
			// Comments moved to the same line merge into one.
			if a, b := commentTexts(f), commentTexts(g); strings.Join(a, " ") != strings.Join(b, " ") {
				t.Errorf("comments changed:\n%q\n%q", a, b)
			}
		})
	}
	t.Logf("%d files, %d without errors", len(files), clean)
}

func TestExtensions(t *testing.T) {
	f := mustParse(t, "parallel.wf", readTestdata(t, "parallel.wf"))
	w := f.Decls[0].(*WorkflowDecl)
	fan := w.Edges[0]
	if len(fan.To) != 2 || fan.To[1].Name != "search_docs" || fan.Join == nil || fan.Join.Name != "merge" {
		t.Errorf("fan-out edge = %+v", fan)
	}
	if r := w.Variables[0].Reducer; r == nil || r.Name != "append" {
		t.Errorf("reducer = %v", r)
	}
	each := w.Nodes[4]
	if ExprString(each.Field("map").Value) != "plan.questions" || each.Field("as").Value.(*Ident).Name != "question" ||
		ExprString(each.Field("parallelism").Value) != "4" {
		t.Errorf("map node fields wrong")
	}
	if set := each.Field("set").Block.Entries; len(set) != 2 || set[1].Name.Name != "scores" {
		t.Errorf("set = %+v", set)
	}

	f = mustParse(t, "resilience.wf", readTestdata(t, "resilience.wf"))
	w = f.Decls[0].(*WorkflowDecl)
	retry := w.Nodes[0].Field("retry").Block
	if d := retry.Entry("backoff").Value.(*DurationLit); d.Value != 200*time.Millisecond {
		t.Errorf("backoff = %v", d.Value)
	}
	if d := w.Nodes[1].Field("timeout").Value.(*DurationLit); d.Value != 90*time.Second {
		t.Errorf("timeout = %v", d.Value)
	}
	if on := w.Edges[1].On; on == nil || on.Name != "error" {
		t.Errorf("error edge on = %v", on)
	}
	if ExprString(w.Limits.MaxSteps()) != "100" || ExprString(w.Limits.MaxTime()) != "30s" {
		t.Errorf("limits = %v %v", w.Limits.MaxSteps(), w.Limits.MaxTime())
	}

	f = mustParse(t, "subworkflow.wf", readTestdata(t, "subworkflow.wf"))
	if imp := f.Decls[0].(*ImportDecl); imp.Path.Value != "intentqa.wf" {
		t.Errorf("import = %q", imp.Path.Value)
	}
	w = f.Decls[2].(*WorkflowDecl)
	if w.Variables != nil || len(w.Slots) != 1 {
		t.Errorf("variables %v slots %v", w.Variables, w.Slots)
	}
	if got := w.Description.(*StringLit).Value; got != "Routes a support ticket, then answers it with the IntentQA workflow." {
		t.Errorf("description = %q", got)
	}
	if sub := w.Nodes[1]; sub.Field("type").Value.(*Ident).Name != "WORKFLOW" || sub.Field("workflow").Value.(*Ident).Name != "IntentQA" {
		t.Errorf("subworkflow node wrong")
	}

	f = mustParse(t, "llm_actions.wf", readTestdata(t, "llm_actions.wf"))
	a := f.Decls[0].(*ActionDecl)
	wantPrompt := "Classify the request below as qa, summarization or not_clear.\n\nRequest: {{input_text}}"
	if a.Name.Name != "identify_user_intent" || a.Field("prompt").Value.(*StringLit).Value != wantPrompt {
		t.Errorf("action %s prompt %q", a.Name.Name, a.Field("prompt").Value.(*StringLit).Value)
	}
	if a := f.Decls[1].(*ActionDecl); a.Name.Name != "summarize.report" {
		t.Errorf("quoted action name = %q", a.Name.Name)
	}
}

func TestSemicolonRoles(t *testing.T) {
	tests := []struct {
		line    string
		comment string // the comment found, "" for none
	}{
		{"a: 1; b: 2", ""},
		{"a: 1;", ""},
		{"a: 1;   ", ""},
		{"a: 1; }", ""},
		{"a: 1; x = 2", ""},
		{"a: 1; x {", ""},
		{`a: 1; "k": 2`, ""},
		{"a: 1; // note", "// note"},
		{"a: 1   ; either summary or chunks", "; either summary or chunks"},
		{"a: 1 ; x == 2", "; x == 2"},
		{"a: 1 ;; b: 2", ";; b: 2"},
		{"a: 1 ; 42", "; 42"},
		{"a: 1 # hash", "# hash"},
		{`a: "x;y" // c`, "// c"},
	}
	for _, tt := range tests {
		sc := newScanner("t", []byte(tt.line), nil)
		for sc.scan().kind != tEOF {
		}
		var got string
		if len(sc.comments) > 0 {
			got = sc.comments[0].Text
		}
		if got != tt.comment {
			t.Errorf("%q: comment %q, want %q", tt.line, got, tt.comment)
		}
	}
}

func TestDedent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"  abc  ", "  abc  "},
		{"\n    a\n      b\n    ", "a\n  b"},
		{"\n    a\n\n    b\n", "a\n\nb"},
		{"first\n  second\n  ", "first\n  second"},
		{"\r\n\ta\r\n\tb\r\n", "a\nb"},
		{"\n  a\n \n  b", "a\n\nb"},
	}
	for _, tt := range tests {
		if got := dedent(tt.in); got != tt.want {
			t.Errorf("dedent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLiterals(t *testing.T) {
	tests := []struct {
		src  string
		want any
	}{
		{`"a\tb\u00e9\x41\101\""`, "a\tbéAA\""},
		{`"""raw \n kept"""`, `raw \n kept`},
		{"42", int64(42)},
		{"1.5e3", 1500.0},
		{"200ms", 200 * time.Millisecond},
		{"1m30s", 90 * time.Second},
		{"2h", 2 * time.Hour},
		{"1.5h", 90 * time.Minute},
		{"true", true},
	}
	for _, tt := range tests {
		x, ds := ParseExpr("t", []byte(tt.src))
		if len(ds) > 0 {
			t.Errorf("%s: %v", tt.src, ds)
			continue
		}
		var got any
		switch x := x.(type) {
		case *StringLit:
			got = x.Value
		case *IntLit:
			got = x.Value
		case *FloatLit:
			got = x.Value
		case *DurationLit:
			got = x.Value
		case *BoolLit:
			got = x.Value
		}
		if got != tt.want {
			t.Errorf("%s = %#v, want %#v", tt.src, got, tt.want)
		}
		if s := ExprString(x); s != tt.src {
			t.Errorf("ExprString(%s) = %s", tt.src, s)
		}
	}
}

func TestExprString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a || b && c", "a || b && c"},
		{"(a || b) && c", "(a || b) && c"},
		{"a == b == c", "a == b == c"},
		{"a == (b == c)", "a == (b == c)"},
		{"a - (b - c)", "a - (b - c)"},
		{"(a - b) - c", "a - b - c"},
		{"a * (b + c) % d", "a * (b + c) % d"},
		{"-(a + b)", "-(a + b)"},
		{"- -a", "--a"},
		{"!(a && b) || !c", "!(a && b) || !c"},
		{"(-a).b", "(-a).b"},
		{"(a + b)[0]", "(a + b)[0]"},
		{"f(a, b)(c)[d].e", "f(a, b)(c)[d].e"},
		{"x in [1, 2,]", "x in [1, 2]"},
		{"(x in y) == false", "x in y == false"},
		{"x in (y == false)", "x in (y == false)"},
		{"a+b*c", "a + b * c"},
		{"(a+b)*c", "(a + b) * c"},
		{`{a: 1, "b c": [], 'd': null}`, ""},
		{`{a: 1, "b c": [], "d": null}`, `{a: 1, "b c": [], d: null}`},
		{"{}", "{}"},
		{"f()", "f()"},
		{"a.type.to.from", "a.type.to.from"},
		{"1 .e5", "1.e5"},
		{"(5s).x", "5s.x"},
		{"a <= b && c >= d || e != f", "a <= b && c >= d || e != f"},
		{"(\n a +\n b\n)", "a + b"},
	}
	for _, tt := range tests {
		x, ds := ParseExpr("t", []byte(tt.in))
		if tt.want == "" {
			if len(ds) == 0 {
				t.Errorf("%s: no error", tt.in)
			}
			continue
		}
		if len(ds) > 0 {
			t.Errorf("%s: %v", tt.in, ds)
			continue
		}
		got := ExprString(x)
		if got != tt.want {
			t.Errorf("ExprString(%s) = %s, want %s", tt.in, got, tt.want)
		}
		y, ds := ParseExpr("t", []byte(got))
		if len(ds) > 0 || ExprString(y) != got {
			t.Errorf("%s does not reparse to itself: %v", got, ds)
		}
	}
}

func TestFormatDiagnostics(t *testing.T) {
	src := []byte("workflow W {\n\tnodes {\n\t\tnode a { typ: X }\n\t}\n}\n")
	_, ds := ParseFile("w.wf", src)
	ds = append(ds, flow.Diagnostic{Pos: flow.Pos{File: "w.wf", Line: 1, Col: 10}, Severity: flow.Warning, Msg: "a warning"})
	var b bytes.Buffer
	if err := FormatDiagnostics(&b, ds, func(string) []byte { return src }); err != nil {
		t.Fatal(err)
	}
	want := "w.wf:3:12: unknown field \"typ\" in node \"a\"; did you mean \"type\"?\n" +
		"\t\tnode a { typ: X }\n" +
		"\t\t         ^\n" +
		"w.wf:1:10: warning: a warning\n" +
		"workflow W {\n" +
		"         ^\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// The parser reports several errors at once, stops after maxErrors, and
// always returns an AST.
func TestErrorLimit(t *testing.T) {
	f, ds := ParseFile("many.wf", readTestdata(t, "errors/toomany.wf"))
	if len(ds) != maxErrors {
		t.Errorf("%d diagnostics, want %d", len(ds), maxErrors)
	}
	if f == nil || len(f.Decls) != 1 {
		t.Errorf("no partial AST")
	}
}

// Golden diagnostics for the files in testdata/errors. Run with -update to
// rewrite the .golden files.
func TestParseErrorsGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.wf")
	if len(files) == 0 {
		t.Fatal("no error files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(path)
			f, ds := ParseFile(name, src)
			if f == nil {
				t.Fatal("nil file")
			}
			if len(ds) < 2 {
				t.Errorf("only %d diagnostics; error files should exercise several", len(ds))
			}
			var b bytes.Buffer
			FormatDiagnostics(&b, ds, func(string) []byte { return src })
			golden := strings.TrimSuffix(path, ".wf") + ".golden"
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if b.String() != string(want) {
				t.Errorf("diagnostics differ from %s:\n--- got:\n%s--- want:\n%s", golden, b.String(), want)
			}
		})
	}
}

// Golden formatting of non-canonical sources in testdata/format.
func TestFormatGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/format/*.wf")
	if len(files) == 0 {
		t.Fatal("no format files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f := mustParse(t, path, src)
			out := checkFormat(t, path, src, f)
			golden := strings.TrimSuffix(path, ".wf") + ".golden"
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if string(out) != string(want) {
				t.Errorf("Format(%s) differs from %s:\n--- got:\n%s--- want:\n%s", path, golden, out, want)
			}
		})
	}
}

func TestNeverPanics(t *testing.T) {
	inputs := []string{
		"", "{", "}", "workflow", "workflow W", "workflow W {", "workflow W { nodes { node",
		"workflow W { nodes { node a { inputs { x: (((", "action", "action \"", `action "x" {`,
		"workflow W { edges { edge { from: a; to: [", "import", "import 3", "\"\"\"", "\xff\xfe",
		"workflow W { variables { x: Enum[ } }", "workflow W { variables { x: List[List[",
		strings.Repeat("(", 5000), strings.Repeat("[", 5000), strings.Repeat("-", 5000),
		"workflow W { description: " + strings.Repeat("a.", 3000) + "b }",
	}
	for _, in := range inputs {
		f, _ := ParseFile("p.wf", []byte(in))
		Format(f)
		ParseExpr("p", []byte(in))
	}
}

// An AST built in Go, without positions or clauses, formats to source that
// parses back to it.
func TestFormatBuiltAST(t *testing.T) {
	id := func(s string) *Ident { return &Ident{Name: s} }
	w := &WorkflowDecl{
		Name:      id("Built"),
		Variables: []*VarDecl{{Name: id("n"), Type: &NamedType{Name: "Int"}, Default: &IntLit{Value: 0}, Reducer: id("sum")}},
		Nodes: []*NodeDecl{
			{Name: id("a"), Fields: []*Field{
				{Name: id("type"), Value: id("FUNCTION")},
				{Name: id("action"), Value: &StringLit{Value: "do \"a\""}},
				{Name: id("outputs"), Block: &Block{Decls: []*VarDecl{{Name: id("x"), Type: &ListType{Elem: &EnumType{Values: []*StringLit{{Value: "p"}, {Value: "q"}}}}}}}},
				{Name: id("timeout"), Value: &DurationLit{Value: 90 * time.Second}},
				{Name: id("temperature"), Value: &FloatLit{Value: 1}},
			}},
			{Name: id("b")},
		},
		Edges: []*EdgeDecl{
			{From: id("a"), To: []*Ident{id("b")}, Condition: &BinaryExpr{Op: "*", X: &BinaryExpr{Op: "+", X: id("n"), Y: &IntLit{Value: 1}}, Y: &UnaryExpr{Op: "-", X: id("n")}},
				Update: []*Assign{{Name: id("n"), Value: &IntLit{Value: 2}}}},
			{From: id("b"), To: []*Ident{id("a"), id("b")}, Join: id("b")},
		},
		Initial: id("a"),
		Finals:  []*Ident{id("b")},
	}
	f := &File{Decls: []Decl{w}}
	out := Format(f)
	want := `workflow Built {
  variables {
    n: Int = 0 reduce sum
  }
  nodes {
    node a {
      type: FUNCTION
      action: "do \"a\""
      outputs {
        x: List[Enum["p","q"]]
      }
      timeout: 1m30s
      temperature: 1.0
    }
    node b { }
  }
  edges {
    edge { from: a; to: b
           condition: (n + 1) * -n
           update: { n = 2 }
    }
    edge { from: b; to: [ a, b ]
           join: b
    }
  }
  initial: a
  finals: [ b ]
}
`
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	g := mustParse(t, "built.wf", out)
	if d := cmp.Diff(f, g, astOptions, cmpopts.IgnoreFields(WorkflowDecl{}, "Clauses"), cmpopts.IgnoreFields(EdgeDecl{}, "Clauses"),
		cmpopts.IgnoreFields(IntLit{}, "Raw"), cmpopts.IgnoreFields(FloatLit{}, "Raw"), cmpopts.IgnoreFields(DurationLit{}, "Raw")); d != "" {
		t.Errorf("reparsed AST differs:\n%s", d)
	}
}
