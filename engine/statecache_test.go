package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/postgres"
	"github.com/weftlang/weft/store/sqlite"
)

// messagesOf is the thread's messages, as texts.
func messagesOf(t testing.TB, ts *engine.ThreadState) []string {
	t.Helper()
	v, ok := ts.Value("messages")
	if !ok {
		t.Fatalf("thread %s has no messages", ts.Thread)
	}
	var out []string
	for _, m := range v.List() {
		out = append(out, m.Text())
	}
	return out
}

// sameState fails unless the cached load equals a load from the store.
func sameState(t testing.TB, ctx context.Context, cached, fresh *engine.Threads, id string) *engine.ThreadState {
	t.Helper()
	got, err := cached.Load(ctx, id)
	if err != nil {
		t.Fatalf("cached load of %s: %v", id, err)
	}
	want, err := fresh.Load(ctx, id)
	if err != nil {
		t.Fatalf("load of %s: %v", id, err)
	}
	if got.Seq != want.Seq || got.RunNumber != want.RunNumber || got.Run != want.Run || got.Status() != want.Status() {
		t.Fatalf("%s: cached seq %d run %d (%s) %s, store seq %d run %d (%s) %s", id, got.Seq, got.RunNumber, got.Run, got.Status(), want.Seq, want.RunNumber, want.Run, want.Status())
	}
	if g, w := messagesOf(t, got), messagesOf(t, want); !slices.Equal(g, w) {
		t.Fatalf("%s: cached messages %q, store %q", id, g, w)
	}
	for _, name := range []string{"turns", "last", "rephrased"} {
		g, _ := got.Value(name)
		w, _ := want.Value(name)
		if g.String() != w.String() {
			t.Fatalf("%s: cached %s = %s, store %s", id, name, g, w)
		}
	}
	return got
}

func TestStateCacheMatchesTheStore(t *testing.T) {
	stores(t, testStateCacheMatches)
}

// TestStateCacheMatchesThePostgresStore is TestStateCacheMatchesTheStore
// with processes that share a PostgreSQL store, each with its own pool.
func TestStateCacheMatchesThePostgresStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server; skipped with -short")
	}
	c := pgtest.Start(t)
	db, err := c.CreateDB(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	testStateCacheMatches(t, func() store.Store {
		st, err := postgres.Open(context.Background(), db.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

func testStateCacheMatches(t *testing.T, open func() store.Store) {
	{
		ctx := context.Background()
		plan := load(t, "chat.wf", chatWF)
		cache := &engine.StateCache{}
		var callsA, callsB, callsO []string
		st := open()
		// Two Threads sharing one cache, a third with none on another
		// connection (another process), and a reader with none.
		a := &engine.Threads{Runner: chatRunner(t, &callsA), Store: st, Cache: cache}
		b := &engine.Threads{Runner: chatRunner(t, &callsB), Store: st, Cache: cache}
		other := &engine.Threads{Runner: chatRunner(t, &callsO), Store: open()}
		fresh := &engine.Threads{Store: open()}
		run := func(th *engine.Threads, id, q string) {
			t.Helper()
			if _, err := th.Run(ctx, plan, id, map[string]flow.Value{"input_text": flow.StringValue(q)}, nil, nil); err != nil {
				t.Fatalf("%s %q: %v", id, q, err)
			}
		}
		for i := range 3 {
			run(a, "t1", fmt.Sprintf("a%d", i))
			sameState(t, ctx, a, fresh, "t1")
			run(b, "t2", fmt.Sprintf("b%d", i))
			sameState(t, ctx, b, fresh, "t2")
			sameState(t, ctx, a, fresh, "t1")
		}
		// Written behind the cache's back, by another process.
		run(other, "t1", "from elsewhere")
		ts := sameState(t, ctx, b, fresh, "t1")
		if m := messagesOf(t, ts); m[len(m)-2] != "from elsewhere" {
			t.Fatalf("t1's messages miss the other process's turn: %q", m)
		}
		// A caller that changes the state it got changes nothing kept.
		ts.State.Cells = ts.State.Cells[:0]
		ts.Seq = 1
		sameState(t, ctx, a, fresh, "t1")
		// An update is a new record the next load folds.
		if _, err := other.Update(ctx, "t1", map[string]flow.Value{"last": flow.StringValue("updated")}, nil); err != nil {
			t.Fatal(err)
		}
		if v, _ := sameState(t, ctx, a, fresh, "t1").Value("last"); v.Text() != "updated" {
			t.Fatalf("last = %s after the update", v)
		}
		// A thread deleted and made again with as many records: its
		// new state, not the kept one.
		if err := st.DeleteThread(ctx, "t2"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // the new records' times differ
		for i := range 3 {
			run(other, "t2", fmt.Sprintf("new%d", i))
		}
		if m := messagesOf(t, sameState(t, ctx, a, fresh, "t2")); m[0] != "new0" {
			t.Fatalf("t2 after its deletion: %q", m)
		}
	}
}

func TestStateCacheConcurrentReadsWhileARunWrites(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "chat.wf", chatWF)
		cache := &engine.StateCache{}
		st := open()
		var calls []string
		w := &engine.Threads{Runner: chatRunner(t, &calls), Store: st, Cache: cache}
		r := &engine.Threads{Store: st, Cache: cache}
		var want []string
		for i := range 4 {
			q := fmt.Sprintf("q%d", i)
			want = append(want, q, fmt.Sprintf("re: %s (turn %d, seen 0)", q, i))
		}
		done := make(chan struct{})
		var reads atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					ts, err := r.Load(ctx, "c")
					if err != nil || ts.State == nil {
						continue // not made yet
					}
					reads.Add(1)
					v, _ := ts.Value("messages")
					var got []string
					for _, m := range v.List() {
						got = append(got, m.Text())
					}
					if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
						errs <- fmt.Errorf("a read while the run writes: messages %q, not a prefix of %q", got, want)
						return
					}
					// Changing what was read changes nothing kept.
					ts.State.Cells = nil
				}
			}()
		}
		for i := range 4 {
			if _, err := w.Run(ctx, plan, "c", map[string]flow.Value{"input_text": flow.StringValue(fmt.Sprintf("q%d", i))}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		// A fast store may finish the runs before a reader is
		// scheduled: the readers go on until one has read.
		for deadline := time.Now().Add(10 * time.Second); reads.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if reads.Load() == 0 {
			t.Fatal("no read saw the thread")
		}
		if got := messagesOf(t, sameState(t, ctx, r, &engine.Threads{Store: open()}, "c")); !slices.Equal(got, want) {
			t.Fatalf("messages %q, want %q", got, want)
		}
	})
}

