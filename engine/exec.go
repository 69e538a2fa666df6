package engine

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/weftlang/weft/flow"
)

// executor carries out the tasks of one drive of a Machine.
//
// Tasks wait in a FIFO queue. Whichever goroutine is free takes the next
// one, runs its action, and then itself reports the result to the machine
// (under mu) and takes the next task: there is no central loop that
// finished branches wait for, so a fast branch goes on while a slow sibling
// works. The driving goroutine is one of these workers.
//
// How many goroutines work adapts to the tasks. Up to GOMAXPROCS work at
// once from the start, which is all that cheap tasks (plain Go functions)
// can use: a fan-out of 100 of them costs about what running them in a
// loop does. When tasks are still queued after spawnDelay, because the
// workers are busy in slow actions (an LLM call, an HTTP request), a
// worker starts for every queued task, so slow actions all run at once,
// whatever their number, within spawnDelay of being ready.
type executor struct {
	st   *runState
	ctx  context.Context
	done <-chan struct{} // ctx.Done()

	mu       sync.Mutex // guards everything below, and the machine
	queue    []*Task
	head     int   // queue[head:] is waiting
	running  int   // tasks being carried out
	helpers  int   // goroutines working besides the driver
	eager    int   // helpers that may start at once (GOMAXPROCS-1)
	current  *Task // the task started last, for limit messages
	timer    *time.Timer
	armed    bool
	finished bool
	wake     chan struct{} // tells the driver there is work, or the run settled
	idle     bool          // the driver waits on wake
	box      callBox       // the driving goroutine's Call
}

// spawnDelay is how long a task may wait in the queue before a goroutine
// of its own is started for it.
const spawnDelay = 200 * time.Microsecond

// reset readies ex, new or used by an earlier drive that left nothing
// running (see run), to drive st's machine under ctx. It keeps the queue's
// memory, the wake channel and the timer.
func (ex *executor) reset(ctx context.Context, st *runState) {
	if ex.wake == nil {
		ex.wake = make(chan struct{}, 1)
	}
	select {
	case <-ex.wake:
	default:
	}
	clear(ex.queue)
	ex.st, ex.ctx, ex.done = st, ctx, ctx.Done()
	ex.queue, ex.head, ex.running, ex.helpers, ex.eager = ex.queue[:0], 0, 0, 0, 0
	ex.current, ex.armed, ex.finished, ex.idle = nil, false, false, false
}

// run drives the machine until it settles: completed, failed, waiting, or
// cancelled through ctx. It reports whether the executor, its runState
// and its machine are free for reuse: no helper goroutine is still in an
// action (abandoned after a cancellation) and no spawn timer can fire.
func (ex *executor) run() (reusable bool) {
	ex.mu.Lock()
	ex.enqueue()
	ex.mu.Unlock()
	ex.st.deliver()
	for {
		ex.work(&ex.box)
		ex.mu.Lock()
		select {
		case <-ex.done:
			if ex.st.m.Status() == Running {
				ex.st.limit(context.Cause(ex.ctx), ex.current)
				ex.queue, ex.head = nil, 0
			}
		default:
		}
		settled := ex.settled()
		queued := ex.head < len(ex.queue)
		ex.idle = !settled && !queued
		ex.mu.Unlock()
		ex.st.deliver()
		if settled {
			break
		}
		if queued {
			continue
		}
		select {
		case <-ex.wake:
		case <-ex.done:
		}
	}
	ex.mu.Lock()
	// Helpers still in an action (abandoned after a cancellation, or
	// in a branch that no longer matters) leave the machine alone from
	// now on.
	ex.finished = true
	stopped := true
	if ex.timer != nil {
		// A timer that already fired has a grow on its way unless grow
		// has been and gone (armed is false again).
		stopped = ex.timer.Stop() || !ex.armed
	}
	ex.st.flush()
	reusable = stopped && ex.helpers == 0 && ex.running == 0
	ex.mu.Unlock()
	ex.st.delivered()
	return reusable
}

// settled reports whether the run is over for this drive. mu is held.
func (ex *executor) settled() bool {
	return ex.st.m.Status() != Running || (ex.head == len(ex.queue) && ex.running == 0)
}

// enqueue moves the machine's ready tasks to the queue and makes sure
// someone will take them. mu is held.
func (ex *executor) enqueue() {
	ex.st.flush()
	tasks := ex.st.m.TakeTasks()
	if len(tasks) == 0 {
		return
	}
	if d := ex.st.dur; d != nil && d.bp != nil && d.bp.hold(tasks, func(t *Task) bool { return t.frameOf() == ex.st.m }) {
		return // stopped at a breakpoint: the tasks stay in flight
	}
	if ex.head == len(ex.queue) {
		ex.queue, ex.head = ex.queue[:0], 0
	}
	ex.queue = append(ex.queue, tasks...)
	ex.signal()
	if waiting := len(ex.queue) - ex.head; waiting > 1 {
		for ex.helpers < ex.eager && ex.helpers < waiting-1 {
			ex.helpers++
			go ex.help()
		}
		if !ex.armed {
			ex.armed = true
			if ex.timer == nil {
				ex.timer = time.AfterFunc(spawnDelay, ex.grow)
			} else {
				ex.timer.Reset(spawnDelay)
			}
		}
	}
}

// signal wakes the driver if it waits for work or for the run to settle;
// a driver that is working sees the queue itself. mu is held.
func (ex *executor) signal() {
	if ex.idle {
		ex.idle = false
		select {
		case ex.wake <- struct{}{}:
		default:
		}
	}
}

