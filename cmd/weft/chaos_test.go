package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/store/postgres"
)

// chaosWF is the chaos test's workflow: LLM calls in a row, each prompt
// naming its node and the run's input (so that the fake model, which
// answers a hash of the prompt, gives each run its own values), a person's
// note for runs with ask, and an HTTP effect carrying its idempotency key.
const chaosWF = `
action effect {
  type: HTTP
  url: "BASE/effect"
  method: POST
}
action askA { type: LLM; prompt: "a: {{input_text}}" }
action askB { type: LLM; prompt: "b: {{input_text}} {{a.text}}" }
action askC { type: LLM; prompt: "c: {{input_text}} {{b.text}} {{note}}" }
action askD { type: LLM; prompt: "d: {{input_text}} {{fx.v}}" }

workflow Chaos {
  parameters {
    ask: Bool = false
  }
  variables {
    note: String = "-"
  }
  nodes {
    node a { type: LLM; action: "askA"; outputs { text: String } }
    node b { type: LLM; action: "askB"; outputs { text: String } }
    node review { type: HUMAN; question: "A note?"; outputs { answer: String } }
    node c { type: LLM; action: "askC"; outputs { text: String } }
    node fx {
      action: "effect"
      inputs { text: c.text }
      outputs { v: String }
    }
    node d { type: LLM; action: "askD"; outputs { text: String } }
    node done { type: END }
  }
  edges {
    edge { from: a; to: b }
    edge { from: b; to: review; condition: ask }
    edge { from: b; to: c }
    edge { from: review; to: c; update: { note = review.answer } }
    edge { from: c; to: fx }
    edge { from: fx; to: d }
    edge { from: d; to: done }
  }
  initial: a
  finals: [ done ]
}
`

// chaosHash is what the fake model answers to a prompt, and (prefixed
// "fx-") what the effect server answers to a text.
func chaosHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(h[:8])
}

// chaosWant returns the values a run of thread ends with: each node's
// output, from the chain of hashes.
func chaosWant(thread string, ask bool) map[string]string {
	in := "in-" + thread
	note := "-"
	if ask {
		note = "note-" + thread
	}
	a := chaosHash("a: " + in)
	b := chaosHash("b: " + in + " " + a)
	c := chaosHash("c: " + in + " " + b + " " + note)
	fx := "fx-" + chaosHash(c)
	d := chaosHash("d: " + in + " " + fx)
	return map[string]string{"a": a, "b": b, "c": c, "fx": fx, "d": d, "note": note}
}

// chaosSize is the size of a chaos test.
type chaosSize struct {
	runs          int           // threads, one run each (two with ask)
	kills         int           // SIGKILLs of random workers
	load          time.Duration // over which runs are sent and chaos happens
	stall         time.Duration // how long the SIGSTOPped worker stays stopped
	clientTimeout time.Duration // bound on each client
}

// chaosCall is one LLM call the fake model received.
type chaosCall struct {
	inc int // the worker incarnation that made it
	at  time.Time
}

// String says who made the call, and when.
func (c chaosCall) String() string {
	return fmt.Sprintf("worker %d at %s", c.inc, c.at.Format("15:04:05.000"))
}

// chaosInc is one worker process (an incarnation: a restarted worker is a
// new one).
type chaosInc struct {
	id   int
	proc *weftServer
	// killedAt is when it was SIGKILLed; stoppedAt and contAt, when it was
	// SIGSTOPped and SIGCONTed.
	killedAt, stoppedAt, contAt time.Time
}

// chaosLab is the test's shared state, written by the fakes, the effect
// server, the clients and the chaos loop.
type chaosLab struct {
	bin, dsn, dir, effURL, llmURL, wf string

	fake *llmtest.Server // answers every worker's calls, through serveLLM

	mu      sync.Mutex
	calls   map[[2]string][]chaosCall // by (thread, node)
	effects map[string][]chaosCall    // requests by idempotency key
	incs    []*chaosInc
	workers []*chaosInc    // the three up now
	pids    map[int]int    // incarnations by process id
	conns   map[string]int // the incarnation at the other end of a connection, by its address
	stray   []string       // requests the fakes could not place
	// pgDown and pgUp bound the PostgreSQL restart's outage.
	pgDown, pgUp time.Time
}

// chaosLease is the thread lease of the chaos test's processes.
const chaosLease = 2 * time.Second

// suspect says whether a call may be repeated: made by a worker later
// killed, or by the stalled one before it woke (and a second after, while
// it finds it lost its lease), or around the PostgreSQL outage (a run
// whose lease ran out while the database was down loses its step in
// flight, which runs again with its key).
func (l *chaosLab) suspect(c chaosCall) bool {
	if !l.pgDown.IsZero() && c.at.After(l.pgDown.Add(-chaosLease-time.Second)) && c.at.Before(l.pgUp.Add(time.Second)) {
		return true
	}
	if c.inc < 0 {
		// Its process was gone when the call came: one just killed.
		for _, inc := range l.incs {
			if !inc.killedAt.IsZero() && inc.killedAt.After(c.at.Add(-time.Second)) && inc.killedAt.Before(c.at.Add(time.Second)) {
				return true
			}
		}
		return false
	}
	inc := l.incs[c.inc]
	if !inc.killedAt.IsZero() {
		return true
	}
	return !inc.stoppedAt.IsZero() && c.at.Before(inc.contAt.Add(time.Second))
}

