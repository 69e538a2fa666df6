package llmtest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/weftlang/weft/llm"
)

// FuzzOllamaDecodeFast checks that the fake Ollama server's fast path
// decodes a request as encoding/json does, and takes only what
// encoding/json takes.
func FuzzOllamaDecodeFast(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"Step 1 of run 7"}],"stream":true}`,
		`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"tool","content":"42","tool_name":"add","tool_call_id":"c1"}],"stream":false,"keep_alive":"10m"}`,
		`{"model":"m","messages":[]}`,
		`{"model":"m","messages":null,"stream":null}`,
		`{"messages":[{}],"Stream":true}`,
		`{"messages":[{"role":"user","content":"a","images":["x"],"Content":"b"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"options":{"temperature":0.5}}`,
		`{"model":"m","messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{}}}]}]}`,
		`{"model":"m","model":"n"}`,
		`{"model":"\u00e9\ud83d\ude00\n","messages":[{"role":"user","content":"<a>&\u2028"}]}`,
		` { "model" : "m" , "messages" : [ { "role" : "user" , "content" : "x" } ] } `,
		`{"model":"m","messages":[{"role":"user","content":"x"}],}`,
		`{"model":"m","format":null,"tools":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := decodeFast(body)
		if !ok {
			return
		}
		slow, err := decodeSlow(body)
		if err != nil {
			t.Fatalf("fast path took %q, which encoding/json refuses: %v", body, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast path read %+v from %q, encoding/json %+v", fast, body, slow)
		}
	})
}

// TestOllamaEventsByHand checks that the events the fake Ollama server
// writes by hand are what encoding/json writes.
func TestOllamaEventsByHand(t *testing.T) {
	for _, r := range []reply{
		{model: "m", text: "Hello <world> & \"friends\"\n\u2028 \xff", chunk: 4, usage: llm.Usage{InputTokens: 3, OutputTokens: 7}},
		{model: "", text: "", chunk: 1, finish: "length"},
		{model: "x\ty", text: "héllo wörld", chunk: 3, usage: llm.Usage{OutputTokens: 2}},
	} {
		evs := ollamaWire{}.stream(&r, nil)
		ps := pieces(r.text, r.chunk)
		if len(evs) != len(ps)+1 {
			t.Fatalf("%d events for %d pieces", len(evs), len(ps))
		}
		created := ""
		for i, ev := range evs {
			var v olResponse
			if err := json.Unmarshal(ev.data, &v); err != nil {
				t.Fatalf("event %d %q: %v", i, ev.data, err)
			}
			if created == "" {
				created = v.CreatedAt
			}
			want := ollamaWire{}.final(&r)
			if i < len(ps) {
				want = olResponse{Model: r.model, Message: olMessage{Role: "assistant", Content: ps[i]}}
			}
			want.CreatedAt = created
			if got, w := string(ev.data), string(mustJSON(want))+"\n"; got != w || ev.content != (i < len(ps)) {
				t.Errorf("event %d:\n%s\nencoding/json:\n%s", i, got, w)
			}
		}
	}
}
