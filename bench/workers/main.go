// Command workers measures LLM-bound runs carried out by `weft worker`
// processes on one PostgreSQL, against the ideal.
//
//	go run ./bench/workers [-workers 1,2,4] [-concurrency 4] [-runs 96] [-latency 100ms]
//
// For each number of workers W it starts a throwaway PostgreSQL database
// (the server binaries of internal/pgtest), a fake Ollama server (llm/llmtest,
// Ollama's real wire protocol) that answers every call after -latency, one
// `weft serve --workers 0` and W `weft worker --concurrency C` processes,
// and sends -runs runs of calls.wf (four LLM calls in a row) at once through
// the API, each a runs.wait. It reports the wall time from the first
// request to the last reply, the ideal (runs x 4 calls x latency /
// (W x C), since W x C runs go at once) and their ratio; and, from 20 runs
// sent one at a time before (workers idle), the time from a run's River
// job being queued to a worker starting it (p50, p99, from River's job
// rows): the queue's own overhead.
package main

import (
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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/llm/llmtest"
)

// callsPerRun is how many LLM calls calls.wf makes.
const callsPerRun = 4

// seqRuns is how many runs, one at a time, measure the queue's overhead.
const seqRuns = 20

func main() {
	workers := flag.String("workers", "1,2,4", "numbers of worker processes to measure, comma-separated")
	conc := flag.Int("concurrency", 4, "runs each worker carries out at once")
	runs := flag.Int("runs", 96, "runs per measurement")
	latency := flag.Duration("latency", 100*time.Millisecond, "the fake model's latency per call")
	flag.Parse()
	if err := run(*workers, *conc, *runs, *latency); err != nil {
		fmt.Fprintln(os.Stderr, "workers:", err)
		os.Exit(1)
	}
}

func run(workerList string, conc, runs int, latency time.Duration) error {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	root := filepath.Join(dir, "..", "..")
	tmp, err := os.MkdirTemp("", "weft-bench-workers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "weft")
	build := exec.Command("go", "build", "-o", bin, "./cmd/weft")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building weft: %w", err)
	}
	cluster, err := pgtest.StartCluster("")
	if err != nil {
		return fmt.Errorf("starting PostgreSQL: %w", err)
	}
	defer cluster.Stop()
	fake := llmtest.NewServer(llmtest.Ollama)
	defer fake.Close()
	fake.Repeat(llmtest.Reply{Text: "ok", Latency: latency})

	fmt.Printf("| workers | concurrency each | runs | LLM calls | wall s | ideal s | wall / ideal | idle queued-to-start p50 / p99 ms |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range strings.Split(workerList, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w < 1 {
			return fmt.Errorf("-workers: %q", f)
		}
		db, err := cluster.CreateDB(context.Background(), "")
		if err != nil {
			return err
		}
		m, err := measure(bin, filepath.Join(dir, "calls.wf"), db.DSN, fake.URL, tmp, w, conc, runs)
		if err != nil {
			return fmt.Errorf("%d workers: %w", w, err)
		}
		ideal := time.Duration(runs*callsPerRun) * latency / time.Duration(w*conc)
		fmt.Printf("| %d | %d | %d | %d | %.2f | %.2f | %.2fx | %.1f / %.1f |\n", w, conc, runs, runs*callsPerRun,
			m.wall.Seconds(), ideal.Seconds(), m.wall.Seconds()/ideal.Seconds(), ms(m.startP50), ms(m.startP99))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type measured struct {
	wall               time.Duration
	startP50, startP99 time.Duration
}

// measure starts the API and w workers on dsn and times runs runs.
func measure(bin, wf, dsn, ollama, tmp string, w, conc, runs int) (measured, error) {
	env := append(os.Environ(), "OLLAMA_HOST="+ollama, "WEFT_LLM=ollama:fake")
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	}()
	start := func(args ...string) (string, error) {
		addr, err := freeAddr()
		if err != nil {
			return "", err
		}
		log, err := os.Create(filepath.Join(tmp, fmt.Sprintf("%s-%d.log", args[0], len(procs))))
		if err != nil {
			return "", err
		}
		c := exec.Command(bin, append(args, "--addr", addr)...)
		c.Env, c.Stdout, c.Stderr = env, log, log
		if err := c.Start(); err != nil {
			return "", err
		}
		procs = append(procs, c)
		url := "http://" + addr
		for range 500 {
			if resp, err := http.Get(url + "/ok"); err == nil {
				resp.Body.Close()
				return url, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return "", fmt.Errorf("%s did not start (see %s)", args[0], log.Name())
	}
	api, err := start("serve", wf, "--store", dsn, "--workers", "0")
	if err != nil {
		return measured{}, err
	}
	for range w {
		if _, err := start("worker", wf, "--store", dsn, "--concurrency", strconv.Itoa(conc)); err != nil {
			return measured{}, err
		}
	}
	post := func(path, body string) (string, error) {
		resp, err := http.Post(api+path, "application/json", strings.NewReader(body))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b), nil
	}
	// Threads first, untimed; then runs one at a time, workers idle: the
	// queue's overhead.
	for i := range runs + seqRuns {
		if _, err := post("/threads", fmt.Sprintf(`{"thread_id":"t%d"}`, i)); err != nil {
			return measured{}, err
		}
	}
	for i := runs; i < runs+seqRuns; i++ {
		if _, err := post(fmt.Sprintf("/threads/t%d/runs/wait", i), `{"assistant_id":"Calls","input":{"input_text":"one"}}`); err != nil {
			return measured{}, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	p50, p99, err := startLatency(dsn)
	if err != nil {
		return measured{}, err
	}
	var wg sync.WaitGroup
	errs := make([]error, runs)
	t0 := time.Now()
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := post(fmt.Sprintf("/threads/t%d/runs/wait", i), fmt.Sprintf(`{"assistant_id":"Calls","input":{"input_text":"q%d"}}`, i))
			if err == nil {
				var v map[string]any
				if jerr := json.Unmarshal([]byte(out), &v); jerr != nil || v["d"] == nil {
					err = fmt.Errorf("run %d: %s", i, out)
				}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	if err := errors.Join(errs...); err != nil {
		return measured{}, err
	}
	return measured{wall: wall, startP50: p50, startP99: p99}, nil
}

// startLatency reads, from River's job rows, how long each run waited
// between being queued and a worker starting it.
func startLatency(dsn string) (p50, p99 time.Duration, err error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT extract(epoch FROM attempted_at - created_at) FROM river_job WHERE kind = 'weft_run' AND attempted_at IS NOT NULL`)
	if err != nil {
		return 0, 0, err
	}
	var ds []time.Duration
	for rows.Next() {
		var s float64
		if err := rows.Scan(&s); err != nil {
			return 0, 0, err
		}
		ds = append(ds, time.Duration(s*float64(time.Second)))
	}
	if err := rows.Err(); err != nil || len(ds) == 0 {
		return 0, 0, errors.Join(err, errors.New("no started River job"))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)], nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
