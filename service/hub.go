package service

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"sync"
)

// ErrSlowSubscriber is the error a subscription ends with when its reader
// fell so far behind that its buffer filled: the run did not wait for it.
// Subscribe again from the cursor of the last event read
// (*SlowSubscriberError has it) to get the events after it.
var ErrSlowSubscriber = errors.New("service: the subscriber fell behind and was dropped")

// ErrCursorExpired is the error a subscription starts with when events
// after its cursor are no longer kept (or were never seen by this
// process): they cannot be sent, and the thread's history (History) is
// the record of what happened. Events from the oldest one kept follow.
var ErrCursorExpired = errors.New("service: events after the cursor are no longer kept")

// SlowSubscriberError is ErrSlowSubscriber with the cursor to resubscribe
// from.
type SlowSubscriberError struct {
	Thread string
	After  Cursor // the cursor of the last event the subscriber got
}

// Error says which thread and where to resume.
func (e *SlowSubscriberError) Error() string {
	return fmt.Sprintf("service: the subscriber of thread %s fell behind after event %s and was dropped; subscribe again from there", e.Thread, e.After)
}

// Is reports ErrSlowSubscriber.
func (e *SlowSubscriberError) Is(target error) bool { return target == ErrSlowSubscriber }

// CursorExpiredError is ErrCursorExpired with what is kept.
type CursorExpiredError struct {
	Thread string
	After  Cursor // the cursor asked for
	Oldest Cursor // the oldest event kept, which follows
}

// Error names the gap.
func (e *CursorExpiredError) Error() string {
	if e.Oldest == (Cursor{}) {
		return fmt.Sprintf("service: the events of thread %s after %s are not kept (the Service keeps none: Options.EventsKept < 0)", e.Thread, e.After)
	}
	return fmt.Sprintf("service: the events of thread %s after %s and before %s are no longer kept", e.Thread, e.After, e.Oldest)
}

// Is reports ErrCursorExpired.
func (e *CursorExpiredError) Is(target error) bool { return target == ErrCursorExpired }

// hub fans the events of runs out to subscribers, per thread. It keeps
// the last keep events of each thread it saw, so that a subscriber that
// reconnects with its cursor gets every later event exactly once, and at
// most maxTopics threads' worth of them (the idle threads seen longest
// ago go first). Publishing never blocks: a subscriber whose buffer of
// buffer events is full is dropped with ErrSlowSubscriber.
//
// E is the event type; pos gives an event's position in its thread,
// which grows from event to event, and follows reports whether next comes
// right after prev (no event between them).
type hub[E any] struct {
	pos       func(E) int64
	follows   func(prev, next int64) bool
	keep      int
	buffer    int
	maxTopics int

	mu     sync.Mutex
	topics map[string]*topic[E]
	// lru lists the topics by last use, the one used longest ago first
	// (a ring through a sentinel): evict drops from its front.
	lru topic[E]
}

// topic is one thread's events and subscribers.
type topic[E any] struct {
	id         string
	ring       ring[E] // the last events, at most keep
	subs       map[*subscriber[E]]struct{}
	prev, next *topic[E] // in hub.lru
}

// subscriber is one subscription's buffer.
type subscriber[E any] struct {
	ch      chan E
	dropped bool // set under hub.mu when ch was closed because it was full
}

func newHub[E any](pos func(E) int64, follows func(prev, next int64) bool, keep, buffer, maxTopics int) *hub[E] {
	h := &hub[E]{pos: pos, follows: follows, keep: keep, buffer: buffer, maxTopics: maxTopics, topics: map[string]*topic[E]{}}
	h.lru.prev, h.lru.next = &h.lru, &h.lru
	return h
}

// publish records e as the next event of thread and sends it to the
// thread's subscribers.
func (h *hub[E]) publish(thread string, e E) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.keep <= 0 {
		// Nothing kept: only the live subscribers, if any, see e.
		if t := h.topics[thread]; t != nil {
			h.send(t, e)
		}
		return
	}
	t := h.topic(thread)
	if n := t.ring.len(); n > 0 && !h.follows(h.pos(t.ring.at(n-1)), h.pos(e)) {
		// A cursor that does not follow the ones kept (another
		// process drove the thread in between, or a crash undid
		// steps): what is kept no longer leads up to e.
		t.ring.reset()
	}
	t.ring.push(e, h.keep)
	h.send(t, e)
}

