package engine

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/weftlang/weft/store"
)

// StateCache keeps the thread states that Threads.Load and the start of
// Run and Resume decode, so that a thread read again and again (a server
// loads a thread's state to answer its state, then to start a run that
// loads it once more) is decoded from its log once. It never trusts what
// it keeps: every read asks the store for the head of the thread's log
// (store.HeadReader: the seq and time of its last record, one indexed
// read) and hands out the kept state only when the head is the record the
// state was folded up to; when the log grew, only the new records are
// read and folded. So any record another process, another Threads or an
// Update writes is seen, whatever wrote it. The states handed out are
// copies: a caller that changes its state (a run folds its steps into it)
// changes nothing kept.
//
// A StateCache is used through the Cache field of one or more Threads on
// the same store; it is safe for concurrent use. A store that is not a
// store.HeadReader reads through it as if there were none. The zero value
// is ready to use.
type StateCache struct {
	// MaxBytes bounds the states kept, by the size of the records each
	// was decoded from (its last snapshot and the steps after it); the
	// least recently used go first. A state larger than a quarter of it
	// is not kept. 0 means 8 MiB.
	MaxBytes int

	mu    sync.Mutex
	ll    list.List // of *stateEntry, the most recently used first
	m     map[string]*list.Element
	bytes int
}

// stateEntry is a kept state, folded up to the record of seq ts.Seq,
// then the records recs that follow it, not folded yet (a run of this
// process wrote them: extend); at is the time of the last of them (of
// record ts.Seq when there are none). ts is never handed out (copies
// are).
type stateEntry struct {
	ts   *ThreadState
	recs []*store.Record
	at   time.Time
	size int
}

const defaultStateCacheBytes = 8 << 20

