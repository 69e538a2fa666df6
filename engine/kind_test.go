package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// Every exported error of the engine, and the store's and context's
// errors, has a kind that KindOf and errors.Is (its kind's sentinel) find
// through two layers of wrapping.
func TestErrorKinds(t *testing.T) {
	plain := errors.New("the action broke")
	for _, c := range []struct {
		name string
		err  error
		kind engine.Kind
	}{
		{"ErrWaiting", engine.ErrWaiting, engine.KindWaiting},
		{"ErrThreadAdvanced", engine.ErrThreadAdvanced, engine.KindConflict},
		{"ErrStale", engine.ErrStale, engine.KindConflict},
		{"NodeError", &engine.NodeError{Node: "n", Err: plain}, engine.KindInternal},
		{"NodeError cancelled", &engine.NodeError{Node: "n", Err: fmt.Errorf("calling: %w", context.Canceled)}, engine.KindCancelled},
		{"NodeError run cancelled", &engine.NodeError{Node: "n", Err: fmt.Errorf("run cancelled: %w", engine.ErrRunCancelled)}, engine.KindCancelled},
		{"NodeError timeout", &engine.NodeError{Node: "n", Err: &engine.TimeoutError{Node: "n"}}, engine.KindLimit},
		{"NoRouteError", &engine.NoRouteError{Node: "n"}, engine.KindInternal},
		{"LimitError", &engine.LimitError{Limit: engine.LimitMaxSteps}, engine.KindLimit},
		{"OutputError", &engine.OutputError{Node: "n", Field: "f", Err: plain}, engine.KindMismatch},
		{"InputError", &engine.InputError{Param: "p", Err: plain}, engine.KindInvalidInput},
		{"Interrupt", &engine.Interrupt{Question: flow.StringValue("?")}, engine.KindWaiting},
		{"UnknownActionError", &engine.UnknownActionError{Node: "n", Action: "a"}, engine.KindInternal},
		{"TimeoutError", &engine.TimeoutError{Node: "n"}, engine.KindLimit},
		{"PanicError", &engine.PanicError{Action: "a", Value: 1}, engine.KindInternal},
		{"StateError", &engine.StateError{Field: "cells", Detail: "x"}, engine.KindInternal},
		{"PlanChangedError", &engine.PlanChangedError{Thread: "t"}, engine.KindMismatch},
		{"QuestionError", &engine.QuestionError{ID: "9", Waiting: []string{"2"}}, engine.KindMismatch},
		{"CheckpointError conflict", &engine.CheckpointError{Thread: "t", Err: &store.ConflictError{ThreadID: "t"}}, engine.KindConflict},
		{"CheckpointError lease", &engine.CheckpointError{Thread: "t", Err: &store.LeaseError{Thread: "t", Err: store.ErrLeaseLost}}, engine.KindConflict},
		{"CheckpointError disk", &engine.CheckpointError{Thread: "t", Err: fmt.Errorf("write: %w", store.ErrFull)}, engine.KindInternal},
		{"ThreadError", &engine.ThreadError{Thread: "t", Kind: engine.KindEnded}, engine.KindEnded},
		{"ThreadError by cause", &engine.ThreadError{Thread: "t", Err: engine.ErrWaiting}, engine.KindWaiting},
		{"ThreadError lease", &engine.ThreadError{Thread: "t", Err: &store.LeaseError{Thread: "t", Err: store.ErrLeaseHeld}}, engine.KindConflict},
		{"ThreadError none", &engine.ThreadError{Thread: "t"}, engine.KindInternal},
		{"ThreadError job conflict", &engine.ThreadError{Thread: "t", Err: &store.JobConflictError{ID: "j", Status: store.JobRunning}}, engine.KindConflict},
		{"Misuse", engine.Misuse(&engine.InputError{Param: "p", Err: plain}), engine.KindInvalidInput},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, err := range []error{c.err, fmt.Errorf("one: %w", c.err), fmt.Errorf("two: %w", fmt.Errorf("one: %w", c.err)), errors.Join(plain, fmt.Errorf("one: %w", c.err))} {
				if got := engine.KindOf(err); got != c.kind {
					t.Errorf("KindOf(%v) = %q, want %q", err, got, c.kind)
				}
				if !errors.Is(err, c.kind.Sentinel()) {
					t.Errorf("errors.Is(%v, the %s sentinel) = false", err, c.kind)
				}
				for _, other := range []engine.Kind{engine.KindWaiting, engine.KindEnded, engine.KindNotFound, engine.KindConflict, engine.KindMismatch, engine.KindCancelled, engine.KindLimit, engine.KindInvalidInput, engine.KindInternal} {
					if other != c.kind && errors.Is(err, other.Sentinel()) {
						t.Errorf("errors.Is(%v, the %s sentinel) = true; it is of %s", err, other, c.kind)
					}
				}
			}
		})
	}
	// Errors of other packages have kinds through KindOf.
	for err, want := range map[error]engine.Kind{
		nil:                                         "",
		errors.New("x"):                             engine.KindInternal,
		fmt.Errorf("a: %w", context.Canceled):       engine.KindCancelled,
		context.DeadlineExceeded:                    engine.KindLimit,
		fmt.Errorf("a: %w", store.ErrNotFound):      engine.KindNotFound,
		store.ErrInvalid:                            engine.KindInvalidInput,
		&store.LeaseError{Err: store.ErrLeaseHeld}:  engine.KindConflict,
		fmt.Errorf("b: %w", &store.ConflictError{}): engine.KindConflict,
	} {
		if got := engine.KindOf(err); got != want {
			t.Errorf("KindOf(%v) = %q, want %q", err, got, want)
		}
	}
	// An error of another package has the kind whose sentinel its Is
	// method matches.
	if got := engine.KindOf(fmt.Errorf("x: %w", foreignErr{})); got != engine.KindNotFound {
		t.Errorf("KindOf(an error whose Is matches ErrNotFound) = %q", got)
	}
	// A sentinel of a narrower meaning is its kind's too.
	if !errors.Is(engine.ErrThreadAdvanced, engine.ErrConflict) || !errors.Is(engine.ErrStale, engine.ErrConflict) || errors.Is(engine.ErrConflict, engine.ErrThreadAdvanced) {
		t.Error("ErrThreadAdvanced and ErrStale must match ErrConflict, and not the reverse")
	}
}

