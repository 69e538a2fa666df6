package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRunQA(t *testing.T) {
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_qa.yaml", "--input", "What was revenue in 2023?"})
	r.wantCode(t, exitOK)
	if want := "answer: Revenue was $10.2M in FY2023.\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
	if r.stderr != "" {
		t.Errorf("stderr = %q, want nothing (not a terminal)", r.stderr)
	}
}

func TestRunJSON(t *testing.T) {
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_qa.yaml", "--input", "q", "--json"})
	r.wantCode(t, exitOK)
	var got struct {
		Status    string           `json:"status"`
		Final     string           `json:"final"`
		Outputs   map[string]any   `json:"outputs"`
		Vars      map[string]any   `json:"vars"`
		Path      []string         `json:"path"`
		Steps     int              `json:"steps"`
		Waiting   []map[string]any `json:"waiting"`
		Error     *string          `json:"error"`
		Fallbacks []any            `json:"fallbacks"`
		Notices   []any            `json:"notices"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not the result object: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Errorf("more than one JSON value on stdout:\n%s", r.stdout)
	}
	wantPath := []string{"identify_intent", "retrieve", "evaluate", "generate"}
	if got.Status != "completed" || got.Final != "generate" || got.Steps != 4 || !reflect.DeepEqual(got.Path, wantPath) {
		t.Errorf("result = %+v", got)
	}
	if got.Outputs["answer"] != "Revenue was $10.2M in FY2023." {
		t.Errorf("outputs = %v", got.Outputs)
	}
	if got.Vars["rephraseCount"] != float64(0) {
		t.Errorf("vars = %v", got.Vars)
	}
	if got.Error != nil || len(got.Waiting) != 0 {
		t.Errorf("error = %v, waiting = %v", got.Error, got.Waiting)
	}
	if got.Fallbacks == nil || len(got.Fallbacks) != 0 || got.Notices == nil || len(got.Notices) != 0 {
		t.Errorf("fallbacks = %#v, notices = %#v: want empty lists", got.Fallbacks, got.Notices)
	}
}

func TestRunWaitingWithoutAnswer(t *testing.T) {
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm"})
	r.wantCode(t, exitWaiting)
	if want := "waiting at ask_user: Could you clarify your request?\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
	if !strings.Contains(r.stderr, "--answer") {
		t.Errorf("stderr does not say how to answer: %q", r.stderr)
	}

	r = weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--json"})
	r.wantCode(t, exitWaiting)
	var got struct {
		Status  string `json:"status"`
		Waiting []struct {
			Node     string `json:"node"`
			Question string `json:"question"`
		} `json:"waiting"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "waiting" || len(got.Waiting) != 1 || got.Waiting[0].Node != "ask_user" || got.Waiting[0].Question != "Could you clarify your request?" {
		t.Errorf("result = %+v", got)
	}
}

func TestRunWithAnswer(t *testing.T) {
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm", "--answer", "net income 2023", "--trace=full"})
	r.wantCode(t, exitOK)
	if want := "answer: Net income was $1.1M.\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
	// The trace shows the answer flowing into retrieve through the override.
	for _, want := range []string{
		"step 2: ask_user {question: \"Could you clarify your request?\"}",
		"step 2: ask_user -> {query: \"net income 2023\"}",
		"step 3: retrieve {query: \"net income 2023\"}",
		"finished at generate",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("trace lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestRunInteractive(t *testing.T) {
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm"}, withTTYStdin("net income 2023\n"))
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stderr, "ask_user asks: Could you clarify your request?\n> ") {
		t.Errorf("stderr lacks the question and prompt:\n%q", r.stderr)
	}
	if want := "answer: Net income was $1.1M.\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}

	// stdin ends before an answer: the run is left waiting.
	r = weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml"}, withTTYStdin(""))
	r.wantCode(t, exitWaiting)
}

func TestRunFailure(t *testing.T) {
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_exhausted.yaml", "--input", "q"})
	r.wantCode(t, exitFailed)
	want := `weft: node rephrase (step 4) failed: stub list for action "rephrase_query" ran out after 0 calls`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q", r.stdout)
	}

	r = weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_exhausted.yaml", "--json"})
	r.wantCode(t, exitFailed)
	var got struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "failed" || !strings.Contains(got.Error, "node rephrase (step 4) failed") {
		t.Errorf("result = %+v", got)
	}
}

func TestRunUnknownActions(t *testing.T) {
	r := weft(t, []string{"run", intentQA})
	r.wantCode(t, exitFailed)
	for _, want := range []string{
		`intentqa.wf:7:5: node identify_intent: unknown action "identify_user_intent"`,
		"    node identify_intent {\n    ^\n",
		"--stubs",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestRunLoadErrors(t *testing.T) {
	r := weft(t, []string{"run", "testdata/syntax_error.wf"})
	r.wantCode(t, exitFailed)
	want := "testdata/syntax_error.wf:7:11: expected \":\" after \"y\", found \"String\"\n        y String\n          ^\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
}

func TestRunTraceJSON(t *testing.T) {
	// Answering resumes the run; the trace's seq keeps counting.
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--answer", "x", "--trace", "--json"})
	r.wantCode(t, exitOK)
	var types []string
	sc := bufio.NewScanner(strings.NewReader(r.stderr))
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			Seq  int    `json:"seq"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("trace line %q is not JSON: %v", sc.Text(), err)
		}
		types = append(types, ev.Type)
		if ev.Seq != len(types) {
			t.Errorf("event %d has seq %d", len(types), ev.Seq)
		}
	}
	if len(types) == 0 || types[0] != "run_started" || types[len(types)-1] != "run_finished" {
		t.Errorf("event types = %v", types)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res["status"] != "completed" {
		t.Errorf("stdout = %s (%v)", r.stdout, err)
	}
}

// startedInputs returns the inputs of the first node_started event of an
// NDJSON trace.
func startedInputs(t *testing.T, trace string) map[string]any {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(trace))
	for sc.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Inputs []struct {
				Name  string `json:"name"`
				Value any    `json:"value"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		if ev.Type == "node_started" {
			m := map[string]any{}
			for _, in := range ev.Inputs {
				m[in.Name] = in.Value
			}
			return m
		}
	}
	t.Fatalf("no node_started event in\n%s", trace)
	return nil
}

func TestRunVarTyping(t *testing.T) {
	r := weft(t, []string{"run", "testdata/params.wf", "--stubs", "testdata/params_stubs.yaml", "--trace", "--json",
		"--var", "limit=5", "--var", `tags=["a","b"]`, "--var", "name=42", "--var", "strict=true"})
	r.wantCode(t, exitOK)
	got := startedInputs(t, r.stderr)
	want := map[string]any{"input_text": "", "limit": float64(5), "tags": []any{"a", "b"}, "name": "42", "strict": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inputs = %#v, want %#v", got, want)
	}

	// Defaults apply; a quoted JSON string is decoded.
	r = weft(t, []string{"run", "testdata/params.wf", "--stubs", "testdata/params_stubs.yaml", "--trace", "--json",
		"--var", "limit=1", "--var", `name="Ada"`})
	r.wantCode(t, exitOK)
	got = startedInputs(t, r.stderr)
	want = map[string]any{"input_text": "", "limit": float64(1), "tags": []any{}, "name": "Ada", "strict": false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inputs = %#v, want %#v", got, want)
	}
}

func TestRunVarErrors(t *testing.T) {
	base := []string{"run", "testdata/params.wf", "--stubs", "testdata/params_stubs.yaml"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown", []string{"--var", "limit=1", "--var", "limt=2"}, `--var limt=2: workflow Params has no parameter or variable limt; did you mean "limit"? (parameters: input_text, limit, tags, name, strict)`},
		{"bad type", []string{"--var", "limit=lots"}, `--var limit=lots: parameter limit (Int): want Int, got String "lots"`},
		{"bad list", []string{"--var", "limit=1", "--var", "tags=[1,2]"}, "--var tags=[1,2]: parameter tags (List[String]): want String at [0], got Int 1"},
		{"no equals", []string{"--var", "limit"}, `--var "limit": want NAME=VALUE`},
		{"required", nil, "parameter limit (Int) is required: pass --var limit=VALUE"},
		{"input twice", []string{"--var", "limit=1", "--input", "a", "--var", "input_text=b"}, "input_text is already set by --input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := weft(t, append(append([]string{}, base...), tc.args...))
			r.wantCode(t, exitUsage)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
		})
	}
}

func TestRunBadAnswer(t *testing.T) {
	// ask_user's output is a String, so any text fits; a bad answer needs
	// a typed output: the Int year of a human node.
	r := weft(t, []string{"run", "testdata/ask_year.wf", "--answer", "last year"})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, `--answer "last year" for ask:`) {
		t.Errorf("stderr = %q", r.stderr)
	}
	r = weft(t, []string{"run", "testdata/ask_year.wf", "--answer", "2023"})
	r.wantCode(t, exitOK)
	if r.stdout != "year: 2023\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	// On a terminal a bad answer is asked again.
	r = weft(t, []string{"run", "testdata/ask_year.wf"}, withTTYStdin("last year\n2024\n"))
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stderr, "try again") || r.stdout != "year: 2024\n" {
		t.Errorf("stdout = %q, stderr = %q", r.stdout, r.stderr)
	}
}

