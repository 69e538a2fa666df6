package riverexec_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/pgtest"
)

// readSSE reads the events of GET url (with headers hdr) as they come,
// (event, data, id) triples on the channel, closed at the stream's end.
func readSSE(t *testing.T, url string, hdr ...string) (<-chan [3]string, context.CancelFunc) {
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
	if resp.StatusCode != 200 {
		resp.Body.Close()
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	out := make(chan [3]string, 1024)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev [3]string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev[0] != "" {
					out <- ev
				}
				ev = [3]string{}
			case strings.HasPrefix(line, "event: "):
				ev[0] = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev[1] = line[len("data: "):]
			case strings.HasPrefix(line, "id: "):
				ev[2] = line[len("id: "):]
			}
		}
	}()
	return out, cancel
}

// untilDone reads events until the n-th run_done, each within 20s.
func untilDone(t *testing.T, evs <-chan [3]string, n int) [][3]string {
	t.Helper()
	return untilDoneIn(t, evs, n, 20*time.Second)
}

// untilDoneIn reads events until the n-th run_done, each within wait.
func untilDoneIn(t *testing.T, evs <-chan [3]string, n int, wait time.Duration) [][3]string {
	t.Helper()
	var got [][3]string
	for done := 0; done < n; {
		select {
		case e, ok := <-evs:
			if !ok {
				t.Fatalf("the stream ended after %q", got)
			}
			got = append(got, e)
			if e[0] == "run_done" {
				done++
			}
		case <-time.After(wait):
			t.Fatalf("no event for %s after %q", wait, got)
		}
	}
	return got
}

// TestThreadStreamAcrossProcesses: a client of the API process (no
// workers) joins a thread's stream before its first run; the runs are
// carried out by the worker process, the second one created through the
// worker process (another client of another process): the client sees
// both runs' frames and run_done frames, in order; reconnecting after
// any event sends exactly the rest; deleting the thread through the
// worker process ends the stream.
func TestThreadStreamAcrossProcesses(t *testing.T) {
	db := pgtest.New(t)
	api := startNode(t, db.DSN, 0)
	worker := startNode(t, db.DSN, 2)
	if code, body := api.do(t, "POST", "/threads", `{"thread_id":"ts"}`); code != 200 {
		t.Fatal(code, body)
	}
	evs, _ := readSSE(t, api.url+"/threads/ts/stream")

	var r1, r2 struct {
		RunID string `json:"run_id"`
	}
	code, body := api.do(t, "POST", "/threads/ts/runs", `{"assistant_id":"Approval","input":{"input_text":"doc X"}}`)
	if code != 200 || json.Unmarshal([]byte(body), &r1) != nil {
		t.Fatalf("run 1: %d %s", code, body)
	}
	first := untilDone(t, evs, 1)
	code, body = worker.do(t, "POST", "/threads/ts/runs", `{"assistant_id":"Approval","command":{"resume":"yes"}}`)
	if code != 200 || json.Unmarshal([]byte(body), &r2) != nil {
		t.Fatalf("run 2: %d %s", code, body)
	}
	// Found within a few of the API process's looks at the thread's runs
	// (a second apart), not at its keep-alive (15s).
	got := append(first, untilDoneIn(t, evs, 1, 5*time.Second)...)
	var runs []string
	for i, e := range got {
		if e[0] == "metadata" {
			var m struct {
				RunID string `json:"run_id"`
			}
			_ = json.Unmarshal([]byte(e[1]), &m)
			runs = append(runs, m.RunID)
		}
		if len(runs) == 0 || !strings.HasPrefix(e[2], runs[len(runs)-1]+"/") {
			t.Fatalf("event %d %q is not of its run: %q", i, e[2], got)
		}
	}
	if strings.Join(runs, " ") != r1.RunID+" "+r2.RunID {
		t.Fatalf("runs %v, want %s %s: %q", runs, r1.RunID, r2.RunID, got)
	}
	last := got[len(got)-1]
	if last[0] != "run_done" || last[1] != `{"run_id":"`+r2.RunID+`","status":"success"}` {
		t.Fatalf("the last event %q", last)
	}
	if fin := got[len(got)-2]; fin[0] != "values" || !strings.Contains(fin[1], `"published":"doc X"`) {
		t.Fatalf("run 2's last frame %q, want the final values", fin)
	}
	for i := range got[:len(got)-1] {
		again, stop := readSSE(t, api.url+"/threads/ts/stream", "Last-Event-ID", got[i][2])
		rest := got[i+1:]
		n := 0
		for _, e := range rest {
			if e[0] == "run_done" {
				n++
			}
		}
		if re := untilDone(t, again, n); len(re) != len(rest) || re[0] != rest[0] || re[len(re)-1] != rest[len(rest)-1] {
			t.Fatalf("reconnected after %s:\n got %q\nwant %q", got[i][2], re, rest)
		}
		stop()
	}
	if code, body := worker.do(t, "DELETE", "/threads/ts", ""); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	select {
	case e, ok := <-evs:
		if ok {
			t.Fatalf("an event %q after the thread's delete", e)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream did not end within 20s of the thread's delete")
	}
}
