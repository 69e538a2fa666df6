package sqlite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// record300 is a step record of about 300 bytes of JSON.
func record300(seq int64) *store.Record {
	data := fmt.Appendf(nil, `{"node":"step_%06d","inputs":{"query":"%s"},"outputs":{"answer":"%s"},"vars":{"turn":%d},"route":"next"}`,
		seq, bytes.Repeat([]byte("q"), 100), bytes.Repeat([]byte("a"), 100), seq)
	return &store.Record{ThreadID: "t", RunID: "r", Seq: seq, Step: int(seq), Kind: store.Step, Data: data}
}

// fileSize is the database plus its WAL, after a checkpoint.
func fileSize(b *testing.B, s *Store, path string) int64 {
	b.Helper()
	if _, err := s.writer.ExecContext(b.Context(), `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkAppend appends one ~300-byte record per op to one thread, one
// transaction each, and reports the process's CPU time (user and system,
// all threads) per op and the file's growth per record.
func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.db")
	s, err := Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		b.Fatal(err)
	}
	recs := make([]*store.Record, b.N)
	for i := range recs {
		recs[i] = record300(int64(i + 1))
	}
	before := fileSize(b, s, path)
	b.SetBytes(int64(len(recs[0].Data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := range b.N {
		if err := s.Append(ctx, recs[i]); err != nil {
			b.Fatal(err)
		}
	}
	cpu = cpuTime() - cpu
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	after := fileSize(b, s, path)
	b.ReportMetric(float64(after-before)/float64(b.N), "file-B/record")
	b.ReportMetric(float64(len(recs[0].Data)), "data-B/record")
}

// BenchmarkPutPending replaces one question of one thread per op, one
// commit each (an autocommit upsert), and reports the process's CPU time
// per op.
func BenchmarkPutPending(b *testing.B) {
	s, _ := openTemp(b)
	ctx := b.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		b.Fatal(err)
	}
	q := []byte(`{"question":"Refund order A-0000001 in full? The customer wrote: \"My parcel arrived damaged.\""}`)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for range b.N {
		if err := s.PutPending(ctx, &store.Pending{ID: "q", ThreadID: "t", RunID: "r", Node: "ask", Question: q}); err != nil {
			b.Fatal(err)
		}
	}
	cpu = cpuTime() - cpu
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkRunEnd records a waiting run's end per op, after a claim: its
// question, its row and the lease's release, one write each ("writes")
// or in one EndRun ("endrun"), and reports the process's CPU time per
// op (the claim's included).
func BenchmarkRunEnd(b *testing.B) {
	for _, mode := range []string{"writes", "endrun"} {
		b.Run(mode, func(b *testing.B) {
			s, _ := openTemp(b)
			ctx := b.Context()
			if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
				b.Fatal(err)
			}
			q := []byte(`{"question":"Refund order A-0000001 in full? The customer wrote: \"My parcel arrived damaged.\""}`)
			at := time.Now()
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				l, err := s.Claim(ctx, "t", "me", time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				p := &store.Pending{ID: "q", ThreadID: "t", RunID: "r", Node: "ask", Question: q, Fence: l.Fence}
				r := &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: store.Waiting, Created: at, Updated: at, Fence: l.Fence}
				if mode == "endrun" {
					err = s.EndRun(ctx, &store.RunEnd{Thread: "t", Pending: []*store.Pending{p}, Run: r, Release: &l})
				} else if err = s.PutPending(ctx, p); err == nil {
					if err = s.PutRun(ctx, r); err == nil {
						err = s.Release(ctx, l)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu = cpuTime() - cpu
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkConcurrentWrites runs, per op, a short run's writes on a new
// thread (create it, claim its lease, end the run: two records, a
// question, the run's row and the release in one EndRun) from many
// goroutines at once, as a server's many conversations write, and reports
// the process's CPU time per op. The writes of goroutines that meet at the
// writer are committed together (group.go).
func BenchmarkConcurrentWrites(b *testing.B) {
	for _, par := range []int{1, 16} {
		b.Run(fmt.Sprintf("goroutines=%d", par), func(b *testing.B) {
			s, _ := openTemp(b)
			ctx := b.Context()
			q := []byte(`{"question":"Approve this draft?"}`)
			var n atomic.Int64
			b.SetParallelism(par)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := fmt.Sprintf("t%d", n.Add(1))
					if err := s.CreateThread(ctx, &store.Thread{ID: id}); err != nil {
						b.Error(err)
						return
					}
					l, err := s.Claim(ctx, id, "me", time.Minute)
					if err != nil {
						b.Error(err)
						return
					}
					at := time.Now()
					recs := []*store.Record{record300(1), record300(2)}
					for _, r := range recs {
						r.ThreadID, r.Fence = id, l.Fence
					}
					err = s.EndRun(ctx, &store.RunEnd{Thread: id, Records: recs,
						Pending: []*store.Pending{{ID: "q", ThreadID: id, RunID: "r", Node: "ask", Question: q, Fence: l.Fence}},
						Run:     &store.Run{ID: "r-" + id, ThreadID: id, Number: 1, Status: store.Waiting, Created: at, Updated: at, Fence: l.Fence},
						Release: &l})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			cpu = cpuTime() - cpu
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
