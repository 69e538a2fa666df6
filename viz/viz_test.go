package viz

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking the change):\n%s", path, firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first differing line.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + w + "\ngot:  " + g
		}
	}
	return ""
}

func render(t *testing.T, f func(io.Writer, *Graph) error, g *Graph) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		g    *Graph
	}{{"intentqa", intentQA()}, {"fanout", fanOut(5)}, {"kitchensink", kitchenSink()}} {
		t.Run(c.name, func(t *testing.T) {
			golden(t, c.name+".mmd", render(t, Mermaid, c.g))
			golden(t, c.name+".dot", render(t, DOT, c.g))
			golden(t, c.name+".svg", render(t, SVG, c.g))
		})
	}
}

func TestOutputsDeterministic(t *testing.T) {
	for _, f := range []func(io.Writer, *Graph) error{SVG, DOT, Mermaid} {
		for _, g := range []*Graph{intentQA(), kitchenSink(), randomGraph(3)} {
			if a, b := render(t, f, g), render(t, f, g); !bytes.Equal(a, b) {
				t.Errorf("%s: two renderings differ", g.Name)
			}
		}
	}
}

// checkXML parses an SVG document with encoding/xml and checks its root and
// that it has no scripts or external references.
func checkXML(t *testing.T, doc []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
			if se.Name.Space != "http://www.w3.org/2000/svg" {
				t.Errorf("root namespace %q", se.Name.Space)
			}
		}
		switch se.Name.Local {
		case "script", "style", "foreignObject", "image", "use":
			t.Errorf("SVG has a <%s> element", se.Name.Local)
		}
		for _, a := range se.Attr {
			if strings.HasPrefix(a.Name.Local, "on") || a.Name.Local == "href" {
				t.Errorf("SVG has attribute %s on <%s>", a.Name.Local, se.Name.Local)
			}
		}
	}
	if root != "svg" {
		t.Errorf("root element is <%s>", root)
	}
	if bytes.Contains(doc, []byte("@import")) || bytes.Contains(doc, []byte("@font-face")) {
		t.Error("SVG refers to external fonts or CSS")
	}
}

func TestSVGIsXML(t *testing.T) {
	nasty := &Graph{
		Name: "a < b & \"c\" ]]> \x00\x1b",
		Nodes: []Node{
			{ID: "x<1>", Label: "<script>alert(1)</script>", Detail: "& \x07 'q' \xff\xfe", Initial: true},
			{ID: "y]]>", Label: "日本語のラベル", Kind: LLM, Final: true},
		},
		Edges: []Edge{{From: "x<1>", To: "y]]>", Label: "a --> b | c\n--\nd", Note: "-- comment --"}},
	}
	graphs := []*Graph{intentQA(), fanOut(5), kitchenSink(), nasty, {}}
	for seed := range uint64(20) {
		graphs = append(graphs, randomGraph(seed))
	}
	for _, g := range graphs {
		doc := render(t, SVG, g)
		checkXML(t, doc)
	}
	if doc := render(t, SVG, nasty); bytes.Contains(doc, []byte("<script")) {
		t.Error("label text was not escaped")
	}
}

