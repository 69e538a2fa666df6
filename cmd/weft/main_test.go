package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/llm/llmtest"
)

// intentQA is the seed workflow, relative to this package.
const intentQA = "../../examples/intentqa/intentqa.wf"

// cliResult is what one in-process run of the CLI produced.
type cliResult struct {
	stdout, stderr string
	code           int
}

// weft runs the CLI in-process with args; opts adjust the env (stdin,
// terminal flags, clock).
func weft(t *testing.T, args []string, opts ...func(*env)) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr}
	for _, o := range opts {
		o(&e)
	}
	code := run(args, e)
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// weftProcess runs the weft binary buildWeft built with args, in this
// process's working directory and environment, as a separate process. Tests
// whose command spends minutes of CPU under the race detector (an
// evaluation over every TAT-QA question) run it this way: the code it runs
// is the code the in-process tests run under -race on small inputs.
func weftProcess(t *testing.T, args []string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(buildWeft(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("weft %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// wantCode fails the test unless the run exited with code.
func (r cliResult) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// withStdin makes stdin a terminal that types text.
func withTTYStdin(text string) func(*env) {
	return func(e *env) {
		e.stdin = strings.NewReader(text)
		e.stdinTTY = true
	}
}

// fakeClock is a clock tests advance by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// copyFile copies src into dir and returns the new path.
func copyFile(t *testing.T, src, dir string, perm os.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, perm); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestHelpListsExitCodes(t *testing.T) {
	r := weft(t, []string{"--help"})
	r.wantCode(t, exitOK)
	for _, want := range []string{"run", "validate", "fmt", "graph", "test", "version", "Exit codes:", "3  the run is waiting"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "Usage:"},
		{"unknown command", []string{"frob"}, `unknown command "frob"`},
		{"unknown flag", []string{"run", "--bogus", intentQA}, "unknown flag: --bogus"},
		{"missing argument", []string{"run"}, "want one workflow file"},
		{"too many arguments", []string{"graph", intentQA, intentQA}, "want one workflow file"},
		{"missing file", []string{"run", "testdata/no_such.wf"}, "no such file"},
		{"missing file validate", []string{"validate", "testdata/no_such.wf"}, "no such file"},
		{"bad format", []string{"graph", intentQA, "--format", "png"}, `--format "png"`},
		{"bad regexp", []string{"test", "testdata", "--run", "("}, "--run"},
		{"bad flag value", []string{"fmt", "-w=maybe", intentQA}, "invalid argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := weft(t, tc.args)
			r.wantCode(t, exitUsage)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	r := weft(t, []string{"version"})
	r.wantCode(t, exitOK)
	if !strings.HasPrefix(r.stdout, "weft ") || !strings.Contains(r.stdout, "go1.") {
		t.Errorf("version = %q", r.stdout)
	}
}

// panicWriter panics on every write.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("boom") }

func TestPanicIsInternalError(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"version"}, env{stdin: strings.NewReader(""), stdout: panicWriter{}, stderr: &stderr})
	if code != exitInternal || !strings.Contains(stderr.String(), "weft: internal error: boom") {
		t.Errorf("code %d, stderr %q", code, stderr.String())
	}
}

// openAIEnv returns the environment of a run whose --llm openai:MODEL
// talks to srv with the API key key.
func openAIEnv(srv *llmtest.Server, key string) func(string) string {
	return func(k string) string {
		switch k {
		case "OPENAI_BASE_URL":
			return srv.BaseURL()
		case "OPENAI_API_KEY":
			return key
		}
		return ""
	}
}
