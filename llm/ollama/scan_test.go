package ollama

import (
	"encoding/json"
	"testing"
)

// FuzzFastText checks that the fast path agrees with encoding/json: it
// only accepts valid text events, and reads the same text from them.
func FuzzFastText(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":"Hel"},"done":false}`,
		`{"message":{"role":"assistant","content":"a\nb\"c\\d\u00e9\ud83d\ude00\ud800x"},"done":false}`,
		`{"message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}`,
		`{"message":{"role":"assistant","content":"x"},"done":true,"eval_count":3}`,
		`{"message":{"role":"assistant","content":"x","tool_calls":[]},"done":false}`,
		`{"Message":{"content":"x"},"done":false}`,
		`{"message":{"content":"a"},"message":{"content":"b"},"done":false}`,
		`{"error":"boom"}`,
		`{"model":[1,2.5e3,-0,true,null,{"a":"b"}],"message":{"content":"y"},"done":false}`,
		`{"message":{"content":"x"},,"done":false}`,
		` { "message" : { "content" : "sp" } , "done" : false } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		text, ok := fastText(line)
		if !ok {
			return
		}
		var r chatResponse
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("fast path accepted %q, which encoding/json rejects: %v", line, err)
		}
		if r.Done || r.Error != "" || len(r.Message.ToolCalls) > 0 {
			t.Fatalf("fast path took %q for a text event", line)
		}
		if r.Message.Content != text {
			t.Fatalf("fast path read %q from %q, encoding/json %q", text, line, r.Message.Content)
		}
	})
}
