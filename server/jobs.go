package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
)

// newRun is a run just created: its job and its stream.
type newRun struct {
	job    *store.Job
	body   *runBody
	stream *runStream
}

// location is the path of a run, for Content-Location.
func (n *newRun) location(stateless bool) string {
	if stateless {
		return "/runs/" + n.job.ID
	}
	return "/threads/" + n.job.ThreadID + "/runs/" + n.job.ID
}

// createRun checks a run request, applies its multitask strategy, stores
// its job as pending and submits it. thread "" is a stateless run: a
// thread is made for it (and deleted after, unless on_completion keep).
func (s *Server) createRun(ctx context.Context, thread string, r *http.Request) (_ *newRun, err error) {
	defer func() {
		if err == nil {
			s.threadWatch.wake(thread) // its thread streams follow it
		}
	}()
	var b runBody
	if err := decode(r, &b); err != nil {
		return nil, err
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	a, err := s.assistant(b.AssistantID)
	if err != nil {
		return nil, err
	}
	plan := a.Workflow.Plan
	// What the request alone says is checked before any thread is made.
	if _, err := inputOf(plan, b.Input); err != nil {
		return nil, err
	}
	if err := checkBreakpoints(plan, &b); err != nil {
		return nil, err
	}
	made := false
	var thr *store.Thread // as read or made here, for labelThread
	if thread == "" {
		if b.OnCompletion == "" {
			b.OnCompletion = "delete"
		}
		thread = uuid.NewString()
		thr = &store.Thread{ID: thread}
		if err := s.opts.Store.CreateThread(ctx, thr); err != nil {
			return nil, err
		}
		made = true
	} else if thr, err = s.opts.Store.Thread(ctx, thread); err != nil {
		if !errors.Is(err, store.ErrNotFound) || b.IfNotExists != "create" {
			return nil, threadErr(thread, err)
		}
		thr = &store.Thread{ID: thread}
		if err := s.opts.Store.CreateThread(ctx, thr); err != nil && !errors.Is(err, store.ErrExists) {
			return nil, err
		} else if err == nil {
			made = true
		} else {
			thr = nil // made by another request meanwhile: read it
		}
	}
	if made {
		// A refused run leaves no thread it made behind.
		defer func() {
			if err != nil {
				if derr := s.opts.Store.DeleteThread(context.WithoutCancel(ctx), thread); derr != nil {
					err = errors.Join(err, fmt.Errorf("deleting the thread made for the run: %w", derr))
				}
			}
		}()
	}
	strategy := b.MultitaskStrategy
	if strategy == "" {
		strategy = strategyEnqueue
		b.MultitaskStrategy = strategy
	}
	// The busy check, the multitask strategy and the new job are one step
	// per thread: two runs at once must not both find the thread free.
	defer s.admit.lock(thread)()
	// (The thread was read or made above: the store need not check it
	// is there. Deleted since, the job's create finds it gone.)
	busy, err := s.jobs.Jobs(ctx, store.JobQuery{ThreadID: thread, ThreadKnown: true, Status: inflight})
	if err != nil {
		return nil, err
	}
	var pend *readPending // the thread's questions, when read here
	if b.Command != nil && len(b.Command.Resume) > 0 && len(busy) == 0 {
		// Typed now, so that a wrong answer is this request's 422.
		list, err := s.opts.Store.Pending(ctx, thread)
		if err != nil {
			return nil, err
		}
		if _, err := answersOf(plan, list, b.Command.Resume); err != nil {
			return nil, err
		}
		pend = &readPending{list: list}
	}
	if len(busy) > 0 {
		// A run of the thread may be writing its row (its spec): read it
		// again when labelling.
		thr = nil
		switch strategy {
		case strategyReject:
			return nil, errorf(http.StatusUnprocessableEntity, "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.")
		case strategyInterrupt, strategyRollback:
			cause := errInterruptedByNewRun
			if strategy == strategyRollback {
				cause = errRolledBackByNewRun
			}
			for _, j := range busy {
				if err := s.cancelJob(ctx, j, cause, strategy == strategyRollback); err != nil {
					return nil, err
				}
			}
		}
	}
	// The trace context is the request's headers', never the body's.
	b.Trace, b.Link = s.traceOf(ctx), nil
	if b.Command != nil && len(b.Command.Resume) > 0 && string(b.Command.Resume) != "null" {
		if b.Link, err = s.firstDriveTrace(ctx, thread); err != nil {
			return nil, err
		}
	}
	md := map[string]any{}
	for k, v := range b.Metadata {
		md[k] = v
	}
	md["graph_id"], md["assistant_id"] = a.GraphID, a.ID
	meta, _ := json.Marshal(md)
	req, err := json.Marshal(&b)
	if err != nil {
		return nil, err
	}
	job := &store.Job{ID: uuid.NewString(), ThreadID: thread, Assistant: a.ID, Strategy: strategy, Request: req, Meta: meta}
	if q, ok := s.exec.(JobQueuer); ok {
		// The job's row and its queue entry in one transaction: the
		// run may start at once, so the thread is labelled first.
		if err := s.labelThread(ctx, thread, thr, a); err != nil {
			return nil, err
		}
		var st *runStream
		if !s.shared {
			st = s.streams.open(job.ID)
		}
		if err := q.CreateAndSubmit(ctx, job); err != nil {
			return nil, err
		}
		if s.shared {
			st = s.mirror(job.ID)
		}
		return &newRun{job: job, body: &b, stream: st}, nil
	}
	if p, ok := s.exec.(*Pool); ok && len(busy) == 0 && !s.shared {
		// Nothing of the thread in flight, and the pool can start the
		// job at once: it is stored already claimed (running), the
		// write its worker's claim would have made. A process killed
		// before its end leaves it running, which the next one's
		// recover takes back, as a job claimed the usual way.
		if r, ok := p.reserve(JobRef{ID: job.ID, Thread: thread}); ok {
			return s.createClaimed(ctx, r, job, thr, a, &b, pend)
		}
	}
	if err := s.jobs.CreateJob(ctx, job); err != nil {
		return nil, err
	}
	if err := s.labelThread(ctx, thread, thr, a); err != nil {
		return nil, err
	}
	if s.shared {
		if err := s.exec.Submit(ctx, JobRef{ID: job.ID, Thread: thread}); err != nil {
			return nil, err
		}
		return &newRun{job: job, body: &b, stream: s.mirror(job.ID)}, nil
	}
	st := s.streams.open(job.ID)
	if err := s.exec.Submit(ctx, JobRef{ID: job.ID, Thread: thread}); err != nil {
		return nil, err
	}
	return &newRun{job: job, body: &b, stream: st}, nil
}

// createClaimed labels the thread, stores job already claimed and
// starts it in the slot r holds; r is given back on a failure. The
// thread is labelled first (the run starts at once), as for a
// JobQueuer.
//
// pend, when not nil, are the thread's questions as the request read
// them: the run, started at once with nothing of its thread in flight,
// takes its answers to them without reading them again (the engine
// checks them against the state it loads under the thread's lease).
func (s *Server) createClaimed(ctx context.Context, r *reservation, job *store.Job, thr *store.Thread, a *Assistant, b *runBody, pend *readPending) (_ *newRun, err error) {
	defer func() {
		if err != nil {
			r.undo()
		}
	}()
	if err := s.labelThread(ctx, job.ThreadID, thr, a); err != nil {
		return nil, err
	}
	job.Status = store.JobRunning
	if err := s.jobs.CreateJob(ctx, job); err != nil {
		return nil, err
	}
	st := s.streams.open(job.ID)
	claimed := *job // the worker's own copy
	r.start(func(ctx context.Context, _ JobRef) error { return s.executeClaimed(ctx, &claimed, pend) })
	// The reply's, as a job created pending and claimed at once: as
	// LangGraph's server, a new run's reply says pending.
	job.Status = store.JobPending
	return &newRun{job: job, body: b, stream: st}, nil
}

// labelThread records on the thread the graph and assistant it runs, as
// LangGraph's server does. thr is the thread as the request read or made
// it, or nil to read it.
//
// A thread no run ever ran in (no workflow, no spec), which no other job
// holds (thr given), also gets the workflow and spec the run's Start
// keeps on it, in the same write: Start then finds them and writes
// nothing.
func (s *Server) labelThread(ctx context.Context, thread string, thr *store.Thread, a *Assistant) error {
	free := thr != nil
	if thr == nil {
		var err error
		if thr, err = s.opts.Store.Thread(ctx, thread); err != nil {
			return err
		}
	}
	g, _ := json.Marshal(a.GraphID)
	id, _ := json.Marshal(a.ID)
	spec := free && thr.Workflow == "" && len(thr.Spec) == 0
	if thr.Meta["graph_id"] == string(g) && thr.Meta["assistant_id"] == string(id) && !spec {
		return nil
	}
	if spec {
		if err := s.opts.Service.ThreadSpec(ctx, thr, service.StartRequest{Workflow: a.Workflow, Components: a.Components, ContextTokens: a.ContextTokens}); err != nil {
			return err
		}
	}
	if thr.Meta == nil {
		thr.Meta = map[string]string{}
	}
	thr.Meta["graph_id"], thr.Meta["assistant_id"] = string(g), string(id)
	thr.Updated = time.Time{}
	return s.opts.Store.UpdateThread(ctx, thr)
}

// cancelJob cancels a job: one pending is ended without running, one
// running here is stopped with cause (its thread's run ends cancelled),
// one ended is left as it is. With remove, the job is deleted too. A
// cause that wraps engine.ErrRunRolledBack also undoes what the run did:
// the engine restores the thread to its state before the run's drive
// began, before the run's end is recorded here. A job
// running in another process is a conflict: this one cannot stop it.
func (s *Server) cancelJob(ctx context.Context, j *store.Job, cause error, remove bool) error {
	_, err := s.jobs.SetJob(ctx, j.ID, []store.JobStatus{store.JobPending}, store.JobInterrupted, "", cause.Error())
	var conflict *store.JobConflictError
	switch {
	case err == nil:
		if p, ok := s.exec.(interface{ Drop(JobRef) bool }); ok {
			p.Drop(JobRef{ID: j.ID, Thread: j.ThreadID})
		}
		if st := s.streams.get(j.ID); st != nil && !s.shared {
			st.finish(s.interruptedReply(cause), s.now())
		}
	case !errors.As(err, &conflict):
		return err
	case conflict.Status != store.JobRunning:
		// Ended meanwhile: nothing to stop.
	case s.exec.Cancel(j.ID, cause):
		// The job's work ends it; wait for that, so that the next run
		// finds the thread free.
		if st := s.streamOf(j.ID); st != nil {
			if _, err := st.wait(ctx); err != nil {
				return err
			}
		}
	default:
		return errorf(http.StatusConflict, "run %s is running in another process, which this one cannot stop", j.ID)
	}
	if remove {
		if err := s.jobs.DeleteJob(ctx, j.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

// interruptedReply is what waiting for a cancelled run answers.
func (s *Server) interruptedReply(cause error) []byte {
	return errorReply("Cancelled", cause.Error())
}

// execute is the Work of the server's executor: it claims a pending job
// and runs it to its end, recording the outcome in the job and its
// stream.
func (s *Server) execute(ctx context.Context, ref JobRef) error {
	bg := context.WithoutCancel(ctx)
	job, err := s.jobs.SetJob(bg, ref.ID, []store.JobStatus{store.JobPending}, store.JobRunning, "", "")
	if err != nil {
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			return nil // cancelled, deleted, or taken by another worker
		}
		s.log.Error("claiming a run", "run", ref.ID, "err", err)
		return err
	}
	return s.executeClaimed(ctx, job, nil)
}

// readPending is a thread's questions as a request read them.
type readPending struct{ list []*store.Pending }

// executeClaimed runs a job its worker claimed (stored running) to its
// end, recording the outcome in the job and its stream. pend, when not
// nil, are the thread's questions as the job's request read them.
func (s *Server) executeClaimed(ctx context.Context, job *store.Job, pend *readPending) error {
	bg := context.WithoutCancel(ctx)
	var st *runStream
	if s.shared {
		// Its readers, in any process, follow the store's log.
		st = newRunStream(job.ID)
		st.log = newEventLog(s.events, job.ID, st.epoch, s.log)
	} else {
		st = s.streams.open(job.ID)
	}
	var end *store.JobChange // the job's end, when the run's end recorded it
	b := decodeRunBody(job)  // decoded once, for drive and for the end
	status, final, errText := s.drive(ctx, job, b, st, &end, pend)
	if status == jobRetry {
		s.log.Warn("a run could not go on, the store being unreachable: it goes back to the queue", "run", job.ID, "thread", job.ThreadID, "err", errText)
		if st.log != nil {
			st.log.drain()
		}
		if err := s.setJob(bg, job.ID, []store.JobStatus{store.JobRunning}, store.JobPending, ""); err != nil {
			s.log.Error("returning a run to the queue", "run", job.ID, "err", err)
		}
		return nil
	}
	if status == jobLost {
		s.log.Warn("a run's thread was taken over by another process, which goes on with it", "run", job.ID, "thread", job.ThreadID, "err", errText)
		if st.log != nil {
			st.log.drain()
		}
		return nil
	}
	if errors.Is(context.Cause(ctx), ErrServerClosing) && status != store.JobSuccess {
		// Left for the next process: the engine recorded every step.
		if err := s.setJob(bg, job.ID, []store.JobStatus{store.JobRunning}, store.JobPending, ""); err != nil {
			s.log.Error("returning a run to the queue", "run", job.ID, "err", err)
		}
		if st.log != nil {
			// Another process goes on with it, in a new attempt its
			// readers follow: this one's frames are written, no end.
			st.log.drain()
			return nil
		}
		s.closing(st)
		return nil
	}
	switch {
	case end != nil && end.Done && end.To == status && end.Error == errText:
		// Written with the run's end.
	case end != nil && end.Done:
		// The run's end was judged otherwise here: this is the job's end.
		if err := s.setJob(bg, job.ID, []store.JobStatus{end.To}, status, errText); err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.Error("recording a run's end", "run", job.ID, "err", err)
		}
	default:
		if err := s.setJob(bg, job.ID, []store.JobStatus{store.JobRunning}, status, errText); err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.Error("recording a run's end", "run", job.ID, "err", err)
		}
	}
	if b != nil && b.OnCompletion == "delete" {
		if err := s.opts.Store.DeleteThread(bg, job.ThreadID); err != nil {
			s.log.Error("deleting a stateless run's thread", "thread", job.ThreadID, "err", err)
		}
	}
	if p, ok := s.exec.(*Pool); ok {
		// The run's end is recorded: its thread is free before its
		// clients hear of the end (and send the next run).
		p.free(JobRef{ID: job.ID, Thread: job.ThreadID})
	}
	st.finish(final, s.now())
	s.log.Info("run ended", "run", job.ID, "thread", job.ThreadID, "status", status)
	return nil
}

// closing ends the stream of a run this process stops before its end: its
// clients are told, in an error event and in the wait's reply, that the
// run goes on when a server runs it again.
func (s *Server) closing(st *runStream) {
	msg := "the server is stopping: the run is kept, pending, and goes on when a server picks it up again"
	st.add("error", errorEvent("ServerClosing", msg))
	st.finish(errorReply("ServerClosing", msg), s.now())
}

// setJobRetryFor is how long a job's end (or its return to the queue) is
// retried when the store fails for a reason that may pass: a job left
// running by a run that ended would be taken for a dead worker's.
const setJobRetryFor = 30 * time.Second

// setJob moves job id from one of from to status to, with errText,
// retrying for setJobRetryFor a failure that may pass.
func (s *Server) setJob(ctx context.Context, id string, from []store.JobStatus, to store.JobStatus, errText string) error {
	b := newBackoff(setJobRetryFor)
	for {
		_, err := s.jobs.SetJob(ctx, id, from, to, "", errText)
		if err == nil || !mayPass(err) {
			return err
		}
		if b.tries == 0 {
			s.log.Warn("recording a run's status failed: retrying", "run", id, "status", to, "err", err)
		}
		if !b.wait(ctx) {
			return err
		}
	}
}

// mayPass reports whether a store's failure may pass on a retry: not a
// conflict, a missing row, a refusal or a closed store.
func mayPass(err error) bool {
	return !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) &&
		!errors.Is(err, store.ErrInvalid) && !errors.Is(err, store.ErrClosed)
}

