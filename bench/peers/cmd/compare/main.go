// Command compare runs the benchmark shapes of ../shared/reference/peers.md
// on weft and on each peer engine back to back, on the same machine in one
// run, and prints a table of CPU time per invocation and per node-step,
// allocations, peak memory and the ratio peer/weft, with the issue's
// targets checked against the median ratios.
//
// Each measurement runs in a child process of its own (the command runs
// itself with -child), so peak memory (the child's maximum resident set)
// belongs to one engine and one shape, and no engine's garbage is
// collected on another's time. The rounds interleave the engines shape by
// shape, so a machine whose load drifts during the run affects every
// engine alike; the ratios are the medians of the per-round ratios.
//
// Usage, from bench/peers:
//
//	go run ./cmd/compare                 # every engine and shape, 5 rounds
//	go run ./cmd/compare -short          # a quick check that everything runs (CI)
//	go run ./cmd/compare -write ../../docs/PERFORMANCE.md
//
// LangGraph.js runs when js/node_modules exists (npm ci in js/); otherwise
// it is skipped with a message.
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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftlang/weft/bench/peers/einobench"
	"github.com/weftlang/weft/bench/peers/harness"
	"github.com/weftlang/weft/bench/peers/lggbench"
	"github.com/weftlang/weft/bench/peers/weftbench"
)

// goEngines lists the engines that run in Go, in table order.
func goEngines() []harness.Engine {
	return []harness.Engine{weftbench.WF(), weftbench.Go(), weftbench.WFSync(), lggbench.Engine(), einobench.Engine()}
}

// jsEngine is the name of the LangGraph.js engine, run by node.
const jsEngine = "langgraphjs"