// wantKind checks that err is of kind want, by KindOf and errors.Is.
func wantKind(t *testing.T, what string, err error, want engine.Kind) {
	t.Helper()
	if got := engine.KindOf(err); got != want || !errors.Is(err, want.Sentinel()) {
		t.Errorf("%s: %v: kind %q (errors.Is %v), want %q", what, err, got, errors.Is(err, want.Sentinel()), want)
	}
}

// The kinds of the errors of real calls.
func TestErrorKindsOfCalls(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "ask.wf", askWF)
	counts := map[string]int{}
	th := &engine.Threads{Runner: countRunner(counts), Store: memory.New()}

	_, err := th.Resume(ctx, plan, "nosuch", nil, nil)
	wantKind(t, "resume of a thread that does not exist", err, engine.KindNotFound)

	if res, err := th.Run(ctx, plan, "t", nil, nil, nil); err != nil || res.Status != engine.Waiting {
		t.Fatalf("run: %v %v", res, err)
	}
	_, err = th.Run(ctx, plan, "t", nil, nil, nil)
	wantKind(t, "a new run in a waiting thread", err, engine.KindWaiting)
	_, err = th.Resume(ctx, plan, "t", nil, nil)
	wantKind(t, "a resume without answers", err, engine.KindWaiting)
	_, err = th.Resume(ctx, plan, "t", []engine.Answer{{ID: "99", Outputs: map[string]flow.Value{"year": flow.StringValue("1")}}}, nil)
	wantKind(t, "an answer to a question that does not wait", err, engine.KindMismatch)
	_, err = th.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"month": flow.StringValue("1")}}}, nil)
	wantKind(t, "an answer with an output the node does not declare", err, engine.KindMismatch)
	_, err = th.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.ListValue()}}}, nil)
	wantKind(t, "an answer of the wrong type", err, engine.KindMismatch)
	changed := load(t, "ask.wf", strings.Replace(askWF, "year: String", "year: String\n        month: String", 1))
	_, err = th.Resume(ctx, changed, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("1")}}}, nil)
	wantKind(t, "a resume with another plan", err, engine.KindMismatch)
	other := load(t, "other.wf", strings.Replace(askWF, "workflow Ask", "workflow Other", 1))
	_, err = th.Run(ctx, other, "t2", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}

	if res, err := th.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}, nil); err != nil || res.Status != engine.Completed {
		t.Fatalf("resume: %v %v", res, err)
	}
	_, err = th.Resume(ctx, plan, "t", nil, nil)
	wantKind(t, "a resume of a completed run", err, engine.KindEnded)
	_, err = th.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}, nil)
	wantKind(t, "an answer to a completed run", err, engine.KindEnded)
	_, err = th.Run(ctx, other, "t", nil, nil, nil)
	wantKind(t, "a run of another workflow in the thread", err, engine.KindMismatch)
	_, err = th.Fork(ctx, "t", 999, "f1", nil)
	wantKind(t, "a fork at a record that does not exist", err, engine.KindNotFound)
	_, err = th.Fork(ctx, "nosuch", 1, "f2", nil)
	wantKind(t, "a fork of a thread that does not exist", err, engine.KindNotFound)
	_, err = th.Fork(ctx, "t", 1, "f3", &engine.ForkOptions{Set: map[string]flow.Value{"nosuch": flow.IntValue(1)}})
	wantKind(t, "a fork that sets what is not a variable", err, engine.KindInvalidInput)

	// A run's limits and its caller's context.
	src := strings.Replace(slowWF, "timeout: 50ms", "", 1)
	src = strings.Replace(src, "finals: [ done ]", "finals: [ done ]\n  limits { max_time: 50ms }", 1)
	slow := compile(t, "maxtime.wf", src)
	release := make(chan struct{})
	defer close(release)
	reg := registry(t, map[string]engine.ActionFunc{
		"hang": func(ctx context.Context, c *engine.Call) error { <-release; return nil },
	})
	_, err = (&engine.Runner{Registry: reg}).Run(ctx, slow, nil, nil)
	wantKind(t, "max_time", err, engine.KindLimit)
	var le *engine.LimitError
	if !errors.As(err, &le) || le.Limit != engine.LimitMaxTime {
		t.Errorf("max_time: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	polite := registry(t, map[string]engine.ActionFunc{
		"hang": func(ctx context.Context, c *engine.Call) error { <-ctx.Done(); return ctx.Err() },
	})
	_, err = (&engine.Runner{Registry: polite}).Run(cctx, compile(t, "slow.wf", strings.Replace(slowWF, "timeout: 50ms", "", 1)), nil, nil)
	wantKind(t, "a cancelled run", err, engine.KindCancelled)
	_, err = (&engine.Runner{Registry: reg}).Run(ctx, slow, map[string]flow.Value{"nosuch": flow.IntValue(1)}, nil)
	wantKind(t, "a run with a parameter the workflow lacks", err, engine.KindInvalidInput)
}

