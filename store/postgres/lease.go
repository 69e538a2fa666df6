package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/store"
)

var _ store.Leaser = (*Store)(nil)

// The lease of a thread is kept in its row (schema version 3). Claim,
// Heartbeat and Release are short transactions that lock the row (SELECT
// ... FOR UPDATE), read the lease and the server's clock, decide (the
// rules of store.Leaser) and write the lease: every process judges expiry
// by the one clock of the server, never its own.

// leaseTx runs decide on the thread's lease and the server's time in a
// transaction that holds the thread's row; decide returns the lease to
// write, or an error to write nothing.
func (s *Store) leaseTx(ctx context.Context, op, id string, decide func(st store.LeaseState, now time.Time) (store.LeaseState, error)) error {
	err := s.retry(ctx, func() error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var (
				st      store.LeaseState
				expires *time.Time
				now     time.Time
			)
			err := tx.QueryRow(ctx, `SELECT lease_owner, lease_fence, lease_expires, clock_timestamp() FROM weft_threads WHERE id = $1 FOR UPDATE`, id).
				Scan(&st.Owner, &st.Fence, &expires, &now)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("store/postgres: thread %s: %w", id, store.ErrNotFound)
			}
			if err != nil {
				return err
			}
			if expires != nil {
				st.Expires = expires.UTC()
			}
			next, err := decide(st, now.UTC())
			if err != nil {
				return err
			}
			var exp *time.Time
			if !next.Expires.IsZero() {
				exp = &next.Expires
			}
			_, err = tx.Exec(ctx, `UPDATE weft_threads SET lease_owner = $2, lease_fence = $3::bigint, lease_expires = $4::timestamptz WHERE id = $1`,
				id, next.Owner, next.Fence, exp)
			return err
		})
	})
	var le *store.LeaseError
	switch {
	case err == nil, errors.As(err, &le), errors.Is(err, store.ErrNotFound), ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	}
	return &Error{Op: op + " thread " + id, Err: err}
}

// Claim grants owner a lease on the thread; see store.Leaser.
func (s *Store) Claim(ctx context.Context, threadID, owner string, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckClaim(threadID, owner, ttl); err != nil {
		return store.Lease{}, fmt.Errorf("store/postgres: %w", err)
	}
	var l store.Lease
	err := s.leaseTx(ctx, "claim", threadID, func(st store.LeaseState, now time.Time) (store.LeaseState, error) {
		if err := store.CheckFence(threadID, "claim", 0, st, now); err != nil {
			return st, err
		}
		// The server keeps microseconds.
		l = store.Lease{Thread: threadID, Owner: owner, Fence: st.Fence + 1, Expires: now.Add(ttl).Truncate(time.Microsecond)}
		return store.LeaseState{Owner: owner, Fence: l.Fence, Expires: l.Expires}, nil
	})
	if err != nil {
		return store.Lease{}, err
	}
	return l, nil
}

// Heartbeat extends a held lease to ttl from now; see store.Leaser.
func (s *Store) Heartbeat(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("store/postgres: heartbeat of thread %s for %v: %w", l.Thread, ttl, store.ErrInvalid)
	}
	err := s.leaseTx(ctx, "heartbeat", l.Thread, func(st store.LeaseState, now time.Time) (store.LeaseState, error) {
		if err := store.CheckLease("heartbeat", l, st, now); err != nil {
			return st, err
		}
		st.Expires = now.Add(ttl).Truncate(time.Microsecond)
		l.Expires = st.Expires
		return st, nil
	})
	if err != nil {
		return store.Lease{}, err
	}
	return l, nil
}

// Release ends a held lease; see store.Leaser.
func (s *Store) Release(ctx context.Context, l store.Lease) error {
	return s.leaseTx(ctx, "release", l.Thread, func(st store.LeaseState, now time.Time) (store.LeaseState, error) {
		if err := store.CheckLease("release", l, st, now); err != nil {
			return st, err
		}
		return store.LeaseState{Fence: st.Fence}, nil
	})
}