// result is one measurement: the JSON line a child prints.
type result struct {
	Engine      string  `json:"engine"`
	Version     string  `json:"version"`
	Shape       string  `json:"shape"`
	N           int     `json:"n"`
	NsPerOp     float64 `json:"ns_per_op"`
	CPUNsPerOp  float64 `json:"cpu_ns_per_op"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
	MaxRSS      int64   `json:"max_rss"`
	Unsupported bool    `json:"unsupported,omitempty"`
}

type config struct {
	rounds    int
	benchtime string
	engines   []string
	shapes    []harness.Shape
	jsDir     string
	write     string
	short     bool
	s4n       int
}

// benchtime returns the measurement length for shape s. The S4 shapes run
// a fixed number of invocations on a fresh store for every engine:
// langgraphgo lists every checkpoint stored so far at each save, so its
// cost per invocation grows with the invocations before it, and a
// measurement by time would give it a count of its own.
func (c config) benchtimeFor(s harness.Shape) string {
	if !c.short && (s == harness.S4Memory || s == harness.S4SQLite) {
		return fmt.Sprintf("%dx", c.s4n)
	}
	return c.benchtime
}

func main() {
	var (
		cfg     config
		engines string
		shapes  string
		child   = flag.Bool("child", false, "internal: run one measurement and print it as JSON")
		engine  = flag.String("engine", "", "internal: the engine of a -child run")
		shape   = flag.String("shape", "", "internal: the shape of a -child run")
	)
	flag.IntVar(&cfg.rounds, "rounds", 5, "rounds; each measures every engine on every shape once")
	flag.StringVar(&cfg.benchtime, "benchtime", "500ms", "time per measurement (or Nx for N invocations), as go test's -benchtime")
	flag.StringVar(&engines, "engines", "", "comma-separated engines to run (default: all)")
	flag.StringVar(&shapes, "shapes", "", "comma-separated shapes to run (default: S1,S2,S3,S4mem,S4sqlite)")
	flag.StringVar(&cfg.jsDir, "js", "js", "the LangGraph.js folder (with node_modules from npm ci)")
	flag.StringVar(&cfg.write, "write", "", "also write the table into this Markdown file, between its compare markers")
	flag.BoolVar(&cfg.short, "short", false, "one round of a few invocations each: checks that everything runs, not for timing")
	flag.IntVar(&cfg.s4n, "s4n", 100, "invocations per S4 measurement, for every engine (see s4Benchtime)")
	flag.Parse()

	if *child {
		if err := runChild(*engine, harness.Shape(*shape), cfg.benchtime); err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
		return
	}
	if shapes != "" {
		for _, s := range strings.Split(shapes, ",") {
			cfg.shapes = append(cfg.shapes, harness.Shape(s))
		}
	} else {
		cfg.shapes = harness.Shapes()
	}
	if engines != "" {
		cfg.engines = strings.Split(engines, ",")
	}
	if cfg.short {
		cfg.rounds, cfg.benchtime = 1, "3x"
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// runChild measures one engine on one shape with testing.Benchmark and
// prints the result as a JSON line.
func runChild(name string, s harness.Shape, benchtime string) error {
	var e *harness.Engine
	for _, c := range goEngines() {
		if c.Name == name {
			e = &c
		}
	}
	if e == nil {
		return fmt.Errorf("unknown engine %q", name)
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "weft-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out := json.NewEncoder(os.Stdout)
	invoke, closeFn, err := e.Prepare(ctx, s, dir)
	if errors.Is(err, harness.ErrUnsupported) {
		return out.Encode(result{Engine: e.Name, Version: e.Version, Shape: string(s), Unsupported: true})
	}
	if err != nil {
		return fmt.Errorf("%s %s: prepare: %w", name, s, err)
	}
	defer closeFn()
	// Warm up outside the measurement, as a long-running service would be.
	for i := range 3 {
		if err := invoke(ctx, -1-i); err != nil {
			return fmt.Errorf("%s %s: warm-up: %w", name, s, err)
		}
	}

	testing.Init()
	if err := flag.Set("test.benchtime", benchtime); err != nil {
		return err
	}
	var (
		runErr error
		cpuOp  float64
		next   int
	)
	br := testing.Benchmark(func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			if err := invoke(ctx, next); err != nil {
				runErr = err
				b.FailNow()
			}
			next++
		}
		cpuOp = float64(cpuTime()-cpu) / float64(b.N)
	})
	if runErr != nil {
		return fmt.Errorf("%s %s: invocation %d: %w", name, s, next, runErr)
	}
	if br.N == 0 {
		return fmt.Errorf("%s %s: the benchmark did not run", name, s)
	}
	return out.Encode(result{
		Engine: e.Name, Version: e.Version, Shape: string(s), N: br.N,
		NsPerOp:     float64(br.T.Nanoseconds()) / float64(br.N),
		CPUNsPerOp:  cpuOp,
		AllocsPerOp: float64(br.MemAllocs) / float64(br.N),
		BytesPerOp:  float64(br.MemBytes) / float64(br.N),
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run measures every engine on every shape for cfg.rounds rounds and
// prints the table to w.
func run(ctx context.Context, cfg config, w io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var engines []string
	for _, e := range goEngines() {
		engines = append(engines, e.Name)
	}
	engines = append(engines, jsEngine)
	if cfg.engines != nil {
		for _, e := range cfg.engines {
			if !slices.Contains(engines, e) {
				return fmt.Errorf("unknown engine %q (have %s)", e, strings.Join(engines, ", "))
			}
		}
		engines = cfg.engines
	}
	if slices.Contains(engines, jsEngine) {
		if _, err := os.Stat(filepath.Join(cfg.jsDir, "node_modules")); err != nil {
			fmt.Fprintf(os.Stderr, "compare: skipping %s: %s has no node_modules (run npm ci there)\n", jsEngine, cfg.jsDir)
			engines = slices.DeleteFunc(engines, func(e string) bool { return e == jsEngine })
		}
	}
	all := map[key][]result{}
	jsN := map[harness.Shape]int{}
	for r := range cfg.rounds {
		for _, s := range cfg.shapes {
			for _, e := range engines {
				var (
					res result
					err error
				)
				if e == jsEngine {
					res, err = runJS(ctx, cfg, s, jsN)
				} else {
					res, err = runGoChild(ctx, self, e, s, cfg.benchtimeFor(s))
				}
				if err != nil {
					return err
				}
				if !res.Unsupported {
					fmt.Fprintf(os.Stderr, "round %d/%d  %-9s %-12s %12.0f cpu-ns/op  n=%d\n", r+1, cfg.rounds, s, e, res.CPUNsPerOp, res.N)
				}
				all[key{e, s}] = append(all[key{e, s}], res)
			}
		}
	}
	t := table{cfg: cfg, engines: engines, results: all}
	text := t.String()
	fmt.Fprint(w, text)
	if cfg.write != "" {
		return writeInto(cfg.write, text)
	}
	return nil
}

// key names one engine on one shape.
type key struct {
	engine string
	shape  harness.Shape
}

// runGoChild runs one Go measurement in a child process and adds its peak
// resident set.
func runGoChild(ctx context.Context, self, engine string, s harness.Shape, benchtime string) (result, error) {
	cmd := exec.CommandContext(ctx, self, "-child", "-engine", engine, "-shape", string(s), "-benchtime", benchtime)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w\n%s", engine, s, err, stderr.Bytes())
	}
	res, err := parse(out)
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w", engine, s, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return res, nil
}

// runJS runs one LangGraph.js measurement with node. The number of
// invocations is calibrated once per shape to fill the benchtime.
func runJS(ctx context.Context, cfg config, s harness.Shape, jsN map[harness.Shape]int) (result, error) {
	n, ok := jsN[s]
	if !ok {
		var fixed int
		bt := cfg.benchtimeFor(s)
		if _, err := fmt.Sscanf(bt, "%dx", &fixed); err == nil && strings.HasSuffix(bt, "x") {
			n = fixed
		} else {
			d, err := time.ParseDuration(bt)
			if err != nil {
				return result{}, fmt.Errorf("-benchtime %q: %w", bt, err)
			}
			probe, err := nodeBench(ctx, cfg, s, 2)
			if err != nil {
				return result{}, err
			}
			n = int(float64(d.Nanoseconds()) / max(probe.NsPerOp, 1))
			n = min(max(n, 2), 2000)
		}
		jsN[s] = n
	}
	return nodeBench(ctx, cfg, s, n)
}

// nodeBench runs bench.mjs for n measured invocations, after its warm-up
// (none with -short).
func nodeBench(ctx context.Context, cfg config, s harness.Shape, n int) (result, error) {
	dir, err := os.MkdirTemp("", "weft-compare-js-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	args := []string{"bench.mjs", string(s), fmt.Sprint(n), dir}
	if cfg.short {
		args = append(args, "0")
	}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = cfg.jsDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w\n%s", jsEngine, s, err, stderr.Bytes())
	}
	res, err := parse(out)
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w", jsEngine, s, err)
	}
	return res, nil
}

// parse reads the last JSON line of a child's output.
func parse(out []byte) (result, error) {
	var (
		res  result
		last []byte
	)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && line[0] == '{' {
			last = append(last[:0], line...)
		}
	}
	if last == nil {
		return res, fmt.Errorf("no result line in %q", out)
	}
	if err := json.Unmarshal(last, &res); err != nil {
		return res, fmt.Errorf("result line %q: %w", last, err)
	}
	return res, nil
}
