package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/weftlang/weft/flow"
)

// BindFunc makes the action for an action bound in a workflow's source (an
// LLM prompt, a question, an HTTP call). It returns an error when it cannot
// carry out that kind of binding.
type BindFunc func(b *flow.Binding) (Action, error)

// Runner drives Machines: it carries out their tasks (concurrently where
// branches or map elements allow), applies per-node timeouts and retries,
// enforces the run's max time, and streams events to an Observer. A Runner
// is safe for concurrent use by many runs, and must not be copied after
// its first run. The action Bind makes for a node is kept and used by
// every later run of the same plan, as a Registry's are: it must be safe
// for concurrent use.
type Runner struct {
	// Registry holds the actions implemented in Go. It wins over Bind.
	Registry *Registry
	// Bind makes actions for Workflow.Bindings; nil leaves bound actions
	// without an implementation.
	Bind BindFunc
	// Sleep waits between retries; nil uses a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Tracer, when set, is told of every run the Runner drives and every
	// attempt of an action (see Tracer); nil traces nothing.
	Tracer Tracer

	bound bindCache // the actions Bind made, kept for later runs
}

// bindCache keeps the action Bind made for each plan node, so that a plan
// run many times binds each node once (an LLM binding parses its prompt
// templates), not once per run. Its keys are weak: the entries of a plan
// go when the plan does, so a service that compiles plans as it goes does
// not accumulate them. Bind's errors are not kept.
type bindCache struct {
	mu sync.Mutex
	m  map[weak.Pointer[flow.PlanNode]]Action
}

func (c *bindCache) get(pn *flow.PlanNode) (Action, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[weak.Make(pn)]
	return a, ok
}

func (c *bindCache) put(pn *flow.PlanNode, a Action) {
	k := weak.Make(pn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return
	}
	if c.m == nil {
		c.m = map[weak.Pointer[flow.PlanNode]]Action{}
	}
	c.m[k] = a
	runtime.AddCleanup(pn, func(k weak.Pointer[flow.PlanNode]) {
		c.mu.Lock()
		delete(c.m, k)
		c.mu.Unlock()
	}, k)
}

// Result is the outcome of a run, or of a run so far when it is Waiting.
//
// A Result is a value the caller owns: its fields are copies and stay as
// they are whatever happens to the run later. A Waiting Result of
// Runner.Run, RunWith or Resume also holds the run's machine, for one
// Runner.Resume: the first Resume that takes the answers takes the run,
// and the Result (with every copy of it) is spent; later Resumes of it
// fail with ErrStale. The machine is dropped, or reused by a later run,
// only when the run has ended and no Result can resume it. A Result of
// Threads holds nothing: its run is resumed from its thread.
type Result struct {
	Status  Status
	Final   string       // the final node that ended the run
	Outputs []NamedValue // the final node's outputs
	Vars    []NamedValue // variables at the end
	Path    []string     // nodes executed, in order
	Steps   int
	Waiting []Pending // the questions a Waiting run asks
	// Paused names the nodes a breakpoint stopped a thread's run before
	// (Breakpoints): the run's Status is Running, and Threads.Resume
	// without answers continues it.
	Paused []string
	Err    error  // why a Failed run failed, or a Cancelled one stopped
	Thread string // the thread the run is kept in (Threads), or ""
	Run    int    // its number in the thread, from 1
	// Notices are the run's fallbacks and warnings, in order (see
	// Notice); nil when there are none. A resumed run's include those
	// of its steps before the resume.
	Notices []Notice

	waiting *waitingRun // a Waiting in-memory run, for Resume; nil otherwise

	// Only while the engine makes the Result (see detach):
	m        *Machine
	reusable bool // nothing of the run is still running: m may be reused once the result is made
}

// waitingRun is the machine of a run that waits for answers, held for
// Runner.Resume by a Result and its copies. The first Resume that takes
// answers takes the machine (m becomes nil), so that nothing a caller
// holds reaches it afterwards; mu serialises Resumes of the same run.
type waitingRun struct {
	mu sync.Mutex
	m  *Machine // nil once a Resume took it
}

