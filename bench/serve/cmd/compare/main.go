// Command compare runs one SDK-driven workload against weft's LangGraph
// Server API (weft serve, durable on SQLite) and against the reference
// LangGraph server (@langchain/langgraph-api, started with
// @langchain/langgraph-cli dev, in memory) serving the same Approval
// graph, and prints one table side by side: conversations per second,
// p50/p99 conversation latency, p50/p99 time to the first streamed event,
// server CPU per conversation, and the server process's peak RSS and peak
// private (anonymous) memory.
//
// Every measurement starts its server fresh on a free loopback port (with
// an empty store), waits for GET /ok, lets it settle, runs the warm-up and
// the timed conversations of bench/serve/js/load.mjs (which samples the
// server's memory), reads the server's peak RSS and stops it with
// SIGTERM. The rounds interleave the servers and the loads, so a machine
// whose load drifts affects both alike; each cell is the median of the
// rounds (with min–max).
//
// Usage, from the repository's root:
//
//	go run ./bench/serve/cmd/compare                  # 3 rounds of 1:100,10:1000,100:3000,s10:1000
//	go run ./bench/serve/cmd/compare -short           # a quick check that everything runs
//	go run ./bench/serve/cmd/compare -rounds 1 -load 1:20,10:100,s10:100
//
// It builds weft (./cmd/weft) itself, and installs the pinned
// LangGraph.js packages with npm ci in bench/serve/js when node_modules is
// missing. See bench/serve/README.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on Linux.
const clockTicks = 100

// weftPkg is the package built as weft.
const weftPkg = "./cmd/weft"

// load is one workload: C clients share N conversations.
type load struct {
	C      int
	N      int
	Stream bool
}

// String is the load's name in the table: "10" or "10 stream".
func (l load) String() string {
	if l.Stream {
		return fmt.Sprintf("%d stream", l.C)
	}
	return strconv.Itoa(l.C)
}

