package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/tool"
	. "github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/sqlite"
)

// askWF asks a model to draft a reply, asks a person to approve it, and
// ends with both.
const askWF = `action draft {
  type: LLM
  prompt: "Draft a reply to: {{input_text}}"
}

workflow Review {
  variables {
    drafts: Int = 0
  }
  nodes {
    node write {
      type: LLM
      action: "draft"
      outputs {
        text: String
      }
    }
    node approve {
      type: HUMAN
      question: "Send this reply?"
      outputs {
        ok: Bool
      }
    }
    node done {
      type: FUNCTION
      action: "pass"
      inputs {
        reply: write.text
        approved: approve.ok
      }
      outputs {
        text: String
        ok: Bool
      }
    }
  }
  edges {
    edge { from: write; to: approve }
    edge { from: approve; to: done }
  }
  initial: write
  finals: [ done ]
}
`

func openStore(t *testing.T) (store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "threads.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

func newService(t *testing.T, st store.Store, env map[string]string) *Service {
	t.Helper()
	reg, err := builtin.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Store: st, Components: reg, Env: &component.Env{Getenv: func(k string) string { return env[k] }}, LeaseTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A thread started by one Service is resumed by another that shares only
// the store: the workflow comes from its stored source, the model from its
// spec, the API key from the second one's environment.
func TestResumeFromTheStoreAlone(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.NewOpenAIServer(llmtest.Text("We will ship on Monday."))
	defer srv.Close()
	const key = "sk-test-SECRET-0123456789"
	st, _ := openStore(t)
	a := newService(t, st, map[string]string{"TEST_KEY": key})
	wf, err := a.Open(ctx, File(writeFile(t, "review.wf", askWF)))
	if err != nil {
		t.Fatal(err)
	}
	model := component.Spec{ID: "llm.openai", Config: json.RawMessage(`{"base_url":"` + srv.URL + `/v1","model":"gpt-test","api_key":{"env":"TEST_KEY"}}`)}
	res, err := a.Start(ctx, StartRequest{Workflow: wf, Thread: "th-1", Components: []component.Spec{model}, Input: map[string]flow.Value{flow.InputText: flow.StringValue("When do we ship?")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.Waiting || len(res.Waiting) != 1 || res.Waiting[0].Node != "approve" || res.Thread != "th-1" || res.Run != 1 {
		t.Fatalf("first run: %+v", res)
	}
	thr, err := st.Thread(ctx, "th-1")
	if err != nil {
		t.Fatal(err)
	}
	if thr.Source != wf.Digest || !strings.Contains(string(thr.Spec), `"env":"TEST_KEY"`) || strings.Contains(string(thr.Spec), key) {
		t.Fatalf("stored thread: source %s (want %s), spec %s", thr.Source, wf.Digest, thr.Spec)
	}

	// Another process: nothing but the store and its own environment.
	b := newService(t, st, map[string]string{"TEST_KEY": key})
	res, err = b.Resume(ctx, ResumeRequest{Thread: "th-1", Answers: []Answer{{Text: "true"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.Completed || res.Outputs.Get("text").Str() != "We will ship on Monday." || !res.Outputs.Get("ok").Bool() {
		t.Fatalf("resumed: %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Request.Model != "gpt-test" || !strings.Contains(reqs[0].Request.Messages[len(reqs[0].Request.Messages)-1].Content, "When do we ship?") {
		t.Fatalf("the model got %d requests: %+v", len(reqs), reqs)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("Authorization %q", got)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"outputs":{"text":"We will ship on Monday.","ok":true}`) || !strings.Contains(string(out), `"thread":"th-1","run":1,"status":"completed"`) {
		t.Errorf("JSON: %s", out)
	}
}

// An answer is typed against the node that asks: a wrong one is an
// *AnswerError and changes nothing; an id no question has is an
// *engine.QuestionError.
func TestResumeChecksAnswers(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	s := newService(t, st, nil)
	wf, err := s.Open(ctx, Bytes("ask.wf", []byte(askYearWF)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Start(ctx, StartRequest{Workflow: wf, Thread: "q"})
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("start: %v %+v", err, res)
	}
	_, err = s.Resume(ctx, ResumeRequest{Thread: "q", Answers: []Answer{{Text: "last year"}}})
	var ae *AnswerError
	if !errors.As(err, &ae) || ae.Output != "year" {
		t.Fatalf("bad answer: %v", err)
	}
	_, err = s.Resume(ctx, ResumeRequest{Thread: "q", Answers: []Answer{{ID: "99", Text: "2023"}}})
	var qe *engine.QuestionError
	if !errors.As(err, &qe) || qe.ID != "99" || len(qe.Waiting) != 1 {
		t.Fatalf("wrong id: %v", err)
	}
	res, err = s.Resume(ctx, ResumeRequest{Thread: "q", Answers: []Answer{{ID: res.Waiting[0].ID, Values: map[string]flow.Value{"year": flow.IntValue(2023)}}}})
	if err != nil || res.Status != engine.Completed || res.Outputs.Get("year").Int() != 2023 {
		t.Fatalf("resume: %v %+v", err, res)
	}
}

func TestStartRefusesMissingActions(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	s := newService(t, st, nil)
	wf, err := s.Open(ctx, Bytes("m.wf", []byte(`workflow M {
  nodes {
    node a {
      type: FUNCTION
      action: "lookup_order"
      outputs { x: String }
    }
  }
  initial: a
  finals: [ a ]
}
`)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Start(ctx, StartRequest{Workflow: wf})
	var me *MissingActionsError
	if !errors.As(err, &me) || len(me.Actions) != 1 || me.Actions[0] != "lookup_order" {
		t.Fatalf("err = %v", err)
	}
	threads, err := s.Threads(ctx, store.ListOptions{})
	if err != nil || len(threads) != 0 {
		t.Fatalf("a refused run left threads %v (%v)", threads, err)
	}
}

// Cancel ends a run in progress; its error wraps ErrCancelled.
func TestCancel(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	started := make(chan struct{})
	acts := engine.NewRegistry()
	if err := acts.Register("wait_forever", engine.Func(func(ctx context.Context, _ map[string]flow.Value) (map[string]flow.Value, error) {
		close(started)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Store: st, Actions: acts, LeaseTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wf, err := s.Open(ctx, Bytes("w.wf", []byte(`workflow W {
  nodes {
    node a {
      type: FUNCTION
      action: "wait_forever"
      outputs { x: String }
    }
  }
  initial: a
  finals: [ a ]
}
`)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *Result, 1)
	var runErr error
	go func() {
		res, err := s.Start(ctx, StartRequest{Workflow: wf, Thread: "c"})
		runErr = err
		done <- res
	}()
	<-started
	// One run of a thread at a time in a Service.
	if _, err := s.Resume(ctx, ResumeRequest{Thread: "c"}); !errors.Is(err, ErrBusy) || engine.KindOf(err) != engine.KindConflict {
		t.Fatalf("a second run of the thread while one goes on: %v (kind %s); want ErrBusy, conflict", err, engine.KindOf(err))
	}
	if err := s.Cancel(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res == nil || res.Status != engine.Cancelled || !errors.Is(runErr, ErrCancelled) || engine.KindOf(runErr) != engine.KindCancelled {
			t.Fatalf("cancelled run: %+v, %v (kind %s)", res, runErr, engine.KindOf(runErr))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled run did not end")
	}
	if err := s.Cancel(ctx, "c"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Cancel after the end: %v", err)
	}
	runs, err := st.Runs(ctx, "c")
	if err != nil || len(runs) != 1 || runs[0].Status != store.Cancelled {
		t.Fatalf("stored runs: %+v, %v", runs, err)
	}
	if _, err := s.Resume(ctx, ResumeRequest{Thread: "c"}); engine.KindOf(err) != engine.KindEnded {
		t.Fatalf("resuming a cancelled run: %v (kind %s)", err, engine.KindOf(err))
	}
}

// WrapAction sees every action a run carries out: here it redacts a
// credential an action's error quotes.
func TestWrapActionRedacts(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	acts := engine.NewRegistry()
	if err := acts.Register("call_api", engine.Func(func(context.Context, map[string]flow.Value) (map[string]flow.Value, error) {
		return nil, errors.New("401 from https://api.example.com?key=SECRET-123")
	})); err != nil {
		t.Fatal(err)
	}
	var wrapped []string
	s, err := New(Options{Store: st, Actions: acts, LeaseTTL: -1, WrapAction: func(name string, a engine.Action) engine.Action {
		wrapped = append(wrapped, name)
		return engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
			err := a.Run(ctx, c)
			if err != nil {
				return errors.New(strings.ReplaceAll(err.Error(), "SECRET-123", "[redacted]"))
			}
			return nil
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wf, err := s.Open(ctx, Bytes("w.wf", []byte(`workflow W {
  nodes {
    node a {
      type: FUNCTION
      action: "call_api"
      outputs { x: String }
    }
  }
  initial: a
  finals: [ a ]
}
`)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Start(ctx, StartRequest{Workflow: wf, Thread: "r"})
	if err == nil || res.Status != engine.Failed || strings.Contains(err.Error(), "SECRET") || !strings.Contains(*res.Error, "[redacted]") {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if !slices.Contains(wrapped, "call_api") || !slices.Contains(wrapped, "pass") {
		t.Errorf("wrapped %v", wrapped)
	}
	runs, err := st.Runs(ctx, "r")
	if err != nil || len(runs) != 1 || strings.Contains(runs[0].Error, "SECRET") {
		t.Fatalf("stored run: %+v %v", runs, err)
	}
}

// Run and Continue: an in-memory run, in no thread, answered in this
// process; a refused answer leaves the Result waiting, a spent one is
// stale.
func TestRunInMemory(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	s := newService(t, st, nil)
	wf, err := s.Open(ctx, Bytes("ask.wf", []byte(askYearWF)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx, StartRequest{Workflow: wf})
	if err != nil || res.Status != engine.Waiting || res.Thread != "" {
		t.Fatalf("run: %v %+v", err, res)
	}
	if _, err := s.Continue(ctx, res, []Answer{{Text: "soon"}}, nil); !errors.As(err, new(*AnswerError)) {
		t.Fatalf("bad answer: %v", err)
	}
	done, err := s.Continue(ctx, res, []Answer{{Text: "2024"}}, nil)
	if err != nil || done.Status != engine.Completed || done.Output("year").Int() != 2024 {
		t.Fatalf("continue: %v %+v", err, done)
	}
	if _, err := s.Continue(ctx, res, []Answer{{Text: "2025"}}, nil); !errors.Is(err, engine.ErrStale) {
		t.Fatalf("continuing a spent result: %v", err)
	}
	if threads, _ := s.Threads(ctx, store.ListOptions{}); len(threads) != 0 {
		t.Fatalf("an in-memory run made threads %v", threads)
	}
	if _, err := s.Run(ctx, StartRequest{Workflow: wf, Thread: "x"}); !errors.Is(err, engine.ErrMisuse) {
		t.Fatalf("Run with a thread: %v", err)
	}
}

// The service's errors carry the engine's kinds, so a server maps them
// to HTTP statuses: a late answer is ended, a misfit mismatch, a missing
// thread not_found, a workflow that does not compile invalid_input.
func TestServiceErrorKinds(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	s := newService(t, st, nil)
	wf, err := s.Open(ctx, Bytes("ask.wf", []byte(askYearWF)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx, StartRequest{Workflow: wf, Thread: "k"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Resume(ctx, ResumeRequest{Thread: "k", Answers: []Answer{{Text: "soon"}}})
	if engine.KindOf(err) != engine.KindMismatch {
		t.Errorf("a misfit answer: %v (kind %s)", err, engine.KindOf(err))
	}
	if _, err := s.Resume(ctx, ResumeRequest{Thread: "k", Answers: []Answer{{Text: "2020"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Resume(ctx, ResumeRequest{Thread: "k", Answers: []Answer{{Text: "2021"}}})
	if engine.KindOf(err) != engine.KindEnded {
		t.Errorf("a late answer: %v (kind %s)", err, engine.KindOf(err))
	}
	_, err = s.Resume(ctx, ResumeRequest{Thread: "nope"})
	if engine.KindOf(err) != engine.KindNotFound {
		t.Errorf("no thread: %v (kind %s)", err, engine.KindOf(err))
	}
	_, err = s.Open(ctx, Bytes("bad.wf", []byte("workflow {")))
	if engine.KindOf(err) != engine.KindInvalidInput || !errors.Is(err, engine.ErrInvalidInput) {
		t.Errorf("a broken workflow: %v (kind %s)", err, engine.KindOf(err))
	}
}

// askYearWF asks one question with a typed (Int) answer.
const askYearWF = `workflow AskYear {
  nodes {
    node ask {
      type: HUMAN
      question: "Which fiscal year?"
      outputs { year: Int }
    }
  }
  initial: ask
  finals: [ ask ]
}
`

// probe is a tool.* component that counts its opens and closes.
type probe struct {
	Name   string `json:"name"`
	counts *probeCounts
}

type probeCounts struct {
	mu     sync.Mutex
	open   map[string]int
	closed map[string]int
}

func (p *probe) Provision(context.Context, *component.Context) error {
	p.counts.mu.Lock()
	defer p.counts.mu.Unlock()
	p.counts.open[p.Name]++
	return nil
}

func (p *probe) Tools(context.Context) ([]*tool.Tool, error) { return nil, nil }

func (p *probe) Close() error {
	p.counts.mu.Lock()
	defer p.counts.mu.Unlock()
	p.counts.closed[p.Name]++
	return nil
}

// The components of a spec are loaded once and shared; idle ones beyond
// RuntimesKept are closed, the one used longest ago first, and one a run
// holds is never closed under it.
func TestRuntimesAreSharedAndBounded(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	counts := &probeCounts{open: map[string]int{}, closed: map[string]int{}}
	reg := component.NewRegistry()
	if err := reg.Register(component.Module{ID: "tool.probe", Doc: "counts", New: func() component.Component { return &probe{counts: counts} }}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Store: st, Components: reg, LeaseTTL: -1, RuntimesKept: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wf, err := s.Open(ctx, Bytes("ask.wf", []byte(askYearWF)))
	if err != nil {
		t.Fatal(err)
	}
	spec := func(name string) []component.Spec {
		return []component.Spec{{ID: "tool.probe", Config: json.RawMessage(`{"name":"` + name + `"}`)}}
	}
	// a waits (holds its runtime); b runs twice (shared); c evicts b.
	held, err := s.Run(ctx, StartRequest{Workflow: wf, Components: spec("a")})
	if err != nil || held.Status != engine.Waiting {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.Start(ctx, StartRequest{Workflow: wf, Components: spec("b")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Start(ctx, StartRequest{Workflow: wf, Components: spec("c")}); err != nil {
		t.Fatal(err)
	}
	counts.mu.Lock()
	got := fmt.Sprint(counts.open, counts.closed)
	counts.mu.Unlock()
	if want := "map[a:1 b:1 c:1] map[b:1]"; got != want {
		t.Fatalf("opened and closed %s, want %s", got, want)
	}
	if done, err := s.Continue(ctx, held, []Answer{{Text: "2024"}}, nil); err != nil || done.Status != engine.Completed {
		t.Fatalf("the held runtime: %v", err)
	}
	counts.mu.Lock()
	got = fmt.Sprint(counts.closed)
	counts.mu.Unlock()
	if want := "map[a:1 b:1]"; got != want { // a released and evicted (c is newer)
		t.Fatalf("closed %s, want %s", got, want)
	}
}