// backoff paces the retries of a store call: 50 ms, doubling to a
// second, until a deadline.
type backoff struct {
	deadline time.Time
	next     time.Duration
	tries    int
}

func newBackoff(d time.Duration) *backoff {
	return &backoff{deadline: time.Now().Add(d), next: 50 * time.Millisecond}
}

// wait sleeps before the next try; false when the deadline has passed
// or ctx is done (no try then).
func (b *backoff) wait(ctx context.Context) bool {
	if time.Now().After(b.deadline) {
		return false
	}
	select {
	case <-time.After(b.next):
	case <-ctx.Done():
		return false
	}
	b.next = min(2*b.next, time.Second)
	b.tries++
	return true
}

// decodeRunBody is the request a job keeps, or nil.
func decodeRunBody(j *store.Job) *runBody {
	var b runBody
	if json.Unmarshal(j.Request, &b) != nil {
		return nil
	}
	return &b
}

// drive starts or resumes the job's thread and returns the job's end
// status, the reply of runs.wait and the error text. b is the job's
// request, decoded (nil when it does not decode); pend, when not nil,
// the thread's questions as the request read them.
func (s *Server) drive(ctx context.Context, job *store.Job, b *runBody, st *runStream, end **store.JobChange, pend *readPending) (store.JobStatus, []byte, string) {
	fail := func(err error) (store.JobStatus, []byte, string) {
		if errors.Is(err, store.ErrLeaseLost) {
			// Another process took the thread over (this one stalled
			// past its lease): the job is that process's now.
			return jobLost, nil, err.Error()
		}
		if s.shared && (errors.Is(err, store.ErrUnavailable) || errors.Is(err, service.ErrBusy)) {
			// The store could not be reached (restarting): nothing
			// about the run's end was recorded. Or an earlier attempt
			// at the run still goes on in this process (queued again
			// after its lease ran out while the store was down): it
			// ends, fenced, and this one waits for its turn. Back to
			// the queue.
			return jobRetry, nil, err.Error()
		}
		kind := string(engine.KindOf(err))
		st.add("error", errorEvent(kind, err.Error()))
		return store.JobError, errorReply(kind, err.Error()), err.Error()
	}
	if b == nil {
		return fail(errors.New("the run's request does not decode"))
	}
	ctx = s.runContext(ctx, b)
	a, err := s.assistant(job.Assistant)
	if err != nil {
		return fail(err)
	}
	plan := a.Workflow.Plan
	// The thread's log says how its last run ended (the state is read
	// through the Service's cache of states, which the run's own load
	// then finds). A run that may go on (waiting, or cut short) streams
	// values that start from that state. A new run starts from its own
	// starting values (RunStarted): node outputs of the thread's earlier
	// runs are not part of its state.
	hasResume := b.Command != nil && len(b.Command.Resume) > 0 && string(b.Command.Resume) != "null"
	status := engine.Completed
	paused := false // stopped at a breakpoint (interrupt_before/after)
	vals := &Values{}
	var from *engine.ThreadState // the state a resume goes on from
	ts, err := s.threadState(ctx, job.ThreadID)
	if err != nil {
		return fail(err)
	}
	if ts != nil && ts.State != nil {
		status, paused = ts.Status(), len(ts.Paused) > 0
	}
	if status == engine.Running || status == engine.Waiting && hasResume {
		if vals, err = ValuesOf(ts); err != nil {
			return fail(err)
		}
		from = ts
	}
	if st.log != nil {
		ended, err := s.endedBefore(ctx, job, ts, status, hasResume)
		if err != nil {
			return fail(err)
		}
		if ended {
			s.log.Warn("a run ended before its process died, which did not record so: its end is recorded now, and it does not run again", "run", job.ID, "thread", job.ThreadID)
			st.begin(1)
			return s.endOf(ctx, job, ts, status)
		}
	}
	md := map[string]any{}
	_ = json.Unmarshal(job.Meta, &md)
	md["thread_id"], md["run_id"] = job.ThreadID, job.ID
	// A run cut short by its process's end is this job's second attempt
	// at it: its stream says so (a client that rejoins with an event id
	// of the first is sent this one from its start).
	attempt := 1
	if status == engine.Running {
		attempt = 2
	}
	st.begin(attempt)
	md["created_by"], md["run_attempt"] = "system", attempt
	rec := newRecorder(st, b.modes(), b.StreamSubgraphs, vals, job.ID, md)
	rec.log, rec.ctx = (&engine.Threads{Store: s.opts.Store}).Checkpoints, ctx
	rec.resumeFrom(from)
	if st.log != nil {
		// Marks in the log let a process that takes the run over
		// send what its readers missed (takeover.go).
		seen := false
		if attempt > 1 {
			var err error
			if seen, err = s.catchUp(ctx, job, plan, rec); err != nil {
				s.log.Error("finding the steps of a run taken over that its readers were not sent: they miss them", "run", job.ID, "thread", job.ThreadID, "err", err)
			}
			// Its readers have the state it goes on from.
			rec.seen = seen
		}
		if !seen {
			markStart(st, ts)
		}
	}

	var res *service.Result
	input, err := inputOf(plan, b.Input)
	if err != nil {
		return fail(err)
	}
	bp := b.breakpoints()
	dur := b.durability()
	if dur == engine.DefaultDurability {
		dur = s.opts.Durability
	}
	if dur == engine.DefaultDurability {
		dur = engine.Async
	}
	// The job's end goes in the transaction that records the run's end,
	// judged as below.
	onEnd := func(status engine.Status, err error) *store.JobChange {
		to, text, ok := jobEnd(ctx, status, err)
		if !ok {
			return nil
		}
		*end = &store.JobChange{ID: job.ID, From: []store.JobStatus{store.JobRunning}, To: to, Error: text}
		return *end
	}
	switch {
	case status == engine.Running && (!paused || input == nil && !hasResume):
		// A run this job began before its process stopped, or one a
		// breakpoint stopped that this job continues (input null): on
		// from its last recorded step.
		rec.start()
		res, err = s.opts.Service.Resume(ctx, service.ResumeRequest{Thread: job.ThreadID, Observer: rec, Breakpoints: bp, Durability: dur, OnEnd: onEnd, OnCheckpoint: rec.checkpointed})
	case hasResume:
		if pend == nil {
			list, perr := s.opts.Store.Pending(ctx, job.ThreadID)
			if perr != nil {
				return fail(perr)
			}
			pend = &readPending{list: list}
		}
		answers, aerr := answersOf(plan, pend.list, b.Command.Resume)
		if aerr != nil {
			return fail(aerr)
		}
		rec.start()
		res, err = s.opts.Service.Resume(ctx, service.ResumeRequest{Thread: job.ThreadID, Answers: answers, State: from, Observer: rec, Breakpoints: bp, Durability: dur, OnEnd: onEnd, OnCheckpoint: rec.checkpointed})
	case status == engine.Waiting && input == nil:
		return fail(&Error{Status: http.StatusConflict, Detail: "the thread waits for an answer: resume it with command.resume"})
	default:
		if input == nil {
			input = map[string]flow.Value{}
		}
		res, err = s.opts.Service.Start(ctx, service.StartRequest{Workflow: a.Workflow, Thread: job.ThreadID, Components: a.Components, ContextTokens: a.ContextTokens, Input: input, Observer: rec, Breakpoints: bp, Durability: dur, OnEnd: onEnd, OnCheckpoint: rec.checkpointed})
	}
	rec.end()
	if res == nil {
		if err == nil {
			err = errors.New("the run returned no result")
		}
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, ErrServerClosing) {
			return store.JobInterrupted, s.interruptedReply(cause), cause.Error()
		}
		return fail(err)
	}
	switch {
	case res.Status == engine.Running && len(res.Paused) > 0:
		// Stopped at a breakpoint: as LangGraph, an interrupt without
		// questions.
		reply := map[string]any{"__interrupt__": []interruptJSON{}}
		if rec.modes["updates"] {
			rec.emit("updates", "", reply)
		}
		if rec.modes["values"] {
			rec.emit("values", "", reply)
		}
		final, _ := json.Marshal(reply)
		return store.JobSuccess, final, ""
	case res.Status == engine.Waiting:
		ints := make([]interruptJSON, 0, len(res.Waiting))
		for _, q := range res.Waiting {
			ints = append(ints, interruptOf(plan, q.ID, q.Node, q.Question))
		}
		reply := map[string]any{"__interrupt__": ints}
		if rec.modes["updates"] {
			rec.emit("updates", "", reply)
		}
		if rec.modes["values"] {
			rec.emit("values", "", reply)
		}
		final, _ := json.Marshal(reply)
		return store.JobSuccess, final, ""
	case res.Status == engine.Completed:
		final, _ := json.Marshal(rec.values)
		return store.JobSuccess, final, ""
	case res.Status == engine.Cancelled:
		// As LangGraph: the wait of a cancelled run answers the values
		// it had reached.
		cause := context.Cause(ctx)
		if cause == nil {
			cause = errCancelledByClient
		}
		final, _ := json.Marshal(rec.values)
		return store.JobInterrupted, final, cause.Error()
	}
	if err == nil {
		err = res.Err
	}
	if err == nil {
		err = errors.New("the run failed")
	}
	if errors.Is(context.Cause(ctx), ErrServerClosing) {
		return store.JobPending, nil, ""
	}
	return fail(err)
}

