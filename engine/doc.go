// Package engine runs compiled workflows (flow.Plan). It has three layers,
// each usable on its own:
//
//   - Machine is the core: a pure, deterministic state machine that runs
//     one Plan. It does no I/O, starts no goroutines and reads no clock.
//     It hands out Tasks (action calls), takes their results (Complete,
//     or Resume for a person's answer), routes, applies updates and
//     reducers, and records Events. Its whole state is data (State), and
//     each step's change is data too (Delta), so a run can be kept and
//     restored anywhere (RestoreMachine). A WORKFLOW node's subworkflow
//     runs inside the same Machine, as a frame: its tasks come out of
//     Ready like any other, named by their path (Task.Name, "outer/inner"),
//     and its state is part of the run's (TaskState.Sub).
//   - Runner is a driver: it carries out a Machine's tasks with the
//     actions of its Registry (concurrently where branches and map
//     elements allow), applies timeouts, retries and the run's max time,
//     and delivers events to an Observer. A Waiting Result resumes in
//     memory with Runner.Resume.
//   - Threads makes runs durable: every step is a record in a store.Store,
//     a run that waits for a person holds no goroutine, and any process
//     resumes it (Threads.Resume), after a crash too.
//
// # Driving a Machine
//
// A driver outside this package (a queue worker, a test) runs a Machine
// with the protocol of etcd raft's RawNode: Machine.Ready returns one
// Ready with everything to do now, and Machine.Advance acknowledges it.
//
//	m, err := engine.NewMachine(plan, params, true)
//	for {
//		rd := m.Ready()
//		persist(rd.Delta)          // State.Fold applies it; or keep m.Snapshot() instead
//		emit(rd.Events)            // Seq numbers them, 1, 2, 3, ... per run
//		for _, t := range rd.Tasks {
//			out, err := carryOut(t)    // an *Interrupt error: the task waits for a person
//			m.Complete(t.ID, out, err)
//		}
//		m.Advance(rd)
//		if rd.Status != engine.Running {
//			break // Completed, Failed, Cancelled, or Waiting for Resume
//		}
//	}
//
// The tasks of a Ready are handed out once and are running from then on;
// its delta and events stay the machine's "last unacknowledged" until
// Advance, which moves the delta baseline to the point the Ready was taken
// and forgets its events. Complete may be called between Ready and
// Advance: what it changes goes in the next Ready. Snapshot has no side
// effects: a driver that keeps a snapshot in place of a delta takes it
// between Ready and Advance. A driver that cannot carry on calls Fail (the
// run ends Failed with its error, a record it could not write, say) or
// Cancel (the run is stopped on purpose and ends Cancelled). A driver
// that just stops driving leaves the run as its last record left it, to
// be restored and driven on. Record adds a driver's own events (an
// action's progress) to the run's stream and Note a task's notices.
// Runner uses the finer-grained TakeTasks, Events, Record, Note and
// Complete, and for Threads an allocation-free form of Ready's delta.
//
// # Lifetimes
//
// As with errgroup, whoever starts a run owns it until it returns. A
// Machine belongs to its driver; it is not safe for concurrent use, and a
// driver that carries out tasks concurrently serialises its calls. Runner
// and Threads own the machines they make: Run, RunWith and Resume return
// only when the drive is over and every event was delivered, and nothing
// of the run runs on afterwards except an action abandoned at its
// timeout, which no longer reaches the run.
//
// A Result is a value the caller owns. A Waiting Result of Runner.Run,
// RunWith or Resume also holds its run, for one Runner.Resume: the first
// Resume that takes its answers spends it (and every copy of it); a later
// Resume of it returns ErrStale. A Result of Threads holds nothing: its
// run is resumed from its thread.
//
// # Concurrency
//
// Runner and Threads are safe for concurrent use by many runs (Threads:
// on different threads; a thread has one driver at a time). An Observer
// receives a run's events in order, from one goroutine at a time, outside
// the executor's lock: a slow Observer delays the delivery of later events,
// not the run's other branches. Actions must be safe for concurrent use:
// parallel branches and map elements call them at once.
//
// # Events
//
// Every Event of a run has a Seq, 1 for RunStarted and one more for each
// event after, in the order the Observer receives them; the Thread and Run
// fields name the thread and run number of a run kept by Threads. The
// count is part of the run's state (Control.Events), so a run resumed
// from its thread, in this process or another, numbers its events on
// from where its last record left them: (Thread, Run, Seq) names an event.
// Events are recorded (and counted) while the run has an Observer; a
// record written before Control.Events existed restores as 0, and the
// resumed run numbers its events from 1 again. The events between a run's
// last record and a crash are numbered again when it resumes.
package engine
