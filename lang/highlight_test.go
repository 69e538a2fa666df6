package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHighlight(t *testing.T) {
	src := "// Hi\nworkflow W {\n  variables { n: Int = 3 }\n  nodes { node a { type: LLM; prompt: \"x {{n}}\" } }\n}\n"
	var got []string
	for _, s := range Highlight([]byte(src)) {
		got = append(got, fmt.Sprintf("%s:%s", s.Class, src[s.Start:s.End]))
	}
	want := `com:// Hi kw:workflow name:W punct:{ kw:variables punct:{ name:n punct:: type:Int punct:= num:3 punct:} kw:nodes punct:{ kw:node name:a punct:{ kw:type punct:: type:LLM punct:; kw:prompt punct:: str:"x {{n}}" punct:} punct:} punct:}`
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("spans:\n got %s\nwant %s", g, want)
	}
}

// checkSpans fails unless spans are in order, apart, and within src.
func checkSpans(t *testing.T, src []byte, spans []Span) {
	t.Helper()
	last := 0
	for i, s := range spans {
		if s.Start < last || s.End <= s.Start || s.End > len(src) || s.Class == "" {
			t.Fatalf("span %d %+v after %d in %d bytes: %q", i, s, last, len(src), src)
		}
		last = s.End
	}
}

func TestHighlightCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.wf")
	if len(files) == 0 {
		t.Skip("no testdata/*.wf")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkSpans(t, src, Highlight(src))
	}
}

func FuzzHighlight(f *testing.F) {
	f.Add([]byte("workflow W { nodes { node a { action: \"x\" } } } // c"))
	f.Add([]byte("\"\"\"\n  raw\n\"\"\" ; x @ 1.5e3 2s"))
	f.Fuzz(func(t *testing.T, src []byte) {
		checkSpans(t, src, Highlight(src))
	})
}

func TestHighlightMCP(t *testing.T) {
	src := "mcp fs { command: \"npx\" }"
	var got []string
	for _, s := range Highlight([]byte(src)) {
		got = append(got, fmt.Sprintf("%s:%s", s.Class, src[s.Start:s.End]))
	}
	if g, want := strings.Join(got, " "), `kw:mcp name:fs punct:{ name:command punct:: str:"npx" punct:}`; g != want {
		t.Fatalf("spans:\n got %s\nwant %s", g, want)
	}
}
