// Package agentcli holds what the Go reference agents' programs
// (examples/adaptiverag/cmd/adaptiverag, examples/shipments/cmd/shipments)
// share: opening the model a --llm flag names, as `weft run` does, with
// --record; answering turns in memory or in a durable thread; printing a
// thread run's trace.
package agentcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/llm/replay"
	"github.com/weftlang/weft/store/sqlite"
)

// OpenModel opens the model spec names (else $WEFT_LLM): "replay:FILE"
// serves recorded exchanges; any other spec opens a provider wrapped in
// llm.Reliable (timeout per call, 3 attempts, 8 calls at once). A record
// path writes every exchange to that file. The returned function closes
// the recording.
func OpenModel(spec, record string, timeout time.Duration, getenv func(string) string) (llm.Model, func() error, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = strings.TrimSpace(getenv(providers.EnvVar))
	}
	m, err := providers.Open(spec, getenv) // "replay:FILE" included
	if errors.Is(err, providers.ErrNoModel) {
		return nil, nil, fmt.Errorf("%w (pass --llm PROVIDER:MODEL or set %s)", err, providers.EnvVar)
	}
	if err != nil {
		return nil, nil, err
	}
	if name, _, _ := strings.Cut(spec, ":"); !strings.EqualFold(strings.TrimSpace(name), "replay") {
		m = llm.Reliable(m, llm.Policy{Timeout: timeout, MaxAttempts: 3, Jitter: 0.2, Concurrency: 8})
	}
	if record == "" {
		return m, func() error { return nil }, nil
	}
	f, err := os.Create(record)
	if err != nil {
		return nil, nil, fmt.Errorf("--record: %w", err)
	}
	var mu sync.Mutex
	return replay.NewRecorder(m, lockedWriter{&mu, f}), func() error {
		mu.Lock()
		defer mu.Unlock()
		return f.Close()
	}, nil
}

// lockedWriter serialises the recorder's writes with the file's closing.
type lockedWriter struct {
	mu *sync.Mutex
	f  *os.File
}

// Write writes p to the file under the lock.
func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Write(p)
}

// Turns answers one message at a time, each a run of the compiled graph.
type Turns[S any] struct {
	// Graph is the agent.
	Graph *graph.Compiled[S]
	// Start makes a turn's input state from the message and, in memory,
	// the previous turn's output (the zero S before the first turn); in a
	// thread, prev is always the zero S: the thread keeps the state.
	Start func(msg string, prev S) S
	// Thread and Store: with either set, turns run in the durable thread
	// Thread (a new id when empty) kept in the SQLite file Store
	// (DefaultStore when empty).
	Thread, Store, DefaultStore string
	// Trace prints every event of a run to Log, and in a thread the run's
	// number and status after it.
	Trace bool
	// Log receives the trace and notices, such as a new thread's id.
	Log io.Writer
	// Name prefixes notices ("adaptiverag: ...").
	Name string
}

// Open returns the function that answers one message, and the function
// that releases what it holds.
func (t *Turns[S]) Open(ctx context.Context) (func(context.Context, string) (S, error), func() error, error) {
	if t.Thread == "" && t.Store == "" {
		var prev S
		return func(ctx context.Context, msg string) (S, error) {
			var obs engine.Observer
			if t.Trace {
				obs = engine.ObserverFunc(func(e engine.Event) { fmt.Fprintln(t.Log, e.String()) })
			}
			var zero S
			res, err := t.Graph.Run(ctx, t.Start(msg, prev), obs)
			if err != nil {
				return zero, err
			}
			out, err := t.Graph.State(res)
			if err == nil {
				prev = out
			}
			return out, err
		}, func() error { return nil }, nil
	}
	path := t.Store
	if path == "" {
		path = t.DefaultStore
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	id := t.Thread
	if id == "" {
		id = fmt.Sprintf("cli-%d", time.Now().UnixNano())
		fmt.Fprintf(t.Log, "%s: thread %s in %s\n", t.Name, id, path)
	}
	th := t.Graph.Threads(st, nil)
	return func(ctx context.Context, msg string) (S, error) {
		var zero S
		var obs engine.Observer
		if t.Trace {
			obs = engine.ObserverFunc(func(e engine.Event) { fmt.Fprintln(t.Log, e.String()) })
		}
		res, err := th.Run(ctx, id, t.Start(msg, zero), obs)
		if res != nil && t.Trace {
			fmt.Fprintf(t.Log, "thread %s run %d: %s\n", res.Thread, res.Run, res.Status)
		}
		if err != nil {
			return zero, err
		}
		return t.Graph.State(res)
	}, st.Close, nil
}

// Messages yields the messages of a session: input when it is set, else
// each non-blank line of r (a line may be up to 1 MiB), trimmed.
func Messages(input string, r io.Reader) iter.Seq[string] {
	if input != "" {
		return func(yield func(string) bool) { yield(input) }
	}
	return func(yield func(string) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			if q := strings.TrimSpace(sc.Text()); q != "" && !yield(q) {
				return
			}
		}
	}
}
