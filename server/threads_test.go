package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
)

// start runs the Approval workflow in thread id (made through the API)
// until it waits at review.
func (f *fixture) start(id, text string) {
	f.t.Helper()
	res, err := f.svc.Start(context.Background(), service.StartRequest{Workflow: f.wf, Thread: id, Input: map[string]flow.Value{"input_text": flow.StringValue(text)}})
	if err != nil || res.Status != engine.Waiting {
		f.t.Fatalf("start %s: %v %v", id, res, err)
	}
}

func TestThreadLifecycle(t *testing.T) {
	f := newFixture(t, nil)
	var th map[string]any
	f.json("POST", "/threads", `{"thread_id":"a1","metadata":{"user":"ann","n":1}}`, 200, &th)
	if th["thread_id"] != "a1" || th["status"] != "idle" {
		t.Fatalf("create = %v", th)
	}
	md, _ := json.Marshal(th["metadata"])
	if string(md) != `{"n":1,"user":"ann"}` {
		t.Fatalf("metadata = %s", md)
	}
	code, body := f.do("POST", "/threads", `{"thread_id":"a1"}`)
	if code != 409 {
		t.Fatalf("create again: %d %s", code, body)
	}
	f.json("POST", "/threads", `{"thread_id":"a1","if_exists":"do_nothing","metadata":{"user":"bob"}}`, 200, &th)
	if th["metadata"].(map[string]any)["user"] != "ann" {
		t.Fatalf("do_nothing changed the thread: %v", th)
	}
	f.json("PATCH", "/threads/a1", `{"metadata":{"topic":"x"}}`, 200, &th)
	md, _ = json.Marshal(th["metadata"])
	if string(md) != `{"n":1,"topic":"x","user":"ann"}` {
		t.Fatalf("patched metadata = %s", md)
	}
	f.json("POST", "/threads", `{"thread_id":"b2","metadata":{"user":"bob"}}`, 200, nil)
	f.start("a1", "doc a")

	var list []map[string]any
	f.json("POST", "/threads/search", `{"metadata":{"user":"ann"}}`, 200, &list)
	if len(list) != 1 || list[0]["thread_id"] != "a1" || list[0]["status"] != "interrupted" {
		t.Fatalf("search by metadata = %v", list)
	}
	f.json("POST", "/threads/search", `{"metadata":{"n":1.0}}`, 200, &list)
	if len(list) != 1 {
		t.Fatalf("search n=1.0 = %v", list)
	}
	f.json("POST", "/threads/search", `{"status":"idle"}`, 200, &list)
	if len(list) != 1 || list[0]["thread_id"] != "b2" {
		t.Fatalf("search idle = %v", list)
	}
	f.json("POST", "/threads/search", `{"values":{"input_text":"doc a"}}`, 200, &list)
	if len(list) != 1 || list[0]["thread_id"] != "a1" {
		t.Fatalf("search by values = %v", list)
	}
	var n int
	f.json("POST", "/threads/count", `{}`, 200, &n)
	if n != 2 {
		t.Fatalf("count = %d", n)
	}
	f.json("POST", "/threads/search", `{"limit":1,"offset":1,"sort_order":"asc"}`, 200, &list)
	if len(list) != 1 {
		t.Fatalf("page = %v", list)
	}
	if code, body := f.do("POST", "/threads/search", `{"status":"sleeping"}`); code != 422 || !strings.Contains(body, "$.status") {
		t.Fatalf("bad status: %d %s", code, body)
	}

	var raw map[string]json.RawMessage
	f.json("GET", "/threads/a1", "", 200, &raw)
	vals := raw["values"]
	if string(vals) != `{"input_text":"doc a","rounds":0,"draft":{"body":"doc a"}}` {
		t.Fatalf("values = %s", vals)
	}
	intr := raw["interrupts"]
	if !strings.Contains(string(intr), `"question":"Approve this draft?"`) {
		t.Fatalf("interrupts = %s", intr)
	}

	var cp map[string]json.RawMessage
	f.json("POST", "/threads/a1/copy", ``, 200, &cp)
	if string(cp["thread_id"]) == `"a1"` || string(cp["status"]) != `"interrupted"` {
		t.Fatalf("copy = %v", cp)
	}
	v2 := cp["values"]
	if string(v2) != string(vals) {
		t.Fatalf("copy's values %s, want %s", v2, vals)
	}

	code, _ = f.do("DELETE", "/threads/b2", "")
	if code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, body := f.do("GET", "/threads/b2", ""); code != 404 || !strings.Contains(body, "thread b2 not found") {
		t.Fatalf("get deleted: %d %s", code, body)
	}
	if code, _ := f.do("DELETE", "/threads/b2", ""); code != 404 {
		t.Fatalf("delete again: %d", code)
	}
}

func TestThreadState(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"s1"}`, 200, nil)
	var st map[string]any
	f.json("GET", "/threads/s1/state", "", 200, &st)
	if b, _ := json.Marshal(st); string(b) != `{"checkpoint":null,"created_at":null,"interrupts":[],"metadata":{},"next":[],"parent_checkpoint":null,"tasks":[],"values":{}}` {
		t.Fatalf("empty state = %s", b)
	}
	f.start("s1", "doc s")
	f.json("GET", "/threads/s1/state", "", 200, &st)
	if next, _ := json.Marshal(st["next"]); string(next) != `["review"]` {
		t.Fatalf("next = %s", next)
	}
	tasks := st["tasks"].([]any)
	task := tasks[0].(map[string]any)
	ints := task["interrupts"].([]any)
	if task["name"] != "review" || len(ints) != 1 {
		t.Fatalf("tasks = %v", tasks)
	}
	v := ints[0].(map[string]any)["value"].(map[string]any)
	if v["question"] != "Approve this draft?" {
		t.Fatalf("interrupt value = %v", v)
	}
	if outs, _ := json.Marshal(v["outputs"]); string(outs) != `{"verdict":{"enum":["yes","no"],"type":"string"}}` {
		t.Fatalf("interrupt outputs = %s", outs)
	}
	cp := st["checkpoint"].(map[string]any)
	if cp["thread_id"] != "s1" || cp["checkpoint_id"] == "" {
		t.Fatalf("checkpoint = %v", cp)
	}
	if code, _ := f.do("GET", "/threads/nope/state", ""); code != 404 {
		t.Fatalf("state of unknown thread: %d", code)
	}
}
