package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weftlang/weft/store"
)

// ownerID returns the name this Threads takes leases under.
func (th *Threads) ownerID() string {
	th.ownerOnce.Do(func() {
		th.owner = th.Owner
		if th.owner == "" {
			th.owner = "weft-" + newRunID()
		}
	})
	return th.owner
}

// leased runs drive holding the thread's lease, when LeaseTTL is set and
// the store is a store.Leaser, with the lease's fence (0 without a lease): it claims the
// thread (creating it first from create, if it does not exist and create
// is not nil), renews the lease every TTL/3 while drive runs, and releases
// it when drive returns, whether the run ended, failed or waits for a
// person. The heartbeat's goroutine ends before leased returns.
func (th *Threads) leased(ctx context.Context, threadID string, create *store.Thread, drive func(hl *heldLease) (*Result, error)) (*Result, error) {
	ls, ok := th.Store.(store.Leaser)
	if !ok || th.LeaseTTL <= 0 {
		return drive(&heldLease{})
	}
	l, err := th.claim(ctx, ls, threadID, create)
	if err != nil {
		return nil, err
	}
	hctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		th.heartbeat(hctx, ls, l)
	}()
	hl := &heldLease{lease: l, held: true}
	res, err := drive(hl)
	stop()
	<-done
	if hl.released {
		// The run's end released it, in the transaction of its last
		// writes (store.RunEnder).
		return res, err
	}
	// A lease lost by now was lost after the run's last record: there is
	// nothing to release. Any other failure leaves the lease to run out.
	if rerr := ls.Release(context.WithoutCancel(ctx), l); rerr != nil && !errors.Is(rerr, store.ErrLeaseLost) && err == nil {
		err = fmt.Errorf("thread %s: releasing its lease: %w", threadID, rerr)
	}
	return res, err
}

// heldLease is the lease a drive holds: its Fence goes in every write.
// Without a lease (no store.Leaser, no LeaseTTL) it is the zero lease,
// not held. A run's end that releases it with its last writes
// (store.RunEnder) sets released, so that leased does not release it
// again.
type heldLease struct {
	lease    store.Lease
	held     bool
	released bool
}

// fence returns the fence of the lease, 0 without one.
func (hl *heldLease) fence() int64 { return hl.lease.Fence }

// claim takes the thread's lease, retrying for ClaimWait while another
// driver holds it. A lease held after that is a *ThreadError wrapping the
// store's *store.LeaseError (store.ErrLeaseHeld).
func (th *Threads) claim(ctx context.Context, ls store.Leaser, threadID string, create *store.Thread) (store.Lease, error) {
	deadline := time.Now().Add(th.ClaimWait)
	delay := 10 * time.Millisecond
	for {
		l, err := ls.Claim(ctx, threadID, th.ownerID(), th.LeaseTTL)
		switch {
		case err == nil:
			return l, nil
		case errors.Is(err, store.ErrNotFound) && create != nil:
			if cerr := th.Store.CreateThread(ctx, create); cerr != nil && !errors.Is(cerr, store.ErrExists) {
				return store.Lease{}, cerr
			}
			create = nil
			continue
		case errors.Is(err, store.ErrLeaseHeld) && time.Now().Add(delay).Before(deadline):
			if serr := sleepCtx(ctx, delay); serr != nil {
				return store.Lease{}, serr
			}
			delay = min(delay*2, 250*time.Millisecond)
			continue
		case errors.Is(err, store.ErrLeaseHeld):
			return store.Lease{}, &ThreadError{Thread: threadID, Kind: KindConflict, Detail: "another process drives it (it holds the thread's lease): " + err.Error(), Err: err}
		}
		return store.Lease{}, missingThread(threadID, err)
	}
}

// heartbeat renews the lease every TTL/3 until ctx ends or the lease is
// lost (the run's next append then fails with store.ErrLeaseLost). A
// renewal that fails otherwise (a store restarting) is tried again at the
// next tick.
func (th *Threads) heartbeat(ctx context.Context, ls store.Leaser, l store.Lease) {
	ttl := th.LeaseTTL
	t := time.NewTicker(max(ttl/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		nl, err := ls.Heartbeat(ctx, l, ttl)
		switch {
		case err == nil:
			l = nl
		case errors.Is(err, store.ErrLeaseLost):
			return
		}
	}
}
