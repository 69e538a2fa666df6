package riverexec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftlang/weft/internal/napper"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/server/riverexec"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
)

// lossyEvents is a store whose log of run events stops taking appends
// once dead is set: a process that dies between a step's record and its
// frames.
type lossyEvents struct {
	*postgres.Store
	dead atomic.Bool
}

func (l *lossyEvents) AppendRunEvents(ctx context.Context, job string, evs []*store.RunEvent) error {
	if l.dead.Load() {
		return fmt.Errorf("the process is dead: %w", store.ErrClosed)
	}
	return l.Store.AppendRunEvents(ctx, job, evs)
}

// lossyRecords is a store whose records, once held, wait until dead is
// set and then fail: a process that dies with a step's record not
// written (async durability), its frames perhaps out.
type lossyRecords struct {
	*postgres.Store
	held, dead atomic.Bool
	waiting    chan struct{} // closed by the first append that waits
	once       atomic.Bool
}

func (l *lossyRecords) hold(ctx context.Context) error {
	if !l.held.Load() {
		return nil
	}
	if l.once.CompareAndSwap(false, true) {
		close(l.waiting)
	}
	for !l.dead.Load() {
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("the process is dead: %w", store.ErrClosed)
}

func (l *lossyRecords) Append(ctx context.Context, recs ...*store.Record) error {
	if err := l.hold(ctx); err != nil {
		return err
	}
	return l.Store.Append(ctx, recs...)
}

func (l *lossyRecords) EndRun(ctx context.Context, e *store.RunEnd) error {
	if err := l.hold(ctx); err != nil {
		return err
	}
	return l.Store.EndRun(ctx, e)
}

// rig is an API node on a fresh database serving the Naps workflow,
// with the naps' gate and the database at hand.
type rig struct {
	t    *testing.T
	dsn  string
	api  *node
	naps *napper.Napper
	pool *pgxpool.Pool
}

func newRig(t *testing.T) *rig {
	return newRigOn(t, pgtest.New(t).DSN)
}

// newRigOn is a rig on the database at dsn.
func newRigOn(t *testing.T, dsn string) *rig {
	r := &rig{t: t, dsn: dsn, naps: napper.New()}
	r.api = startNodeOf(t, dsn, 0, "../testdata/naps.wf", r.naps.Registry())
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	r.pool = pool
	return r
}

// worker starts a worker with conf; stop stops it as a process's end
// would.
func (r *rig) worker(conf nodeConf) (stop func()) {
	if conf.leaseTTL == 0 {
		conf.leaseTTL = time.Second
	}
	eo := riverexec.Options{Workers: 1, LeaseTTL: conf.leaseTTL}
	return startNodeConf(r.t, r.dsn, eo, "../testdata/naps.wf", r.naps.Registry(), conf).stop
}

// run starts a run of Naps on a new thread through the API.
func (r *rig) run(thread, durability string) string {
	t := r.t
	t.Helper()
	r.api.do(t, "POST", "/threads", `{"thread_id":"`+thread+`"}`)
	code, body := r.api.do(t, "POST", "/threads/"+thread+"/runs", `{"assistant_id":"Naps","input":{},"stream_mode":["updates","values"],"durability":"`+durability+`"}`)
	var run struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(body), &run); code != 200 || err != nil {
		t.Fatalf("run: %d %s", code, body)
	}
	return run.RunID
}

// stream follows a run's stream through the API, to its end.
func (r *rig) stream(thread, id string, hdr ...string) <-chan [][3]string {
	out := make(chan [][3]string, 1)
	go func() {
		code, body := r.api.do(r.t, "GET", "/threads/"+thread+"/runs/"+id+"/stream", "", hdr...)
		if code != 200 {
			r.t.Errorf("stream of run %s: %d %s", id, code, body)
		}
		out <- sseEvents(body)
	}()
	return out
}

// marks counts the log's marks of node's step in run id.
func (r *rig) marks(id, node string) int {
	var k int
	if err := r.pool.QueryRow(context.Background(), `SELECT count(*) FROM weft_run_events WHERE job_id = $1 AND event = 'weft:step' AND convert_from(data, 'UTF8') LIKE $2`, id, `%"node":"`+node+`"%`).Scan(&k); err != nil {
		r.t.Fatal(err)
	}
	return k
}

// waitMark waits until the log marks node's step of run id.
func (r *rig) waitMark(id, node string) {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); r.marks(id, node) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.t.Fatalf("step %s of run %s never marked in the log", node, id)
		}
	}
}

