package memory

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// TestThreadsWhileWriting: listings with a limit (the kept first k),
// after a cursor and with a search, taken while other goroutines create
// threads, update them and put runs, are each in order, match their
// filters, carry a latest run that was put, and are copies (changing one
// changes no other listing). Run with -race.
func TestThreadsWhileWriting(t *testing.T) {
	ctx := t.Context()
	s := New()
	defer s.Close()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 400
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < n; i += 2 {
				id := fmt.Sprintf("w%d-%03d", w, i)
				th := &store.Thread{ID: id, Created: at, Updated: at.Add(time.Duration(i%37) * time.Second), Meta: map[string]string{"k": fmt.Sprint(i % 5)}}
				if err := s.CreateThread(ctx, th); err != nil {
					t.Error(err)
					return
				}
				if err := s.PutRun(ctx, &store.Run{ID: id + "-r", ThreadID: id, Number: 1, Status: store.Completed}); err != nil {
					t.Error(err)
					return
				}
				th.Meta["k"] = "moved"
				th.Updated = at.Add(time.Duration(i%11) * time.Second)
				if err := s.UpdateThread(ctx, th); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for r := range 2 {
		wg.Go(func() {
			opts := store.ListOptions{Limit: 7, Search: []string{"W1-", "mov"}[r]}
			for range 200 {
				got, err := s.Threads(ctx, opts)
				if err != nil {
					t.Error(err)
					return
				}
				for i, th := range got {
					if i > 0 && opts.Compare(got[i-1].Cursor(), th.Cursor()) >= 0 {
						t.Errorf("%+v: %s before %s", opts, got[i-1].ID, th.ID)
					}
					if !opts.After.IsZero() && opts.Compare(opts.After, th.Cursor()) >= 0 {
						t.Errorf("%+v: %s not after the cursor", opts, th.ID)
					}
					if !store.Contains(th, opts.Search) {
						t.Errorf("%+v: %s (%v) does not contain the search", opts, th.ID, th.Meta)
					}
					if th.LastRun != 0 && (th.LastRun != 1 || th.Status != store.Completed) {
						t.Errorf("%s: latest run %d %q", th.ID, th.LastRun, th.Status)
					}
					th.Meta["k"] = "changed by a reader" // a copy
				}
				if len(got) == opts.Limit {
					opts.After = got[len(got)-1].Cursor()
				} else {
					opts.After = store.Cursor{}
				}
			}
		})
	}
	wg.Wait()
	all, err := s.Threads(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("%d threads listed, want %d", len(all), n)
	}
	for _, th := range all {
		if th.Meta["k"] != "moved" || th.LastRun != 1 || !strings.HasPrefix(th.ID, "w") {
			t.Errorf("thread %s: %v, latest run %d", th.ID, th.Meta, th.LastRun)
		}
	}
	// A page of the first k is the start of the whole listing.
	page, err := s.Threads(ctx, store.ListOptions{Limit: 5, Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, th := range page {
		if th.ID != all[3+i].ID {
			t.Errorf("page [3:8][%d] = %s, want %s", i, th.ID, all[3+i].ID)
		}
	}
}
