package llmtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftlang/weft/llm"
	iwire "github.com/weftlang/weft/llm/internal/wire"
)

// HostileBodies returns reply bodies of protocol p that a broken or hostile
// server may send, as seeds for fuzz targets of the client's readers:
// streamed (stream true: SSE for OpenAI and Anthropic, NDJSON for Ollama)
// or whole. They hold a well-formed reply, the same cut at several
// places, invalid UTF-8 in text, JSON and event names, garbage lines,
// events of the wrong type or shape, a line of 64 KiB, nesting 10,000
// deep, and empty and NUL-filled bodies.
func HostileBodies(p Protocol, stream bool) [][]byte {
	var good string
	var events []string // events of a good stream, each a line or an SSE event
	switch {
	case !stream && p == Anthropic:
		good = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hello"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`
	case !stream && p == OpenAI:
		good = `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`
	case !stream:
		good = `{"model":"m","message":{"role":"assistant","content":"Hello"},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":1}`
	case p == Anthropic:
		events = []string{
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":1}\"}}\n\n",
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		}
	case p == OpenAI:
		events = []string{
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}\n\n",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n",
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n",
			"data: [DONE]\n\n",
		}
	default:
		events = []string{
			"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n",
			"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"lo\"},\"done\":false}\n",
			"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"a\":1}}}]},\"done\":false}\n",
			"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":3,\"eval_count\":2}\n",
		}
	}
	if stream {
		good = strings.Join(events, "")
	}
	var out [][]byte
	add := func(s string) { out = append(out, []byte(s)) }
	add(good)
	// Cut: at a third, in the middle, and one byte short.
	for _, n := range []int{len(good) / 3, len(good) / 2, len(good) - 1} {
		add(good[:n])
	}
	// Invalid UTF-8 in the text, and in the keys and event names.
	add(strings.ReplaceAll(good, "Hel", "H\xffl\xed\xa0\x80"))
	add(strings.ReplaceAll(good, `"content"`, "\"c\xc3ntent\""))
	add(strings.ReplaceAll(good, "event: ", "event: \xfe"))
	// Escapes that decode to invalid or odd text.
	add(strings.ReplaceAll(good, "Hel", `\ud800\udfff\u0000\u2028`))
	// Garbage.
	add("\x00\x00\x00\x00")
	add("")
	add("\n\n\n")
	add("data: \n\ndata:\n\n:\n\nevent:\n\n")
	add("data: data: data: {\n\n")
	add("{\"done\":tru")
	add("null\n[]\n\"x\"\n123\n{}\n")
	add("data: null\n\ndata: []\n\ndata: \"x\"\n\ndata: {}\n\n")
	add("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"\xff\"}}\n\n")
	add("data: {\"error\":{\"message\":\"\xff\",\"type\":\"server_error\"}}\n\n")
	add("{\"error\":\"\xff\"}\n")
	add("<html><body>502 Bad Gateway</body></html>")
	add(strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\r\n\r\n", 3))
	// Wrong shapes for known fields.
	add(strings.ReplaceAll(good, `"index":0`, `"index":-1`))
	add(strings.ReplaceAll(good, `"index":0`, `"index":99999999999999999999`))
	add(strings.ReplaceAll(good, `"content":"lo"`, `"content":{"a":1}`))
	add(strings.ReplaceAll(good, `"text":"lo"`, `"text":null`))
	// A line of 64 KiB, and nesting 10,000 deep.
	long := strings.Repeat("a", 64<<10)
	add(strings.ReplaceAll(good, "Hel", long))
	add(strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n")
	var b bytes.Buffer
	b.WriteString("data: ")
	b.WriteString(strings.Repeat(`{"a":`, 10000))
	b.WriteString("1")
	b.WriteString(strings.Repeat("}", 10000))
	b.WriteString("\n\n")
	out = append(out, b.Bytes())
	return out
}

// HostileLines returns the lines of the hostile streamed bodies of p,
// without an SSE field name, as seeds for fuzzers of single events.
func HostileLines(p Protocol) [][]byte {
	var out [][]byte
	for _, b := range HostileBodies(p, true) {
		for _, l := range bytes.Split(b, []byte("\n")) {
			out = append(out, bytes.TrimPrefix(l, []byte("data: ")))
		}
	}
	return out
}

// FuzzCap is the reply limit FuzzStream and FuzzWhole read with: small,
// so that long inputs meet it.
const FuzzCap = 32 << 10

// FuzzStream fuzzes a client's reader of streamed replies, seeded with
// HostileBodies: it must never panic, and must fail with an *llm.Error of
// valid UTF-8 or return content of valid UTF-8 equal to the text its
// chunks delivered. read reads body into resp, calling onChunk.
func FuzzStream(f *testing.F, p Protocol, read func(ctx context.Context, body io.Reader, resp *llm.Response, onChunk func(llm.Chunk) error) error) {
	for _, b := range HostileBodies(p, true) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var text strings.Builder
		onChunk := func(c llm.Chunk) error {
			if !utf8.ValidString(c.Text) {
				t.Fatalf("body %.200q: chunk text %q is not valid UTF-8", data, c.Text)
			}
			text.WriteString(c.Text)
			return nil
		}
		resp := &llm.Response{}
		if err := read(context.Background(), iwire.Cap(bytes.NewReader(data), FuzzCap), resp, onChunk); err != nil {
			checkFuzzErr(t, data, err)
			return
		}
		if resp.Message.Content != text.String() || !utf8.ValidString(resp.Message.Content) {
			t.Fatalf("body %.200q: content %q, chunks %q", data, resp.Message.Content, text.String())
		}
	})
}

