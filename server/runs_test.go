package server_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// sseEvent is one event of a stream as a client reads it.
type sseEvent struct {
	Event, ID string
	Data      json.RawMessage
}

// stream posts body to path and reads the whole event stream.
func (f *fixture) stream(path, body string, hdr ...string) (*http.Response, []sseEvent) {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.ts.URL+path, strings.NewReader(body))
	if body == "" {
		req.Method = "GET"
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Event != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			cur.Data = json.RawMessage(line[len("data: "):])
		case strings.HasPrefix(line, "id: "):
			cur.ID = line[len("id: "):]
		}
	}
	return resp, out
}

// The conversation of the LangGraph server baseline: a run to the human
// question, the state, the answer, the final values.
func TestConversationWait(t *testing.T) {
	f := newFixture(t, nil)
	var th map[string]any
	f.json("POST", "/threads", `{}`, 200, &th)
	tid := th["thread_id"].(string)
	code, body := f.do("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc 1"}}`)
	if code != 200 {
		t.Fatalf("first wait: %d %s", code, body)
	}
	var r1 struct {
		Interrupt []struct {
			ID    string
			Value map[string]any
		} `json:"__interrupt__"`
	}
	if err := json.Unmarshal([]byte(body), &r1); err != nil || len(r1.Interrupt) != 1 || r1.Interrupt[0].Value["question"] != "Approve this draft?" {
		t.Fatalf("first wait = %s (%v)", body, err)
	}
	var st map[string]any
	f.json("GET", "/threads/"+tid+"/state", "", 200, &st)
	if next, _ := json.Marshal(st["next"]); string(next) != `["review"]` {
		t.Fatalf("next = %s", next)
	}
	f.json("GET", "/threads/"+tid, "", 200, &th)
	if th["status"] != "interrupted" || th["metadata"].(map[string]any)["graph_id"] != "Approval" {
		t.Fatalf("thread = %v", th)
	}
	// A wrong answer is refused, naming the field, and changes nothing.
	code, body = f.do("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"Approval","command":{"resume":"maybe"}}`)
	if code != 422 || !strings.Contains(body, "$.command.resume") || !strings.Contains(body, "maybe") {
		t.Fatalf("wrong answer: %d %s", code, body)
	}
	code, body = f.do("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`)
	if code != 200 || body != `{"input_text":"doc 1","rounds":0,"draft":{"body":"doc 1"},"review":{"verdict":"yes"},"publish":{"published":"doc 1","revisions":0}}` {
		t.Fatalf("resume: %d %s", code, body)
	}
	var runs []map[string]any
	f.json("GET", "/threads/"+tid+"/runs", "", 200, &runs)
	if len(runs) != 2 || runs[0]["status"] != "success" || runs[1]["status"] != "success" {
		t.Fatalf("runs = %v", runs)
	}
	f.json("GET", "/threads/"+tid, "", 200, &th)
	if th["status"] != "idle" {
		t.Fatalf("thread after = %v", th)
	}
}

