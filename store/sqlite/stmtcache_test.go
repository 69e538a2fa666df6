package sqlite

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/weftlang/weft/store"
)

// TestStmtCacheShapes lists threads with more shapes of query (meta
// filters of 1..maxCached+8 keys) than the cache keeps, from several
// goroutines at once: each list is right, whether its statement was
// prepared, reused or run unprepared past the bound, and the cache holds
// no more than maxCached statements.
func TestStmtCacheShapes(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	shapes := maxCached + 8
	// Thread k has the meta keys m0..m(k-1): a filter on the first n
	// keys selects the threads n..shapes.
	for k := 1; k <= shapes; k++ {
		meta := map[string]string{}
		for i := range k {
			meta[fmt.Sprintf("m%d", i)] = "v"
		}
		if err := s.CreateThread(ctx, &store.Thread{ID: fmt.Sprintf("t%03d", k), Meta: meta}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*shapes)
	for round := range 2 {
		for n := 1; n <= shapes; n++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				meta := map[string]string{}
				for i := range n {
					meta[fmt.Sprintf("m%d", i)] = "v"
				}
				got, err := s.Threads(ctx, store.ListOptions{Meta: meta, Order: store.OldestFirst, Limit: 3, Offset: round})
				if err != nil {
					errs <- err
					return
				}
				var want []string
				for k := n + round; k <= shapes && len(want) < 3; k++ {
					want = append(want, fmt.Sprintf("t%03d", k))
				}
				var ids []string
				for _, th := range got {
					ids = append(ids, th.ID)
				}
				if fmt.Sprint(ids) != fmt.Sprint(want) {
					errs <- fmt.Errorf("%d keys, offset %d: got %v, want %v", n, round, ids, want)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.cache.len(); n != maxCached {
		t.Errorf("the cache holds %d statements, want its bound %d", n, maxCached)
	}
}

// TestJobsPagesPrepared lists a thread's jobs page by page, twice, with
// status filters as literals and LIMIT/OFFSET as bound parameters of one
// prepared statement: each page has the jobs it should.
func TestJobsPagesPrepared(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		j := &store.Job{ID: fmt.Sprintf("j%d", i), ThreadID: "t", Assistant: "a"}
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if _, err := s.SetJob(ctx, j.ID, []store.JobStatus{store.JobPending}, store.JobRunning, "", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 2 {
		for _, c := range []struct {
			q    store.JobQuery
			want string
		}{
			{store.JobQuery{ThreadID: "t", Status: []store.JobStatus{store.JobRunning}}, "[j5 j3 j1]"},
			{store.JobQuery{ThreadID: "t", Status: []store.JobStatus{store.JobRunning, store.JobPending, store.JobRunning}, Limit: 2, Offset: 1}, "[j5 j4]"},
			{store.JobQuery{ThreadID: "t", Limit: 3, Offset: 3}, "[j3 j2 j1]"},
			{store.JobQuery{ThreadID: "t", Limit: 3, Offset: 6}, "[j0]"},
			{store.JobQuery{Status: []store.JobStatus{store.JobPending}, Limit: 1}, "[j6]"},
			{store.JobQuery{ThreadID: "t", Status: []store.JobStatus{store.JobSuccess}}, "[]"},
		} {
			got, err := s.Jobs(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, j := range got {
				ids = append(ids, j.ID)
			}
			if fmt.Sprint(ids) != c.want {
				t.Errorf("%+v: got %v, want %s", c.q, ids, c.want)
			}
		}
	}
}

// BenchmarkJobsOfThread is the server's busy check (a thread's pending or
// running jobs), a prepared statement reused.
func BenchmarkJobsOfThread(b *testing.B) {
	ctx := b.Context()
	s, _ := openTemp(b)
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		b.Fatal(err)
	}
	if err := s.CreateJob(ctx, &store.Job{ID: "j", ThreadID: "t", Assistant: "a"}); err != nil {
		b.Fatal(err)
	}
	q := store.JobQuery{ThreadID: "t", Status: []store.JobStatus{store.JobPending, store.JobRunning}}
	b.ReportAllocs()
	for b.Loop() {
		js, err := s.Jobs(ctx, q)
		if err != nil || len(js) != 1 {
			b.Fatal(js, err)
		}
	}
}
