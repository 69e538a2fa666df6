package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/store"
)

// crashAnswerWF asks where to start, then posts one effect per step.
const crashAnswerWF = `
action effect {
  type: HTTP
  url: "BASE/effect"
  method: POST
}

workflow CrashAnswer {
  parameters {
    n: Int = 40
  }
  variables {
    i: Int = 0
    acc: Int = 0
  }
  nodes {
    node ask {
      type: HUMAN
      question: "Start at?"
      outputs {
        start: Int
      }
    }
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
    edge { from: ask; to: step; update: { i = ask.start } }
    edge { from: step; to: step; condition: i + 1 < n; update: { i = i + 1; acc = acc + step.v } }
    edge { from: step; to: done; update: { acc = acc + step.v } }
  }
  initial: ask
  finals: [ done ]
}
`

// TestCrashResumeAnswer kills `weft resume THREAD --answer` (and one in
// three of the resumes after it) with SIGKILL at random points, before and after the
// answer is recorded, on SQLite and PostgreSQL: every thread still ends
// with the right result, the answer recorded once, every step recorded
// once, and the effect server saw exactly the keys of the recorded steps
// (each applied once; re-sent only for a step in flight at a kill).
func TestCrashResumeAnswer(t *testing.T) {
	crashOnStores(t, 8, 5, crashAnswerLoop)
}

func crashAnswerLoop(t *testing.T, bin, storeSpec string, wantKills int, open func(context.Context) (store.Store, error)) {
	ctx := context.Background()
	srv, wf, st := crashSetup(t, crashAnswerWF, "answer.wf", open)
	th := &engine.Threads{Store: st}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(2, seed))
	const start = 5
	var want int64
	for i := int64(start); i < 40; i++ {
		want += i * i
	}
	// Every resume --answer is killed, until wantKills of them were;
	// one resume in three after it too.
	kills, answerKills, beforeAnswer, afterAnswer := 0, 0, 0, 0
	for n := 1; answerKills < wantKills; n++ {
		thread := fmt.Sprintf("answer-%d", n)
		out, err := exec.Command(bin, "run", wf, "--thread", thread, "--store", storeSpec).CombinedOutput()
		if code := exitCodeOf(err); code != exitWaiting {
			t.Fatalf("%s: run exited %d, want %d (waiting): %s", thread, code, exitWaiting, out)
		}
		for attempt := 1; ; attempt++ {
			if attempt > 200 {
				t.Fatalf("%s: no completion after 200 attempts", thread)
			}
			ts, err := th.Load(ctx, thread)
			if err != nil {
				t.Fatalf("%s (seed %d): loading after %d kills: %v", thread, seed, kills, err)
			}
			if ts.Status() == engine.Completed {
				if acc, _ := ts.Value("acc"); acc.Int() != want {
					t.Fatalf("%s (seed %d): completed with acc=%s, want %d", thread, seed, acc, want)
				}
				checkAnswerOnce(t, th, srv, thread, ts.Run)
				break
			}
			args := []string{"resume", thread, "--store", storeSpec}
			waiting := ts.Status() == engine.Waiting
			if waiting {
				args = append(args, "--answer", fmt.Sprint(start))
			}
			cmd := exec.Command(bin, args...)
			// A killed process's lease runs out in 1 s, which the
			// next process waits for.
			cmd.Env = append(os.Environ(), "WEFT_LEASE_TTL=1s")
			var output strings.Builder
			cmd.Stdout, cmd.Stderr = &output, &output
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if answerKills >= wantKills || !waiting && rng.IntN(3) > 0 {
				if err := <-done; err != nil {
					t.Fatalf("%s: %v: %v\n%s", thread, args, err, output.String())
				}
				continue
			}
			// Kill at a random time (often before the answer is
			// recorded), or after a random number of new records.
			at := time.After(time.Duration(rng.IntN(15)) * time.Millisecond)
			steps := -1
			if rng.IntN(3) > 0 {
				at, steps = nil, 1+rng.IntN(20)
			}
			killed, err := waitToKill(ctx, st, thread, ts.Seq+1, steps, at, done, rng)
			if err != nil {
				t.Fatalf("%s: %v: %v\n%s", thread, args, err, output.String())
			}
			if killed {
				_ = cmd.Process.Kill() // SIGKILL
				<-done
				kills++
				if waiting {
					answerKills++
					if after, err := th.Load(ctx, thread); err == nil && after.Status() == engine.Waiting {
						beforeAnswer++
					} else {
						afterAnswer++
					}
				}
			}
		}
	}
	if beforeAnswer == 0 || afterAnswer == 0 {
		t.Logf("seed %d: %d kills of resume --answer before the answer was recorded, %d after", seed, beforeAnswer, afterAnswer)
	}
	dups := 0
	for _, c := range srv.requests {
		dups += c - 1
	}
	if dups > kills {
		t.Errorf("%d effects re-sent, but only %d kills", dups, kills)
	}
	t.Logf("%d kills (%d of resume --answer: %d before its answer was recorded, %d after), %d effects re-sent (each applied once)", kills, answerKills, beforeAnswer, afterAnswer, dups)
}

// exitCodeOf returns a command's exit code (0 for no error, -1 if it did
// not exit).
func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	if xe, ok := err.(*exec.ExitError); ok {
		return xe.ExitCode()
	}
	return -1
}

// checkAnswerOnce checks a completed thread of crashAnswerWF: the answer
// recorded once, each step once, and the effect server saw exactly the
// keys of the recorded steps.
func checkAnswerOnce(t *testing.T, th *engine.Threads, srv *effects, thread, runID string) {
	t.Helper()
	hist, err := th.History(context.Background(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	answers, steps := 0, map[int]int{}
	wantKeys := map[string]bool{}
	for _, h := range hist {
		if h.Answer {
			answers++
		}
		if h.Node == "step" {
			steps[h.Step]++
			wantKeys[fmt.Sprintf("%s/1-%s/%d", thread, runID, h.Step)] = true
		}
	}
	if answers != 1 {
		t.Errorf("%s: the answer recorded %d times", thread, answers)
	}
	if len(steps) != 35 {
		t.Errorf("%s: %d steps recorded, want 35", thread, len(steps))
	}
	for s, c := range steps {
		if c != 1 {
			t.Errorf("%s: step %d recorded %d times", thread, s, c)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for k := range wantKeys {
		if srv.requests[k] < 1 {
			t.Errorf("%s: the effect of %s was never requested (lost)", thread, k)
		}
	}
	for k := range srv.requests {
		if strings.HasPrefix(k, thread+"/") && !wantKeys[k] {
			t.Errorf("%s: effect %s requested for no recorded step", thread, k)
		}
	}
}
