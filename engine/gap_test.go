package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" driver, to delete a record behind the store's back

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
	"github.com/weftlang/weft/store/sqlite"
)

// gapStore is a store of a kind the gap tests use, with a way to delete a
// record directly in its database, as a hostile user or a damaged file
// would.
type gapStore struct {
	name   string
	open   func(t *testing.T) store.Store
	delete func(t *testing.T, thread string, seq int64)
}

func gapStores(t *testing.T) []gapStore {
	path := filepath.Join(t.TempDir(), "weft.db")
	out := []gapStore{{
		name: "sqlite",
		open: func(t *testing.T) store.Store {
			s, err := sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		delete: func(t *testing.T, thread string, seq int64) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			res, err := db.Exec(`DELETE FROM records WHERE thread_id = ? AND seq = ?`, thread, seq)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("deleted %d rows, want 1", n)
			}
		},
	}}
	if testing.Short() {
		return out
	}
	var (
		once sync.Once
		dsn  string
	)
	pgDSN := func(t *testing.T) string {
		once.Do(func() { dsn = pgtest.New(t).DSN })
		if dsn == "" {
			t.Skip("no PostgreSQL")
		}
		return dsn
	}
	return append(out, gapStore{
		name: "postgres",
		open: func(t *testing.T) store.Store {
			s, err := postgres.Open(t.Context(), pgDSN(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		delete: func(t *testing.T, thread string, seq int64) {
			conn, err := pgx.Connect(t.Context(), pgDSN(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			tag, err := conn.Exec(t.Context(), `DELETE FROM weft_records WHERE thread_id = $1 AND seq = $2::bigint`, thread, seq)
			if err != nil {
				t.Fatal(err)
			}
			if tag.RowsAffected() != 1 {
				t.Fatalf("deleted %d rows, want 1", tag.RowsAffected())
			}
		},
	})
}

// TestThreadGapRefused deletes a record of a thread's log directly in
// SQLite and PostgreSQL: Load, History, Fork, Resume and Run refuse the
// thread with a *store.CorruptError naming the thread and the missing
// record, where they read a silently shorter log before.
func TestThreadGapRefused(t *testing.T) {
	for _, gs := range gapStores(t) {
		t.Run(gs.name, func(t *testing.T) {
			ctx := context.Background()
			plan := load(t, "loop.wf", loopWF)
			var keys []string
			var mu sync.Mutex
			// Stop the run at i == 30: it stays resumable.
			cctx, cancel := context.WithCancel(ctx)
			th := &engine.Threads{Runner: stepRunner(&keys, &mu, func(i int64) {
				if i == 30 {
					cancel()
				}
			}), Store: gs.open(t)}
			if _, err := th.Run(cctx, plan, "g", map[string]flow.Value{"n": flow.IntValue(40)}, nil, nil); err == nil {
				t.Fatal("the cancelled run did not fail")
			}
			hist, err := th.History(ctx, "g", 1)
			if err != nil {
				t.Fatal(err)
			}
			// A step record after the last snapshot, not the last
			// record: what Load folds.
			var lastSnap, last int64
			for _, h := range hist {
				if h.Kind == store.Snapshot {
					lastSnap = h.Seq
				}
				last = h.Seq
			}
			victim := (lastSnap + last) / 2
			if victim <= lastSnap || victim >= last {
				t.Fatalf("no record between the last snapshot %d and the end %d", lastSnap, last)
			}
			gs.delete(t, "g", victim)

			th = &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: gs.open(t)}
			check := func(what string, err error) {
				t.Helper()
				var ce *store.CorruptError
				if !errors.As(err, &ce) {
					t.Errorf("%s of a log without record %d: %v, want *store.CorruptError", what, victim, err)
					return
				}
				if ce.ThreadID != "g" || ce.Seq != victim || ce.Field != "seq" {
					t.Errorf("%s: %+v, want thread g, record %d, field seq", what, ce, victim)
				}
			}
			_, err = th.Load(ctx, "g")
			check("Load", err)
			_, err = th.History(ctx, "g", 1)
			check("History", err)
			_, err = th.History(ctx, "g", victim+1)
			check("History from past the gap", err)
			_, err = th.Fork(ctx, "g", last, "g2", nil)
			check("Fork", err)
			n := len(keys)
			_, err = th.Resume(ctx, plan, "g", nil, nil)
			check("Resume", err)
			_, err = th.Run(ctx, plan, "g", nil, nil, nil)
			check("Run", err)
			if len(keys) != n {
				t.Errorf("the refused resume ran steps: %q", keys[n:])
			}
		})
	}
}

// TestThreadWithoutSnapshotRefused deletes the only snapshot of a thread
// (its first record): the thread is not taken for a new, empty one.
func TestThreadWithoutSnapshotRefused(t *testing.T) {
	for _, gs := range gapStores(t) {
		t.Run(gs.name, func(t *testing.T) {
			ctx := context.Background()
			plan := load(t, "loop.wf", loopWF)
			var keys []string
			var mu sync.Mutex
			th := &engine.Threads{Runner: stepRunner(&keys, &mu, nil), Store: gs.open(t)}
			if _, err := th.Run(ctx, plan, "s", map[string]flow.Value{"n": flow.IntValue(3)}, nil, nil); err != nil {
				t.Fatal(err)
			}
			gs.delete(t, "s", 1)
			check := func(what string, err error) {
				t.Helper()
				var ce *store.CorruptError
				if !errors.As(err, &ce) || ce.ThreadID != "s" || ce.Seq != 1 || ce.Field != "seq" {
					t.Errorf("%s of a log without its snapshot: %v, want a *store.CorruptError of record 1, field seq", what, err)
				}
			}
			_, err := th.Load(ctx, "s")
			check("Load", err)
			_, err = th.Run(ctx, plan, "s", nil, nil, nil)
			check("Run", err)
			_, err = th.Resume(ctx, plan, "s", nil, nil)
			check("Resume", err)
		})
	}
}
