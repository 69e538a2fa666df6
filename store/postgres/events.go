package postgres

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftlang/weft/store"
)

var _ store.RunEvents = (*Store)(nil)

// Run events live in weft_run_events (schema version 7), deleted with
// their job by the foreign key's cascade. An append is one statement:
// it inserts the events only if the job exists and its last seq is the
// one before the first event's, and then notifies the channel
// runEventsChannel with the job's ID (delivered at commit). Two
// appenders of one job that both read the same last seq collide on the
// primary key: the second waits for the first to commit and then fails
// with a unique violation, which is reported as the conflict it is.
//
// WaitRunEvents listens: each Store has at most one connection of its
// pool, taken out of it (hijacked) when a waiter first needs it, on
// which it runs LISTEN and waits for notifications, waking the waiters
// of the job each one names. After the connection is lost it connects
// again and LISTENs again, waking every waiter (a notification may have
// been missed in between). Waiters also read again every fallbackPoll,
// so a waiter misses nothing while the listener is down. Close stops
// the listener and waits for it.

// runEventsChannel is the channel of the notifications of appends; the
// payload is the job's ID.
const runEventsChannel = "weft_run_events"

// fallbackPoll is how often a waiter reads again without a notification,
// and the most the listener waits between tries to connect.
const fallbackPoll = time.Second

// appendRunEventsSQL appends events ($3.. arrays, from seq $2) to job $1
// and notifies, when the job exists and its last seq is $2 - 1. It
// returns whether the job exists, its last seq before the append, and
// how many events it wrote.
const appendRunEventsSQL = `WITH j AS (SELECT id FROM weft_jobs WHERE id = $1),
last AS (SELECT coalesce(max(seq), 0) AS seq FROM weft_run_events WHERE job_id = $1),
ins AS (
	INSERT INTO weft_run_events (job_id, seq, attempt, n, event, data, time)
	SELECT $1, e.seq, e.attempt, e.n, e.event, e.data, e.time
	FROM unnest($3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::bytea[], $8::timestamptz[]) AS e (seq, attempt, n, event, data, time)
	WHERE EXISTS (SELECT 1 FROM j) AND (SELECT seq FROM last) = $2::bigint - 1
	RETURNING 1
),
notified AS (SELECT pg_notify('` + runEventsChannel + `', $1) WHERE EXISTS (SELECT 1 FROM ins))
SELECT EXISTS (SELECT 1 FROM j), (SELECT seq FROM last), (SELECT count(*) FROM ins), (SELECT count(*) FROM notified)`

