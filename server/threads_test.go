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
	// weft's extension: a copy at a checkpoint (the run's input, record 1).
	f.json("POST", "/threads/a1/copy", `{"checkpoint_id":"1"}`, 200, &cp)
	if v := string(cp["values"]); string(cp["thread_id"]) == `"a1"` || v != `{"input_text":"doc a","rounds":0}` {
		t.Fatalf("copy at checkpoint 1 = %s, %s", cp["thread_id"], v)
	}
	if code, body := f.do("POST", "/threads/a1/copy", `{"checkpoint_id":"99"}`); code != 404 {
		t.Fatalf("copy at a missing checkpoint: %d %s", code, body)
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
	if b, _ := json.Marshal(st); string(b) != `{"checkpoint":null,"created_at":null,"next":[],"parent_checkpoint":null,"tasks":[],"values":{}}` {
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

func TestHistoryAndUpdate(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"h"}`, 200, nil)
	f.start("h", "doc h")
	var hist []map[string]json.RawMessage
	f.json("POST", "/threads/h/history", `{}`, 200, &hist)
	if len(hist) < 2 {
		t.Fatalf("history = %v", hist)
	}
	var cp0, cp1 struct {
		CheckpointID string `json:"checkpoint_id"`
	}
	json.Unmarshal(hist[0]["checkpoint"], &cp0)
	json.Unmarshal(hist[1]["checkpoint"], &cp1)
	var parent0 struct {
		CheckpointID string `json:"checkpoint_id"`
	}
	json.Unmarshal(hist[0]["parent_checkpoint"], &parent0)
	if parent0.CheckpointID != cp1.CheckpointID {
		t.Fatalf("newest's parent %s, want the next entry %s", parent0.CheckpointID, cp1.CheckpointID)
	}
	if string(hist[0]["next"]) != `["review"]` {
		t.Fatalf("newest next = %s", hist[0]["next"])
	}
	// The state at the older checkpoint is its own.
	var at map[string]json.RawMessage
	f.json("GET", "/threads/h/state/"+cp1.CheckpointID, "", 200, &at)
	if string(at["values"]) != string(hist[1]["values"]) {
		t.Fatalf("state at %s = %s, history says %s", cp1.CheckpointID, at["values"], hist[1]["values"])
	}
	f.json("POST", "/threads/h/state/checkpoint", `{"checkpoint":{"checkpoint_id":"`+cp1.CheckpointID+`"}}`, 200, &at)
	if string(at["values"]) != string(hist[1]["values"]) {
		t.Fatalf("POST state/checkpoint = %s", at["values"])
	}
	var page []map[string]json.RawMessage
	f.json("POST", "/threads/h/history", `{"limit":1,"before":{"configurable":{"checkpoint_id":"`+cp0.CheckpointID+`"}}}`, 200, &page)
	if len(page) != 1 || string(page[0]["checkpoint"]) != string(hist[1]["checkpoint"]) {
		t.Fatalf("page before the newest = %v", page)
	}
	if code, _ := f.do("GET", "/threads/h/state/999", ""); code != 404 {
		t.Fatalf("unknown checkpoint: %d", code)
	}

	// An update writes a variable and a node's output as a new checkpoint;
	// the thread still waits, and the resumed run sees the new values.
	var up map[string]map[string]string
	f.json("POST", "/threads/h/state", `{"values":{"rounds":5,"draft":{"body":"edited"}}}`, 200, &up)
	if up["checkpoint"]["checkpoint_id"] == "" || up["checkpoint"]["thread_id"] != "h" {
		t.Fatalf("update = %v", up)
	}
	var st map[string]json.RawMessage
	f.json("GET", "/threads/h/state", "", 200, &st)
	if string(st["values"]) != `{"input_text":"doc h","rounds":5,"draft":{"body":"edited"}}` || string(st["next"]) != `["review"]` {
		t.Fatalf("state after update: values %s next %s", st["values"], st["next"])
	}
	code, body := f.do("POST", "/threads/h/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`)
	if code != 200 || !strings.Contains(body, `"publish":{"published":"edited","revisions":5}`) {
		t.Fatalf("resume after update: %d %s", code, body)
	}
	for _, c := range []struct{ body, want string }{
		{`{"values":{"nope":1}}`, "$.values.nope"},
		{`{"values":{"draft":{"nope":1}}}`, "$.values.draft.nope"},
		{`{"values":{"rounds":1},"as_node":"zz"}`, "$.as_node"},
		{`{"values":{"rounds":"x"}}`, "rounds"},
	} {
		code, body := f.do("POST", "/threads/h/state", c.body)
		if code != 422 || !strings.Contains(body, c.want) {
			t.Errorf("update %s: %d %s, want 422 with %q", c.body, code, body, c.want)
		}
	}
}
