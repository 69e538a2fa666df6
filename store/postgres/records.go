package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weftlang/weft/store"
)

// errCommitLost marks an Append that was sent but not answered: it may or
// may not have been applied.
var errCommitLost = errors.New("commit unanswered")

// Append adds records to a thread in one short transaction, sent as one
// statement (one round trip): it locks the thread's row (SELECT ... FOR
// UPDATE), and only if the records continue the log and their fence is
// what the thread's lease allows (store.Leaser, by the server's clock)
// inserts them and moves the thread's last seq; the unique (thread_id,
// seq) constraint backs this. A refused lease is a *store.LeaseError, a
// record that does not continue the log, or a (thread, seq) already
// stored, a *store.ConflictError, and nothing is written; a missing thread
// is store.ErrNotFound. Append sets each record's Checksum and Time.
func (s *Store) Append(ctx context.Context, recs ...*store.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := store.CheckAppend(recs); err != nil {
		return err
	}
	tid := recs[0].ThreadID
	a := newAppendArgs(recs)
	seqs, runs, steps, kinds, data, sums, fence := a.seqs, a.runs, a.steps, a.kinds, a.data, a.sums, a.fence
	t := now()
	lost := false
	err := s.retry(ctx, func() error {
		err := s.appendTx(ctx, tid, fence, seqs, runs, steps, kinds, data, sums, t)
		var (
			ce *store.ConflictError
			le *store.LeaseError
		)
		if lost && (errors.As(err, &ce) || errors.As(err, &le)) && s.stored(ctx, tid, fence, seqs, runs, steps, kinds, data, sums) {
			return nil // the lost commit went through
		}
		if errors.Is(err, errCommitLost) {
			lost = true
		}
		return err
	})
	if err != nil {
		return err
	}
	for i, r := range recs {
		r.Checksum, r.Time = uint32(sums[i]), t
	}
	return nil
}

// appendArgs are records (which store.CheckAppend accepted) as appendSQL
// takes them: a column each, and their one fence.
type appendArgs struct {
	seqs  []int64
	runs  []string
	steps []int32
	kinds []string
	data  [][]byte
	sums  []int64
	fence int64
	last  int64 // the log's end, as EndRun reads it
}

// newAppendArgs returns recs (at least one) as appendSQL takes them.
func newAppendArgs(recs []*store.Record) appendArgs {
	n := len(recs)
	a := appendArgs{seqs: make([]int64, n), runs: make([]string, n), steps: make([]int32, n), kinds: make([]string, n),
		data: make([][]byte, n), sums: make([]int64, n), fence: recs[0].Fence}
	for i, r := range recs {
		a.seqs[i], a.runs[i], a.steps[i], a.kinds[i] = r.Seq, r.RunID, int32(r.Step), string(r.Kind)
		a.data[i] = r.Data
		if a.data[i] == nil {
			a.data[i] = []byte{}
		}
		a.sums[i] = int64(store.Sum(r.Data))
	}
	return a
}

func (s *Store) appendTx(ctx context.Context, tid string, fence int64, seqs []int64, runs []string, steps []int32,
	kinds []string, data [][]byte, sums []int64, t time.Time) error {
	// One statement, so one round trip and one implicit transaction: lock
	// the thread's row, and only if the log ends just before seqs[0] and
	// the lease allows the fence (the rules of store.CheckFence, at the
	// server's clock) insert the records and move the thread's last seq.
	// It returns one text (no row: no thread): empty when it wrote, else
	// the row it judged (the log's end, the lease and the server's time)
	// as JSON, to say exactly why from the state it refused, never a
	// later one. So the common case reads nothing back: pgx plans the
	// scan of every result column anew (and copies its name) on every
	// query, and reading the lease's five columns back made an append
	// 80 allocations instead of 66 (BenchmarkAppend).
	var refused string
	err := s.pool.QueryRow(ctx, appendSQL,
		tid, seqs, runs, steps, kinds, data, sums, t, seqs[len(seqs)-1], seqs[0]-1, fence).Scan(&refused)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("store/postgres: append to thread %s: %w", tid, store.ErrNotFound)
	case pgCode(err) == uniqueViolation:
		// The log and the thread's last seq disagree: report the log's end.
		var end int64
		_ = s.pool.QueryRow(ctx, "SELECT coalesce(max(seq), 0) FROM weft_records WHERE thread_id = $1", tid).Scan(&end)
		return &store.ConflictError{ThreadID: tid, Want: seqs[0], Got: end}
	case err != nil:
		if !pgconn.SafeToRetry(err) && pgCode(err) == "" {
			// Sent but unanswered: it may have been applied.
			return &Error{Op: "append to " + tid, Err: fmt.Errorf("%w: %w", errCommitLost, err)}
		}
		return &Error{Op: "append to " + tid, Err: err}
	}
	if refused == "" {
		return nil
	}
	return refusal(tid, fence, seqs[0], refused)
}

