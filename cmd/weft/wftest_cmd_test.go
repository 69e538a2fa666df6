package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestTestIntentQAExample(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "intentqa")
	if _, err := os.Stat(filepath.Join(dir, "intentqa.test.yaml")); err != nil {
		t.Skip("examples/intentqa has no test file yet")
	}
	r := weft(t, []string{"test", dir})
	r.wantCode(t, exitOK)
	if !regexp.MustCompile(`(?m)^[1-9][0-9]* passed, 0 failed\n\z`).MatchString(r.stdout) {
		t.Errorf("no closing line:\n%s", r.stdout)
	}
}

func TestTestFailingCase(t *testing.T) {
	r := weft(t, []string{"test", "testdata/tests"})
	r.wantCode(t, exitFailed)
	for _, want := range []string{"ok   summarization passes", "FAIL wrong expectation fails", `output.answer: want "Something else.", got "It was a good year."`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.HasSuffix(r.stdout, "1 passed, 1 failed\n") {
		t.Errorf("closing line:\n%s", r.stdout)
	}
}

func TestTestRunFilterAndTrace(t *testing.T) {
	r := weft(t, []string{"test", "testdata/tests/mixed.test.yaml", "--run", "passes$", "--trace"})
	r.wantCode(t, exitOK)
	if !strings.HasSuffix(r.stdout, "1 passed, 0 failed\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	for _, want := range []string{"--- testdata/tests/mixed.test.yaml: summarization passes\n", "    run started\n", "    finished at generate"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("trace lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "wrong expectation") {
		t.Errorf("the filtered-out case was traced:\n%s", r.stderr)
	}
}

func TestTestJSON(t *testing.T) {
	r := weft(t, []string{"test", "testdata/tests", "--json", "--trace"})
	r.wantCode(t, exitFailed)
	var rep testReportJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.Passed != 1 || rep.Failed != 1 || len(rep.Suites) != 1 || len(rep.Suites[0].Cases) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	c := rep.Suites[0].Cases[1]
	if c.Passed || len(c.Failures) != 1 || c.Status != "completed" {
		t.Errorf("failing case = %+v", c)
	}
	sc := bufio.NewScanner(strings.NewReader(r.stderr))
	n := 0
	for sc.Scan() {
		var line struct {
			Suite string         `json:"suite"`
			Case  string         `json:"case"`
			Event map[string]any `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Suite == "" || line.Case == "" || line.Event["type"] == nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		n++
	}
	if n == 0 {
		t.Error("no trace lines")
	}
}

func TestTestMissingPath(t *testing.T) {
	r := weft(t, []string{"test", "testdata/no_such_dir"})
	r.wantCode(t, exitUsage)
}