// snapCountingStore counts the reads that decode a thread's log.
type snapCountingStore struct {
	*memory.Store
	snapshots atomic.Int64
	records   atomic.Int64
}

func (s *snapCountingStore) LastSnapshot(ctx context.Context, id string) (*store.Record, error) {
	s.snapshots.Add(1)
	return s.Store.LastSnapshot(ctx, id)
}

func (s *snapCountingStore) Records(ctx context.Context, id string, from int64) ([]*store.Record, error) {
	s.records.Add(1)
	return s.Store.Records(ctx, id, from)
}

// runCountingStore counts the reads of run rows.
type runCountingStore struct {
	*memory.Store
	runs atomic.Int64
}

func (s *runCountingStore) Run(ctx context.Context, id string) (*store.Run, error) {
	s.runs.Add(1)
	return s.Store.Run(ctx, id)
}

// pendingCountingStore counts the reads of a thread's questions.
type pendingCountingStore struct {
	*memory.Store
	reads atomic.Int64
}

func (s *pendingCountingStore) Pending(ctx context.Context, id string) ([]*store.Pending, error) {
	s.reads.Add(1)
	return s.Store.Pending(ctx, id)
}

// TestFirstRunReadsNoQuestions: the first run of a thread, which waits,
// records its question without reading the thread's questions first (a
// thread with no record has none); the resume, which answers it, reads
// them and deletes the answered one.
func TestFirstRunReadsNoQuestions(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "ask.wf", askWF)
	for _, ttl := range []time.Duration{0, time.Minute} {
		st := &pendingCountingStore{Store: memory.New()}
		th := &engine.Threads{Runner: countRunner(map[string]int{}), Store: st, LeaseTTL: ttl}
		res, err := th.Run(ctx, plan, "t", nil, nil, nil)
		if err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v, %v", res.Status, err)
		}
		if n := st.reads.Load(); n != 0 {
			t.Errorf("lease %v: the first run read the questions %d times; want 0", ttl, n)
		}
		pend, err := st.Store.Pending(ctx, "t")
		if err != nil || len(pend) != 1 || pend[0].Node != "ask" {
			t.Fatalf("pending after the first run: %+v, %v", pend, err)
		}
		if _, err := th.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}, nil); err != nil {
			t.Fatal(err)
		}
		if n := st.reads.Load(); n == 0 {
			t.Errorf("lease %v: the resume did not read the questions it answers", ttl)
		}
		if pend, err := st.Store.Pending(ctx, "t"); err != nil || len(pend) != 0 {
			t.Errorf("pending after the resume: %+v, %v", pend, err)
		}
	}
}

