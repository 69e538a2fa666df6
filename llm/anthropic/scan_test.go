package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/weftlang/weft/llm/llmtest"
)

// FuzzFastDelta checks that the fast path agrees with encoding/json: it
// only accepts valid text and input-JSON deltas, and reads the same
// index, kind and text from them.
func FuzzFastDelta(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
		`{"type":"content_block_delta","index":12,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
		`{"delta":{"text":"a\nb\u00e9\ud83d\ude00","type":"text_delta"},"index":1,"type":"content_block_delta"}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"x"}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","partial_json":"x"}}`,
		`{"type":"content_block_delta","Index":0,"delta":{"type":"text_delta","text":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	for _, l := range llmtest.HostileLines(llmtest.Anthropic) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		index, kind, text, ok := fastDelta(data)
		if !ok {
			return
		}
		var ev streamEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("fast path accepted %q, which encoding/json rejects: %v", data, err)
		}
		if ev.Type != "content_block_delta" || ev.Index != index {
			t.Fatalf("fast path read index %d from %q, encoding/json %+v", index, data, ev)
		}
		switch {
		case kind == 't' && ev.Delta.Type == "text_delta" && ev.Delta.Text == text:
		case kind == 'j' && ev.Delta.Type == "input_json_delta" && ev.Delta.PartialJSON == text:
		default:
			t.Fatalf("fast path read %c %q from %q, encoding/json %+v", kind, text, data, ev.Delta)
		}
	})
}