// Output returns the final output called name, or null.
func (r *Result) Output(name string) flow.Value {
	for _, o := range r.Outputs {
		if o.Name == name {
			return o.Value
		}
	}
	return flow.Null
}

// Pending is a question a suspended run waits on.
type Pending struct {
	ID       string // the question's id (Task.QuestionID), which answers name
	Node     string
	Question flow.Value
}

// Run runs plan to its end, or until it waits for a person, with the given
// parameters (input_text among them). It returns the Result and, for a
// failed run, its error too (the same as Result.Err). obs may be nil.
func (r *Runner) Run(ctx context.Context, plan *flow.Plan, params map[string]flow.Value, obs Observer) (*Result, error) {
	return r.RunWith(ctx, plan, params, obs, nil)
}

// RunWith is Run with options: opts.Init sets variables' starting values
// and opts.Update writes to them before the first step (RunOptions; Meta
// is ignored). opts may be nil.
func (r *Runner) RunWith(ctx context.Context, plan *flow.Plan, params map[string]flow.Value, obs Observer, opts *RunOptions) (*Result, error) {
	m, err := NewMachineWith(plan, params, obs != nil, opts)
	if err != nil {
		return &Result{Status: Failed, Err: err}, err
	}
	res, err := r.drive(ctx, m, obs, false)
	res.detach()
	return res, err
}

// Resume continues a Waiting run of Run, RunWith or Resume: answers maps
// a question's id (Pending.ID) to the outputs of its node by name.
// Tasks without an answer stay pending. It returns the run's new Result,
// which a run that waits again resumes next.
//
// The first Resume of a Result that takes its answers takes the run: res
// (and every copy of it) is spent, and a later Resume of it, or one that
// ran concurrently and lost, returns res and an error that errors.Is finds
// ErrStale, and changes nothing. Resumes of the same Result may run
// concurrently: they are serialised, and at most one of them takes the
// run. An answer to a question the run does not ask (a *QuestionError),
// or one that does not fit its node's outputs, is an error that changes nothing: res stays waiting
// and can be resumed again. The Result of a run kept in a thread
// (Threads) is refused: resume it with Threads.Resume, which records the
// answers.
func (r *Runner) Resume(ctx context.Context, res *Result, answers map[string]map[string]flow.Value, obs Observer) (*Result, error) {
	switch {
	case res == nil || res.Status != Waiting:
		return res, newKindError(KindEnded, "engine: Resume needs a Waiting result")
	case res.Thread != "":
		return res, newKindError(KindMismatch, fmt.Sprintf("engine: the result is of run %d of thread %s: resume it with Threads.Resume", res.Run, res.Thread))
	case res.waiting == nil:
		return res, newKindError(KindInvalidInput, "engine: Resume needs a Waiting result of Run, RunWith or Resume")
	}
	w := res.waiting
	w.mu.Lock()
	m := w.m
	if m == nil {
		w.mu.Unlock()
		return res, ErrStale
	}
	ids, outs, err := answerOutputs(m, answers)
	if err != nil {
		w.mu.Unlock()
		return res, err
	}
	w.m = nil
	w.mu.Unlock()

	m.Trace(obs != nil)
	for i, id := range ids {
		if err := m.Resume(id, outs[i]); err != nil {
			return res, err // not reached: answerOutputs found the task waiting
		}
	}
	res, err = r.drive(ctx, m, obs, true)
	res.detach()
	return res, err
}

// answerOutputs checks answers against the questions m waits on,
// without changing m, and returns the answered task ids, in task order,
// with their outputs.
func answerOutputs(m *Machine, answers map[string]map[string]flow.Value) ([]int, [][]flow.Value, error) {
	var tasks []*Task
	for _, id := range slices.Sorted(maps.Keys(answers)) {
		i := slices.IndexFunc(m.Waiting(), func(t *Task) bool { return t.QuestionID() == id })
		if i < 0 {
			return nil, nil, questionError(m, id)
		}
		tasks = append(tasks, m.Waiting()[i])
	}
	slices.SortFunc(tasks, func(a, b *Task) int { return cmp.Compare(a.ID, b.ID) })
	ids := make([]int, len(tasks))
	outs := make([][]flow.Value, len(tasks))
	for i, task := range tasks {
		ids[i] = task.ID
		outs[i] = make([]flow.Value, len(task.Node.Outputs))
		c := &Call{Node: task.Node, Outputs: outs[i]}
		if err := c.SetOutputs(answers[task.QuestionID()]); err != nil {
			return nil, nil, err
		}
		var err error
		if outs[i], err = m.conform(task.Node, outs[i]); err != nil {
			return nil, nil, err // an *OutputError: the answer does not fit
		}
	}
	return ids, outs, nil
}

