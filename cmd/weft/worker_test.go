package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/pgtest"
)

// startWorker starts `weft worker args...` and waits for its GET /ok.
func startWorker(t *testing.T, bin string, args ...string) *weftServer {
	t.Helper()
	return startWeftAt(t, bin, "worker", freeAddr(t), nil, args...)
}

// TestServeAndWorkers runs the deployment of docs/deploy.md with real
// processes on a real PostgreSQL: one `weft serve --workers 0` (the API,
// which only queues runs) and two `weft worker`s. Conversations on the
// Approval workflow through the API each end right, carried out by the
// workers (the API's log says it carries out nothing; the workers' status
// counts no run left); a worker's /status answers.
func TestServeAndWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes; skipped with -short")
	}
	bin := buildWeft(t)
	db := pgtest.New(t)
	wf := "../../server/testdata/approval.wf"
	api := startServe(t, bin, nil, wf, "--store", db.DSN, "--workers", "0")
	w1 := startWorker(t, bin, wf, "--store", db.DSN, "--concurrency", "2")
	w2 := startWorker(t, bin, wf, "--store", db.DSN, "--concurrency", "2")
	for i := range 6 {
		id := fmt.Sprintf("t%d", i)
		text := fmt.Sprintf("doc %d", i)
		if code := api.call(t, "POST", "/threads", `{"thread_id":"`+id+`"}`, nil); code != 200 {
			t.Fatalf("create %s: %d", id, code)
		}
		var first map[string]any
		if code := api.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"`+text+`"}}`, &first); code != 200 || first["__interrupt__"] == nil {
			t.Fatalf("first run of %s: %d %v\napi: %s", id, code, first, api.stderr)
		}
		var final map[string]any
		if code := api.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`, &final); code != 200 {
			t.Fatalf("resume of %s: %d %v", id, code, final)
		}
		if pub, _ := final["publish"].(map[string]any); pub == nil || pub["published"] != text {
			t.Fatalf("resume of %s: %v", id, final)
		}
	}
	// River's UI, on the API process.
	resp, err := http.Get(api.url + "/riverui/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "/riverui/") {
		t.Fatalf("GET /riverui/: %d %s\n%.300s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	// River marks a job completed a moment after its work returns (its
	// completer writes in batches), so the list may be empty at first.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var jobs map[string]any
		code := api.call(t, "GET", "/riverui/api/jobs?state=completed", "", &jobs)
		if code == 200 && strings.Contains(fmt.Sprint(jobs), "weft_run") {
			break
		}
		if code != 200 || time.Now().After(deadline) {
			t.Fatalf("GET /riverui/api/jobs: %d %v", code, jobs)
		}
	}
	// A worker counts a run out a moment after its client has the
	// reply (its River job's work returns after the run's end).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var status map[string]any
		code := w1.call(t, "GET", "/status", "", &status)
		if code == 200 && status["running"] == float64(0) && status["queued"] == float64(0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker status: %d %v", code, status)
		}
	}
	if strings.Contains(api.stderr.String(), "run ended") {
		t.Fatalf("the API process carried out runs:\n%s", api.stderr)
	}
	// A worker logs a run's end just after its client has the reply.
	ended := func() int {
		return strings.Count(w1.stderr.String(), "run ended") + strings.Count(w2.stderr.String(), "run ended")
	}
	for deadline := time.Now().Add(5 * time.Second); ended() < 12 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := ended(); n != 12 {
		t.Fatalf("the workers ended %d runs; want 12\nw1: %s\nw2: %s", n, w1.stderr, w2.stderr)
	}
	// Without PostgreSQL there is no queue for workers: said, not run.
	sq := t.TempDir() + "/w.db"
	for _, args := range [][]string{
		{"worker", wf, "--store", sq},
		{"serve", wf, "--store", sq, "--workers", "0", "--addr", freeAddr(t)},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "PostgreSQL") {
			t.Errorf("weft %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// slowEffects is the effect server of crashWF, each request taking delay.
type slowEffects struct {
	effects
	delay time.Duration
}

func (s *slowEffects) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(s.delay)
	s.effects.ServeHTTP(w, r)
}

func (s *slowEffects) counts() (requests, applied int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.requests {
		requests += n
	}
	return requests, len(s.applied)
}

// TestWorkerSIGKILL: a worker killed with SIGKILL in the middle of a
// 120-step run is found dead by the other worker's sweep once its thread
// lease runs out (WEFT_LEASE_TTL 2s), and the run goes on there from its
// last recorded step: the API's client, waiting on the run all along,
// gets the right result; every step's effect is applied once, and only a
// step in flight at the kill is sent twice (with its key).
func TestWorkerSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes; skipped with -short")
	}
	bin := buildWeft(t)
	db := pgtest.New(t)
	fx := &slowEffects{effects: effects{requests: map[string]int{}}, delay: 15 * time.Millisecond}
	hs := httptest.NewServer(fx)
	defer hs.Close()
	wf := filepath.Join(t.TempDir(), "crash.wf")
	if err := os.WriteFile(wf, []byte(strings.ReplaceAll(crashWF, "BASE", hs.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WEFT_LEASE_TTL", "2s")
	api := startServe(t, bin, nil, wf, "--store", db.DSN, "--workers", "0", "--durability", "sync")
	w1 := startWorker(t, bin, wf, "--store", db.DSN, "--concurrency", "1", "--durability", "sync")
	w2 := startWorker(t, bin, wf, "--store", db.DSN, "--concurrency", "1", "--durability", "sync")
	if code := api.call(t, "POST", "/threads", `{"thread_id":"k"}`, nil); code != 200 {
		t.Fatal(code)
	}
	var run map[string]any
	if code := api.call(t, "POST", "/threads/k/runs", `{"assistant_id":"Crash","input":{}}`, &run); code != 200 {
		t.Fatalf("run: %d %v", code, run)
	}
	rid, _ := run["run_id"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n, _ := fx.counts(); n >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not get going\napi: %s\nw1: %s\nw2: %s", api.stderr, w1.stderr, w2.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Kill the worker that carries it out.
	var s1 map[string]any
	w1.call(t, "GET", "/status", "", &s1)
	victim, other := w1, w2
	if s1["running"] != float64(1) {
		victim, other = w2, w1
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	killed, _ := fx.counts()
	// The rescue: the run's effects start again on the other worker.
	for {
		if n, _ := fx.counts(); n > killed+1 {
			break
		}
		if time.Since(killedAt) > 20*time.Second {
			t.Fatalf("no effect since the kill\nother worker: %s", other.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	rescue := time.Since(killedAt)
	t.Logf("rescued %v after the SIGKILL (lease TTL 2s, sweep every 1s)", rescue.Round(time.Millisecond))
	if rescue > 5*time.Second {
		t.Errorf("rescue took %v; want under the lease TTL + 2s (with a second's slack)", rescue)
	}
	var final map[string]any
	if code := api.call(t, "GET", "/threads/k/runs/"+rid+"/join", "", &final); code != 200 {
		t.Fatalf("join: %d %v", code, final)
	}
	if acc, _ := final["acc"].(float64); acc != 568820 {
		t.Fatalf("final values after the kill (at %d effects): %v\nother worker: %s", killed, final, other.stderr)
	}
	requests, applied := fx.counts()
	if applied != 120 || requests-applied > 2 {
		t.Fatalf("%d effects applied, %d requests; want 120 applied and at most 2 sent again", applied, requests)
	}
	if !strings.Contains(other.stderr.String(), "runs of a dead worker queued again") {
		t.Fatalf("the other worker did not sweep:\n%s", other.stderr)
	}
}
