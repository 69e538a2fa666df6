package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/store"
)

var _ store.RunEnder = (*Store)(nil)

// EndRun implements store.RunEnder: in one transaction that holds the
// thread's row (as Claim, Heartbeat and Release do), the lease is judged
// at the server's clock for every fenced part and the records' Seq
// against the log's end, then the records are appended (with Append's
// statement), the answered questions go, the new ones and the run are
// put, the job changes (with SetJob's statement; a job missing or not in
// From is left as it is) and the lease is released, sent together in one
// batch: one commit instead of one for each write.
func (s *Store) EndRun(ctx context.Context, e *store.RunEnd) error {
	if err := store.CheckRunEnd(e); err != nil {
		return fmt.Errorf("store/postgres: %w", err)
	}
	if len(e.Records) > 0 {
		if err := store.CheckAppend(e.Records); err != nil {
			return fmt.Errorf("store/postgres: %w", err)
		}
	}
	n := now()
	var recs *appendArgs // nil without records
	if len(e.Records) > 0 {
		a := newAppendArgs(e.Records)
		recs = &a
	}
	created := make([]time.Time, len(e.Pending))
	for i, p := range e.Pending {
		created[i] = p.Created
		if created[i].IsZero() {
			created[i] = n
		}
	}
	run := e.Run
	var runCreated, runUpdated time.Time
	if run != nil {
		runCreated, runUpdated = run.Created, run.Updated
		if runCreated.IsZero() {
			runCreated = n
		}
		if runUpdated.IsZero() {
			runUpdated = n
		}
	}
	// What the transaction read back, in one variable: the run's stored
	// Created, and whether the job changed.
	var got struct {
		stored  *time.Time
		jobDone bool
	}
	err := s.retry(ctx, func() error {
		got.stored, got.jobDone = nil, false
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var (
				st      store.LeaseState
				expires *time.Time
				at      time.Time
			)
			var err error
			if recs == nil {
				// The log's end is read only for records: pgx plans
				// the scan of every column anew each time.
				err = tx.QueryRow(ctx, `SELECT lease_owner, lease_fence, lease_expires, clock_timestamp() FROM weft_threads WHERE id = $1 FOR UPDATE`, e.Thread).
					Scan(&st.Owner, &st.Fence, &expires, &at)
			} else {
				err = tx.QueryRow(ctx, `SELECT lease_owner, lease_fence, lease_expires, clock_timestamp(), last_seq FROM weft_threads WHERE id = $1 FOR UPDATE`, e.Thread).
					Scan(&st.Owner, &st.Fence, &expires, &at, &recs.last)
			}
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("store/postgres: thread %s: %w", e.Thread, store.ErrNotFound)
			}
			if err != nil {
				return err
			}
			if expires != nil {
				st.Expires = expires.UTC()
			}
			at = at.UTC()
			if r := recs; r != nil {
				if err := store.CheckFence(e.Thread, "append", r.fence, st, at); err != nil {
					return err
				}
				if r.seqs[0] != r.last+1 {
					return &store.ConflictError{ThreadID: e.Thread, Want: r.seqs[0], Got: r.last}
				}
			}
			for _, p := range e.Pending {
				if err := store.CheckFence(e.Thread, "put pending", p.Fence, st, at); err != nil {
					return err
				}
			}
			if run != nil {
				if err := store.CheckFence(e.Thread, "put run", run.Fence, st, at); err != nil {
					return err
				}
			}
			if l := e.Release; l != nil {
				if err := store.CheckLease("release", *l, st, at); err != nil {
					return err
				}
			}
			b := &pgx.Batch{}
			if r := recs; r != nil {
				// Append's statement, which judges again what was judged
				// above, under the row's lock this transaction holds.
				b.Queue(appendSQL, e.Thread, r.seqs, r.runs, r.steps, r.kinds, r.data, r.sums, n, r.seqs[len(r.seqs)-1], r.seqs[0]-1, r.fence).
					QueryRow(func(row pgx.Row) error {
						var refused string
						if err := row.Scan(&refused); err != nil {
							return err
						}
						if refused != "" {
							return refusal(e.Thread, r.fence, r.seqs[0], refused)
						}
						return nil
					})
			}
			if len(e.Answered) > 0 {
				b.Queue(`DELETE FROM weft_pending WHERE thread_id = $1 AND id = ANY($2::text[])`, e.Thread, e.Answered)
			}
			for i, p := range e.Pending {
				q := p.Question
				if q == nil {
					q = []byte{}
				}
				b.Queue(`INSERT INTO weft_pending (thread_id, id, run_id, node, question, created)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (thread_id, id) DO UPDATE SET run_id = excluded.run_id, node = excluded.node, question = excluded.question`,
					p.ThreadID, p.ID, p.RunID, p.Node, q, created[i])
			}
			if run != nil {
				b.Queue(`INSERT INTO weft_runs (id, thread_id, number, status, error, created, updated)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (id) DO UPDATE SET number = excluded.number, status = excluded.status,
	error = excluded.error, updated = excluded.updated
	WHERE weft_runs.thread_id = excluded.thread_id
RETURNING created`, run.ID, run.ThreadID, int32(run.Number), run.Status, run.Error, runCreated, runUpdated).QueryRow(func(row pgx.Row) error {
					err := row.Scan(&got.stored)
					if errors.Is(err, pgx.ErrNoRows) {
						return fmt.Errorf("store/postgres: run %s belongs to another thread than %s: %w", run.ID, run.ThreadID, store.ErrInvalid)
					}
					return err
				})
			}
			if j := e.Job; j != nil {
				b.Queue(setJobSQL, j.ID, string(j.To), j.Run, j.Error, n, jobStatuses(j.From)).QueryRow(func(row pgx.Row) error {
					// No row: no such job, or one not in From; left as it is.
					_, err := scanJob(row)
					switch {
					case err == nil:
						got.jobDone = true
					case !errors.Is(err, pgx.ErrNoRows):
						return fmt.Errorf("job %s: %w", j.ID, err)
					}
					return nil
				})
			}
			if e.Release != nil {
				b.Queue(`UPDATE weft_threads SET lease_owner = '', lease_expires = NULL WHERE id = $1`, e.Thread)
			}
			if b.Len() == 0 {
				return nil
			}
			return tx.SendBatch(ctx, b).Close()
		})
	})
	if err != nil {
		return endRunErr(ctx, e.Thread, err)
	}
	// Committed: only now are the parts told what was written.
	for i, r := range e.Records {
		r.Checksum, r.Time = uint32(recs.sums[i]), n
	}
	if e.Job != nil {
		e.Job.Done = got.jobDone
	}
	for i, p := range e.Pending {
		p.Created = created[i]
	}
	if run != nil {
		if got.stored != nil {
			runCreated = got.stored.UTC()
		}
		run.Created, run.Updated = runCreated, runUpdated
	}
	return nil
}

// endRunErr is the error of EndRun's transaction: the store's own errors
// as they are, any other an *Error.
func endRunErr(ctx context.Context, thread string, err error) error {
	var (
		le *store.LeaseError
		ce *store.ConflictError
	)
	switch {
	case errors.As(err, &le), errors.As(err, &ce), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalid), ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	default:
		return &Error{Op: "end run of thread " + thread, Err: err}
	}
}
