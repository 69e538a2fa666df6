package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/sqlite"
)

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// weftServer is a `weft serve` process.
type weftServer struct {
	cmd    *exec.Cmd
	url    string
	done   chan error
	stderr *syncBuffer
}

// syncBuffer is a buffer a process writes to while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServe starts `weft serve args...` on a free address and waits for
// GET /ok.
func startServe(t *testing.T, bin string, env []string, args ...string) *weftServer {
	t.Helper()
	return startServeAt(t, bin, freeAddr(t), env, args...)
}

// startServeAt starts `weft serve args...` on addr and waits for GET /ok.
func startServeAt(t *testing.T, bin, addr string, env []string, args ...string) *weftServer {
	t.Helper()
	return startWeftAt(t, bin, "serve", addr, env, args...)
}

// startWeftAt starts `weft sub --addr addr args...` (serve or worker) and
// waits for its GET /ok.
func startWeftAt(t *testing.T, bin, sub, addr string, env []string, args ...string) *weftServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{sub, "--addr", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
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
			t.Fatalf("weft %s exited: %v\n%s", sub, err, s.stderr)
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
	t.Fatalf("weft %s did not answer /ok\n%s", sub, s.stderr)
	return nil
}

// call sends a JSON request and decodes the reply.
func (s *weftServer) call(t *testing.T, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

// TestServeSurvivesSIGKILL: a run of a `weft serve` killed with SIGKILL
// mid-run, again and again, is resumed by each next server from its last
// recorded step and ends once: every step recorded once, every effect
// applied once, one run in the thread's list, with the right result.
func TestServeSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft and kills servers")
	}
	bin := buildWeft(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "serve.db")
	srv, wf, st := crashSetup(t, crashWF, "crash.wf", func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path) })
	env := []string{"WEFT_LEASE_TTL=1s"}
	rng := rand.New(rand.NewPCG(2, uint64(time.Now().UnixNano())))

	s := startServe(t, bin, env, wf, "--store", path)
	if code := s.call(t, "POST", "/threads", `{"thread_id":"k"}`, nil); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	if code := s.call(t, "POST", "/threads/k/runs", `{"assistant_id":"Crash","input":{"n":120}}`, &run); code != 200 {
		t.Fatalf("create run: %d", code)
	}
	th := &engine.Threads{Store: st}
	for kill := range 3 {
		ts, _ := th.Load(ctx, "k")
		var from int64 = 1
		if ts != nil {
			from = ts.Seq + 1
		}
		killed, err := waitToKill(ctx, st, "k", from, 5+rng.IntN(20), nil, s.done, rng)
		if !killed {
			t.Fatalf("server %d ended before the kill: %v\n%s", kill, err, s.stderr)
		}
		_ = s.cmd.Process.Kill() // SIGKILL
		<-s.done
		s.done <- nil // for the cleanup
		s = startServe(t, bin, env, wf, "--store", path)
	}
	var got struct{ Status string }
	for range 3000 {
		s.call(t, "GET", "/threads/k/runs/"+run.RunID, "", &got)
		if got.Status != "pending" && got.Status != "running" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got.Status != "success" {
		t.Fatalf("run after 3 kills: %s\n%s", got.Status, s.stderr)
	}
	var runs []map[string]any
	s.call(t, "GET", "/threads/k/runs", "", &runs)
	if len(runs) != 1 {
		t.Fatalf("the thread has %d runs, want 1", len(runs))
	}
	var want int64
	for i := int64(0); i < 120; i++ {
		want += i * i
	}
	var state struct {
		Values map[string]any `json:"values"`
	}
	s.call(t, "GET", "/threads/k/state", "", &state)
	if acc := state.Values["acc"]; fmt.Sprint(acc) != fmt.Sprint(want) {
		t.Fatalf("acc = %v, want %d", acc, want)
	}
	checkOnce(t, th, srv, "k")
}

