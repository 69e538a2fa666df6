package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
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

// runStream is the stream of one job's run: its frames, numbered from
// base+1 (the metadata frame, 0, is made for each client), and its end.
type runStream struct {
	mu      sync.Mutex
	frames  []frame
	base    int // the id before the first frame; set at the start, never changed
	first   int // the id of frames[0]
	bytes   int
	done    bool
	final   []byte        // what runs.wait and join answer, once done
	changed chan struct{} // closed and replaced when a frame is added or the run ends
	ended   time.Time
}

func newRunStream(base int) *runStream {
	return &runStream{base: base, first: base + 1, changed: make(chan struct{})}
}

// resumedBase is the base of the ids of the streams of runs a process
// picks up from the store (recover): from its start time in
// milliseconds, shifted so that they are above every id the streams of
// the same runs had in an earlier process (which would have had to send
// over a million events per millisecond it lived to reach them). A client
// rejoining with an id of the earlier process is then told its events
// are gone (errCursorGone), never silently given the new process's
// events from that number on. (Ids are Go ints: 64 bits on the platforms
// weft builds for.)
func resumedBase(started time.Time) int { return int(started.UnixMilli() << 20) }

// add appends a frame.
func (st *runStream) add(event string, data []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	st.frames = append(st.frames, frame{event, data})
	st.bytes += len(data) + len(event)
	for st.bytes > maxStreamBytes && len(st.frames) > 1 {
		st.bytes -= len(st.frames[0].data) + len(st.frames[0].event)
		st.frames[0] = frame{}
		st.frames = st.frames[1:]
		st.first++
	}
	close(st.changed)
	st.changed = make(chan struct{})
}

// finish ends the stream with the reply runs.wait gives.
func (st *runStream) finish(final []byte, now time.Time) {
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

// next returns the frames after id (their ids start at id+1), whether
// the stream has ended, and a channel closed when there is more.
func (st *runStream) next(after int) ([]frame, int, bool, <-chan struct{}, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if after == 0 {
		after = st.base // the metadata frame's id, in any process: no event missed
	}
	if after < st.base {
		return nil, 0, st.done, nil, fmt.Errorf("%w: the run was picked up by a restarted server, whose events are the ones after %d", errCursorGone, st.base)
	}
	if after+1 < st.first {
		return nil, 0, st.done, nil, fmt.Errorf("%w: the oldest kept is %d", errCursorGone, st.first)
	}
	i := after + 1 - st.first
	if i > len(st.frames) {
		i = len(st.frames)
	}
	return st.frames[i:], st.first + i, st.done, st.changed, nil
}

// wait waits for the end of the stream and returns its final reply.
func (st *runStream) wait(ctx context.Context) ([]byte, error) {
	for {
		st.mu.Lock()
		done, final, ch := st.done, st.final, st.changed
		st.mu.Unlock()
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

// open returns the stream of job id, made if needed with ids from 1.
func (ss *streams) open(id string) *runStream { return ss.openAfter(id, 0) }

// openAfter returns the stream of job id, made if needed with ids after
// base.
func (ss *streams) openAfter(id string, base int) *runStream {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID == nil {
		ss.byID = map[string]*runStream{}
	}
	st := ss.byID[id]
	if st == nil {
		st = newRunStream(base)
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
// writes them.
func (s *sse) send(event string, data []byte, id int) error {
	buf := make([]byte, 0, len(event)+len(data)+32)
	buf = append(buf, "event: "...)
	buf = append(buf, event...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\nid: "...)
	buf = strconv.AppendInt(buf, int64(id), 10)
	buf = append(buf, "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// stream sends the frames of st after id after (none: all) until it
// ends or ctx is done, with the metadata frame first when from the start.
func (s *sse) stream(ctx context.Context, st *runStream, runID string, after int) error {
	if after < 0 {
		meta, _ := json.Marshal(map[string]any{"run_id": runID, "attempt": 1})
		if err := s.send("metadata", meta, 0); err != nil {
			return err
		}
		after = st.base
	}
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		frames, id, done, more, err := st.next(after)
		if err != nil {
			b, _ := json.Marshal(map[string]string{"error": "CursorExpired", "message": err.Error()})
			return s.send("error", b, after+1)
		}
		for _, f := range frames {
			if err := s.send(f.event, f.data, id); err != nil {
				return err
			}
			after = id
			id++
		}
		if done {
			return nil
		}
		select {
		case <-more:
		case <-keepAlive.C:
			if _, err := s.w.Write([]byte(": keep-alive\n\n")); err != nil {
				return err
			}
			_ = s.rc.Flush()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