// parseLoads reads "1:100,10:1000,s10:1000" (C:N; an s streams).
func parseLoads(s string) ([]load, error) {
	var ls []load
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		var l load
		if rest, ok := strings.CutPrefix(f, "s"); ok {
			l.Stream, f = true, rest
		}
		c, n, ok := strings.Cut(f, ":")
		var err1, err2 error
		l.C, err1 = strconv.Atoi(c)
		l.N, err2 = strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || l.C < 1 || l.N < 1 {
			return nil, fmt.Errorf("-load: %q is not C:N or sC:N with C, N >= 1", f)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// sample is what load.mjs prints, plus what the driver measured.
type sample struct {
	Server     string   `json:"server"`
	Load       string   `json:"load"`
	Round      int      `json:"round"`
	C          int      `json:"c"`
	N          int      `json:"n"`
	OK         int      `json:"ok"`
	Errors     int      `json:"errors"`
	FirstError *string  `json:"first_error"`
	WallS      float64  `json:"wall_s"`
	ConvPerS   float64  `json:"conv_per_s"`
	FirstHalf  *float64 `json:"conv_per_s_first_half"`
	SecondHalf *float64 `json:"conv_per_s_second_half"`
	ConvP50    *float64 `json:"conv_p50_ms"`
	ConvP99    *float64 `json:"conv_p99_ms"`
	FirstP50   *float64 `json:"first_run_p50_ms"`
	FirstP99   *float64 `json:"first_run_p99_ms"`
	TTFEP50    *float64 `json:"ttfe_p50_ms"`
	TTFEP99    *float64 `json:"ttfe_p99_ms"`
	CPUTicks   int64    `json:"server_cpu_ticks"`
	RSSPeakKiB int64    `json:"server_rss_peak_kib"`
	// AnonPeakKiB is the largest RssAnon of load.mjs's samples: the
	// server's peak private memory.
	AnonPeakKiB int64   `json:"server_rss_anon_peak_kib"`
	ClientCPUS  float64 `json:"client_cpu_s"`
	// Set by the driver:
	CPUMsPerConv float64 `json:"server_cpu_ms_per_conv"`
	HWMKiB       int64   `json:"server_vmhwm_kib"`
	TreeRSSKiB   int64   `json:"tree_rss_kib"`
	// The server's resident set after the load, by kind (RssAnon,
	// RssFile, RssShmem of /proc/PID/status).
	AnonEndKiB  int64   `json:"server_rss_anon_end_kib"`
	FileEndKiB  int64   `json:"server_rss_file_end_kib"`
	ShmemEndKiB int64   `json:"server_rss_shmem_end_kib"`
	ReadyS      float64 `json:"ready_s"`
	Failed      string  `json:"failed,omitempty"`
}

type config struct {
	root    string
	js      string
	work    string
	rounds  int
	loads   []load
	warmup  int
	settle  time.Duration
	servers []string
	weftBin string
	install bool
	out     string
}

func main() {
	var cfg config
	var loads, servers, keep string
	short := flag.Bool("short", false, "a quick check: 1 round of 1:5,10:20,s10:20, warm-up 2 (overrides -rounds, -load, -warmup)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds; each runs every load on every server")
	flag.StringVar(&loads, "load", "1:100,10:1000,100:3000,s10:1000", "loads, C:N (C clients, N conversations), sC:N streams the first run")
	flag.IntVar(&cfg.warmup, "warmup", 10, "checked, untimed conversations before each timed load")
	flag.DurationVar(&cfg.settle, "settle", 2*time.Second, "pause between the server's first GET /ok and the load")
	flag.StringVar(&servers, "servers", "weft,langgraphjs", "servers to measure")
	flag.StringVar(&cfg.weftBin, "weft", "", "a weft binary to measure; empty: go build ./cmd/weft")
	flag.BoolVar(&cfg.install, "install", true, "npm ci in bench/serve/js when its node_modules is missing")
	flag.StringVar(&keep, "keep", "", "keep the servers' logs and stores in this directory (default: a temporary one, removed)")
	flag.StringVar(&cfg.out, "json", "", "write every sample as JSON to this file")
	flag.Parse()
	if *short {
		cfg.rounds, loads, cfg.warmup, cfg.settle = 1, "1:5,10:20,s10:20", 2, 500*time.Millisecond
	}
	var err error
	if cfg.loads, err = parseLoads(loads); err != nil {
		fail(err)
	}
	cfg.servers = strings.Split(servers, ",")
	for _, s := range cfg.servers {
		if s != "weft" && s != "langgraphjs" {
			fail(fmt.Errorf("-servers: unknown server %q (weft, langgraphjs)", s))
		}
	}
	if cfg.rounds < 1 {
		fail(errors.New("-rounds must be at least 1"))
	}
	if cfg.root, err = repoRoot(); err != nil {
		fail(err)
	}
	cfg.js = filepath.Join(cfg.root, "bench", "serve", "js")
	if keep != "" {
		cfg.work, err = filepath.Abs(keep)
		if err == nil {
			err = os.MkdirAll(cfg.work, 0o755)
		}
	} else {
		cfg.work, err = os.MkdirTemp("", "weft-bench-serve-")
		defer os.RemoveAll(cfg.work)
	}
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	samples, err := run(ctx, &cfg)
	if cfg.out != "" && len(samples) > 0 {
		b, _ := json.MarshalIndent(samples, "", "  ")
		if werr := os.WriteFile(cfg.out, b, 0o644); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if len(samples) > 0 {
		printTable(os.Stdout, &cfg, samples)
	}
	if err != nil {
		fail(err)
	}
	for _, s := range samples {
		if s.Errors > 0 || s.Failed != "" {
			fail(errors.New("some conversations failed: see the errors column"))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compare:", err)
	os.Exit(1)
}

// repoRoot is the directory of weft's go.mod, at or above the working
// directory.
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/weftlang/weft\n")) {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("run from inside weft's repository (no go.mod of github.com/weftlang/weft above the working directory)")
		}
		d = up
	}
}

// run prepares both servers and measures every round, load and server.
func run(ctx context.Context, cfg *config) ([]sample, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return nil, errors.New("node (20 or later) is needed to run the SDK load script")
	}
	if err := prepareJS(ctx, cfg); err != nil {
		return nil, err
	}
	if slices.Contains(cfg.servers, "weft") && cfg.weftBin == "" {
		cfg.weftBin = filepath.Join(cfg.work, "weft")
		fmt.Fprintln(os.Stderr, "building weft:", cfg.weftBin)
		if err := command(ctx, cfg.root, "go", "build", "-o", cfg.weftBin, weftPkg); err != nil {
			return nil, fmt.Errorf("go build %s: %w", weftPkg, err)
		}
	}
	var out []sample
	var errs []error
	for r := 1; r <= cfg.rounds; r++ {
		for _, l := range cfg.loads {
			order := slices.Clone(cfg.servers)
			if r%2 == 0 { // alternate who goes first
				slices.Reverse(order)
			}
			for _, srv := range order {
				s, err := measure(ctx, cfg, srv, l, r)
				s.Server, s.Load, s.Round = srv, l.String(), r
				if err != nil {
					s.Failed = err.Error()
					errs = append(errs, fmt.Errorf("%s, load %s, round %d: %w", srv, l, r, err))
				}
				fmt.Fprintf(os.Stderr, "round %d load %-9s %-11s %s\n", r, l, srv, brief(s))
				out = append(out, s)
			}
		}
	}
	return out, errors.Join(errs...)
}

// brief is one progress line.
func brief(s sample) string {
	if s.Failed != "" {
		return "FAILED: " + s.Failed
	}
	return fmt.Sprintf("%.1f conv/s (halves %s/%s), p50 %s ms, cpu %.2f ms/conv, peak %.0f MiB (private %.1f), errors %d, ready %.1fs",
		s.ConvPerS, f0(s.FirstHalf), f0(s.SecondHalf), f0(s.ConvP50), s.CPUMsPerConv, float64(s.HWMKiB)/1024, float64(s.AnonPeakKiB)/1024, s.Errors, s.ReadyS)
}

func f0(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", *p)
}

// prepareJS checks (or installs) the pinned packages of bench/serve/js.
func prepareJS(ctx context.Context, cfg *config) error {
	if _, err := os.Stat(filepath.Join(cfg.js, "node_modules", "@langchain", "langgraph-sdk")); err == nil {
		return nil
	}
	if !cfg.install {
		return fmt.Errorf("%s/node_modules is missing: run npm ci there, or drop -install=false", cfg.js)
	}
	fmt.Fprintln(os.Stderr, "npm ci in", cfg.js)
	return command(ctx, cfg.js, "npm", "ci", "--no-audit", "--no-fund")
}

// command runs name in dir, its output on stderr.
func command(ctx context.Context, dir, name string, args ...string) error {
	c := exec.CommandContext(ctx, name, args...)
	c.Dir, c.Stdout, c.Stderr = dir, os.Stderr, os.Stderr
	return c.Run()
}

// measure starts srv fresh, runs l on it and stops it.
func measure(ctx context.Context, cfg *config, srv string, l load, round int) (sample, error) {
	var s sample
	port, err := freePort()
	if err != nil {
		return s, err
	}
	label := fmt.Sprintf("%s-r%d-c%d-n%d", srv, round, l.C, l.N)
	if l.Stream {
		label += "-stream"
	}
	logf, err := os.Create(filepath.Join(cfg.work, label+".log"))
	if err != nil {
		return s, err
	}
	defer logf.Close()
	var c *exec.Cmd
	switch srv {
	case "weft":
		db := filepath.Join(cfg.work, label+".db")
		for _, p := range []string{db, db + "-wal", db + "-shm"} {
			_ = os.Remove(p)
		}
		c = exec.Command(cfg.weftBin, "serve", filepath.Join(cfg.root, "bench", "serve", "approval.wf"),
			"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--store", db)
	case "langgraphjs":
		if err := os.RemoveAll(filepath.Join(cfg.js, ".langgraph_api")); err != nil {
			return s, err
		}
		c = exec.Command(filepath.Join(cfg.js, "node_modules", ".bin", "langgraphjs"), "dev",
			"--no-browser", "--no-reload", "-p", strconv.Itoa(port), "-h", "127.0.0.1")
		c.Dir = cfg.js
		c.Env = append(os.Environ(), "LANGGRAPH_CLI_NO_ANALYTICS=1", "LANGSMITH_TRACING=false", "LANGCHAIN_TRACING_V2=false")
	}
	c.Stdout, c.Stderr = logf, logf
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	t0 := time.Now()
	if err := c.Start(); err != nil {
		return s, err
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	root := c.Process.Pid
	defer func() {
		if err := stop(root, exited); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stop: %v\n", label, err)
		}
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitOK(url, exited, 120*time.Second); err != nil {
		return s, fmt.Errorf("%w (log: %s)", err, logf.Name())
	}
	s.ReadyS = time.Since(t0).Seconds()
	pid, err := listener(root, port)
	if err != nil {
		return s, err
	}
	time.Sleep(cfg.settle)
	mode := "wait"
	if l.Stream {
		mode = "stream"
	}
	lc := exec.CommandContext(ctx, "node", "load.mjs", "--url", url, "--pid", strconv.Itoa(pid),
		"--c", strconv.Itoa(l.C), "--n", strconv.Itoa(l.N), "--mode", mode, "--warmup", strconv.Itoa(cfg.warmup))
	lc.Dir = cfg.js
	var stdout, stderr bytes.Buffer
	lc.Stdout, lc.Stderr = &stdout, &stderr
	lerr := lc.Run()
	s.HWMKiB = procKiB(pid, "VmHWM")
	s.AnonEndKiB, s.FileEndKiB, s.ShmemEndKiB = procKiB(pid, "RssAnon"), procKiB(pid, "RssFile"), procKiB(pid, "RssShmem")
	for _, p := range tree(root) {
		s.TreeRSSKiB += procKiB(p, "VmRSS")
	}
	line := lastLine(stdout.Bytes())
	if err := json.Unmarshal(line, &s); err != nil {
		return s, fmt.Errorf("load.mjs: %v; no result (%v): %s", lerr, err, tail(stderr.Bytes()))
	}
	s.CPUMsPerConv = float64(s.CPUTicks) * 1000 / clockTicks / float64(s.N)
	return s, nil
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitOK polls GET url/ok until it answers 200.
func waitOK(url string, exited <-chan error, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	cl := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("the server exited before answering GET /ok: %v", err)
		default:
		}
		resp, err := cl.Get(url + "/ok")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no 200 from GET %s/ok in %s", url, limit)
}

// tree is root and its descendants, from /proc.
func tree(root int) []int {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := ppid(pid); ok {
			kids[pp] = append(kids[pp], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, kids[out[i]]...)
	}
	return out
}

// ppid is pid's parent.
func ppid(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	p, err := strconv.Atoi(f[1])
	return p, err == nil
}

// listener is the process of root's tree that holds the socket listening
// on port: the server proper (for the reference server, the node process
// that tsx started, not the CLI above it).
func listener(root, port int) (int, error) {
	inode := ""
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, ln := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(ln)
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, p, _ := strings.Cut(fs[1], ":")
			if n, err := strconv.ParseInt(p, 16, 32); err == nil && int(n) == port {
				inode = fs[9]
			}
		}
	}
	if inode == "" {
		return 0, fmt.Errorf("no socket listens on port %d", port)
	}
	want := "socket:[" + inode + "]"
	for _, pid := range tree(root) {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && l == want {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no process under %d holds the socket listening on port %d", root, port)
}

// procKiB reads a "Name: N kB" line of /proc/PID/status.
func procKiB(pid int, name string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// stop sends SIGTERM to root and waits for it and its descendants to
// end; after 10 s it sends SIGTERM to each one left, and after 10 more
// SIGKILL; each by its pid.
func stop(root int, exited <-chan error) error {
	pids := tree(root)
	_ = syscall.Kill(root, syscall.SIGTERM)
	alive := func() []int {
		var a []int
		for _, p := range pids {
			if p == root {
				continue
			}
			if syscall.Kill(p, 0) == nil {
				if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p)); err == nil && !bytes.Contains(b, []byte(") Z ")) {
					a = append(a, p)
				}
			}
		}
		return a
	}
	var rootErr error
	rootDone := false
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if !rootDone {
				select {
				case rootErr = <-exited:
					rootDone = true
				default:
				}
			}
			if rootDone && len(alive()) == 0 {
				if rootErr != nil && !isSignal(rootErr) {
					return fmt.Errorf("the server exited with %v", rootErr)
				}
				return nil
			}
			time.Sleep(100 * time.Millisecond)
		}
		left := alive()
		if !rootDone {
			left = append(left, root)
		}
		fmt.Fprintf(os.Stderr, "processes %v still running; sending %v\n", left, sig)
		for _, p := range left {
			_ = syscall.Kill(p, sig)
		}
	}
	return errors.New("processes did not stop")
}

// isSignal reports whether err is an end by SIGTERM: killed by it, or
// exited with 143 (128+15), as the reference server's CLI does.
func isSignal(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			return ws.Signaled() && ws.Signal() == syscall.SIGTERM || ws.Exited() && ws.ExitStatus() == 128+int(syscall.SIGTERM)
		}
	}
	return false
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