// runState is what one drive of a machine shares between goroutines.
type runState struct {
	r    *Runner
	m    *Machine
	ex   *executor
	obs  Observer
	impl []nodeImpl // per node, resolved lazily
	// subImpl is impl for the nodes of subworkflows, made on first use.
	subImpl map[*flow.PlanNode]*nodeImpl
	// frameStart is when the drive first carried out a task of a frame
	// with a deadline (frameDeadline).
	frameStart map[*Machine]time.Time
	dur        *durable // the thread the run is kept in, or nil
	// abandoned is set when an attempt outlived its timeout and was left
	// running: its action may still read the run's memory.
	abandoned atomic.Bool

	// The events on their way to obs. They are numbered and queued
	// under ex.mu, in order, and delivered outside it by one goroutine
	// at a time: whoever finds events queued and no one delivering
	// delivers them all; the others queue theirs and go on. So a slow
	// Observer holds up only the goroutine that delivers, never the
	// executor's lock or the other branches. The drive waits for the
	// queue to empty before it returns.
	qmu      sync.Mutex // guards queue, spare and draining; taken inside ex.mu, never around it
	qdone    sync.Cond  // on qmu: a goroutine stopped delivering
	queue    []Event
	spare    []Event // the queue's other buffer
	draining bool
}

// observe numbers and queues an event from outside the machine (an
// action's progress, a retry), and delivers the
// queue unless someone else does. An event that comes after the drive
// ended (from an action abandoned at its timeout) is dropped: the run's
// Observer hears nothing once Run has returned.
func (st *runState) observe(e Event) {
	if st.obs == nil {
		return
	}
	ex := st.ex
	ex.mu.Lock()
	if ex.finished {
		ex.mu.Unlock()
		return
	}
	st.m.Record(e)
	st.flush()
	ex.mu.Unlock()
	st.deliver()
}

// flush queues the events the machine recorded. ex.mu is held.
func (st *runState) flush() {
	if st.obs == nil {
		return
	}
	evs := st.m.Events()
	if len(evs) == 0 {
		return
	}
	now := time.Now()
	st.qmu.Lock()
	for _, e := range evs {
		st.queue = append(st.queue, st.stamp(e, now))
	}
	st.qmu.Unlock()
}

// stamp sets an event's time, unless set, and its thread and run.
func (st *runState) stamp(e Event, now time.Time) Event {
	if e.Time.IsZero() {
		e.Time = now
	}
	if d := st.dur; d != nil {
		e.Thread, e.Run = d.ts.Thread, d.info.Number
	}
	return e
}

// deliver delivers the queued events unless another goroutine is at it.
// No lock is held.
func (st *runState) deliver() {
	if st.obs == nil {
		return
	}
	st.qmu.Lock()
	if !st.draining {
		st.drain()
	}
	st.qmu.Unlock()
}

// delivered waits until every queued event has been delivered, delivering
// them itself when no one else is. No lock is held.
func (st *runState) delivered() {
	if st.obs == nil {
		return
	}
	st.qmu.Lock()
	for st.draining {
		st.qdone.Wait()
	}
	st.drain()
	st.qmu.Unlock()
}

// drain delivers the queue until it is empty. qmu is held (and released
// while obs runs); no one else is draining.
func (st *runState) drain() {
	if len(st.queue) == 0 {
		return
	}
	st.draining = true
	for len(st.queue) > 0 {
		batch := st.queue
		st.queue = st.spare[:0]
		st.qmu.Unlock()
		for _, e := range batch {
			st.obs.Observe(e)
		}
		clear(batch)
		st.qmu.Lock()
		st.spare = batch[:0]
	}
	st.draining = false
	st.qdone.Broadcast()
}

