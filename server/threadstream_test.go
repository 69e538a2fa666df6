package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// liveStream is a stream read as it comes: its events on evs, closed when
// the server ends it.
type liveStream struct {
	evs    chan sseEvent
	cancel context.CancelFunc
}

// openStream opens GET path (with headers hdr) and reads its events in
// the background; it fails the test unless the answer is an event stream.
func openStream(t *testing.T, url string, hdr ...string) *liveStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ls := &liveStream{evs: make(chan sseEvent, 1024), cancel: cancel}
	go func() {
		defer close(ls.evs)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var cur sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.Event != "" {
					ls.evs <- cur
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
	}()
	return ls
}

// until reads events until the n-th run_done (n of them included); it
// fails the test if the stream ends first or nothing comes for 10s.
func (ls *liveStream) until(t *testing.T, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	for done := 0; done < n; {
		select {
		case e, ok := <-ls.evs:
			if !ok {
				t.Fatalf("the stream ended after %d events: %s", len(out), show(out))
			}
			out = append(out, e)
			if e.Event == "run_done" {
				done++
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event for 10s after %d: %s", len(out), show(out))
		}
	}
	return out
}

// ends checks that the server ends the stream (with no more events)
// within 10s.
func (ls *liveStream) ends(t *testing.T) {
	t.Helper()
	select {
	case e, ok := <-ls.evs:
		if ok {
			t.Fatalf("an event %s %s, want the stream's end", e.Event, e.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end within 10s")
	}
}

// show lists events one a line: id event data.
func show(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("\n" + e.ID + " " + e.Event + " " + string(e.Data))
	}
	return b.String()
}

// runOfMeta returns the run_id of a metadata or run_done frame.
func runOfMeta(t *testing.T, e sseEvent) string {
	t.Helper()
	var m struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(e.Data, &m); err != nil || m.RunID == "" {
		t.Fatalf("%s frame without a run_id: %s", e.Event, e.Data)
	}
	return m.RunID
}

// TestThreadStream: a client that joins a thread's stream before its
// first run sees that run's frames, its run_done, then the next run's,
// in order, each id naming its run; a client reconnecting with any of
// those ids gets exactly the events after it; lifecycle mode sends the
// metadata and run_done frames only, state_update the values only; an
// unknown thread is 404; deleting the thread ends the stream.
func TestThreadStream(t *testing.T) {
	f := newFixture(t, nil)
	if code, body := f.do("GET", "/threads/nope/stream", ""); code != 404 {
		t.Fatalf("unknown thread: %d %s", code, body)
	}
	f.json("POST", "/threads", `{"thread_id":"ts"}`, 200, nil)
	if code, body := f.do("GET", "/threads/ts/stream?stream_mode=bogus", ""); code != 422 && code != 400 {
		t.Fatalf("a bad mode: %d %s", code, body)
	}
	all := openStream(t, f.ts.URL+"/threads/ts/stream")
	life := openStream(t, f.ts.URL+"/threads/ts/stream?stream_mode=lifecycle")
	state := openStream(t, f.ts.URL+"/threads/ts/stream?stream_mode=state_update")

	// Two runs, started by other requests: the question, then the answer.
	var r1, r2 struct {
		RunID  string `json:"run_id"`
		Status string
	}
	f.json("POST", "/threads/ts/runs", `{"assistant_id":"Approval","input":{"input_text":"doc T"},"stream_mode":["values","updates"]}`, 200, &r1)
	f.json("GET", "/threads/ts/runs/"+r1.RunID+"/join", "", 200, nil)
	f.json("POST", "/threads/ts/runs", `{"assistant_id":"Approval","command":{"resume":"yes"}}`, 200, &r2)
	f.json("GET", "/threads/ts/runs/"+r2.RunID+"/join", "", 200, nil)
	f.json("GET", "/threads/ts/runs/"+r1.RunID, "", 200, &r1)
	f.json("GET", "/threads/ts/runs/"+r2.RunID, "", 200, &r2)

	evs := all.until(t, 2)
	// Per run: metadata first, run_done last, every id "<run>/...".
	var runs []string
	var want []string
	for i, e := range evs {
		switch e.Event {
		case "metadata":
			runs = append(runs, runOfMeta(t, e))
		case "run_done":
			if runOfMeta(t, e) != runs[len(runs)-1] || e.ID != runs[len(runs)-1]+"/end" {
				t.Fatalf("event %d: run_done %s %s in run %s", i, e.ID, e.Data, runs[len(runs)-1])
			}
		}
		if len(runs) == 0 || !strings.HasPrefix(e.ID, runs[len(runs)-1]+"/") {
			t.Fatalf("event %d %q is not of the run it is in:%s", i, e.ID, show(evs))
		}
	}
	if strings.Join(runs, " ") != r1.RunID+" "+r2.RunID {
		t.Fatalf("runs %v, want %s then %s:%s", runs, r1.RunID, r2.RunID, show(evs))
	}
	for _, r := range []struct{ id, status string }{{r1.RunID, r1.Status}, {r2.RunID, r2.Status}} {
		want = append(want, `{"run_id":"`+r.id+`","status":"`+r.status+`"}`)
	}
	var dones []string
	for _, e := range evs {
		if e.Event == "run_done" {
			dones = append(dones, string(e.Data))
		}
	}
	if strings.Join(dones, "\n") != strings.Join(want, "\n") {
		t.Fatalf("run_done frames:\n%s\nwant\n%s", strings.Join(dones, "\n"), strings.Join(want, "\n"))
	}
	if evs[1].Event != "values" || !strings.Contains(string(evs[1].Data), `"input_text":"doc T"`) {
		t.Fatalf("run 1's first frame after its metadata: %s %s", evs[1].Event, evs[1].Data)
	}
	last := evs[len(evs)-2]
	if last.Event != "values" || !strings.Contains(string(last.Data), `"published":"doc T"`) {
		t.Fatalf("run 2's last frame: %s %s, want the final values", last.Event, last.Data)
	}

	// Reconnect after each event: exactly the rest.
	for i := range evs[:len(evs)-1] {
		again := openStream(t, f.ts.URL+"/threads/ts/stream", "Last-Event-ID", evs[i].ID)
		got := again.until(t, strings.Count(show(evs[i+1:]), " run_done "))
		again.cancel()
		if show(got) != show(evs[i+1:]) {
			t.Fatalf("reconnected after %s:%s\nwant:%s", evs[i].ID, show(got), show(evs[i+1:]))
		}
	}
	// "-": every run of the thread, from the first.
	from := openStream(t, f.ts.URL+"/threads/ts/stream", "Last-Event-ID", "-")
	if got := from.until(t, 2); show(got) != show(evs) {
		t.Fatalf("from the start:%s\nwant:%s", show(got), show(evs))
	}
	from.cancel()

	var lifeWant, stateWant []sseEvent
	for _, e := range evs {
		switch e.Event {
		case "metadata", "run_done":
			lifeWant = append(lifeWant, e)
		case "values":
			stateWant = append(stateWant, e)
		}
	}
	if got := life.until(t, 2); show(got) != show(lifeWant) {
		t.Fatalf("lifecycle:%s\nwant:%s", show(got), show(lifeWant))
	}
	// state_update sends no run_done: its values, up to the final ones.
	var got []sseEvent
	for len(got) < len(stateWant) {
		select {
		case e := <-state.evs:
			got = append(got, e)
		case <-time.After(10 * time.Second):
			t.Fatalf("state_update: %s\nwant:%s", show(got), show(stateWant))
		}
	}
	if show(got) != show(stateWant) {
		t.Fatalf("state_update:%s\nwant:%s", show(got), show(stateWant))
	}

	// Deleting the thread ends its streams.
	if code, body := f.do("DELETE", "/threads/ts", ""); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	all.ends(t)
	life.ends(t)
	state.ends(t)
}

// TestThreadStreamEndsOnClose: a thread stream waiting for a run ends
// when the server closes.
func TestThreadStreamEndsOnClose(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"tc"}`, 200, nil)
	ls := openStream(t, f.ts.URL+"/threads/tc/stream")
	if err := f.srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ls.ends(t)
}

// A client reconnecting with an event id of a run deleted since (a
// rollback, DELETE /threads/{id}/runs/{rid}) joins the thread's stream as
// with no id, and follows its next run, instead of failing for good.
func TestThreadStreamRejoinAfterItsRunWasDeleted(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"tdel"}`, 200, nil)
	var r1, r2 struct {
		RunID string `json:"run_id"`
	}
	f.json("POST", "/threads/tdel/runs", `{"assistant_id":"Approval","input":{"input_text":"doc D"}}`, 200, &r1)
	f.json("GET", "/threads/tdel/runs/"+r1.RunID+"/join", "", 200, nil)
	if code, body := f.do("DELETE", "/threads/tdel/runs/"+r1.RunID, ""); code != 204 {
		t.Fatalf("delete run: %d %s", code, body)
	}
	again := openStream(t, f.ts.URL+"/threads/tdel/stream", "Last-Event-ID", r1.RunID+"/end")
	f.json("POST", "/threads/tdel/runs", `{"assistant_id":"Approval","input":{"input_text":"doc E"}}`, 200, &r2)
	evs := again.until(t, 1)
	if evs[0].Event != "metadata" || runOfMeta(t, evs[0]) != r2.RunID {
		t.Fatalf("after the deleted run, want run %s from its start:%s", r2.RunID, show(evs))
	}
}
