package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
)

// slowStore wraps a store, counts Append calls and the records they carry,
// makes each Append take delay, and fails the append of record failAt
// (a sequence number; 0: never) with a non-transient error.
type slowStore struct {
	store.Store
	delay  time.Duration
	failAt int64

	mu      sync.Mutex
	appends int
	records int
}

func (s *slowStore) Append(ctx context.Context, recs ...*store.Record) error {
	s.mu.Lock()
	s.appends++
	s.records += len(recs)
	s.mu.Unlock()
	time.Sleep(s.delay)
	for _, r := range recs {
		if s.failAt != 0 && r.Seq == s.failAt {
			return fmt.Errorf("disk full: %w", store.ErrInvalid)
		}
	}
	return s.Store.Append(ctx, recs...)
}

func (s *slowStore) counts() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appends, s.records
}

// TestAsyncDurabilityWritesTheSameRecordsInFewerCommits runs the same
// 20-step loop with Sync and with Async durability: the records (kinds,
// steps, nodes) and the state they fold to are the same, and Async, with
// a store that takes 20 ms per append, writes them in a few appends
// instead of one per step.
func TestAsyncDurabilityWritesTheSameRecordsInFewerCommits(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	type outcome struct {
		hist    []string
		acc     int64
		appends int
		records int
	}
	run := func(d engine.Durability, delay time.Duration) outcome {
		var keys []string
		var mu sync.Mutex
		st := &slowStore{Store: memory.New(), delay: delay}
		th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: st, Durability: d}
		res, err := th.Run(ctx, plan, "t", nil, nil, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("%s: %v, %v", d, res.Status, err)
		}
		// Run has returned: every record must be in the store now,
		// whatever the mode.
		hist, err := th.History(ctx, "t", 1)
		if err != nil {
			t.Fatal(err)
		}
		var o outcome
		for _, h := range hist {
			o.hist = append(o.hist, fmt.Sprintf("%d:%s", h.Step, h.Node))
		}
		ts, err := (&engine.Threads{Runner: th.Runner, Store: st.Store}).Load(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		acc, _ := ts.Value("acc")
		o.acc = acc.Int()
		o.appends, o.records = st.counts()
		return o
	}
	syncRun := run(engine.Sync, 0)
	asyncRun := run(engine.Async, 20*time.Millisecond)
	if fmt.Sprint(syncRun.hist) != fmt.Sprint(asyncRun.hist) || syncRun.acc != asyncRun.acc {
		t.Errorf("sync and async differ:\nsync  %v acc %d\nasync %v acc %d", syncRun.hist, syncRun.acc, asyncRun.hist, asyncRun.acc)
	}
	if syncRun.acc != 2470 { // the sum of i*i for i < 20
		t.Errorf("acc = %d, want 2470", syncRun.acc)
	}
	if syncRun.appends != syncRun.records || syncRun.records < 21 {
		t.Errorf("sync: %d appends for %d records; want one each", syncRun.appends, syncRun.records)
	}
	if asyncRun.records != syncRun.records {
		t.Errorf("async wrote %d records, sync %d", asyncRun.records, syncRun.records)
	}
	// The first append (the snapshot) takes 20 ms, in which the 20
	// trivial steps finish: their records go in one or two more.
	if asyncRun.appends > 4 {
		t.Errorf("async: %d appends for %d records; want them batched", asyncRun.appends, asyncRun.records)
	}
}

