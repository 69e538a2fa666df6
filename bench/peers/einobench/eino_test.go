package einobench

import (
	"context"
	"errors"
	"testing"

	"github.com/weftlang/weft/bench/peers/harness"
)

// prepared prepares shape s with Engine and registers its release.
func prepared(tb testing.TB, s harness.Shape) harness.Run {
	tb.Helper()
	run, closeFn, err := Engine().Prepare(context.Background(), s, tb.TempDir())
	if err != nil {
		tb.Fatalf("Prepare(%s): %v", s, err)
	}
	tb.Cleanup(func() {
		if err := closeFn(); err != nil {
			tb.Errorf("close %s: %v", s, err)
		}
	})
	return run
}

// runThrice runs shape s with i = 0, 1, 2, failing on any error.
func runThrice(t *testing.T, s harness.Shape) {
	t.Helper()
	run := prepared(t, s)
	for i := range 3 {
		if err := run(context.Background(), i); err != nil {
			t.Fatalf("%s run %d: %v", s, i, err)
		}
	}
}

func TestEngine(t *testing.T) {
	e := Engine()
	if e.Name != "eino" || e.Version != "v0.9.18" || e.Prepare == nil {
		t.Fatalf("Engine() = {%q, %q, Prepare nil: %v}", e.Name, e.Version, e.Prepare == nil)
	}
}

func TestS1(t *testing.T) { runThrice(t, harness.S1) }

func TestS2(t *testing.T) { runThrice(t, harness.S2) }

func TestS3(t *testing.T) { runThrice(t, harness.S3) }

func TestS4Memory(t *testing.T) { runThrice(t, harness.S4Memory) }

// TestS4MemoryWritesNone confirms what the S4Memory comment claims: each
// run looks its checkpoint ID up in the store, and a run that is not
// interrupted writes no checkpoint.
func TestS4MemoryWritesNone(t *testing.T) {
	run, store, err := prepareS4Memory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := run(context.Background(), i); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if g, s := store.gets.Load(), store.sets.Load(); g != 3 || s != 0 {
		t.Fatalf("store calls: %d gets, %d sets; want 3 gets, 0 sets", g, s)
	}
}

func TestS4SQLiteUnsupported(t *testing.T) {
	_, _, err := Engine().Prepare(context.Background(), harness.S4SQLite, t.TempDir())
	if !errors.Is(err, harness.ErrUnsupported) {
		t.Fatalf("Prepare(S4SQLite) error = %v, want harness.ErrUnsupported", err)
	}
}

func BenchmarkShapes(b *testing.B) {
	for _, s := range harness.Shapes() {
		b.Run(string(s), func(b *testing.B) {
			run, closeFn, err := Engine().Prepare(context.Background(), s, b.TempDir())
			if errors.Is(err, harness.ErrUnsupported) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				if err := closeFn(); err != nil {
					b.Error(err)
				}
			})
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := run(ctx, i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