func TestRunStatusLine(t *testing.T) {
	clock := &fakeClock{}
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_qa.yaml"}, func(e *env) {
		e.stderrTTY = true
		e.now = clock.now
	})
	r.wantCode(t, exitOK)
	for _, want := range []string{"\r▶ step 1 · identify_intent · 0.0s\x1b[K", "\r▶ step 4 · generate · 0.0s\x1b[K"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%q", want, r.stderr)
		}
	}
	if !strings.HasSuffix(r.stderr, "\r\x1b[K") {
		t.Errorf("the status line is not cleared at the end: %q", r.stderr)
	}
	// --trace replaces the status line.
	r = weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_qa.yaml", "--trace"}, func(e *env) { e.stderrTTY = true })
	if strings.Contains(r.stderr, "▶") {
		t.Errorf("status line drawn with --trace:\n%q", r.stderr)
	}
}

func TestRunStatusLineTicker(t *testing.T) {
	// Timed redraws run on their own goroutine; under -race this checks
	// that they do not race with the events.
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--answer", "x"}, func(e *env) {
		e.stderrTTY = true
		e.tick = time.Microsecond
	})
	r.wantCode(t, exitOK)
	if !strings.HasSuffix(r.stderr, "\r\x1b[K") {
		t.Errorf("the status line is not cleared at the end: %q", r.stderr)
	}
}

