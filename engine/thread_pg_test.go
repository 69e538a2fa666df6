package engine_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
)

// TestThreadSurvivesPostgresRestart stops the PostgreSQL server in the
// middle of a run for 1.5 s, longer than the store retries on its own: the
// appends that meet the outage are retried by the engine, and the run
// completes with every step recorded exactly once.
func TestThreadSurvivesPostgresRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a PostgreSQL server; skipped with -short")
	}
	c := pgtest.Start(t)
	ctx := context.Background()
	db, err := c.CreateDB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plan := load(t, "loop.wf", loopWF)
	var (
		keys      []string
		mu        sync.Mutex
		restarted = make(chan error, 1)
	)
	th := &engine.Threads{Runner: stepRunner(&keys, &mu, func(i int64) {
		time.Sleep(5 * time.Millisecond)
		if i == 5 {
			go func() { restarted <- c.RestartAfter(1500 * time.Millisecond) }()
		}
	}), Store: &countingStore{Store: st}}
	res, err := th.Run(ctx, plan, "pg", map[string]flow.Value{"n": flow.IntValue(120)}, nil, nil)
	if rerr := <-restarted; rerr != nil {
		t.Fatalf("restart: %v", rerr)
	}
	if err != nil || res.Status != engine.Completed {
		t.Fatalf("run across the restart: %v, %v", res.Status, err)
	}
	var want int64
	for i := int64(0); i < 120; i++ {
		want += i * i
	}
	if acc := resultVar(t, res, "acc"); acc.Int() != want {
		t.Errorf("acc = %s, want %d", acc, want)
	}
	hist, err := th.History(ctx, "pg", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := stepsOnce(hist, 120); err != nil {
		t.Errorf("%v", err)
	}
	if n := th.Store.(*countingStore).failed.Load(); n == 0 {
		t.Errorf("no append met the outage: the test did not test the restart")
	} else {
		t.Logf("%d appends failed during the restart and were retried", n)
	}
	if len(keys) != 120 {
		t.Errorf("%d action calls, want 120 (no step re-ran in process)", len(keys))
	}
}

// countingStore counts the appends that fail.
type countingStore struct {
	store.Store
	failed atomic.Int64
}

func (s *countingStore) Append(ctx context.Context, recs ...*store.Record) error {
	err := s.Store.Append(ctx, recs...)
	if err != nil {
		s.failed.Add(1)
	}
	return err
}
