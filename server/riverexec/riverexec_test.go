package riverexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/internal/napper"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/server/riverexec"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openStore opens a PostgreSQL store on a fresh database.
func openStore(t *testing.T) (*postgres.Store, string) {
	t.Helper()
	db := pgtest.New(t)
	st, err := postgres.Open(context.Background(), db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, db.DSN
}

// TestServerRunsThroughRiver serves the Approval workflow on PostgreSQL
// with its runs queued in River and carried out by the executor's
// workers: a conversation (a run to the question, the state, the resume)
// gives the same results as with the in-process pool, and each run's job
// ends success.
func TestServerRunsThroughRiver(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	ex, err := riverexec.New(ctx, riverexec.Options{Store: st, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Source{Name: "../testdata/approval.wf"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Service: svc, Store: st, Executor: ex, Assistants: []server.Assistant{{Workflow: wf}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	call := func(method, path, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return string(out)
	}
	for i, text := range []string{"doc A", "doc B", "doc C"} {
		id := "river-" + string(rune('a'+i))
		call("POST", "/threads", `{"thread_id":"`+id+`"}`)
		if r := call("POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"`+text+`"}}`); !strings.Contains(r, "Approve this draft?") {
			t.Fatalf("first run: %s", r)
		}
		if s := call("GET", "/threads/"+id+"/state", ""); !strings.Contains(s, `"next":["review"]`) {
			t.Fatalf("state: %s", s)
		}
		if r := call("POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`); !strings.Contains(r, `"published":"`+text+`"`) {
			t.Fatalf("resume: %s", r)
		}
		var runs []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(call("GET", "/threads/"+id+"/runs", "")), &runs); err != nil || len(runs) != 2 || runs[0].Status != "success" || runs[1].Status != "success" {
			t.Fatalf("runs: %+v, %v", runs, err)
		}
	}
}

// TestQueueOnlyAndWorker: a run queued by an executor with no workers (an
// API process) is carried out by another executor's worker on the same
// database (a worker process), with the job and thread it was queued with.
// Closing the worker while the run is in progress cancels the run with
// server.ErrServerClosing and puts it back on the queue: a second worker
// carries it out again.
func TestQueueOnlyAndWorker(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	api, err := riverexec.New(ctx, riverexec.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Start(func(context.Context, server.JobRef) error {
		t.Error("the queue-only executor carried out a run")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	defer api.Close(ctx)

	type seen struct {
		worker string
		job    server.JobRef
		cause  error
	}
	var mu sync.Mutex
	var got []seen
	started := make(chan struct{}, 4)
	worker := func(name string, block bool) *riverexec.Executor {
		ex, err := riverexec.New(ctx, riverexec.Options{Store: st, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := ex.Start(func(ctx context.Context, job server.JobRef) error {
			started <- struct{}{}
			var cause error
			if block {
				<-ctx.Done()
				cause = context.Cause(ctx)
			}
			mu.Lock()
			got = append(got, seen{name, job, cause})
			mu.Unlock()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return ex
	}
	w1 := worker("w1", true)
	if err := api.Submit(ctx, server.JobRef{ID: "job-1", Thread: "thread-1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the queued run did not start on the worker")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w1.Close(cctx); err != nil {
		t.Fatalf("closing w1: %v", err)
	}
	w2 := worker("w2", false)
	defer w2.Close(ctx)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		// What River made of it, to tell a lost state change from a
		// retry.
		rows, err := st.Pool().Query(ctx, `SELECT id, state, attempt, coalesce(errors::text, ''), metadata::text, scheduled_at FROM river_job`)
		if err == nil {
			for rows.Next() {
				var id int64
				var state, errs, md string
				var attempt int
				var sched time.Time
				if rows.Scan(&id, &state, &attempt, &errs, &md, &sched) == nil {
					t.Logf("river job %d: %s, attempt %d, errors %s, metadata %s, scheduled %v (now %v)", id, state, attempt, errs, md, sched, time.Now())
				}
			}
			rows.Close()
		}
		t.Fatal("the run put back by w1's close did not start on w2")
	}
	// w2's work records its run as it returns, after it said it started.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := server.JobRef{ID: "job-1", Thread: "thread-1"}
	if len(got) != 2 || got[0].worker != "w1" || got[0].job != want || !errors.Is(got[0].cause, server.ErrServerClosing) ||
		got[1].worker != "w2" || got[1].job != want || got[1].cause != nil {
		t.Fatalf("runs carried out: %+v", got)
	}
}

// TestCreateAndSubmitIsOneTransaction: a job's row and its River job are
// written together: a job of a missing thread is store.ErrNotFound and
// leaves no River job; a job that exists already is store.ErrExists and
// queues nothing more; a good one is stored and queued once.
func TestCreateAndSubmitIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	ex, err := riverexec.New(ctx, riverexec.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Start(func(context.Context, server.JobRef) error { return nil }); err != nil {
		t.Fatal(err)
	}
	defer ex.Close(ctx)
	queued := func() int {
		t.Helper()
		var n int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_run'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := ex.CreateAndSubmit(ctx, &store.Job{ID: "j0", ThreadID: "missing", Assistant: "a"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a job of a missing thread: %v; want store.ErrNotFound", err)
	}
	if n := queued(); n != 0 {
		t.Fatalf("%d River jobs after a refused job; want 0", n)
	}
	if err := st.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := ex.CreateAndSubmit(ctx, &store.Job{ID: "j1", ThreadID: "t", Assistant: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := ex.CreateAndSubmit(ctx, &store.Job{ID: "j1", ThreadID: "t", Assistant: "a"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("the same job again: %v; want store.ErrExists", err)
	}
	if j, err := st.Job(ctx, "j1"); err != nil || j.Status != store.JobPending || j.ThreadID != "t" {
		t.Fatalf("job j1: %+v, %v", j, err)
	}
	if n := queued(); n != 1 {
		t.Fatalf("%d River jobs; want 1", n)
	}
}

// node is one process of a deployment in a test: its own store on the
// shared database, its own service and server.
type node struct {
	srv  *server.Server
	ex   *riverexec.Executor
	url  string
	stop func() // stops the node as a process's end does; once
}

func startNode(t *testing.T, dsn string, workers int) *node {
	t.Helper()
	return startNodeOf(t, dsn, workers, "../testdata/approval.wf", nil)
}

// startNodeOf starts a node serving the workflow at path, with actions.
func startNodeOf(t *testing.T, dsn string, workers int, path string, actions *engine.Registry) *node {
	t.Helper()
	return startNodeWith(t, dsn, riverexec.Options{Workers: workers}, path, actions)
}

// startNodeWith starts a node with the executor's options (Store set here).
func startNodeWith(t *testing.T, dsn string, eo riverexec.Options, path string, actions *engine.Registry) *node {
	t.Helper()
	return startNodeConf(t, dsn, eo, path, actions, nodeConf{})
}

// nodeConf are a test node's stores and lease: records wraps the store
// the service writes records to, events the one its server logs run
// events to (nil: the store itself).
type nodeConf struct {
	records, events func(*postgres.Store) store.Store
	leaseTTL        time.Duration
	log             *slog.Logger // nil: none
}

// startNodeConf starts a node with the executor's options and conf.
func startNodeConf(t *testing.T, dsn string, eo riverexec.Options, path string, actions *engine.Registry, conf nodeConf) *node {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var rs, es store.Store = st, st
	if conf.records != nil {
		rs = conf.records(st)
	}
	if conf.events != nil {
		es = conf.events(st)
	}
	eo.Store = st
	if conf.log != nil {
		eo.Logger = conf.log
	}
	ex, err := riverexec.New(ctx, eo)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Options{Store: rs, Actions: actions, LeaseTTL: conf.leaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(ctx, service.Source{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Service: svc, Store: es, Executor: ex, Assistants: []server.Assistant{{Workflow: wf}}, Logger: conf.log})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	var once sync.Once
	stop := func() {
		once.Do(func() {
			hs.Close()
			if err := srv.Close(context.Background()); err != nil {
				t.Errorf("closing a node: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &node{srv: srv, ex: ex, url: hs.URL, stop: stop}
}

func (n *node) do(t *testing.T, method, path, body string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, n.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// sseEvents parses a stream's events: (event, data, id) triples.
func sseEvents(body string) [][3]string {
	var out [][3]string
	for _, block := range strings.Split(body, "\n\n") {
		var ev [3]string
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev[0] = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev[1] = line[len("data: "):]
			case strings.HasPrefix(line, "id: "):
				ev[2] = line[len("id: "):]
			}
		}
		if ev[0] != "" {
			out = append(out, ev)
		}
	}
	return out
}

// TestAPIAndWorkerProcesses: an API process (no workers) and a worker
// process on one database. Every request goes to the API process; the
// runs are carried out by the worker, and their results and streams reach
// the API's clients through the store's log of run events: runs.wait
// answers the question, then the final values; runs.stream sends the
// values and updates frames and ends; a join of the stream with a
// Last-Event-ID sends exactly the events after it; the thread's state and
// runs are the worker's doing.
func TestAPIAndWorkerProcesses(t *testing.T) {
	db := pgtest.New(t)
	api := startNode(t, db.DSN, 0)
	startNode(t, db.DSN, 2)

	if code, body := api.do(t, "POST", "/threads", `{"thread_id":"t1"}`); code != 200 {
		t.Fatal(code, body)
	}
	code, body := api.do(t, "POST", "/threads/t1/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc W"}}`)
	if code != 200 || !strings.Contains(body, "Approve this draft?") {
		t.Fatalf("first run: %d %s", code, body)
	}
	if _, st := api.do(t, "GET", "/threads/t1/state", ""); !strings.Contains(st, `"next":["review"]`) {
		t.Fatalf("state: %s", st)
	}
	code, body = api.do(t, "POST", "/threads/t1/runs/stream", `{"assistant_id":"Approval","command":{"resume":"yes"},"stream_mode":["values","updates"]}`)
	evs := sseEvents(body)
	if code != 200 || len(evs) < 3 || evs[0][0] != "metadata" {
		t.Fatalf("resume stream: %d %q", code, evs)
	}
	last := evs[len(evs)-1]
	if last[0] != "values" || !strings.Contains(last[1], `"published":"doc W"`) {
		t.Fatalf("the stream's last event: %q; want the final values", last)
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(evs[0][1]), &run); err != nil || run.RunID == "" {
		t.Fatalf("metadata: %s", evs[0][1])
	}
	// Rejoin after the second event: the rest, exactly.
	_, rest := api.do(t, "GET", "/threads/t1/runs/"+run.RunID+"/stream", "", "Last-Event-ID", evs[1][2])
	if got, want := sseEvents(rest), evs[2:]; len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
		t.Fatalf("rejoined after %s:\n got %q\nwant %q", evs[1][2], got, want)
	}
	_, runs := api.do(t, "GET", "/threads/t1/runs", "")
	if strings.Count(runs, `"status":"success"`) != 2 {
		t.Fatalf("runs: %s", runs)
	}
	if _, j := api.do(t, "GET", "/threads/t1/runs/"+run.RunID+"/join", ""); !strings.Contains(j, `"published":"doc W"`) {
		t.Fatalf("join: %s", j)
	}
}

// TestCancelAcrossProcesses: a run carried out by the worker process is
// cancelled through the API process: with action interrupt it ends
// interrupted and the thread takes a new run; with action rollback it is
// deleted and the thread is back to its state before the run, on the
// worker, as with one process.
func TestCancelAcrossProcesses(t *testing.T) {
	db := pgtest.New(t)
	n := napper.New()
	api := startNodeOf(t, db.DSN, 0, "../testdata/sleepy.wf", n.Registry())
	startNodeOf(t, db.DSN, 2, "../testdata/sleepy.wf", n.Registry())
	api.do(t, "POST", "/threads", `{"thread_id":"c"}`)

	// a completes; b is cancelled (interrupt); c is rolled back.
	go func() { n.WaitStarted(t, "a"); n.Gate <- struct{}{} }()
	if code, body := api.do(t, "POST", "/threads/c/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"a"}}`); code != 200 || !strings.Contains(body, "slept a") {
		t.Fatalf("a: %d %s", code, body)
	}
	for _, c := range []struct{ text, action, status string }{{"b", "interrupt", "interrupted"}, {"c", "rollback", ""}} {
		_, body := api.do(t, "POST", "/threads/c/runs", `{"assistant_id":"Sleepy","input":{"input_text":"`+c.text+`"},"durability":"sync"}`)
		var run struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(body), &run); err != nil {
			t.Fatal(body)
		}
		n.WaitStarted(t, c.text)
		var before string
		if c.action == "rollback" {
			// c's first step is written before its nap starts (sync).
			_, before = api.do(t, "POST", "/threads/c/history", `{}`)
		}
		start := time.Now()
		if code, body := api.do(t, "POST", "/threads/c/runs/"+run.RunID+"/cancel?wait=1&action="+c.action, ""); code != 204 {
			t.Fatalf("cancel %s (%s): %d %s", c.text, c.action, code, body)
		}
		// The goal is a second; the bound leaves CI its slack.
		d := time.Since(start)
		t.Logf("cancel %s (%s) across processes: %v", c.text, c.action, d.Round(time.Millisecond))
		if d > 2*time.Second {
			t.Errorf("cancel %s took %v", c.text, d)
		}
		code, r := api.do(t, "GET", "/threads/c/runs/"+run.RunID, "")
		switch c.action {
		case "interrupt":
			if code != 200 || !strings.Contains(r, `"status":"interrupted"`) {
				t.Fatalf("%s after its cancel: %d %s", c.text, code, r)
			}
		case "rollback":
			if code != 404 {
				t.Fatalf("%s after its rollback: %d %s; want 404", c.text, code, r)
			}
			// The history is as it was before c began: c's own
			// checkpoints are gone.
			if !strings.Contains(before, `"input_text":"c"`) {
				t.Fatalf("history while c runs: %s", before)
			}
			if _, after := api.do(t, "POST", "/threads/c/history", `{}`); strings.Contains(after, `"input_text":"c"`) || !strings.Contains(after, `"slept a"`) {
				t.Fatalf("history after the rollback: %s", after)
			}
		}
	}
	// The thread takes a new run.
	go func() { n.WaitStarted(t, "d"); n.Gate <- struct{}{} }()
	if code, body := api.do(t, "POST", "/threads/c/runs/wait", `{"assistant_id":"Sleepy","input":{"input_text":"d"}}`); code != 200 || !strings.Contains(body, "slept d") {
		t.Fatalf("d: %d %s", code, body)
	}
}

// TestSweepQueuesADeadWorkersRun: a job left running by a worker that
// died (its thread unleased, the job claimed long ago, its River job
// gone) is queued again by a sweep, once, and carried out by a live
// worker as a new attempt; so is a pending job with no River job (queued
// before River, or its River job deleted), and one whose River job a
// worker that died after putting it back left running. A River job left
// running for a run that ended is cancelled, the run left as it is.
func TestSweepQueuesADeadWorkersRun(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	api := startNode(t, db.DSN, 0)
	runOn := func(thread, text string) string {
		t.Helper()
		api.do(t, "POST", "/threads", `{"thread_id":"`+thread+`"}`)
		code, body := api.do(t, "POST", "/threads/"+thread+"/runs", `{"assistant_id":"Approval","input":{"input_text":"`+text+`"}}`)
		var run struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(body), &run); code != 200 || err != nil {
			t.Fatalf("run: %d %s", code, body)
		}
		return run.RunID
	}
	dead, unqueued := runOn("s", "doc S"), runOn("old", "doc O")
	ended, putBack := runOn("e", "doc E"), runOn("p", "doc P")
	pool, err := pgxpool.New(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	// A worker claimed the first, and died: running since long ago, no
	// lease, no River job left. The second lost its River job.
	exec(`UPDATE weft_jobs SET status = 'running', updated = now() - interval '1 hour' WHERE id = $1`, dead)
	exec(`DELETE FROM river_job WHERE args->>'job_id' IN ($1, $2)`, dead, unqueued)
	// Two workers died with their River jobs running: one after its
	// run ended, one after it put its run back in the queue.
	exec(`UPDATE weft_jobs SET status = 'success' WHERE id = $1`, ended)
	exec(`UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 hour', attempted_by = '{dead}'
WHERE args->>'job_id' IN ($1, $2)`, ended, putBack)
	n1, err := api.ex.Sweep(ctx)
	if err != nil || n1 != 3 {
		t.Fatalf("sweep: %d, %v; want 3 (the dead worker's run, the one without a River job, the one put back)", n1, err)
	}
	if n2, err := api.ex.Sweep(ctx); err != nil || n2 != 0 {
		t.Fatalf("second sweep: %d, %v; want 0", n2, err)
	}
	var cancelled int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE args->>'job_id' IN ($1, $2) AND state = 'running' AND metadata ? 'cancel_attempted_at'`, ended, putBack).Scan(&cancelled); err != nil || cancelled != 2 {
		t.Fatalf("the dead workers' River jobs: %d cancelled (%v); want 2", cancelled, err)
	}
	startNodeWith(t, db.DSN, riverexec.Options{Workers: 1, LeaseTTL: time.Second, SweepEvery: -1}, "../testdata/approval.wf", nil)
	if _, r := api.do(t, "GET", "/threads/e/runs/"+ended, ""); !strings.Contains(r, `"status":"success"`) {
		t.Fatalf("the ended run after the sweep: %s", r)
	}
	for thread, id := range map[string]string{"s": dead, "old": unqueued, "p": putBack} {
		if _, j := api.do(t, "GET", "/threads/"+thread+"/runs/"+id+"/join", ""); !strings.Contains(j, "Approve this draft?") {
			t.Fatalf("join of %s after the sweep: %s", thread, j)
		}
		if _, r := api.do(t, "GET", "/threads/"+thread+"/runs/"+id, ""); !strings.Contains(r, `"status":"success"`) {
			t.Fatalf("the swept run of %s: %s", thread, r)
		}
	}
}

// TestThreadRunsInOrderAcrossWorkers: runs enqueued on one thread, with
// two worker processes free, are carried out one at a time in the order
// they were queued; runs of another thread go on meanwhile.
func TestThreadRunsInOrderAcrossWorkers(t *testing.T) {
	db := pgtest.New(t)
	n := napper.New()
	api := startNodeOf(t, db.DSN, 0, "../testdata/sleepy.wf", n.Registry())
	startNodeOf(t, db.DSN, 2, "../testdata/sleepy.wf", n.Registry())
	startNodeOf(t, db.DSN, 2, "../testdata/sleepy.wf", n.Registry())
	api.do(t, "POST", "/threads", `{"thread_id":"o"}`)
	api.do(t, "POST", "/threads", `{"thread_id":"p"}`)
	for _, text := range []string{"a", "b", "c"} {
		if code, body := api.do(t, "POST", "/threads/o/runs", `{"assistant_id":"Sleepy","input":{"input_text":"`+text+`"}}`); code != 200 {
			t.Fatalf("run %s: %d %s", text, code, body)
		}
	}
	n.WaitStarted(t, "a")
	// Another thread's run starts while a holds thread o; b does not.
	api.do(t, "POST", "/threads/p/runs", `{"assistant_id":"Sleepy","input":{"input_text":"x"}}`)
	n.WaitStarted(t, "x")
	n.Gate <- struct{}{} // one of a and x ends
	n.Gate <- struct{}{} // the other
	for _, text := range []string{"b", "c"} {
		n.WaitStarted(t, text)
		select {
		case got := <-n.Started:
			t.Fatalf("%s started while %s runs", got, text)
		case <-time.After(500 * time.Millisecond):
		}
		n.Gate <- struct{}{}
	}
	var runs []struct {
		Status string `json:"status"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := api.do(t, "GET", "/threads/o/runs", "")
		if err := json.Unmarshal([]byte(body), &runs); err != nil {
			t.Fatal(body)
		}
		if strings.Count(body, `"status":"success"`) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs of o: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
