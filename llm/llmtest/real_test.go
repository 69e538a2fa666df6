package llmtest_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
)

// recorded is a reply of the real server, read from testdata/ollama-wire.
type recorded struct {
	status int
	ctype  string
	body   []byte
}

func readRecorded(t *testing.T, name string) recorded {
	t.Helper()
	b, err := os.ReadFile("testdata/ollama-wire/" + name)
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(b, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("%s: no end of headers", name)
	}
	lines := strings.Split(string(head), "\r\n")
	f := strings.Fields(lines[0])
	status, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("%s: status line %q", name, lines[0])
	}
	r := recorded{status: status, body: body}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok && strings.EqualFold(k, "Content-Type") {
			r.ctype = v
		}
	}
	return r
}

// volatile matches what differs from one reply to the next: times,
// durations, reply ids.
var volatile = []struct {
	re  *regexp.Regexp
	out string
}{
	{regexp.MustCompile(`"created_at":"[^"]*"`), `"created_at":"T"`},
	{regexp.MustCompile(`"(\w+_duration)":\d+`), `"$1":0`},
	{regexp.MustCompile(`"created":\d+`), `"created":0`},
	{regexp.MustCompile(`"id":"chatcmpl-[^"]*"`), `"id":"chatcmpl-N"`},
}

func normalise(b []byte) string {
	s := string(b)
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.out)
	}
	return s
}

// The fake's context is counted at llmtest.TokenChars characters a
// token, the tiny model's at one a character or so: the long prompts here
// are long enough for both (2500 tokens against a window of 2048).
var long = strings.Repeat("word ", 2000)

