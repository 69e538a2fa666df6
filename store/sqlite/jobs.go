package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftlang/weft/store"
)

var _ store.Jobs = (*Store)(nil)

// Jobs live in the table jobs (schema version 7), deleted with their
// thread by the foreign key's cascade. SetJob is a transaction that
// begins IMMEDIATE, so its compare and its set are one step under
// SQLite's write lock, against other processes too.

const jobCols = `id, thread_id, assistant, status, run, strategy, request, meta, error, created, updated`

func scanJob(sc scanner) (*store.Job, error) {
	var (
		j             store.Job
		c, u          int64
		request, meta []byte
	)
	if err := sc.Scan(&j.ID, &j.ThreadID, &j.Assistant, &j.Status, &j.Run, &j.Strategy, &request, &meta, &j.Error, &c, &u); err != nil {
		return nil, err
	}
	if len(request) > 0 {
		j.Request = request
	}
	if len(meta) > 0 {
		j.Meta = meta
	}
	j.Created, j.Updated = fromUnix(c), fromUnix(u)
	if err := store.CheckJobStatus(j.ThreadID, j.ID, j.Status); err != nil {
		return nil, err
	}
	return &j, nil
}

// CreateJob stores a new job of an existing thread; see store.Jobs.
func (s *Store) CreateJob(ctx context.Context, j *store.Job) error {
	if j != nil && j.Status == "" {
		j.Status = store.JobPending
	}
	if err := store.CheckJob(j); err != nil {
		return fmt.Errorf("sqlite store: create job: %w", err)
	}
	created, updated := j.Created, j.Updated
	if created.IsZero() {
		created = now()
	}
	if updated.IsZero() {
		updated = created
	}
	// One statement, which writes nothing for a missing thread or a
	// taken id; only then is the thread looked up, to say which.
	var n int64
	err := s.write(ctx, func() error {
		res, err := s.w.insertJob.ExecContext(context.WithoutCancel(ctx),
			j.ID, j.ThreadID, j.Assistant, string(j.Status), j.Run, j.Strategy, nonNil(j.Request), nonNil(j.Meta), j.Error, unix(created), unix(updated))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err == nil && n == 0 {
		if err = s.threadExists(ctx, j.ThreadID); err == nil {
			err = fmt.Errorf("sqlite store: job %s: %w", j.ID, store.ErrExists)
		}
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrExists) {
			return err
		}
		return fmt.Errorf("sqlite store: create job %s: %w", j.ID, err)
	}
	j.Created, j.Updated = created, updated
	return nil
}

// Job returns a job.
func (s *Store) Job(ctx context.Context, id string) (*store.Job, error) {
	j, err := scanJob(s.r.job.QueryRowContext(point(ctx), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("job", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: job %s: %w", id, err)
	}
	return j, nil
}

// queryJobs runs a query of jobs, prepared once for its shape, and scans
// them.
func (s *Store) queryJobs(ctx context.Context, q string, args ...any) ([]*store.Job, error) {
	rows, err := s.cache.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*store.Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// jobsQuery is the statement Jobs runs for q (checked), with its
// arguments.
func (s *Store) jobsQuery(q store.JobQuery) (string, []any) {
	var (
		where []string
		args  []any
	)
	if q.ThreadID != "" {
		where, args = append(where, `thread_id = ?`), append(args, q.ThreadID)
	}
	if len(q.Status) > 0 {
		// The statuses (checked: the six of store.JobStatus) are
		// literals: as parameters, their values could pick the partial
		// index jobs_pending, and SQLite would plan the statement again
		// at each call.
		sts := slices.Compact(slices.Sorted(slices.Values(q.Status)))
		lits := make([]string, len(sts))
		for i, st := range sts {
			lits[i] = `'` + string(st) + `'`
		}
		if len(lits) == 1 {
			// As an equality, the partial index jobs_running serves
			// the running jobs of every thread (an IN does not pick
			// it).
			where = append(where, `status = `+lits[0])
		} else {
			where = append(where, `status IN (`+strings.Join(lits, `, `)+`)`)
		}
	}
	query := `SELECT ` + jobCols + ` FROM jobs`
	if q.ThreadID == "" && len(q.Status) == 1 {
		// The pending or running jobs of every thread: from their
		// partial index (then sorted), not a scan of all jobs in the
		// order of jobs_created, which SQLite would pick.
		switch {
		case q.Status[0] == store.JobPending:
			query += ` INDEXED BY jobs_pending`
		case q.Status[0] == store.JobRunning && s.schema >= 8:
			query += ` INDEXED BY jobs_running`
		}
	}
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	limit := int64(-1)
	if q.Limit > 0 {
		limit = int64(q.Limit)
	}
	query += ` ORDER BY created DESC, id LIMIT ? + 0 OFFSET ? + 0`
	return query, append(args, limit, q.Offset)
}

// Jobs lists the jobs q selects, newest first; see store.Jobs.
func (s *Store) Jobs(ctx context.Context, q store.JobQuery) ([]*store.Job, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("sqlite store: jobs: %w", err)
	}
	query, args := s.jobsQuery(q)
	qctx := ctx
	if q.ThreadID != "" {
		qctx = point(ctx) // one thread's jobs, through its index
	}
	out, err := s.queryJobs(qctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: jobs: %w", err)
	}
	if len(out) == 0 && q.ThreadID != "" && !q.ThreadKnown {
		var one int
		err := s.r.threadExists.QueryRowContext(point(ctx), q.ThreadID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound("thread", q.ThreadID)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite store: jobs: %w", err)
		}
	}
	return out, nil
}

// DeleteJob removes a job; its events go with it (ON DELETE CASCADE).
func (s *Store) DeleteJob(ctx context.Context, id string) error {
	var res sql.Result
	err := s.write(ctx, func() (err error) {
		res, err = s.w.deleteJob.ExecContext(ctx, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store: delete job %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite store: delete job %s: %w", id, err)
	} else if n == 0 {
		return notFound("job", id)
	}
	s.wakeRunEvents(id) // its waiters find it gone
	return nil
}

// SetJob moves a job from one of the statuses from to to; see
// store.Jobs.
func (s *Store) SetJob(ctx context.Context, id string, from []store.JobStatus, to store.JobStatus, run, errText string) (*store.Job, error) {
	if err := store.CheckSetJob(id, from, to); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	// One prepared statement on the common path: the status moves only
	// from one of from. Only when it does not is the job read, to say
	// why.
	args, err := setJobArgs(id, from, to, run, errText, now())
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	var j *store.Job
	err = s.write(ctx, func() error {
		var err error
		j, err = scanJob(s.w.setJob.QueryRowContext(context.WithoutCancel(ctx), args...))
		return err
	})
	if err == nil {
		return j, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite store: set job %s: %w", id, err)
	}
	var cur store.JobStatus
	err = s.r.jobStatus.QueryRowContext(point(ctx), id).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, notFound("job", id)
	case err != nil:
		return nil, fmt.Errorf("sqlite store: set job %s: %w", id, err)
	}
	// (A status back in from by now moved after the update refused:
	// another writer got there first all the same.)
	return nil, &store.JobConflictError{ID: id, Status: cur, From: slices.Clone(from), To: to}
}

// setJobArgs are the arguments of the statement setJob (SetJob's, and
// EndRun's job change) at time t, which CheckSetJob accepted: the
// statuses to move from, without repeats, padded to six with the first
// (the statement takes six, so that it stays one prepared statement);
// more than six is ErrInvalid.
func setJobArgs(id string, from []store.JobStatus, to store.JobStatus, run, errText string, t time.Time) ([]any, error) {
	from = slices.Compact(slices.Sorted(slices.Values(from)))
	if len(from) > 6 {
		return nil, fmt.Errorf("set job %s: %d statuses to move from: %w", id, len(from), store.ErrInvalid)
	}
	args := []any{id, string(to), run, errText, unix(t)}
	for i := range 6 {
		f := from[0]
		if i < len(from) {
			f = from[i]
		}
		args = append(args, string(f))
	}
	return args, nil
}

// pendingJobsSQL selects what PendingJobs lists: pending jobs of threads
// without a running job and without an older pending one, oldest first.
const pendingJobsSQL = `SELECT ` + jobCols + ` FROM jobs j WHERE status = 'pending'
	AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.thread_id = j.thread_id AND r.status = 'running')
	AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.thread_id = j.thread_id AND o.status = 'pending'
		AND (o.created < j.created OR o.created = j.created AND o.id < j.id))
	ORDER BY created, id LIMIT ? + 0`

// PendingJobs lists the jobs to start next, in one query; see
// store.Jobs.
func (s *Store) PendingJobs(ctx context.Context, limit int) ([]*store.Job, error) {
	if limit < 0 {
		return nil, fmt.Errorf("sqlite store: pending jobs: limit %d: negative: %w", limit, store.ErrInvalid)
	}
	l := int64(-1)
	if limit > 0 {
		l = int64(limit)
	}
	out, err := s.queryJobs(ctx, pendingJobsSQL, l)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: pending jobs: %w", err)
	}
	return out, nil
}
