package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/sqlite"
)

// BenchmarkScale measures what a request costs as stored threads grow:
// on a SQLite store pre-filled with 0, 10k and 100k threads (each with its
// runs, records and jobs, one in ten waiting at a question, the others
// done), a conversation (as BenchmarkConversation), a metadata search, a
// status search and a thread's history. Flat is the goal. The filled
// stores are built once through the store's API and cached in the
// temporary directory (weft-scale-<n>-<version>.db), each benchmark
// working on a copy.
//
//	go test ./server -run '^$' -bench Scale -benchmem
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{0, 10_000, 100_000} {
		b.Run(fmt.Sprintf("threads=%d", n), func(b *testing.B) {
			for _, c := range []struct {
				name string
				run  func(b *testing.B, call func(method, path, body string) string)
			}{
				{"conversation", func(b *testing.B, call func(method, path, body string) string) {
					for b.Loop() {
						conversation(b, call)
					}
				}},
				{"search-metadata", func(b *testing.B, call func(method, path, body string) string) {
					for b.Loop() {
						if r := call("POST", "/threads/search", `{"metadata":{"user":"u7"},"limit":10}`); n > 0 && strings.Count(r, `"thread_id"`) != 10 {
							b.Fatalf("search: %.300s", r)
						}
					}
				}},
				{"search-status", func(b *testing.B, call func(method, path, body string) string) {
					for b.Loop() {
						if r := call("POST", "/threads/search", `{"status":"interrupted","limit":10}`); n > 0 && strings.Count(r, `"thread_id"`) != 10 {
							b.Fatalf("search: %.300s", r)
						}
					}
				}},
				{"history", func(b *testing.B, call func(method, path, body string) string) {
					for b.Loop() {
						if r := call("POST", "/threads/tpl-done/history", `{"limit":1}`); !strings.Contains(r, `"checkpoint_id"`) {
							b.Fatalf("history: %.300s", r)
						}
					}
				}},
			} {
				b.Run(c.name, func(b *testing.B) {
					path := filepath.Join(b.TempDir(), "weft.db")
					if err := copyFile(filledStore(b, n), path); err != nil {
						b.Fatal(err)
					}
					call, _ := benchServer(b, path)
					b.ReportAllocs()
					cpu := cpuTime()
					b.ResetTimer()
					c.run(b, call)
					b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// conversation is BenchmarkConversation's loop body.
func conversation(b *testing.B, call func(method, path, body string) string) string {
	th := call("POST", "/threads", `{"metadata":{"user":"bench"}}`)
	id := th[len(`{"thread_id":"`):strings.Index(th, `","created_at"`)]
	if r := call("POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`); !strings.Contains(r, "__interrupt__") {
		b.Fatalf("first run: %s", r)
	}
	if s := call("GET", "/threads/"+id+"/state", ""); !strings.Contains(s, `"next":["review"]`) {
		b.Fatalf("state: %s", s)
	}
	if r := call("POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`); !strings.Contains(r, `"published":"doc"`) {
		b.Fatalf("resume: %s", r)
	}
	return id
}

// benchServer serves the Approval workflow over the SQLite file at path
// on loopback, until b ends or stop is called, and returns a caller of
// it.
func benchServer(b *testing.B, path string) (call func(method, path, body string) string, stop func()) {
	ctx := context.Background()
	var stops []func()
	stop = sync.OnceFunc(func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	})
	b.Cleanup(stop)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	stops = append(stops, func() { st.Close() })
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	stops = append(stops, func() { svc.Close() })
	wf, err := svc.Open(ctx, service.Source{Name: "testdata/approval.wf"})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Options{Service: svc, Store: st, Assistants: []server.Assistant{{Workflow: wf}}})
	if err != nil {
		b.Fatal(err)
	}
	stops = append(stops, func() { srv.Close(ctx) })
	hs := &http.Server{Handler: srv.Handler()}
	ln, err := listen()
	if err != nil {
		b.Fatal(err)
	}
	go hs.Serve(ln)
	stops = append(stops, func() { hs.Close() })
	base := "http://" + ln.Addr().String()
	return benchCaller(b, base), stop
}

// scaleVersion names the cached filled stores: change it when what
// filledStore writes changes.
const scaleVersion = 1

// filledStore returns the path of a SQLite store holding the threads
// tpl-wait (waiting at the review question) and tpl-done (done), made by
// conversations over HTTP, and n more threads copied from them through
// the store's API (their records, runs and jobs under new ids; one in ten
// waiting), with the metadata user = "u<i mod 100>". It is built once and
// kept in the temporary directory.
func filledStore(b *testing.B, n int) string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("weft-scale-%d-v%d.db", n, scaleVersion))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".tmp"
	os.Remove(tmp)
	os.Remove(tmp + "-wal")
	os.Remove(tmp + "-shm")
	func() {
		call, stop := benchServer(b, tmp)
		defer stop()
		call("POST", "/threads", `{"thread_id":"tpl-wait","metadata":{"user":"tpl"}}`)
		call("POST", "/threads/tpl-wait/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`)
		call("POST", "/threads", `{"thread_id":"tpl-done","metadata":{"user":"tpl"}}`)
		call("POST", "/threads/tpl-done/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`)
		call("POST", "/threads/tpl-done/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`)
	}()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, tmp)
	if err != nil {
		b.Fatal(err)
	}
	type tpl struct {
		thr  *store.Thread
		recs []*store.Record
		runs []*store.Run
		jobs []*store.Job
		pend []*store.Pending
	}
	var tpls [2]tpl
	for i, id := range []string{"tpl-done", "tpl-wait"} {
		t := &tpls[i]
		if t.thr, err = st.Thread(ctx, id); err != nil {
			b.Fatal(err)
		}
		if t.recs, err = st.Records(ctx, id, 1); err != nil {
			b.Fatal(err)
		}
		if t.runs, err = st.Runs(ctx, id); err != nil {
			b.Fatal(err)
		}
		if t.jobs, err = st.Jobs(ctx, store.JobQuery{ThreadID: id}); err != nil {
			b.Fatal(err)
		}
		if t.pend, err = st.Pending(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		t := tpls[0]
		if i%10 == 0 {
			t = tpls[1]
		}
		id := fmt.Sprintf("t%07d", i)
		thr := *t.thr
		thr.ID, thr.Meta = id, map[string]string{"user": fmt.Sprintf(`"u%d"`, i%100), "graph_id": t.thr.Meta["graph_id"], "assistant_id": t.thr.Meta["assistant_id"]}
		runID := func(r string) string { return id + "-" + r }
		batch := &store.Batch{Thread: &thr}
		for _, r := range t.recs {
			c := *r
			c.ThreadID, c.RunID, c.Fence = id, runID(r.RunID), 0
			batch.Records = append(batch.Records, &c)
		}
		if err := st.WriteBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
		for _, r := range t.runs {
			c := *r
			c.ID, c.ThreadID = runID(r.ID), id
			if err := st.PutRun(ctx, &c); err != nil {
				b.Fatal(err)
			}
		}
		for _, p := range t.pend {
			c := *p
			c.ThreadID, c.RunID = id, runID(p.RunID)
			if err := st.PutPending(ctx, &c); err != nil {
				b.Fatal(err)
			}
		}
		for _, j := range t.jobs {
			c := *j
			c.ID, c.ThreadID, c.Run = runID(j.ID), id, runID(j.Run)
			if err := st.CreateJob(ctx, &c); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// copyFile copies the SQLite file from (closed, its log checkpointed) to
// to.
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if _, err := os.Stat(from + "-wal"); err == nil {
		return fmt.Errorf("%s has a write-ahead log left: not closed", from)
	}
	return os.WriteFile(to, data, 0o600)
}
