package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weftlang/weft/store/sqlite"
)

// TestThreadWaitResumeHistoryFork walks the thread commands end to end on
// the seed: a run in a thread waits at ask_user and exits; a later
// `weft resume` (a new process, as far as the store knows) answers it
// without re-running identify_intent; history, show, list, fork and prune
// report and edit what the store holds.
func TestThreadWaitResumeHistoryFork(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	stubs := "testdata/intentqa_unclear.yaml"

	r := weft(t, []string{"run", intentQA, "--stubs", stubs, "--input", "hmm", "--thread", "q1", "--store", db})
	r.wantCode(t, exitWaiting)
	if !regexp.MustCompile(`^waiting at ask_user \(question \d+\): Could you clarify your request\?\n$`).MatchString(r.stdout) {
		t.Errorf("stdout = %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "weft resume q1 --store "+db+" --answer TEXT") {
		t.Errorf("stderr does not say how to resume: %q", r.stderr)
	}

	r = weft(t, []string{"threads", "show", "q1", "--store", db})
	r.wantCode(t, exitOK)
	for _, want := range []string{"thread:   q1", "workflow: IntentQA", "run:      1 (waiting)", "at ask_user: Could you clarify your request?"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}

	// A new run is refused while the thread waits.
	r = weft(t, []string{"run", intentQA, "--stubs", stubs, "--input", "again", "--thread", "q1", "--store", db})
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "waits for an answer") {
		t.Errorf("stderr = %q", r.stderr)
	}

	// resume takes the workflow file and the stubs from the thread.
	r = weft(t, []string{"resume", "q1", "--store", db, "--answer", "net income 2023", "--trace"})
	r.wantCode(t, exitOK)
	if r.stdout != "answer: Net income was $1.1M.\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	if strings.Contains(r.stderr, "identify_intent {") {
		t.Errorf("identify_intent ran again on resume:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, `retrieve {query: "net income 2023"}`) {
		t.Errorf("the answer did not reach retrieve:\n%s", r.stderr)
	}

	r = weft(t, []string{"threads", "history", "q1", "--store", db})
	r.wantCode(t, exitOK)
	for _, want := range []string{"(snapshot)  -> identify_intent", "identify_intent  identify_intent.intent=\"not_clear\"", "ask_user (answered)", "ask_user.query=\"net income 2023\"", "generate", "[completed,"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("history lacks %q:\n%s", want, r.stdout)
		}
	}
	r = weft(t, []string{"threads", "history", "q1", "--store", db, "--json"})
	r.wantCode(t, exitOK)
	var hist []struct {
		Seq    int64  `json:"seq"`
		Node   string `json:"node"`
		Kind   string `json:"kind"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &hist); err != nil {
		t.Fatal(err)
	}
	var askSeq int64
	for _, h := range hist {
		if h.Node == "identify_intent" {
			askSeq = h.Seq // right after it, the run goes to ask_user
		}
	}
	if askSeq == 0 {
		t.Fatalf("no identify_intent record in %+v", hist)
	}

	r = weft(t, []string{"threads", "list", "--store", db})
	r.wantCode(t, exitOK)
	if !regexp.MustCompile(`q1\s+IntentQA\s+1\s+completed`).MatchString(r.stdout) {
		t.Errorf("list = %q", r.stdout)
	}

	// Fork from where the run was about to ask, and answer differently.
	r = weft(t, []string{"threads", "fork", "q1", "--store", db, "--at", itoa(askSeq), "--to", "q2"})
	r.wantCode(t, exitOK)
	if r.stdout != "q2\n" || !strings.Contains(r.stderr, "weft resume q2") {
		t.Errorf("fork: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	r = weft(t, []string{"resume", "q2", "--store", db, "--json"})
	r.wantCode(t, exitWaiting)
	r = weft(t, []string{"resume", "q2", "--store", db, "--answer", "revenue 2019"})
	r.wantCode(t, exitOK)
	r = weft(t, []string{"threads", "show", "q2", "--store", db})
	for _, want := range []string{"forked:   from q1 at record " + itoa(askSeq), "run:      1 (completed)", `query = "revenue 2019"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show q2 lacks %q:\n%s", want, r.stdout)
		}
	}

	// A second run in q1 starts from the thread's state.
	r = weft(t, []string{"run", intentQA, "--stubs", stubs, "--input", "again", "--thread", "q1", "--store", db, "--answer", "cash flow"})
	r.wantCode(t, exitOK)
	r = weft(t, []string{"threads", "show", "q1", "--store", db, "--json"})
	var show struct {
		Run    int    `json:"run"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &show); err != nil || show.Run != 2 || show.Status != "completed" {
		t.Errorf("show after run 2: %+v %v\n%s", show, err, r.stdout)
	}
	r = weft(t, []string{"threads", "prune", "q1", "--store", db, "--keep", "1"})
	r.wantCode(t, exitOK)
	if !strings.HasPrefix(r.stdout, "removed ") {
		t.Errorf("prune: %q", r.stdout)
	}
	// The thread still loads after the prune.
	r = weft(t, []string{"threads", "show", "q1", "--store", db})
	r.wantCode(t, exitOK)

	r = weft(t, []string{"resume", "nope", "--store", db})
	r.wantCode(t, exitUsage)
	r = weft(t, []string{"resume", "q1", "--store", db})
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "has ended") {
		t.Errorf("resume of an ended run: %q", r.stderr)
	}
}

// TestThreadSeveralQuestionsCLI answers two questions of parallel branches
// by id.
func TestThreadSeveralQuestionsCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	src := writeFile(t, dir, "ask2.wf", `
workflow Ask2 {
  nodes {
    node begin {
      type: FUNCTION
      action: "noop"
      outputs {
        ok: Bool
      }
    }
    node ask_a {
      type: HUMAN
      question: "A?"
      outputs {
        a: String
      }
    }
    node ask_b {
      type: HUMAN
      question: "B?"
      outputs {
        b: String
      }
    }
    node both {
      type: FUNCTION
      action: "noop"
      inputs {
        a: ask_a.a
        b: ask_b.b
      }
      outputs {
        ok: Bool
      }
    }
    node done {
      type: END
      inputs {
        a: ask_a.a
        b: ask_b.b
      }
    }
  }
  edges {
    edge { from: begin; to: [ask_a, ask_b]; join: both }
    edge { from: ask_a; to: both }
    edge { from: ask_b; to: both }
    edge { from: both; to: done }
  }
  initial: begin
  finals: [ done ]
}
`)
	stubs := writeFile(t, dir, "stubs.yaml", "stubs:\n  noop: [{ok: true}, {ok: true}]\n")
	r := weft(t, []string{"run", src, "--stubs", stubs, "--thread", "p", "--store", db})
	r.wantCode(t, exitWaiting)
	ids := regexp.MustCompile(`waiting at (ask_\w) \(question (\d+)\)`).FindAllStringSubmatch(r.stdout, -1)
	if len(ids) != 2 {
		t.Fatalf("stdout = %q", r.stdout)
	}
	q := map[string]string{ids[0][1]: ids[0][2], ids[1][1]: ids[1][2]}
	if !strings.Contains(r.stderr, "--id ID --answer TEXT") {
		t.Errorf("stderr = %q", r.stderr)
	}
	r = weft(t, []string{"resume", "p", "--store", db, "--answer", "x"})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "asks 2 questions") {
		t.Errorf("stderr = %q", r.stderr)
	}
	r = weft(t, []string{"resume", "p", "--store", db, "--id", q["ask_b"], "--answer", "bee"})
	r.wantCode(t, exitWaiting)
	r = weft(t, []string{"resume", "p", "--store", db, "--id", q["ask_a"], "--answer", "ay", "--json"})
	r.wantCode(t, exitOK)
	var res struct {
		Status string `json:"status"`
		Path   []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Status != "completed" {
		t.Fatalf("result %+v %v", res, err)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestForkSetFromTheStoreAlone: `threads fork --set` types its values
// against the workflow the thread's spec names, read from the store, so
// it works, typed, once the .wf file and the stubs file are gone: a
// String slot set to 2019 holds the text "2019", not the number.
func TestForkSetFromTheStoreAlone(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "threads.db")
	src, err := os.ReadFile(intentQA)
	if err != nil {
		t.Fatal(err)
	}
	wf := writeFile(t, dir, "intentqa.wf", string(src))
	stubsSrc, err := os.ReadFile("testdata/intentqa_unclear.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stubs := writeFile(t, dir, "stubs.yaml", string(stubsSrc))
	weft(t, []string{"run", wf, "--stubs", stubs, "--input", "hmm", "--thread", "q1", "--store", db}).wantCode(t, exitWaiting)
	for _, p := range []string{wf, stubs} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	r := weft(t, []string{"threads", "fork", "q1", "--store", db, "--at", "2", "--to", "q2", "--set", "from_query=2019", "--set", "rephraseCount=3", "--json"})
	r.wantCode(t, exitOK)
	var fork struct {
		Thread string `json:"thread"`
		From   string `json:"from"`
		At     int64  `json:"at"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &fork); err != nil {
		t.Fatal(err, r.stdout)
	}
	if fork.Thread != "q2" || fork.From != "q1" || fork.At != 2 || fork.Status != "running" {
		t.Errorf("fork --json = %+v", fork)
	}
	r = weft(t, []string{"threads", "show", "q2", "--store", db, "--json"})
	r.wantCode(t, exitOK)
	var show struct {
		Vars map[string]any `json:"vars"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &show); err != nil {
		t.Fatal(err, r.stdout)
	}
	if show.Vars["from_query"] != "2019" || show.Vars["rephraseCount"] != float64(3) {
		t.Errorf("vars after fork --set = %#v, want from_query \"2019\" (a String), rephraseCount 3", show.Vars)
	}
	// A name the workflow does not have is refused, with the names it has.
	r = weft(t, []string{"threads", "fork", "q1", "--store", db, "--at", "2", "--to", "q3", "--set", "from_qury=x"})
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "from_query") {
		t.Errorf("stderr = %q, want a suggestion of from_query", r.stderr)
	}
}

// TestThreadsJSONShapes pins the JSON of threads history, show, list and
// prune: the service's typed values (service.HistoryEntry, State, Thread,
// PruneResult), times and sizes aside.
func TestThreadsJSONShapes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm", "--thread", "q1", "--store", db, "--answer", "net income 2023"}).wantCode(t, exitOK)
	mask := func(s string) string {
		s = regexp.MustCompile(`"(time|updated|created)": "[^"]+"`).ReplaceAllString(s, `"$1": T`)
		s = regexp.MustCompile(`"source": "sha256:[0-9a-f]{64}"`).ReplaceAllString(s, `"source": D`)
		return regexp.MustCompile(`"bytes": \d+`).ReplaceAllString(s, `"bytes": B`)
	}
	r := weft(t, []string{"threads", "history", "q1", "--store", db, "--from", "3", "--json"})
	r.wantCode(t, exitOK)
	var hist []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &hist); err != nil {
		t.Fatal(err, r.stdout)
	}
	// The record where the person's answer completed ask_user.
	var answer string
	for _, h := range hist {
		if h["kind"] == "answer" {
			b, _ := json.MarshalIndent(h, "", "  ")
			answer = mask(string(b))
		}
	}
	want := `{
  "answer": true,
  "bytes": B,
  "changes": [
    {
      "name": "ask_user.query",
      "value": "net income 2023"
    },
    {
      "name": "retrieve.query",
      "value": "net income 2023"
    },
    {
      "name": "from_query",
      "value": "net income 2023"
    }
  ],
  "kind": "answer",
  "next": [
    "retrieve"
  ],
  "node": "ask_user",
  "run": 1,
  "seq": 4,
  "status": "running",
  "step": 2,
  "time": T
}`
	if answer != want {
		t.Errorf("history --json, the answer's record:\n%s\nwant\n%s\nall:\n%s", answer, want, r.stdout)
	}
	if !strings.HasPrefix(r.stdout, "[\n  {\n    \"seq\": 3,") {
		t.Errorf("history --from 3 does not start at record 3:\n%s", r.stdout)
	}

	r = weft(t, []string{"threads", "list", "--store", db, "--json"})
	r.wantCode(t, exitOK)
	if want := "[\n  {\n    \"id\": \"q1\",\n    \"workflow\": \"IntentQA\",\n    \"source\": D,\n    \"runs\": 1,\n    \"status\": \"completed\",\n    \"created\": T,\n    \"updated\": T\n  }\n]\n"; mask(r.stdout) != want {
		t.Errorf("list --json:\n%s\nwant\n%s", mask(r.stdout), want)
	}

	r = weft(t, []string{"threads", "prune", "--store", db, "--keep", "1", "--json"})
	r.wantCode(t, exitOK)
	if want := "{\n  \"threads_pruned\": 0,\n  \"records_removed\": 0,\n  \"threads_deleted\": 0\n}\n"; r.stdout != want {
		t.Errorf("prune --json: %q, want %q", r.stdout, want)
	}
}

