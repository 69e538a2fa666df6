package openai

import (
	"encoding/json"
	"testing"

	"github.com/weftlang/weft/llm/internal/wire"
	"github.com/weftlang/weft/llm/llmtest"
)

// FuzzFastText checks that the fast path agrees with encoding/json: it
// only accepts valid text chunks, and reads the same text from them.
func FuzzFastText(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"a\nb\"\u00e9\ud83d\ude00","refusal":null},"finish_reason":null}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`,
		`{"choices":[{"index":0,"delta":{"content":null}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
		`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{}}]}`,
		`{"Choices":[{"delta":{"content":"a"}}]}`,
		`{"error":{"message":"x"}}`,
		`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`,
	} {
		f.Add([]byte(s))
	}
	for _, l := range llmtest.HostileLines(llmtest.OpenAI) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, esc, ok := fastText(data)
		if !ok {
			return
		}
		var tx wire.Text
		text := tx.AppendQuoted(raw, esc)
		var ch streamChunk
		if err := json.Unmarshal(data, &ch); err != nil {
			t.Fatalf("fast path accepted %q, which encoding/json rejects: %v", data, err)
		}
		if len(ch.Choices) != 1 || ch.Usage != nil || parseError(ch.Error) != nil ||
			ch.Choices[0].FinishReason != "" || len(ch.Choices[0].Delta.ToolCalls) > 0 {
			t.Fatalf("fast path took %q for a text chunk", data)
		}
		if got := ch.Choices[0].Delta.Content; got != text {
			t.Fatalf("fast path read %q from %q, encoding/json %q", text, data, got)
		}
	})
}
