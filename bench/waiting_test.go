package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, for the checkpoint before measuring the file

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store/sqlite"
)

// waitingThreads is how many threads BenchmarkWaitingThreads leaves waiting
// for a person in one SQLite file (1,000 with -short).
const waitingThreads = 100_000

// maxHeapPerThread is the most Go heap a waiting thread may keep in the
// process (bytes, averaged): a waiting thread lives in the store only.
const maxHeapPerThread = 64

// waitingSource is a people-in-the-loop workflow: a function drafts a
// question from the customer's message (into the variables question and
// history), a person decides, and the run ends. Every run waits at ask.
const waitingSource = `workflow Refund {
  parameters {
    input_text: String
    order: String
  }
  variables {
    question: String = ""
    history: List[String] = [] reduce append
  }
  nodes {
    node draft {
      type: FUNCTION
      action: "draft"
      inputs {
        text: input_text
        order: order
      }
      outputs {
        q: String
        note: String
      }
      set: { question = q; history = note }
    }
    node ask {
      type: HUMAN
      question: question
      outputs {
        decision: String
      }
    }
    node finish {
      type: FUNCTION
      action: "noop"
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: draft; to: ask }
    edge { from: ask; to: finish; update: { history = ask.decision } }
    edge { from: finish; to: done }
  }
  initial: draft
  finals: [ done ]
}
`

// waitingFixture is a SQLite file with n threads waiting at ask, made once
// per process by newWaitingFixture.
type waitingFixture struct {
	path    string
	store   *sqlite.Store
	runner  *engine.Runner
	plan    *flow.Plan
	n       int
	workers int

	setup, setupCPU time.Duration // making the n threads
	fileBytes       int64         // growth of the file and its WAL, after a checkpoint
	heapBytes       int64         // growth of the live heap (after GC)
	recs, dataBytes int           // records of one thread and the bytes of their data

	left []string // threads not yet resumed, in random order
	next int      // the number of the next thread made by take
	rng  *rand.Rand
}

