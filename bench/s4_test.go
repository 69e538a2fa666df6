package bench

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/postgres"
	"github.com/weftlang/weft/store/sqlite"
)

// openStore opens a store of the given kind for a benchmark: memory, a
// SQLite file (WAL, synchronous=NORMAL), or a throwaway PostgreSQL
// database (skipped without the server binaries).
func openStore(b *testing.B, kind string) store.Store {
	b.Helper()
	var (
		s   store.Store
		err error
	)
	switch kind {
	case "memory":
		s = memory.New()
	case "sqlite":
		s, err = sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "s4.db"))
	case "postgres":
		s, err = postgres.Open(context.Background(), pgtest.New(b).DSN)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// storeBytes reports the records of a thread: their number and the bytes
// of their data.
func storeBytes(b *testing.B, s store.Store, thread string) (int, int) {
	recs, err := s.Records(context.Background(), thread, 1)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		n += len(r.Data)
	}
	return len(recs), n
}

// BenchmarkS4Checkpointed is S4 of peers.md: chain10 (S1) with a
// checkpoint after every step and a new thread per invocation, with each
// store and each durability (Sync, the default: a commit per step; -async:
// the records batched in the background, LangGraph's default). Besides the
// time per step it reports the bytes stored per checkpoint record.
func BenchmarkS4Checkpointed(b *testing.B) {
	ctx := context.Background()
	for _, kind := range []string{"memory", "sqlite", "postgres", "memory-async", "sqlite-async", "postgres-async"} {
		b.Run(kind, func(b *testing.B) {
			reg := wfActions(b)
			plan := wfPlan(b, "s1.wf", s1Source(), reg)
			kind, async := strings.CutSuffix(kind, "-async")
			th := &engine.Threads{Runner: &engine.Runner{Registry: reg}, Store: openStore(b, kind)}
			if async {
				th.Durability = engine.Async
			}
			n := 0
			measure(b, 10, func() {
				n++
				res, err := th.Run(ctx, plan, "s4-"+strconv.Itoa(n), nil, nil, nil)
				if err != nil || res.Status != engine.Completed || res.Vars[0].Value.Int() != 10 {
					b.Fatalf("got %v, %v", res.Vars, err)
				}
			})
			recs, bytes := storeBytes(b, th.Store, "s4-1")
			b.ReportMetric(float64(bytes)/float64(recs), "B/checkpoint")
			b.ReportMetric(float64(recs), "checkpoints/op")
		})
	}
}

// BenchmarkResumeWaiting measures resuming a thread that waits for a
// person, as a new process would: load its state from the store, answer,
// and run it to its end (one more step).
func BenchmarkResumeWaiting(b *testing.B) {
	ctx := context.Background()
	const src = `workflow Ask {
  variables {
    history: List[String] = [] reduce append
  }
  nodes {
    node prepare {
      type: FUNCTION
      action: "noop"
    }
    node ask {
      type: HUMAN
      question: "Which year?"
      outputs {
        year: String
      }
    }
    node answer {
      type: FUNCTION
      action: "noop"
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: prepare; to: ask }
    edge { from: ask; to: answer; update: { history = ask.year } }
    edge { from: answer; to: done }
  }
  initial: prepare
  finals: [ done ]
}
`
	for _, kind := range []string{"memory", "sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			reg := wfActions(b)
			plan := wfPlan(b, "ask.wf", src, reg)
			r := &engine.Runner{Registry: reg}
			s := openStore(b, kind)
			th := &engine.Threads{Runner: r, Store: s}
			for i := range b.N {
				res, err := th.Run(ctx, plan, "w-"+strconv.Itoa(i), nil, nil, nil)
				if err != nil || res.Status != engine.Waiting {
					b.Fatalf("setup: %v, %v", res.Status, err)
				}
			}
			answer := []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}
			b.ReportAllocs()
			cpu := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				// A new Threads for every resume: nothing is cached.
				th := &engine.Threads{Runner: r, Store: s}
				res, err := th.Resume(ctx, plan, "w-"+strconv.Itoa(i), answer, nil)
				if err != nil || res.Status != engine.Completed {
					b.Fatalf("resume: %v, %v", res.Status, err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
