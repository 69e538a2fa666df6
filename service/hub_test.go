package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type ev struct {
	seq  int64
	text string
}

func newTestHub(keep, buffer, topics int) *hub[ev] {
	return newHub(func(e ev) int64 { return e.seq }, func(p, n int64) bool { return n == p+1 }, keep, buffer, topics)
}

func publishN(h *hub[ev], thread string, from, to int64) {
	for i := from; i <= to; i++ {
		h.publish(thread, ev{i, fmt.Sprintf("%s-%d", thread, i)})
	}
}

// collect reads n events (or errors) from a subscription.
func collect(t *testing.T, next func() (ev, error, bool), n int) ([]ev, []error) {
	t.Helper()
	var evs []ev
	var errs []error
	for len(evs)+len(errs) < n {
		e, err, ok := next()
		if !ok {
			t.Fatalf("subscription ended after %d events %v, errors %v", len(evs), evs, errs)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		evs = append(evs, e)
	}
	return evs, errs
}

func pull(h *hub[ev], ctx context.Context, thread string, after int64) (func() (ev, error, bool), func()) {
	next, stop := iterPull2(h.subscribe(ctx, thread, after))
	return next, stop
}

func seqs(evs []ev) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.seq)
	}
	return out
}

func TestHubReplaysFromTheCursorThenGoesLive(t *testing.T) {
	h := newTestHub(100, 10, 10)
	publishN(h, "a", 1, 5)
	publishN(h, "b", 1, 2)
	next, stop := pull(h, context.Background(), "a", 2)
	defer stop()
	got, _ := collect(t, next, 3)
	if fmt.Sprint(seqs(got)) != "[3 4 5]" || got[0].text != "a-3" {
		t.Fatalf("replay = %v", got)
	}
	publishN(h, "a", 6, 7)
	got, _ = collect(t, next, 2)
	if fmt.Sprint(seqs(got)) != "[6 7]" || got[1].text != "a-7" {
		t.Fatalf("live = %v", got)
	}
}

func TestHubSaysWhenTheCursorExpired(t *testing.T) {
	h := newTestHub(3, 10, 10)
	publishN(h, "a", 1, 10)
	next, stop := pull(h, context.Background(), "a", 2)
	defer stop()
	got, errs := collect(t, next, 4)
	var ce *CursorExpiredError
	if len(errs) != 1 || !errors.As(errs[0], &ce) || !errors.Is(errs[0], ErrCursorExpired) || ce.Oldest != unpack(8) || ce.After != unpack(2) {
		t.Fatalf("errors = %v", errs)
	}
	if fmt.Sprint(seqs(got)) != "[8 9 10]" {
		t.Fatalf("events = %v", seqs(got))
	}
	// The ring's slots were overwritten several times: each event read
	// back is the one published with its seq, whole.
	for _, e := range got {
		if e.text != fmt.Sprintf("a-%d", e.seq) {
			t.Fatalf("event %d carries %q", e.seq, e.text)
		}
	}
}

// A subscriber that does not read never holds up publishing: it is
// dropped, and resubscribing from its last cursor gets every later event
// exactly once.
func TestHubDropsASlowSubscriberWhoReconnects(t *testing.T) {
	h := newTestHub(100, 2, 10)
	next, stop := pull(h, context.Background(), "a", 0)
	defer stop()
	publishN(h, "a", 1, 1)
	if got, _ := collect(t, next, 1); got[0].seq != 1 { // subscribed from here on
		t.Fatalf("first event %v", got)
	}
	done := make(chan struct{})
	go func() {
		publishN(h, "a", 2, 7) // must not block on the reader
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("publish blocked on a subscriber that does not read")
	}
	got, errs := collect(t, next, 3)
	var se *SlowSubscriberError
	if fmt.Sprint(seqs(got)) != "[2 3]" || len(errs) != 1 || !errors.As(errs[0], &se) || se.After != unpack(3) || !errors.Is(errs[0], ErrSlowSubscriber) {
		t.Fatalf("got %v, errors %v", seqs(got), errs)
	}
	if _, _, ok := next(); ok {
		t.Fatal("the subscription went on after it was dropped")
	}
	next2, stop2 := pull(h, context.Background(), "a", se.After.pack())
	defer stop2()
	got, _ = collect(t, next2, 4)
	if fmt.Sprint(seqs(got)) != "[4 5 6 7]" {
		t.Fatalf("after reconnecting: %v", seqs(got))
	}
}

