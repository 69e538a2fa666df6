package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/weftlang/weft/store"
)

var _ store.Leaser = (*Store)(nil)

// The lease of a thread is kept in its row (schema version 5). Claim,
// Heartbeat and Release are transactions that begin IMMEDIATE: they read
// the lease, decide by the store's clock (the machine's, which every
// process sharing the file shares) and write it, under SQLite's write
// lock. A Claim or Release that the lease allows is one prepared UPDATE
// that checks and writes (a run claims and releases its thread each
// time); only when it writes nothing does the transaction run, to say
// why.

// leases fails at a schema before leases (which only tests open).
func (s *Store) leases() error {
	if s.schema < 5 {
		return fmt.Errorf("sqlite store: leases need schema version 5, the database has %d: %w", s.schema, store.ErrInvalid)
	}
	return nil
}

// leaseState reads the lease of a thread inside tx.
func (s *Store) leaseState(ctx context.Context, tx *sql.Tx, id string) (store.LeaseState, error) {
	var (
		st      store.LeaseState
		expires int64
	)
	err := tx.StmtContext(ctx, s.w.leaseState).QueryRowContext(ctx, id).Scan(&st.Owner, &st.Fence, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return st, notFound("thread", id)
	}
	st.Expires = fromUnix(expires)
	return st, err
}

// setLease writes the lease of a thread inside tx.
func (s *Store) setLease(ctx context.Context, tx *sql.Tx, id string, st store.LeaseState) error {
	expires := int64(0)
	if !st.Expires.IsZero() {
		expires = unix(st.Expires)
	}
	_, err := tx.StmtContext(ctx, s.w.setLease).ExecContext(ctx, st.Owner, st.Fence, expires, id)
	return err
}

// leaseErr passes the store's own errors through and wraps the others.
func leaseErr(op, id string, err error) error {
	var le *store.LeaseError
	if err == nil || errors.As(err, &le) || errors.Is(err, store.ErrNotFound) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("sqlite store: %s thread %s: %w", op, id, err)
}

// Claim grants owner a lease on the thread; see store.Leaser.
func (s *Store) Claim(ctx context.Context, threadID, owner string, ttl time.Duration) (store.Lease, error) {
	if err := s.leases(); err != nil {
		return store.Lease{}, err
	}
	if err := store.CheckClaim(threadID, owner, ttl); err != nil {
		return store.Lease{}, fmt.Errorf("sqlite store: %w", err)
	}
	var (
		l     store.Lease
		fence int64
	)
	err := s.write(ctx, func() error {
		n := now()
		l = store.Lease{Thread: threadID, Owner: owner, Expires: n.Add(ttl)}
		return s.w.claim.QueryRowContext(context.WithoutCancel(ctx), threadID, owner, unix(l.Expires), unix(n)).Scan(&fence)
	})
	if err == nil {
		l.Fence = fence
		return l, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Lease{}, leaseErr("claim", threadID, err)
	}
	err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.leaseState(ctx, tx, threadID)
		if err != nil {
			return err
		}
		n := now()
		if err := store.CheckFence(threadID, "claim", 0, st, n); err != nil {
			return err
		}
		l = store.Lease{Thread: threadID, Owner: owner, Fence: st.Fence + 1, Expires: n.Add(ttl)}
		return s.setLease(ctx, tx, threadID, store.LeaseState{Owner: owner, Fence: l.Fence, Expires: l.Expires})
	})
	if err != nil {
		return store.Lease{}, leaseErr("claim", threadID, err)
	}
	return l, nil
}

// Heartbeat extends a held lease to ttl from now; see store.Leaser.
func (s *Store) Heartbeat(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if err := s.leases(); err != nil {
		return store.Lease{}, err
	}
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("sqlite store: heartbeat of thread %s for %v: %w", l.Thread, ttl, store.ErrInvalid)
	}
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.leaseState(ctx, tx, l.Thread)
		if err != nil {
			return err
		}
		n := now()
		if err := store.CheckLease("heartbeat", l, st, n); err != nil {
			return err
		}
		st.Expires = n.Add(ttl)
		l.Expires = st.Expires
		return s.setLease(ctx, tx, l.Thread, st)
	})
	if err != nil {
		return store.Lease{}, leaseErr("heartbeat", l.Thread, err)
	}
	return l, nil
}

// Release ends a held lease; see store.Leaser.
func (s *Store) Release(ctx context.Context, l store.Lease) error {
	if err := s.leases(); err != nil {
		return err
	}
	var n int64
	err := s.write(ctx, func() error {
		res, err := s.w.release.ExecContext(context.WithoutCancel(ctx), l.Thread, l.Owner, l.Fence, unix(now()))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil || n == 1 {
		return leaseErr("release", l.Thread, err)
	}
	err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := s.leaseState(ctx, tx, l.Thread)
		if err != nil {
			return err
		}
		if err := store.CheckLease("release", l, st, now()); err != nil {
			return err
		}
		return s.setLease(ctx, tx, l.Thread, store.LeaseState{Fence: st.Fence})
	})
	return leaseErr("release", l.Thread, err)
}