// Runner.Resume refuses an answer that does not fit, with a kind, and
// changes nothing: the result still waits, and a fitting answer then
// completes it. (A wrong-typed answer used to fail the run.)
func TestRunnerResumeErrorKinds(t *testing.T) {
	ctx := context.Background()
	plan := load(t, "ask.wf", askWF)
	r := countRunner(map[string]int{})
	res, err := r.Run(ctx, plan, nil, nil)
	if err != nil || res.Status != engine.Waiting || len(res.Waiting) != 1 {
		t.Fatalf("run: %v %v", res, err)
	}
	id := res.Waiting[0].ID
	_, err = r.Resume(ctx, res, map[string]map[string]flow.Value{id + "7": {"year": flow.StringValue("1")}}, nil)
	wantKind(t, "an answer to a task that does not wait", err, engine.KindMismatch)
	_, err = r.Resume(ctx, res, map[string]map[string]flow.Value{id: {"year": flow.ListValue()}}, nil)
	wantKind(t, "an answer of the wrong type", err, engine.KindMismatch)
	_, err = r.Resume(ctx, res, map[string]map[string]flow.Value{id: {}}, nil)
	wantKind(t, "an answer without the output", err, engine.KindMismatch)
	done, err := r.Resume(ctx, res, map[string]map[string]flow.Value{id: {"year": flow.StringValue("2019")}}, nil)
	if err != nil || done.Status != engine.Completed {
		t.Fatalf("a fitting answer after refused ones: %v %v", done, err)
	}
	_, err = r.Resume(ctx, done, map[string]map[string]flow.Value{id: {"year": flow.StringValue("2019")}}, nil)
	wantKind(t, "a resume of a completed result", err, engine.KindEnded)
	_, err = r.Resume(ctx, res, map[string]map[string]flow.Value{id: {"year": flow.StringValue("2019")}}, nil)
	wantKind(t, "a resume of a result resumed already", err, engine.KindConflict)
	if !errors.Is(err, engine.ErrStale) {
		t.Errorf("stale: %v", err)
	}
}

// foreignErr is an error of another package that says it is of
// KindNotFound by its Is method.
type foreignErr struct{}

func (foreignErr) Error() string        { return "no such thing" }
func (foreignErr) Is(target error) bool { return target == engine.ErrNotFound }
