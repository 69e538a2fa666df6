package llmtest

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
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
