package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// A driver cancels a run for good: Cancelled, the cause as its error, a
// RunCancelled event, running tasks forgotten, and the status kept by a
// snapshot and a restore. Fail after it changes nothing.
func TestMachineCancel(t *testing.T) {
	plan := load(t, "loop.wf", loopWF)
	m, err := engine.NewMachine(plan, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	rd := m.Ready()
	if len(rd.Tasks) != 1 || rd.Status != engine.Running {
		t.Fatalf("first Ready: %d tasks, %s", len(rd.Tasks), rd.Status)
	}
	m.Advance(rd)
	cause := errors.New("stopped by the user")
	m.Cancel(cause)
	m.Fail(errors.New("too late"))
	if m.Status() != engine.Cancelled || m.Err() != cause {
		t.Fatalf("after Cancel: %s, %v", m.Status(), m.Err())
	}
	if err := m.Complete(rd.Tasks[0].ID, []flow.Value{flow.IntValue(0)}, nil); err != nil || m.Steps() != 1 {
		t.Fatalf("Complete after Cancel: %v, %d steps", err, m.Steps())
	}
	rd = m.Ready()
	if rd.Status != engine.Cancelled || rd.Err != cause || len(rd.Tasks) != 0 {
		t.Fatalf("Ready after Cancel: %s, %v, %d tasks", rd.Status, rd.Err, len(rd.Tasks))
	}
	if len(rd.Events) != 1 || rd.Events[0].Type != engine.RunCancelled || rd.Events[0].Error != cause.Error() {
		t.Fatalf("events after Cancel: %v", rd.Events)
	}
	b, err := json.Marshal(m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var st engine.State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	r, err := engine.RestoreMachine(plan, &st, false)
	if err != nil || r.Status() != engine.Cancelled || r.Err().Error() != cause.Error() {
		t.Fatalf("restored: %v, %v (%s)", r.Status(), r.Err(), b)
	}
	if got := engine.Cancelled.String(); got != "cancelled" {
		t.Errorf("Cancelled.String() = %q", got)
	}
}

// Fail ends a run with the driver's error; Fail(nil) with ErrDriverFailed.
func TestMachineFail(t *testing.T) {
	plan := load(t, "loop.wf", loopWF)
	for _, err := range []error{errors.New("disk full"), nil} {
		m, _ := engine.NewMachine(plan, nil, true)
		m.Advance(m.Ready())
		m.Fail(err)
		want := err
		if err == nil {
			want = engine.ErrDriverFailed
		}
		rd := m.Ready()
		if m.Status() != engine.Failed || !errors.Is(m.Err(), want) || rd.Status != engine.Failed {
			t.Fatalf("Fail(%v): %s, %v", err, m.Status(), m.Err())
		}
		if len(rd.Events) != 1 || rd.Events[0].Type != engine.RunFailed {
			t.Fatalf("Fail(%v): events %v", err, rd.Events)
		}
	}
}

// A Runner's run whose context is cancelled ends Cancelled (not Failed),
// with the node it stopped at; its thread's run is left to resume unless
// the cause is ErrRunCancelled, which Threads records as the run's end.
func TestCancelledRuns(t *testing.T) {
	plan := load(t, "loop.wf", loopWF)
	var keys []string
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	r := stepRunner(&keys, &mu, func(i int64) {
		if i == 3 {
			cancel()
		}
	})
	res, err := r.Run(ctx, plan, nil, nil)
	var ne *engine.NodeError
	if res.Status != engine.Cancelled || !errors.Is(err, context.Canceled) || !errors.As(err, &ne) || ne.Node != "step" {
		t.Fatalf("cancelled run: %s, %v", res.Status, err)
	}

	stores(t, func(t *testing.T, open func() store.Store) {
		for _, dur := range []engine.Durability{engine.Sync, engine.Async} {
			id := fmt.Sprintf("c%d", dur)
			cctx, cancel := context.WithCancelCause(context.Background())
			th := &engine.Threads{Runner: stepRunner(&keys, &mu, func(i int64) {
				if i == 3 {
					cancel(engine.ErrRunCancelled)
				}
			}), Store: open(), Durability: dur}
			res, err := th.Run(cctx, plan, id, nil, nil, nil)
			if res.Status != engine.Cancelled || !errors.Is(err, engine.ErrRunCancelled) {
				t.Fatalf("cancelled thread run: %s, %v", res.Status, err)
			}
			ts, err := th.Load(context.Background(), id)
			if err != nil || ts.Status() != engine.Cancelled {
				t.Fatalf("recorded: %v, %v", ts.Status(), err)
			}
			rn, err := th.Store.Run(context.Background(), ts.Run)
			if err != nil || rn.Status != "cancelled" {
				t.Fatalf("run row: %+v, %v", rn, err)
			}
			var te *engine.ThreadError
			if _, err := th.Resume(context.Background(), plan, id, nil, nil); !errors.As(err, &te) || te.Status != engine.Cancelled {
				t.Fatalf("resume of a cancelled run: %v", err)
			}
			th.Runner = stepRunner(&keys, &mu, nil)
			if res, err := th.Run(context.Background(), plan, id, nil, nil, nil); err != nil || res.Status != engine.Completed || res.Run != 2 {
				t.Fatalf("new run after a cancelled one: %v, %v", res, err)
			}
		}
	})
}

// Record puts a driver's event (an action's progress) in the run's
// stream, numbered after the machine's own, and only when tracing; Note
// adds a task's notices to the next Ready.
func TestMachineRecord(t *testing.T) {
	plan := load(t, "loop.wf", loopWF)
	m, _ := engine.NewMachine(plan, nil, true)
	rd := m.Ready()
	last := rd.Events[len(rd.Events)-1].Seq
	m.Record(engine.Event{Type: engine.ActionEvent, Node: "step", Kind: "log", Data: flow.StringValue("hi")})
	m.Note(engine.Notice{Node: "step", Step: 1, Message: "cut"})
	m.Advance(rd)
	m.Complete(rd.Tasks[0].ID, []flow.Value{flow.IntValue(0)}, nil)
	rd = m.Ready()
	if len(rd.Events) < 2 || rd.Events[0].Type != engine.ActionEvent || rd.Events[0].Seq != last+1 || rd.Events[1].Seq != last+2 {
		t.Fatalf("events after Record: %v", rd.Events)
	}
	if len(rd.Notices) != 1 || rd.Notices[0].Message != "cut" || len(m.Notices()) != 1 {
		t.Fatalf("notices after Note: %v, %v", rd.Notices, m.Notices())
	}
	if rd.Delta.Control.Events != rd.Events[len(rd.Events)-1].Seq {
		t.Fatalf("Control.Events = %d, last Seq %d", rd.Delta.Control.Events, rd.Events[len(rd.Events)-1].Seq)
	}
	quiet, _ := engine.NewMachine(plan, nil, false)
	quiet.Record(engine.Event{Type: engine.ActionEvent})
	if rd := quiet.Ready(); len(rd.Events) != 0 || rd.Delta.Control.Events != 0 {
		t.Fatalf("a machine that does not trace recorded %v", rd.Events)
	}
}
