package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGraphFormats(t *testing.T) {
	for _, file := range []string{intentQA, "testdata/shapes.wf"} {
		r := weft(t, []string{"graph", file})
		r.wantCode(t, exitOK)
		if !strings.Contains(r.stdout, "flowchart TD\n") || !strings.Contains(r.stdout, "-->") {
			t.Errorf("%s: mermaid output:\n%s", file, r.stdout)
		}

		r = weft(t, []string{"graph", file, "--format", "dot"})
		r.wantCode(t, exitOK)
		out := strings.TrimSpace(r.stdout)
		if !strings.HasPrefix(out, "digraph ") || !strings.HasSuffix(out, "}") || strings.Count(out, "{") != strings.Count(out, "}") {
			t.Errorf("%s: dot output is not a digraph:\n%s", file, r.stdout)
		}

		r = weft(t, []string{"graph", file, "--format", "svg"})
		r.wantCode(t, exitOK)
		checkXML(t, r.stdout)
		if !strings.Contains(r.stdout, "<svg") {
			t.Errorf("%s: no <svg> element", file)
		}
	}
}

// checkXML fails unless doc is well-formed XML.
func checkXML(t *testing.T, doc string) {
	t.Helper()
	if doc == "" {
		t.Fatal("empty document")
	}
	dec := xml.NewDecoder(strings.NewReader(doc))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
}

func TestGraphOutputFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "intentqa.svg")
	r := weft(t, []string{"graph", intentQA, "--format", "svg", "-o", out})
	r.wantCode(t, exitOK)
	if r.stdout != "" {
		t.Errorf("stdout = %q", r.stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkXML(t, string(b))
	std := weft(t, []string{"graph", intentQA, "--format", "svg"})
	if !bytes.Equal(b, []byte(std.stdout)) {
		t.Error("-o wrote something else than stdout gets")
	}
}

func TestGraphInvalidWorkflowStillDrawn(t *testing.T) {
	r := weft(t, []string{"graph", "testdata/three_errors.wf"})
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stderr, "unknown node \"nowhere\"") || !strings.Contains(r.stdout, "flowchart TD") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	r = weft(t, []string{"graph", "testdata/syntax_error.wf"})
	r.wantCode(t, exitFailed)
	if r.stdout != "" {
		t.Errorf("a file with syntax errors was drawn:\n%s", r.stdout)
	}
}

func TestGraphWorkflowFlag(t *testing.T) {
	r := weft(t, []string{"graph", "testdata/shapes.wf", "--workflow", "Child"})
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stdout, `title: "Child"`) || !strings.Contains(r.stdout, "finish") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	r = weft(t, []string{"graph", "testdata/shapes.wf", "--workflow", "Chld"})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, `no workflow Chld in testdata/shapes.wf; did you mean "Child"?`) {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// brokenWriter fails every write.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestGraphWriteErrorIsInternal(t *testing.T) {
	r := weft(t, []string{"graph", intentQA}, func(e *env) { e.stdout = brokenWriter{} })
	r.wantCode(t, exitInternal)
	if !strings.Contains(r.stderr, "weft: disk on fire") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// TestREADMEGraphsMatch: the Mermaid graphs the .wf examples' READMEs
// show are what `weft graph` prints today.
func TestREADMEGraphsMatch(t *testing.T) {
	for _, ex := range []struct{ dir, file string }{{"intentqa", "intentqa.wf"}, {"sqlanalyst", "sqlanalyst.wf"}} {
		dir := filepath.Join("..", "..", "examples", ex.dir)
		r := weft(t, []string{"graph", filepath.Join(dir, ex.file)})
		r.wantCode(t, exitOK)
		readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```mermaid\n"+r.stdout+"```\n") {
			t.Errorf("examples/%s/README.md does not show what weft graph %s prints:\n%s", ex.dir, ex.file, r.stdout)
		}
	}
}
