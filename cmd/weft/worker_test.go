package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/pgtest"
)

// startWorker starts `weft worker args...` and waits for its GET /ok.
func startWorker(t *testing.T, bin string, args ...string) *weftServer {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, append([]string{"worker", "--addr", addr}, args...)...)
	cmd.Env = os.Environ()
	s := &weftServer{cmd: cmd, url: "http://" + addr, done: make(chan error, 1), stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-s.done })
	for range 500 {
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("weft worker exited: %v\n%s", err, s.stderr)
		default:
		}
		if resp, err := http.Get(s.url + "/ok"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("weft worker did not answer /ok\n%s", s.stderr)
	return nil
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
	var status map[string]any
	if code := w1.call(t, "GET", "/status", "", &status); code != 200 || status["running"] != float64(0) || status["queued"] != float64(0) {
		t.Fatalf("worker status: %d %v", code, status)
	}
	if strings.Contains(api.stderr.String(), "run ended") {
		t.Fatalf("the API process carried out runs:\n%s", api.stderr)
	}
	if n := strings.Count(w1.stderr.String(), "run ended") + strings.Count(w2.stderr.String(), "run ended"); n != 12 {
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