// jobLost is drive's status of a job another process took over: execute
// leaves it alone.
const jobLost store.JobStatus = ""

// jobRetry is drive's status of a job whose run could not go on because
// the store could not be reached: execute puts it back in the queue, for
// a later attempt (a shared executor's sweep queues it again).
const jobRetry store.JobStatus = "(retry)"

// jobEnd is the job status, and error text, of a run that ended with
// status and err, as drive judges it; not ok for a run the server's
// closing stopped (its job goes back to pending).
func jobEnd(ctx context.Context, status engine.Status, err error) (store.JobStatus, string, bool) {
	switch status {
	case engine.Running, engine.Waiting, engine.Completed:
		// (Running: stopped at a breakpoint.)
		return store.JobSuccess, "", true
	case engine.Cancelled:
		cause := context.Cause(ctx)
		if cause == nil {
			cause = errCancelledByClient
		}
		return store.JobInterrupted, cause.Error(), true
	}
	if errors.Is(context.Cause(ctx), ErrServerClosing) {
		return "", "", false
	}
	if err == nil {
		err = errors.New("the run failed")
	}
	return store.JobError, err.Error(), true
}

// stream answers a run's stream from its start (after < 0) or after an
// event id, and cancels the run if the client goes and asked for that.
func (s *Server) streamRun(w http.ResponseWriter, r *http.Request, n *newRun, location string, after eventCursor, onDisconnect string) error {
	out := startSSE(w, location)
	err := out.stream(r.Context(), n.stream, after)
	if err != nil && r.Context().Err() != nil && onDisconnect == "cancel" {
		j, jerr := s.jobs.Job(context.WithoutCancel(r.Context()), n.job.ID)
		if jerr == nil {
			_ = s.cancelJob(context.WithoutCancel(r.Context()), j, errClientGone, false)
		}
	}
	return nil // the reply has begun: nothing more to answer
}

