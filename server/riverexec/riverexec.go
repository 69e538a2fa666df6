// Package riverexec is a server.Executor that spreads a server's runs over
// processes and machines through River (github.com/riverqueue/river), a
// job queue in PostgreSQL: the database that already keeps weft's threads
// and jobs (store/postgres) keeps the queue too.
//
// Every process of a deployment makes an Executor on the same database:
// an API process with Workers 0 only queues runs; a worker process (or a
// process that does both) with Workers > 0 also takes them off the queue
// and carries them out. A run is a River job whose arguments name the
// weft job (the LangGraph run) and its thread; the weft job's row, in the
// store, stays the record of its status.
//
// River's own timeouts are off (a run's limits are the workflow's:
// max_time, node timeouts), so a run may last minutes or hours. A worker
// that dies is not detected by River within seconds: weft's thread
// leases (engine.Threads.LeaseTTL) fence a run's writes, and the server
// picks up the runs whose lease ran out.
package riverexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"riverqueue.com/riverui"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
)

// Options configure an Executor.
type Options struct {
	// Store is the deployment's PostgreSQL store: River's tables go in
	// its database, and a job's row and its queue entry are written in
	// one transaction (CreateAndSubmit). Required.
	Store *postgres.Store
	// Workers is how many runs this process carries out at once; 0
	// makes an Executor that only queues runs (an API process).
	Workers int
	// Queue is the River queue the runs go to and are taken from; ""
	// is River's default queue.
	Queue string
	// PollInterval is how often a worker looks for runs besides being
	// told of new ones (LISTEN/NOTIFY); 0 is DefaultPollInterval.
	PollInterval time.Duration
	// Logger logs River's and the executor's events; nil discards.
	Logger *slog.Logger
	// LeaseTTL is the service's thread lease TTL
	// (service.Options.LeaseTTL): a run whose job is running but whose
	// thread no process has held a lease on for that long is taken to
	// be a dead worker's, and is queued again (Sweep). 0 is
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
	// SweepEvery is how often a process with workers sweeps for the runs
	// of dead workers; 0 is LeaseTTL/2, negative never (tests call
	// Sweep).
	SweepEvery time.Duration
}

// DefaultLeaseTTL is the lease TTL an Executor assumes when Options give
// none: weft's commands' default.
const DefaultLeaseTTL = 10 * time.Second

// DefaultPollInterval is how often a worker looks for runs it was not
// told of (a run put back to wait for its thread's turn, a notification
// lost across a reconnect).
const DefaultPollInterval = 100 * time.Millisecond

// migrateLock is the key of the advisory lock held while River's
// migrations run: River's migrator takes none, and processes that start
// together would apply the same version at once.
const migrateLock = 0x77656674_72697672 // "weftrivr"

// runArgs are a River job's arguments: the weft job it carries out.
type runArgs struct {
	Job    string `json:"job_id"`
	Thread string `json:"thread_id"`
}

// Kind names weft's runs in River.
func (runArgs) Kind() string { return "weft_run" }

// Executor is a server.Executor on River. Make one with New.
type Executor struct {
	opts   Options
	client *river.Client[pgx.Tx]
	queue  string
	log    *slog.Logger

	mu      sync.Mutex
	work    server.Work
	running map[string]context.CancelCauseFunc // the runs carried out here, by job id
	closed  bool
	stop    context.CancelFunc // ends the sweeper
	swept   chan struct{}      // closed when the sweeper has returned
}