func (r *Runner) drive(ctx context.Context, m *Machine, obs Observer, resumed bool) (*Result, error) {
	return r.driveIn(ctx, m, obs, nil, resumed)
}

// driveIn drives m; with dur, every step is committed to its thread.
// resumed says the drive goes on with a run begun before (for Tracer).
func (r *Runner) driveIn(ctx context.Context, m *Machine, obs Observer, dur *durable, resumed bool) (*Result, error) {
	plan := m.plan
	var endRun func(Status, error)
	if r.Tracer != nil {
		ctx, endRun = r.Tracer.StartRun(ctx, tracedRun(m, dur, resumed))
	}
	if plan.MaxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, plan.MaxTime, errMaxTime)
		defer cancel()
	}
	sc, _ := scratchPool.Get().(*runScratch)
	if sc == nil {
		sc = new(runScratch)
	}
	impl := sc.st.impl
	if cap(impl) >= len(plan.Nodes) {
		impl = impl[:len(plan.Nodes)]
	} else {
		impl = make([]nodeImpl, len(plan.Nodes))
	}
	// abandoned is false: only unabandoned scratch is pooled
	sc.st = runState{r: r, m: m, ex: &sc.ex, obs: obs, impl: impl, dur: dur, queue: sc.st.queue[:0], spare: sc.st.spare[:0]}
	sc.st.qdone.L = &sc.st.qmu
	sc.ex.reset(ctx, &sc.st)
	reusable := sc.ex.run() && !sc.st.abandoned.Load()
	res := sc.st.result()
	if endRun != nil {
		endRun(res.Status, res.Err)
	}
	res.reusable = reusable
	if reusable {
		clear(sc.st.impl)
		sc.st = runState{impl: sc.st.impl, queue: sc.st.queue[:0], spare: sc.st.spare[:0]}
		sc.ex.st, sc.ex.ctx, sc.ex.done, sc.ex.current = nil, nil, nil, nil
		sc.ex.box = callBox{}
		scratchPool.Put(sc)
	}
	return res, m.Err()
}

// runScratch is what a drive needs besides its machine. scratchPool keeps
// those of drives that left nothing running (executor.run), for later
// drives; sync.Pool drops what is not reused.
type runScratch struct {
	st runState
	ex executor
}

var scratchPool sync.Pool

// detach makes res the caller's: a Waiting in-memory run keeps its
// machine for Resume (in res.waiting); the machine of an ended run that
// left nothing running goes back to machinePool, since nothing can reach
// it any more; a Waiting thread's machine is dropped (its run resumes
// from the thread).
func (res *Result) detach() {
	m := res.m
	res.m = nil
	switch {
	case m == nil:
	case res.Status == Waiting:
		if res.Thread == "" {
			res.waiting = &waitingRun{m: m}
		}
	case res.reusable:
		m.release()
	}
}

var errMaxTime = errors.New("max_time exceeded")

func (st *runState) limit(cause error, t *Task) {
	node, step := "", st.m.Steps()
	if t != nil {
		node, step = t.Name, t.Step
	}
	if errors.Is(cause, errMaxTime) {
		st.m.Fail(&LimitError{Limit: LimitMaxTime, Value: st.m.plan.MaxTime.String(), Node: node, Step: step})
		return
	}
	st.m.Cancel(&NodeError{Node: node, Step: step, Err: fmt.Errorf("run cancelled: %w", cause)})
}

func (st *runState) result() *Result {
	m := st.m
	res := &Result{Status: m.Status(), Vars: m.Vars(), Path: m.Path(), Steps: m.Steps(), Err: m.Err(), Notices: m.Notices(), m: m}
	if pn, out := m.Final(); pn != nil {
		res.Final = pn.Name
		res.Outputs = named(outputNames(pn), out)
	}
	for _, t := range m.Waiting() {
		res.Waiting = append(res.Waiting, Pending{ID: t.QuestionID(), Node: t.Name, Question: question(t)})
	}
	return res
}