// TestAsyncDurabilityWriteFailureFailsTheRun: an append that fails in the
// background fails the run with a *CheckpointError naming the record, and
// what was stored is a prefix of the run that loads.
func TestAsyncDurabilityWriteFailureFailsTheRun(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	st := &slowStore{Store: memory.New(), delay: time.Millisecond, failAt: 5}
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: st, Durability: engine.Async}
	res, err := th.Run(ctx, plan, "t", nil, nil, nil)
	var ce *engine.CheckpointError
	if !errors.As(err, &ce) || !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("err = %v; want a *CheckpointError wrapping the store's", err)
	}
	if res == nil || res.Status != engine.Failed || ce.Thread != "t" || ce.Run != 1 || ce.Seq < 1 || ce.Seq > 5 {
		t.Errorf("result %v, error %+v", res, ce)
	}
	// The failed append held record 5 and whatever had piled up with
	// it; the appends before it were stored, in order, and nothing
	// after.
	recs, err := st.Store.Records(ctx, "t", 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(len(recs)); n >= 5 || n != ce.Seq-1 || (n > 0 && recs[n-1].Seq != n) {
		t.Errorf("%d records stored, error at record %d; want the records before the failed append", n, ce.Seq)
	}
}

// TestAsyncDurabilityWaitingRunIsDurable: a run that waits for a person
// returns only when its records are written, so another process (here a
// Sync Threads on the same store) resumes it.
func TestAsyncDurabilityWaitingRunIsDurable(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "ask.wf", askWF)
	counts := map[string]int{}
	st := &slowStore{Store: memory.New(), delay: 5 * time.Millisecond}
	th := &engine.Threads{Runner: countRunner(counts), Store: st, Durability: engine.Async}
	res, err := th.Run(ctx, plan, "t", nil, nil, nil)
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	other := &engine.Threads{Runner: countRunner(counts), Store: st.Store}
	res, err = other.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}, nil)
	if err != nil || res.Status != engine.Completed || counts["prepare"] != 1 || counts["answer"] != 1 {
		t.Fatalf("resume: %v, %v, counts %v", res.Status, err, counts)
	}
	if engine.Sync.String() != "sync" || engine.Async.String() != "async" {
		t.Errorf("Durability names: %s, %s", engine.Sync, engine.Async)
	}
}

// TestAsyncDurabilityWithABatchWriter: on a store that writes batches
// (SQLite), Async creates a new thread with its first records and puts
// the run's row with its last ones; the thread, its records, its run and,
// for a waiting run, its question are all there when Run returns.
func TestAsyncDurabilityWithABatchWriter(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok := any(st).(store.BatchWriter); !ok {
		t.Fatal("the SQLite store is not a store.BatchWriter")
	}
	var keys []string
	var mu sync.Mutex
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: st, Durability: engine.Async}
	res, err := th.Run(ctx, load(t, "loop.wf", loopWF), "t", nil, nil, &engine.RunOptions{Meta: map[string]string{"file": "loop.wf"}})
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	thread, err := st.Thread(ctx, "t")
	if err != nil || thread.Workflow != "Loop" || thread.Meta["file"] != "loop.wf" {
		t.Fatalf("thread: %+v, %v", thread, err)
	}
	runs, err := st.Runs(ctx, "t")
	if err != nil || len(runs) != 1 || runs[0].Status != "completed" || runs[0].Number != 1 {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	if recs, err := st.Records(ctx, "t", 1); err != nil || len(recs) != 22 {
		t.Fatalf("%d records, %v; want 22 (a snapshot and 21 steps)", len(recs), err)
	}
	// A second run in the thread, and a run that waits.
	if res, err := th.Run(ctx, load(t, "loop.wf", loopWF), "t", nil, nil, nil); err != nil || res.Run != 2 {
		t.Fatalf("second run: %v, %v", res, err)
	}
	counts := map[string]int{}
	ask := &engine.Threads{Runner: countRunner(counts), Store: st, Durability: engine.Async}
	if res, err := ask.Run(ctx, load(t, "ask.wf", askWF), "a", nil, nil, nil); err != nil || res.Status != engine.Waiting {
		t.Fatalf("ask: %v, %v", res.Status, err)
	}
	if pend, err := st.Pending(ctx, "a"); err != nil || len(pend) != 1 {
		t.Fatalf("pending: %+v, %v", pend, err)
	}
	if runs, err := st.Runs(ctx, "a"); err != nil || len(runs) != 1 || runs[0].Status != "waiting" {
		t.Fatalf("waiting run: %+v, %v", runs, err)
	}
}

