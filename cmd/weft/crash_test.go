package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
	"github.com/weftlang/weft/store/sqlite"
)

// crashWF is a loop of n steps; each step posts to an effect server, which
// sees the step's idempotency key.
const crashWF = `
action effect {
  type: HTTP
  url: "BASE/effect"
  method: POST
}

workflow Crash {
  parameters {
    n: Int = 120
  }
  variables {
    i: Int = 0
    acc: Int = 0
  }
  nodes {
    node step {
      action: "effect"
      inputs {
        i: i
      }
      outputs {
        v: Int
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: step; to: step; condition: i + 1 < n; update: { i = i + 1; acc = acc + step.v } }
    edge { from: step; to: done; update: { acc = acc + step.v } }
  }
  initial: step
  finals: [ done ]
}
`

// effects is the side-effect server: it applies each idempotency key once
// and counts every request.
type effects struct {
	mu       sync.Mutex
	requests map[string]int // by key
	applied  []string       // keys, in the order first applied
}

func (s *effects) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	var in struct{ I int64 }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || key == "" {
		http.Error(w, "want a JSON body and an Idempotency-Key", http.StatusBadRequest)
		return
	}
	time.Sleep(time.Millisecond) // a remote effect takes a while
	s.mu.Lock()
	s.requests[key]++
	if s.requests[key] == 1 {
		s.applied = append(s.applied, key)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"v": %d}`, in.I*in.I)
}

// buildWeft builds the weft command once per test process, into a
// temporary directory TestMain removes.
func buildWeft(t *testing.T) string {
	t.Helper()
	builtWeft.once.Do(func() {
		dir, err := os.MkdirTemp("", "weft-test-bin-")
		if err != nil {
			builtWeft.err = err
			return
		}
		builtWeft.dir = dir
		bin := filepath.Join(dir, "weft")
		out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
		if err != nil {
			builtWeft.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		builtWeft.bin = bin
	})
	if builtWeft.err != nil {
		t.Fatal(builtWeft.err)
	}
	return builtWeft.bin
}

// builtWeft is the weft binary buildWeft built.
var builtWeft struct {
	once     sync.Once
	bin, dir string
	err      error
}

// TestMain removes the binary buildWeft built.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtWeft.dir != "" {
		os.RemoveAll(builtWeft.dir)
	}
	os.Exit(code)
}

// TestCrashRecovery starts real weft processes on a 120-step workflow,
// kills them with SIGKILL at random points, resumes, and checks that every
// step is recorded exactly once and every effect applied once (keys seen
// twice are only steps in flight at a kill), on SQLite and PostgreSQL.
func TestCrashRecovery(t *testing.T) {
	crashOnStores(t, 30, 30, crashLoop)
}

// crashLoopFunc is a crash test's loop on one store: it runs bin with
// --store storeSpec until it killed wantKills processes, and reads the
// store itself through open.
type crashLoopFunc func(t *testing.T, bin, storeSpec string, wantKills int, open func(context.Context) (store.Store, error))

// crashOnStores builds weft and runs loop on a SQLite file, to make
// sqliteKills kills, and on a PostgreSQL database, to make pgKills.
func crashOnStores(t *testing.T, sqliteKills, pgKills int, loop crashLoopFunc) {
	if testing.Short() {
		t.Skip("starts and kills processes; skipped with -short")
	}
	bin := buildWeft(t)
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "crash.db")
		loop(t, bin, path, sqliteKills, func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path) })
	})
	t.Run("postgres", func(t *testing.T) {
		db := pgtest.New(t)
		loop(t, bin, db.DSN, pgKills, func(ctx context.Context) (store.Store, error) { return postgres.Open(ctx, db.DSN) })
	})
}

// crashSetup starts the effect server, writes the workflow src, BASE
// replaced by the server's URL, to a file named name, and opens the
// store; the store and the server are closed when the test ends.
func crashSetup(t *testing.T, src, name string, open func(context.Context) (store.Store, error)) (srv *effects, wf string, st store.Store) {
	t.Helper()
	srv = &effects{requests: map[string]int{}}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	wf = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(wf, []byte(strings.ReplaceAll(src, "BASE", hs.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return srv, wf, st
}

// waitToKill waits for the process to end (done), and then returns false
// and its error, or for the time to kill it, and then returns true: when
// at fires, or, for steps of 0 or more, once the thread has steps records
// from Seq from on and a random fraction of a step more has passed.
func waitToKill(ctx context.Context, st store.Store, thread string, from int64, steps int, at <-chan time.Time, done <-chan error, rng *rand.Rand) (bool, error) {
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case err := <-done:
			return false, err
		case <-at:
			return true, nil
		case <-poll.C:
			if steps < 0 {
				continue
			}
			if recs, err := st.Records(ctx, thread, from); err == nil && len(recs) >= steps {
				time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
				return true, nil
			}
		}
	}
}

func crashLoop(t *testing.T, bin, storeSpec string, wantKills int, open func(context.Context) (store.Store, error)) {
	ctx := context.Background()
	srv, wf, st := crashSetup(t, crashWF, "crash.wf", open)
	th := &engine.Threads{Store: st}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))

	kills, midRun := 0, 0
	for n := 1; kills < wantKills; n++ {
		thread := fmt.Sprintf("crash-%d", n)
		attempts := 0
		for {
			attempts++
			if attempts > 500 {
				t.Fatalf("%s: no completion after 500 attempts", thread)
			}
			ts, err := th.Load(ctx, thread)
			args := []string{"resume", thread, "--store", storeSpec, "--json"}
			if errors.Is(err, store.ErrNotFound) || err == nil && ts.State == nil {
				args = []string{"run", wf, "--thread", thread, "--store", storeSpec, "--json"}
			} else if err != nil {
				t.Fatalf("%s: loading after %d kills: %v", thread, kills, err)
			}
			before := int64(0)
			if ts != nil {
				before = ts.Seq
			}
			cmd := exec.Command(bin, args...)
			// A killed process's lease runs out in 1 s, which the
			// next process waits for.
			cmd.Env = append(os.Environ(), "WEFT_LEASE_TTL=1s")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			kill := kills < wantKills
			var werr error
			if kill {
				// One kill in five at a random time (often during
				// start-up); the others once the run has recorded a
				// random number of new steps, plus a random fraction
				// of a step.
				at := time.After(time.Duration(rng.IntN(40)) * time.Millisecond)
				steps := -1
				if rng.IntN(5) > 0 {
					at, steps = nil, 1+rng.IntN(25)
				}
				// kill is false when it finished before the kill.
				kill, werr = waitToKill(ctx, st, thread, before+1, steps, at, done, rng)
				if kill {
					_ = cmd.Process.Kill() // SIGKILL
					<-done
					kills++
				}
			} else {
				werr = <-done
			}
			var want int64
			for i := int64(0); i < 120; i++ {
				want += i * i
			}
			if kill {
				ts, err := th.Load(ctx, thread)
				if err == nil && ts.Seq > before && ts.Status() == engine.Running {
					midRun++
				}
				// A thread killed before its first record has no state
				// (whose Status says Completed): it is run again above.
				if err == nil && ts.State != nil && ts.Status() == engine.Completed {
					// Killed after its last record, before it exited.
					if acc, _ := ts.Value("acc"); acc.Int() != want {
						t.Fatalf("%s: completed with acc=%s, want %d", thread, acc, want)
					}
					checkOnce(t, th, srv, thread)
					break
				}
				continue
			}
			if werr != nil {
				t.Fatalf("%s: %v: %v\nstdout: %s\nstderr: %s", thread, args, werr, stdout.String(), stderr.String())
			}
			var res struct {
				Status string
				Vars   map[string]int64
			}
			if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
				t.Fatalf("%s: result %q: %v", thread, stdout.String(), err)
			}
			if res.Status != "completed" || res.Vars["acc"] != want {
				t.Fatalf("%s: %+v, want completed with acc=%d", thread, res, want)
			}
			checkOnce(t, th, srv, thread)
			break
		}
	}
	if midRun < wantKills/2 {
		t.Errorf("only %d of %d kills landed in the middle of a run", midRun, kills)
	}
	dups := 0
	for _, c := range srv.requests {
		dups += c - 1
	}
	if dups > kills {
		t.Errorf("%d effects repeated, but only %d kills", dups, kills)
	}
	t.Logf("%d kills (%d in the middle of a run), %d effects re-sent by a re-run step (each applied once)", kills, midRun, dups)
}

// checkOnce checks a completed thread: each of its first 120 steps is
// recorded exactly once, and each effect was applied once.
func checkOnce(t *testing.T, th *engine.Threads, srv *effects, thread string) {
	t.Helper()
	checkSteps(t, th, srv, thread, 120)
}

// checkSteps checks a completed thread: each of its first n steps is
// recorded exactly once, and each effect was requested.
func checkSteps(t *testing.T, th *engine.Threads, srv *effects, thread string, n int) {
	t.Helper()
	hist, err := th.History(context.Background(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[int]int{}
	for _, h := range hist {
		if h.Node == "step" {
			steps[h.Step]++
		}
	}
	ts, err := th.Load(context.Background(), thread)
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for s := 1; s <= n; s++ {
		if steps[s] != 1 {
			t.Errorf("%s: step %d recorded %d times", thread, s, steps[s])
		}
		if c := srv.requests[fmt.Sprintf("%s/1-%s/%d", thread, ts.Run, s)]; c < 1 {
			t.Errorf("%s: step %d's effect never requested", thread, s)
		}
	}
}