// waitRun answers a run's final reply once it ends. The headers go out
// at once (LangGraph's client holds one of its few request slots until
// they come), then a newline every second keeps the connection alive
// (JSON readers skip it), as LangGraph's server does.
func (s *Server) waitRun(w http.ResponseWriter, r *http.Request, st *runStream, location string) error {
	if location != "" {
		w.Header().Set("Content-Location", location)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	ctx := r.Context()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		st.mu.Lock()
		done, final, ch, next := st.done, st.final, st.changed, st.succ
		st.mu.Unlock()
		if next != nil {
			st = next // a mirror's next attempt
			continue
		}
		if done {
			_, _ = w.Write(final)
			return nil
		}
		select {
		case <-ch:
		case <-tick.C:
			_, _ = w.Write([]byte("\n"))
			_ = rc.Flush()
		case <-ctx.Done():
			return nil
		}
	}
}

// createBackgroundRun is POST /threads/{id}/runs.
func (s *Server) createBackgroundRun(w http.ResponseWriter, r *http.Request) error {
	n, err := s.createRun(r.Context(), r.PathValue("id"), r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Location", n.location(false))
	writeJSON(w, http.StatusOK, runOf(n.job))
	return nil
}

// createStreamRun is POST /threads/{id}/runs/stream and POST
// /runs/stream.
func (s *Server) createStreamRun(w http.ResponseWriter, r *http.Request) error {
	thread := r.PathValue("id")
	n, err := s.createRun(r.Context(), thread, r)
	if err != nil {
		return err
	}
	od := n.body.OnDisconnect
	if od == "" {
		od = "continue"
		if thread == "" {
			od = "cancel"
		}
	}
	if thread != "" {
		// LangGraph's client reconnects to Location, with Last-Event-ID,
		// when a stream drops.
		w.Header().Set("Location", n.location(false)+"/stream")
	}
	return s.streamRun(w, r, n, n.location(thread == ""), fromStart, od)
}

// createWaitRun is POST /threads/{id}/runs/wait and POST /runs/wait.
func (s *Server) createWaitRun(w http.ResponseWriter, r *http.Request) error {
	thread := r.PathValue("id")
	n, err := s.createRun(r.Context(), thread, r)
	if err != nil {
		return err
	}
	return s.waitRun(w, r, n.stream, n.location(thread == ""))
}

// threadJob finds a run of a thread, or a 404.
func (s *Server) threadJob(ctx context.Context, thread, id string) (*store.Job, error) {
	j, err := s.jobs.Job(ctx, id)
	if err != nil || j.ThreadID != thread {
		if err == nil || errors.Is(err, store.ErrNotFound) {
			return nil, notFound("run", id)
		}
		return nil, err
	}
	return j, nil
}

// listRuns is GET /threads/{id}/runs.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) error {
	thread := r.PathValue("id")
	q := store.JobQuery{ThreadID: thread, Limit: 10}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return invalid("limit", "must be a number not below 0, not %q", v)
		}
		q.Limit = n
	}
	if v := r.URL.Query().Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return invalid("offset", "must be a number not below 0, not %q", v)
		}
		q.Offset = n
	}
	if v := r.URL.Query().Get("status"); v != "" {
		if !store.JobStatus(v).Valid() {
			return invalid("status", "%q is not a run status", v)
		}
		q.Status = []store.JobStatus{store.JobStatus(v)}
	}
	jobs, err := s.jobs.Jobs(r.Context(), q)
	if err != nil {
		return threadErr(thread, err)
	}
	out := make([]runJSON, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, runOf(j))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getRun is GET /threads/{id}/runs/{rid}.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) error {
	j, err := s.threadJob(r.Context(), r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, runOf(j))
	return nil
}