func TestRunStubProblems(t *testing.T) {
	r := weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_partial.yaml"})
	r.wantCode(t, exitFailed)
	for _, want := range []string{
		`weft: warning: --stubs: no node of IntentQA calls an action "sumarize"; did you mean "summarize"?`,
		"has no stub for rephrase_query, summarize;",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	r = weft(t, []string{"run", intentQA, "--stubs", "testdata/bad_stubs.yaml"})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "weft: --stubs: ") || !strings.Contains(r.stderr, "bad_stubs.yaml") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	r = weft(t, []string{"run", intentQA, "--stubs", "testdata/no_such.yaml"})
	r.wantCode(t, exitUsage)
}

// TestRunMapByValue runs a map through the built-in pass action, as the
// attack did, and checks each element's outputs, without and with a
// thread.
func TestRunMapByValue(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	for _, args := range [][]string{
		{"run", "testdata/map_pass.wf", "--json"},
		{"run", "testdata/map_pass.wf", "--json", "--thread", "m1", "--store", db},
	} {
		r := weft(t, args)
		r.wantCode(t, exitOK)
		var got struct {
			Outputs map[string][]int `json:"outputs"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, r.stdout)
		}
		want := map[string][]int{"a": {10, 20, 30, 40, 50}, "b": {20, 40, 60, 80, 100}}
		if !reflect.DeepEqual(got.Outputs, want) {
			t.Errorf("%v: outputs = %v, want %v", args, got.Outputs, want)
		}
	}
}

// TestRunVarSetsVariable: --var gives a workflow variable its starting
// value (seed 000 has no parameters; rephraseCount is a variable), in a
// plain run and in a thread.
func TestRunVarSetsVariable(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	for _, extra := range [][]string{nil, {"--store", store, "--thread", "v1"}} {
		args := append([]string{"run", "../../examples/intentqa/intentqa.wf", "--stubs", "../../examples/intentqa/demo.stubs.yaml",
			"--input", "What was the 2019 revenue?", "--json", "--var", "rephraseCount=3"}, extra...)
		r := weft(t, args)
		r.wantCode(t, exitOK)
		var res struct {
			Vars map[string]any `json:"vars"`
			Path []string       `json:"path"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		// Starting at 3, the first BAD judgement goes to generate with the error source.
		if res.Vars["rephraseCount"] != float64(3) || !reflect.DeepEqual(res.Path, []string{"identify_intent", "retrieve", "evaluate", "generate"}) {
			t.Errorf("%v: vars %v, path %v; want rephraseCount 3 and path identify_intent, retrieve, evaluate, generate", extra, res.Vars, res.Path)
		}
	}
}

// TestRunVarVariableErrors: a variable's value is checked against its
// declared type, with an error naming the variable; an unknown name lists
// the parameters and the variables.
func TestRunVarVariableErrors(t *testing.T) {
	base := []string{"run", "../../examples/intentqa/intentqa.wf", "--stubs", "../../examples/intentqa/demo.stubs.yaml", "--input", "q"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad type", []string{"--var", "rephraseCount=two"}, `--var rephraseCount=two: variable rephraseCount (Int): want Int, got String "two"`},
		{"unknown", []string{"--var", "rephraseCnt=1"}, `--var rephraseCnt=1: workflow IntentQA has no parameter or variable rephraseCnt; did you mean "rephraseCount"? (parameters: input_text; variables: rephraseCount)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := weft(t, append(append([]string{}, base...), tc.args...))
			r.wantCode(t, exitUsage)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
		})
	}
}

// TestRunAnswersTwoQuestions answers a run that asks twice, in memory:
// each answer resumes the result the last one returned (a Result is
// resumed once), and the run ends with the second answer.
func TestRunAnswersTwoQuestions(t *testing.T) {
	src := `
workflow Two {
  nodes {
    node first {
      type: HUMAN
      question: "First?"
      outputs {
        a: String
      }
    }
    node second {
      type: HUMAN
      question: "Second?"
      outputs {
        b: String
      }
    }
  }
  edges {
    edge { from: first; to: second }
  }
  initial: first
  finals: [ second ]
}
`
	path := filepath.Join(t.TempDir(), "two.wf")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weft(t, []string{"run", path, "--answer", "one", "--answer", "two"})
	r.wantCode(t, exitOK)
	if want := "b: two\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q (stderr %q)", r.stdout, want, r.stderr)
	}
}
