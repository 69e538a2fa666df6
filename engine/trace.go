package engine

import (
	"context"
	"time"
)

// Tracer follows the runs a Runner drives and every attempt of their
// nodes' actions, so that they can be traced: package telemetry
// implements it with OpenTelemetry, one span per run and one per attempt.
// A Runner without a Tracer (the default) calls nothing and allocates
// nothing for it.
//
// The engine calls a Tracer from the run's goroutines, concurrently for
// parallel branches and map elements, so its methods must be safe for
// concurrent use, and quick: they are on the path of every step. The
// contexts they return are the ones the run and the attempt go on with,
// so an action (an LLM call, an HTTP request, a tool) finds its attempt's
// span in its context.
type Tracer interface {
	// StartRun is called as a drive of a run begins: a new run, or one
	// resumed (a thread's next drive after a person answered, or in
	// another process after a crash). ctx is the caller's. end is called
	// once, when the drive stops, with the run's status (Waiting when it
	// waits for a person, Running when it was stopped to be resumed
	// later) and its error.
	StartRun(ctx context.Context, run TracedRun) (_ context.Context, end func(Status, error))
	// StartAttempt is called before each attempt of a node's action with
	// the attempt's call (its Node, Step, Item, Attempt and Key are set;
	// the Call is the engine's and is valid only during the call). end
	// is called once, when the engine has decided what follows the
	// attempt (a retry, the node's fallback values, or nothing).
	StartAttempt(ctx context.Context, c *Call) (_ context.Context, end func(AttemptEnd))
}

// TracedRun describes a run to a Tracer.
type TracedRun struct {
	Workflow string // the workflow's declared name
	Thread   string // the run's thread; "" for a run not kept in one
	Run      int    // the run's number in its thread, from 1; 0 without a thread
	RunID    string // the run's random id in its thread; "" without a thread
	Resumed  bool   // the drive goes on with a run begun before
}

// AttemptEnd says how an attempt ended and what follows it.
type AttemptEnd struct {
	// Err is the attempt's error, nil when it succeeded. An *Interrupt
	// is a node waiting for a person, not a failure.
	Err error
	// Retrying is set when another attempt follows, after Delay.
	Retrying bool
	Delay    time.Duration
	// Fallback is set when the node's fallback values stand in for the
	// outputs of a node whose last attempt failed with Err.
	Fallback bool
}

// tracedRun describes m's run, kept in dur's thread when dur is not nil.
func tracedRun(m *Machine, dur *durable, resumed bool) TracedRun {
	tr := TracedRun{Resumed: resumed}
	if w := m.plan.Workflow; w != nil {
		tr.Workflow = w.Name
	}
	if dur != nil {
		tr.Thread, tr.Run, tr.RunID = dur.ts.Thread, dur.info.Number, dur.info.ID
	}
	return tr
}

// startAttempt starts tracing an attempt; without a Tracer it returns ctx
// and a nil end.
func (st *runState) startAttempt(ctx context.Context, c *Call) (context.Context, func(AttemptEnd)) {
	if st.r.Tracer == nil {
		return ctx, nil
	}
	return st.r.Tracer.StartAttempt(ctx, c)
}
