package engine

import (
	"context"
	"sync"
	"time"

	"github.com/weftlang/weft/store"
)

// Durability says when the records of a run's steps reach the store. The
// records and their order are the same in every mode; what differs is how
// much a crash can undo and how many commits a run costs.
type Durability int

const (
	// Sync commits each step's record before the run goes on: a crash
	// undoes at most the steps in flight, which run again on resume with
	// the same idempotency keys (Call.Key). It costs a commit per step.
	// This is the default.
	Sync Durability = iota
	// Async hands each step's record to a writer that appends them, in
	// order, while the run goes on, all records that have piled up in
	// one commit. Run and Resume return only once every record is
	// written (a run that waits for a person is durable when it says
	// so). A crash can undo more steps than are in flight: every step
	// whose record was not yet written runs again on resume, with the
	// same idempotency key. A failed write fails the run, at its next
	// step or at its end, with a *CheckpointError. LangGraph's default
	// durability, "async", makes the same trade.
	Async
)

// String returns "sync" or "async".
func (d Durability) String() string {
	if d == Async {
		return "async"
	}
	return "sync"
}

// pendingRecord is a record handed to the writer, with what a
// *CheckpointError about it names.
type pendingRecord struct {
	rec  *store.Record
	step int
	node string
}

// recordWriter appends the records of one run in the background (Async):
// whatever has piled up while the previous append was committing goes in
// the next, so a run of fast steps costs a few commits instead of one per
// step. A goroutine works only while records are waiting.
//
// With a store that is a store.BatchWriter, a new thread is created with
// the first records, and the run's row written with the last, in one
// transaction each.
type recordWriter struct {
	th  *Threads
	ctx context.Context
	bw  store.BatchWriter // nil: the store writes records only

	mu     sync.Mutex
	idle   sync.Cond // signalled when the goroutine stops
	queue  []pendingRecord
	spare  []pendingRecord
	create *store.Thread // to create with the next batch (bw only)
	run    *store.Run    // to put with the next batch (bw only)
	busy   bool
	err    error         // the first failed append, as a *CheckpointError
	kick   chan struct{} // ends the linger of a goroutine that starts: flush or the run's row
}

// linger is how long the writer's goroutine waits, when it starts, for
// more records before its first commit, unless the run ends or flushes
// first: the steps of a fast stretch then share one commit instead of the
// first of them taking one alone.
const linger = time.Millisecond

func newRecordWriter(ctx context.Context, th *Threads) *recordWriter {
	w := &recordWriter{th: th, ctx: context.WithoutCancel(ctx), kick: make(chan struct{}, 1)}
	w.bw, _ = th.Store.(store.BatchWriter)
	w.idle.L = &w.mu
	return w
}

// setRun hands the run's row to the writer, to go with the last records.
// Only with bw, and only once every record of the run is queued.
func (w *recordWriter) setRun(r *store.Run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	w.run = r
	w.poke()
	if !w.busy {
		w.busy = true
		go w.loop()
	}
}

// poke ends a linger in progress.
func (w *recordWriter) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// add queues a record; it returns the error of an earlier append, if one
// failed, and queues nothing then.
func (w *recordWriter) add(p pendingRecord) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.queue = append(w.queue, p)
	if !w.busy {
		w.busy = true
		go w.loop()
	}
	return nil
}

// failed returns the error of a failed append, without waiting.
func (w *recordWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// flush waits until every queued record is written, or an append failed,
// and returns that failure.
func (w *recordWriter) flush() error {
	w.poke()
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.busy {
		w.idle.Wait()
	}
	return w.err
}

func (w *recordWriter) loop() {
	recs := make([]*store.Record, 0, 16)
	t := time.NewTimer(linger)
	select {
	case <-t.C:
	case <-w.kick:
		t.Stop()
	}
	for {
		w.mu.Lock()
		batch, create, run := w.queue, w.create, w.run
		if len(batch) == 0 && run == nil || w.err != nil {
			w.queue = batch[:0]
			w.busy = false
			w.idle.Broadcast()
			w.mu.Unlock()
			return
		}
		w.queue, w.spare = w.spare[:0], batch
		w.create, w.run = nil, nil
		w.mu.Unlock()

		recs = recs[:0]
		for _, p := range batch {
			recs = append(recs, p.rec)
		}
		// The run's own context is not used: a caller who cancels a
		// run still gets the records of the steps that completed,
		// as with Sync.
		var err error
		if w.bw != nil && (create != nil || run != nil) {
			err = w.th.writeRetry(w.ctx, recs, func() error {
				return w.bw.WriteBatch(w.ctx, &store.Batch{Thread: create, Records: recs, Run: run})
			})
		} else {
			err = w.th.appendRetry(w.ctx, recs...)
		}
		if err != nil {
			ce := &CheckpointError{Node: "(run)", Err: err}
			if len(batch) > 0 {
				first := batch[0]
				ce = &CheckpointError{Thread: first.rec.ThreadID, Seq: first.rec.Seq, Step: first.step, Node: first.node, Err: err}
			} else if run != nil {
				ce.Thread = run.ThreadID
			}
			w.mu.Lock()
			w.err = ce
			w.mu.Unlock()
		}
		clear(batch)
	}
}