// countingBatches counts the batches of records a BatchWriter store is
// given: by WriteBatch, Append, and with a run's end (EndRun).
type countingBatches struct {
	*sqlite.Store
	mu      sync.Mutex
	batches []int // records per batch
}

func (c *countingBatches) WriteBatch(ctx context.Context, b *store.Batch) error {
	c.mu.Lock()
	c.batches = append(c.batches, len(b.Records))
	c.mu.Unlock()
	return c.Store.WriteBatch(ctx, b)
}

// Append counts a plain append of records (the writer's, once the
// thread exists) as a batch.
func (c *countingBatches) Append(ctx context.Context, recs ...*store.Record) error {
	c.mu.Lock()
	c.batches = append(c.batches, len(recs))
	c.mu.Unlock()
	return c.Store.Append(ctx, recs...)
}

// EndRun counts the records a run's end writes with it (those the writer
// had not written yet) as a batch too.
func (c *countingBatches) EndRun(ctx context.Context, e *store.RunEnd) error {
	if len(e.Records) > 0 {
		c.mu.Lock()
		c.batches = append(c.batches, len(e.Records))
		c.mu.Unlock()
	}
	return c.Store.EndRun(ctx, e)
}

// TestAsyncDurabilityOneCommitForAFastRun: a run of fast steps in a new
// thread is written in a few transactions with Async, not one per step:
// the records that pile up during one commit go in the next. On an idle
// machine the whole run (the thread, its 22 records and its run row)
// takes one commit; under load the writer's first linger (1 ms) may end
// before the run does, so two or three are allowed, as docs/threads.md
// says.
func TestAsyncDurabilityOneCommitForAFastRun(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs := &countingBatches{Store: st}
	var keys []string
	var mu sync.Mutex
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: cs, Durability: engine.Async}
	if res, err := th.Run(ctx, load(t, "loop.wf", loopWF), "t", nil, nil, nil); err != nil || res.Status != engine.Completed {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	total := 0
	for _, n := range cs.batches {
		total += n
	}
	if len(cs.batches) == 0 || len(cs.batches) > 3 || total != 22 {
		t.Errorf("batches of %v records; want 22 records in at most 3 batches", cs.batches)
	}
}

// exitCounting is a memory store (a store.RunEnder) that counts appends
// and the records each EndRun carries.
type exitCounting struct {
	*memory.Store
	mu      sync.Mutex
	appends int
	ends    []int // records per EndRun
}

func (c *exitCounting) Append(ctx context.Context, recs ...*store.Record) error {
	c.mu.Lock()
	c.appends++
	c.mu.Unlock()
	return c.Store.Append(ctx, recs...)
}

func (c *exitCounting) EndRun(ctx context.Context, e *store.RunEnd) error {
	c.mu.Lock()
	c.ends = append(c.ends, len(e.Records))
	c.mu.Unlock()
	return c.Store.EndRun(ctx, e)
}

