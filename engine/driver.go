package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/weftlang/weft/flow"
)

// Ready is what a Machine asks of its driver at one point of a run: the
// tasks to carry out, the events to emit and the record to persist. A
// driver takes one with Machine.Ready, carries it out, and acknowledges it
// with Machine.Advance before it asks for the next (etcd raft's RawNode
// protocol):
//
//	for {
//		rd := m.Ready()
//		persist(rd.Delta)      // or m.Snapshot(), taken now, in its place
//		emit(rd.Events)
//		for _, t := range rd.Tasks {
//			out, err := carryOut(t)
//			m.Complete(t.ID, out, err)
//		}
//		m.Advance(rd)
//		if rd.Status != Running {
//			break
//		}
//	}
//
// A Ready is the driver's: its slices are not changed by the machine,
// except Tasks, whose backing array the next Ready reuses.
type Ready struct {
	// Tasks are the tasks to carry out, handed out once: each is
	// running from this Ready on and must be reported with
	// Machine.Complete (in any order, from the driver's goroutine or
	// serialised with the machine's other calls).
	Tasks []*Task
	// Events are the events recorded since the last Advance (none
	// unless the machine traces). Their Seq numbers the run's events.
	Events []Event
	// Delta is what changed since the last Advance (since the machine
	// started or was restored, the first time): the step's record, as
	// Machine.Delta returns it. State.Fold applies it.
	Delta Delta
	// Status is the run's status; Err why it failed or was cancelled.
	Status Status
	Err    error
	// Notices are the notices since the last Advance (Delta.Control's).
	Notices []Notice

	m       *Machine
	gen     uint64
	whole   []cellValue // the changed cells' values, for the baseline
	path    int         // len(m.path)
	notices int         // len(m.notices)
	events  int         // len(Events)
	maps    []mapMark
	frames  []frameMark
}

// Delta is one step's record: the cells written since the last one and
// the control state (see Machine.Delta and State.Fold).
type Delta struct {
	Cells   []CellValue `json:"cells,omitempty"`
	Control Control     `json:"control"`
}

// mapMark is a map shown in a Ready: Advance drops the first n elements of
// its dirty list, those the Ready listed.
type mapMark struct {
	mp *mapRun
	n  int
}

// Ready returns what the driver must carry out, emit and persist now (see
// the type Ready). It hands out the ready tasks (they are running from
// now on) but changes nothing else: until Advance, a later Ready lists the
// same events and a delta from the same baseline, with what changed
// since. Call Advance with a Ready before asking for the next one.
func (m *Machine) Ready() Ready {
	rd := Ready{Tasks: m.TakeTasks(), Status: m.status, Err: m.err, m: m, gen: m.gen,
		path: len(m.path), notices: len(m.notices), events: len(m.events)}
	rd.Events = slices.Clip(m.events)
	rd.Delta.Cells = m.diff(nil, &rd.whole)
	ctl := &rd.Delta.Control
	m.marks = m.marks[:0]
	m.controlInto(ctl, m.shadowPath, true, ctlReady)
	if len(m.marks) > 0 {
		rd.frames = slices.Clone(m.marks)
		clear(m.marks)
	}
	if len(m.notices) > m.shadowNotices {
		ctl.Notices = slices.Clone(m.notices[m.shadowNotices:])
	}
	rd.Notices = ctl.Notices
	m.eachMap(func(mp *mapRun) {
		if mp.tracked {
			rd.maps = append(rd.maps, mapMark{mp, len(mp.dirty)})
		}
	})
	return rd
}

// Advance acknowledges rd, the last Ready of this machine: its delta is
// persisted and its events emitted. The delta baseline moves to where rd
// left it (the next Ready's delta lists only what changed after rd was
// taken) and its events are forgotten. A Ready of another machine, or one
// acknowledged already, is ignored.
func (m *Machine) Advance(rd Ready) {
	if rd.m != m || rd.gen != m.gen {
		return
	}
	m.gen++
	if m.shadow == nil {
		m.shadow = make([]flow.Value, len(m.cells))
	}
	for _, w := range rd.whole {
		m.shadow[w.cell] = w.v
	}
	m.shadowPath, m.shadowNotices = rd.path, rd.notices
	if rd.events > 0 {
		rest := m.events[rd.events:]
		m.events = nil
		if len(rest) > 0 {
			m.events = slices.Clone(rest)
		}
	}
	for _, mk := range rd.maps {
		mk.mp.listed = true
		mk.mp.dirty = append(mk.mp.dirty[:0], mk.mp.dirty[mk.n:]...)
	}
	for i := range rd.frames {
		rd.frames[i].advance()
	}
}

// Record adds an event from outside the machine (an action's progress, a
// retry) to the run's stream: it is numbered after
// the events recorded before it and comes with them in the next Ready (or
// Events). It does nothing unless the machine traces.
func (m *Machine) Record(e Event) { m.emit(e) }

// Note records notices (fallbacks, warnings: see Notice) that came with a
// task's result, in the run's notices, before its Complete: the next
// Ready's Notices and delta list them.
func (m *Machine) Note(ns ...Notice) { m.notices = append(m.notices, ns...) }

// Trace turns the recording of events on or off, as NewMachine's trace
// does: a machine restored without an Observer and resumed with one.
func (m *Machine) Trace(on bool) {
	m.trace = on
	for _, cm := range m.subs {
		cm.Trace(on)
	}
}

// Fail ends a run that has not ended with status Failed and err as its
// error (Err), recording a RunFailed event: a driver's failure, such as
// a record it could not persist or a limit it enforces. Tasks still
// running are forgotten: their Complete is ignored. A nil err fails the
// run with ErrDriverFailed.
func (m *Machine) Fail(err error) {
	if err == nil {
		err = ErrDriverFailed
	}
	m.fail(err)
}

// Cancel ends a run that has not ended with status Cancelled and cause as
// its error (Err), recording a RunCancelled event: the run was stopped on
// purpose and is over (unlike a driver that stops driving, which leaves
// the run to resume). Tasks still running are forgotten, as by Fail, and
// the questions it waits on are dropped. A nil cause is context.Canceled.
func (m *Machine) Cancel(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	if m.status.Ended() {
		return
	}
	m.end(Cancelled, cause, RunCancelled)
	m.waiting = m.waiting[:0] // a cancelled run asks nothing
}

// ErrDriverFailed is the error of a run failed with Machine.Fail(nil).
var ErrDriverFailed = errors.New("engine: the driver failed the run")

// ErrRunCancelled, as the cause of a run's context (context.WithCancelCause),
// cancels the run for good: the Runner ends it Cancelled, and Threads
// records it so (its thread can start a new run; the cancelled one is not
// resumed). A context cancelled with any other cause (a process shutting
// down, a caller that stops waiting) also ends the Runner's run Cancelled,
// but leaves a thread's run as its last record left it, to be resumed.
var ErrRunCancelled = errors.New("engine: run cancelled")
