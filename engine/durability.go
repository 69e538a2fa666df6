package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/weftlang/weft/store"
)

// Durability says when the records of a run's steps reach the store. The
// records and their order are the same in every mode; what differs is how
// much a crash can undo and how many commits a run costs. The zero value,
// DefaultDurability, is Sync for Threads and, in a run's options, the
// durability of its Threads.
type Durability int

const (
	// DefaultDurability is Sync for Threads.Durability, and the Threads'
	// durability for RunOptions and ResumeOptions.
	DefaultDurability Durability = iota
	// Sync commits each step's record before the run goes on: a crash
	// undoes at most the steps in flight, which run again on resume with
	// the same idempotency keys (Call.Key). It costs a commit per step.
	Sync
	// Async hands each step's record to a writer that appends them, in
	// order, while the run goes on, all records that have piled up in
	// one commit (the first waits up to a millisecond for more). The
	// records a run's end finds unwritten go in the commit that records
	// the end. Run and Resume return only once every record is written
	// (a run that waits for a person is durable when it says so). A
	// crash can undo more steps than are in flight: every step whose
	// record was not yet written runs again on resume, with the same
	// idempotency key. A failed write fails the run, at its next step or
	// at its end, with a *CheckpointError. LangGraph's default
	// durability, "async", makes the same trade.
	Async
	// Exit keeps a run's records in memory until the run ends, waits for
	// a person or stops, and writes them then, in the commit that
	// records the end: a crash undoes the whole drive, which runs again
	// from its start (or from the answers it resumed with). It costs the
	// fewest commits, and memory for the records of the drive's steps.
	// LangGraph's durability "exit".
	Exit
)

// String returns "sync", "async" or "exit" ("default" for
// DefaultDurability).
func (d Durability) String() string {
	switch d {
	case DefaultDurability:
		return "default"
	case Sync:
		return "sync"
	case Async:
		return "async"
	case Exit:
		return "exit"
	}
	return "Durability(" + strconv.Itoa(int(d)) + ")"
}

// ParseDurability returns the Durability named "sync", "async" or "exit"
// (LangGraph's names); "" is DefaultDurability. Any other name is an
// error that lists the names.
func ParseDurability(s string) (Durability, error) {
	switch s {
	case "":
		return DefaultDurability, nil
	case "sync":
		return Sync, nil
	case "async":
		return Async, nil
	case "exit":
		return Exit, nil
	}
	return DefaultDurability, fmt.Errorf("durability %q: want sync, async or exit", s)
}

// of returns the durability a run takes: d, or the Threads' t when d is
// the default (Sync when both are).
func (d Durability) of(t Durability) Durability {
	if d == DefaultDurability {
		d = t
	}
	if d == DefaultDurability {
		d = Sync
	}
	return d
}

// pendingRecord is a record handed to the writer, with what a
// *CheckpointError about it names.
type pendingRecord struct {
	rec  *store.Record
	step int
	node string
}

// recordWriter keeps the records of one run that are not written yet
// (Async, Exit). With Async, the first record queued arms a timer
// (linger); when it fires, a goroutine appends whatever has piled up, then
// what piled up during that commit, until the queue is empty: a run of
// fast steps costs a few commits instead of one per step. With Exit
// nothing is written before the run's end. The run's end takes what is
// left (take) to write it with the end, or has it written (flush).
//
// With a store that is a store.BatchWriter, a new thread is created with
// the first records, and the run's row written with the last, in one
// transaction each.
type recordWriter struct {
	th   *Threads
	ctx  context.Context
	bw   store.BatchWriter // nil: the store writes records only
	mode Durability        // Async or Exit

	mu     sync.Mutex
	idle   sync.Cond // signalled when a write stops
	queue  []pendingRecord
	spare  []pendingRecord
	create *store.Thread // to create with the next batch (bw only)
	run    *store.Run    // to put with the next batch (bw only)
	busy   bool          // a write is in progress
	timer  *time.Timer   // armed: a write starts when it fires
	err    error         // the first failed append, as a *CheckpointError
}

// linger is how long an Async writer waits, after a record is queued with
// no write in progress, before it writes: the steps of a fast stretch
// then share one commit, and a run that ends within it writes its records
// with its end.
const linger = time.Millisecond

func newRecordWriter(ctx context.Context, th *Threads, mode Durability) *recordWriter {
	w := &recordWriter{th: th, ctx: context.WithoutCancel(ctx), mode: mode}
	w.bw, _ = th.Store.(store.BatchWriter)
	w.idle.L = &w.mu
	return w
}

// setRun hands the run's row to the writer, to go with the last records
// (the next flush writes them). Only with bw, and only once every record
// of the run is queued.
func (w *recordWriter) setRun(r *store.Run) {
	w.mu.Lock()
	if w.err == nil {
		w.run = r
	}
	w.mu.Unlock()
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
	if w.mode == Async && !w.busy && w.timer == nil {
		w.timer = time.AfterFunc(linger, w.fire)
	}
	return nil
}

// fire starts the write an armed timer stands for, unless a flush or a
// take came first.
func (w *recordWriter) fire() {
	w.mu.Lock()
	if w.timer == nil || w.busy {
		w.mu.Unlock()
		return
	}
	w.timer, w.busy = nil, true
	w.mu.Unlock()
	w.loop()
}

// disarm stops an armed timer; w.mu is held.
func (w *recordWriter) disarm() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

// creating reports whether the thread is still to be created with the
// next batch (bw).
func (w *recordWriter) creating() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.create != nil
}

// failed returns the error of a failed append, without waiting.
func (w *recordWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// flush writes every queued record (and the run's row a setRun gave), in
// the caller's goroutine, after a write in progress, and returns the
// first failure.
func (w *recordWriter) flush() error {
	w.mu.Lock()
	w.disarm()
	for w.busy {
		w.idle.Wait()
	}
	if w.err != nil || len(w.queue) == 0 && w.run == nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.busy = true
	w.mu.Unlock()
	w.loop()
	return w.failed()
}

// take returns the records not written yet, after a write in progress,
// and the first failure; the writer writes nothing more. It leaves a
// record for a thread still to create (bw) to flush.
func (w *recordWriter) take() ([]*store.Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.disarm()
	for w.busy {
		w.idle.Wait()
	}
	if w.err != nil {
		return nil, w.err
	}
	recs := make([]*store.Record, len(w.queue))
	for i, p := range w.queue {
		recs[i] = p.rec
	}
	w.queue = nil
	w.busy = true // nothing writes from here on
	return recs, nil
}

// loop writes batches until the queue is empty or an append fails; the
// caller has set busy.
func (w *recordWriter) loop() {
	var recs []*store.Record
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