// deleteRun is DELETE /threads/{id}/runs/{rid}: a run in progress is
// cancelled first.
func (s *Server) deleteRun(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	j, err := s.threadJob(ctx, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		return err
	}
	if err := s.cancelJob(ctx, j, errCancelledByClient, true); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// joinRun is GET /threads/{id}/runs/{rid}/join: the run's final reply,
// once it ends.
func (s *Server) joinRun(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	j, err := s.threadJob(ctx, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		return err
	}
	if s.shared && j.Status != store.JobPending && j.Status != store.JobRunning {
		// Ended: the thread's state (the log's end may be pruned).
		return s.finalOf(w, r, j)
	}
	st := s.streamOf(j.ID)
	if st == nil {
		// Ended before this process kept its stream: the thread's state.
		return s.finalOf(w, r, j)
	}
	if err := s.waitRun(w, r, st, ""); err != nil {
		return err
	}
	if r.Context().Err() != nil && cancelOnDisconnect(r) {
		// The client went before the run ended, and asked for this.
		_ = s.cancelJob(context.WithoutCancel(ctx), j, errClientGone, false)
	}
	return nil
}

// cancelOnDisconnect reports whether a join asks to cancel the run when
// its client goes: cancel_on_disconnect 1 (LangGraph's client) or true.
func cancelOnDisconnect(r *http.Request) bool {
	on, _ := strconv.ParseBool(r.URL.Query().Get("cancel_on_disconnect"))
	return on
}

// finalOf answers the reply of an ended run whose stream is not kept:
// the thread's values now (or its questions).
func (s *Server) finalOf(w http.ResponseWriter, r *http.Request, j *store.Job) error {
	if j.Status == store.JobPending || j.Status == store.JobRunning {
		return errorf(http.StatusConflict, "run %s is %s in another process: join it there", j.ID, j.Status)
	}
	body, err := s.finalReply(r.Context(), j)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(body)
	return err
}

// finalReply is the reply of an ended run: the thread's values now, or
// its questions.
func (s *Server) finalReply(ctx context.Context, j *store.Job) ([]byte, error) {
	thr, err := s.opts.Store.Thread(ctx, j.ThreadID)
	if err != nil {
		return nil, threadErr(j.ThreadID, err)
	}
	ts, err := s.threadState(ctx, j.ThreadID)
	if err != nil {
		return nil, err
	}
	if ts != nil && ts.Status() == engine.Running && len(ts.Paused) > 0 {
		return json.Marshal(map[string]any{"__interrupt__": []interruptJSON{}})
	}
	if ts != nil && ts.Status() == engine.Waiting {
		qs, err := s.interrupts(ctx, thr)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"__interrupt__": qs})
	}
	vals, err := ValuesOf(ts)
	if err != nil {
		return nil, err
	}
	return json.Marshal(vals)
}

