package server

import (
	"context"
	"errors"
	"sync"
)

// JobRef names a job an Executor carries out: its id and its thread.
type JobRef struct {
	ID     string
	Thread string
}

// Work carries out one job. The server gives it to its Executor; ctx is
// cancelled when the job is cancelled (Executor.Cancel, with the cause
// context.Cause gives) or the executor closes.
type Work func(ctx context.Context, job JobRef) error

// Executor carries out the jobs (LangGraph runs) a Server queues. The
// server stores each job as pending before it submits it, so an executor
// may lose submissions (a process killed): the server submits the pending
// jobs it finds when it starts again.
//
// Jobs of one thread run one at a time, in the order they were submitted;
// jobs of different threads may run in parallel. The in-process Pool is
// the default; a many-machine executor (River on PostgreSQL) implements
// the same interface.
type Executor interface {
	// Start begins carrying out jobs with work. It is called once,
	// before any Submit.
	Start(work Work) error
	// Submit queues a job. It does not wait for the job to run.
	Submit(ctx context.Context, job JobRef) error
	// Cancel cancels the job if it runs here, with cause, and reports
	// whether it did; a job not started yet is the server's to drop.
	Cancel(id string, cause error) bool
	// Close stops taking jobs, cancels those running with
	// ErrServerClosing and waits for them to return, or for ctx.
	Close(ctx context.Context) error
}

// ErrServerClosing is the cause of the cancellation of a job in progress
// when its executor closes: the job is left to be picked up again, not
// ended.
var ErrServerClosing = errors.New("server: closing")

// Pool is the in-process Executor: at most Size jobs at a time, one per
// thread, each thread's jobs in order, threads served first come first.
type Pool struct {
	size int

	mu      sync.Mutex
	work    Work
	queued  map[string][]JobRef                // by thread, in order
	ready   []string                           // threads with queued jobs and none running, in order
	threads map[string]bool                    // threads with a job running
	cancels map[string]context.CancelCauseFunc // running jobs, by id
	active  int                                // goroutines running jobs
	closed  bool
	wg      sync.WaitGroup
	ctx     context.Context
	stop    context.CancelCauseFunc
}

// NewPool returns a Pool that runs at most size jobs at a time (size < 1
// is 1).
func NewPool(size int) *Pool {
	if size < 1 {
		size = 1
	}
	ctx, stop := context.WithCancelCause(context.Background())
	return &Pool{size: size, queued: map[string][]JobRef{}, threads: map[string]bool{}, cancels: map[string]context.CancelCauseFunc{}, ctx: ctx, stop: stop}
}

// Start sets the work the pool carries out.
func (p *Pool) Start(work Work) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.work != nil {
		return errors.New("server: Pool started twice")
	}
	p.work = work
	p.dispatch()
	return nil
}

// Submit queues job behind the jobs of its thread.
func (p *Pool) Submit(ctx context.Context, job JobRef) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrServerClosing
	}
	q := p.queued[job.Thread]
	p.queued[job.Thread] = append(q, job)
	if len(q) == 0 && !p.threads[job.Thread] {
		p.ready = append(p.ready, job.Thread)
	}
	p.dispatch()
	return nil
}

// dispatch starts ready jobs while there is room; p.mu is held.
func (p *Pool) dispatch() {
	for p.work != nil && !p.closed && p.active < p.size && len(p.ready) > 0 {
		thread := p.ready[0]
		p.ready = p.ready[1:]
		q := p.queued[thread]
		job := q[0]
		if len(q) == 1 {
			delete(p.queued, thread)
		} else {
			p.queued[thread] = q[1:]
		}
		ctx, cancel := context.WithCancelCause(p.ctx)
		p.threads[thread] = true
		p.cancels[job.ID] = cancel
		p.active++
		p.wg.Add(1)
		go p.run(ctx, cancel, job, p.work)
	}
}

// run carries out one job with work, then frees its thread and its slot
// (if the work has not freed them already).
func (p *Pool) run(ctx context.Context, cancel context.CancelCauseFunc, job JobRef, work Work) {
	defer p.wg.Done()
	_ = work(ctx, job) // the work records its own outcome
	cancel(nil)
	p.free(job)
}

// free gives back the thread and the slot of a job that ran, or was
// reserved and not started, and starts the next ready jobs. A job is
// freed once: later calls do nothing. The server's work frees its job
// when the run's end is recorded, before its clients are told, so that a
// client's next run on the thread, sent as soon as it hears, finds the
// thread free and starts at once.
func (p *Pool) free(job JobRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.cancels[job.ID]; !ok {
		return
	}
	delete(p.threads, job.Thread)
	delete(p.cancels, job.ID)
	p.active--
	if len(p.queued[job.Thread]) > 0 {
		p.ready = append(p.ready, job.Thread)
	}
	p.dispatch()
}

// reservation is a slot and a thread a Pool holds for a job that its
// server is about to store already claimed (running), to start at once:
// start runs it, undo gives the slot and the thread back.
type reservation struct {
	p      *Pool
	job    JobRef
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// reserve holds a slot and job's thread for job, when the pool could
// start it at once: started, not closing, a slot free, and no job of
// its thread running or queued. Cancel finds the job from now on (its
// work, when started, sees the cancellation).
func (p *Pool) reserve(job JobRef) (*reservation, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.work == nil || p.closed || p.active >= p.size || p.threads[job.Thread] || len(p.queued[job.Thread]) > 0 {
		return nil, false
	}
	ctx, cancel := context.WithCancelCause(p.ctx)
	p.threads[job.Thread] = true
	p.cancels[job.ID] = cancel
	p.active++
	p.wg.Add(1)
	return &reservation{p: p, job: job, ctx: ctx, cancel: cancel}, true
}

// start carries out the reserved job with work (in place of the pool's
// own, which claims the job first).
func (r *reservation) start(work Work) {
	go r.p.run(r.ctx, r.cancel, r.job, work)
}

// undo gives back the reservation of a job that is not started.
func (r *reservation) undo() {
	r.cancel(nil)
	r.p.free(r.job)
	r.p.wg.Done()
}

// Cancel cancels a running job with cause.
func (p *Pool) Cancel(id string, cause error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	cancel, ok := p.cancels[id]
	if ok {
		cancel(cause)
	}
	return ok
}

// Drop removes a job that has not started from the queue, and reports
// whether it was queued.
func (p *Pool) Drop(job JobRef) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queued[job.Thread]
	for i, j := range q {
		if j.ID == job.ID {
			q = append(q[:i:i], q[i+1:]...)
			if len(q) == 0 {
				delete(p.queued, job.Thread)
				for k, t := range p.ready {
					if t == job.Thread {
						p.ready = append(p.ready[:k:k], p.ready[k+1:]...)
						break
					}
				}
			} else {
				p.queued[job.Thread] = q
			}
			return true
		}
	}
	return false
}

// Close stops the pool: queued jobs are dropped (they stay pending in the
// store), running ones cancelled with ErrServerClosing and waited for.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.queued, p.ready = map[string][]JobRef{}, nil
	p.mu.Unlock()
	p.stop(ErrServerClosing)
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
