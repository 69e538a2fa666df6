package anthropic_test

import (
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
)

// TestFinishReasons: Anthropic's stop reasons come out in llm's words,
// streamed and not: max_tokens is a cut reply (FinishLength).
func TestFinishReasons(t *testing.T) {
	cases := []struct {
		reply llmtest.Reply
		want  string
	}{
		{llmtest.Reply{Text: "cut he", FinishReason: "max_tokens"}, llm.FinishLength},
		{llmtest.Reply{Text: "done", FinishReason: "end_turn"}, llm.FinishStop},
		{llmtest.Reply{Text: "done END", FinishReason: "stop_sequence"}, llm.FinishStop},
		{llmtest.Call("t1", "f", `{"a":1}`), llm.FinishToolCalls},
		{llmtest.Reply{Text: "no", FinishReason: "refusal"}, "refusal"},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			s := llmtest.NewAnthropicServer(c.reply)
			var onChunk func(llm.Chunk) error
			if stream {
				onChunk = func(llm.Chunk) error { return nil }
			}
			resp, err := newModel(t, s.URL).Chat(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}}, onChunk)
			s.Close()
			if err != nil || resp.FinishReason != c.want {
				t.Errorf("stop reason %q (stream %v): resp %+v, err %v; want %q", c.reply.FinishReason, stream, resp, err, c.want)
			}
		}
	}
}