// AppendRunEvents appends events of a job in one statement; see
// store.RunEvents.
func (s *Store) AppendRunEvents(ctx context.Context, job string, evs []*store.RunEvent) error {
	for _, e := range evs {
		if err := store.CheckRunEvent(job, e); err != nil {
			return fmt.Errorf("store/postgres: append run events: %w", err)
		}
	}
	if len(evs) == 0 {
		_, err := s.RunEvents(ctx, job, 0, 1)
		return err
	}
	for i, e := range evs[1:] {
		if e.Seq != evs[i].Seq+1 {
			return &store.RunEventConflictError{Job: job, Want: e.Seq, Got: evs[i].Seq}
		}
	}
	t := now()
	var (
		seqs, ns   = make([]int64, len(evs)), make([]int64, len(evs))
		atts, name = make([]string, len(evs)), make([]string, len(evs))
		data       = make([][]byte, len(evs))
		times      = make([]time.Time, len(evs))
	)
	for i, e := range evs {
		seqs[i], ns[i], atts[i], name[i], data[i], times[i] = e.Seq, e.N, e.Attempt, e.Event, nonNil(e.Data), e.Time
		if e.Time.IsZero() {
			times[i] = t
		}
	}
	lost := false
	err := s.retry(ctx, func() error {
		var (
			exists                bool
			last, wrote, notified int64
		)
		err := s.pool.QueryRow(ctx, appendRunEventsSQL, job, evs[0].Seq, seqs, atts, ns, name, data, times).Scan(&exists, &last, &wrote, &notified)
		switch {
		case pgCode(err) == foreignKeyViolation:
			return fmt.Errorf("store/postgres: job %s: %w", job, store.ErrNotFound) // deleted meanwhile
		case pgCode(err) == uniqueViolation:
			// Another appender wrote these seqs first.
			return s.runEventConflict(ctx, job, evs, lost)
		case err != nil:
			lost = true
			return &Error{Op: "append run events of job " + job, Err: err}
		case !exists:
			return fmt.Errorf("store/postgres: job %s: %w", job, store.ErrNotFound)
		case wrote == 0:
			return s.runEventConflict(ctx, job, evs, lost)
		case wrote != int64(len(evs)) || notified != 1:
			return &Error{Op: "append run events of job " + job, Err: fmt.Errorf("wrote %d of %d events, %d notifications", wrote, len(evs), notified)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range evs {
		if e.Time.IsZero() {
			e.Time = t
		}
	}
	return nil
}

// runEventConflict is the error of an append of evs refused because the
// job's stream does not end just before them: a *RunEventConflictError
// with the stream's last seq, or nil when lost (a try whose commit was
// lost in flight) and the stored events are evs, which that try wrote.
func (s *Store) runEventConflict(ctx context.Context, job string, evs []*store.RunEvent, lost bool) error {
	var last int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM weft_run_events WHERE job_id = $1`, job).Scan(&last); err != nil {
		return &Error{Op: "append run events of job " + job, Err: err}
	}
	if lost && last >= evs[len(evs)-1].Seq {
		got, err := s.RunEvents(ctx, job, evs[0].Seq-1, len(evs))
		if err == nil && len(got) == len(evs) && sameEvents(got, evs) {
			return nil
		}
	}
	return &store.RunEventConflictError{Job: job, Want: evs[0].Seq, Got: last}
}

// sameEvents reports whether got (read back) are the events of want.
func sameEvents(got, want []*store.RunEvent) bool {
	for i, g := range got {
		w := want[i]
		if g.Seq != w.Seq || g.Attempt != w.Attempt || g.N != w.N || g.Event != w.Event || !bytes.Equal(g.Data, w.Data) {
			return false
		}
	}
	return true
}

// runEventsSQL selects job $1's events after seq $2, at most $3 (NULL:
// all): one row of NULLs when the job has none, no row when the job is
// missing.
const runEventsSQL = `SELECT e.seq, e.attempt, e.n, e.event, e.data, e.time
FROM weft_jobs j LEFT JOIN LATERAL (
	SELECT seq, attempt, n, event, data, time FROM weft_run_events
	WHERE job_id = j.id AND seq > $2::bigint ORDER BY seq LIMIT $3::bigint
) e ON true WHERE j.id = $1 ORDER BY e.seq`

// RunEvents returns a job's events after a Seq, in one statement; see
// store.RunEvents.
func (s *Store) RunEvents(ctx context.Context, job string, after int64, limit int) ([]*store.RunEvent, error) {
	if limit < 0 {
		return nil, fmt.Errorf("store/postgres: run events of job %s: limit %d: negative: %w", job, limit, store.ErrInvalid)
	}
	var l *int64
	if limit > 0 {
		v := int64(limit)
		l = &v
	}
	var out []*store.RunEvent
	found := false
	err := s.retry(ctx, func() error {
		out, found = []*store.RunEvent{}, false
		rows, err := s.pool.Query(ctx, runEventsSQL, job, after, l)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			found = true
			var (
				seq, n        *int64
				attempt, name *string
				data          []byte
				at            *time.Time
			)
			if err := rows.Scan(&seq, &attempt, &n, &name, &data, &at); err != nil {
				return err
			}
			if seq == nil {
				continue // the job, without events
			}
			e := &store.RunEvent{Seq: *seq, Attempt: *attempt, N: *n, Event: *name, Time: at.UTC()}
			if len(data) > 0 {
				e.Data = data
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, &Error{Op: "run events of job " + job, Err: err}
	}
	if !found {
		return nil, fmt.Errorf("store/postgres: job %s: %w", job, store.ErrNotFound)
	}
	return out, nil
}

// WaitRunEvents returns a job's events after a Seq, waiting for one;
// see store.RunEvents. A notification of an append to the job (from any
// process) wakes it; it also reads again every fallbackPoll.
func (s *Store) WaitRunEvents(ctx context.Context, job string, after int64, limit int) ([]*store.RunEvent, error) {
	if limit < 0 {
		return nil, fmt.Errorf("store/postgres: run events of job %s: limit %d: negative: %w", job, limit, store.ErrInvalid)
	}
	l := s.listener
	release, err := l.subscribe(job)
	if err != nil {
		return nil, err
	}
	defer release()
	for {
		// The job's channel is taken before reading, so that a
		// notification after the read is not missed.
		ch := l.channel(job)
		out, err := s.RunEvents(ctx, job, after, limit)
		if err != nil || len(out) > 0 {
			return out, err
		}
		t := time.NewTimer(fallbackPoll)
		select {
		case <-ch:
		case <-t.C:
		case <-l.done:
			t.Stop()
			return nil, fmt.Errorf("store/postgres: run events of job %s: %w", job, store.ErrClosed)
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
	}
}

// PruneRunEvents deletes the events of ended jobs; see store.RunEvents.
func (s *Store) PruneRunEvents(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.retry(ctx, func() error {
		tag, err := s.pool.Exec(ctx, `DELETE FROM weft_run_events e USING weft_jobs j
WHERE e.job_id = j.id AND j.status NOT IN ('pending', 'running') AND j.updated < $1`, before)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, &Error{Op: "prune run events", Err: err}
	}
	return int(n), nil
}

// listener is a Store's LISTEN connection and its waiters.
type listener struct {
	pool *pgxpool.Pool
	mu   sync.Mutex
	// waiters are the waiters by job: the channel closed (and
	// replaced) when a notification names the job, and how many wait.
	waiters map[string]*jobWaiters
	started bool
	stop    context.CancelFunc
	done    chan struct{} // closed by close
	exited  chan struct{} // closed when the listening goroutine returns
	// listening is set while LISTEN holds on a connection (for tests).
	listening bool
}

type jobWaiters struct {
	ch chan struct{}
	n  int
}

func newListener(pool *pgxpool.Pool) *listener {
	return &listener{pool: pool, waiters: map[string]*jobWaiters{}, done: make(chan struct{}), exited: make(chan struct{})}
}

// subscribe counts a waiter of job in, starting the listener if it is
// not running; release counts it out.
func (l *listener) subscribe(job string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.done:
		return nil, fmt.Errorf("store/postgres: run events of job %s: %w", job, store.ErrClosed)
	default:
	}
	if !l.started {
		l.started = true
		ctx, stop := context.WithCancel(context.Background())
		l.stop = stop
		go l.run(ctx)
	}
	w, ok := l.waiters[job]
	if !ok {
		w = &jobWaiters{ch: make(chan struct{})}
		l.waiters[job] = w
	}
	w.n++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if w.n--; w.n == 0 {
			delete(l.waiters, job)
		}
	}, nil
}

// channel returns the channel of job's waiters (subscribed).
func (l *listener) channel(job string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiters[job].ch
}

// wake wakes the waiters of job, or of every job when all.
func (l *listener) wake(job string, all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, w := range l.waiters {
		if all || id == job {
			close(w.ch)
			w.ch = make(chan struct{})
		}
	}
}

func (l *listener) setListening(on bool) {
	l.mu.Lock()
	l.listening = on
	l.mu.Unlock()
}

// run listens until ctx ends, connecting again after a lost connection
// (waiting up to fallbackPoll between tries).
func (l *listener) run(ctx context.Context) {
	defer close(l.exited)
	wait := firstBackoff
	for ctx.Err() == nil {
		if l.listen(ctx) {
			wait = firstBackoff
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, fallbackPoll)
	}
}

// listen takes a connection out of the pool, LISTENs on it and wakes
// waiters as notifications come, until the connection fails or ctx
// ends; it closes the connection, and reports whether LISTEN held.
func (l *listener) listen(ctx context.Context) bool {
	pc, err := l.pool.Acquire(ctx)
	if err != nil {
		return false
	}
	// Out of the pool: the connection keeps its LISTEN (session state)
	// and is closed here, never handed to another user.
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{runEventsChannel}.Sanitize()); err != nil {
		return false
	}
	l.setListening(true)
	defer l.setListening(false)
	// Notifications sent before LISTEN held were not received: every
	// waiter reads again.
	l.wake("", true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		l.wake(n.Payload, false)
	}
}

// close stops the listener and waits for it; waiters return store.ErrClosed.
func (l *listener) close() {
	l.mu.Lock()
	select {
	case <-l.done:
		l.mu.Unlock()
		return
	default:
	}
	close(l.done)
	started := l.started
	if started {
		l.stop()
	}
	l.mu.Unlock()
	if started {
		<-l.exited
	}
}
