package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/napper"
)

// A client that rejoins a run's stream after its server stopped, with
// the last event id it got from that server, is never given a slice of
// the next server's stream as if it followed what it saw: it is sent the
// new attempt at the run from its start, its metadata frame first, which
// says attempt 2; ids of the new attempt then work as usual.
func TestRejoinAfterRestartReplaysTheNewAttempt(t *testing.T) {
	ctx := context.Background()
	open := sqliteOpener(t)
	n1 := napper.New()
	st1 := open()
	f1 := sleepyFixture(t, st1, n1)
	f1.json("POST", "/threads", `{"thread_id":"r"}`, 200, nil)
	type result struct {
		loc string
		evs []sseEvent
	}
	first := make(chan result, 1)
	go func() {
		resp, evs := f1.stream("/threads/r/runs/stream", `{"assistant_id":"Sleepy","input":{"input_text":"a"},"stream_mode":["values","updates"]}`)
		first <- result{resp.Header.Get("Content-Location"), evs}
	}()
	n1.WaitStarted(t, "a")
	if err := f1.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r1 := <-first
	var seen []string
	for _, e := range r1.evs {
		seen = append(seen, e.Event)
	}
	if strings.Join(seen, " ") != "metadata values error" {
		t.Fatalf("the first server's stream: %v", seen)
	}
	lastID := r1.evs[len(r1.evs)-1].ID
	st1.Close()

	n2 := napper.New()
	close(n2.Gate)
	f2 := sleepyFixture(t, open(), n2)
	n2.WaitStarted(t, "a")
	_, evs := f2.stream(r1.loc+"/stream", "", "Last-Event-ID", lastID)
	var got []string
	for _, e := range evs {
		got = append(got, e.Event+" "+string(e.Data))
	}
	runID := strings.TrimPrefix(r1.loc, "/threads/r/runs/")
	want := []string{
		`metadata {"attempt":2,"run_id":"` + runID + `"}`,
		`values {"input_text":"a"}`,
		`updates {"nap":{"out":"slept a"}}`,
		`values {"input_text":"a","nap":{"out":"slept a"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rejoined with %s after the restart:\n%s\nwant:\n%s", lastID, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	epoch1, _, _ := strings.Cut(lastID, "-")
	epoch2, _, _ := strings.Cut(evs[0].ID, "-")
	if epoch1 == epoch2 || evs[0].ID != epoch2+"-0" {
		t.Fatalf("ids of the second attempt %q, of the first %q: not told apart", evs[0].ID, lastID)
	}
	var md map[string]any
	if err := json.Unmarshal(evs[0].Data, &md); err != nil || md["attempt"] != 2.0 {
		t.Fatalf("metadata %s", evs[0].Data)
	}
	// An id of the new attempt: the events after it, once.
	_, after := f2.stream(r1.loc+"/stream", "", "Last-Event-ID", evs[1].ID)
	if len(after) != 2 || after[0].ID != evs[2].ID || after[1].ID != evs[3].ID {
		t.Fatalf("rejoined with %s: %v", evs[1].ID, after)
	}
	// Malformed ids are refused, not read as some other position.
	if code, _ := f2.do("GET", r1.loc+"/stream", "", "Last-Event-ID", "x-y"); code != 422 {
		t.Fatalf("Last-Event-ID x-y: %d", code)
	}
}
