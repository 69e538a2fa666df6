package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateThreeErrors(t *testing.T) {
	r := weft(t, []string{"validate", "testdata/three_errors.wf"})
	r.wantCode(t, exitFailed)
	for _, want := range []string{
		"testdata/three_errors.wf:22:32: edge classify -> done, condition: \"maybe\" is not a value of Enum[\"yes\",\"no\"]\n           condition: label == \"maybe\"\n                               ^\n",
		"testdata/three_errors.wf:24:32: edge from classify to unknown node \"nowhere\"\n",
		"testdata/three_errors.wf:25:23: edge classify -> nowhere, condition: unknown name counter\n           condition: counter > 2\n                      ^\n",
		"testdata/three_errors.wf: 3 errors, 0 warnings\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestValidateOK(t *testing.T) {
	r := weft(t, []string{"validate", intentQA, "testdata/params.wf"})
	r.wantCode(t, exitOK)
	want := intentQA + ": ok (7 nodes, 10 edges)\ntestdata/params.wf: ok (1 node, 0 edges)\n"
	if r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
}

// A file that only binds the actions of a workflow it imports is counted
// by the workflows it checked.
func TestValidateImportOnly(t *testing.T) {
	app := filepath.Join("..", "..", "examples", "intentqa", "app.wf")
	r := weft(t, []string{"validate", app})
	r.wantCode(t, exitOK)
	if want := app + ": ok (7 nodes, 10 edges)\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
}

func TestValidateSeveralFilesOneBad(t *testing.T) {
	r := weft(t, []string{"validate", intentQA, "testdata/syntax_error.wf"})
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stdout, "intentqa.wf: ok") || !strings.Contains(r.stdout, "testdata/syntax_error.wf: 1 error, 0 warnings") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func TestValidateStubsChecksActions(t *testing.T) {
	r := weft(t, []string{"validate", intentQA, "--stubs", "testdata/params_stubs.yaml"})
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stdout, `unknown action "identify_user_intent"`) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	r = weft(t, []string{"validate", intentQA, "--stubs", "testdata/intentqa_qa.yaml"})
	r.wantCode(t, exitOK)
}

func TestValidateJSON(t *testing.T) {
	r := weft(t, []string{"validate", "--json", "testdata/three_errors.wf", intentQA})
	r.wantCode(t, exitFailed)
	var got []diagJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(got) != 3 {
		t.Fatalf("%d diagnostics, want 3: %+v", len(got), got)
	}
	want := []struct{ line, col int }{{22, 32}, {24, 32}, {25, 23}}
	for i, d := range got {
		if d.File != "testdata/three_errors.wf" || d.Line != want[i].line || d.Col != want[i].col || d.Severity != "error" || d.Code == "" || d.Message == "" {
			t.Errorf("diagnostic %d = %+v", i, d)
		}
	}

	r = weft(t, []string{"validate", "--json", intentQA})
	r.wantCode(t, exitOK)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("stdout = %q, want []", r.stdout)
	}
}

// import "/proc/self/environ" is refused at the import, and nothing of the
// environment (where API keys live) is printed; nor is anything of a file
// a symbolic link leads to outside the root file's directory.
func TestValidateImportOfEnvironIsRefused(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.wf")
	if err := os.WriteFile(app, []byte("import \"/proc/self/environ\"\nimport \"env.wf\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/environ", filepath.Join(dir, "env.wf")); err != nil {
		t.Skip(err)
	}
	t.Setenv("WEFT_TEST_SECRET", "sk-planted-0123456789")
	for _, args := range [][]string{{"validate", app}, {"validate", "--json", app}} {
		r := weft(t, args)
		r.wantCode(t, exitFailed)
		out := r.stdout + r.stderr
		if strings.Contains(out, "sk-planted") || strings.Contains(out, "PATH=") || strings.Contains(out, "HOME=") {
			t.Errorf("%v prints the environment:\n%s", args, out)
		}
		for _, want := range []string{"/proc/self/environ", "only .wf files can be imported", "the file is outside the directory of the root file"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
	}
}

// One huge line (of .wf or of JSON) gives diagnostics of a few KB, not a
// copy of the line, in text and in --json.
func TestValidateHugeLineIsClipped(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("Q", 1<<20)
	files := map[string]string{
		"big.wf":   "workflow W { nodes { node a { type: " + huge + " } } initial: a finals: [a] }\n",
		"big.json": `{"tasks":[{"id":"a","x":"` + huge + `","type": zz}],"steps":[]}`,
	}
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"validate", path}, {"validate", "--json", path}} {
			r := weft(t, args)
			r.wantCode(t, exitFailed)
			if n := len(r.stdout) + len(r.stderr); n > 8<<10 || len(args) == 2 && !strings.Contains(r.stdout, "…") {
				t.Errorf("%v: %d bytes of output:\n%.500s", args, n, r.stdout)
			}
		}
	}
}