// joinStream is GET /threads/{id}/runs/{rid}/stream: the run's events
// after Last-Event-ID (all without it), until it ends.
func (s *Server) joinStream(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	j, err := s.threadJob(ctx, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		return err
	}
	after := fromStart
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if after, err = parseEventID(v); err != nil {
			return invalid("Last-Event-ID", "must be an event id the stream sent, not %q", v)
		}
	}
	st := s.streamOf(j.ID)
	if st == nil {
		if j.Status == store.JobPending || j.Status == store.JobRunning {
			return errorf(http.StatusConflict, "run %s is %s in another process: join it there", j.ID, j.Status)
		}
		startSSE(w, "")
		return nil // ended, and its events are no longer kept
	}
	mode := "continue"
	if cancelOnDisconnect(r) {
		mode = "cancel"
	}
	return s.streamRun(w, r, &newRun{job: j, stream: st}, "", after, mode)
}

// cancelRun is POST /threads/{id}/runs/{rid}/cancel[?wait=true&action=interrupt|rollback].
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	j, err := s.threadJob(ctx, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		return err
	}
	action := r.URL.Query().Get("action")
	switch action {
	case "", "interrupt", "rollback":
	default:
		return invalid("action", "must be interrupt or rollback, not %q", action)
	}
	cause := errCancelledByClient
	if action == "rollback" {
		cause = errRolledBackByClient
	}
	if err := s.cancelJob(ctx, j, cause, action == "rollback"); err != nil {
		return err
	}
	if !r.URL.Query().Has("wait") {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