// TestDOTWithGraphviz checks the DOT output with Graphviz when it is
// installed.
func TestDOTWithGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("graphviz is not installed")
	}
	nasty := &Graph{
		Name:  `odd "name" \ here`,
		Nodes: []Node{{ID: `back\slash\`, Label: "<b>not bold</b>", Initial: true}, {ID: `quo"te`, Detail: "a & b", Final: true}, {ID: "node"}},
		Edges: []Edge{{From: `back\slash\`, To: `quo"te`, Label: `x == "\\"`, Note: "<br/>"}, {From: `quo"te`, To: "node", Kind: Error}},
	}
	for _, g := range []*Graph{intentQA(), fanOut(5), kitchenSink(), nasty, randomGraph(11)} {
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = bytes.NewReader(render(t, DOT, g))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("%s: dot failed: %v\n%s", g.Name, err, stderr.String())
			continue
		}
		if g == nasty && !bytes.Contains(out, []byte("&lt;b&gt;not bold&lt;/b&gt;")) {
			t.Errorf("the HTML in a label was not escaped:\n%s", out)
		}
	}
}

func TestDOTIDs(t *testing.T) {
	g := &Graph{
		Nodes: []Node{{ID: `a\`}, {ID: "n0"}, {ID: `say "hi"`}},
		Edges: []Edge{{From: `a\`, To: `say "hi"`}},
	}
	out := string(render(t, DOT, g))
	for _, want := range []string{`"n0_" [`, `"n0" [`, `"say \"hi\"" [`, `"n0_" -> "say \"hi\"";`} {
		if !strings.Contains(out, want) {
			t.Errorf("DOT output lacks %s:\n%s", want, out)
		}
	}
}

func TestMermaidIDsAndEscapes(t *testing.T) {
	g := &Graph{
		Nodes: []Node{{ID: "end"}, {ID: "has space", Label: `say "hi" #1 <b> a|b`}, {ID: "n0"}, {ID: "ok_id", Kind: Join}},
		Edges: []Edge{{From: "end", To: "has space", Label: "x | y", Kind: Error}, {From: "n0", To: "ok_id", Kind: Parallel}},
	}
	out := string(render(t, Mermaid, g))
	for _, want := range []string{
		`n0_("end")`, // keyword replaced, fresh ID avoids the node n0
		`n1("say #quot;hi#quot; #35;1 #lt;b#gt; a#124;b")`,
		`n0("n0")`,
		`ok_id[\"ok_id"/]`,
		`n0_ -.->|"x #124; y"| n1`,
		`n0 ==> ok_id`,
		"class ok_id vizJoin",
		"linkStyle 0 stroke:#D55E00",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Mermaid output lacks %s:\n%s", want, out)
		}
	}
}

func TestWrapText(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"short", []string{"short"}},
		{`relevance == "BAD" && rephraseCount >= 3`, []string{`relevance == "BAD" && rephraseCount >= 3`}},
		{"rephraseCount = rephraseCount + 1; from_query := retrieve.query", []string{"rephraseCount = rephraseCount + 1;", "from_query := retrieve.query"}},
		{"one\ntwo", []string{"one", "two"}},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o p q r s t u v w x y z a b c", []string{
			"a b c d e f g h i j k l m n o p q r s t", "u v w x y z a b c d e f g h i j k l m n…"}},
		{"identify_intent.some_really_long_field_name_here", []string{"identify_intent.some_really_long_field_", "name_here"}},
		{"retrieve_financial_documents.result.chunks_list", []string{"retrieve_financial_documents.result.", "chunks_list"}},
		{strings.Repeat("x", 45), []string{strings.Repeat("x", 40), "xxxxx"}},
	}
	for _, c := range cases {
		got := wrapText(c.in, wrapWidth, wrapLines)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("wrapText(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, line := range got {
			if n := len([]rune(line)); n > wrapWidth {
				t.Errorf("wrapText(%q) line %q has %d runes", c.in, line, n)
			}
		}
	}
}

func TestTextWidth(t *testing.T) {
	if len(helvetica) != 95*3 || len(helveticaBold) != 95*3 {
		t.Fatalf("width tables have %d and %d digits", len(helvetica), len(helveticaBold))
	}
	if w := sansWidth("MMMM", 10, false); w <= sansWidth("iiii", 10, false) {
		t.Errorf("M is not wider than i: %v", w)
	}
	if a, b := sansWidth("abc", 13, true), sansWidth("abc", 13, false); a <= b {
		t.Errorf("bold %v is not wider than regular %v", a, b)
	}
	if w := monoWidth("日本", 10); w != 24 {
		t.Errorf("monoWidth of two wide runes = %v, want 24", w)
	}
}

func TestKindStrings(t *testing.T) {
	if Map.String() != "map" || Error.String() != "error" || NodeKind(42).String() != "NodeKind(42)" || EdgeKind(-1).String() != "EdgeKind(-1)" {
		t.Error("kind names")
	}
}
