package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// frame is one server-sent event of a run's stream.
type frame struct {
	event string
	data  []byte
}

// maxStreamBytes bounds the frames a run's stream keeps for clients that
// join late or reconnect: beyond it the oldest go, and a client asking
// for them is told so (an error event), not silently given less.
const maxStreamBytes = 32 << 20

// runStream is the stream of one attempt at a job's run (the frames one
// process makes for it), and its end. Its frames are numbered from 0, the
// metadata frame {run_id, attempt}; their SSE ids are "<epoch>-<n>",
// where the epoch is drawn for the stream, so that an id a client got
// from another attempt (an earlier process's, before a restart) is never
// taken for one of this attempt's: a client rejoining with it is sent
// this attempt from its start, its metadata frame first, rather than a
// slice that does not follow what it saw.
type runStream struct {
	runID   string
	epoch   string // immutable
	mu      sync.Mutex
	attempt int  // 1, or 2 for a run a process goes on with after its own stopped
	began   bool // the metadata frame is in
	frames  []frame
	first   int // the number of frames[0]
	bytes   int
	done    bool
	final   []byte        // what runs.wait and join answer, once done
	changed chan struct{} // closed and replaced when a frame is added or the run ends
	ended   time.Time
	// log, when set, is where the frames also go (the store's log of run
	// events, for readers in other processes).
	log *eventLog
	// succ, in a mirror of the log, is the stream of the attempt that
	// came after this one (which then is done): readers go on there.
	succ *runStream
	// prev, in a mirror, is the stream of the attempt before this one
	// (set before the stream is shared, then read only): a client
	// rejoining with an event id of that attempt is sent the rest of it
	// first.
	prev *runStream
}

func newRunStream(runID string) *runStream {
	return newRunStreamAt(runID, newEpoch())
}

// newRunStreamAt makes the stream of an attempt whose epoch is known (a
// mirror's, from the log).
func newRunStreamAt(runID, epoch string) *runStream {
	return &runStream{runID: runID, epoch: epoch, attempt: 1, changed: make(chan struct{})}
}

// newEpoch draws the epoch of a stream's event ids: 8 random base-36
// digits.
func newEpoch() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 8)
	for i, n := 0, rand.Uint64(); i < len(b); i, n = i+1, n/36 {
		b[i] = digits[n%36]
	}
	return string(b)
}

// begin adds the stream's metadata frame, saying which attempt at the
// run it is, unless a frame came first (with the metadata of attempt 1).
func (st *runStream) begin(attempt int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.began {
		st.attempt = attempt
		st.addLocked("", nil)
	}
}

// add appends a frame.
func (st *runStream) add(event string, data []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.addLocked(event, data)
}

// addLocked appends a frame, after the metadata frame; st.mu is held. An
// empty event adds the metadata frame only.
func (st *runStream) addLocked(event string, data []byte) {
	if st.done {
		return
	}
	if !st.began {
		st.began = true
		meta, _ := json.Marshal(map[string]any{"run_id": st.runID, "attempt": st.attempt})
		st.frames = append(st.frames, frame{"metadata", meta})
		st.bytes += len(meta) + len("metadata")
		if st.log != nil {
			st.log.add(st.first+len(st.frames)-1, "metadata", meta)
		}
	}
	if event != "" {
		st.frames = append(st.frames, frame{event, data})
		if st.log != nil {
			st.log.add(st.first+len(st.frames)-1, event, data)
		}
	}
	st.push(len(data) + len(event))
}

// push bounds the frames kept after one of size bytes was added, and
// tells the readers; st.mu is held.
func (st *runStream) push(size int) {
	st.bytes += size
	for st.bytes > maxStreamBytes && len(st.frames) > 1 {
		st.bytes -= len(st.frames[0].data) + len(st.frames[0].event)
		st.frames[0] = frame{}
		st.frames = st.frames[1:]
		st.first++
	}
	close(st.changed)
	st.changed = make(chan struct{})
}

