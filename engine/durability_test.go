package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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

// countingBatches counts the batches a BatchWriter store is given.
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