// waitingActions are the node bodies of waitingSource.
func waitingActions(tb testing.TB) *engine.Registry {
	reg := engine.NewRegistry()
	for name, fn := range map[string]engine.ActionFunc{
		"draft": func(_ context.Context, c *engine.Call) error {
			text, order := c.Inputs[0].Str(), c.Inputs[1].Str()
			c.Outputs[0] = flow.StringValue(fmt.Sprintf("Refund order %s in full? The customer wrote: %q", order, text))
			c.Outputs[1] = flow.StringValue("customer: " + text)
			return nil
		},
		"noop": func(context.Context, *engine.Call) error { return nil },
	} {
		if err := reg.Register(name, fn); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}

// waitingID is the name of waiting thread i.
func waitingID(i int) string { return "wait-" + strconv.Itoa(i) }

// waitingParams are the parameters of thread i's run.
func waitingParams(i int) map[string]flow.Value {
	return map[string]flow.Value{
		"input_text": flow.StringValue("My parcel arrived damaged, the box was soaked. I would like my money back, please."),
		"order":      flow.StringValue(fmt.Sprintf("A-%07d", i)),
	}
}

var waitingAnswer = []engine.Answer{{Outputs: map[string]flow.Value{"decision": flow.StringValue("approve")}}}

// newWaitingFixture opens a SQLite file in dir and leaves n threads waiting
// in it, made by workers goroutines at once. It measures the time that
// takes, and the file and the live heap before and after (with the
// runtime's store of goroutines grown to goroutines first; see
// growRuntime): it fails if the heap grew by more than maxHeapPerThread per
// thread.
func newWaitingFixture(tb testing.TB, dir string, n, workers, goroutines int) *waitingFixture {
	tb.Helper()
	ctx := context.Background()
	reg := waitingActions(tb)
	f := &waitingFixture{
		path:    filepath.Join(dir, "waiting.db"),
		runner:  &engine.Runner{Registry: reg},
		plan:    wfPlan(tb, "refund.wf", waitingSource, reg),
		n:       n,
		workers: workers,
		rng:     rand.New(rand.NewPCG(1, 2)),
	}
	s, err := sqlite.Open(ctx, f.path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	f.store = s
	th := &engine.Threads{Runner: f.runner, Store: s}

	// Warm up what is made once, not per thread (the reader pool's
	// connections and their statements, the plan's cached fingerprint),
	// with threads of other names that are neither counted nor resumed.
	if err := makeWaiting(ctx, th, f.plan, workers, 4*workers, func(i int) string { return "warm-" + strconv.Itoa(i) }); err != nil {
		tb.Fatal(err)
	}
	file0 := waitingFileSize(tb, f.path)
	growRuntime(goroutines)
	heap0 := liveHeap()

	start, cpu := time.Now(), cpuTime()
	if err := makeWaiting(ctx, th, f.plan, workers, n, waitingID); err != nil {
		tb.Fatal(err)
	}
	f.setup, f.setupCPU = time.Since(start), cpuTime()-cpu

	f.heapBytes = int64(liveHeap()) - int64(heap0)
	runtime.KeepAlive(th) // the Threads and the store stay alive
	f.fileBytes = waitingFileSize(tb, f.path) - file0
	recs, err := s.Records(ctx, waitingID(0), 1)
	if err != nil {
		tb.Fatal(err)
	}
	f.recs = len(recs)
	for _, r := range recs {
		f.dataBytes += len(r.Data)
	}
	if h := f.heapPerThread(); h > maxHeapPerThread {
		tb.Fatalf("%d waiting threads hold %d bytes of heap, %.1f per thread (at most %d): a waiting thread must hold no memory",
			n, f.heapBytes, h, maxHeapPerThread)
	}
	f.left = make([]string, n)
	for i, j := range f.rng.Perm(n) {
		f.left[i] = waitingID(j)
	}
	f.next = n
	return f
}

func (f *waitingFixture) heapPerThread() float64 { return float64(f.heapBytes) / float64(f.n) }
func (f *waitingFixture) filePerThread() float64 { return float64(f.fileBytes) / float64(f.n) }

// take returns k waiting threads not yet resumed, at random, making more
// (in random order) if fewer than k are left.
func (f *waitingFixture) take(tb testing.TB, k int) []string {
	tb.Helper()
	if short := k - len(f.left); short > 0 {
		from := f.next
		th := &engine.Threads{Runner: f.runner, Store: f.store}
		if err := makeWaiting(context.Background(), th, f.plan, f.workers, short, func(i int) string { return waitingID(from + i) }); err != nil {
			tb.Fatal(err)
		}
		for _, j := range f.rng.Perm(short) {
			f.left = append(f.left, waitingID(from+j))
		}
		f.next += short
	}
	ids := f.left[:k:k]
	f.left = f.left[k:]
	return ids
}

// makeWaiting runs n threads, named id(0) to id(n-1), from workers
// goroutines, each to the question it waits on.
func makeWaiting(ctx context.Context, th *engine.Threads, plan *flow.Plan, workers, n int, id func(int) string) error {
	// ctx is not made cancelable here: database/sql and the driver would
	// watch it from a goroutine per statement.
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				res, err := th.Run(ctx, plan, id(i), waitingParams(i), nil, nil)
				if err == nil && (res.Status != engine.Waiting || len(res.Waiting) != 1) {
					err = fmt.Errorf("run %s: status %v with %d questions, want waiting with 1", id(i), res.Status, len(res.Waiting))
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					next.Store(int64(n)) // the others stop too
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// growRuntime grows the runtime's stores of goroutine descriptors (to
// goroutines) and of OS threads beyond what making the waiting threads
// needs. The runtime keeps both for reuse and never frees them, so their
// growth would count as heap held by the waiting threads, though none of
// them holds it: it follows the most goroutines alive at once (database/sql
// and the driver start goroutines per transaction and per statement, and
// more of them wait to run on a loaded machine) and the most in system
// calls at once. Under the race detector every goroutine alive at once
// slows later synchronisation, so the test asks for few.
func growRuntime(goroutines int) {
	const osThreads = 32
	var started, done sync.WaitGroup
	release := make(chan struct{})
	for i := range goroutines {
		started.Add(1)
		done.Go(func() {
			if i < osThreads {
				// Blocked while locked, the goroutine keeps its OS
				// thread, so the others need threads of their own.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			started.Done()
			<-release
		})
	}
	started.Wait()
	close(release)
	done.Wait()
}

// liveHeap returns the bytes of live heap objects, after a full collection.
// Two collections: the first may leave objects that sync.Pool's victim
// cache keeps.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// waitingFileSize is the size of the SQLite file and its WAL after a
// checkpoint that empties the WAL, made through a connection of its own.
func waitingFileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var busy, log, done int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &log, &done); err != nil {
		tb.Fatal(err)
	}
	if busy != 0 {
		tb.Logf("checkpoint of %s did not complete (%d of %d pages)", path, done, log)
	}
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkWaitingThreads leaves 100,000 threads waiting for a person in
// one SQLite file (people-in-the-loop pauses), made once, then resumes
// them one at a time at random, each as a new process would (a new
// Threads: nothing cached), answering and running each to its end. Besides
// the time and CPU per resume it reports, for the 100,000 threads:
//
//	setup-s        the time it took to make them (from several goroutines)
//	setup-ns/thread and setup-cpu-ns/thread: the same per thread
//	B/thread       the growth of the SQLite file and its WAL, after a checkpoint, per thread
//	data-B/thread  the bytes of the records' data of one thread (records/thread of them)
//	heap-B/thread  the growth of the live heap, per thread: about 0, as no memory is held
//	               per waiting thread (the setup fails above 64)
//
// -short makes 1,000 threads. More waiting threads are made, outside the
// timer, when b.N exceeds those left.
func BenchmarkWaitingThreads(b *testing.B) {
	n := waitingThreads
	if testing.Short() {
		n = 1_000
	}
	f := newWaitingFixture(b, b.TempDir(), n, max(4, 4*runtime.GOMAXPROCS(0)), 4096)
	b.Logf("%d waiting threads made in %v (%.0f µs, %.0f µs CPU per thread); file %.0f B/thread, records %d of %d B/thread; heap %+.1f B/thread",
		n, f.setup.Round(time.Millisecond), float64(f.setup.Microseconds())/float64(n), float64(f.setupCPU.Microseconds())/float64(n),
		f.filePerThread(), f.recs, f.dataBytes, f.heapPerThread())
	ctx := context.Background()
	b.Run("resume", func(b *testing.B) {
		ids := f.take(b, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuTime()
		for i := range b.N {
			// A new Threads for every resume: nothing is cached.
			th := &engine.Threads{Runner: f.runner, Store: f.store}
			res, err := th.Resume(ctx, f.plan, ids[i], waitingAnswer, nil)
			if err != nil || res.Status != engine.Completed {
				b.Fatalf("resume %s: %v, %v", ids[i], res.Status, err)
			}
		}
		cpu = cpuTime() - cpu
		b.StopTimer()
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(f.n), "threads")
		b.ReportMetric(f.setup.Seconds(), "setup-s")
		b.ReportMetric(float64(f.setup.Nanoseconds())/float64(f.n), "setup-ns/thread")
		b.ReportMetric(float64(f.setupCPU.Nanoseconds())/float64(f.n), "setup-cpu-ns/thread")
		b.ReportMetric(f.filePerThread(), "B/thread")
		b.ReportMetric(float64(f.dataBytes), "data-B/thread")
		b.ReportMetric(float64(f.recs), "records/thread")
		b.ReportMetric(f.heapPerThread(), "heap-B/thread")
	})
}

// TestWaitingThreadsShort is BenchmarkWaitingThreads's setup and one
// resume on 200 threads, with what they must show: every run waits, its
// state in the store is the waiting question, the heap does not grow per
// waiting thread, and resuming one at random completes it and leaves the
// others waiting.
func TestWaitingThreadsShort(t *testing.T) {
	const n = 200
	ctx := t.Context()
	f := newWaitingFixture(t, t.TempDir(), n, 4, 256) // fails if a run does not wait, or the heap grows
	t.Logf("%d threads in %v; file %.0f B/thread; heap %+.1f B/thread", n, f.setup.Round(time.Millisecond), f.filePerThread(), f.heapPerThread())

	th := &engine.Threads{Runner: f.runner, Store: f.store}
	waiting := func(i int) {
		t.Helper()
		id := waitingID(i)
		ts, err := th.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		w := ts.Waiting()
		if ts.Status() != engine.Waiting || len(w) != 1 || ts.NodeOf(w[0]) != "ask" {
			t.Fatalf("%s: status %v, waiting %v, want waiting at ask", id, ts.Status(), w)
		}
		q, _ := ts.Value("question")
		want := fmt.Sprintf("Refund order A-%07d in full?", i)
		if len(q.Str()) < len(want) || q.Str()[:len(want)] != want {
			t.Fatalf("%s: question %v, want it to start %q", id, q, want)
		}
		if h, _ := ts.Value("history"); h.Len() != 1 {
			t.Fatalf("%s: history %v, want one entry", id, h)
		}
		p, err := f.store.Pending(ctx, id)
		if err != nil || len(p) != 1 || p[0].Node != "ask" {
			t.Fatalf("%s: pending %v, %v; want one question at ask", id, p, err)
		}
	}
	for i := range n {
		waiting(i)
	}

	id := f.take(t, 1)[0]
	res, err := (&engine.Threads{Runner: f.runner, Store: f.store}).Resume(ctx, f.plan, id, waitingAnswer, nil)
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("resume %s: %v, %v", id, res.Status, err)
	}
	ts, err := th.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ts.Value("history")
	if ts.Status() != engine.Completed || len(ts.Waiting()) != 0 || h.Len() != 2 || h.List()[1].Str() != "approve" {
		t.Fatalf("%s after its resume: status %v, waiting %v, history %v", id, ts.Status(), ts.Waiting(), h)
	}
	if p, err := f.store.Pending(ctx, id); err != nil || len(p) != 0 {
		t.Fatalf("%s after its resume: pending %v, %v", id, p, err)
	}
	var te *engine.ThreadError
	if _, err := th.Resume(ctx, f.plan, id, waitingAnswer, nil); !errors.As(err, &te) {
		t.Fatalf("a second resume of %s: %v, want a *engine.ThreadError", id, err)
	}
	for i := range n {
		if other := waitingID(i); other != id {
			ts, err := th.Load(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			if ts.Status() != engine.Waiting || len(ts.Waiting()) != 1 {
				t.Fatalf("%s after %s's resume: status %v, waiting %v; want it still waiting", other, id, ts.Status(), ts.Waiting())
			}
		}
	}
}