// grow starts a goroutine for every task still queued: the workers are
// busy in slow actions.
func (ex *executor) grow() {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.armed = false
	if ex.finished {
		return
	}
	for i := ex.head; i < len(ex.queue); i++ {
		ex.helpers++
		go ex.help()
	}
}

// help is a helper goroutine: it works until the queue is empty.
func (ex *executor) help() {
	var box callBox
	ex.work(&box)
	ex.mu.Lock()
	ex.helpers--
	ex.mu.Unlock()
}

// work takes tasks from the queue and carries them out, reporting each
// result to the machine, until the queue is empty or the run is over. box
// is the worker's Call, reused from task to task.
func (ex *executor) work(box *callBox) {
	st := ex.st
	ex.mu.Lock()
	for !ex.finished && st.m.Status() == Running && ex.head < len(ex.queue) {
		t := ex.queue[ex.head]
		ex.queue[ex.head] = nil
		ex.head++
		ex.running++
		ex.current = t
		act, cfg, err := st.action(t)
		key := ""
		if st.dur != nil && err == nil {
			key = st.dur.key(t) // under mu: it reads the frames the task runs in
		}
		var fd *frameDeadline
		if err == nil && t.frameOf() != st.m {
			fd = st.frameDeadline(t)
		}
		ex.mu.Unlock()
		st.deliver()

		var out []flow.Value
		var notices []Notice
		timedOut := false
		if err == nil {
			c := box.prepare(t, cfg)
			c.Key = key
			if fd == nil {
				out, err = st.exec(ex.ctx, t, act, c)
			} else {
				tctx, cancel := context.WithDeadlineCause(ex.ctx, fd.at, fd)
				c.framed = true
				out, err = st.exec(tctx, t, act, c)
				timedOut = context.Cause(tctx) == error(fd)
				cancel()
			}
			notices = c.notices
		}

		ex.mu.Lock()
		if ex.finished {
			break
		}
		ex.running--
		select {
		case <-ex.done:
			// Cancelled or out of time: the driver fails the run.
		default:
			if timedOut && !fd.frame.status.Ended() {
				// The frame ran out of time: it fails, and the
				// WORKFLOW node with it; the task's result is
				// ignored below.
				fd.frame.fail(fd.err(t))
			}
			if notices != nil && err == nil {
				st.m.Note(notices...)
			}
			if st.dur == nil {
				st.m.Complete(t.ID, out, err)
			} else {
				// The task is reused for the token's next node: take
				// what the record names first.
				name, step, item, id := t.Name, t.topStep(), t.Item, t.ID
				top := t.frameOf() == st.m
				st.m.Complete(id, out, err)
				st.dur.commit(ex.ctx, st.m, name, step, item, id, err)
				if st.dur.bp != nil && err == nil {
					st.dur.bp.completed(name, top)
				}
			}
			ex.enqueue()
		}
		if ex.settled() {
			ex.signal()
		}
	}
	ex.mu.Unlock()
	st.deliver()
}

// frameDeadline is when a subworkflow frame a task runs in is out of
// time: its subworkflow's max_time or its WORKFLOW node's timeout, counted
// from when this drive first carried out one of its tasks (the machine
// reads no clock). As the cause of the task's context, it tells the
// frame's deadline from the run's.
type frameDeadline struct {
	at      time.Time
	frame   *Machine
	limit   time.Duration
	timeout bool // the WORKFLOW node's timeout, not the subworkflow's max_time
}

func (d *frameDeadline) Error() string { return "subworkflow out of time" }

// err is the error the frame fails with.
func (d *frameDeadline) err(t *Task) error {
	if d.timeout {
		return &TimeoutError{Node: d.frame.owner.Name, Timeout: d.limit}
	}
	return &LimitError{Limit: LimitMaxTime, Value: d.limit.String(), Node: strings.TrimPrefix(t.Name, d.frame.prefix), Step: t.Step}
}

// frameDeadline returns the earliest deadline of the frames task t runs
// in, or nil if none has one. ex.mu is held.
func (st *runState) frameDeadline(t *Task) *frameDeadline {
	var best *frameDeadline
	for fm := t.frameOf(); fm.top != nil; fm = fm.up {
		mt, nt := fm.plan.MaxTime, fm.owner.Node.Node.Timeout
		if mt <= 0 && nt <= 0 {
			continue
		}
		if st.frameStart == nil {
			st.frameStart = map[*Machine]time.Time{}
		}
		start, ok := st.frameStart[fm]
		if !ok {
			start = time.Now()
			st.frameStart[fm] = start
		}
		for _, l := range [2]struct {
			d       time.Duration
			timeout bool
		}{{mt, false}, {nt, true}} {
			if l.d > 0 && (best == nil || start.Add(l.d).Before(best.at)) {
				best = &frameDeadline{at: start.Add(l.d), frame: fm, limit: l.d, timeout: l.timeout}
			}
		}
	}
	return best
}

// callBox holds a worker's Call and room for up to two outputs, the common
// case.
type callBox struct {
	c   Call
	out [2]flow.Value
}

// prepare readies the box's Call for a task's first attempt.
func (b *callBox) prepare(t *Task, cfg map[string]flow.Value) *Call {
	c := &b.c
	c.Node, c.Action, c.Step, c.Item, c.Attempt = t.Node, t.Node.Node.Action, t.Step, t.Item, 1
	c.Inputs, c.Config, c.Key, c.emit, c.notices, c.name, c.framed = t.Inputs, cfg, "", nil, nil, t.Name, false
	if n := len(t.Node.Outputs); n <= len(b.out) {
		b.out = [2]flow.Value{}
		c.Outputs = b.out[:n:n]
	} else {
		c.Outputs = make([]flow.Value, n)
	}
	return c
}