// TestStateCacheKnowsTheRunRow: a resume of a run whose drive this
// process recorded, the thread's log unchanged since, does not read the
// run's row back to keep its Created; after another process's write it
// does. The row keeps its Created either way.
func TestStateCacheKnowsTheRunRow(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "ask.wf", askWF)
	st := &runCountingStore{Store: memory.New()}
	th := &engine.Threads{Runner: countRunner(map[string]int{}), Store: st, Cache: &engine.StateCache{}, LeaseTTL: time.Minute}
	answer := []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}
	for _, behind := range []bool{false, true} {
		id := fmt.Sprint("t-", behind)
		res, err := th.Run(ctx, plan, id, nil, nil, nil)
		if err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v, %v", res.Status, err)
		}
		rows, err := st.Runs(ctx, id)
		if err != nil || len(rows) != 1 {
			t.Fatalf("runs: %v, %v", rows, err)
		}
		created := rows[0].Created
		if behind {
			// Read here (the run's records folded), then written by
			// another process (an update): the next load folds that
			// write onto the kept state.
			if _, err := th.Load(ctx, id); err != nil {
				t.Fatal(err)
			}
			other := &engine.Threads{Store: st.Store}
			if _, err := other.Update(ctx, id, map[string]flow.Value{}, nil); err != nil {
				t.Fatal(err)
			}
		}
		before := st.runs.Load()
		if res, err := th.Resume(ctx, plan, id, answer, nil); err != nil || res.Status != engine.Completed {
			t.Fatalf("resume: %v, %v", res.Status, err)
		}
		if n, want := st.runs.Load()-before, map[bool]int64{false: 0, true: 1}[behind]; n != want {
			t.Errorf("another process wrote the thread: %v; the resume read its run's row %d times, want %d", behind, n, want)
		}
		rows, err = st.Runs(ctx, id)
		if err != nil || len(rows) != 1 || !rows[0].Created.Equal(created) || rows[0].Status != store.Completed {
			t.Errorf("the run's row after the resume: %+v, %v; want created %v, completed", rows[0], err, created)
		}
	}
}

// TestStateCacheKeepsARunsRecords: the records a run writes are kept
// with the state it started from, so that the next load of the thread
// (its log's head still the run's last record) reads no record back,
// from the first run of a new thread on, for every durability; and the
// state so read is the store's.
func TestStateCacheKeepsARunsRecords(t *testing.T) {
	for _, dur := range []engine.Durability{engine.Sync, engine.Async, engine.Exit} {
		t.Run(fmt.Sprint(dur), func(t *testing.T) {
			ctx := context.Background()
			plan := load(t, "chat.wf", chatWF)
			st := &snapCountingStore{Store: memory.New()}
			var calls []string
			th := &engine.Threads{Runner: chatRunner(t, &calls), Store: st, Cache: &engine.StateCache{}, LeaseTTL: time.Minute, Durability: dur}
			fresh := &engine.Threads{Store: st.Store}
			for i := range 3 {
				if _, err := th.Run(ctx, plan, "c", map[string]flow.Value{"input_text": flow.StringValue(fmt.Sprint("q", i))}, nil, nil); err != nil {
					t.Fatal(err)
				}
				snaps, recs := st.snapshots.Load(), st.records.Load()
				ts := sameState(t, ctx, th, fresh, "c")
				if n, m := st.snapshots.Load()-snaps, st.records.Load()-recs; n != 0 || m != 0 {
					t.Errorf("run %d: the load after it read the last snapshot %d times and records %d times; want none (the run's records, kept)", i, n, m)
				}
				if got := messagesOf(t, ts); len(got) != 2*(i+1) || got[2*i] != fmt.Sprint("q", i) {
					t.Errorf("run %d: messages %q", i, got)
				}
			}
			// A run kept, then a write behind the cache's back (another
			// process) before any load: the load sees that write.
			if _, err := th.Run(ctx, plan, "c", map[string]flow.Value{"input_text": flow.StringValue("kept")}, nil, nil); err != nil {
				t.Fatal(err)
			}
			other := &engine.Threads{Runner: chatRunner(t, &calls), Store: st.Store, LeaseTTL: time.Minute}
			if _, err := other.Update(ctx, "c", map[string]flow.Value{"last": flow.StringValue("elsewhere")}, nil); err != nil {
				t.Fatal(err)
			}
			if v, _ := sameState(t, ctx, th, fresh, "c").Value("last"); v.Text() != "elsewhere" {
				t.Errorf("last = %s after another process's update; want elsewhere", v)
			}
		})
	}
}

