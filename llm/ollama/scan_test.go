package ollama

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/internal/wire"
	"github.com/weftlang/weft/llm/llmtest"
)

// FuzzFastEvent checks that the fast path agrees with encoding/json: it
// only accepts valid events, and reads from them what encoding/json does.
func FuzzFastEvent(f *testing.F) {
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
		`{"model":"m","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1000000,"load_duration":5,"prompt_eval_count":26,"prompt_eval_duration":7,"eval_count":290,"eval_duration":9}`,
		`{"done":true,"done_reason":"length","prompt_eval_count":0,"eval_count":123456789}`,
		`{"done":true,"eval_count":1234567890}`,
		`{"done":true,"eval_count":-1}`,
		`{"done":true,"eval_count":1.0}`,
		`{"done":true,"eval_count":012}`,
		`{"done":null,"message":null}`,
		`{"done":true,"Done_Reason":"x"}`,
		`{"message":{"content":"a","images":null,"Tool_Calls":null},"done":false}`,
		`{"done":true,"done":false}`,
		`{"model":"a\u0000b","done":true}`,
	} {
		f.Add([]byte(s))
	}
	for _, l := range llmtest.HostileLines(llmtest.Ollama) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast chatResponse
		content, esc, ok := fastEvent(line, &fast)
		if !ok {
			return
		}
		var text wire.Text
		fast.Message.Content = text.AppendQuoted(content, esc)
		var r chatResponse
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("fast path accepted %q, which encoding/json rejects: %v", line, err)
		}
		if r.Error != "" || len(r.Message.ToolCalls) > 0 {
			t.Fatalf("fast path took %q, an event with an error or tool calls", line)
		}
		if !r.Done {
			r.Model = "" // read from the final event only
		}
		if !reflect.DeepEqual(fast, r) {
			t.Fatalf("fast path read %+v from %q, encoding/json %+v", fast, line, r)
		}
	})
}

// FuzzEncodeFast checks that the fast path of encode writes what
// encoding/json writes, for requests of plain messages with and without
// options.
func FuzzEncodeFast(f *testing.F) {
	f.Add("Say <hi> & \"bye\"\n", "be brief", "", "llama3.1", 0.7, 0, int64(0), false, true)
	f.Add("\xff\u2028\x00", "", "10m", "m", 1e-9, 128, int64(-42), true, false)
	f.Add("plain", "tool output", "", "", math.Inf(1), 1, int64(1), true, true)
	f.Fuzz(func(t *testing.T, user, tool, keepAlive, model string, temp float64, maxTokens int, seed int64, opts, stream bool) {
		c := New(Config{Model: "default", KeepAlive: keepAlive})
		req := &llm.Request{Model: model, Messages: []llm.Message{
			{Role: llm.System, Content: "sys", Name: "ignored"},
			{Role: llm.User, Content: user},
			{Role: llm.ToolRole, Content: tool, Name: user, ToolCallID: keepAlive},
		}}
		if opts {
			req.Temperature, req.MaxTokens, req.Seed, req.Stop = &temp, maxTokens, &seed, []string{user, "</s>"}
		}
		if model == "" {
			model = "default"
		}
		fast, ok := c.encodeFast(req, model, stream)
		slow, _, err := c.encodeSlow(req, model, stream)
		if !ok {
			if err == nil {
				t.Fatalf("fast path refused %+v, which encoding/json takes", req)
			}
			return
		}
		if err != nil || string(fast) != string(slow) {
			t.Fatalf("fast path wrote\n%s\nencoding/json\n%s (%v)", fast, slow, err)
		}
	})
}
