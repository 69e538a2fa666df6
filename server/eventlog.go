package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/weftlang/weft/store"
)

// With an executor whose queue is shared by several processes
// (SharedExecutor), a run may be carried out by any of them and followed
// from any other: the process that carries it out writes its stream's
// frames to the store's durable log of run events (store.RunEvents), and
// every reader (runs.stream, joins, runs.wait) follows a mirror of that
// log. The log holds each attempt's frames, numbered as the stream
// numbers them (the metadata frame is 0), then an end event whose data is
// the reply runs.wait gives.

// endEvent names the event that ends a run's stream in the log.
const endEvent = "weft:end"

// Marks are events of the log that no client is sent: they say what the
// frames before them cover, for the process that takes a run over after
// the one carrying it out died (takeover.go). A start mark's data is
// {"seq": the thread's last record when the run's first attempt began};
// a step mark's, {"step": N, "node": name}: the frames of that root step
// (its updates and values) are in.
const (
	startMark = "weft:start"
	stepMark  = "weft:step"
)

// isMark reports whether a logged event is a mark.
func isMark(event string) bool { return event == startMark || event == stepMark }

// logLinger is how long the writer of a run's events waits, after a frame
// with none being written, before it writes: the frames of a fast stretch
// go in one append.
const logLinger = 10 * time.Millisecond

// eventLog writes the frames of one attempt at a run to the store's log.
// Appends happen in the background, in order; end writes what is left
// and the end event, and waits for them.
type eventLog struct {
	ev      store.RunEvents
	job     string
	attempt string // the stream's epoch
	log     *slog.Logger

	mu    sync.Mutex
	queue []*store.RunEvent
	seq   int64 // the last seq written; 0 before the first append
	n     int64 // the number of the last frame queued
	busy  bool
	timer *time.Timer
	idle  sync.Cond
	err   error // the first failed append: the rest is not written
}

func newEventLog(ev store.RunEvents, job, attempt string, log *slog.Logger) *eventLog {
	l := &eventLog{ev: ev, job: job, attempt: attempt, log: log}
	l.idle.L = &l.mu
	return l
}

// add queues frame n of the attempt.
func (l *eventLog) add(n int, event string, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	l.queue = append(l.queue, &store.RunEvent{Attempt: l.attempt, N: int64(n), Event: event, Data: data})
	l.n = int64(n)
	if !l.busy && l.timer == nil {
		l.timer = time.AfterFunc(logLinger, l.fire)
	}
}

// fire writes what is queued, unless a write is under way.
func (l *eventLog) fire() {
	l.mu.Lock()
	if l.timer == nil || l.busy {
		l.mu.Unlock()
		return
	}
	l.timer, l.busy = nil, true
	l.mu.Unlock()
	l.write()
}

// write appends the queue until it is empty; busy is set.
func (l *eventLog) write() {
	for {
		l.mu.Lock()
		batch := l.queue
		if len(batch) == 0 || l.err != nil {
			l.busy = false
			l.idle.Broadcast()
			l.mu.Unlock()
			return
		}
		l.queue = nil
		seq := l.seq
		l.mu.Unlock()
		err := l.append(seq, batch)
		l.mu.Lock()
		if err != nil {
			l.err = err
			l.log.Error("writing a run's events to the store: clients in other processes miss them", "run", l.job, "err", err)
		} else {
			l.seq = batch[len(batch)-1].Seq
		}
		l.mu.Unlock()
	}
}

// logRetryFor is how long the writer of a run's events retries an
// append that failed for a reason that may pass (the store restarting,
// the network): as long as the engine retries a record's.
const logRetryFor = 30 * time.Second

// append appends batch after seq; the first append of an attempt finds
// the job's last seq from the store's refusal. A failure that may pass is
// retried for logRetryFor; an append whose outcome was lost is found
// written by reading it back.
func (l *eventLog) append(seq int64, batch []*store.RunEvent) error {
	ctx := context.Background() // a run's events are written even as it is cancelled
	b := newBackoff(logRetryFor)
	failed := false // an earlier try failed, its outcome unknown
	for try := 0; ; try++ {
		for i, e := range batch {
			e.Seq = seq + 1 + int64(i)
		}
		err := l.ev.AppendRunEvents(ctx, l.job, batch)
		var conflict *store.RunEventConflictError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &conflict):
			if failed && conflict.Got >= batch[len(batch)-1].Seq && l.wrote(ctx, batch) {
				return nil // the failed try's commit went through
			}
			if seq != 0 || try > 0 && !failed {
				return err
			}
			seq = conflict.Got // events of an earlier attempt are there
			continue
		case !mayPass(err):
			return err
		}
		if !failed {
			l.log.Warn("writing a run's events to the store failed: retrying", "run", l.job, "err", err)
		}
		failed = true
		if !b.wait(ctx) {
			return err
		}
	}
}

