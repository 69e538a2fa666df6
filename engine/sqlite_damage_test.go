package engine_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store/sqlite"
)

// loopSum is acc at the end of loopWF with n = 20.
const loopSum = 2470

// damagedOutcome opens a damaged copy of a SQLite store holding thread
// "d" (a run of loopWF, recorded in full or in part) and takes the thread
// to its end: loaded, resumed if its run did not end, run again if the
// thread is gone. It returns "reported" when a step said the store is
// damaged (an error), "harmless" when the thread ended with the right
// result and every step recorded once; anything else fails the test (a
// wrong final state).
func damagedOutcome(t *testing.T, path string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return "reported"
	}
	defer st.Close()
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: st, RetryFor: -1}
	ts, err := th.Load(ctx, "d")
	switch {
	case err != nil && ctx.Err() == nil:
		if _, terr := st.Thread(ctx, "d"); terr != nil && ts == nil {
			// The thread itself is gone (its creation was in the
			// lost part of the log): start it again.
			if _, err := th.Run(ctx, plan, "d", nil, nil, nil); err != nil {
				return "reported"
			}
			break
		}
		return "reported"
	case err != nil:
		t.Fatalf("loading timed out: %v", err)
	case ts.State == nil:
		if _, err := th.Run(ctx, plan, "d", nil, nil, nil); err != nil {
			return "reported"
		}
	case ts.Status() == engine.Running:
		if _, err := th.Resume(ctx, plan, "d", nil, nil); err != nil {
			return "reported"
		}
	case ts.Status() != engine.Completed:
		t.Fatalf("the thread is %s", ts.Status())
	}
	ts, err = th.Load(ctx, "d")
	if err != nil {
		return "reported"
	}
	if acc, _ := ts.Value("acc"); ts.Status() != engine.Completed || acc.Int() != loopSum {
		t.Fatalf("wrong final state: %s with acc=%s, want completed with %d", ts.Status(), acc, loopSum)
	}
	hist, err := th.History(ctx, "d", 1)
	if err != nil {
		return "reported"
	}
	if err := stepsOnce(hist, 20); err != nil {
		t.Fatalf("wrong final state: %v", err)
	}
	return "harmless"
}

func copyFile(t *testing.T, from, to string, size int64) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if size >= 0 && size < int64(len(b)) {
		b = b[:size]
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSQLiteWALTruncated copies a SQLite store as a SIGKILL leaves it
// (the database file and its write-ahead log, not checkpointed) in the
// middle of a run, cuts the log at offsets in its header, at frame
// boundaries and inside frames (and, on other copies, flips a bit of it),
// and opens each copy: the store opens and
// the thread ends with the right result (a cut log loses whole commits
// from its end, so the thread is an earlier, consistent one), or the
// damage is reported; never a wrong final state.
func TestSQLiteWALTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "weft.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, func(i int64) {
		if i == 14 {
			cancel() // the process dies in step 15
		}
	}), Store: st}
	if _, err := th.Run(ctx, plan, "d", map[string]flow.Value{"n": flow.IntValue(20)}, nil, nil); err == nil {
		t.Fatal("the stopped run did not fail")
	}
	// The crash image: the files as they are, the store still open.
	wal, err := os.ReadFile(path + "-wal")
	if err != nil || len(wal) < 32 {
		t.Fatalf("no write-ahead log to cut (%d bytes, %v)", len(wal), err)
	}
	pageSize := int64(binary.BigEndian.Uint32(wal[8:12]))
	frame := 24 + pageSize
	frames := (int64(len(wal)) - 32) / frame
	if frames < 4 {
		t.Fatalf("the log has %d frames", frames)
	}
	offsets := []int64{0, 16, 32, 32 + 10, 32 + frame/2, 32 + frame, 32 + frames/3*frame, 32 + frames/3*frame + 100,
		32 + frames/2*frame + 24 + pageSize/2, 32 + (frames-1)*frame, int64(len(wal)) - 1, int64(len(wal))}
	outcomes := map[string]int{}
	for i, off := range offsets {
		copyDir := filepath.Join(dir, fmt.Sprint("cut", i))
		if err := os.Mkdir(copyDir, 0o755); err != nil {
			t.Fatal(err)
		}
		cp := filepath.Join(copyDir, "weft.db")
		copyFile(t, path, cp, -1)
		copyFile(t, path+"-wal", cp+"-wal", off)
		got := damagedOutcome(t, cp)
		outcomes[got]++
		t.Logf("log cut at %d of %d bytes (%d frames of %d bytes): %s", off, len(wal), frames, frame, got)
	}
	// Bits flipped in the log instead: SQLite's frame checksums end
	// the log at the first damaged frame, as a cut does.
	rng := rand.New(rand.NewPCG(14, 6))
	for i := range 6 {
		b := append([]byte(nil), wal...)
		off := 32 + rng.Int64N(int64(len(b))-32)
		b[off] ^= 1 << rng.IntN(8)
		copyDir := filepath.Join(dir, fmt.Sprint("flip", i))
		if err := os.Mkdir(copyDir, 0o755); err != nil {
			t.Fatal(err)
		}
		cp := filepath.Join(copyDir, "weft.db")
		copyFile(t, path, cp, -1)
		if err := os.WriteFile(cp+"-wal", b, 0o644); err != nil {
			t.Fatal(err)
		}
		got := damagedOutcome(t, cp)
		outcomes[got]++
		t.Logf("log with a bit flipped at %d (frame %d): %s", off, (off-32)/frame+1, got)
	}
	if outcomes["harmless"] == 0 {
		t.Errorf("no cut log was usable: %v", outcomes)
	}
}

// TestSQLiteBitFlips flips one random bit of a SQLite store's file, on
// twenty copies (seeded), and opens each: the damage is reported (an
// error naming what is wrong) or harmless (the thread ends with the right
// result); never a wrong final state.
func TestSQLiteBitFlips(t *testing.T) {
	flips := 20
	if testing.Short() {
		flips = 5
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "weft.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: st}
	if _, err := th.Run(context.Background(), plan, "d", map[string]flow.Value{"n": flow.IntValue(20)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	st.Close() // checkpoints the log into the file
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(14, 5))
	outcomes := map[string]int{}
	for i := range flips {
		b := append([]byte(nil), orig...)
		off, bit := rng.IntN(len(b)), rng.IntN(8)
		b[off] ^= 1 << bit
		cp := filepath.Join(dir, fmt.Sprintf("flip%d.db", i))
		if err := os.WriteFile(cp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got := damagedOutcome(t, cp)
		outcomes[got]++
		t.Logf("bit %d of byte %d (page %d): %s", bit, off, off/4096+1, got)
	}
	t.Logf("%d flips: %v", flips, outcomes)
}