func TestConversationStream(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"s1"}`, 200, nil)
	resp, evs := f.stream("/threads/s1/runs/stream", `{"assistant_id":"Approval","input":{"input_text":"doc 2"},"stream_mode":["values","updates"]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	loc := resp.Header.Get("Content-Location")
	if !strings.HasPrefix(loc, "/threads/s1/runs/") {
		t.Fatalf("Content-Location %q", loc)
	}
	var got []string
	epoch, _, _ := strings.Cut(evs[0].ID, "-")
	for _, e := range evs {
		got = append(got, strings.TrimPrefix(e.ID, epoch+"-")+" "+e.Event+" "+string(e.Data))
	}
	runID := strings.TrimPrefix(loc, "/threads/s1/runs/")
	want := []string{
		`0 metadata {"attempt":1,"run_id":"` + runID + `"}`,
		`1 values {"input_text":"doc 2","rounds":0}`,
		`2 updates {"draft":{"body":"doc 2"}}`,
		`3 values {"input_text":"doc 2","rounds":0,"draft":{"body":"doc 2"}}`,
	}
	if len(got) != 6 || strings.Join(got[:4], "\n") != strings.Join(want, "\n") {
		t.Fatalf("stream:\n%s\nwant first:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(got[4], `4 updates {"__interrupt__":[{"id":`) || !strings.HasPrefix(got[5], `5 values {"__interrupt__":[{"id":`) {
		t.Fatalf("the interrupt frames: %s", strings.Join(got[4:], "\n"))
	}
	// Rejoin after the third event: every later event, once.
	_, again := f.stream("/threads/s1/runs/"+runID+"/stream", "", "Last-Event-ID", evs[2].ID)
	var ids []string
	for _, e := range again {
		ids = append(ids, strings.TrimPrefix(e.ID, epoch+"-"))
	}
	if strings.Join(ids, " ") != "3 4 5" {
		t.Fatalf("rejoined from %s: ids %v", evs[2].ID, ids)
	}
	// The resume streams the answer's update, then the end.
	_, evs = f.stream("/threads/s1/runs/stream", `{"assistant_id":"Approval","command":{"resume":"no"},"stream_mode":"updates"}`)
	got = nil
	for _, e := range evs[1:] {
		got = append(got, e.Event+" "+string(e.Data))
	}
	if len(got) < 2 || got[0] != `updates {"review":{"verdict":"no","rounds":1}}` {
		t.Fatalf("resume stream:\n%s", strings.Join(got, "\n"))
	}
}

func TestStatelessRun(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.do("POST", "/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"x"}}`)
	if code != 200 || !strings.Contains(body, "__interrupt__") {
		t.Fatalf("stateless wait: %d %s", code, body)
	}
	var n int
	f.json("POST", "/threads/count", `{}`, 200, &n)
	if n != 0 {
		t.Fatalf("the stateless run's thread was kept: %d threads", n)
	}
	// A refused run leaves no thread behind either: neither a stateless
	// one nor one if_not_exists made.
	for _, c := range []struct{ path, body string }{
		{"/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`},
		{"/threads/made/runs/wait", `{"assistant_id":"Approval","if_not_exists":"create","command":{"resume":"yes"}}`},
	} {
		if code, body := f.do("POST", c.path, c.body); code != 409 {
			t.Fatalf("%s %s: %d %s", c.path, c.body, code, body)
		}
	}
	f.json("POST", "/threads/count", `{}`, 200, &n)
	if n != 0 {
		t.Fatalf("refused runs left %d threads", n)
	}
}

func TestRunErrors(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"e1"}`, 200, nil)
	for _, c := range []struct {
		path, body, want string
		code             int
	}{
		{"/threads/e1/runs/wait", `{"input":{}}`, "$.assistant_id: required", 422},
		{"/threads/e1/runs/wait", `{"assistant_id":"Nope"}`, "assistant Nope not found", 404},
		{"/threads/zz/runs/wait", `{"assistant_id":"Approval"}`, "thread zz not found", 404},
		{"/threads/e1/runs/wait", `{"assistant_id":"Approval","input":{"input_txt":"a"}}`, `$.input.input_txt: Approval has no parameter or variable input_txt`, 422},
		{"/threads/e1/runs/wait", `{"assistant_id":"Approval","input":{"rounds":"two"}}`, `$.input.rounds`, 422},
		{"/threads/e1/runs/wait", `{"assistant_id":"Approval","stream_mode":["bogus"]}`, `is not a stream mode`, 422},
		{"/threads/e1/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`, "waits for no answer", 409},
	} {
		code, body := f.do("POST", c.path, c.body)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", c.path, c.body, code, body, c.code, c.want)
		}
	}
	// if_not_exists create makes the thread.
	code, body := f.do("POST", "/threads/new1/runs/wait", `{"assistant_id":"Approval","if_not_exists":"create","input":{"input_text":"x"}}`)
	if code != 200 || !strings.Contains(body, "__interrupt__") {
		t.Fatalf("if_not_exists create: %d %s", code, body)
	}
}

// A new run of a thread streams its own state: the outputs of the
// thread's earlier runs' nodes are not in it (they are not in the
// thread's state once the new run starts), and its last values event is
// the thread's state after it.
func TestNewRunStreamsItsOwnState(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"n"}`, 200, nil)
	f.do("POST", "/threads/n/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"one"}}`)
	if code, body := f.do("POST", "/threads/n/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`); code != 200 || !strings.Contains(body, `"publish"`) {
		t.Fatalf("first run: %d %s", code, body)
	}
	_, evs := f.stream("/threads/n/runs/stream", `{"assistant_id":"Approval","input":{"input_text":"two"},"stream_mode":"values"}`)
	if len(evs) < 3 {
		t.Fatalf("events: %v", evs)
	}
	if got := string(evs[1].Data); got != `{"input_text":"two","rounds":0}` {
		t.Fatalf("the second run's first values = %s", got)
	}
	var st struct {
		Values json.RawMessage `json:"values"`
	}
	f.json("GET", "/threads/n/state", "", 200, &st)
	last := string(evs[len(evs)-2].Data) // before the interrupt's
	if last != string(st.Values) {
		t.Fatalf("last values event %s, thread state %s", last, st.Values)
	}
}
