package postgres

import (
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// BenchmarkRunEnd records a waiting run's end per op, after a claim: its
// question, its row and the lease's release, one write each ("writes")
// or in one EndRun ("endrun").
func BenchmarkRunEnd(b *testing.B) {
	for _, mode := range []string{"writes", "endrun"} {
		b.Run(mode, func(b *testing.B) {
			s := open(b)
			ctx := b.Context()
			if err := s.CreateThread(ctx, &store.Thread{ID: "t-" + mode}); err != nil {
				b.Fatal(err)
			}
			q := []byte(`{"question":"Refund order A-0000001 in full?"}`)
			at := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				l, err := s.Claim(ctx, "t-"+mode, "me", time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				p := &store.Pending{ID: "q", ThreadID: "t-" + mode, RunID: "r-" + mode, Node: "ask", Question: q, Fence: l.Fence}
				r := &store.Run{ID: "r-" + mode, ThreadID: "t-" + mode, Number: 1, Status: store.Waiting, Created: at, Updated: at, Fence: l.Fence}
				if mode == "endrun" {
					err = s.EndRun(ctx, &store.RunEnd{Thread: "t-" + mode, Pending: []*store.Pending{p}, Run: r, Release: &l})
				} else if err = s.PutPending(ctx, p); err == nil {
					if err = s.PutRun(ctx, r); err == nil {
						err = s.Release(ctx, l)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