// send sends e to t's subscribers, dropping those whose buffer is full.
// h.mu is held.
func (h *hub[E]) send(t *topic[E], e E) {
	for s := range t.subs {
		select {
		case s.ch <- e:
		default:
			s.dropped = true
			close(s.ch)
			delete(t.subs, s)
		}
	}
}

// topic returns thread's topic, made if needed, as the one used last.
// h.mu is held.
func (h *hub[E]) topic(thread string) *topic[E] {
	t := h.topics[thread]
	if t == nil {
		h.evict()
		t = &topic[E]{id: thread, subs: map[*subscriber[E]]struct{}{}}
		h.topics[thread] = t
	} else {
		t.prev.next, t.next.prev = t.next, t.prev // out of the list
	}
	t.prev, t.next = h.lru.prev, &h.lru // at its back
	h.lru.prev.next = t
	h.lru.prev = t
	return t
}

// evict drops the idle topic used longest ago when there are maxTopics:
// the first of the list with no subscriber (those with one are few: one
// per live stream). h.mu is held.
func (h *hub[E]) evict() {
	if len(h.topics) < h.maxTopics {
		return
	}
	for t := h.lru.next; t != &h.lru; t = t.next {
		if len(t.subs) == 0 {
			t.prev.next, t.next.prev = t.next, t.prev
			delete(h.topics, t.id)
			return
		}
	}
}

// subscribe yields (once iterated: the subscription starts with the
// iteration) thread's events after the cursor after (every event
// kept, with a negative after: none, only those to come), then each new
// one, until ctx ends (then it stops without an error) or the subscriber
// falls behind (*SlowSubscriberError). When events after the cursor are
// no longer kept it yields a *CursorExpiredError first and goes on with
// the oldest kept.
func (h *hub[E]) subscribe(ctx context.Context, thread string, after int64) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		var zero E
		s := &subscriber[E]{ch: make(chan E, h.buffer)}
		h.mu.Lock()
		t := h.topic(thread)
		var backlog []E
		var gap error
		if after >= 0 && h.keep <= 0 {
			gap = &CursorExpiredError{Thread: thread, After: unpack(after)}
		}
		if n := t.ring.len(); after >= 0 && n > 0 {
			first := h.pos(t.ring.at(0))
			if first > after && !h.follows(after, first) {
				gap = &CursorExpiredError{Thread: thread, After: unpack(after), Oldest: unpack(first)}
			}
			// The first event kept after the cursor: positions grow.
			for i := sort.Search(n, func(i int) bool { return h.pos(t.ring.at(i)) > after }); i < n; i++ {
				backlog = append(backlog, t.ring.at(i))
			}
		}
		t.subs[s] = struct{}{}
		h.mu.Unlock()
		defer h.unsubscribe(thread, s)

		if gap != nil && !yield(zero, gap) {
			return
		}
		last := after
		for _, e := range backlog {
			if !yield(e, nil) {
				return
			}
			last = h.pos(e)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-s.ch:
				if !ok {
					yield(zero, &SlowSubscriberError{Thread: thread, After: unpack(last)})
					return
				}
				if !yield(e, nil) {
					return
				}
				last = h.pos(e)
			}
		}
	}
}

// unsubscribe removes s from thread's topic.
func (h *hub[E]) unsubscribe(thread string, s *subscriber[E]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.topics[thread]; t != nil {
		delete(t.subs, s)
	}
}

// ring is a fixed-size circular buffer of the last events: pushing onto a
// full one drops the oldest in O(1).
type ring[E any] struct {
	buf   []E
	start int // the oldest event's index in buf
	n     int
}

func (r *ring[E]) len() int { return r.n }

// at returns the i-th event kept, oldest first.
func (r *ring[E]) at(i int) E { return r.buf[(r.start+i)%len(r.buf)] }

// push adds e, dropping the oldest event when keep are kept.
func (r *ring[E]) push(e E, keep int) {
	if r.buf == nil {
		// Small at first, growing as append does: the hub keeps up to
		// ThreadsKept threads' rings, most of a few events (a run to a
		// question), and what they hold should follow what they keep.
		r.buf = make([]E, 0, min(keep, 8))
	}
	if len(r.buf) < keep {
		// Still growing: the events are in order from index 0.
		r.buf = append(r.buf, e)
		r.n++
		return
	}
	// Full: the newest takes the oldest's place.
	r.buf[r.start] = e
	r.start = (r.start + 1) % len(r.buf)
}

// reset forgets every event.
func (r *ring[E]) reset() {
	clear(r.buf)
	r.buf, r.start, r.n = r.buf[:0], 0, 0
}