// Many subscribers and one publisher, under -race: each subscriber that
// keeps up sees every event once, in order.
func TestHubConcurrentSubscribers(t *testing.T) {
	h := newTestHub(1000, 1000, 10)
	const n = 500
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	results := make([][]int64, 8)
	ready := make(chan struct{}, len(results))
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for e, err := range h.subscribe(ctx, "t", 0) {
				if first {
					ready <- struct{}{}
					first = false
				}
				if err != nil {
					t.Errorf("subscriber %d: %v", i, err)
					return
				}
				results[i] = append(results[i], e.seq)
				if e.text != fmt.Sprintf("t-%d", e.seq) {
					t.Errorf("subscriber %d: event %d carries %q", i, e.seq, e.text)
				}
				if e.seq == n {
					return
				}
			}
		}()
	}
	h.publish("t", ev{1, "t-1"})
	for range results {
		<-ready
	}
	publishN(h, "t", 2, n)
	wg.Wait()
	for i, r := range results {
		if len(r) != n {
			t.Fatalf("subscriber %d got %d events", i, len(r))
		}
		for j, s := range r {
			if s != int64(j+1) {
				t.Fatalf("subscriber %d: event %d is %d", i, j, s)
			}
		}
	}
}

// A cursor that goes back (a crash undid steps, another process drove
// the thread) starts what is kept over: nothing from before is mixed in.
func TestHubRestartsOnACursorThatDoesNotFollow(t *testing.T) {
	h := newTestHub(100, 10, 10)
	publishN(h, "a", 1, 5)
	h.publish("a", ev{4, "again-4"})
	next, stop := pull(h, context.Background(), "a", 3)
	defer stop()
	got, _ := collect(t, next, 1)
	if got[0].text != "again-4" {
		t.Fatalf("after the rewind: %v", got)
	}
}