// New migrates River's tables in opts.Pool's database (holding an
// advisory lock, so that processes starting together take turns) and
// makes an Executor.
func New(ctx context.Context, opts Options) (*Executor, error) {
	if opts.Store == nil {
		return nil, errors.New("riverexec: no PostgreSQL store")
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("riverexec: %d workers", opts.Workers)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.SweepEvery == 0 {
		opts.SweepEvery = opts.LeaseTTL / 2
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := migrate(ctx, opts.Store.Pool(), log); err != nil {
		return nil, err
	}
	e := &Executor{opts: opts, queue: opts.Queue, log: log, running: map[string]context.CancelCauseFunc{}}
	if e.queue == "" {
		e.queue = river.QueueDefault
	}
	cfg := &river.Config{
		Logger:            log,
		JobTimeout:        -1, // a run's limits are the workflow's
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: opts.PollInterval,
		MaxAttempts:       1000, // a run is put back, never given up by River
		// River's rescuer finalizes the River jobs the sweep cancels
		// (a dead worker's) once they are this old; with no job
		// timeout it leaves every other running job alone.
		RescueStuckJobsAfter: 2 * opts.LeaseTTL,
	}
	if opts.Workers > 0 {
		workers := river.NewWorkers()
		if err := river.AddWorkerSafely(workers, &runWorker{e: e}); err != nil {
			return nil, fmt.Errorf("riverexec: %w", err)
		}
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{e.queue: {MaxWorkers: opts.Workers}}
	}
	client, err := river.NewClient(riverpgxv5.New(opts.Store.Pool()), cfg)
	if err != nil {
		return nil, fmt.Errorf("riverexec: %w", err)
	}
	e.client = client
	return e, nil
}

// migrate brings River's tables up to date under an advisory lock.
func migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("riverexec: migrating River's tables: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLock)); err != nil {
		return fmt.Errorf("riverexec: migrating River's tables: %w", err)
	}
	defer func() {
		bg := context.WithoutCancel(ctx)
		if _, err := conn.Exec(bg, `SELECT pg_advisory_unlock($1)`, int64(migrateLock)); err != nil {
			// A session that may still hold the lock must not go back to
			// the pool: closing it releases the lock.
			log.Warn("releasing the migration lock; closing its connection", "err", err)
			_ = conn.Conn().Close(bg)
		}
	}()
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("riverexec: migrating River's tables: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("riverexec: migrating River's tables: %w", err)
	}
	if len(res.Versions) > 0 {
		log.Info("River's tables migrated", "versions", len(res.Versions))
	}
	return nil
}

// Start sets the work and, with workers, starts taking runs.
func (e *Executor) Start(work server.Work) error {
	e.mu.Lock()
	if e.work != nil {
		e.mu.Unlock()
		return errors.New("riverexec: started twice")
	}
	e.work = work
	e.mu.Unlock()
	if e.opts.Workers == 0 {
		return nil
	}
	// The client lives until Close, not as long as a request's context.
	if err := e.client.Start(context.Background()); err != nil {
		return fmt.Errorf("riverexec: %w", err)
	}
	if e.opts.SweepEvery > 0 {
		ctx, stop := context.WithCancel(context.Background())
		e.mu.Lock()
		e.stop, e.swept = stop, make(chan struct{})
		e.mu.Unlock()
		go e.sweeper(ctx)
	}
	return nil
}

// sweeper sweeps every SweepEvery until ctx ends.
func (e *Executor) sweeper(ctx context.Context) {
	defer close(e.swept)
	t := time.NewTicker(e.opts.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, err := e.Sweep(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("sweeping for the runs of dead workers", "err", err)
		} else if n > 0 {
			e.log.Warn("runs of a dead worker queued again", "runs", n)
		}
	}
}

// Sweep queues again the runs of dead workers: jobs running for longer
// than LeaseTTL whose thread no process holds a lease on (a worker
// renews its lease every LeaseTTL/3 while it runs). In one transaction
// each goes back to pending with a new River job; the dead worker's River
// job is cancelled (River finalizes it). The next worker to take the run
// goes on from its last recorded step, as a new attempt. It also queues
// pending runs that have no River job (queued before River carried a
// deployment's runs, or whose River job was deleted), and cancels the
// River jobs a dead worker left running for runs that are not running
// (it died after the run ended, or after it put the run back): River
// finalizes them, and a pending run among those is queued again. Sweeps
// of several processes at once take each run once. It returns how many
// runs it queued.
func (e *Executor) Sweep(ctx context.Context) (int, error) {
	pool := e.opts.Store.Pool()
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// River jobs left running by a dead worker for a run that is not
	// running: a live worker marks its River job done within moments of
	// the run's end (or of putting it back).
	rows, err := tx.Query(ctx, `SELECT r.id FROM river_job r LEFT JOIN weft_jobs j ON j.id = r.args->>'job_id'
WHERE r.kind = 'weft_run' AND r.state = 'running' AND r.attempted_at < clock_timestamp() - make_interval(secs => $1)
	AND NOT r.metadata ? 'cancel_attempted_at' AND (j.id IS NULL OR j.status <> 'running')
FOR UPDATE OF r SKIP LOCKED`, e.opts.LeaseTTL.Seconds())
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	for _, id := range stale {
		if _, err := e.client.JobCancelTx(ctx, tx, id); err != nil {
			return 0, fmt.Errorf("riverexec: sweep: cancelling River job %d a dead worker left: %w", id, err)
		}
	}
	// Pending runs with no River job to carry them out: queued by a
	// weft before River (the in-process pool), or whose River job was
	// deleted (River's UI).
	// (Before the dead ones go back to pending, which get their own.)
	rows, err = tx.Query(ctx, `SELECT j.id, j.thread_id FROM weft_jobs j
WHERE j.status = 'pending' AND NOT EXISTS (SELECT 1 FROM river_job r WHERE r.kind = 'weft_run' AND r.args->>'job_id' = j.id
	AND r.state IN ('available', 'pending', 'running', 'retryable', 'scheduled')
	AND NOT (r.state = 'running' AND r.metadata ? 'cancel_attempted_at'))
ORDER BY j.created, j.id
FOR UPDATE OF j SKIP LOCKED`)
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	unqueued, err := pgx.CollectRows(rows, pgx.RowToStructByPos[runArgs])
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	for _, a := range unqueued {
		if _, err := e.client.InsertTx(ctx, tx, a, &river.InsertOpts{Queue: e.queue}); err != nil {
			return 0, fmt.Errorf("riverexec: sweep: queueing run %s: %w", a.Job, err)
		}
	}
	rows, err = tx.Query(ctx, `UPDATE weft_jobs j SET status = 'pending', updated = clock_timestamp()
FROM (
	SELECT j.id FROM weft_jobs j JOIN weft_threads t ON t.id = j.thread_id
	WHERE j.status = 'running' AND j.updated < clock_timestamp() - make_interval(secs => $1)
		AND NOT (t.lease_owner <> '' AND coalesce(t.lease_expires > clock_timestamp(), false))
	FOR UPDATE OF j SKIP LOCKED
) dead
WHERE j.id = dead.id AND j.status = 'running'
RETURNING j.id, j.thread_id`, e.opts.LeaseTTL.Seconds())
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	dead, err := pgx.CollectRows(rows, pgx.RowToStructByPos[runArgs])
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	if len(dead)+len(unqueued)+len(stale) == 0 {
		return 0, nil
	}
	// The dead workers' River jobs, cancelled once the sweep is in.
	ids := make([]string, len(dead))
	for i, a := range dead {
		ids[i] = a.Job
	}
	rows, err = tx.Query(ctx, `SELECT id FROM river_job WHERE kind = 'weft_run' AND args->>'job_id' = ANY($1) AND state = 'running'`, ids)
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	orphans, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	for _, a := range dead {
		if _, err := e.client.InsertTx(ctx, tx, a, &river.InsertOpts{Queue: e.queue}); err != nil {
			return 0, fmt.Errorf("riverexec: sweep: queueing run %s again: %w", a.Job, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("riverexec: sweep: %w", err)
	}
	if len(stale) > 0 {
		e.log.Warn("River jobs a dead worker left running cancelled (River finalizes them)", "river_jobs", stale)
	}
	for _, id := range orphans {
		if _, err := e.client.JobCancel(ctx, id); err != nil {
			e.log.Warn("cancelling a dead worker's River job", "river_job", id, "err", err)
		}
	}
	return len(dead) + len(unqueued), nil
}

// Submit queues a run.
func (e *Executor) Submit(ctx context.Context, job server.JobRef) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return server.ErrServerClosing
	}
	if _, err := e.client.Insert(ctx, runArgs{Job: job.ID, Thread: job.Thread}, &river.InsertOpts{Queue: e.queue}); err != nil {
		return fmt.Errorf("riverexec: queueing run %s: %w", job.ID, err)
	}
	return nil
}

// CreateAndSubmit stores a new job and queues its run in one
// transaction (server.JobQueuer): a run is never queued without its row,
// nor stored without its queue entry.
func (e *Executor) CreateAndSubmit(ctx context.Context, j *store.Job) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return server.ErrServerClosing
	}
	tx, err := e.opts.Store.Pool().Begin(ctx)
	if err != nil {
		return fmt.Errorf("riverexec: queueing run %s: %w", j.ID, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // after Commit: nothing
	if err := e.opts.Store.CreateJobTx(ctx, tx, j); err != nil {
		return err
	}
	if _, err := e.client.InsertTx(ctx, tx, runArgs{Job: j.ID, Thread: j.ThreadID}, &river.InsertOpts{Queue: e.queue}); err != nil {
		return fmt.Errorf("riverexec: queueing run %s: %w", j.ID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("riverexec: queueing run %s: %w", j.ID, err)
	}
	return nil
}

// Cancel cancels a run, with cause, and reports whether it did: one
// carried out in this process at once; one carried out by another
// process through River (JobCancel), which that process's worker sees
// within milliseconds and cancels with a cause of the same text that
// wraps the same engine error (engine.ErrRunRolledBack or
// engine.ErrRunCancelled), so that a rollback rolls back there too.
func (e *Executor) Cancel(id string, cause error) bool {
	e.mu.Lock()
	cancel, ok := e.running[id]
	e.mu.Unlock()
	if ok {
		cancel(cause)
		return true
	}
	ctx, stop := context.WithTimeout(context.Background(), cancelTimeout)
	defer stop()
	reason, _ := json.Marshal(cancelReason{Reason: cause.Error(), Rollback: errors.Is(cause, engine.ErrRunRolledBack)})
	// The running River job of the weft job, told why it is cancelled
	// (River's cancel carries no reason of its own).
	var rid int64
	err := e.opts.Store.Pool().QueryRow(ctx, `UPDATE river_job SET metadata = metadata || jsonb_build_object('weft_cancel', $2::jsonb)
WHERE kind = 'weft_run' AND args->>'job_id' = $1 AND state = 'running' RETURNING id`, id, string(reason)).Scan(&rid)
	if err != nil {
		if !errors.Is(err, pgx.ErrNoRows) {
			e.log.Error("cancelling a run carried out elsewhere", "run", id, "err", err)
		}
		return false
	}
	if _, err := e.client.JobCancel(ctx, rid); err != nil {
		e.log.Error("cancelling a run carried out elsewhere", "run", id, "err", err)
		return false
	}
	return true
}

// cancelTimeout bounds the database work of a cancel of a run carried out
// elsewhere.
const cancelTimeout = 10 * time.Second

// cancelReason is why a run carried out elsewhere was cancelled, in its
// River job's metadata ("weft_cancel").
type cancelReason struct {
	Reason   string `json:"reason"`
	Rollback bool   `json:"rollback"`
}

// remoteCause is the cause of a run cancelled from another process: the
// text that process gave, wrapping the engine error it stood for.
type remoteCause struct {
	reason string
	err    error
}

func (c *remoteCause) Error() string { return c.reason }
func (c *remoteCause) Unwrap() error { return c.err }

// causeOf reads why River job id was cancelled from another process.
func (e *Executor) causeOf(id int64) error {
	ctx, stop := context.WithTimeout(context.Background(), cancelTimeout)
	defer stop()
	row, err := e.client.JobGet(ctx, id)
	if err != nil {
		return ErrCancelledElsewhere
	}
	var md struct {
		Cancel *cancelReason `json:"weft_cancel"`
	}
	if json.Unmarshal(row.Metadata, &md) != nil || md.Cancel == nil {
		return ErrCancelledElsewhere
	}
	if md.Cancel.Rollback {
		return &remoteCause{md.Cancel.Reason, engine.ErrRunRolledBack}
	}
	return &remoteCause{md.Cancel.Reason, engine.ErrRunCancelled}
}

// Close stops taking runs, cancels those in progress here with
// server.ErrServerClosing (they go back to the queue, for this or another
// process) and waits for them to return, or for ctx.
func (e *Executor) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	stop, swept := e.stop, e.swept
	e.mu.Unlock()
	if stop != nil {
		stop()
		<-swept
	}
	if e.opts.Workers == 0 {
		return nil
	}
	// River cancels the runs' River contexts, which cancels theirs with
	// server.ErrServerClosing (Work), and waits for them.
	return e.client.StopAndCancel(ctx)
}

// Running returns how many runs this process carries out now.
func (e *Executor) Running() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.running)
}

