package llmtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
)

func TestPieces(t *testing.T) {
	got := pieces("héllo wörld", 3)
	want := []string{"hél", "lo ", "wör", "ld"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pieces = %q, want %q", got, want)
	}
	if pieces("", 3) != nil {
		t.Errorf("pieces of nothing")
	}
}

// TestWireFormats reads each fake's stream raw, to pin the formats.
func TestWireFormats(t *testing.T) {
	cases := []struct {
		p          Protocol
		path, body string
		first      string // first line of the stream
		last       string // last non-empty line
	}{
		{Ollama, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
			`{"model":"m",`, `"done":true`},
		{OpenAI, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`,
			`data: {"id":"chatcmpl-llmtest"`, `data: [DONE]`},
		{Anthropic, "/v1/messages", `{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"x"}]}`,
			`event: message_start`, `data: {"type":"message_stop"}`},
	}
	for _, c := range cases {
		s := NewServer(c.p, Text("hello there"))
		resp, err := http.Post(s.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		var lines []string
		for sc.Scan() {
			if sc.Text() != "" {
				lines = append(lines, sc.Text())
			}
		}
		resp.Body.Close()
		if len(lines) < 3 || !strings.HasPrefix(lines[0], c.first) || !strings.Contains(lines[len(lines)-1], c.last) {
			t.Errorf("%s stream:\n%s", c.p, strings.Join(lines, "\n"))
		}
		s.Close()
	}
}

func TestServerBookkeeping(t *testing.T) {
	s := NewOpenAIServer()
	defer s.Close()
	if s.BaseURL() != s.URL+"/v1" || s.Protocol() != OpenAI {
		t.Errorf("BaseURL %q, protocol %q", s.BaseURL(), s.Protocol())
	}
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/models: %d", resp.StatusCode)
	}
	if s.Connections() != 1 || s.MaxInFlight() != 1 || len(s.Requests()) != 0 {
		t.Errorf("connections %d, max in flight %d, requests %d", s.Connections(), s.MaxInFlight(), len(s.Requests()))
	}
}

// TestRepeatFuncAndKeepRequests checks replies that depend on the request,
// that Repeat and RepeatFunc replace each other, that KeepRequests(false)
// stops recording, and the connection counts.
func TestRepeatFuncAndKeepRequests(t *testing.T) {
	s := NewOllamaServer(Text("scripted"))
	defer s.Close()
	s.RepeatFunc(func(req llm.Request) Reply {
		return Text("echo: " + req.Messages[len(req.Messages)-1].Content)
	})
	post := func(content string) string {
		t.Helper()
		body := `{"model":"m","stream":false,"messages":[{"role":"user","content":"` + content + `"}]}`
		resp, err := http.Post(s.URL+"/api/chat", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Message struct{ Content string } `json:"message"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatal(err)
		}
		return r.Message.Content
	}
	if got := post("a"); got != "scripted" {
		t.Errorf("first reply %q: the script comes first", got)
	}
	if got := post("b"); got != "echo: b" {
		t.Errorf("reply %q, want RepeatFunc's", got)
	}
	s.KeepRequests(false)
	if got := post("c"); got != "echo: c" {
		t.Errorf("reply %q, want RepeatFunc's", got)
	}
	s.KeepRequests(true)
	s.Repeat(Text("fixed"))
	if got := post("d"); got != "fixed" {
		t.Errorf("reply %q: Repeat replaces RepeatFunc", got)
	}
	s.RepeatFunc(func(llm.Request) Reply { return Text("func again") })
	if got := post("e"); got != "func again" {
		t.Errorf("reply %q: RepeatFunc replaces Repeat", got)
	}
	var seen []string
	for _, r := range s.Requests() {
		seen = append(seen, r.Request.Messages[0].Content)
	}
	if strings.Join(seen, "") != "abde" {
		t.Errorf("recorded requests %q, want abde (c was sent while recording was off)", seen)
	}
	if s.Connections() < 1 || s.MaxConnections() < 1 || s.MaxConnections() > s.Connections() {
		t.Errorf("connections %d, at most %d open at once", s.Connections(), s.MaxConnections())
	}
}

// TestMaxConnections checks that connections closed and replaced count in
// Connections but not in MaxConnections.
func TestMaxConnections(t *testing.T) {
	s := NewOllamaServer()
	defer s.Close()
	s.Repeat(Text("hi"))
	for range 3 {
		tr := &http.Transport{}
		resp, err := (&http.Client{Transport: tr}).Post(s.URL+"/api/chat", "application/json",
			strings.NewReader(`{"model":"m","stream":false,"messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		// the server sees the close asynchronously
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			s.mu.Lock()
			open := s.open
			s.mu.Unlock()
			if open == 0 {
				break
			}
		}
	}
	if s.Connections() != 3 || s.MaxConnections() != 1 {
		t.Errorf("connections %d, at most %d open at once; want 3 and 1", s.Connections(), s.MaxConnections())
	}
}