// nap lets the nap of node go once it starts.
func (r *rig) nap(node string) {
	r.t.Helper()
	r.naps.WaitStarted(r.t, node)
	r.naps.Gate <- struct{}{}
}

// reference is the stream of a run of Naps no one takes over, carried
// out by a worker of the rig's.
func (r *rig) reference(thread string) [][3]string {
	id := r.run(thread, "sync")
	ref := r.stream(thread, id)
	for _, node := range []string{"a", "b", "c"} {
		r.nap(node)
	}
	return <-ref
}

// framesOf is a stream's frames as "event data", metadata frames aside.
func framesOf(evs [][3]string) []string {
	var out []string
	for _, e := range evs {
		if e[0] != "metadata" {
			out = append(out, e[0]+" "+e[1])
		}
	}
	return out
}

// sameFrames fails unless the streams have the same frames, metadata
// frames aside.
func sameFrames(t *testing.T, got, want [][3]string) {
	t.Helper()
	if g, w := framesOf(got), framesOf(want); !slices.Equal(g, w) {
		t.Fatalf("the stream of the run taken over:\n%s\nwant, as the run no one took over:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	var attempts []string
	for _, e := range got {
		if e[0] == "metadata" {
			attempts = append(attempts, e[1])
		}
	}
	if len(attempts) != 2 || !strings.Contains(attempts[1], `"attempt":2`) {
		t.Fatalf("metadata frames: %q; want one per attempt, the second's attempt 2", attempts)
	}
}

// TestTakeoverStreamsEveryStepOnce: a worker records step b of a run
// and dies before b's frames reach the log (its appends fail from then
// on); the worker that takes the run over sends b's update and values,
// derived from the thread's checkpoints, before its own frames. A client
// streaming the run through the API from its start sees every step's
// update and values once, exactly as a run no one took over streams
// them; a client that rejoins with an event id of the first attempt is
// sent the rest of it, then the second.
func TestTakeoverStreamsEveryStepOnce(t *testing.T) {
	r := newRig(t)
	lossy := &lossyEvents{}
	stopA := r.worker(nodeConf{events: func(st *postgres.Store) store.Store { lossy.Store = st; return lossy }})
	id := r.run("g", "sync")
	whole := r.stream("g", id)
	r.nap("a")
	r.naps.WaitStarted(t, "b")
	r.waitMark(id, "a")
	lossy.dead.Store(true)
	r.naps.Gate <- struct{}{} // b is recorded; its frames are lost
	r.naps.WaitStarted(t, "c")
	// A stops (as good as dead: nothing it writes to the log lands);
	// its run goes back to the queue, cut short in c.
	stopA()
	if n := r.marks(id, "b"); n != 0 {
		t.Fatalf("b's frames reached the log (%d marks): the test kills nothing", n)
	}
	r.worker(nodeConf{}) // B
	r.nap("c")
	got := <-whole
	sameFrames(t, got, r.reference("h"))

	// Rejoin with the id of the first attempt's update of a: the rest
	// of the first attempt, then the second.
	at := slices.IndexFunc(got, func(e [3]string) bool { return e[0] == "updates" && strings.Contains(e[1], `"a":`) })
	rest := <-r.stream("g", id, "Last-Event-ID", got[at][2])
	if g, w := fmt.Sprint(rest), fmt.Sprint(got[at+1:]); g != w {
		t.Fatalf("rejoined after %s:\n got %s\nwant %s", got[at][2], g, w)
	}
}

// TestTakeoverSendsARerunStepOnce: with async durability a worker's
// frames of step b reach the log while b's record is still being
// written, and the worker dies before it is: the worker that takes the
// run over runs b again from the last record (a) and does not send b's
// frames a second time. The client's stream is the stream of a run no
// one took over.
func TestTakeoverSendsARerunStepOnce(t *testing.T) {
	r := newRig(t)
	recs := &lossyRecords{waiting: make(chan struct{})}
	lossy := &lossyEvents{}
	stopA := r.worker(nodeConf{
		records: func(st *postgres.Store) store.Store { recs.Store = st; return recs },
		events:  func(st *postgres.Store) store.Store { lossy.Store = st; return lossy },
	})
	id := r.run("g", "async")
	whole := r.stream("g", id)
	r.nap("a")
	r.naps.WaitStarted(t, "b")
	r.waitMark(id, "a")
	recs.held.Store(true)
	r.naps.Gate <- struct{}{} // b's record waits; its frames go out
	r.naps.WaitStarted(t, "c")
	<-recs.waiting
	r.waitMark(id, "b")
	lossy.dead.Store(true)
	recs.dead.Store(true)
	stopA()
	r.worker(nodeConf{}) // B
	r.nap("b")
	r.nap("c")
	got := <-whole
	sameFrames(t, got, r.reference("h"))
}

// TestPostgresRestartMidRun: PostgreSQL restarts (down for 1.5 s, a
// step ending meanwhile) while a worker carries a streamed run out: the run goes on and ends
// success, the client streaming it through the API process sees every
// step once, exactly as a run no restart touched streams them, and the
// thread records each step once.
func TestPostgresRestartMidRun(t *testing.T) {
	c := pgtest.Start(t)
	db, err := c.CreateDB(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	r := newRigOn(t, db.DSN)
	// A lease that outlasts the outage: the worker keeps the run.
	r.worker(nodeConf{leaseTTL: 6 * time.Second, log: slog.New(slog.NewTextHandler(tlog{t}, nil))})
	id := r.run("g", "async") // frames go out while records wait
	whole := r.stream("g", id)
	r.nap("a")
	r.naps.WaitStarted(t, "b")
	r.waitMark(id, "a")
	restarted := make(chan error, 1)
	go func() { restarted <- c.RestartAfter(1500 * time.Millisecond) }()
	// b ends while the database is down: its record and frames wait.
	for deadline := time.Now().Add(10 * time.Second); r.pool.Ping(context.Background()) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the database never went down")
		}
	}
	r.naps.Gate <- struct{}{}
	r.nap("c")
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	got := <-whole
	want := r.reference("h")
	if g, w := framesOf(got), framesOf(want); !slices.Equal(g, w) {
		t.Fatalf("the stream through the restart:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	if _, run := r.api.do(t, "GET", "/threads/g/runs/"+id, ""); !strings.Contains(run, `"status":"success"`) {
		t.Fatalf("the run after the restart: %s", run)
	}
	_, hist := r.api.do(t, "POST", "/threads/g/history", `{"limit":100}`)
	for _, node := range []string{"a", "b", "c"} {
		if n := strings.Count(hist, `"writes":{"`+node+`"`); n > 1 {
			t.Fatalf("step %s recorded %d times:\n%s", node, n, hist)
		}
	}
}

// tlog writes to the test's log.
type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestEndedRunIsNotRunAgain: a run ended, and its worker died before its
// job said so (the job still running, its thread free): the sweep queues
// it again, and the worker that takes it records the end the thread
// shows, without running the workflow a second time.
func TestEndedRunIsNotRunAgain(t *testing.T) {
	r := newRig(t)
	r.worker(nodeConf{})
	id := r.run("g", "sync")
	for _, node := range []string{"a", "b", "c"} {
		r.nap(node)
	}
	if _, j := r.api.do(t, "GET", "/threads/g/runs/"+id+"/join", ""); !strings.Contains(j, `"c":{"out":"slept c"}`) {
		t.Fatalf("join: %s", j)
	}
	ctx := context.Background()
	if _, err := r.pool.Exec(ctx, `UPDATE weft_jobs SET status = 'running', updated = now() - interval '1 hour' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := r.pool.Exec(ctx, `DELETE FROM river_job WHERE args->>'job_id' = $1`, id); err != nil {
		t.Fatal(err)
	}
	if n, err := r.api.ex.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v; want 1", n, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, run := r.api.do(t, "GET", "/threads/g/runs/"+id, "")
		if strings.Contains(run, `"status":"success"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the swept run: %s", run)
		}
	}
	select {
	case node := <-r.naps.Started:
		t.Fatalf("the ended run ran again: nap %s started", node)
	case <-time.After(300 * time.Millisecond):
	}
	if _, runs := r.api.do(t, "GET", "/threads/g/runs", ""); strings.Count(runs, `"run_id"`) != 1 {
		t.Fatalf("runs: %s", runs)
	}
	if _, st := r.api.do(t, "GET", "/threads/g/state", ""); !strings.Contains(st, `"c":{"out":"slept c"}`) || !strings.Contains(st, `"next":[]`) {
		t.Fatalf("state: %s", st)
	}
}

// stallable is a store whose calls that hold or use a thread's lease
// (Heartbeat, Append, EndRun) wait while stalled: a worker process
// stopped (SIGSTOP) past its lease.
type stallable struct {
	*postgres.Store
	stalled atomic.Bool
}

func (s *stallable) wait() {
	for s.stalled.Load() {
		time.Sleep(time.Millisecond)
	}
}

func (s *stallable) Heartbeat(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	s.wait()
	return s.Store.Heartbeat(ctx, l, ttl)
}

func (s *stallable) Append(ctx context.Context, recs ...*store.Record) error {
	s.wait()
	return s.Store.Append(ctx, recs...)
}

func (s *stallable) EndRun(ctx context.Context, e *store.RunEnd) error {
	s.wait()
	return s.Store.EndRun(ctx, e)
}

// TestStalledWorkerLeavesTheRunAlone: a worker stalls in step b past its
// lease (its store calls wait); another sweeps, takes the run over from a
// and carries it on. When the stalled one wakes, its writes are refused
// and it leaves the job alone: the job stays running under the other
// worker, then ends success there.
func TestStalledWorkerLeavesTheRunAlone(t *testing.T) {
	r := newRig(t)
	stall := &stallable{}
	na := napper.New()
	eo := riverexec.Options{Workers: 1, LeaseTTL: time.Second}
	a := startNodeConf(t, r.dsn, eo, "../testdata/naps.wf", na.Registry(), nodeConf{leaseTTL: time.Second,
		records: func(st *postgres.Store) store.Store { stall.Store = st; return stall }, log: slog.New(slog.NewTextHandler(tlog{t}, nil))})
	t.Cleanup(func() { stall.stalled.Store(false) }) // before A stops
	id := r.run("g", "sync")
	na.WaitStarted(t, "a")
	na.Gate <- struct{}{}
	na.WaitStarted(t, "b")
	stall.stalled.Store(true)
	r.worker(nodeConf{log: slog.New(slog.NewTextHandler(tlog{t}, nil))}) // B, with the rig's naps: it sweeps, takes the run over, and runs b again
	r.nap("b")
	r.naps.WaitStarted(t, "c")
	// A wakes; its b ends (unless the sweep's cancel of its River job
	// ended it already).
	stall.stalled.Store(false)
	select {
	case na.Gate <- struct{}{}:
	case <-time.After(200 * time.Millisecond):
	}
	for deadline := time.Now().Add(10 * time.Second); a.ex.Running() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stalled worker's run never ended")
		}
	}
	if _, run := r.api.do(t, "GET", "/threads/g/runs/"+id, ""); !strings.Contains(run, `"status":"running"`) {
		t.Fatalf("the run while the other worker carries it out, after the stalled one woke: %s", run)
	}
	r.naps.Gate <- struct{}{}
	if _, j := r.api.do(t, "GET", "/threads/g/runs/"+id+"/join", ""); !strings.Contains(j, `"c":{"out":"slept c"}`) {
		t.Fatalf("join: %s", j)
	}
	if _, run := r.api.do(t, "GET", "/threads/g/runs/"+id, ""); !strings.Contains(run, `"status":"success"`) {
		t.Fatalf("the run at its end: %s", run)
	}
	_, hist := r.api.do(t, "POST", "/threads/g/history", `{"limit":100}`)
	for _, node := range []string{"a", "b", "c"} {
		if n := strings.Count(hist, `"slept `+node+`"`); n == 0 {
			t.Fatalf("step %s not recorded:\n%s", node, hist)
		}
	}
}

