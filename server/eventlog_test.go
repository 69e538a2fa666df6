package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// flakyEvents is a log of run events whose appends fail, as a store
// restarting does, while fails is above 0; with lose, a failing append
// is written first (its commit went through, its reply was lost).
type flakyEvents struct {
	inner store.RunEvents
	mu    sync.Mutex
	fails int
	lose  bool
	tries int
}

func (f *flakyEvents) AppendRunEvents(ctx context.Context, job string, evs []*store.RunEvent) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.fails == 0 {
		return f.inner.AppendRunEvents(ctx, job, evs)
	}
	f.fails--
	if f.lose {
		if err := f.inner.AppendRunEvents(ctx, job, evs); err != nil {
			return err
		}
	}
	return errors.New("connection reset by peer")
}

func (f *flakyEvents) RunEvents(ctx context.Context, job string, after int64, limit int) ([]*store.RunEvent, error) {
	return f.inner.RunEvents(ctx, job, after, limit)
}

func (f *flakyEvents) WaitRunEvents(ctx context.Context, job string, after int64, limit int) ([]*store.RunEvent, error) {
	return f.inner.WaitRunEvents(ctx, job, after, limit)
}

func (f *flakyEvents) PruneRunEvents(ctx context.Context, before time.Time) (int, error) {
	return f.inner.PruneRunEvents(ctx, before)
}

// TestEventLogRetriesAStoreRestart: the writer of a run's events goes on
// through appends that fail for a while (a PostgreSQL restart), and
// through one whose commit went through but whose reply was lost: the
// log holds every frame once, in order, then the end.
func TestEventLogRetriesAStoreRestart(t *testing.T) {
	for _, lose := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost reply %v", lose), func(t *testing.T) {
			ctx := context.Background()
			ms := memory.New()
			if err := ms.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
				t.Fatal(err)
			}
			if err := ms.CreateJob(ctx, &store.Job{ID: "j", ThreadID: "t"}); err != nil {
				t.Fatal(err)
			}
			ev := &flakyEvents{inner: ms}
			l := newEventLog(ev, "j", "ep", slog.New(slog.NewTextHandler(io.Discard, nil)))
			l.add(0, "metadata", []byte(`{}`))
			l.drain()
			ev.mu.Lock()
			ev.fails, ev.lose = 3, lose
			ev.mu.Unlock()
			for n := 1; n <= 5; n++ {
				l.add(n, "values", fmt.Appendf(nil, `{"n":%d}`, n))
			}
			l.end([]byte(`{"done":true}`))
			evs, err := ms.RunEvents(ctx, "j", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range evs {
				got = append(got, fmt.Sprintf("%d:%s:%s", e.N, e.Event, e.Data))
			}
			wantLog := `0:metadata:{} 1:values:{"n":1} 2:values:{"n":2} 3:values:{"n":3} 4:values:{"n":4} 5:values:{"n":5} 6:weft:end:{"done":true}`
			if g := strings.Join(got, " "); g != wantLog {
				t.Fatalf("the log after the failures:\n got %s\nwant %s", g, wantLog)
			}
			// The metadata's append, then the rest's, failing three
			// times; or failing once, its events in, and found so.
			want := 5
			if lose {
				want = 3
			}
			if ev.tries != want {
				t.Fatalf("%d appends, want %d", ev.tries, want)
			}
		})
	}
}

// flakyJobs is a store whose SetJob fails, as a store restarting does,
// while fails is above 0.
type flakyJobs struct {
	jobsAPI
	fails, calls int
}

// jobsAPI names store.Jobs for embedding (its Jobs method would clash
// with the field's name).
type jobsAPI = store.Jobs

func (f *flakyJobs) SetJob(ctx context.Context, id string, from []store.JobStatus, to store.JobStatus, owner, errText string) (*store.Job, error) {
	f.calls++
	if f.fails > 0 {
		f.fails--
		return nil, errors.New("connection refused")
	}
	return f.jobsAPI.SetJob(ctx, id, from, to, owner, errText)
}

// TestSetJobRetriesAStoreRestart: a run's end is recorded in its job
// through store failures that pass (else the job would stay running and
// be taken for a dead worker's run); a conflict is not retried.
func TestSetJobRetriesAStoreRestart(t *testing.T) {
	ctx := context.Background()
	ms := memory.New()
	if err := ms.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := ms.CreateJob(ctx, &store.Job{ID: "j", ThreadID: "t", Status: store.JobRunning}); err != nil {
		t.Fatal(err)
	}
	fj := &flakyJobs{jobsAPI: ms, fails: 3}
	s := &Server{jobs: fj, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := s.setJob(ctx, "j", []store.JobStatus{store.JobRunning}, store.JobSuccess, ""); err != nil {
		t.Fatalf("setJob through three failures: %v", err)
	}
	if j, err := ms.Job(ctx, "j"); err != nil || j.Status != store.JobSuccess || fj.calls != 4 {
		t.Fatalf("job %+v (%v) after %d calls; want success after 4", j, err, fj.calls)
	}
	fj.calls = 0
	if err := s.setJob(ctx, "j", []store.JobStatus{store.JobRunning}, store.JobError, "x"); !errors.Is(err, store.ErrConflict) || fj.calls != 1 {
		t.Fatalf("setJob of an ended job: %v after %d calls; want one ErrConflict", err, fj.calls)
	}
}