// leaseAllows is the SQL test of store.CheckFence, on the columns
// lease_owner, lease_fence, lease_expires, now (the server's time) and
// fence (the writer's) of the CTE th. A constant, as the statements made
// of it are: building one on every call cost two allocations.
const leaseAllows = `CASE
		WHEN fence = 0 THEN NOT (lease_owner <> '' AND coalesce(lease_expires > now, false))
		ELSE lease_owner <> '' AND lease_fence = fence AND coalesce(lease_expires > now, false)
	END`

// appendSQL is Append's one statement; see appendTx.
const appendSQL = `WITH th AS (
	SELECT last_seq, lease_owner, lease_fence, lease_expires, clock_timestamp() AS now, $11::bigint AS fence
	FROM weft_threads WHERE id = $1 FOR UPDATE
), ok AS (
	SELECT last_seq = $10::bigint AND ` + leaseAllows + ` AS go FROM th
), ins AS (
	INSERT INTO weft_records (thread_id, seq, run_id, step, kind, data, checksum, time, fence)
	SELECT $1, u.seq, u.run_id, u.step, u.kind, u.data, u.checksum, $8::timestamptz, $11::bigint
	FROM unnest($2::bigint[], $3::text[], $4::integer[], $5::text[], $6::bytea[], $7::bigint[])
		AS u (seq, run_id, step, kind, data, checksum)
	WHERE (SELECT go FROM ok)
), up AS (
	UPDATE weft_threads SET last_seq = $9::bigint, updated = greatest(updated, $8::timestamptz)
	WHERE id = $1 AND (SELECT go FROM ok)
)
SELECT CASE WHEN ok.go THEN '' ELSE ` + judgedJSON + ` END AS r FROM ok, th`

// judgedJSON is the SQL of a refused write's judged, from the row th.
const judgedJSON = `json_build_object(
	'last', th.last_seq, 'owner', th.lease_owner, 'fence', th.lease_fence,
	'expires', (extract(epoch FROM th.lease_expires) * 1000000)::bigint,
	'now', (extract(epoch FROM th.now) * 1000000)::bigint)::text`

// judged is the thread's row as a refused write judged it: the log's
// end, the lease, and the server's time, the times in microseconds since
// the Unix epoch (expires null when never leased).
type judged struct {
	Last    int64  `json:"last"`
	Owner   string `json:"owner"`
	Fence   int64  `json:"fence"`
	Expires *int64 `json:"expires"`
	Now     int64  `json:"now"`
}

// refusal is the error of an append to tid under fence at seq that the
// statement refused, given the row it judged (as JSON): the lease first
// (store.CheckFence), then the log's end.
func refusal(tid string, fence, seq int64, row string) error {
	return refused(tid, "append", fence, row, func(j judged) error {
		if j.Last != seq-1 {
			return &store.ConflictError{ThreadID: tid, Want: seq, Got: j.Last}
		}
		return nil
	})
}

// refused is the error of a write (op) to tid under fence that a
// statement refused, given the row it judged (as JSON): the lease's
// (store.CheckFence), else more's, else an *Error saying that nothing
// explains the refusal.
func refused(tid, op string, fence int64, row string, more func(judged) error) error {
	var j judged
	if err := json.Unmarshal([]byte(row), &j); err != nil {
		return &Error{Op: op + " " + tid, Err: fmt.Errorf("refused, and the thread's row reads back as %q: %w", row, err)}
	}
	lease := store.LeaseState{Owner: j.Owner, Fence: j.Fence}
	if j.Expires != nil {
		lease.Expires = time.UnixMicro(*j.Expires).UTC()
	}
	if err := store.CheckFence(tid, op, fence, lease, time.UnixMicro(j.Now).UTC()); err != nil {
		return err
	}
	if more != nil {
		if err := more(j); err != nil {
			return err
		}
	}
	// The statement's test and CheckFence disagree: a bug, said as one.
	return &Error{Op: op + " " + tid, Err: fmt.Errorf("refused under fence %d, but store.CheckFence allows it with the thread's row %s", fence, row)}
}

// stored reports whether the records are in the log as given: an Append
// whose commit answer was lost did go through.
func (s *Store) stored(ctx context.Context, tid string, fence int64, seqs []int64, runs []string, steps []int32,
	kinds []string, data [][]byte, sums []int64) bool {
	got, err := s.Records(ctx, tid, seqs[0])
	if err != nil || len(got) < len(seqs) {
		return false
	}
	for i, r := range got[:len(seqs)] {
		if r.Seq != seqs[i] || r.Fence != fence || r.RunID != runs[i] || int32(r.Step) != steps[i] || string(r.Kind) != kinds[i] ||
			int64(r.Checksum) != sums[i] || !bytes.Equal(r.Data, data[i]) {
			return false
		}
	}
	return true
}

