package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/store"
)

// GET /threads/{id}/stream (LangGraph's "join thread stream") follows
// every run of a thread, one after the other in the order they were
// created, from the runs in progress when the client joins on, and stays
// open until the client goes, the thread is deleted or the server closes.
// Each run's part is its own stream's frames (the metadata frame
// {run_id, attempt} first), then a run_done frame {run_id, status}. The
// stream_mode query (repeated, or stream_modes) picks what is sent:
// run_modes (the default) all of that; lifecycle the metadata and
// run_done frames only; state_update the values frames only.
//
// Event ids are "<run id>/<the run stream's id>" ("<run id>/end" for
// run_done): a client reconnecting with one as Last-Event-ID is sent the
// rest of that run, then the runs after it; "-" (or "-1") is every run of
// the thread kept, from the first.

// The thread stream's modes.
const (
	threadModeRuns      = "run_modes"
	threadModeLifecycle = "lifecycle"
	threadModeState     = "state_update"
)

// threadPoll is how often, with a shared executor, a thread stream
// waiting for the thread's next run looks at its runs (a run created by
// another process; one created by this one wakes it at once).
const threadPoll = time.Second

// threadKeepAlive is how often an idle thread stream sends a comment.
const threadKeepAlive = 15 * time.Second

// threadWatch wakes the thread streams of a thread when one of its runs is
// created or the thread is deleted in this process. It holds an entry per
// thread only while some stream waits on it.
type threadWatch struct {
	mu sync.Mutex
	m  map[string]*threadWaiters
}

// threadWaiters is the channel the streams waiting on one thread share,
// closed on a wake, and how many hold it.
type threadWaiters struct {
	ch chan struct{}
	n  int
}

// watch returns a channel closed at the thread's next wake, and a release
// to call when done with it.
func (tw *threadWatch) watch(thread string) (<-chan struct{}, func()) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.m == nil {
		tw.m = map[string]*threadWaiters{}
	}
	w := tw.m[thread]
	if w == nil {
		w = &threadWaiters{ch: make(chan struct{})}
		tw.m[thread] = w
	}
	w.n++
	released := false
	return w.ch, func() {
		tw.mu.Lock()
		defer tw.mu.Unlock()
		if released {
			return
		}
		released = true
		w.n--
		if w.n == 0 && tw.m[thread] == w {
			delete(tw.m, thread)
		}
	}
}

// wake wakes the streams waiting on thread.
func (tw *threadWatch) wake(thread string) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if w := tw.m[thread]; w != nil {
		close(w.ch)
		delete(tw.m, thread)
	}
}

// threadCursor is where a thread stream's client is: the run it is in
// (none: "") and its cursor in that run's stream, or past its end.
type threadCursor struct {
	run  string
	in   eventCursor
	past bool // run_done of run was sent
}

// parseThreadEventID reads a thread stream's Last-Event-ID.
func parseThreadEventID(v string) (threadCursor, bool, error) {
	if v == "-" || v == "-1" {
		return threadCursor{}, true, nil
	}
	run, rest, ok := strings.Cut(v, "/")
	if !ok || run == "" {
		return threadCursor{}, false, invalid("Last-Event-ID", "must be an event id the thread stream sent, not %q", v)
	}
	if rest == "end" {
		return threadCursor{run: run, past: true}, false, nil
	}
	c, err := parseEventID(rest)
	if err != nil {
		return threadCursor{}, false, invalid("Last-Event-ID", "must be an event id the thread stream sent, not %q", v)
	}
	return threadCursor{run: run, in: c}, false, nil
}

// threadModes reads the stream_mode (or stream_modes) query: the set of
// modes asked for, run_modes when none.
func threadModes(r *http.Request) (map[string]bool, error) {
	q := r.URL.Query()
	vals := append(q["stream_mode"], q["stream_modes"]...)
	modes := map[string]bool{}
	for _, v := range vals {
		for _, m := range strings.Split(v, ",") {
			switch m = strings.TrimSpace(m); m {
			case threadModeRuns, threadModeLifecycle, threadModeState:
				modes[m] = true
			case "":
			default:
				return nil, invalid("stream_mode", "%q is not a thread stream mode (run_modes, lifecycle, state_update)", m)
			}
		}
	}
	if len(modes) == 0 {
		modes[threadModeRuns] = true
	}
	return modes, nil
}

// wantsFrame reports whether a frame of event is sent in modes.
func wantsFrame(modes map[string]bool, event string) bool {
	switch {
	case modes[threadModeRuns]:
		return true
	case event == "metadata" || event == "run_done":
		return modes[threadModeLifecycle]
	case event == "values":
		return modes[threadModeState]
	}
	return false
}

// jobAfter orders jobs as the thread stream follows them: by creation,
// then ID.
func jobAfter(a, b *store.Job) bool {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c > 0
	}
	return a.ID > b.ID
}

// nextJob returns the thread's oldest job after last (the oldest of
// all, when nil), or nil. A deleted thread is store.ErrNotFound.
func (s *Server) nextJob(ctx context.Context, thread string, last *store.Job) (*store.Job, error) {
	return s.oldestJob(ctx, store.JobQuery{ThreadID: thread}, last)
}