// Len returns the number of states kept.
func (c *StateCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// maxBytes is MaxBytes, or its default.
func (c *StateCache) maxBytes() int {
	if c.MaxBytes <= 0 {
		return defaultStateCacheBytes
	}
	return c.MaxBytes
}

// keeps reports whether a state of size bytes (by its records) could be
// kept: no more than a quarter of MaxBytes.
func (c *StateCache) keeps(size int) bool {
	return size <= c.maxBytes()/4
}

// get returns a copy of the state kept for thread id, the records kept
// after it (not to be changed) and the time of the last record.
func (c *StateCache) get(id string) (*ThreadState, []*store.Record, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[id]
	if !ok {
		return nil, nil, time.Time{}
	}
	c.ll.MoveToFront(el)
	e := el.Value.(*stateEntry)
	return e.ts.clone(), e.recs, e.at
}

// extend keeps recs, the records a run of this process wrote to a
// thread's log after its record of seq base, as they follow the state
// kept for the thread, folded up to base (a thread with no record yet
// when base is 0): the next read folds them, instead of reading them
// back from the store. The head of the log is checked at each read as
// ever: what another process writes after them is seen. recs must be
// written (their Time set) and follow base without a gap; otherwise, or
// when no state up to base is kept, nothing is. run and created are the
// ID and Created of the run row the drive wrote with them (a resume of
// the run then need not read it back).
func (c *StateCache) extend(thread string, base int64, recs []*store.Record, run string, created time.Time) {
	if len(recs) == 0 {
		return
	}
	for i, r := range recs {
		if r.Seq != base+int64(i)+1 || r.Time.IsZero() || r.ThreadID != thread {
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var e *stateEntry
	if el, ok := c.m[thread]; ok {
		e = el.Value.(*stateEntry)
		if e.ts.Seq != base || len(e.recs) > 0 {
			// Kept at another record: of no use now.
			c.remove(el)
			return
		}
		c.ll.MoveToFront(el)
	} else {
		if base != 0 {
			return
		}
		if c.m == nil {
			c.m = map[string]*list.Element{}
		}
		e = &stateEntry{ts: &ThreadState{Thread: thread}, size: 256}
		c.m[thread] = c.ll.PushFront(e)
		c.bytes += e.size
	}
	for _, r := range recs {
		e.size += len(r.Data)
		c.bytes += len(r.Data)
	}
	e.recs, e.at = recs, recs[len(recs)-1].Time
	e.ts.createdOf, e.ts.created = run, created
	if !c.keeps(e.size) {
		c.remove(c.m[thread])
		return
	}
	c.evict()
}

// put keeps ts (which the caller hands over) as the state of its thread
// folded up to the record written at at.
func (c *StateCache) put(ts *ThreadState, at time.Time) {
	size := ts.snapBytes + ts.bytesSince + 256
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[ts.Thread]; ok {
		c.remove(el)
	}
	if !c.keeps(size) {
		return
	}
	if c.m == nil {
		c.m = map[string]*list.Element{}
	}
	c.m[ts.Thread] = c.ll.PushFront(&stateEntry{ts: ts, at: at, size: size})
	c.bytes += size
	c.evict()
}

// evict drops the least recently used states until those kept add up to
// no more than MaxBytes; c.mu is held.
func (c *StateCache) evict() {
	for max := c.maxBytes(); c.bytes > max; {
		c.remove(c.ll.Back())
	}
}

// remove forgets the state el holds; c.mu is held.
func (c *StateCache) remove(el *list.Element) {
	e := el.Value.(*stateEntry)
	c.bytes -= e.size
	c.ll.Remove(el)
	delete(c.m, e.ts.Thread)
}

// drop forgets the state of a thread.
func (c *StateCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[id]; ok {
		c.remove(el)
	}
}

// cached loads a thread's state through th.Cache; ok is false when there
// is no cache to use (none, a store that is not a store.HeadReader) or the
// thread does not exist, which the caller reads (or makes) itself. A
// thread with no record yet has an empty state.
func (th *Threads) cached(ctx context.Context, threadID string) (_ *ThreadState, ok bool, _ error) {
	c := th.Cache
	hr, isHR := th.Store.(store.HeadReader)
	if c == nil || !isHR {
		return nil, false, nil
	}
	seq, at, err := hr.Head(ctx, threadID)
	if errors.Is(err, store.ErrNotFound) {
		c.drop(threadID)
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if seq <= 0 {
		// A thread made, with no record yet (a log with records that
		// lost its snapshot is found below).
		c.drop(threadID)
		return &ThreadState{Thread: threadID}, true, nil
	}
	ts, unfolded, kept := c.get(threadID)
	switch {
	case ts != nil && len(unfolded) > 0:
		if unfolded[len(unfolded)-1].Seq == seq && kept.Equal(at) {
			// The records a run of this process wrote last are the
			// log's head: fold them.
			for _, r := range unfolded {
				if _, err := ts.apply(r); err != nil {
					return nil, true, err
				}
			}
			c.put(ts.clone(), at)
			return ts, true, nil
		}
	case ts != nil && ts.Seq == seq && kept.Equal(at):
		return ts, true, nil
	case ts != nil && ts.Seq < seq:
		// The log grew: fold its new records, read from the kept one
		// on, which must still be the record the state was folded up
		// to (else the thread was deleted and made again).
		recs, err := th.Store.Records(ctx, threadID, ts.Seq)
		if err != nil {
			return nil, true, err
		}
		if len(recs) > 0 && recs[0].Seq == ts.Seq && recs[0].Time.Equal(kept) {
			// Written by another drive, perhaps of another process:
			// its run row is read back.
			ts.createdOf, ts.created = "", time.Time{}
			for _, r := range recs[1:] {
				if _, err := ts.apply(r); err != nil {
					return nil, true, err
				}
				kept = r.Time
			}
			c.put(ts.clone(), kept)
			return ts, true, nil
		}
	}
	snap, err := th.Store.LastSnapshot(ctx, threadID)
	if errors.Is(err, store.ErrNotFound) {
		// Written and then pruned or deleted since the head was read:
		// the caller reads it as it is now.
		c.drop(threadID)
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	ts = &ThreadState{Thread: threadID}
	if _, err := ts.apply(snap); err != nil {
		return nil, true, err
	}
	at = snap.Time
	recs, err := th.Store.Records(ctx, threadID, snap.Seq+1)
	if err != nil {
		return nil, true, err
	}
	for _, r := range recs {
		if _, err := ts.apply(r); err != nil {
			return nil, true, err
		}
		at = r.Time
	}
	c.put(ts.clone(), at)
	return ts, true, nil
}
