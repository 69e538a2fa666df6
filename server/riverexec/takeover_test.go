package riverexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/server/riverexec"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
)

// lossyEvents is a store whose log of run events stops taking appends
// once dead is set: a process that dies between a step's record and its
// frames.
type lossyEvents struct {
	*postgres.Store
	dead atomic.Bool
}

func (l *lossyEvents) AppendRunEvents(ctx context.Context, job string, evs []*store.RunEvent) error {
	if l.dead.Load() {
		return errors.New("the process is dead")
	}
	return l.Store.AppendRunEvents(ctx, job, evs)
}

// TestTakeoverStreamsEveryStepOnce: a worker records step b of a run
// and dies before b's frames reach the log (its appends fail from then
// on); the worker that takes the run over sends b's update and values,
// derived from the thread's checkpoints, before its own frames. A client
// streaming the run through the API from its start sees every step's
// update and values once, exactly as a run no one took over streams
// them; a client that rejoins with an event id of the first attempt is
// sent the rest of it, then the second.
func TestTakeoverStreamsEveryStepOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	n := &napper{started: make(chan string, 8), gate: make(chan struct{})}
	api := startNodeOf(t, db.DSN, 0, "../testdata/naps.wf", n.registry())

	// Worker A, whose log of run events can die.
	st, err := postgres.Open(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lossy := &lossyEvents{Store: st}
	ex, err := riverexec.New(ctx, riverexec.Options{Store: st, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Options{Store: st, Actions: n.registry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(ctx, service.Source{Name: "../testdata/naps.wf"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := server.New(server.Options{Service: svc, Store: lossy, Executor: ex, Assistants: []server.Assistant{{Workflow: wf}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(a.Handler())
	defer hs.Close()

	run := func(thread string) string {
		t.Helper()
		api.do(t, "POST", "/threads", `{"thread_id":"`+thread+`"}`)
		code, body := api.do(t, "POST", "/threads/"+thread+"/runs", `{"assistant_id":"Naps","input":{},"stream_mode":["updates","values"],"durability":"sync"}`)
		var r struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(body), &r); code != 200 || err != nil {
			t.Fatalf("run: %d %s", code, body)
		}
		return r.RunID
	}
	stream := func(thread, id string, hdr ...string) <-chan [][3]string {
		out := make(chan [][3]string, 1)
		go func() {
			_, body := api.do(t, "GET", "/threads/"+thread+"/runs/"+id+"/stream", "", hdr...)
			out <- sseEvents(body)
		}()
		return out
	}
	pool, err := pgxpool.New(ctx, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	waitMark := func(id, node string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; {
			var k int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM weft_run_events WHERE job_id = $1 AND event = 'weft:step' AND convert_from(data, 'UTF8') LIKE $2`, id, `%"node":"`+node+`"%`).Scan(&k); err != nil {
				t.Fatal(err)
			}
			if k > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("step %s of run %s never marked in the log", node, id)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	id := run("g")
	whole := stream("g", id)
	n.waitStarted(t, "a")
	n.gate <- struct{}{}
	n.waitStarted(t, "b")
	waitMark(id, "a")
	lossy.dead.Store(true)
	n.gate <- struct{}{} // b is recorded; its frames are lost
	n.waitStarted(t, "c")
	// A stops (as good as dead: nothing it writes to the log lands);
	// its run goes back to the queue, cut short in c.
	hs.Close()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var lost int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM weft_run_events WHERE job_id = $1 AND event = 'weft:step' AND convert_from(data, 'UTF8') LIKE '%"node":"b"%'`, id).Scan(&lost); err != nil || lost != 0 {
		t.Fatalf("b's frames reached the log (%d marks, %v): the test kills nothing", lost, err)
	}
	startNodeOf(t, db.DSN, 1, "../testdata/naps.wf", n.registry()) // B
	n.waitStarted(t, "c")
	n.gate <- struct{}{}
	got := <-whole

	// The same run, no one taking it over.
	id2 := run("h")
	ref := stream("h", id2)
	for _, node := range []string{"a", "b", "c"} {
		n.waitStarted(t, node)
		n.gate <- struct{}{}
	}
	want := <-ref

	frames := func(evs [][3]string) []string {
		var out []string
		for _, e := range evs {
			if e[0] != "metadata" {
				out = append(out, e[0]+" "+e[1])
			}
		}
		return out
	}
	if g, w := frames(got), frames(want); !slices.Equal(g, w) {
		t.Fatalf("the stream of the run taken over:\n%s\nwant, as the run no one took over:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	var attempts []string
	for _, e := range got {
		if e[0] == "metadata" {
			attempts = append(attempts, e[1])
		}
	}
	if len(attempts) != 2 || !strings.Contains(attempts[1], `"attempt":2`) {
		t.Fatalf("metadata frames: %q; want one per attempt, the second's attempt 2", attempts)
	}

	// Rejoin with the id of the first attempt's update of a: the rest
	// of the first attempt, then the second.
	at := slices.IndexFunc(got, func(e [3]string) bool { return e[0] == "updates" && strings.Contains(e[1], `"a":`) })
	rest := <-stream("g", id, "Last-Event-ID", got[at][2])
	if g, w := fmt.Sprint(rest), fmt.Sprint(got[at+1:]); g != w {
		t.Fatalf("rejoined after %s:\n got %s\nwant %s", got[at][2], g, w)
	}
}
