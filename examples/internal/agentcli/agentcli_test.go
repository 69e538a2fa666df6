package agentcli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/sqlite"
)

func TestMessages(t *testing.T) {
	got := slices.Collect(Messages("", strings.NewReader("first\n\n  second  \n\t\nthird")))
	if !slices.Equal(got, []string{"first", "second", "third"}) {
		t.Errorf("lines = %q", got)
	}
	got = slices.Collect(Messages("only this", strings.NewReader("ignored\n")))
	if !slices.Equal(got, []string{"only this"}) {
		t.Errorf("input = %q", got)
	}
	for range Messages("", strings.NewReader("a\nb\n")) {
		break // stopping early must not panic
	}
}

func TestOpenModel(t *testing.T) {
	noenv := func(string) string { return "" }
	if _, _, err := OpenModel(t.Context(), "replay:"+filepath.Join(t.TempDir(), "missing.jsonl"), "", time.Second, noenv); err == nil {
		t.Error("a missing recording opened")
	}
	if _, _, err := OpenModel(t.Context(), "", "", time.Second, noenv); err == nil {
		t.Error("no spec and no WEFT_LLM opened a model")
	}
	rec := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(rec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	m, closeRec, err := OpenModel(t.Context(), "", out, time.Second, func(k string) string {
		if k == "WEFT_LLM" {
			return "replay:" + rec
		}
		return ""
	})
	if err != nil || m == nil {
		t.Fatalf("WEFT_LLM replay: %v", err)
	}
	if err := closeRec(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the recording was not created: %v", err)
	}
}

// OpenModel opens a provider's model as `weft run` does, through its
// component: the server's URL from OLLAMA_HOST, the CLI's policy (an
// attempt that outlives the timeout is retried), and --record writing
// every exchange.
func TestOpenModelIsTheComponentWithThePolicy(t *testing.T) {
	srv := llmtest.NewOllamaServer(llmtest.Reply{Text: "late", Latency: 5 * time.Second}, llmtest.Text("on time"))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rec.jsonl")
	m, closeModel, err := OpenModel(t.Context(), "ollama:llama-test", out, 300*time.Millisecond, func(k string) string {
		if k == "OLLAMA_HOST" {
			return srv.URL
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Chat(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}}, nil)
	if err != nil || resp.Message.Content != "on time" {
		t.Fatalf("Chat: %+v, %v", resp, err)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[1].Request.Model != "llama-test" {
		t.Fatalf("the server got %d requests: %+v", len(reqs), reqs)
	}
	if err := closeModel(); err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(rec), "on time") {
		t.Fatalf("recording: %q, %v", rec, err)
	}
}

type chat struct {
	Turns    int      `weft:"turns"`
	Messages []string `weft:"messages,append"`
}

type said struct {
	Turns    int
	Messages string
}

// In a thread, turns run through a service.Service: the thread keeps the
// run spec of the Go workflow ("go:NAME"), the conversation carries over
// through its reducer, and another process's Turns takes it up.
func TestTurnsInAThreadRunThroughTheService(t *testing.T) {
	g := graph.New[chat]("echo")
	graph.AddNode(g, "reply", func(_ context.Context, s chat) (said, error) {
		return said{Turns: s.Turns + 1, Messages: fmt.Sprintf("reply %d to %s", len(s.Messages), s.Messages[len(s.Messages)-1])}, nil
	})
	g.SetEntry("reply")
	g.AddEdge("reply", graph.END)
	c, err := g.Compile(graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "t.db")
	var log strings.Builder
	ask := func(msg string) chat {
		t.Helper()
		turns := &Turns[chat]{Graph: c, Start: func(msg string, prev chat) chat { return chat{Messages: []string{msg}} }, Thread: "T1", Store: db, Trace: true, Log: &log, Name: "test"}
		answer, closeTurns, err := turns.Open(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := closeTurns(); err != nil {
				t.Fatal(err)
			}
		}()
		out, err := answer(t.Context(), msg)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ask("hello")
	out := ask("again")
	want := []string{"hello", "reply 1 to hello", "again", "reply 3 to again"}
	if !slices.Equal(out.Messages, want) || out.Turns != 1 {
		t.Fatalf("second turn: %+v", out)
	}
	if !strings.Contains(log.String(), "thread T1 run 2: completed") || !strings.Contains(log.String(), "step 1: reply") {
		t.Errorf("trace:\n%s", log.String())
	}
	st, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	thr, err := st.Thread(t.Context(), "T1")
	if err != nil {
		t.Fatal(err)
	}
	var spec service.Spec
	if err := json.Unmarshal(thr.Spec, &spec); err != nil || spec.Workflow != "go:echo" || thr.Workflow != "echo" {
		t.Fatalf("stored thread: workflow %q, spec %s (%v)", thr.Workflow, thr.Spec, err)
	}
}
