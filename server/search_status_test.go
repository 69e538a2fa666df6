package server_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/napper"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
)

// failingSleepy serves testdata/sleepy.wf over st with a nap that fails
// for the text "fail", says it started and waits for n's gate (or its
// run's end) for a text "hold...", and else ends at once.
func failingSleepy(t *testing.T, st store.Store, n *napper.Napper) *fixture {
	t.Helper()
	reg := engine.NewRegistry()
	reg.Replace("nap", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		text := c.Inputs[0].Text()
		if text == "fail" {
			return errors.New("nap failed")
		}
		if !strings.HasPrefix(text, "hold") {
			c.Outputs[0] = flow.StringValue("slept " + text)
			return nil
		}
		n.Started <- text
		select {
		case <-n.Gate:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		c.Outputs[0] = flow.StringValue("slept " + text)
		return nil
	}))
	svc, err := service.New(service.Options{Store: st, Actions: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(context.Background(), service.Source{Name: "testdata/sleepy.wf"})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, svc, st, wf, nil)
}

// TestSearchByStatusFollowsRuns: POST /threads/search and /threads/count
// by status list exactly the threads of that status (as GET
// /threads/{id} shows it) while runs start (busy), stop at a breakpoint
// (interrupted), fail (error), are rolled back and end (idle), with
// metadata, ids, limits, offsets and sort_by status, on SQLite and in
// memory.
func TestSearchByStatusFollowsRuns(t *testing.T) {
	for _, name := range []string{"sqlite", "memory"} {
		t.Run(name, func(t *testing.T) {
			var st store.Store = memory.New()
			if name == "sqlite" {
				s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "weft.db"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				st = s
			}
			n := napper.New()
			f := failingSleepy(t, st, n)
			ids := []string{"s-idle", "s-int", "s-err", "s-busy", "s-done"}
			for i, id := range ids {
				f.json("POST", "/threads", fmt.Sprintf(`{"thread_id":%q,"metadata":{"k":%d,"all":true}}`, id, i%2), 200, nil)
			}
			// check compares each status's search and count with the
			// status GET shows, and with want.
			check := func(what string, want map[string][]string) {
				t.Helper()
				for _, status := range []string{"idle", "busy", "interrupted", "error"} {
					var shown []string
					for _, id := range ids {
						var th map[string]any
						f.json("GET", "/threads/"+id, "", 200, &th)
						if th["status"] == status {
							shown = append(shown, id)
						}
					}
					slices.Sort(shown)
					w := slices.Clone(want[status])
					slices.Sort(w)
					if !slices.Equal(shown, w) {
						t.Fatalf("%s: GET shows %s threads %v, want %v", what, status, shown, w)
					}
					var list []map[string]any
					f.json("POST", "/threads/search", `{"status":"`+status+`","limit":100}`, 200, &list)
					var got []string
					for _, th := range list {
						if th["status"] != status {
							t.Fatalf("%s: search %s lists %v of status %v", what, status, th["thread_id"], th["status"])
						}
						got = append(got, th["thread_id"].(string))
					}
					slices.Sort(got)
					if !slices.Equal(got, w) {
						t.Fatalf("%s: search %s = %v, want %v", what, status, got, w)
					}
					var count int
					f.json("POST", "/threads/count", `{"status":"`+status+`"}`, 200, &count)
					if count != len(w) {
						t.Fatalf("%s: count %s = %d, want %d", what, status, count, len(w))
					}
					// With metadata, one at a time (limit 1 and offsets).
					var k1 []string
					for _, id := range w {
						if slices.Index(ids, id)%2 == 1 {
							k1 = append(k1, id)
						}
					}
					var paged []string
					for off := 0; off <= len(k1); off++ {
						var page []map[string]any
						f.json("POST", "/threads/search", fmt.Sprintf(`{"status":%q,"metadata":{"k":1},"limit":1,"offset":%d}`, status, off), 200, &page)
						for _, th := range page {
							paged = append(paged, th["thread_id"].(string))
						}
					}
					slices.Sort(paged)
					if !slices.Equal(paged, k1) {
						t.Fatalf("%s: search %s with k=1 one at a time = %v, want %v", what, status, paged, k1)
					}
				}
				// sort_by status lists every thread, statuses in order.
				var all []map[string]any
				f.json("POST", "/threads/search", `{"sort_by":"status","sort_order":"asc","metadata":{"all":true},"limit":100}`, 200, &all)
				var statuses []string
				for _, th := range all {
					statuses = append(statuses, th["status"].(string))
				}
				if len(all) != len(ids) || !slices.IsSorted(statuses) {
					t.Fatalf("%s: sort_by status = %v", what, statuses)
				}
			}
			check("new threads", map[string][]string{"idle": ids})

			f.json("POST", "/threads/s-int/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"i"},"interrupt_before":["nap"]}`, 200, nil)
			f.json("POST", "/threads/s-err/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"fail"}}`, 200, nil)
			var busy map[string]any
			f.json("POST", "/threads/s-busy/runs", `{"assistant_id":"Sleepy","input":{"input_text":"hold-b"}}`, 200, &busy)
			n.WaitStarted(t, "hold-b")
			f.json("POST", "/threads/s-done/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"d"}}`, 200, nil)
			check("runs stopped, failed, running and done", map[string][]string{
				"idle": {"s-idle", "s-done"}, "interrupted": {"s-int"}, "error": {"s-err"}, "busy": {"s-busy"}})

			// The busy run rolled back: its thread is as before it, idle.
			if code, body := f.do("POST", "/threads/s-busy/runs/"+busy["run_id"].(string)+"/cancel?wait=1&action=rollback", ""); code != 204 {
				t.Fatalf("rollback: %d %s", code, body)
			}
			// The failed thread runs again, and is busy while it does.
			var again map[string]any
			f.json("POST", "/threads/s-err/runs", `{"assistant_id":"Sleepy","input":{"input_text":"hold-again"}}`, 200, &again)
			n.WaitStarted(t, "hold-again")
			check("rolled back; the failed one running again", map[string][]string{
				"idle": {"s-idle", "s-done", "s-busy"}, "interrupted": {"s-int"}, "busy": {"s-err"}})
			n.Gate <- struct{}{}
			f.json("GET", "/threads/s-err/runs/"+again["run_id"].(string)+"/join", "", 200, nil)
			// The stopped one continues (input null) and ends.
			if code, body := f.do("POST", "/threads/s-int/runs/wait", `{"assistant_id":"Sleepy","input":null}`); code != 200 || !strings.Contains(body, "slept i") {
				t.Fatalf("continue: %d %s", code, body)
			}
			check("all ended", map[string][]string{"idle": ids})
		})
	}
}

// loadCounter is a memory store that counts the threads whose state was
// read (through the state cache, which reads the log's head first, or
// from the last snapshot on) and the threads listed.
type loadCounter struct {
	*memory.Store
	mu     sync.Mutex
	read   map[string]bool
	listed int
}

func (s *loadCounter) readOf(threadID string) {
	s.mu.Lock()
	if s.read == nil {
		s.read = map[string]bool{}
	}
	s.read[threadID] = true
	s.mu.Unlock()
}

func (s *loadCounter) Head(ctx context.Context, threadID string) (int64, time.Time, error) {
	s.readOf(threadID)
	return s.Store.Head(ctx, threadID)
}

func (s *loadCounter) LastSnapshot(ctx context.Context, threadID string) (*store.Record, error) {
	s.readOf(threadID)
	return s.Store.LastSnapshot(ctx, threadID)
}

func (s *loadCounter) Threads(ctx context.Context, opts store.ListOptions) ([]*store.Thread, error) {
	thrs, err := s.Store.Threads(ctx, opts)
	s.mu.Lock()
	s.listed += len(thrs)
	s.mu.Unlock()
	return thrs, err
}

// take returns the counts and zeroes them.
func (s *loadCounter) take() (loads, listed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	loads, listed = len(s.read), s.listed
	s.read, s.listed = nil, 0
	return loads, listed
}

// TestSearchByStatusReadsItsMatches: among many idle threads and a few
// interrupted ones, a search by status interrupted or error reads the
// states of the threads whose last run may have that status, not every
// thread's; busy lists no thread; a page by metadata lists about its
// offset and limit and reads the page's states only; a count by metadata
// reads no state; and the answers are right.
func TestSearchByStatusReadsItsMatches(t *testing.T) {
	st := &loadCounter{Store: memory.New()}
	n := napper.New()
	f := failingSleepy(t, st, n)
	const idle = 150
	for i := range idle {
		f.json("POST", fmt.Sprintf("/threads/i%03d/runs/wait", i), `{"assistant_id":"Sleepy","input":{"input_text":"x"},"if_not_exists":"create"}`, 200, nil)
	}
	for i := range 3 {
		f.json("POST", fmt.Sprintf("/threads/p%d/runs/wait", i), `{"assistant_id":"Sleepy","input":{"input_text":"x"},"if_not_exists":"create","interrupt_before":["nap"]}`, 200, nil)
	}
	st.take()
	var list []map[string]any
	f.json("POST", "/threads/search", `{"status":"interrupted","limit":10}`, 200, &list)
	if len(list) != 3 || list[0]["status"] != "interrupted" {
		t.Fatalf("interrupted: %v", list)
	}
	if loads, listed := st.take(); loads > 10 || listed > 10 {
		t.Errorf("search interrupted read %d states of %d threads listed, of %d threads", loads, listed, idle+3)
	}
	f.json("POST", "/threads/search", `{"status":"error","limit":10}`, 200, &list)
	if len(list) != 0 {
		t.Fatalf("error: %v", list)
	}
	if loads, listed := st.take(); loads > 10 || listed > 10 {
		t.Errorf("search error read %d states of %d threads listed", loads, listed)
	}
	f.json("POST", "/threads/search", `{"status":"busy"}`, 200, &list)
	if loads, listed := st.take(); len(list) != 0 || loads != 0 || listed != 0 {
		t.Errorf("search busy: %v, read %d states of %d threads listed", list, loads, listed)
	}
	var all, page []map[string]any
	f.json("POST", "/threads/search", `{"metadata":{"graph_id":"Sleepy"},"limit":1000}`, 200, &all)
	st.take()
	f.json("POST", "/threads/search", `{"metadata":{"graph_id":"Sleepy"},"limit":2,"offset":3}`, 200, &page)
	if len(all) != idle+3 || len(page) != 2 || page[0]["thread_id"] != all[3]["thread_id"] || page[1]["thread_id"] != all[4]["thread_id"] {
		t.Fatalf("page of 2 from 3: %v; all: %d", page, len(all))
	}
	// Listed: the 3 skipped, the page's 2, and 1 more, which says
	// whether a next page exists (X-Weft-Next-Cursor).
	if loads, listed := st.take(); loads != 2 || listed > 6 {
		t.Errorf("a page of 2 from 3 read %d states of %d threads listed", loads, listed)
	}
	var count int
	f.json("POST", "/threads/count", `{"metadata":{"graph_id":"Sleepy"}}`, 200, &count)
	if loads, _ := st.take(); count != idle+3 || loads != 0 {
		t.Errorf("count by metadata = %d (want %d), read %d states", count, idle+3, loads)
	}
}