// Queued returns how many runs wait in the executor's queue.
func (e *Executor) Queued(ctx context.Context) (int, error) {
	var n int
	err := e.opts.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_run' AND queue = $1 AND state IN ('available', 'scheduled', 'retryable', 'pending')`, e.queue).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("riverexec: counting the queued runs: %w", err)
	}
	return n, nil
}

// UI returns River's web UI (riverqueue.com/riverui) for the
// executor's queue, served under prefix ("/riverui"), with its background
// work running until ctx ends. It can cancel, retry and delete runs'
// River jobs and pause queues: mount it behind the API key
// (server.Options.Mounts does).
func (e *Executor) UI(ctx context.Context, prefix string) (http.Handler, error) {
	h, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(e.client, nil),
		Logger:    e.log,
		Prefix:    prefix,
	})
	if err != nil {
		return nil, fmt.Errorf("riverexec: River's UI: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return nil, fmt.Errorf("riverexec: River's UI: %w", err)
	}
	return h, nil
}

// Shared reports that the executor's queue outlives this process: the
// server leaves the runs it finds in the store at start to the queue.
func (e *Executor) Shared() bool { return true }

// runWorker carries out weft_run jobs with the executor's work.
type runWorker struct {
	river.WorkerDefaults[runArgs]
	e *Executor
}

