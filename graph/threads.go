package graph

import (
	"context"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// ThreadOptions configure Compiled.Threads. The zero value keeps every
// step durable before the next (engine.Sync).
type ThreadOptions struct {
	// Durability says when a step's record reaches the store: engine.Sync
	// (the default) commits each before the run goes on, engine.Async
	// batches them in the background (LangGraph's default).
	Durability engine.Durability
	// RetryFor is how long a transient store error is retried (see
	// engine.Threads); 0 means 30s.
	RetryFor time.Duration
}

// Threads runs a compiled graph in durable threads kept in a store.Store:
// each Invoke is a run in a thread, checkpointed after every step, which
// another process can resume after a crash or a person's answer. It is
// LangGraph's compile(checkpointer=...) with a thread_id per invoke, over
// package engine's Threads (docs/threads.md).
//
// A state field with a reducer (a conversation's messages, with
// `weft:"messages,append"`) carries over from the thread's previous run,
// and the value Invoke is given for it is applied through the reducer (a
// new message is appended), as LangGraph applies a run's input; a field
// without a reducer starts each run from the state Invoke is given.
//
// Threads is safe for concurrent use by runs in different threads.
type Threads[S any] struct {
	c    *Compiled[S]
	th   *engine.Threads
	zero map[string]flow.Value // the parameters of a zero S
}

// Threads returns the graph bound to st. opts may be nil.
func (c *Compiled[S]) Threads(st store.Store, opts *ThreadOptions) *Threads[S] {
	th := &engine.Threads{Runner: c.runner, Store: st}
	if opts != nil {
		th.Durability, th.RetryFor = opts.Durability, opts.RetryFor
	}
	var zero S
	zp, _ := c.params(&zero) // a zero S encodes: its fields' types were checked by Compile
	return &Threads[S]{c: c, th: th, zero: zp}
}

// Engine returns the engine's Threads underneath: for History, Fork,
// Load and the rest of what a thread offers beyond typed runs.
func (t *Threads[S]) Engine() *engine.Threads { return t.th }

// Invoke starts a new run in thread threadID (created if it does not
// exist) from state in, and returns the state at its end, as
// Compiled.Invoke does. A run a node suspended with an *engine.Interrupt
// returns its state so far and a *WaitingError: answer it with Resume. A
// thread whose last run waits, or did not finish, is an
// *engine.ThreadError.
func (t *Threads[S]) Invoke(ctx context.Context, threadID string, in S) (S, error) {
	res, err := t.Run(ctx, threadID, in, nil)
	if res == nil {
		var zero S
		return zero, err
	}
	return t.c.outcome(res, err)
}

// Run starts a new run in thread threadID from state in, as Invoke does,
// with obs (which may be nil) receiving its events as they happen, and
// returns the engine's result: its status, path, thread and run number;
// Compiled.State converts it to S. Invoke is Run without an observer.
func (t *Threads[S]) Run(ctx context.Context, threadID string, in S, obs engine.Observer) (*engine.Result, error) {
	params, err := t.c.params(&in)
	if err != nil {
		return nil, err
	}
	// A field with a reducer takes in's value as an update, through its
	// reducer, onto what the thread carries (or its zero value in a new
	// thread), as LangGraph applies a run's input.
	updates := t.c.splitUpdates(params, t.zero)
	return t.th.Run(ctx, t.c.plan, threadID, params, obs, &engine.RunOptions{Update: updates})
}

// Resume continues the last run of thread threadID: one that waits for a
// person takes answers (the waiting nodes complete with them as their
// outputs, by update field name); one whose process died continues with
// the steps in flight, given no answers. It returns the state at the end,
// as Invoke does.
func (t *Threads[S]) Resume(ctx context.Context, threadID string, answers ...engine.Answer) (S, error) {
	res, err := t.th.Resume(ctx, t.c.plan, threadID, answers, nil)
	return t.c.outcome(res, err)
}

// State returns the state thread threadID holds now: at the end of its
// last run, or where that run waits or stopped.
func (t *Threads[S]) State(ctx context.Context, threadID string) (S, error) {
	var s S
	ts, err := t.th.Load(ctx, threadID)
	if err != nil {
		return s, err
	}
	res := &engine.Result{Vars: make([]engine.NamedValue, len(t.c.layout.fields))}
	for i, f := range t.c.layout.fields {
		v, _ := ts.Value(f.name)
		res.Vars[i] = engine.NamedValue{Name: f.name, Value: v}
	}
	return t.c.State(res)
}
