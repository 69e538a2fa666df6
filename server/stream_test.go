package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// Ended streams are kept for rejoining clients, within bounds: past
// their time they go, and beyond the count or the bytes the oldest go
// first; running ones always stay.
func TestStreamsAreBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	ss := &streams{now: func() time.Time { return now }}
	running := ss.open("running")
	running.add("values", make([]byte, 1000))
	for i := range streamsKept + 10 {
		st := ss.open(fmt.Sprintf("e%d", i))
		st.add("values", []byte("{}"))
		now = now.Add(time.Millisecond)
		st.finish([]byte("{}"), now)
	}
	now = now.Add(2 * time.Second) // sweeps are at most once a second
	ss.open("trigger")
	if ss.get("running") == nil || ss.get("trigger") == nil {
		t.Fatal("a running stream was dropped")
	}
	if ss.get("e0") != nil || ss.get("e9") != nil || ss.get("e10") == nil {
		t.Fatal("not exactly the oldest ended streams beyond streamsKept went")
	}
	if ss.get(fmt.Sprintf("e%d", streamsKept+9)) == nil {
		t.Fatal("the newest ended stream was dropped")
	}
	big := ss.open("big")
	for range 3 {
		big.add("values", make([]byte, maxStreamBytes/2))
	}
	if big.bytes > maxStreamBytes {
		t.Fatalf("a stream keeps %d bytes, over %d", big.bytes, maxStreamBytes)
	}
	if _, _, _, _, err := big.next(0); err == nil {
		t.Fatal("frames dropped from a stream's start are not said")
	}
	now = now.Add(streamTTL + time.Second)
	ss.open("later")
	if ss.get(fmt.Sprintf("e%d", streamsKept+9)) != nil {
		t.Fatal("an ended stream outlived its time")
	}
}

// Last-Event-ID: an id of this attempt's stream is a position in it; -1
// and ids of no or another epoch are the start (the metadata frame
// first); anything else is refused.
func TestParseEventID(t *testing.T) {
	st := newRunStream("r")
	for _, c := range []struct {
		in    string
		after int
		bad   bool
	}{
		{in: st.epoch + "-3", after: 3},
		{in: st.epoch + "-0", after: 0},
		{in: "-1", after: -1},
		{in: "7", after: -1},          // LangGraph's bare numbers: of no epoch of this stream
		{in: "zzzzzzzz-7", after: -1}, // another attempt's
		{in: "", bad: true},
		{in: "-2", bad: true},
		{in: "a-b-3", bad: true},
		{in: st.epoch + "-", bad: true},
		{in: "x-y", bad: true},
	} {
		cur, err := parseEventID(c.in)
		if (err != nil) != c.bad {
			t.Fatalf("%q: err %v", c.in, err)
		}
		if !c.bad && cur.after(st) != c.after {
			t.Fatalf("%q: after %d, want %d", c.in, cur.after(st), c.after)
		}
	}
	if other := newRunStream("r"); other.epoch == st.epoch {
		t.Fatalf("two streams drew the epoch %s", st.epoch)
	}
}

// TestThreadWatch: a thread's waiters share one channel, closed by a
// wake; the entry goes with the wake or with its last waiter, so idle
// threads hold nothing.
func TestThreadWatch(t *testing.T) {
	var tw threadWatch
	a, releaseA := tw.watch("t")
	b, releaseB := tw.watch("t")
	if a != b || len(tw.m) != 1 {
		t.Fatalf("two waiters of one thread: %v %v, %d entries", a, b, len(tw.m))
	}
	tw.wake("other")
	select {
	case <-a:
		t.Fatal("woken by another thread's wake")
	default:
	}
	tw.wake("t")
	select {
	case <-a:
	default:
		t.Fatal("not woken")
	}
	if len(tw.m) != 0 {
		t.Fatalf("%d entries after the wake", len(tw.m))
	}
	releaseA()
	releaseB()
	c, releaseC := tw.watch("t")
	if c == a {
		t.Fatal("a new waiter got the closed channel")
	}
	releaseC()
	releaseC() // twice: once counted
	if len(tw.m) != 0 {
		t.Fatalf("%d entries after the last waiter went", len(tw.m))
	}
}

// oldestJob finds the run after last among runs created at the same time
// as it, whichever order the store lists such runs in (by id ascending,
// where jobAfter puts the larger id later): runs created in one tick are
// not skipped by a thread stream.
func TestOldestJobWithTiedCreation(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	if err := st.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, j := range []*store.Job{
		{ID: "a", ThreadID: "t", Created: at.Add(-time.Second)},
		{ID: "b", ThreadID: "t", Created: at},
		{ID: "c", ThreadID: "t", Created: at},
		{ID: "d", ThreadID: "t", Created: at.Add(time.Second)},
	} {
		if err := st.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	s := &Server{jobs: st}
	var order []string
	var last *store.Job
	for range 5 {
		j, err := s.nextJob(ctx, "t", last)
		if err != nil {
			t.Fatal(err)
		}
		if j == nil {
			break
		}
		order = append(order, j.ID)
		last = j
	}
	if got := strings.Join(order, " "); got != "a b c d" {
		t.Fatalf("runs in order %q, want a b c d", got)
	}
}