// Work runs the weft job. The work records the run's outcome in the
// store; what River keeps is only whether the run is done here. The run's
// context is the executor's, not River's: River stopping (Close) cancels
// it with server.ErrServerClosing, and the job goes back to River's queue
// without an attempt counted; a cancel from another process (River's
// JobCancel) cancels it as a client's cancel does.
func (w *runWorker) Work(ctx context.Context, job *river.Job[runArgs]) error {
	e := w.e
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely) {
			cancel(e.causeOf(job.ID))
			return
		}
		cancel(server.ErrServerClosing)
	})
	defer stop()
	e.mu.Lock()
	work, closed := e.work, e.closed
	if !closed {
		e.running[job.Args.Job] = cancel
	}
	e.mu.Unlock()
	if closed || work == nil {
		return context.Canceled // back to the queue
	}
	defer func() {
		e.mu.Lock()
		delete(e.running, job.Args.Job)
		e.mu.Unlock()
	}()
	// A thread's runs go one at a time, oldest first: a run whose turn
	// has not come waits in River's queue.
	if ok, err := e.turn(ctx, job.Args); err != nil {
		return err // River tries again later
	} else if !ok {
		return river.JobSnooze(turnWait)
	}
	err := work(rctx, server.JobRef{ID: job.Args.Job, Thread: job.Args.Thread})
	if errors.Is(context.Cause(rctx), server.ErrServerClosing) {
		// River's soft stop (StopAndCancel) puts a job back to its
		// queue when it returns its context's error.
		return ctx.Err()
	}
	if err != nil {
		e.log.Error("a run's work failed", "run", job.Args.Job, "err", err)
	}
	return nil
}

// turnWait is how long a run whose thread is busy waits before it looks
// again (River's poll adds up to PollInterval).
const turnWait = 200 * time.Millisecond

// turn reports whether it is a's turn in its thread: no other run of the
// thread is running, and no older one is pending. (Of a thread's pending
// runs only the oldest passes, and it is then claimed, so two never pass
// at once; the thread's lease fences the rest.) A job that no longer
// exists passes: the work finds it gone.
func (e *Executor) turn(ctx context.Context, a runArgs) (bool, error) {
	var ok bool
	err := e.opts.Store.Pool().QueryRow(ctx, `SELECT NOT EXISTS (
	SELECT 1 FROM weft_jobs o WHERE o.thread_id = j.thread_id AND o.id <> j.id
		AND (o.status = 'running' OR o.status = 'pending' AND (o.created, o.id) < (j.created, j.id)))
FROM weft_jobs j WHERE j.id = $1`, a.Job).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("riverexec: is it run %s's turn: %w", a.Job, err)
	}
	return ok, nil
}

// ErrCancelledElsewhere is the cause of the cancellation of a run that a
// process other than the one carrying it out cancelled.
var ErrCancelledElsewhere = fmt.Errorf("riverexec: cancelled by another process: %w", engine.ErrRunCancelled)
