package lggbench

import (
	"context"
	"errors"
	"testing"

	"github.com/weftlang/weft/bench/peers/harness"
)

// prepareShape prepares s through Engine().Prepare, skipping the test when
// the engine does not support it and releasing it at the end.
func prepareShape(tb testing.TB, s harness.Shape) harness.Run {
	tb.Helper()
	run, release, err := Engine().Prepare(context.Background(), s, tb.TempDir())
	if errors.Is(err, harness.ErrUnsupported) {
		tb.Skipf("%s: %v", s, err)
	}
	if err != nil {
		tb.Fatalf("Prepare(%s): %v", s, err)
	}
	tb.Cleanup(func() {
		if err := release(); err != nil {
			tb.Errorf("release %s: %v", s, err)
		}
	})
	return run
}

// runThrice runs one prepared shape with i = 0, 1, 2.
func runThrice(t *testing.T, s harness.Shape) {
	t.Helper()
	run := prepareShape(t, s)
	for i := range 3 {
		if err := run(context.Background(), i); err != nil {
			t.Fatalf("%s run %d: %v", s, i, err)
		}
	}
}

// TestEngine checks the engine's identity and that an unknown shape fails.
func TestEngine(t *testing.T) {
	e := Engine()
	if e.Name != "langgraphgo" || e.Version != "v0.8.5" || e.Prepare == nil {
		t.Fatalf("Engine() = %q %q (Prepare nil: %v)", e.Name, e.Version, e.Prepare == nil)
	}
	if _, _, err := e.Prepare(context.Background(), "S9", t.TempDir()); err == nil {
		t.Fatal("Prepare of an unknown shape succeeded")
	}
}

// TestS1 runs chain10 three times.
func TestS1(t *testing.T) { runThrice(t, harness.S1) }

// TestS2 runs loop1000 three times.
func TestS2(t *testing.T) { runThrice(t, harness.S2) }

// TestS3 runs fanout100 three times.
func TestS3(t *testing.T) { runThrice(t, harness.S3) }

// TestS4Memory runs chain10 with in-memory checkpoints three times.
func TestS4Memory(t *testing.T) { runThrice(t, harness.S4Memory) }

// TestS4SQLite runs chain10 with SQLite checkpoints three times.
func TestS4SQLite(t *testing.T) { runThrice(t, harness.S4SQLite) }

// TestS4CheckpointsWritten checks, through the store, that one S4 run wrote
// a checkpoint after each of the 10 steps, on its own thread.
func TestS4CheckpointsWritten(t *testing.T) {
	for _, s := range []harness.Shape{harness.S4Memory, harness.S4SQLite} {
		t.Run(string(s), func(t *testing.T) {
			ctx := context.Background()
			p, err := build(ctx, s, t.TempDir())
			if err != nil {
				t.Fatalf("build(%s): %v", s, err)
			}
			t.Cleanup(func() {
				if err := p.close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			for i := range 2 {
				if err := p.run(ctx, i); err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				cps, err := p.store.ListByThread(ctx, threadID(i))
				if err != nil {
					t.Fatalf("ListByThread(%s): %v", threadID(i), err)
				}
				if len(cps) != chainLen {
					t.Fatalf("thread %s has %d checkpoints, want %d", threadID(i), len(cps), chainLen)
				}
				seen := map[string]bool{}
				for _, cp := range cps {
					seen[cp.NodeName] = true
				}
				for _, name := range chainNames {
					if !seen[name] {
						t.Errorf("thread %s: no checkpoint after node %s", threadID(i), name)
					}
				}
				latest, err := p.store.GetLatestByThread(ctx, threadID(i))
				if err != nil {
					t.Fatalf("GetLatestByThread(%s): %v", threadID(i), err)
				}
				if got := countOf(latest.State); got != chainLen {
					t.Errorf("thread %s: latest checkpoint has count %v, want %d", threadID(i), latest.State, chainLen)
				}
			}
		})
	}
}

// countOf reads count from a checkpointed state: a State in memory, a map
// holding a float64 after the SQLite store's JSON round trip.
func countOf(st any) int {
	switch s := st.(type) {
	case State:
		return s.Count
	case map[string]any:
		if c, ok := s["count"].(float64); ok {
			return int(c)
		}
	}
	return -1
}

// BenchmarkShapes measures one invocation of each shape, prepared once.
func BenchmarkShapes(b *testing.B) {
	for _, s := range harness.Shapes() {
		b.Run(string(s), func(b *testing.B) {
			run := prepareShape(b, s)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := run(ctx, i); err != nil {
					b.Fatalf("%s run %d: %v", s, i, err)
				}
				i++
			}
		})
	}
}