func TestStateCacheDecodesOnce(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "chat.wf", chatWF)
	st := &snapCountingStore{Store: memory.New()}
	var calls []string
	th := &engine.Threads{Runner: chatRunner(t, &calls), Store: st, Cache: &engine.StateCache{}}
	if _, err := th.Run(ctx, plan, "c", map[string]flow.Value{"input_text": flow.StringValue("hi")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := th.Load(ctx, "c"); err != nil {
			t.Fatal(err)
		}
	}
	before := st.snapshots.Load()
	if _, err := th.Run(ctx, plan, "c", map[string]flow.Value{"input_text": flow.StringValue("again")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	ts, err := th.Load(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.snapshots.Load() - before; n != 0 {
		t.Errorf("a second run and a load read the last snapshot %d times; want 0 (the kept state, folded forward)", n)
	}
	if got := messagesOf(t, ts); len(got) != 4 || got[2] != "again" {
		t.Errorf("messages %q", got)
	}
}

// BenchmarkThreadLoad loads a ten-turn conversation from SQLite, decoded
// from its log each time (nocache) or through a StateCache (cached: the
// head of the log read, the kept state copied).
func BenchmarkThreadLoad(b *testing.B) {
	ctx := context.Background()
	plan := load(b, "chat.wf", chatWF)
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "weft.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var calls []string
	th := &engine.Threads{Runner: chatRunner(b, &calls), Store: st}
	for i := range 10 {
		if _, err := th.Run(ctx, plan, "c", map[string]flow.Value{"input_text": flow.StringValue(fmt.Sprint("turn ", i))}, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name  string
		cache *engine.StateCache
	}{{"nocache", nil}, {"cached", &engine.StateCache{}}} {
		b.Run(bc.name, func(b *testing.B) {
			th := &engine.Threads{Store: st, Cache: bc.cache}
			for b.Loop() {
				if _, err := th.Load(ctx, "c"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A drive whose records outgrow what the cache would keep collects none
// (a long run holds no copy of its log): the next read reads the log, and
// the state is the store's.
func TestStateCacheSkipsARunTooLargeToKeep(t *testing.T) {
	for _, dur := range []engine.Durability{engine.Sync, engine.Async} {
		t.Run(fmt.Sprint(dur), func(t *testing.T) {
			ctx := context.Background()
			plan := load(t, "chat.wf", chatWF)
			st := &snapCountingStore{Store: memory.New()}
			var calls []string
			// A quarter of 64 bytes: less than any record.
			th := &engine.Threads{Runner: chatRunner(t, &calls), Store: st, Cache: &engine.StateCache{MaxBytes: 64}, LeaseTTL: time.Minute, Durability: dur}
			fresh := &engine.Threads{Store: st.Store}
			if _, err := th.Run(ctx, plan, "c", map[string]flow.Value{"input_text": flow.StringValue("q0")}, nil, nil); err != nil {
				t.Fatal(err)
			}
			if n := th.Cache.Len(); n != 0 {
				t.Errorf("%d states kept after a run too large to keep, want 0", n)
			}
			recs := st.records.Load()
			ts := sameState(t, ctx, th, fresh, "c")
			if st.records.Load() == recs {
				t.Errorf("the load after the run read no records: it used a state it should not have kept")
			}
			if got := messagesOf(t, ts); len(got) != 2 || got[0] != "q0" {
				t.Errorf("messages %q", got)
			}
		})
	}
}
