package service

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/weftlang/weft/flow"
)

const libWF = `workflow Lib {
  nodes {
    node say {
      type: FUNCTION
      action: "pass"
      inputs { greeting: "hello" }
      outputs { text: String }
    }
  }
  edges { }
  initial: say
  finals: [ say ]
}
`

const appWF = `import "lib/lib.wf"

workflow App {
  nodes {
    node sub {
      type: WORKFLOW
      workflow: Lib
      outputs { text: String }
    }
  }
  edges { }
  initial: sub
  finals: [ sub ]
}
`

func writeTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"app.wf": appWF, "lib/lib.wf": libWF} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustOpen(t *testing.T, src Source, opts *OpenOptions) *Workflow {
	t.Helper()
	w, err := Open(context.Background(), src, opts)
	if err != nil {
		var de *DiagnosticsError
		if errors.As(err, &de) {
			for _, d := range de.Diagnostics {
				t.Log(d)
			}
		}
		t.Fatalf("Open(%s): %v", src.Name, err)
	}
	return w
}

// The same module opened from a file, an fs.FS and its canonical source
// has one digest and one plan fingerprint; the canonical source names
// files relative to the root, so where the checkout lives does not matter.
func TestOpenDigestIsTheSameFromEverySource(t *testing.T) {
	dir := writeTree(t)
	fromFile := mustOpen(t, File(filepath.Join(dir, "app.wf")), nil)
	if fromFile.Name != "App" || fromFile.Format != FormatWF || fromFile.Plan == nil {
		t.Fatalf("opened %q (%s), plan %v", fromFile.Name, fromFile.Format, fromFile.Plan != nil)
	}
	if !strings.HasPrefix(fromFile.Digest, "sha256:") || len(fromFile.Digest) != len("sha256:")+64 {
		t.Fatalf("digest %q", fromFile.Digest)
	}
	if strings.Contains(string(fromFile.Source), dir) {
		t.Fatalf("canonical source names the checkout %s:\n%s", dir, fromFile.Source)
	}
	fsys := fstest.MapFS{
		"w/app.wf":     {Data: []byte(appWF)},
		"w/lib/lib.wf": {Data: []byte(libWF)},
	}
	fromFS := mustOpen(t, FS(fsys, "w/app.wf"), nil)
	stored := mustOpen(t, Stored(fromFile.Source), nil)
	other := writeTree(t)
	elsewhere := mustOpen(t, File(filepath.Join(other, "app.wf")), nil)
	for name, w := range map[string]*Workflow{"fs": fromFS, "stored": stored, "elsewhere": elsewhere} {
		if w.Digest != fromFile.Digest {
			t.Errorf("%s: digest %s, want %s", name, w.Digest, fromFile.Digest)
		}
		if w.Fingerprint() != fromFile.Fingerprint() {
			t.Errorf("%s: fingerprint %s, want %s", name, w.Fingerprint(), fromFile.Fingerprint())
		}
		if string(w.Source) != string(fromFile.Source) {
			t.Errorf("%s: canonical source differs:\n%s\nwant\n%s", name, w.Source, fromFile.Source)
		}
	}
}

// A change to an imported file changes the digest; choosing another
// workflow of the module does too.
func TestOpenDigestCoversImportsAndTheChoice(t *testing.T) {
	dir := writeTree(t)
	before := mustOpen(t, File(filepath.Join(dir, "app.wf")), nil)
	lib := mustOpen(t, Source{Name: filepath.Join(dir, "app.wf"), Workflow: "Lib"}, nil)
	if lib.Name != "Lib" || lib.Digest == before.Digest {
		t.Fatalf("workflow Lib: name %q, digest %s (App's %s)", lib.Name, lib.Digest, before.Digest)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib", "lib.wf"), []byte(strings.Replace(libWF, `"hello"`, `"hi"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	after := mustOpen(t, File(filepath.Join(dir, "app.wf")), nil)
	if after.Digest == before.Digest {
		t.Fatal("digest unchanged after an imported file changed")
	}
	again := mustOpen(t, Stored(lib.Source), nil)
	if again.Name != "Lib" || again.Digest != lib.Digest {
		t.Fatalf("stored Lib opened as %q %s", again.Name, again.Digest)
	}
}

func TestOpenBytesAndOWF(t *testing.T) {
	w := mustOpen(t, Bytes("lib.wf", []byte(libWF)), nil)
	if w.Name != "Lib" || w.Plan == nil {
		t.Fatalf("bytes: %q", w.Name)
	}
	if _, err := Open(context.Background(), Bytes("app.wf", []byte(appWF)), nil); err == nil {
		t.Fatal("Bytes with an import opened")
	} else if !strings.Contains(err.Error(), "lib/lib.wf") {
		t.Fatalf("error does not name the import: %v", err)
	}
	owfPath := filepath.Join("..", "examples", "owf", "workflow.json")
	o := mustOpen(t, File(owfPath), nil)
	if o.Format != FormatOWF || o.Plan == nil {
		t.Fatalf("owf: format %s", o.Format)
	}
	s := mustOpen(t, Stored(o.Source), nil)
	if s.Format != FormatOWF || s.Digest != o.Digest || s.Fingerprint() != o.Fingerprint() {
		t.Fatalf("stored owf: %s %s, want %s", s.Format, s.Digest, o.Digest)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, File(filepath.Join(t.TempDir(), "missing.wf")), nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	dir := writeTree(t)
	_, err = Open(ctx, Source{Name: filepath.Join(dir, "app.wf"), Workflow: "Ap"}, nil)
	var nw *NoWorkflowError
	if !errors.As(err, &nw) || nw.Name != "Ap" || !strings.Contains(err.Error(), "did you mean \"App\"") {
		t.Errorf("unknown workflow: %v", err)
	}
	bad := strings.Replace(libWF, `action: "pass"`, `action: "nope"`, 1)
	w, err := Open(ctx, Bytes("bad.wf", []byte(bad)), &OpenOptions{HasAction: func(name string) bool { return name == "pass" }})
	var de *DiagnosticsError
	if !errors.As(err, &de) || w == nil || w.Plan != nil {
		t.Fatalf("unknown action: %v", err)
	}
	if !strings.Contains(err.Error(), "bad.wf:3") || !strings.Contains(err.Error(), "nope") {
		t.Errorf("error %q does not name bad.wf:5 and the action", err)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"garbage", "{", "not a canonical source"},
		{"version", `{"weft_source":2,"format":"wf","files":[{"name":"a.wf","text":""}]}`, "version 2"},
		{"escape", `{"weft_source":1,"format":"wf","files":[{"name":"../a.wf","text":""}]}`, "not a local path"},
		{"twice", `{"weft_source":1,"format":"wf","files":[{"name":"a.wf","text":""},{"name":"a.wf","text":""}]}`, "twice"},
		{"unknown field", `{"weft_source":1,"format":"wf","files":[],"x":1}`, "unknown field"},
	} {
		_, err := Open(ctx, Stored([]byte(tc.data)), nil)
		var se *SourceError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *SourceError saying %q", tc.name, err, tc.want)
		}
	}
}

// A diagnostic reported twice (the same subworkflow compiled from two
// places) is kept once.
func TestDedupe(t *testing.T) {
	d := flow.Diagnostic{Pos: flow.Pos{File: "a.wf", Line: 3, Col: 1}, Code: "x", Msg: "m"}
	e := d
	e.Msg = "other"
	got := dedupe(flow.Diagnostics{d, e, d})
	if len(got) != 2 || got[0].Msg != "m" || got[1].Msg != "other" {
		t.Fatalf("dedupe = %v", got)
	}
}