// TestForkSetOlderThread: a thread an older weft recorded keeps no run
// spec, only labels; fork --set types its values against the file its
// label names, and, when that file is gone, says so and reads them as
// JSON, else text.
func TestForkSetOlderThread(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "threads.db")
	src, err := os.ReadFile(intentQA)
	if err != nil {
		t.Fatal(err)
	}
	wf := writeFile(t, dir, "intentqa.wf", string(src))
	weft(t, []string{"run", wf, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "hmm", "--thread", "q1", "--store", db}).wantCode(t, exitWaiting)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	thr, err := st.Thread(ctx, "q1")
	if err != nil {
		t.Fatal(err)
	}
	thr.Spec, thr.Source, thr.Meta = nil, "", map[string]string{"file": wf}
	err = st.UpdateThread(ctx, thr)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	vars := func(thread string) map[string]any {
		t.Helper()
		r := weft(t, []string{"threads", "show", thread, "--store", db, "--json"})
		r.wantCode(t, exitOK)
		var show struct {
			Vars map[string]any `json:"vars"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &show); err != nil {
			t.Fatal(err, r.stdout)
		}
		return show.Vars
	}
	r := weft(t, []string{"threads", "fork", "q1", "--store", db, "--at", "2", "--to", "q2", "--set", "from_query=2019"})
	r.wantCode(t, exitOK)
	if v := vars("q2")["from_query"]; v != "2019" {
		t.Errorf("typed by the labelled file: from_query = %#v, want \"2019\"", v)
	}
	if err := os.Remove(wf); err != nil {
		t.Fatal(err)
	}
	r = weft(t, []string{"threads", "fork", "q1", "--store", db, "--at", "2", "--to", "q3", "--set", "from_query=2019"})
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stderr, "weft: the values of --set are not typed: the workflow of thread q1 does not open") {
		t.Errorf("stderr = %q", r.stderr)
	}
	if v := vars("q3")["from_query"]; v != float64(2019) {
		t.Errorf("untyped: from_query = %#v, want the JSON number 2019", v)
	}
}