// newChaosFake starts the fake Ollama: it answers each prompt with its
// hash after 50-200 ms.
func newChaosFake() *llmtest.Server {
	fake := llmtest.NewOllamaServer()
	fake.KeepRequests(false)
	fake.RepeatFunc(func(req llm.Request) llmtest.Reply {
		prompt := ""
		for _, m := range req.Messages {
			if m.Role == llm.User {
				prompt = m.Content
			}
		}
		return llmtest.Reply{Text: chaosHash(prompt), Latency: time.Duration(50+rand.IntN(151)) * time.Millisecond}
	})
	return fake
}

// serveLLM records an LLM call, by (thread, node) and by the worker that
// made it, and hands it to the fake. (Each worker cannot have a fake of
// its own: a thread's model, its server's URL included, is stored with
// the thread, and the worker that takes a run over calls that URL.)
func (l *chaosLab) serveLLM(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		Messages []struct{ Role, Content string }
	}
	prompt := ""
	if json.Unmarshal(body, &req) == nil {
		for _, m := range req.Messages {
			if m.Role == "user" {
				prompt = m.Content
			}
		}
	}
	// "<node>: in-<thread> ..."
	node, rest, _ := strings.Cut(prompt, ": ")
	in, _, _ := strings.Cut(rest, " ")
	thread, ok := strings.CutPrefix(in, "in-")
	call := chaosCall{inc: l.caller(r), at: time.Now()}
	l.mu.Lock()
	if ok {
		k := [2]string{thread, node}
		l.calls[k] = append(l.calls[k], call)
	} else {
		l.stray = append(l.stray, fmt.Sprintf("incarnation %d: %s %s %q", call.inc, r.Method, r.URL.Path, prompt))
	}
	l.mu.Unlock()
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	l.fake.ServeHTTP(w, r)
}

// caller returns the worker incarnation at the other end of r's
// connection, found (once per connection) from the kernel's table of
// TCP sockets and the processes' open files; -1 if none (a process just
// killed).
func (l *chaosLab) caller(r *http.Request) int {
	l.mu.Lock()
	inc, ok := l.conns[r.RemoteAddr]
	pids := make(map[int]int, len(l.pids))
	for pid, i := range l.pids {
		pids[pid] = i
	}
	l.mu.Unlock()
	if ok {
		return inc
	}
	inc = socketOwner(r, pids)
	if inc >= 0 {
		l.mu.Lock()
		l.conns[r.RemoteAddr] = inc
		l.mu.Unlock()
	}
	return inc
}

// socketOwner finds, among pids, the process holding the client end of
// r's TCP connection (on 127.0.0.1): the socket's inode from
// /proc/net/tcp, then the process with that socket open. It returns the
// process's value in pids, or -1.
func socketOwner(r *http.Request, pids map[int]int) int {
	_, cport, err1 := net.SplitHostPort(r.RemoteAddr)
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if err1 != nil || local == nil {
		return -1
	}
	_, sport, err2 := net.SplitHostPort(local.String())
	cp, err3 := strconv.Atoi(cport)
	sp, err4 := strconv.Atoi(sport)
	if err2 != nil || err3 != nil || err4 != nil {
		return -1
	}
	tab, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return -1
	}
	want := fmt.Sprintf(":%04X", cp)
	wantRem := fmt.Sprintf(":%04X", sp)
	inode := ""
	for _, line := range strings.Split(string(tab), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && strings.HasSuffix(f[1], want) && strings.HasSuffix(f[2], wantRem) {
			inode = f[9]
			break
		}
	}
	if inode == "" {
		return -1
	}
	link := "socket:[" + inode + "]"
	for pid, v := range pids {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == link {
				return v
			}
		}
	}
	return -1
}

// newConnServer starts an HTTP server whose connections' callers caller
// may cache, forgetting each connection as it closes.
func (l *chaosLab) newConnServer(h http.HandlerFunc) *httptest.Server {
	hs := httptest.NewUnstartedServer(h)
	hs.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateClosed || st == http.StateHijacked {
			l.mu.Lock()
			delete(l.conns, c.RemoteAddr().String())
			l.mu.Unlock()
		}
	}
	hs.Start()
	return hs
}