// FuzzWhole is FuzzStream for a reader of whole replies; a reply past
// FuzzCap must fail with llm.ErrReplyTooLarge.
func FuzzWhole(f *testing.F, p Protocol, read func(ctx context.Context, body io.Reader, resp *llm.Response) error) {
	for _, b := range HostileBodies(p, false) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp := &llm.Response{}
		err := read(context.Background(), iwire.Cap(bytes.NewReader(data), FuzzCap), resp)
		if len(data) > FuzzCap {
			if !errors.Is(err, llm.ErrReplyTooLarge) {
				t.Fatalf("a reply of %d bytes past the %d-byte limit gave %v", len(data), FuzzCap, err)
			}
			return
		}
		if err != nil {
			checkFuzzErr(t, data, err)
			return
		}
		if !utf8.ValidString(resp.Message.Content) {
			t.Fatalf("body %.200q: content %q is not valid UTF-8", data, resp.Message.Content)
		}
	})
}

// checkFuzzErr fails t unless err is an *llm.Error whose text is valid
// UTF-8.
func checkFuzzErr(t *testing.T, body []byte, err error) {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("body %.200q: error %v (%T) is not an *llm.Error", body, err, err)
	}
	if !utf8.ValidString(err.Error()) {
		t.Fatalf("body %.200q: error text %q is not valid UTF-8", body, err)
	}
}

// TestMaxReplyBytes checks that a client made by newModel with a reply
// limit of 2048 bytes refuses a longer reply, streamed or not, with an
// *llm.Error of KindReplyTooLarge naming the limit, and returns a shorter
// one whole.
func TestMaxReplyBytes(t *testing.T, p Protocol, newModel func(baseURL string, maxReplyBytes int64) llm.Model) {
	long := strings.Repeat("0123456789", 300)
	s := NewServer(p, Text(long), Text(long), Text("short"), Text("short"))
	defer s.Close()
	m := newModel(s.BaseURL(), 2048)
	req := &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}}
	for _, want := range []string{long, "short"} {
		for _, stream := range []bool{false, true} {
			var onChunk func(llm.Chunk) error
			if stream {
				onChunk = func(llm.Chunk) error { return nil }
			}
			resp, err := m.Chat(context.Background(), req, onChunk)
			if want == long {
				var le *llm.Error
				if !errors.As(err, &le) || le.Kind != llm.KindReplyTooLarge || !strings.Contains(err.Error(), "2048 bytes") {
					t.Errorf("stream=%v: err = %v, want KindReplyTooLarge naming the limit", stream, err)
				}
			} else if err != nil || resp.Message.Content != want {
				t.Errorf("stream=%v: %v, %v", stream, resp, err)
			}
		}
	}
}