// oldestJob returns the oldest of the jobs q lists that come after last
// (any, when nil), or nil; it reads them a page at a time, newest first
// (by creation; the store orders jobs created at the same time by id
// ascending, not as jobAfter does), until one was created before last.
func (s *Server) oldestJob(ctx context.Context, q store.JobQuery, last *store.Job) (*store.Job, error) {
	const page = 64
	var best *store.Job
	for q.Limit, q.Offset = page, 0; ; q.Offset += page {
		js, err := s.jobs.Jobs(ctx, q)
		if err != nil {
			return nil, err
		}
		older := false
		for _, j := range js {
			if last != nil && !jobAfter(j, last) {
				if j.Created.Before(last.Created) {
					older = true // newest first: the rest are older still
					break
				}
				continue // created with last: a later one may follow in the page
			}
			if best == nil || jobAfter(best, j) {
				best = j
			}
		}
		if older || len(js) < page {
			return best, nil
		}
	}
}

// threadStart is where a client joining with no event id starts: the
// thread's oldest run in progress, or else past its newest run (nil:
// before its first).
func (s *Server) threadStart(ctx context.Context, thread string) (*store.Job, threadCursor, error) {
	j, err := s.oldestJob(ctx, store.JobQuery{ThreadID: thread, Status: inflight}, nil)
	if err != nil || j != nil {
		if j == nil {
			return nil, threadCursor{}, err
		}
		return j, threadCursor{run: j.ID, in: fromStart}, nil
	}
	js, err := s.jobs.Jobs(ctx, store.JobQuery{ThreadID: thread, Limit: 1})
	if err != nil || len(js) == 0 {
		return nil, threadCursor{}, err
	}
	return js[0], threadCursor{run: js[0].ID, past: true}, nil
}

// threadStream is GET /threads/{id}/stream.
func (s *Server) threadStream(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	thread := r.PathValue("id")
	if _, err := s.opts.Store.Thread(ctx, thread); err != nil {
		return threadErr(thread, err)
	}
	modes, err := threadModes(r)
	if err != nil {
		return err
	}
	var cur threadCursor
	var last *store.Job // the run the client is in or past; nil: before the first
	switch v := r.Header.Get("Last-Event-ID"); {
	case v == "":
		if last, cur, err = s.threadStart(ctx, thread); err != nil {
			return threadErr(thread, err)
		}
	default:
		all := false
		if cur, all, err = parseThreadEventID(v); err != nil {
			return err
		}
		if !all {
			last, err = s.threadJob(ctx, thread, cur.run)
			if statusOf(err) == http.StatusNotFound {
				// The run was deleted since (a rollback, DELETE): the
				// client joins as with no event id.
				last, cur, err = s.threadStart(ctx, thread)
			}
			if err != nil {
				return threadErr(thread, err)
			}
		}
	}
	out := startSSE(w, "")
	out.keep = func(event string) bool { return wantsFrame(modes, event) }
	keepAlive := time.NewTicker(threadKeepAlive)
	defer keepAlive.Stop()
	var poll <-chan time.Time
	if s.shared {
		t := time.NewTicker(threadPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		if last != nil && !cur.past {
			if err := s.sendThreadRun(ctx, out, last, cur.in, modes); err != nil {
				return nil // the client went, or the server closes
			}
			cur = threadCursor{run: last.ID, past: true}
		}
		// Watch before looking, so that a run made in between wakes.
		woken, release := s.threadWatch.watch(thread)
		next, err := s.nextJob(ctx, thread, last)
		if err != nil {
			release()
			if errors.Is(err, store.ErrNotFound) || ctx.Err() != nil {
				return nil // the thread was deleted, or the client went
			}
			sendStreamError(out, err)
			return nil
		}
		if next != nil {
			release()
			last, cur = next, threadCursor{run: next.ID, in: fromStart}
			continue
		}
		select {
		case <-woken:
		case <-poll:
		case <-keepAlive.C:
			if err := out.comment(); err != nil {
				release()
				return nil
			}
		case <-s.bg.Done():
			release()
			return nil
		case <-ctx.Done():
			release()
			return nil
		}
		release()
	}
}

// sendThreadRun sends run j's frames after c, then its run_done frame.
func (s *Server) sendThreadRun(ctx context.Context, out *sse, j *store.Job, c eventCursor, modes map[string]bool) error {
	out.prefix = j.ID + "/"
	if st := s.streamOf(j.ID); st != nil {
		sctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(s.bg, cancel)
		err := out.stream(sctx, st, c)
		stop()
		cancel()
		if err != nil {
			return err
		}
		if s.bg.Err() != nil {
			return s.bg.Err()
		}
	}
	if !wantsFrame(modes, "run_done") {
		return nil
	}
	status := "deleted"
	switch now, err := s.jobs.Job(ctx, j.ID); {
	case err == nil:
		status = string(now.Status)
	case !errors.Is(err, store.ErrNotFound):
		// Not a status made up: the client sees why the stream ends.
		sendStreamError(out, err)
		return err
	}
	b, _ := json.Marshal(map[string]string{"run_id": j.ID, "status": status})
	return out.sendRaw("run_done", b, j.ID+"/end")
}

// sendStreamError sends err as the thread stream's last frame, an error
// event of err's kind.
func sendStreamError(out *sse, err error) {
	_ = out.sendRaw("error", errorEvent(string(engine.KindOf(err)), err.Error()), "")
}