// wrote reports whether the store holds batch as it is (read back).
func (l *eventLog) wrote(ctx context.Context, batch []*store.RunEvent) bool {
	got, err := l.ev.RunEvents(ctx, l.job, batch[0].Seq-1, len(batch))
	if err != nil || len(got) != len(batch) {
		return false
	}
	for i, g := range got {
		w := batch[i]
		if g.Seq != w.Seq || g.Attempt != w.Attempt || g.N != w.N || g.Event != w.Event || !bytes.Equal(g.Data, w.Data) {
			return false
		}
	}
	return true
}

// mark queues a mark (after the frames queued so far).
func (l *eventLog) mark(event string, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	l.queue = append(l.queue, &store.RunEvent{Attempt: l.attempt, N: l.n, Event: event, Data: data})
	if !l.busy && l.timer == nil {
		l.timer = time.AfterFunc(logLinger, l.fire)
	}
}

// end queues the end event with final, writes everything and waits.
func (l *eventLog) end(final []byte) {
	l.mu.Lock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.queue = append(l.queue, &store.RunEvent{Attempt: l.attempt, N: l.n + 1, Event: endEvent, Data: final})
	l.mu.Unlock()
	l.drain()
}

// drain writes what is queued, without an end, and waits.
func (l *eventLog) drain() {
	l.mu.Lock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	for l.busy {
		l.idle.Wait()
	}
	l.busy = true
	l.mu.Unlock()
	l.write()
}

// mirrorPoll is how long a mirror waits for more of a run's events before
// it looks at the run's job: one that ended without its end event in the
// log (its process died after recording the end) ends the mirror.
const mirrorPoll = 2 * time.Second

// mirror returns the stream of job id as the store's log has it, made
// and fed from the log in the background if need be.
func (s *Server) mirror(id string) *runStream {
	ss := &s.streams
	ss.mu.Lock()
	if st := ss.byID[id]; st != nil {
		ss.mu.Unlock()
		return st
	}
	ss.mu.Unlock()
	st := ss.open(id) // the first attempt's, until the log names it
	go s.tail(id, st)
	return st
}

// tail feeds job id's mirror st from the store's log until its end event,
// the end of the job, or the server's close.
func (s *Server) tail(id string, st *runStream) {
	ctx := s.bg
	var after int64
	for {
		wctx, cancel := context.WithTimeout(ctx, mirrorPoll)
		evs, err := s.events.WaitRunEvents(wctx, id, after, 256)
		cancel()
		if ctx.Err() != nil {
			return // the server closes: Close tells the stream's readers
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			st.finish(errorReply("NotFound", "the run was deleted"), s.now())
			return
		case errors.Is(err, context.DeadlineExceeded):
			j, jerr := s.jobs.Job(ctx, id)
			if jerr == nil && j.Status != store.JobPending && j.Status != store.JobRunning {
				// Ended, and the log has not said so: its end event
				// was lost with its process. The thread's state is the
				// reply.
				st.finish(s.endedReply(ctx, j), s.now())
				return
			}
			continue
		case err != nil:
			s.log.Error("reading a run's events", "run", id, "err", err)
			time.Sleep(mirrorPoll / 4)
			continue
		}
		for _, e := range evs {
			after = e.Seq
			if e.Event == endEvent {
				st.finish(e.Data, s.now())
				return
			}
			if isMark(e.Event) {
				continue
			}
			if e.Attempt != st.epoch {
				// The first attempt the log names, or the next (the run
				// was taken over by another process).
				next := newRunStreamAt(id, e.Attempt)
				next.prev = st
				s.streams.replace(id, st, next)
				st.supersede(next, s.now())
				st = next
			}
			st.feed(e.Event, e.Data)
		}
	}
}

// errorReply is a run's reply of an error (a wait's body).
func errorReply(kind, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"__error__": map[string]string{"error": kind, "message": msg}})
	return b
}

// errorEvent is the data of a stream's error event.
func errorEvent(kind, msg string) []byte {
	b, _ := json.Marshal(map[string]string{"error": kind, "message": msg})
	return b
}

// endedReply is the reply of an ended job whose stream's end is not
// known: the thread's values or questions now.
func (s *Server) endedReply(ctx context.Context, j *store.Job) []byte {
	body, err := s.finalReply(ctx, j)
	if err != nil {
		return errorReply("Unknown", err.Error())
	}
	return body
}

// pruneEvents deletes, once a minute until the server closes, the logged
// events of runs that ended more than streamTTL ago (as long as a
// process keeps an ended run's stream).
func (s *Server) pruneEvents() {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-s.bg.Done():
			return
		case <-t.C:
		}
		if _, err := s.events.PruneRunEvents(s.bg, s.now().Add(-streamTTL)); err != nil && s.bg.Err() == nil {
			s.log.Error("pruning the events of ended runs", "err", err)
		}
	}
}

// streamOf returns the stream a reader of job id follows: the mirror of
// the log with a shared executor, else this process's, or nil.
func (s *Server) streamOf(id string) *runStream {
	if s.shared {
		return s.mirror(id)
	}
	return s.streams.get(id)
}
