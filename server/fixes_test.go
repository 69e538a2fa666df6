package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/napper"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// sort_by is honoured: created_at, thread_id and status order the
// threads by that field, not by when they were last updated.
func TestSearchThreadsSortBy(t *testing.T) {
	f := newFixture(t, nil)
	for _, id := range []string{"b", "c", "a"} {
		f.json("POST", "/threads", `{"thread_id":"`+id+`"}`, 200, nil)
	}
	// b is updated last, and interrupted.
	f.json("PATCH", "/threads/b", `{"metadata":{"x":1}}`, 200, nil)
	f.start("b", "doc")
	ids := func(body string) string {
		t.Helper()
		var list []map[string]any
		f.json("POST", "/threads/search", body, 200, &list)
		var out []string
		for _, th := range list {
			out = append(out, th["thread_id"].(string))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ body, want string }{
		{`{"sort_by":"created_at","sort_order":"asc"}`, "b c a"},
		{`{"sort_by":"created_at","sort_order":"desc"}`, "a c b"},
		{`{"sort_by":"created_at"}`, "a c b"},
		{`{"sort_by":"thread_id","sort_order":"asc"}`, "a b c"},
		{`{"sort_by":"thread_id","sort_order":"desc","limit":2}`, "c b"},
		{`{"sort_by":"thread_id","sort_order":"asc","limit":1,"offset":1}`, "b"},
		{`{"sort_by":"status","sort_order":"asc","limit":1}`, "a"},
		{`{"sort_by":"status","sort_order":"desc","limit":1}`, "b"},
		{`{"sort_by":"updated_at","sort_order":"desc"}`, "b a c"},
		{`{"sort_by":"created_at","sort_order":"asc","status":"idle"}`, "c a"},
	} {
		if got := ids(c.body); got != c.want {
			t.Errorf("search %s = %q, want %q", c.body, got, c.want)
		}
	}
}

// A thread that never ran copies to a new thread with its metadata and
// no state.
func TestCopyThreadThatNeverRan(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"n","metadata":{"user":"u"}}`, 200, nil)
	var cp map[string]any
	f.json("POST", "/threads/n/copy", "", 200, &cp)
	if cp["thread_id"] == "n" || cp["metadata"].(map[string]any)["user"] != "u" || cp["status"] != "idle" {
		t.Fatalf("copy = %v", cp)
	}
	var st map[string]any
	f.json("GET", "/threads/"+cp["thread_id"].(string)+"/state", "", 200, &st)
	if next, _ := json.Marshal(st["next"]); string(next) != `[]` {
		t.Fatalf("state of the copy: %v", st)
	}
}

// Runs that arrive at once with multitask_strategy reject on an idle
// thread: one is accepted, the others are 422 (the check of the busy
// thread and the making of the run are one step).
func TestConcurrentRejectAcceptsOne(t *testing.T) {
	n := napper.New()
	f := sleepyFixture(t, &slowJobs{memory.New()}, n)
	go func() {
		for range n.Started {
		}
	}()
	for it := range 5 {
		id := fmt.Sprintf("t%d", it)
		f.json("POST", "/threads", `{"thread_id":"`+id+`"}`, 200, nil)
		var wg sync.WaitGroup
		codes := make([]int, 8)
		for i := range codes {
			wg.Go(func() {
				codes[i], _ = f.do("POST", "/threads/"+id+"/runs", `{"assistant_id":"Sleepy","input":{"input_text":"x"},"multitask_strategy":"reject"}`)
			})
		}
		wg.Wait()
		accepted := 0
		for _, c := range codes {
			switch c {
			case 200:
				accepted++
			case 422:
			default:
				t.Fatalf("iteration %d: status %d", it, c)
			}
		}
		for range accepted {
			n.Gate <- struct{}{}
		}
		if accepted != 1 {
			t.Errorf("iteration %d: %d of 8 concurrent rejecting runs accepted, want 1 (codes %v)", it, accepted, codes)
		}
	}
}

// slowJobs is a memory store whose job listings answer late, as a busy
// database does: concurrent requests all list before any makes a job.
type slowJobs struct{ *memory.Store }

func (s *slowJobs) Jobs(ctx context.Context, q store.JobQuery) ([]*store.Job, error) {
	js, err := s.Store.Jobs(ctx, q)
	time.Sleep(10 * time.Millisecond)
	return js, err
}

// A client that joins a run with cancel_on_disconnect (LangGraph's
// client sends 1, others true) and goes away cancels the run; with 0 the
// run goes on.
func TestJoinCancelOnDisconnect(t *testing.T) {
	for _, c := range []struct{ path, param, want string }{
		{"/stream", "1", "interrupted"},
		{"/stream", "true", "interrupted"},
		{"/join", "1", "interrupted"},
		{"/stream", "0", "running"},
		{"/join", "0", "running"},
	} {
		t.Run(c.path+"="+c.param, func(t *testing.T) {
			n := napper.New()
			f := sleepyFixture(t, memory.New(), n)
			f.json("POST", "/threads", `{"thread_id":"j"}`, 200, nil)
			var run map[string]any
			f.json("POST", "/threads/j/runs", `{"assistant_id":"Sleepy","input":{"input_text":"a"}}`, 200, &run)
			id := run["run_id"].(string)
			n.WaitStarted(t, "a")
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", f.ts.URL+"/threads/j/runs/"+id+c.path+"?cancel_on_disconnect="+c.param, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if c.path == "/stream" {
				buf := make([]byte, 10)
				if _, err := io.ReadFull(resp.Body, buf); err != nil {
					t.Fatal(err)
				}
			}
			cancel()
			resp.Body.Close()
			if c.want == "interrupted" {
				eventually(t, "the run is cancelled", func() bool { return f.runStatus("j", id) == "interrupted" })
				return
			}
			time.Sleep(100 * time.Millisecond)
			if got := f.runStatus("j", id); got != "running" {
				t.Fatalf("run after its joining client went: %s", got)
			}
			n.Gate <- struct{}{}
			eventually(t, "the run ends", func() bool { return f.runStatus("j", id) == "success" })
		})
	}
}