// TestExitDurabilityWritesTheRunWithItsEnd: with Exit durability (set on
// the Threads, or on one run over a Sync Threads) a 20-step run makes no
// append: its snapshot and 21 step records go in the one transaction that
// records its end, and they are the records Sync writes.
func TestExitDurabilityWritesTheRunWithItsEnd(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "loop.wf", loopWF)
	hist := func(th *engine.Threads) string {
		h, err := th.History(ctx, "t", 1)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range h {
			out = append(out, fmt.Sprintf("%d:%s", x.Step, x.Node))
		}
		return fmt.Sprint(out)
	}
	var keys []string
	var mu sync.Mutex
	ref := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: memory.New()}
	if _, err := ref.Run(ctx, plan, "t", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	want := hist(ref)
	for name, set := range map[string]func(th *engine.Threads) *engine.RunOptions{
		"threads": func(th *engine.Threads) *engine.RunOptions { th.Durability = engine.Exit; return nil },
		"run":     func(th *engine.Threads) *engine.RunOptions { return &engine.RunOptions{Durability: engine.Exit} },
	} {
		t.Run(name, func(t *testing.T) {
			st := &exitCounting{Store: memory.New()}
			th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: st, Durability: engine.Sync}
			res, err := th.Run(ctx, plan, "t", nil, nil, set(th))
			if err != nil || res.Status != engine.Completed {
				t.Fatalf("run: %v, %v", res, err)
			}
			if st.appends != 0 || len(st.ends) != 1 || st.ends[0] != 22 {
				t.Errorf("%d appends, run ends with %v records; want none, and one end with 22", st.appends, st.ends)
			}
			if got := hist(th); got != want {
				t.Errorf("history\n got %s\nwant %s", got, want)
			}
			ts, err := (&engine.Threads{Runner: th.Runner, Store: st.Store}).Load(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			if acc, _ := ts.Value("acc"); acc.Int() != 2470 || ts.Status() != engine.Completed {
				t.Errorf("loaded: acc %v, status %s", acc, ts.Status())
			}
		})
	}
	for _, d := range []engine.Durability{engine.DefaultDurability, engine.Sync, engine.Async, engine.Exit} {
		if p, err := engine.ParseDurability(d.String()); d != engine.DefaultDurability && (err != nil || p != d) {
			t.Errorf("ParseDurability(%q) = %v, %v", d.String(), p, err)
		}
	}
	if _, err := engine.ParseDurability("fast"); err == nil || !strings.Contains(err.Error(), "sync, async or exit") {
		t.Errorf("ParseDurability(fast) = %v", err)
	}
}

// TestExitDurabilityWaitingRunIsDurable: a run that waits for a person
// with Exit durability has its records, its question and its row written
// when Run returns: another Threads resumes it, and the resume's records
// too go with its end.
func TestExitDurabilityWaitingRunIsDurable(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "ask.wf", askWF)
	counts := map[string]int{}
	st := &exitCounting{Store: memory.New()}
	th := &engine.Threads{Runner: countRunner(counts), Store: st, Durability: engine.Exit}
	res, err := th.Run(ctx, plan, "t", nil, nil, nil)
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	if pend, err := st.Pending(ctx, "t"); err != nil || len(pend) != 1 {
		t.Fatalf("pending: %v, %v", pend, err)
	}
	other := &engine.Threads{Runner: countRunner(counts), Store: st, Durability: engine.Exit}
	res, err = other.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}, nil)
	if err != nil || res.Status != engine.Completed || counts["prepare"] != 1 || counts["answer"] != 1 {
		t.Fatalf("resume: %v, %v, counts %v", res, err, counts)
	}
	if st.appends != 0 || len(st.ends) != 2 || st.ends[0] == 0 || st.ends[1] == 0 {
		t.Errorf("%d appends, ends with %v records; want none, and both ends with records", st.appends, st.ends)
	}
	if pend, err := st.Pending(ctx, "t"); err != nil || len(pend) != 0 {
		t.Errorf("pending after the answer: %v, %v", pend, err)
	}
}

// TestExitDurabilityStoppedRunKeepsItsSteps: a run its caller stops (its
// context cancelled) writes the steps it completed before Run returns, so
// a resume goes on from them rather than from the start.
func TestExitDurabilityStoppedRunKeepsItsSteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	st := &exitCounting{Store: memory.New()}
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, func(i int64) {
		if i == 5 {
			cancel()
		}
	}), Store: st, Durability: engine.Exit}
	if _, err := th.Run(ctx, plan, "t", nil, nil, nil); err == nil {
		t.Fatal("a stopped run returned no error")
	}
	recs, err := st.Records(context.Background(), "t", 1)
	if err != nil || len(recs) < 5 {
		t.Fatalf("%d records after the stop, %v; want the completed steps", len(recs), err)
	}
	ts, err := th.Load(context.Background(), "t")
	if err != nil || ts.Status() != engine.Running {
		t.Fatalf("stopped thread: %v, %v", ts, err)
	}
}