// feed appends a frame read from the log to a mirror (the log has its
// metadata frame).
func (st *runStream) feed(event string, data []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	st.began = true
	st.frames = append(st.frames, frame{event, data})
	st.push(len(data) + len(event))
}

// supersede ends a mirror's stream of an attempt with the stream of the
// next: its readers go on there.
func (st *runStream) supersede(next *runStream, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	st.succ, st.done, st.ended = next, true, now
	close(st.changed)
}

// successor returns the stream that superseded st, or nil.
func (st *runStream) successor() *runStream {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.succ
}

// finish ends the stream with the reply runs.wait gives (and, with a
// log, writes what is left of it there, and its end, first).
func (st *runStream) finish(final []byte, now time.Time) {
	st.mu.Lock()
	if st.done {
		st.mu.Unlock()
		return
	}
	log := st.log
	st.mu.Unlock()
	if log != nil {
		log.end(final)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	st.done, st.final, st.ended = true, final, now
	close(st.changed)
}

// errCursorGone is a client asking for frames the stream no longer keeps.
var errCursorGone = errors.New("the events after that id are no longer kept")

// eventCursor is a Last-Event-ID: an event's epoch and number, or the
// start of a stream (n = -1).
type eventCursor struct {
	epoch string
	n     int
}

// fromStart is the cursor of a client that has seen no event.
var fromStart = eventCursor{n: -1}

// parseEventID reads a Last-Event-ID: "<epoch>-<n>" as the stream sent
// it, or -1 (LangGraph's "from the start"); a bare number N of no known
// epoch reads as an id of another attempt.
func parseEventID(v string) (eventCursor, error) {
	epoch, num, ok := strings.Cut(v, "-")
	if !ok {
		epoch, num = "", v
	} else if epoch == "" {
		num = "-" + num // "-1"
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < -1 || strings.ContainsAny(epoch, "-") {
		return eventCursor{}, fmt.Errorf("not an event id a stream sent: %q", v)
	}
	if n == -1 {
		return fromStart, nil
	}
	return eventCursor{epoch: epoch, n: n}, nil
}

// after is the number of the last frame of st a client at c has seen:
// -1, from the start, when c is of another attempt or none.
func (c eventCursor) after(st *runStream) int {
	if c.epoch != st.epoch {
		return -1
	}
	return c.n
}

// next returns the frames after number after (theirs start at after+1),
// whether the stream has ended, and a channel closed when there is more.
func (st *runStream) next(after int) ([]frame, int, bool, <-chan struct{}, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if after+1 < st.first {
		return nil, 0, st.done, nil, fmt.Errorf("%w: the oldest kept is %s-%d", errCursorGone, st.epoch, st.first)
	}
	i := after + 1 - st.first
	if i > len(st.frames) {
		i = len(st.frames)
	}
	return st.frames[i:], st.first + i, st.done, st.changed, nil
}

// wait waits for the end of the stream (of the last attempt, in a
// mirror) and returns its final reply.
func (st *runStream) wait(ctx context.Context) ([]byte, error) {
	for {
		st.mu.Lock()
		done, final, ch, next := st.done, st.final, st.changed, st.succ
		st.mu.Unlock()
		if next != nil {
			st = next
			continue
		}
		if done {
			return final, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// streams keeps the streams of the jobs run or running in this process:
// running ones, and ended ones for streamTTL (at most streamsKept), for
// clients that join or reconnect.
type streams struct {
	mu    sync.Mutex
	byID  map[string]*runStream
	now   func() time.Time
	swept time.Time // the last sweep
}

// How long, how many and how many bytes of ended streams are kept.
const (
	streamTTL        = 10 * time.Minute
	streamsKept      = 1024
	streamsKeptBytes = 256 << 20
)

// open returns the stream of job id, made if needed.
func (ss *streams) open(id string) *runStream {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID == nil {
		ss.byID = map[string]*runStream{}
	}
	st := ss.byID[id]
	if st == nil {
		st = newRunStream(id)
		ss.byID[id] = st
		// A sweep scans every stream: once a second, or when the kept
		// ones are well over the bound.
		if now := ss.now(); now.Sub(ss.swept) >= time.Second || len(ss.byID) > streamsKept+streamsKept/8 {
			ss.swept = now
			ss.sweep()
		}
	}
	return st
}

// replace makes next the stream of job id in place of st (a mirror's
// next attempt).
func (ss *streams) replace(id string, st, next *runStream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID[id] == st {
		ss.byID[id] = next
	}
}

// get returns the stream of job id, or nil.
func (ss *streams) get(id string) *runStream {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.byID[id]
}

// sweep drops ended streams past their time, and the oldest ended ones
// beyond streamsKept or streamsKeptBytes; ss.mu is held.
func (ss *streams) sweep() {
	now := ss.now()
	type ended struct {
		id    string
		at    time.Time
		bytes int
	}
	var list []ended
	total := 0
	for id, st := range ss.byID {
		st.mu.Lock()
		done, at, n := st.done, st.ended, st.bytes
		st.mu.Unlock()
		if !done {
			continue
		}
		if now.Sub(at) > streamTTL {
			delete(ss.byID, id)
			continue
		}
		list = append(list, ended{id, at, n})
		total += n
	}
	if len(list) <= streamsKept && total <= streamsKeptBytes {
		return
	}
	slices.SortFunc(list, func(a, b ended) int { return a.at.Compare(b.at) })
	for _, e := range list {
		if len(list) <= streamsKept && total <= streamsKeptBytes {
			break
		}
		delete(ss.byID, e.id)
		list, total = list[1:], total-e.bytes
	}
}

// sse writes server-sent events.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// prefix goes before each event id (a thread stream's run); keep, if
	// not nil, says which frames stream sends (the others are skipped).
	prefix string
	keep   func(event string) bool
}

// startSSE sends the headers of an event stream.
func startSSE(w http.ResponseWriter, location string) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if location != "" {
		h.Set("Content-Location", location)
	}
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

// send writes one event: event, data, id lines, as LangGraph's server
// writes them; its id is "<prefix><epoch>-<n>".
func (s *sse) send(event string, data []byte, epoch string, id int) error {
	return s.sendRaw(event, data, s.prefix+epoch+"-"+strconv.Itoa(id))
}

// sendRaw writes one event with the id given (none when empty).
func (s *sse) sendRaw(event string, data []byte, id string) error {
	buf := make([]byte, 0, len(event)+len(data)+len(id)+32)
	buf = append(buf, "event: "...)
	buf = append(buf, event...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	if id != "" {
		buf = append(buf, "\nid: "...)
		buf = append(buf, id...)
	}
	buf = append(buf, "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// comment writes a keep-alive comment.
func (s *sse) comment() error {
	if _, err := s.w.Write([]byte(": keep-alive\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}

// stream sends the frames of st after the cursor (all, the metadata
// frame first, for a cursor of another attempt) until it ends or ctx is
// done.
func (s *sse) stream(ctx context.Context, st *runStream, c eventCursor) error {
	for p := st.prev; p != nil && c.epoch != st.epoch; p = p.prev {
		if p.epoch == c.epoch {
			st = p // an earlier attempt's id: its rest, then on
		}
	}
	after := c.after(st)
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		frames, id, done, more, err := st.next(after)
		if err != nil {
			return s.send("error", errorEvent("CursorExpired", err.Error()), st.epoch, after+1)
		}
		for _, f := range frames {
			if s.keep == nil || s.keep(f.event) {
				if err := s.send(f.event, f.data, st.epoch, id); err != nil {
					return err
				}
			}
			after = id
			id++
			c = eventCursor{epoch: st.epoch, n: after}
		}
		if done {
			next := st.successor()
			if next == nil {
				return nil
			}
			// A mirror's next attempt: from where the client is in it
			// (its start, when what it saw was of another attempt).
			st, after = next, c.after(next)
			continue
		}
		select {
		case <-more:
		case <-keepAlive.C:
			if err := s.comment(); err != nil {
				return err
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
