package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/store"
)

var _ store.Jobs = (*Store)(nil)

// Jobs live in weft_jobs (schema version 5), deleted with their thread by
// the foreign key's cascade. SetJob is one UPDATE whose WHERE compares the
// status: of concurrent ones, PostgreSQL runs one at a time on the row and
// re-checks the WHERE of the next against the row the first wrote, so one
// wins.

const jobCols = `id, thread_id, assistant, status, run, strategy, request, meta, error, created, updated`

func scanJob(row pgx.Row) (*store.Job, error) {
	var (
		j             store.Job
		request, meta []byte
	)
	if err := row.Scan(&j.ID, &j.ThreadID, &j.Assistant, &j.Status, &j.Run, &j.Strategy, &request, &meta, &j.Error, &j.Created, &j.Updated); err != nil {
		return nil, err
	}
	if len(request) > 0 {
		j.Request = request
	}
	if len(meta) > 0 {
		j.Meta = meta
	}
	j.Created, j.Updated = j.Created.UTC(), j.Updated.UTC()
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
		return fmt.Errorf("store/postgres: create job: %w", err)
	}
	created, updated := j.Created, j.Updated
	if created.IsZero() {
		created = now()
	}
	if updated.IsZero() {
		updated = created
	}
	lost := false
	err := s.retry(ctx, func() error {
		tag, err := s.pool.Exec(ctx, `INSERT INTO weft_jobs (`+jobCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (id) DO NOTHING`, j.ID, j.ThreadID, j.Assistant, string(j.Status), j.Run, j.Strategy, nonNil(j.Request), nonNil(j.Meta), j.Error, created, updated)
		switch {
		case pgCode(err) == foreignKeyViolation:
			return fmt.Errorf("store/postgres: job %s: thread %s: %w", j.ID, j.ThreadID, store.ErrNotFound)
		case err != nil:
			lost = true
			return &Error{Op: "create job " + j.ID, Err: err}
		case tag.RowsAffected() == 0:
			if lost {
				// The previous try's commit may have been lost in flight:
				// if the row is ours, it succeeded.
				if got, gerr := s.Job(ctx, j.ID); gerr == nil && got.ThreadID == j.ThreadID && got.Created.Equal(created.Truncate(time.Microsecond)) {
					return nil
				}
			}
			return fmt.Errorf("store/postgres: job %s: %w", j.ID, store.ErrExists)
		}
		return nil
	})
	if err != nil {
		return err
	}
	j.Created, j.Updated = created, updated
	return nil
}

// CreateJobTx stores a new job of an existing thread in the caller's
// transaction tx (of this store's database), as CreateJob does, without
// its retries: the caller commits or rolls back, so that the job is
// written with whatever else tx writes (a queue's entry for it), or not
// at all.
func (s *Store) CreateJobTx(ctx context.Context, tx pgx.Tx, j *store.Job) error {
	if j != nil && j.Status == "" {
		j.Status = store.JobPending
	}
	if err := store.CheckJob(j); err != nil {
		return fmt.Errorf("store/postgres: create job: %w", err)
	}
	created, updated := j.Created, j.Updated
	if created.IsZero() {
		created = now()
	}
	if updated.IsZero() {
		updated = created
	}
	tag, err := tx.Exec(ctx, `INSERT INTO weft_jobs (`+jobCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (id) DO NOTHING`, j.ID, j.ThreadID, j.Assistant, string(j.Status), j.Run, j.Strategy, nonNil(j.Request), nonNil(j.Meta), j.Error, created, updated)
	switch {
	case pgCode(err) == foreignKeyViolation:
		return fmt.Errorf("store/postgres: job %s: thread %s: %w", j.ID, j.ThreadID, store.ErrNotFound)
	case err != nil:
		return &Error{Op: "create job " + j.ID, Err: err}
	case tag.RowsAffected() == 0:
		return fmt.Errorf("store/postgres: job %s: %w", j.ID, store.ErrExists)
	}
	j.Created, j.Updated = created, updated
	return nil
}

// Job returns a job.
func (s *Store) Job(ctx context.Context, id string) (*store.Job, error) {
	var j *store.Job
	err := s.retry(ctx, func() (err error) {
		j, err = scanJob(s.pool.QueryRow(ctx, `SELECT `+jobCols+` FROM weft_jobs WHERE id = $1`, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store/postgres: job %s: %w", id, store.ErrNotFound)
	}
	var ce *store.CorruptError
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, &Error{Op: "job " + id, Err: err}
	}
	return j, nil
}

// queryJobs runs a query of jobs and scans them, retrying after a lost
// connection.
func (s *Store) queryJobs(ctx context.Context, q string, args ...any) ([]*store.Job, error) {
	var out []*store.Job
	err := s.retry(ctx, func() error {
		out = []*store.Job{}
		rows, err := s.pool.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				return err
			}
			out = append(out, j)
		}
		return rows.Err()
	})
	return out, err
}

// jobsErr passes a *store.CorruptError through and wraps the others.
func jobsErr(op string, err error) error {
	var ce *store.CorruptError
	if errors.As(err, &ce) || errors.Is(err, store.ErrNotFound) {
		return err
	}
	return &Error{Op: op, Err: err}
}

// Jobs lists the jobs q selects, newest first; see store.Jobs.
func (s *Store) Jobs(ctx context.Context, q store.JobQuery) ([]*store.Job, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("store/postgres: jobs: %w", err)
	}
	var (
		where []string
		args  []any
	)
	if q.ThreadID != "" {
		args = append(args, q.ThreadID)
		where = append(where, fmt.Sprintf(`thread_id = $%d`, len(args)))
	}
	if len(q.Status) == 1 {
		// One status (checked: a store.JobStatus) as a literal, so that
		// the partial index weft_jobs_running serves the running jobs
		// of every thread, as a parameter cannot.
		where = append(where, `status = '`+string(q.Status[0])+`'`)
	} else if len(q.Status) > 0 {
		st := make([]string, len(q.Status))
		for i, s := range q.Status {
			st[i] = string(s)
		}
		args = append(args, st)
		where = append(where, fmt.Sprintf(`status = ANY($%d::text[])`, len(args)))
	}
	query := `SELECT ` + jobCols + ` FROM weft_jobs`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	var limit any // NULL: no limit
	if q.Limit > 0 {
		limit = int64(q.Limit)
	}
	args = append(args, limit, int64(q.Offset))
	query += fmt.Sprintf(` ORDER BY created DESC, id LIMIT $%d::bigint OFFSET $%d::bigint`, len(args)-1, len(args))
	out, err := s.queryJobs(ctx, query, args...)
	if err != nil {
		return nil, jobsErr("jobs", err)
	}
	if len(out) == 0 && q.ThreadID != "" && !q.ThreadKnown {
		if err := s.retry(ctx, func() error { return s.threadExists(ctx, q.ThreadID) }); err != nil {
			return nil, jobsErr("jobs", err)
		}
	}
	return out, nil
}

// DeleteJob removes a job.
func (s *Store) DeleteJob(ctx context.Context, id string) error {
	var n int64
	lost := false
	err := s.retry(ctx, func() error {
		tag, err := s.pool.Exec(ctx, `DELETE FROM weft_jobs WHERE id = $1`, id)
		if err != nil {
			lost = true
			return err
		}
		n = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return &Error{Op: "delete job " + id, Err: err}
	}
	if n == 0 && !lost { // after a lost try, the job may be gone by it
		return fmt.Errorf("store/postgres: job %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// SetJob moves a job from one of the statuses from to to, in one
// statement; see store.Jobs. It is not retried after a lost connection
// (a lost commit would then read as a conflict): the error is an *Error
// and the caller reads the job again.
func (s *Store) SetJob(ctx context.Context, id string, from []store.JobStatus, to store.JobStatus, run, errText string) (*store.Job, error) {
	if err := store.CheckSetJob(id, from, to); err != nil {
		return nil, fmt.Errorf("store/postgres: %w", err)
	}
	j, err := scanJob(s.pool.QueryRow(ctx, setJobSQL, id, string(to), run, errText, now(), jobStatuses(from)))
	if err == nil {
		return j, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, jobsErr("set job "+id, err)
	}
	var cur store.JobStatus
	err = s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT status FROM weft_jobs WHERE id = $1`, id).Scan(&cur)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("store/postgres: job %s: %w", id, store.ErrNotFound)
	case err != nil:
		return nil, &Error{Op: "set job " + id, Err: err}
	}
	return nil, &store.JobConflictError{ID: id, Status: cur, From: slices.Clone(from), To: to}
}

// setJobSQL is SetJob's statement, which EndRun's job change runs too:
// job $1 moves to $2 (taking the run $3 and the error $4 unless empty,
// updated at $5) only from one of the statuses $6; no row when it did
// not (no such job, or not in $6).
const setJobSQL = `UPDATE weft_jobs SET status = $2::text,
	run = CASE WHEN $3::text = '' THEN run ELSE $3::text END,
	error = CASE WHEN $4::text = '' THEN error ELSE $4::text END,
	updated = $5
WHERE id = $1 AND status = ANY($6::text[])
RETURNING ` + jobCols

// jobStatuses is from as setJobSQL's $6.
func jobStatuses(from []store.JobStatus) []string {
	st := make([]string, len(from))
	for i, s := range from {
		st[i] = string(s)
	}
	return st
}

// pendingJobsSQL selects what PendingJobs lists: pending jobs of threads
// without a running job and without an older pending one, oldest first.
const pendingJobsSQL = `SELECT ` + jobCols + ` FROM weft_jobs j WHERE status = 'pending'
	AND NOT EXISTS (SELECT 1 FROM weft_jobs r WHERE r.thread_id = j.thread_id AND r.status = 'running')
	AND NOT EXISTS (SELECT 1 FROM weft_jobs o WHERE o.thread_id = j.thread_id AND o.status = 'pending'
		AND (o.created < j.created OR o.created = j.created AND o.id < j.id))
	ORDER BY created, id LIMIT $1::bigint`

// PendingJobs lists the jobs to start next, in one query; see
// store.Jobs.
func (s *Store) PendingJobs(ctx context.Context, limit int) ([]*store.Job, error) {
	if limit < 0 {
		return nil, fmt.Errorf("store/postgres: pending jobs: limit %d: negative: %w", limit, store.ErrInvalid)
	}
	var l any // NULL: no limit
	if limit > 0 {
		l = int64(limit)
	}
	out, err := s.queryJobs(ctx, pendingJobsSQL, l)
	if err != nil {
		return nil, jobsErr("pending jobs", err)
	}
	return out, nil
}