// TestOnEndJobChange: the job change a run's OnEnd gives is written with
// the run's end: made (Done) when the job is in a From status, skipped
// (not Done, the run still recorded) when it is not.
func TestOnEndJobChange(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "ask.wf", askWF)
	st := memory.New()
	for _, id := range []string{"a", "b"} {
		if err := st.CreateThread(ctx, &store.Thread{ID: id, Workflow: "Ask"}); err != nil {
			t.Fatal(err)
		}
		if err := st.CreateJob(ctx, &store.Job{ID: "job-" + id, ThreadID: id, Assistant: "Ask"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.SetJob(ctx, "job-a", []store.JobStatus{store.JobPending}, store.JobRunning, "", ""); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, d := range []engine.Durability{engine.Sync, engine.Async, engine.Exit} {
		t.Run(d.String(), func(t *testing.T) {
			th := &engine.Threads{Runner: countRunner(counts), Store: st}
			var changes []*store.JobChange
			onEnd := func(id string) func(engine.Status, error) *store.JobChange {
				return func(s engine.Status, err error) *store.JobChange {
					if s != engine.Waiting || err != nil {
						t.Errorf("OnEnd(%s, %v); want waiting, nil", s, err)
					}
					c := &store.JobChange{ID: id, From: []store.JobStatus{store.JobRunning}, To: store.JobSuccess, Error: "seen " + d.String()}
					changes = append(changes, c)
					return c
				}
			}
			thread := "a-" + d.String()
			if d == engine.Sync {
				thread = "a"
			}
			if err := st.CreateThread(ctx, &store.Thread{ID: thread, Workflow: "Ask"}); err != nil && !errors.Is(err, store.ErrExists) {
				t.Fatal(err)
			}
			job := "job-a"
			if d != engine.Sync {
				job = "job-" + thread
				if err := st.CreateJob(ctx, &store.Job{ID: job, ThreadID: thread, Assistant: "Ask", Status: store.JobRunning}); err != nil {
					t.Fatal(err)
				}
			}
			res, err := th.Run(ctx, plan, thread, nil, nil, &engine.RunOptions{Durability: d, OnEnd: onEnd(job)})
			if err != nil || res.Status != engine.Waiting {
				t.Fatalf("run: %v, %v", res, err)
			}
			j, err := st.Job(ctx, job)
			if err != nil || len(changes) != 1 || !changes[0].Done || j.Status != store.JobSuccess || j.Error != "seen "+d.String() {
				t.Errorf("job %+v, %v, changes %+v; want success with its text, Done", j, err, changes)
			}
		})
	}
	// A job that is not running (still pending) is left as it is; the
	// run's end is recorded all the same.
	th := &engine.Threads{Runner: countRunner(counts), Store: st}
	var change *store.JobChange
	res, err := th.Run(ctx, plan, "b", nil, nil, &engine.RunOptions{OnEnd: func(engine.Status, error) *store.JobChange {
		change = &store.JobChange{ID: "job-b", From: []store.JobStatus{store.JobRunning}, To: store.JobSuccess}
		return change
	}})
	if err != nil || res.Status != engine.Waiting || change == nil || change.Done {
		t.Fatalf("run: %v, %v, change %+v; want waiting and the change not made", res, err, change)
	}
	if j, err := st.Job(ctx, "job-b"); err != nil || j.Status != store.JobPending {
		t.Errorf("job b: %+v, %v; want it pending still", j, err)
	}
	if runs, err := st.Runs(ctx, "b"); err != nil || len(runs) != 1 || runs[0].Status != store.Waiting {
		t.Errorf("runs of b: %+v, %v", runs, err)
	}
}