// action resolves the implementation of a task's node, once per run.
// ex.mu is held.
func (st *runState) action(t *Task) (Action, map[string]flow.Value, error) {
	pn := t.Node
	var im *nodeImpl
	if fm := t.frameOf(); fm == st.m {
		im = &st.impl[pn.Index]
	} else {
		// A node of a subworkflow: its plan's indices are its own.
		if st.subImpl == nil {
			st.subImpl = map[*flow.PlanNode]*nodeImpl{}
		}
		if im = st.subImpl[pn]; im == nil {
			im = &nodeImpl{}
			st.subImpl[pn] = im
		}
	}
	if !im.done {
		im.act, im.cfg, im.err = st.resolve(t.frameOf().plan, pn)
		im.done = true
	}
	return im.act, im.cfg, im.err
}

// nodeImpl is a node's implementation as resolved for one run.
type nodeImpl struct {
	act  Action
	cfg  map[string]flow.Value
	err  error
	done bool
}

// resolve finds the implementation of a node of plan: a registered Go
// action (also under the node's own name for implementations written on
// the node), or an action bound in the source. (A subworkflow's node runs
// in the machine, as a frame: it has no action.)
func (st *runState) resolve(plan *flow.Plan, pn *flow.PlanNode) (Action, map[string]flow.Value, error) {
	n := pn.Node
	b := plan.Workflow.Binding(n.Action)
	cfg := n.Config
	if b != nil && len(b.Config) > 0 {
		cfg = make(map[string]flow.Value, len(b.Config)+len(n.Config))
		for k, v := range b.Config {
			cfg[k] = v
		}
		for k, v := range n.Config {
			cfg[k] = v
		}
	}
	switch {
	case n.Action == "" && n.Type == flow.Human:
		// A question written on the node; a registration under the
		// node's name (a stub, a Go implementation) wins.
		if a, ok := st.r.Registry.Lookup(pn.Name); ok {
			return a, cfg, nil
		}
		return Ask(), cfg, nil
	}
	name := n.Action
	if name == "" {
		// An implementation written on the node itself (an LLM prompt, a
		// tool): registered or stubbed under the node's name.
		name = pn.Name
		if b == nil && n.Type != flow.Function {
			b = &flow.Binding{Name: pn.Name, Type: n.Type, Config: n.Config, ConfigPos: n.ConfigPos, Pos: n.Pos}
		}
	}
	if a, ok := st.r.Registry.Lookup(name); ok {
		return a, cfg, nil
	}
	if b != nil && st.r.Bind != nil {
		if a, ok := st.r.bound.get(pn); ok {
			return a, cfg, nil
		}
		a, err := st.r.Bind(b)
		if err != nil {
			return nil, cfg, fmt.Errorf("action %s (%s binding at %s): %w", name, b.Type, b.Pos, err)
		}
		st.r.bound.put(pn, a)
		return a, cfg, nil
	}
	return nil, cfg, &UnknownActionError{Node: pn.Name, Action: name}
}

// exec carries out one task: its action (resolved by the caller on the
// driving goroutine) with the prepared Call, its retries and its timeout.
// It never panics: a panicking action fails its attempt.
func (st *runState) exec(ctx context.Context, t *Task, act Action, c *Call) ([]flow.Value, error) {
	n := t.Node.Node
	if st.obs != nil {
		c.emit = func(kind string, data flow.Value) {
			st.observe(Event{Type: ActionEvent, Step: t.Step, Node: t.Name, Task: t.ID, Item: t.Item, Kind: kind, Data: data})
		}
	}
	actx, end := st.startAttempt(ctx, c)
	err := st.attempt(actx, act, c, n.Timeout)
	if err == nil {
		if end != nil {
			end(AttemptEnd{})
		}
		return c.Outputs, nil
	}
	out, last, end, err := st.retry(ctx, t, act, c, err, end)
	if err != nil && t.Node.Fallback != nil && st.fallBack(ctx, t, c, err) {
		if end != nil {
			end(AttemptEnd{Err: last, Fallback: true})
		}
		return c.Outputs, nil
	}
	if end != nil {
		end(AttemptEnd{Err: last})
	}
	return out, err
}