// TestValidateNoWorkflow: a file that declares no workflow (empty, only
// comments, or only actions that nothing validated here imports) fails, as
// `weft run` of it does; a file of actions imported by another file of the
// same run is checked through it.
func TestValidateNoWorkflow(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.wf")
	comments := filepath.Join(dir, "comments.wf")
	actions := filepath.Join(dir, "actions.wf")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(comments, []byte("// nothing but a comment\n"), 0o644)
	os.WriteFile(actions, []byte("action greet {\n  type: LLM\n  prompt: \"Say hello.\"\n}\n"), 0o644)
	for _, tc := range []struct{ path, want string }{
		{empty, empty + ": declares no workflow\n" + empty + ": 1 error, 0 warnings\n"},
		{comments, comments + ": declares no workflow\n" + comments + ": 1 error, 0 warnings\n"},
		{actions, actions + ": declares no workflow, only actions (validate the file that imports them)\n" + actions + ": 1 error, 0 warnings\n"},
	} {
		r := weft(t, []string{"validate", tc.path})
		r.wantCode(t, exitFailed)
		if r.stdout != tc.want {
			t.Errorf("validate %s: stdout = %q, want %q", filepath.Base(tc.path), r.stdout, tc.want)
		}
		if r := weft(t, []string{"run", tc.path}); r.code != exitFailed || !strings.Contains(r.stderr, "declares no workflow") {
			t.Errorf("run %s: exit %d, stderr %q; want 1 and \"declares no workflow\"", filepath.Base(tc.path), r.code, r.stderr)
		}
	}
	// sqlanalyst's prompts.wf is imported by sqlanalyst.wf: checked through it.
	sq := filepath.Join("..", "..", "examples", "sqlanalyst")
	r := weft(t, []string{"validate", sq})
	r.wantCode(t, exitOK)
	if want := filepath.Join(sq, "prompts.wf") + ": ok (actions only, imported by " + filepath.Join(sq, "sqlanalyst.wf") + ")\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("validate %s: stdout lacks %q:\n%s", sq, want, r.stdout)
	}
}

// TestFileNamesEscaped: a file name with control characters, found under
// a directory, is printed escaped by validate's summary and by fmt -l, as
// in diagnostics.
func TestFileNamesEscaped(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a\x1b[2Jb.wf")
	if err := os.WriteFile(name, []byte("workflow X {\n  nodes {\n    node a {\n      type: END\n    }\n  }\n  initial: a\n  finals: [ a ]\n}\n"), 0o644); err != nil {
		t.Skipf("this file system refuses the name: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "c\x1b[2Jd.wf"), []byte("workflow Y {\n  nodes { node b { type: END } }\n initial: b\n finals: [b]\n}\n"), 0o644)
	r := weft(t, []string{"validate", dir})
	r.wantCode(t, exitOK)
	if want := dir + `/a\x1b[2Jb.wf: ok (1 node, 0 edges)`; !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "\x1b") {
		t.Errorf("validate: stdout %q; want it to hold %q and no raw escape", r.stdout, want)
	}
	r = weft(t, []string{"fmt", "-l", dir})
	if want := dir + `/c\x1b[2Jd.wf` + "\n"; r.stdout != want {
		t.Errorf("fmt -l: stdout %q, want %q", r.stdout, want)
	}
}

// TestBinaryFileDiagnostics: a binary file given as a workflow (here
// 256 KiB of every byte value) is reported with its bytes escaped and the
// output bounded, by every command that reads a workflow.
func TestBinaryFileDiagnostics(t *testing.T) {
	dir := t.TempDir()
	bin := make([]byte, 256<<10)
	for i := range bin {
		bin[i] = byte(i*7 + i/256)
	}
	for _, name := range []string{"bin.wf", "bin.json"} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, bin, 0o644)
		for _, args := range [][]string{{"validate", path}, {"run", path}, {"graph", path}, {"fmt", path}, {"convert", path}} {
			r := weft(t, args)
			if r.code == exitOK {
				t.Errorf("%v: exit 0", args)
			}
			out := r.stdout + r.stderr
			for _, c := range out {
				if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
					t.Errorf("%v: output holds %U raw:\n%q", args, c, out)
					break
				}
			}
			if len(out) > 8<<10 {
				t.Errorf("%v: %d bytes of output, want at most 8 KiB", args, len(out))
			}
		}
	}
}

// TestValidatePassMismatch: a type mismatch through the built-in pass is
// found by validate (and so before run starts), naming the node, the
// output and the input.
func TestValidatePassMismatch(t *testing.T) {
	r := weft(t, []string{"validate", "testdata/pass_mismatch.wf"})
	r.wantCode(t, exitFailed)
	if want := "testdata/pass_mismatch.wf:18:5: node done: action \"pass\" sets output reply (String) from input answer_text, of type Int\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	r = weft(t, []string{"run", "testdata/pass_mismatch.wf", "--stubs", "testdata/params_stubs.yaml"})
	if r.code != exitFailed || !strings.Contains(r.stderr, `action "pass" sets output reply (String)`) {
		t.Errorf("run: exit %d, stderr %q", r.code, r.stderr)
	}
}