// TestServeStopsGracefully: SIGTERM stops the server; the run in progress
// goes back to pending, and the next server finishes it.
func TestServeStopsGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft")
	}
	bin := buildWeft(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "serve.db")
	srv, wf, st := crashSetup(t, crashWF, "crash.wf", func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path) })
	s := startServe(t, bin, nil, wf, "--store", path)
	s.call(t, "POST", "/threads", `{"thread_id":"g"}`, nil)
	var run struct {
		RunID string `json:"run_id"`
	}
	s.call(t, "POST", "/threads/g/runs", `{"assistant_id":"Crash","input":{"n":400}}`, &run)
	rng := rand.New(rand.NewPCG(3, 3))
	if killed, err := waitToKill(ctx, st, "g", 1, 10, nil, s.done, rng); !killed {
		t.Fatalf("ended early: %v", err)
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			t.Fatalf("weft serve after SIGINT: %v\n%s", err, s.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("weft serve did not stop\n%s", s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "stopped") {
		t.Fatalf("log: %s", s.stderr)
	}
	jobs := st.(store.Jobs)
	j, err := jobs.Job(ctx, run.RunID)
	if err != nil || j.Status != store.JobPending {
		t.Fatalf("run after the stop: %v %v", j, err)
	}
	s = startServe(t, bin, nil, wf, "--store", path)
	var got struct{ Status string }
	for range 3000 {
		s.call(t, "GET", "/threads/g/runs/"+run.RunID, "", &got)
		if got.Status == "success" || got.Status == "error" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got.Status != "success" {
		t.Fatalf("run on the next server: %s\n%s", got.Status, s.stderr)
	}
	checkOnce(t, &engine.Threads{Store: st}, srv, "g")
}

// Seed 000's IntentQA over HTTP: a request too vague to search for waits
// at ask_user (an interrupt carrying the question); the clarification,
// sent as command.resume, runs the rest of the route to the answer.
func TestServeIntentQAAskUser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft")
	}
	docs := datadir.Require(t, "tatqa/tatqa_dataset_dev.json")
	bin := buildWeft(t)
	rec, _ := filepath.Abs(filepath.Join("..", "..", "examples", "intentqa", "sessions", "ask_user.jsonl"))
	app, _ := filepath.Abs(filepath.Join("..", "..", "examples", "intentqa", "app.wf"))
	s := startServe(t, bin, nil, app, "--docs", docs, "--llm", "replay:"+rec, "--store", filepath.Join(t.TempDir(), "s.db"))
	var asst []map[string]any
	s.call(t, "POST", "/assistants/search", `{}`, &asst)
	if len(asst) != 1 || asst[0]["graph_id"] != "IntentQA" {
		t.Fatalf("assistants = %v", asst)
	}
	s.call(t, "POST", "/threads", `{"thread_id":"q"}`, nil)
	var first struct {
		Interrupt []struct {
			ID    string
			Value map[string]any
		} `json:"__interrupt__"`
	}
	if code := s.call(t, "POST", "/threads/q/runs/wait", `{"assistant_id":"IntentQA","input":{"messages":[{"role":"user","content":"numbers?"}]}}`, &first); code != 200 {
		t.Fatalf("first run: %d", code)
	}
	if len(first.Interrupt) != 1 || first.Interrupt[0].Value["node"] != "ask_user" || !strings.Contains(fmt.Sprint(first.Interrupt[0].Value["question"]), "Could you clarify your request?") {
		t.Fatalf("first run = %+v", first)
	}
	var thread struct {
		Status string
		Values map[string]any
	}
	s.call(t, "GET", "/threads/q", "", &thread)
	if thread.Status != "interrupted" || thread.Values["input_text"] != "numbers?" {
		t.Fatalf("thread = %+v", thread)
	}
	var final map[string]any
	if code := s.call(t, "POST", "/threads/q/runs/wait", `{"assistant_id":"IntentQA","command":{"resume":"What is the amount of total sales in 2019?"}}`, &final); code != 200 {
		t.Fatalf("resume: %d", code)
	}
	gen, _ := final["generate"].(map[string]any)
	if !strings.Contains(fmt.Sprint(gen), "$1,496.5 million") {
		t.Fatalf("final values = %v\n%s", final, s.stderr)
	}
}

// TestServeStudio: weft serve serves the studio at /studio/, and a
// browser at / is sent there.
func TestServeStudio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft")
	}
	bin := buildWeft(t)
	wf, _ := filepath.Abs(filepath.Join("..", "..", "server", "testdata", "approval.wf"))
	s := startServe(t, bin, nil, wf, "--store", filepath.Join(t.TempDir(), "s.db"))
	resp, err := http.Get(s.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Request.URL.Path != "/studio/" || !strings.Contains(string(b), `href="/studio/workflows/Approval"`) {
		t.Fatalf("GET /: at %s (%d)\n%s", resp.Request.URL.Path, resp.StatusCode, b)
	}
	if !strings.Contains(s.stderr.String(), "/studio/") {
		t.Fatalf("the log does not say where the studio is:\n%s", s.stderr)
	}
}

// TestStudioCommand: weft studio serves its workflows on a free port with
// a store of its own, and prints the studio's address, which answers.
func TestStudioCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft")
	}
	bin := buildWeft(t)
	wf, _ := filepath.Abs(filepath.Join("..", "..", "server", "testdata", "approval.wf"))
	dir := t.TempDir()
	cmd := exec.Command(bin, "studio", wf, "--open=false")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEFT_STORE=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address on stdout: %v\n%s", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/studio/") {
		t.Fatalf("address %q", url)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Approval") {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("weft studio wrote in its directory: %v", entries)
	}
}