// retry handles a failed first attempt: an interrupt or a cancelled run
// ends the task, otherwise the node's retry policy decides. end is the
// failed attempt's Tracer end, or nil: retry ends each attempt it
// decides to follow with another, and returns the outcome, the last
// attempt's own error and that attempt's end, nil when the last attempt
// succeeded (retry ended it) or without a Tracer.
func (st *runState) retry(ctx context.Context, t *Task, act Action, c *Call, err error, end func(AttemptEnd)) (out []flow.Value, last error, lastEnd func(AttemptEnd), _ error) {
	n := t.Node.Node
	attempts := 1
	if n.Retry != nil && n.Retry.MaxAttempts > 1 {
		attempts = n.Retry.MaxAttempts
	}
	for attempt := 1; ; attempt++ {
		if _, ok := isInterrupt(err); ok {
			return nil, err, end, err
		}
		if ctx.Err() != nil || attempt >= attempts {
			last = err
			if attempts > 1 {
				err = fmt.Errorf("after %d attempts: %w", attempt, err)
			}
			return nil, last, end, err
		}
		delay := n.Retry.Delay(attempt + 1)
		st.observe(Event{Type: NodeRetrying, Step: t.Step, Node: t.Name, Task: t.ID, Item: t.Item, Attempt: attempt, Delay: delay, Error: err.Error()})
		if end != nil {
			end(AttemptEnd{Err: err, Retrying: true, Delay: delay})
		}
		sleep := st.r.Sleep
		if sleep == nil {
			sleep = sleepCtx
		}
		if serr := sleep(ctx, delay); serr != nil {
			return nil, nil, nil, serr
		}
		c.Attempt = attempt + 1
		clear(c.Outputs)
		c.notices = nil
		var actx context.Context
		actx, end = st.startAttempt(ctx, c)
		if err = st.attempt(actx, act, c, n.Timeout); err == nil {
			if end != nil {
				end(AttemptEnd{})
			}
			return c.Outputs, nil, nil, nil
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// TimeoutError is a node attempt that outlived the node's timeout.
type TimeoutError struct {
	Node    string
	Timeout time.Duration
}

// Error names the node and the timeout.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("node %s timed out after %s", e.Node, e.Timeout)
}

// PanicError is an action that panicked; the run reports it as the
// node's error instead of crashing.
type PanicError struct {
	Action string
	Value  any
	Stack  string
}

// Error names the action and the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("action %s panicked: %v", e.Action, e.Value) }

func safeRun(ctx context.Context, act Action, c *Call) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Action: c.Action, Value: p, Stack: string(debug.Stack())}
		}
	}()
	return act.Run(ctx, c)
}

// attempt runs one attempt of an action. Without a deadline it is a plain
// call; with one, attemptPreempt runs it so the deadline can preempt it.
// The two are separate so that the common path keeps a small stack frame:
// tasks of parallel branches start on fresh goroutines with small stacks.
func (st *runState) attempt(ctx context.Context, act Action, c *Call, timeout time.Duration) error {
	if timeout <= 0 && st.m.plan.MaxTime <= 0 && !c.framed {
		return safeRun(ctx, act, c)
	}
	return st.attemptPreempt(ctx, act, c, timeout)
}

// attemptPreempt runs an attempt on its own goroutine and stops waiting
// for it when the node's timeout or the run's max time passes, even if the
// action ignores its context.
func (st *runState) attemptPreempt(ctx context.Context, act Action, c *Call, timeout time.Duration) error {
	actx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out := make([]flow.Value, len(c.Outputs))
	inner := *c
	inner.Outputs = out
	done := make(chan error, 1)
	go func() { done <- safeRun(actx, act, &inner) }()
	select {
	case err := <-done:
		if err == nil {
			copy(c.Outputs, out)
			c.notices = inner.notices
		}
		return err
	case <-actx.Done():
		// The action goes on, on its goroutine, with the task's inputs:
		// nothing of this run may be reused.
		st.abandoned.Store(true)
		if ctx.Err() == nil {
			return &TimeoutError{Node: c.nodeName(), Timeout: timeout}
		}
		return context.Cause(ctx)
	}
}
