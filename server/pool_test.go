package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestPoolOrderPerThread: a thread's jobs run one at a time in the order
// submitted, while other threads' jobs run beside them, never more than
// the pool's size at once.
func TestPoolOrderPerThread(t *testing.T) {
	p := NewPool(3)
	var mu sync.Mutex
	order := map[string][]string{}
	running, most := 0, 0
	perThread := map[string]int{}
	done := make(chan string, 100)
	if err := p.Start(func(ctx context.Context, j JobRef) error {
		mu.Lock()
		running++
		most = max(most, running)
		perThread[j.Thread]++
		if perThread[j.Thread] > 1 {
			t.Errorf("two jobs of %s at once", j.Thread)
		}
		order[j.Thread] = append(order[j.Thread], j.ID)
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		running--
		perThread[j.Thread]--
		mu.Unlock()
		done <- j.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		for _, th := range []string{"a", "b", "c", "d"} {
			if err := p.Submit(context.Background(), JobRef{ID: fmt.Sprintf("%s%d", th, i), Thread: th}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 40 {
		<-done
	}
	for _, th := range []string{"a", "b", "c", "d"} {
		for i, id := range order[th] {
			if id != fmt.Sprintf("%s%d", th, i) {
				t.Fatalf("thread %s ran %v, out of order", th, order[th])
			}
		}
	}
	if most > 3 || most < 2 {
		t.Fatalf("at most %d jobs ran at once; want 2..3 of a pool of 3", most)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestPoolCancelAndClose: Cancel reaches the running job with its cause;
// a queued job can be dropped; Close cancels running jobs with
// ErrServerClosing, waits for them and refuses new ones.
func TestPoolCancelAndClose(t *testing.T) {
	p := NewPool(2)
	started := make(chan string, 10)
	causes := make(chan error, 10)
	if err := p.Start(func(ctx context.Context, j JobRef) error {
		started <- j.ID
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mustSubmit := func(id, th string) {
		if err := p.Submit(ctx, JobRef{ID: id, Thread: th}); err != nil {
			t.Fatal(err)
		}
	}
	mustSubmit("x1", "x")
	mustSubmit("x2", "x")
	mustSubmit("x3", "x")
	if id := <-started; id != "x1" {
		t.Fatalf("started %s first", id)
	}
	if !p.Drop(JobRef{ID: "x2", Thread: "x"}) || p.Drop(JobRef{ID: "x2", Thread: "x"}) {
		t.Fatal("Drop of a queued job: want true once")
	}
	mine := errors.New("cancelled by the client")
	if p.Cancel("x3", mine) {
		t.Fatal("Cancel of a job not started reported true")
	}
	if !p.Cancel("x1", mine) {
		t.Fatal("Cancel of the running job reported false")
	}
	if c := <-causes; c != mine {
		t.Fatalf("cause %v", c)
	}
	if id := <-started; id != "x3" {
		t.Fatalf("after x1, %s started; want x3 (x2 dropped)", id)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if c := <-causes; !errors.Is(c, ErrServerClosing) {
		t.Fatalf("close cause %v", c)
	}
	if err := p.Submit(ctx, JobRef{ID: "y", Thread: "y"}); !errors.Is(err, ErrServerClosing) {
		t.Fatalf("submit after close: %v", err)
	}
}

// TestPoolFreeDuringWork: a work that frees its job before it returns
// (the server's, once the run's end is recorded) lets the thread's next
// job be reserved at once, and the pool's own free after the work
// returns gives back nothing more: a pool of 1 still runs one job at a
// time.
func TestPoolFreeDuringWork(t *testing.T) {
	p := NewPool(1)
	freed := make(chan struct{})
	finish := make(chan struct{})
	if err := p.Start(func(ctx context.Context, j JobRef) error {
		if j.ID == "1" {
			p.free(j)
			close(freed)
			<-finish
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Submit(context.Background(), JobRef{ID: "1", Thread: "a"}); err != nil {
		t.Fatal(err)
	}
	<-freed
	r, ok := p.reserve(JobRef{ID: "2", Thread: "a"})
	if !ok {
		t.Fatal("the thread's next job could not be reserved once its first was freed")
	}
	// The pool frees job 1 again when its work returns: that must not
	// give back the slot job 2 holds.
	p.free(JobRef{ID: "1", Thread: "a"})
	if _, ok := p.reserve(JobRef{ID: "3", Thread: "b"}); ok {
		t.Fatal("a pool of 1 reserved a second slot: the first job was freed twice")
	}
	close(finish)
	r.undo()
	if r3, ok := p.reserve(JobRef{ID: "3", Thread: "b"}); !ok {
		t.Fatal("the slot was not given back by undo")
	} else {
		r3.undo()
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