// TestOllamaWire sends the requests behind the replies recorded from a
// real Ollama to the fakes, scripted as the model answered, and compares
// each reply's status, Content-Type and body with the recorded one.
func TestOllamaWire(t *testing.T) {
	models := []llmtest.Model{{Name: "tiny", ContextLength: 2048}, {Name: "tiny-loop"}, {Name: "tiny-repeat"}}
	okay := llmtest.Reply{Text: "Okay, fine.", Usage: llm.Usage{InputTokens: 45, OutputTokens: 12}}
	zs := strings.Repeat("z", 31)
	cases := []struct {
		file  string
		v1    bool // Ollama's /v1 rather than its native API
		path  string
		body  string
		reply llmtest.Reply // the scripted reply, if the request gets one
	}{
		{file: "chat.txt", path: "/api/chat", body: `{"model":"tiny","messages":[{"role":"user","content":"What was the 2019 revenue?"}],"stream":false}`, reply: okay},
		{file: "chat_stream.txt", path: "/api/chat", body: `{"model":"tiny","messages":[{"role":"user","content":"What was the 2019 revenue?"}]}`,
			reply: llmtest.Reply{Text: "Okay, fine.", ChunkSize: 1, Usage: llm.Usage{InputTokens: 45, OutputTokens: 12}}},
		{file: "chat_empty_messages.txt", path: "/api/chat", body: `{"model":"tiny","messages":[],"stream":false}`},
		{file: "chat_loop_num_predict.txt", path: "/api/chat", body: `{"model":"tiny-loop","messages":[{"role":"user","content":"go"}],"stream":false,"options":{"num_predict":20}}`,
			reply: llmtest.Reply{Text: "XxXxXxXxXxXxXxXxXxXx", FinishReason: "length", Usage: llm.Usage{InputTokens: 22, OutputTokens: 20}}},
		{file: "chat_loop_num_predict_stream.txt", path: "/api/chat", body: `{"model":"tiny-loop","messages":[{"role":"user","content":"go"}],"options":{"num_predict":5}}`,
			reply: llmtest.Reply{Text: "XxXxX", ChunkSize: 1, FinishReason: "length", Usage: llm.Usage{InputTokens: 22, OutputTokens: 5}}},
		{file: "chat_repeat_guard.txt", path: "/api/chat", body: `{"model":"tiny-repeat","messages":[{"role":"user","content":"go"}],"stream":false}`,
			reply: llmtest.Reply{Text: zs, RepeatGuard: true}},
		{file: "chat_repeat_guard_stream.txt", path: "/api/chat", body: `{"model":"tiny-repeat","messages":[{"role":"user","content":"go"}]}`,
			reply: llmtest.Reply{Text: zs, ChunkSize: 1, RepeatGuard: true}},
		// Without "truncate": false the prompt is cut to the window.
		{file: "chat_long_prompt_truncated.txt", path: "/api/chat", body: `{"model":"tiny","messages":[{"role":"user","content":"` + long + `"}],"stream":false}`,
			reply: llmtest.Reply{Text: "Okay, fine.", Usage: llm.Usage{InputTokens: 2500, OutputTokens: 12}}},
		{file: "err_chat_truncate_false.txt", path: "/api/chat", body: `{"model":"tiny","messages":[{"role":"user","content":"` + long + `"}],"stream":false,"truncate":false}`},
		{file: "err_chat_unknown_model.txt", path: "/api/chat", body: `{"model":"nosuch","messages":[{"role":"user","content":"hi"}]}`},
		{file: "err_chat_unknown_model_nostream.txt", path: "/api/chat", body: `{"model":"nosuch","messages":[{"role":"user","content":"hi"}],"stream":false}`},
		{file: "err_chat_bad_json.txt", path: "/api/chat", body: `{"model":`},
		{file: "err_chat_no_model.txt", path: "/api/chat", body: `{"messages":[]}`},
		{file: "err_chat_bad_format.txt", path: "/api/chat", body: `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"stream":false,"format":"xml"}`},
		{file: "err_chat_schema_llamacpp_rejects.txt", path: "/api/chat", body: `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"stream":false,"format":{"type":"object","properties":{"a":{"$ref":"#/definitions/nope"}}}}`},
		{file: "err_chat_think_unsupported.txt", path: "/api/chat", body: `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"stream":false,"think":true}`},
		{file: "err_embed_unknown_model.txt", path: "/api/embed", body: `{"model":"nosuch","input":["a"]}`},
		{file: "err_embed_empty_string.txt", path: "/api/embed", body: `{"model":"tiny","input":[""]}`},
		{file: "err_embed_truncate_false.txt", path: "/api/embed", body: `{"model":"tiny","input":["` + long + `"],"truncate":false}`},

		{file: "oai_chat.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"tiny","messages":[{"role":"system","content":"You route questions."},{"role":"user","content":"What was the 2019 revenue?"}]}`,
			reply: llmtest.Reply{Text: "Okay, fine.", Usage: llm.Usage{InputTokens: 75, OutputTokens: 12}}},
		{file: "oai_chat_stream.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"tiny","messages":[{"role":"user","content":"What was the 2019 revenue?"}],"stream":true,"stream_options":{"include_usage":true}}`,
			reply: llmtest.Reply{Text: "Okay, fine.", ChunkSize: 1, Usage: llm.Usage{InputTokens: 45, OutputTokens: 12}}},
		{file: "oai_chat_max_tokens.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"tiny-loop","messages":[{"role":"user","content":"go"}],"max_tokens":7}`,
			reply: llmtest.Reply{Text: "XxXxXxX", FinishReason: "length", Usage: llm.Usage{InputTokens: 22, OutputTokens: 7}}},
		{file: "oai_repeat_guard.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"tiny-repeat","messages":[{"role":"user","content":"go"}]}`,
			reply: llmtest.Reply{Text: zs, RepeatGuard: true}},
		{file: "oai_repeat_guard_stream.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"tiny-repeat","messages":[{"role":"user","content":"go"}],"stream":true}`,
			reply: llmtest.Reply{Text: zs, ChunkSize: 1, RepeatGuard: true}},
		{file: "err_oai_unknown_model.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"nosuch","messages":[{"role":"user","content":"hi"}]}`},
		{file: "err_oai_unknown_model_stream.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"nosuch","messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{file: "err_oai_reasoning_effort_non_thinking.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"high"}`},
		{file: "err_oai_empty_messages.txt", v1: true, path: "/v1/chat/completions", body: `{"model":"tiny","messages":[]}`},
		{file: "err_oai_embed_unknown_model.txt", v1: true, path: "/v1/embeddings", body: `{"model":"nosuch","input":["a"]}`},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".txt"), func(t *testing.T) {
			want := readRecorded(t, c.file)
			var s *llmtest.Server
			if c.v1 {
				s = llmtest.NewOllamaV1Server(c.reply)
			} else {
				s = llmtest.NewOllamaServer(c.reply)
			}
			defer s.Close()
			s.SetModels(models...)
			resp, err := http.Post(s.URL+c.path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != want.status {
				t.Errorf("status %d, want %d", resp.StatusCode, want.status)
			}
			if ct := resp.Header.Get("Content-Type"); ct != want.ctype {
				t.Errorf("Content-Type %q, want %q", ct, want.ctype)
			}
			if g, w := normalise(got), normalise(want.body); g != w {
				t.Errorf("body differs from the real server's:\n got %q\nwant %q", g, w)
			}
		})
	}
}

// TestOllamaWireNoV1 pins what a client meets whose OpenAI base URL
// lacks /v1: the real server's "404 page not found", as plain text.
func TestOllamaWireNoV1(t *testing.T) {
	for _, s := range []*llmtest.Server{llmtest.NewOllamaServer(), llmtest.NewOllamaV1Server(), llmtest.NewOpenAIServer()} {
		resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "text/plain" || string(b) != "404 page not found" {
			t.Errorf("%s: %d %q %q", s.Protocol(), resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		s.Close()
	}
}