// serveEffect is the effect server: POST /effect {"text"} answers
// {"v": "fx-" + hash(text)} and records the request's idempotency key and
// caller.
func (l *chaosLab) serveEffect(w http.ResponseWriter, r *http.Request) {
	var in struct{ Text string }
	key := r.Header.Get("Idempotency-Key")
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || key == "" || r.URL.Path != "/effect" {
		http.Error(w, "want POST /effect, a JSON body and an Idempotency-Key", http.StatusBadRequest)
		return
	}
	call := chaosCall{inc: l.caller(r), at: time.Now()}
	l.mu.Lock()
	l.effects[key] = append(l.effects[key], call)
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"v": %q}`, "fx-"+chaosHash(in.Text))
}

// writeWF writes the workflow, its effects sent to the effect server.
func (l *chaosLab) writeWF() (string, error) {
	wf := filepath.Join(l.dir, "chaos.wf")
	return wf, os.WriteFile(wf, []byte(strings.ReplaceAll(chaosWF, "BASE", l.effURL)), 0o644)
}

// startWorker starts a new worker incarnation; t's cleanup kills it.
func (l *chaosLab) startWorker(t *testing.T) (*chaosInc, error) {
	l.mu.Lock()
	inc := &chaosInc{id: len(l.incs)}
	l.incs = append(l.incs, inc)
	l.mu.Unlock()
	env := []string{"OLLAMA_HOST=" + l.llmURL, "WEFT_LLM=ollama:fake", "WEFT_LEASE_TTL=" + chaosLease.String()}
	p, err := startProc(t, l.bin, "worker", env, func(pid int) {
		l.mu.Lock()
		l.pids[pid] = inc.id
		l.mu.Unlock()
	}, l.wf, "--store", l.dsn, "--concurrency", "4", "--durability", "sync")
	if err != nil {
		return nil, fmt.Errorf("worker %d: %w", inc.id, err)
	}
	inc.proc = p
	return inc, nil
}

// startProc starts `weft sub --addr ADDR args...` and waits for its GET
// /ok; t's cleanup kills it. Unlike startWeftAt it may be called from any
// goroutine.
func startProc(t *testing.T, bin, sub string, env []string, started func(pid int), args ...string) (*weftServer, error) {
	addr := freeAddr(t)
	cmd := exec.Command(bin, append([]string{sub, "--addr", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	s := &weftServer{cmd: cmd, url: "http://" + addr, done: make(chan error, 1), stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		err := <-s.done
		s.done <- err
	})
	for range 750 {
		select {
		case err := <-s.done:
			s.done <- err
			return nil, fmt.Errorf("weft %s exited: %v\n%s", sub, err, s.stderr)
		default:
		}
		if resp, err := http.Get(s.url + "/ok"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, fmt.Errorf("weft %s did not answer /ok\n%s", sub, s.stderr)
}

// chaosEvent is one act of the chaos loop, for the log and the rescue
// times.
type chaosEvent struct {
	kind    string // kill, stop, pg
	at      time.Time
	inc     int           // the victim (kill, stop)
	running float64       // its runs in flight just before, by its /status
	took    time.Duration // pg: the restart; stop: the stall
}

// chaosClient is one thread's client and what it saw.
type chaosClient struct {
	thread   string
	ask, sse bool
	async    bool // the runs' durability is async (sync otherwise)
	err      error
	finals   []map[string]any // each run's final reply (wait) or last values frame (SSE)
	updates  map[string]int   // SSE: updates frames by node, over the thread's runs
	frames   []string         // SSE: every frame, "id event", for the report
	attempts int              // SSE: the highest attempt a metadata frame named
	rejoins  int              // SSE: reconnections with Last-Event-ID
	cutAfter int              // SSE: the client drops its first connection after this many frames (0: never)
	retries  int              // requests sent again after a 5xx or a dropped connection
	ends     []time.Time      // when each run's reply came
}

// chaosHTTP is the clients' HTTP client.
var chaosHTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// send sends a request, again after a dropped connection or a 5xx, until
// ctx is done; a 409 on a thread's creation is its success sent again.
func (c *chaosClient) send(ctx context.Context, method, url, body string, hdr map[string]string) (*http.Response, error) {
	for {
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := chaosHTTP.Do(req)
		if err == nil && resp.StatusCode < 500 {
			return resp, nil
		}
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			err = fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
		}
		if ctx.Err() != nil {
			return nil, err
		}
		c.retries++
		time.Sleep(200 * time.Millisecond)
	}
}

// callJSON sends a request (see send) and decodes its reply, sending it
// again while the reply is cut short.
func (c *chaosClient) callJSON(ctx context.Context, method, url, body string, out any) (int, error) {
	for {
		resp, err := c.send(ctx, method, url, body, nil)
		if err != nil {
			return 0, err
		}
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr == nil && (out == nil || len(strings.TrimSpace(string(b))) > 0) {
			if out != nil {
				if err := json.Unmarshal(b, out); err != nil {
					return resp.StatusCode, fmt.Errorf("%s %s: %v in %q", method, url, err, b)
				}
			}
			return resp.StatusCode, nil
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("%s %s: %v, reply %q", method, url, rerr, b)
		}
		c.retries++
		time.Sleep(200 * time.Millisecond)
	}
}

// run drives the thread: create it, run it (and resume it with a note
// when it asks), by runs + join or by SSE streams.
func (c *chaosClient) run(ctx context.Context, api string, rng *rand.Rand) error {
	if code, err := c.callJSON(ctx, "POST", api+"/threads", `{"thread_id":"`+c.thread+`"}`, nil); err != nil || code != 200 && code != 409 {
		return fmt.Errorf("creating the thread: %d %v", code, err)
	}
	durability := "sync"
	if c.async {
		durability = "async"
	}
	bodies := []string{fmt.Sprintf(`{"assistant_id":"Chaos","input":{"input_text":"in-%s","ask":%t},"durability":%q}`, c.thread, c.ask, durability)}
	if c.ask {
		bodies = append(bodies, fmt.Sprintf(`{"assistant_id":"Chaos","command":{"resume":"note-%s"},"durability":%q}`, c.thread, durability))
	}
	for i, body := range bodies {
		if i > 0 {
			time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond) // the person reads
		}
		var final map[string]any
		var err error
		if c.sse {
			final, err = c.stream(ctx, api, body)
		} else {
			final, err = c.join(ctx, api, body)
		}
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		c.finals = append(c.finals, final)
		c.ends = append(c.ends, time.Now())
	}
	return nil
}

// join creates a background run and joins it.
func (c *chaosClient) join(ctx context.Context, api, body string) (map[string]any, error) {
	var run struct {
		RunID string `json:"run_id"`
	}
	if code, err := c.callJSON(ctx, "POST", api+"/threads/"+c.thread+"/runs", body, &run); err != nil || code != 200 || run.RunID == "" {
		return nil, fmt.Errorf("creating the run: %d %v", code, err)
	}
	var final map[string]any
	if code, err := c.callJSON(ctx, "GET", api+"/threads/"+c.thread+"/runs/"+run.RunID+"/join", "", &final); err != nil || code != 200 {
		return nil, fmt.Errorf("joining run %s: %d %v", run.RunID, code, err)
	}
	return final, nil
}

// stream creates a run with an SSE stream of updates and values, reads
// it to its end, rejoining with Last-Event-ID when it drops, and returns
// the last values frame.
func (c *chaosClient) stream(ctx context.Context, api, body string) (map[string]any, error) {
	body = strings.TrimSuffix(body, "}") + `,"stream_mode":["updates","values"]}`
	resp, err := c.send(ctx, "POST", api+"/threads/"+c.thread+"/runs/stream", body, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("POST runs/stream: %d %s", resp.StatusCode, b)
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		resp.Body.Close()
		return nil, errors.New("POST runs/stream: no Location")
	}
	rid := strings.TrimSuffix(loc[strings.LastIndex(strings.TrimSuffix(loc, "/stream"), "/")+1:], "/stream")
	var last map[string]any
	lastID := ""
	for {
		rerr := c.readSSE(resp.Body, &lastID, &last)
		resp.Body.Close()
		var run struct{ Status string }
		if _, err := c.callJSON(ctx, "GET", api+"/threads/"+c.thread+"/runs/"+rid, "", &run); err != nil {
			return nil, err
		}
		if rerr == nil && run.Status != "pending" && run.Status != "running" {
			break // the stream ended with the run
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("run %s still %s when the client gave up (stream: %v)", rid, run.Status, rerr)
		}
		c.rejoins++
		hdr := map[string]string{}
		if lastID != "" {
			hdr["Last-Event-ID"] = lastID
		}
		if resp, err = c.send(ctx, "GET", api+loc, "", hdr); err != nil {
			return nil, err
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 409 { // another process's: not yet mirrored
				time.Sleep(100 * time.Millisecond)
				resp = &http.Response{Body: io.NopCloser(strings.NewReader(""))}
				continue
			}
			return nil, fmt.Errorf("GET %s: %d %s", loc, resp.StatusCode, b)
		}
	}
	if last == nil {
		return nil, fmt.Errorf("run %s: no values frame", rid)
	}
	return last, nil
}

// readSSE reads frames until the stream ends: nil at its end, the error
// of a dropped connection.
func (c *chaosClient) readSSE(r io.Reader, lastID *string, last *map[string]any) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var event, data, id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		case strings.HasPrefix(line, "id: "):
			id = line[len("id: "):]
		case line == "" && event != "":
			c.frames = append(c.frames, id+" "+event+" "+data)
			*lastID = id
			var v map[string]any
			if err := json.Unmarshal([]byte(data), &v); err != nil {
				return fmt.Errorf("frame %s %s: %v", id, event, err)
			}
			switch event {
			case "metadata":
				if a, ok := v["attempt"].(float64); ok && int(a) > c.attempts {
					c.attempts = int(a)
				}
			case "updates":
				for node := range v {
					if node != "__interrupt__" {
						c.updates[node]++
					}
				}
			case "values":
				*last = v
			case "error":
				return fmt.Errorf("error frame %s: %s", id, data)
			}
			event, data, id = "", "", ""
			if c.cutAfter > 0 && len(c.frames) == c.cutAfter {
				c.cutAfter = 0
				return errors.New("dropped by the client")
			}
		}
	}
	return sc.Err()
}

// TestWorkersChaos: one `weft serve --workers 0` and three `weft worker
// --concurrency 4` on one PostgreSQL carry out runs of chaosWF (LLM calls
// on a fake Ollama answering in 50-200 ms, some runs waiting for a
// person's note and resumed; durability sync, or async for some), sent
// by clients that join them or stream them over SSE, while workers are
// SIGKILLed at random (and started again), one is SIGSTOPped past its
// lease, and PostgreSQL restarts. Every run ends once, success, with its
// own values; every step is recorded once; an LLM call or effect is made
// again only after a killed or stalled worker's (the effect with the
// same key; with sync durability, only the step it had in flight); every
// SSE client sees each step's update once; nothing is left running.
// WEFT_CHAOS=full is the big version (300 runs, 15 kills, about three
// minutes); without it a shorter one runs (40 runs, 2 kills, about 30 s).
func TestWorkersChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes; skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("tells which process made a call from /proc (Linux only)")
	}
	size := chaosSize{runs: 40, kills: 2, load: 20 * time.Second, stall: 4 * time.Second, clientTimeout: 90 * time.Second}
	if os.Getenv("WEFT_CHAOS") == "full" {
		size = chaosSize{runs: 300, kills: 15, load: 100 * time.Second, stall: 4 * time.Second, clientTimeout: 240 * time.Second}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("%d runs, %d kills, seed %d", size.runs, size.kills, seed)
	rng := rand.New(rand.NewPCG(seed, 18))

	bin := buildWeft(t)
	cluster := pgtest.Start(t)
	db, err := cluster.CreateDB(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	lab := &chaosLab{bin: bin, dsn: db.DSN, dir: t.TempDir(), calls: map[[2]string][]chaosCall{}, effects: map[string][]chaosCall{},
		pids: map[int]int{}, conns: map[string]int{}, fake: newChaosFake()}
	t.Cleanup(lab.fake.Close)
	eff := lab.newConnServer(lab.serveEffect)
	t.Cleanup(eff.Close)
	llmSrv := lab.newConnServer(lab.serveLLM)
	t.Cleanup(llmSrv.Close)
	lab.effURL, lab.llmURL = eff.URL, llmSrv.URL
	if lab.wf, err = lab.writeWF(); err != nil {
		t.Fatal(err)
	}

	// The API carries out no run: a call it made would be unplaced
	// (incarnation -1) and not suspect.
	api, err := startProc(t, bin, "serve", []string{"OLLAMA_HOST=" + lab.llmURL, "WEFT_LLM=ollama:fake", "WEFT_LEASE_TTL=" + chaosLease.String()}, nil,
		lab.wf, "--store", db.DSN, "--workers", "0", "--durability", "sync")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		w, err := lab.startWorker(t)
		if err != nil {
			t.Fatal(err)
		}
		lab.workers = append(lab.workers, w)
	}

	// The clients: one thread each, sent over the load window; a fifth
	// stream over SSE (a third of those drop their stream once and rejoin
	// it), a third wait for a person, a fourth run with durability async.
	clients := make([]*chaosClient, size.runs)
	var wg sync.WaitGroup
	t0 := time.Now()
	gap := size.load / time.Duration(size.runs)
	for i := range clients {
		c := &chaosClient{thread: fmt.Sprintf("c%03d", i), ask: rng.IntN(3) == 0, sse: rng.IntN(5) == 0, async: rng.IntN(4) == 0, updates: map[string]int{}}
		if rng.IntN(3) == 0 {
			c.cutAfter = 2 + rng.IntN(8) // drops its stream, and rejoins it
		}
		clients[i] = c
		crng := rand.New(rand.NewPCG(seed, uint64(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(t0.Add(time.Duration(i) * gap)))
			ctx, cancel := context.WithTimeout(context.Background(), size.clientTimeout)
			defer cancel()
			c.err = c.run(ctx, api.url, crng)
		}()
	}

	// The chaos: kills, one stall and one restart of PostgreSQL, each in a
	// slot of the load window, in random order.
	acts := []string{"stop", "pg"}
	for range size.kills {
		acts = append(acts, "kill")
	}
	rng.Shuffle(len(acts), func(i, j int) { acts[i], acts[j] = acts[j], acts[i] })
	slot := size.load * 8 / 10 / time.Duration(len(acts))
	var events []chaosEvent
	chaosErr := func() error {
		for i, act := range acts {
			at := t0.Add(size.load/10 + time.Duration(i)*slot + time.Duration(rng.Int64N(int64(slot)*6/10)))
			time.Sleep(time.Until(at))
			ev := chaosEvent{kind: act}
			switch act {
			case "pg":
				ev.at = time.Now()
				// Down long enough for every process to notice (and
				// for leases of 2 s to come close to running out).
				if err := cluster.RestartAfter(1500 * time.Millisecond); err != nil {
					return err
				}
				ev.took = time.Since(ev.at)
				lab.mu.Lock()
				lab.pgDown, lab.pgUp = ev.at, ev.at.Add(ev.took)
				lab.mu.Unlock()
			case "kill", "stop":
				// A worker at random among those with runs in flight
				// (all when none has).
				running := make([]float64, len(lab.workers))
				var busy []int
				for i, w := range lab.workers {
					var st map[string]any
					if resp, err := http.Get(w.proc.url + "/status"); err == nil {
						_ = json.NewDecoder(resp.Body).Decode(&st)
						resp.Body.Close()
					}
					if running[i] = toFloat(st["running"]); running[i] > 0 {
						busy = append(busy, i)
					}
				}
				k := rng.IntN(len(lab.workers))
				if len(busy) > 0 {
					k = busy[rng.IntN(len(busy))]
				}
				victim := lab.workers[k]
				ev.inc, ev.running = victim.id, running[k]
				lab.mu.Lock()
				ev.at = time.Now()
				if act == "kill" {
					victim.killedAt = ev.at
				} else {
					victim.stoppedAt = ev.at
				}
				lab.mu.Unlock()
				if act == "kill" {
					if err := victim.proc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
						return err
					}
					w, err := lab.startWorker(t)
					if err != nil {
						return err
					}
					lab.workers[k] = w
					break
				}
				if err := victim.proc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
					return err
				}
				time.Sleep(size.stall)
				lab.mu.Lock()
				victim.contAt = time.Now()
				lab.mu.Unlock()
				if err := victim.proc.cmd.Process.Signal(syscall.SIGCONT); err != nil {
					return err
				}
				ev.took = victim.contAt.Sub(ev.at)
			}
			events = append(events, ev)
		}
		return nil
	}()
	wg.Wait()
	loadTook := time.Since(t0)
	if chaosErr != nil {
		t.Fatalf("chaos: %v", chaosErr)
	}
	for _, e := range events {
		if e.kind == "pg" {
			t.Logf("+%6.2fs PostgreSQL restarted in %v", e.at.Sub(t0).Seconds(), e.took.Round(time.Millisecond))
			continue
		}
		t.Logf("+%6.2fs %-4s worker %d (%v runs in flight) %v", e.at.Sub(t0).Seconds(), e.kind, e.inc, e.running, e.took.Round(time.Millisecond))
	}
	t.Logf("load: %v for %d threads", loadTook.Round(time.Millisecond), size.runs)

	lab.mu.Lock()
	defer lab.mu.Unlock()
	logs := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "api:\n%s\n", chaosTail(api.stderr.String(), 3000))
		for _, w := range lab.incs {
			fmt.Fprintf(&b, "worker %d:\n%s\n", w.id, chaosTail(w.proc.stderr.String(), 3000))
		}
		return b.String()
	}

	// Every run ends once, success, with its own values.
	failed := 0
	for _, c := range clients {
		if c.err != nil {
			failed++
			t.Errorf("%s (ask %t, sse %t, async %t): %v", c.thread, c.ask, c.sse, c.async, c.err)
			continue
		}
		want := chaosWant(c.thread, c.ask)
		last := c.finals[len(c.finals)-1]
		if c.ask {
			if c.finals[0]["__interrupt__"] == nil {
				t.Errorf("%s: first run's reply %v, want an __interrupt__", c.thread, c.finals[0])
			}
		}
		if msg := chaosCheckValues(last, want); msg != "" {
			t.Errorf("%s (ask %t, sse %t, async %t): %s", c.thread, c.ask, c.sse, c.async, msg)
		}
	}
	if failed > 0 {
		t.Fatalf("%d clients failed\n%s", failed, logs())
	}

	ctx := context.Background()
	st, err := postgres.Open(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	th := &engine.Threads{Store: st}
	for _, c := range clients {
		// The thread's runs: one per request, each success.
		var runs []struct{ RunID, Status string }
		if code := api.call(t, "GET", "/threads/"+c.thread+"/runs", "", &runs); code != 200 || len(runs) != len(c.finals) {
			t.Errorf("%s: %d runs listed (%d), want %d: %+v", c.thread, len(runs), code, len(c.finals), runs)
		}
		for _, r := range runs {
			if r.Status != "success" {
				t.Errorf("%s: run %s %s", c.thread, r.RunID, r.Status)
			}
		}
		// Each step recorded once.
		hist, err := th.History(ctx, c.thread, 1)
		if err != nil {
			t.Fatal(err)
		}
		// A person's node has two records: its question, its answer.
		nodes := map[string]int{}
		steps := map[[3]int][]string{}
		for _, h := range hist {
			if h.Node == "" {
				continue
			}
			if h.Answer {
				nodes[h.Node+" answer"]++
			} else {
				nodes[h.Node]++
			}
			k := [3]int{h.Run, h.Step, 0}
			if h.Answer {
				k[2] = 1 // the answer to the step's question
			}
			steps[k] = append(steps[k], fmt.Sprintf("%s (seq %d, answer %t)", h.Node, h.Seq, h.Answer))
		}
		for s, recs := range steps {
			if len(recs) > 1 {
				t.Errorf("%s: run %d's step %d recorded %d times: %v", c.thread, s[0], s[1], len(recs), recs)
			}
		}
		want := []string{"a", "b", "c", "fx", "d"}
		if c.ask {
			want = append(want, "review", "review answer")
		}
		for _, n := range want {
			if nodes[n] != 1 {
				t.Errorf("%s: node %s recorded %d times (history %v)", c.thread, n, nodes[n], nodes)
			}
		}
		if len(nodes) != len(want) {
			t.Errorf("%s: history nodes %v, want %v", c.thread, nodes, want)
		}
	}

	// LLM calls: each (thread, node) called once by a worker that was not
	// killed or stalled; calls of those may come again (with sync
	// durability, only the one step each had in flight on the thread).
	takenOver := map[string]bool{}
	for _, c := range clients {
		want := []string{"a", "b", "c", "d"}
		for _, n := range want {
			calls := lab.calls[[2]string{c.thread, n}]
			sound := 0
			for _, call := range calls {
				if !lab.suspect(call) {
					sound++
				}
			}
			if len(calls) == 0 || sound > 1 {
				t.Errorf("%s: node %s called %d times (%d by workers neither killed nor stalled): %v", c.thread, n, len(calls), sound, calls)
			}
			if len(calls) > 1 {
				takenOver[c.thread] = true
			}
		}
		// A suspect incarnation's calls repeated: with sync durability,
		// one node each at most (its step in flight).
		if c.async {
			continue
		}
		again := map[int]int{}
		for _, n := range want {
			calls := lab.calls[[2]string{c.thread, n}]
			for _, call := range calls[:max(len(calls)-1, 0)] {
				again[call.inc]++
			}
		}
		for inc, n := range again {
			if n > 1 {
				t.Errorf("%s: worker %d's calls of %d nodes made again; want only its step in flight", c.thread, inc, n)
			}
		}
	}
	if len(lab.stray) > 0 {
		t.Errorf("calls the fakes could not place: %v", lab.stray)
	}
	// Effects: one key per thread; a key sent again only after a killed
	// or stalled worker's request.
	keysOf := map[string][]string{}
	for key, calls := range lab.effects {
		thread, _, _ := strings.Cut(key, "/")
		keysOf[thread] = append(keysOf[thread], key)
		for _, call := range calls[:len(calls)-1] {
			if !lab.suspect(call) {
				t.Errorf("effect %s sent %d times (%v), again after worker %d's, neither killed nor stalled", key, len(calls), calls, call.inc)
			}
		}
		if len(calls) > 1 {
			takenOver[thread] = true
		}
	}
	for _, c := range clients {
		if len(keysOf[c.thread]) != 1 {
			t.Errorf("%s: effect keys %v, want one", c.thread, keysOf[c.thread])
		}
	}

	// SSE: each step's update once.
	sseN, rejoins, attempts2 := 0, 0, 0
	for _, c := range clients {
		if !c.sse {
			continue
		}
		sseN++
		rejoins += c.rejoins
		if c.attempts > 1 {
			attempts2++
		}
		want := []string{"a", "b", "c", "fx", "d"}
		if c.ask {
			want = append(want, "review")
		}
		// Each node's update once (the END node's too, when sent).
		var missing, twice []string
		for _, n := range want {
			if c.updates[n] == 0 {
				missing = append(missing, n)
			}
		}
		for n, k := range c.updates {
			if k > 1 {
				twice = append(twice, fmt.Sprintf("%s %d times", n, k))
			}
		}
		if len(missing) > 0 || len(twice) > 0 {
			// A step ended just before its worker was killed may have
			// its record without its frames (logged apart, 10 ms
			// later): said so, to tell that gap from others.
			gap := ""
			if len(twice) == 0 && c.attempts > 1 && chaosCheckValues(c.finals[len(c.finals)-1], chaosWant(c.thread, c.ask)) == "" {
				gap = " (at a takeover, the values right: the frames of a step recorded just before its worker's kill were not logged)"
			}
			t.Errorf("%s (SSE, %d attempts): updates frames missing for %v, sent more than once: %v%s", c.thread, c.attempts, missing, twice, gap)
			t.Logf("%s frames (LLM calls %v):\n%s", c.thread, chaosCallsOf(lab, c.thread), strings.Join(c.frames, "\n"))
		}
	}

	// Nothing left running.
	for _, w := range lab.workers {
		var status map[string]any
		deadline := time.Now().Add(10 * time.Second)
		for {
			status = nil
			code := w.proc.call(t, "GET", "/status", "", &status)
			if code == 200 && status["running"] == float64(0) && status["queued"] == float64(0) || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if status["running"] != float64(0) || status["queued"] != float64(0) {
			t.Errorf("worker %d's status at the end: %v", w.id, status)
		}
		select {
		case err := <-w.proc.done:
			w.proc.done <- err
			t.Errorf("worker %d exited on its own: %v", w.id, err)
		default:
		}
	}
	conn, err := pgx.Connect(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var open int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM weft_jobs WHERE status IN ('pending', 'running')`).Scan(&open); err != nil || open != 0 {
		t.Errorf("weft jobs pending or running at the end: %d %v", open, err)
	}
	// River: no weft run left to start; one left running only as the
	// orphan of a dead worker, cancelled (River's rescuer, every 30 s on
	// its leader, finalizes it).
	riverLeft := func() (left, orphans int, err error) {
		err = conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state <> 'running' OR metadata->>'cancel_attempted_at' IS NULL),
			count(*) FILTER (WHERE state = 'running' AND metadata->>'cancel_attempted_at' IS NOT NULL)
			FROM river_job WHERE kind = 'weft_run' AND state IN ('available', 'pending', 'scheduled', 'retryable', 'running')`).Scan(&left, &orphans)
		return
	}
	// A live worker records its River job's completion a moment after
	// the run's end.
	left, orphans, err := riverLeft()
	for deadline := time.Now().Add(5 * time.Second); err == nil && left > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		left, orphans, err = riverLeft()
	}
	if os.Getenv("WEFT_CHAOS") == "full" {
		for deadline := time.Now().Add(75 * time.Second); err == nil && orphans > 0 && time.Now().Before(deadline); {
			time.Sleep(time.Second)
			left, orphans, err = riverLeft()
		}
		if orphans > 0 {
			t.Errorf("%d orphan River jobs still running 75 s after the load", orphans)
		}
	}
	if err != nil || left != 0 {
		// Say whose they are: River's client ids are in the workers' logs.
		clientOf := map[string]string{}
		for _, w := range lab.incs {
			for _, line := range strings.Split(w.proc.stderr.String(), "\n") {
				if _, id, ok := strings.Cut(line, "client_id="); ok && strings.Contains(line, "River client started") {
					state := "alive"
					if !w.killedAt.IsZero() {
						state = "SIGKILLed at " + w.killedAt.Format("15:04:05.000")
					}
					clientOf[strings.Fields(id)[0]] = fmt.Sprintf("%s, worker %d (%s)", strings.Fields(id)[0], w.id, state)
				}
			}
		}
		rows, qerr := conn.Query(ctx, `SELECT r.id, r.state, r.args->>'thread_id', r.args->>'job_id', r.metadata::text, coalesce(r.attempted_by[array_length(r.attempted_by, 1)], ''),
			coalesce(j.status, '?'), coalesce(to_char(j.updated, 'HH24:MI:SS.MS'), '')
			FROM river_job r LEFT JOIN weft_jobs j ON j.id = r.args->>'job_id'
			WHERE r.kind = 'weft_run' AND r.state IN ('available', 'pending', 'scheduled', 'retryable', 'running')
			AND (r.state <> 'running' OR r.metadata->>'cancel_attempted_at' IS NULL)`)
		var list []string
		for qerr == nil && rows.Next() {
			var id int64
			var state, thread, job, meta, by, status, updated string
			if qerr = rows.Scan(&id, &state, &thread, &job, &meta, &by, &status, &updated); qerr == nil {
				if who, ok := clientOf[by]; ok {
					by = who
				}
				list = append(list, fmt.Sprintf("River job %d %s (metadata %s) by %s, for run %s of thread %s, which is %s since %s",
					id, state, meta, by, job, thread, status, updated))
			}
		}
		if rows != nil {
			rows.Close()
		}
		t.Errorf("River jobs of weft runs left to run: %d %v %v\n%s", left, err, qerr, strings.Join(list, "\n"))
	}
	var moved int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT args->>'job_id' FROM river_job WHERE kind = 'weft_run' GROUP BY 1 HAVING count(*) > 1) m`).Scan(&moved); err != nil {
		t.Error(err)
	}

	// Rescue times: from a kill or stall to the next call, on another
	// worker, of a thread whose last call before it was the victim's.
	var rescues []string
	for _, e := range events {
		if e.kind == "pg" {
			continue
		}
		var ds []time.Duration
		for _, c := range clients {
			var lastBefore *chaosCall
			var firstAfter *chaosCall
			for _, n := range []string{"a", "b", "c", "d"} {
				for _, call := range lab.calls[[2]string{c.thread, n}] {
					if call.at.Before(e.at) && (lastBefore == nil || call.at.After(lastBefore.at)) {
						lastBefore = &call
					}
					if call.at.After(e.at) && call.inc != e.inc && (firstAfter == nil || call.at.Before(firstAfter.at)) {
						firstAfter = &call
					}
				}
			}
			ended := slices.ContainsFunc(c.ends, func(end time.Time) bool { return end.Before(e.at) && lastBefore != nil && end.After(lastBefore.at) })
			if lastBefore != nil && lastBefore.inc == e.inc && firstAfter != nil && !ended {
				ds = append(ds, firstAfter.at.Sub(e.at))
			}
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		var parts []string
		for _, d := range ds {
			parts = append(parts, d.Round(10*time.Millisecond).String())
		}
		rescues = append(rescues, fmt.Sprintf("%s of worker %d: %d runs on again after %s", e.kind, e.inc, len(ds), strings.Join(parts, " ")))
	}
	t.Logf("runs taken over (River jobs queued again): %d; threads whose LLM call or effect was made again: %d", moved, len(takenOver))
	for thread := range takenOver {
		i, _ := strconv.Atoi(strings.TrimPrefix(thread, "c"))
		c := clients[i]
		t.Logf("%s (ask %t, sse %t, async %t, attempts seen %d): %s", thread, c.ask, c.sse, c.async, c.attempts, chaosCallsOf(lab, thread))
	}
	for _, r := range rescues {
		t.Log(r)
	}
	retries := 0
	for _, c := range clients {
		retries += c.retries
	}
	t.Logf("SSE clients: %d (%d rejoined %d times in all, %d saw a second attempt); client requests sent again: %d", sseN, countIf(clients, func(c *chaosClient) bool { return c.rejoins > 0 }), rejoins, attempts2, retries)
	if t.Failed() {
		t.Logf("logs:\n%s", logs())
	}
}

// chaosCheckValues compares a run's final values with want; "" if right.
func chaosCheckValues(v map[string]any, want map[string]string) string {
	var bad []string
	for _, n := range []string{"a", "b", "c", "d"} {
		m, _ := v[n].(map[string]any)
		if m == nil || m["text"] != want[n] {
			bad = append(bad, fmt.Sprintf("%s.text = %v, want %s", n, v[n], want[n]))
		}
	}
	if m, _ := v["fx"].(map[string]any); m == nil || m["v"] != want["fx"] {
		bad = append(bad, fmt.Sprintf("fx.v = %v, want %s", v["fx"], want["fx"]))
	}
	if v["note"] != want["note"] {
		bad = append(bad, fmt.Sprintf("note = %v, want %s", v["note"], want["note"]))
	}
	if len(bad) == 0 {
		return ""
	}
	return strings.Join(bad, "; ") + fmt.Sprintf(" (values %v)", v)
}

// chaosCallsOf lists a thread's LLM calls, for a report.
func chaosCallsOf(l *chaosLab, thread string) string {
	var b strings.Builder
	for _, n := range []string{"a", "b", "c", "d"} {
		for _, c := range l.calls[[2]string{thread, n}] {
			fmt.Fprintf(&b, "%s by worker %d at %s; ", n, c.inc, c.at.Format("15:04:05.000"))
		}
	}
	return b.String()
}

// chaosTail returns the end of s, at most n bytes.
func chaosTail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func toFloat(v any) float64 {
	f, _ := v.(float64)
	return f
}

func countIf[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}