func TestHubEvictsIdleThreadsOnly(t *testing.T) {
	h := newTestHub(10, 10, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next, stop := pull(h, ctx, "watched", 0)
	defer stop()
	publishN(h, "watched", 1, 1)
	if _, _, ok := next(); !ok {
		t.Fatal("no event")
	}
	publishN(h, "idle1", 1, 1)
	publishN(h, "idle2", 1, 1) // evicts idle1, not watched
	h.mu.Lock()
	_, w := h.topics["watched"]
	_, i1 := h.topics["idle1"]
	_, i2 := h.topics["idle2"]
	n := len(h.topics)
	h.mu.Unlock()
	if !w || i1 || !i2 || n != 2 {
		t.Fatalf("topics: watched %v idle1 %v idle2 %v (%d)", w, i1, i2, n)
	}
}

// TestHubEvictsTheThreadUsedLongestAgo: with room for 3 threads, a
// fourth evicts the one used longest ago (b: a was used again since),
// then the next (c), never a thread with a subscriber.
func TestHubEvictsTheThreadUsedLongestAgo(t *testing.T) {
	h := newTestHub(10, 10, 3)
	publishN(h, "a", 1, 1)
	publishN(h, "b", 1, 1)
	publishN(h, "c", 1, 1)
	publishN(h, "a", 2, 2)
	keys := func() string {
		h.mu.Lock()
		defer h.mu.Unlock()
		var out []string
		for t := h.lru.next; t != &h.lru; t = t.next {
			out = append(out, t.id)
		}
		if len(out) != len(h.topics) {
			t.Fatalf("lru %v, topics %d", out, len(h.topics))
		}
		return strings.Join(out, ",")
	}
	publishN(h, "d", 1, 1)
	if got := keys(); got != "c,a,d" {
		t.Fatalf("after d: %s; want c,a,d (b evicted)", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next, stop := pull(h, ctx, "c", 0) // c is watched: it stays
	defer stop()
	if _, _, ok := next(); !ok {
		t.Fatal("no event")
	}
	publishN(h, "e", 1, 1)
	if got := keys(); got != "c,d,e" && got != "d,c,e" {
		t.Fatalf("after e: %s; want a evicted, c kept", got)
	}
}

// BenchmarkHubNewThread publishes the first event of a new thread to a
// hub that keeps 1024 threads' events, all idle: each evicts the thread
// used longest ago.
func BenchmarkHubNewThread(b *testing.B) {
	h := newTestHub(16, 64, 1024)
	for i := range 1024 {
		publishN(h, "t"+strconv.Itoa(i), 1, 1)
	}
	ids := make([]string, 4096)
	for i := range ids {
		ids[i] = "n" + strconv.Itoa(i)
	}
	e := ev{seq: 1, text: "x"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.publish(ids[i%len(ids)], e)
		i++
	}
}

// BenchmarkHubPublish publishes to a thread whose ring of kept events is
// full (4096 kept), the steady state of a long run: each publish puts the
// event in the oldest's slot, in place.
func BenchmarkHubPublish(b *testing.B) {
	h := newTestHub(4096, 64, 16)
	publishN(h, "a", 1, 4096)
	e := ev{text: "x"}
	seq := int64(4096)
	b.ReportAllocs()
	for b.Loop() {
		seq++
		e.seq = seq
		h.publish("a", e)
	}
}

// TestHubRingGrowsWithUse checks that a thread's kept events take room
// in proportion to their number (a ring of a few events does not hold
// a large buffer) and that a ring grown past its first size keeps every
// event, in order, then the last keep once full.
func TestHubRingGrowsWithUse(t *testing.T) {
	h := newTestHub(100, 4, 10)
	for i := int64(1); i <= 5; i++ {
		h.publish("a", ev{seq: i})
	}
	h.mu.Lock()
	r := &h.topics["a"].ring
	if c := cap(r.buf); c > 8 {
		t.Errorf("5 events kept in a buffer of %d", c)
	}
	h.mu.Unlock()
	for i := int64(6); i <= 250; i++ {
		h.publish("a", ev{seq: i, text: fmt.Sprint(i)})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.len() != 100 {
		t.Fatalf("kept %d events, want 100", r.len())
	}
	for i := range 100 {
		if e := r.at(i); e.seq != int64(151+i) || e.text != fmt.Sprint(151+i) {
			t.Fatalf("event %d kept is %+v, want seq %d", i, e, 151+i)
		}
	}
}

// TestHubKeepsNoneWhenAskedTo: a hub that keeps no events (EventsKept < 0)
// holds nothing for the threads it publishes, still sends live
// subscribers every event, and tells a subscriber with a cursor that the
// events after it are not kept.
func TestHubKeepsNoneWhenAskedTo(t *testing.T) {
	h := newTestHub(0, 10, 10)
	for i := range 100 {
		publishN(h, fmt.Sprint("t", i), 1, 5)
	}
	h.mu.Lock()
	n := len(h.topics)
	h.mu.Unlock()
	if n != 0 {
		t.Fatalf("a hub keeping no events holds %d topics", n)
	}
	next, stop := pull(h, context.Background(), "a", -1)
	defer stop()
	type res struct {
		e   ev
		err error
	}
	got := make(chan res, 1)
	go func() {
		e, err, _ := next()
		got <- res{e, err}
	}()
	for {
		h.mu.Lock()
		subs := 0
		if tp := h.topics["a"]; tp != nil {
			subs = len(tp.subs)
		}
		h.mu.Unlock()
		if subs > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	publishN(h, "a", 1, 1)
	if r := <-got; r.err != nil || r.e.text != "a-1" {
		t.Fatalf("live subscriber got %v, %v; want a-1", r.e, r.err)
	}
	next2, stop2 := pull(h, context.Background(), "b", 3)
	defer stop2()
	_, err, _ := next2()
	var ce *CursorExpiredError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCursorExpired) || ce.Thread != "b" || ce.After != unpack(3) {
		t.Fatalf("a cursor on a hub keeping nothing: %v; want a *CursorExpiredError", err)
	}
}
