// Package agentcli holds what the Go reference agents' programs
// (examples/adaptiverag/cmd/adaptiverag, examples/shipments/cmd/shipments)
// share, on weft's library: opening the model a --llm flag names as a
// component spec, as `weft run` does, with --record; answering turns in
// memory, or in a durable thread of a service.Service; printing a run's
// trace.
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

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/llm/replay"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/sqlite"
)

// Policy is the retry policy `weft run` calls a provider's models with
// (cmd/weft's defaultPolicy): timeout of each attempt (set by OpenModel),
// three attempts, jitter 0.2, at most eight calls in flight.
func Policy(timeout time.Duration) *builtin.Policy {
	return &builtin.Policy{Timeout: component.Duration(timeout), MaxAttempts: 3, Jitter: 0.2, Concurrency: 8}
}

// OpenModel opens the model spec names (else $WEFT_LLM) as `weft run`
// does, through weft's component registry: the spec of its llm.*
// component (builtin.ModelSpec, with the server's URL and the key's
// variable from getenv and Policy(timeout); "replay:FILE" serves a
// recording, without a policy), loaded into a component.Set whose Models
// open it. A record path writes every exchange to that file
// (replay.NewRecorder). The returned function closes the recording and
// the component.
func OpenModel(ctx context.Context, spec, record string, timeout time.Duration, getenv func(string) string) (llm.Model, func() error, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = strings.TrimSpace(getenv(providers.EnvVar))
	}
	var cs component.Spec
	var err error
	if spec == "" {
		err = &providers.SpecError{Msg: "no model given, and " + providers.EnvVar + " is not set", Known: providers.Known(), Err: providers.ErrNoModel}
	} else {
		cs, err = builtin.ModelSpec(spec, getenv, Policy(timeout))
	}
	if errors.Is(err, providers.ErrNoModel) {
		return nil, nil, fmt.Errorf("%w (pass --llm PROVIDER:MODEL or set %s)", err, providers.EnvVar)
	}
	if err != nil {
		return nil, nil, err
	}
	reg, err := builtin.New()
	if err != nil {
		return nil, nil, err
	}
	set, err := reg.LoadAll(ctx, []component.Spec{cs}, &component.Env{Getenv: getenv})
	if err != nil {
		return nil, nil, err
	}
	models, err := set.Models()
	if err != nil {
		return nil, nil, errors.Join(err, set.Close())
	}
	m, err := models.Open("")
	if err != nil {
		return nil, nil, errors.Join(err, set.Close())
	}
	if record == "" {
		return m, set.Close, nil
	}
	f, err := os.Create(record)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("--record: %w", err), set.Close())
	}
	var mu sync.Mutex
	return replay.NewRecorder(m, lockedWriter{&mu, f}), func() error {
		mu.Lock()
		defer mu.Unlock()
		return errors.Join(f.Close(), set.Close())
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
	// (DefaultStore when empty), through a service.Service that runs the
	// graph as a Go workflow (service.Go, Graph.Actions, Graph.Input): the
	// thread keeps its run spec, "go:" and the graph's name.
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
	name := t.Graph.Workflow().Name
	svc, err := service.New(service.Options{
		Store:     st,
		Actions:   t.Graph.Actions(),
		Workflows: map[string]*flow.Workflow{name: t.Graph.Workflow()},
	})
	if err != nil {
		return nil, nil, errors.Join(err, st.Close())
	}
	closeAll := func() error { return errors.Join(svc.Close(), st.Close()) }
	wf, err := svc.Open(ctx, service.Go(name, t.Graph.Workflow()))
	if err != nil {
		return nil, nil, errors.Join(err, closeAll())
	}
	id := t.Thread
	if id == "" {
		id = fmt.Sprintf("cli-%d", time.Now().UnixNano())
		fmt.Fprintf(t.Log, "%s: thread %s in %s\n", t.Name, id, path)
	}
	return func(ctx context.Context, msg string) (S, error) {
		var zero S
		var obs engine.Observer
		if t.Trace {
			obs = engine.ObserverFunc(func(e engine.Event) { fmt.Fprintln(t.Log, e.String()) })
		}
		input, update, err := t.Graph.Input(t.Start(msg, zero))
		if err != nil {
			return zero, err
		}
		res, err := svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: id, Input: input, Update: update, Observer: obs})
		if res != nil && t.Trace {
			fmt.Fprintf(t.Log, "thread %s run %d: %s\n", res.Thread, res.Run, res.Status)
		}
		if err != nil {
			return zero, err
		}
		return t.Graph.State(&engine.Result{Vars: res.Vars})
	}, closeAll, nil
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