const recordCols = "thread_id, run_id, seq, step, kind, data, checksum, time, fence"

// scanRecord reads a record and checks it: its checksum against its data,
// its kind against the known ones.
func scanRecord(row pgx.Row) (*store.Record, error) {
	var r store.Record
	var step int32
	var kind string
	var sum int64
	if err := row.Scan(&r.ThreadID, &r.RunID, &r.Seq, &step, &kind, &r.Data, &sum, &r.Time, &r.Fence); err != nil {
		return nil, err
	}
	return checkRecord(&r, step, kind, sum)
}

// checkRecord completes a record read with its step, kind and checksum,
// and checks it.
func checkRecord(r *store.Record, step int32, kind string, sum int64) (*store.Record, error) {
	r.Step, r.Kind, r.Time = int(step), store.Kind(kind), r.Time.UTC()
	corrupt := func(field, format string, args ...any) error {
		return &store.CorruptError{ThreadID: r.ThreadID, Seq: r.Seq, Step: r.Step, Field: field, Detail: fmt.Sprintf(format, args...)}
	}
	if sum < 0 || sum > 0xFFFFFFFF {
		return nil, corrupt("checksum", "stored checksum %d is not a CRC-32C", sum)
	}
	r.Checksum = uint32(sum)
	if got := store.Sum(r.Data); got != r.Checksum {
		return nil, corrupt("data", "CRC-32C is %08x, stored checksum %08x", got, r.Checksum)
	}
	if !r.Kind.Valid() {
		return nil, corrupt("kind", "unknown kind %q", kind)
	}
	return r, nil
}

// Records returns a thread's records with Seq >= from, in order, checking
// each: a bad one is a *store.CorruptError naming thread, seq, step and
// field, and so is a gap in the log (store.CheckSeqs, against the
// thread's last seq). A missing thread is store.ErrNotFound.
func (s *Store) Records(ctx context.Context, threadID string, from int64) ([]*store.Record, error) {
	var out []*store.Record
	err := s.retry(ctx, func() error {
		out = nil
		// One statement, so one view of the log: the thread's last seq,
		// the log's first, and the records from from on (none: one row
		// of nulls). The first seq's subquery names $1, not t.id: it is
		// then run once, not once per record.
		rows, err := s.pool.Query(ctx, `SELECT t.last_seq, (SELECT min(seq) FROM weft_records WHERE thread_id = $1),
	r.run_id, r.seq, r.step, r.kind, r.data, r.checksum, r.time, r.fence
FROM weft_threads t LEFT JOIN weft_records r ON r.thread_id = t.id AND r.seq >= $2::bigint
WHERE t.id = $1 ORDER BY r.seq`, threadID, from)
		if err != nil {
			return err
		}
		defer rows.Close()
		found := false
		var last, first int64
		for rows.Next() {
			found = true
			var (
				fst       *int64
				run, kind *string
				seq, sum  *int64
				fence     *int64
				step      *int32
				data      []byte
				at        *time.Time
			)
			if err := rows.Scan(&last, &fst, &run, &seq, &step, &kind, &data, &sum, &at, &fence); err != nil {
				return err
			}
			if fst != nil {
				first = *fst
			}
			if seq == nil {
				continue // no record from from on
			}
			r := &store.Record{ThreadID: threadID, RunID: *run, Seq: *seq, Data: data, Time: at.UTC(), Fence: *fence}
			if r.Data == nil {
				r.Data = []byte{}
			}
			r, err := checkRecord(r, *step, *kind, *sum)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("store/postgres: thread %s: %w", threadID, store.ErrNotFound)
		}
		return store.CheckSeqs(threadID, from, out, first, last)
	})
	var ce *store.CorruptError
	switch {
	case errors.As(err, &ce), errors.Is(err, store.ErrNotFound):
		return nil, err
	case err != nil:
		return nil, &Error{Op: "records of " + threadID, Err: err}
	}
	return out, nil
}

// threadExists returns nil for an existing thread, else an error wrapping
// store.ErrNotFound.
func (s *Store) threadExists(ctx context.Context, threadID string) error {
	var one int
	err := s.pool.QueryRow(ctx, "SELECT 1 FROM weft_threads WHERE id = $1", threadID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store/postgres: thread %s: %w", threadID, store.ErrNotFound)
	}
	return err
}