// unreachable is a store whose first reads of a thread's head fail as a
// store that cannot be reached does.
type unreachable struct {
	*postgres.Store
	fails atomic.Int32
}

func (u *unreachable) Head(ctx context.Context, threadID string) (int64, time.Time, error) {
	if u.fails.Add(-1) >= 0 {
		return 0, time.Time{}, fmt.Errorf("store/postgres: head of %s: connection refused: %w", threadID, store.ErrUnavailable)
	}
	return u.Store.Head(ctx, threadID)
}

// TestUnreachableStoreRequeuesTheRun: a worker that takes a run while the
// store cannot be reached (its first read of the thread fails so) puts
// the run back in the queue instead of failing it; the sweep queues it
// again and it ends success.
func TestUnreachableStoreRequeuesTheRun(t *testing.T) {
	r := newRig(t)
	u := &unreachable{}
	u.fails.Store(1)
	r.worker(nodeConf{events: func(st *postgres.Store) store.Store { u.Store = st; return u }})
	id := r.run("g", "sync")
	for _, node := range []string{"a", "b", "c"} {
		r.nap(node)
	}
	if _, j := r.api.do(t, "GET", "/threads/g/runs/"+id+"/join", ""); !strings.Contains(j, `"c":{"out":"slept c"}`) {
		t.Fatalf("join: %s", j)
	}
	if _, run := r.api.do(t, "GET", "/threads/g/runs/"+id, ""); !strings.Contains(run, `"status":"success"`) {
		t.Fatalf("the run: %s", run)
	}
	if u.fails.Load() >= 0 {
		t.Fatal("the store's failure was never met: the test tests nothing")
	}
}
