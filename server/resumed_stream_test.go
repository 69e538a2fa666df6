package server

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The stream of a run a restarted process picked up numbers its events
// above every id the stopped process sent: a client rejoining with one of
// the stopped process's ids is told its events are gone (an error event),
// never silently given the new events after that number; a client from
// the start, or after the metadata frame (id 0), gets every event; a
// client with one of the new ids gets the events after it.
func TestResumedStreamIDs(t *testing.T) {
	started := time.Unix(1_800_000_000, 0)
	base := resumedBase(started)
	if base <= 1<<40 {
		t.Fatalf("resumedBase = %d", base)
	}
	// An earlier process's stream sent ids up to a million per
	// millisecond it lived: all below the next process's base.
	if earlier := resumedBase(started.Add(-time.Millisecond)); earlier+1<<20 > base {
		t.Fatalf("a process started 1 ms earlier could send ids up to %d, above %d", earlier+1<<20, base)
	}
	ss := &streams{now: time.Now}
	st := ss.openAfter("job", base)
	if ss.open("job") != st {
		t.Fatal("open does not find the resumed stream")
	}
	st.add("values", []byte(`{"i":51}`))
	st.add("values", []byte(`{"i":52}`))
	st.finish([]byte(`{}`), time.Now())

	read := func(after int) string {
		rec := httptest.NewRecorder()
		if err := startSSE(rec, "").stream(context.Background(), st, "run", after); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String()
	}
	id := func(n int) string { return "\nid: " + strconv.Itoa(base+n) + "\n" }
	all := read(-1)
	if !strings.HasPrefix(all, "event: metadata\n") || !strings.Contains(all, `{"i":51}`+id(1)) || !strings.Contains(all, `{"i":52}`+id(2)) {
		t.Fatalf("from the start:\n%s", all)
	}
	if got := read(0); strings.Contains(got, "metadata") || !strings.Contains(got, `{"i":51}`+id(1)) || !strings.Contains(got, `{"i":52}`+id(2)) {
		t.Fatalf("after the metadata frame:\n%s", got)
	}
	if got := read(base + 1); strings.Contains(got, `"i":51`) || !strings.Contains(got, `{"i":52}`+id(2)) {
		t.Fatalf("after the first event:\n%s", got)
	}
	for _, old := range []int{1, 51, 5000} {
		got := read(old)
		if strings.Contains(got, `"i":5`) || !strings.Contains(got, "event: error\n") || !strings.Contains(got, "CursorExpired") || !strings.Contains(got, "restarted server") {
			t.Fatalf("after %d, an id of the stopped process:\n%s", old, got)
		}
		if _, _, _, _, err := st.next(old); !errors.Is(err, errCursorGone) {
			t.Fatalf("next(%d) = %v", old, err)
		}
	}
	// A fresh stream numbers from 1, as before.
	fresh := ss.open("fresh")
	fresh.add("values", []byte(`{}`))
	if frames, first, _, _, err := fresh.next(0); err != nil || len(frames) != 1 || first != 1 {
		t.Fatalf("fresh stream: %d frames from %d, %v", len(frames), first, err)
	}
}