// LastSnapshot returns the thread's latest snapshot record, checked, or
// store.ErrNotFound.
func (s *Store) LastSnapshot(ctx context.Context, threadID string) (*store.Record, error) {
	var r *store.Record
	err := s.retry(ctx, func() error {
		var err error
		r, err = scanRecord(s.pool.QueryRow(ctx, "SELECT "+recordCols+
			" FROM weft_records WHERE thread_id = $1 AND kind = 'snapshot' ORDER BY seq DESC LIMIT 1", threadID))
		return err
	})
	var ce *store.CorruptError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("store/postgres: snapshot of thread %s: %w", threadID, store.ErrNotFound)
	case errors.As(err, &ce):
		return nil, err
	case err != nil:
		return nil, &Error{Op: "last snapshot of " + threadID, Err: err}
	}
	return r, nil
}

// Head returns the seq and time of the thread's last record (see
// store.HeadReader); 0 for a thread with none.
func (s *Store) Head(ctx context.Context, threadID string) (int64, time.Time, error) {
	var seq *int64
	var at *time.Time
	err := s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, "SELECT r.seq, r.time FROM weft_threads t LEFT JOIN LATERAL "+
			"(SELECT seq, time FROM weft_records WHERE thread_id = t.id ORDER BY seq DESC LIMIT 1) r ON true WHERE t.id = $1", threadID).Scan(&seq, &at)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, time.Time{}, fmt.Errorf("store/postgres: thread %s: %w", threadID, store.ErrNotFound)
	case err != nil:
		return 0, time.Time{}, &Error{Op: "head of " + threadID, Err: err}
	case seq == nil || at == nil:
		return 0, time.Time{}, nil
	}
	return *seq, *at, nil
}

// Prune removes the runs of a thread that opts selects (see
// store.PruneOptions; the thread's last run always stays) with their
// pending questions, and the records before the snapshot that folding the
// kept runs starts from (the latest snapshot at or before the kept runs'
// first record; with no such snapshot no record is removed), in one
// transaction that locks the thread's row. The thread's seq keeps counting
// from where it was. It returns the number of records removed.
func (s *Store) Prune(ctx context.Context, threadID string, opts store.PruneOptions) (int, error) {
	if opts.KeepRuns < 0 {
		return 0, fmt.Errorf("store/postgres: prune thread %s keeping %d runs: %w", threadID, opts.KeepRuns, store.ErrInvalid)
	}
	var removed int64
	err := s.retry(ctx, func() error {
		removed = 0
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var last int64
			err := tx.QueryRow(ctx, "SELECT last_seq FROM weft_threads WHERE id = $1 FOR UPDATE", threadID).Scan(&last)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("store/postgres: prune thread %s: %w", threadID, store.ErrNotFound)
			}
			if err != nil {
				return err
			}
			rows, err := tx.Query(ctx, "SELECT "+runCols+" FROM weft_runs WHERE thread_id = $1 ORDER BY number, created, id", threadID)
			if err != nil {
				return err
			}
			runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.Run, error) { return scanRun(row) })
			if err != nil {
				return err
			}
			drop, keep := opts.Select(runs)
			if len(drop) == 0 {
				return nil
			}
			ids := func(rs []*store.Run) []string {
				out := make([]string, len(rs))
				for i, r := range rs {
					out[i] = r.ID
				}
				return out
			}
			// The first record of the kept runs (the end of the log when
			// they have none yet), and the latest snapshot at or before it.
			cutoff := last + 1
			var first *int64
			if err := tx.QueryRow(ctx, `SELECT min(seq) FROM weft_records WHERE thread_id = $1 AND run_id = ANY($2::text[])`,
				threadID, ids(keep)).Scan(&first); err != nil {
				return err
			}
			if first != nil {
				cutoff = *first
			}
			var snap *int64
			if err := tx.QueryRow(ctx, `SELECT max(seq) FROM weft_records WHERE thread_id = $1 AND kind = 'snapshot'
AND seq <= $2::bigint`, threadID, cutoff).Scan(&snap); err != nil {
				return err
			}
			if snap != nil {
				tag, err := tx.Exec(ctx, "DELETE FROM weft_records WHERE thread_id = $1 AND seq < $2::bigint", threadID, *snap)
				if err != nil {
					return err
				}
				removed = tag.RowsAffected()
			}
			// The removed runs, with their pending questions.
			_, err = tx.Exec(ctx, `WITH gone AS (
	DELETE FROM weft_runs WHERE thread_id = $1 AND id = ANY($2::text[]) RETURNING id
)
DELETE FROM weft_pending WHERE thread_id = $1 AND run_id IN (SELECT id FROM gone)`, threadID, ids(drop))
			return err
		})
	})
	if errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	if err != nil {
		return 0, &Error{Op: "prune " + threadID, Err: err}
	}
	return int(removed), nil
}
