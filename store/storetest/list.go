package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// testThreadFilters checks Threads' filters (latest run's status,
// workflow, source, metadata), its orders, keyset paging with After, and
// the latest run each listed thread carries.
func testThreadFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	src1, src2 := []byte("one"), []byte("two")
	d1, d2 := store.Digest(src1), store.Digest(src2)
	for _, src := range [][]byte{src1, src2} {
		if err := s.PutSource(ctx, store.Digest(src), src); err != nil {
			t.Fatal(err)
		}
	}
	hour := func(n int) time.Time { return base().Add(time.Duration(n) * time.Hour) }
	odd := `odd key."x"`
	threads := []*store.Thread{
		{ID: "a", Workflow: "w1", Source: d1, Updated: hour(5), Meta: map[string]string{"team": "red", "env": "prod"}},
		{ID: "b", Workflow: "w1", Updated: hour(4), Meta: map[string]string{"team": "blue"}},
		{ID: "c", Workflow: "w2", Source: d2, Updated: hour(3), Meta: map[string]string{"team": "red"}},
		{ID: "d", Workflow: "w1", Source: d1, Updated: hour(3), Meta: map[string]string{"team": "red", "env": "dev"}},
		{ID: "e", Workflow: "w2", Updated: hour(1), Meta: map[string]string{odd: "v", "team": ""}},
	}
	for _, th := range threads {
		th.Created = th.Updated
		if err := s.CreateThread(ctx, th); err != nil {
			t.Fatalf("CreateThread(%s): %v", th.ID, err)
		}
	}
	// Runs, put out of order: a's latest is its run 2 (waiting), though
	// its run 1 (completed) was put last.
	for _, r := range []*store.Run{
		{ID: "a2", ThreadID: "a", Number: 2, Status: store.Waiting},
		{ID: "a1", ThreadID: "a", Number: 1, Status: store.Completed},
		{ID: "b1", ThreadID: "b", Number: 1, Status: store.Failed},
		{ID: "c1", ThreadID: "c", Number: 1, Status: store.Cancelled},
		{ID: "e1", ThreadID: "e", Number: 1, Status: store.Running},
	} {
		r.Created, r.Updated = base(), base() // older than every thread's Updated
		if err := s.PutRun(ctx, r); err != nil {
			t.Fatalf("PutRun(%s): %v", r.ID, err)
		}
	}
	show := func(ts []*store.Thread) string {
		var b strings.Builder
		for _, th := range ts {
			fmt.Fprintf(&b, "%s:%d:%s ", th.ID, th.LastRun, th.Status)
		}
		return strings.TrimSpace(b.String())
	}
	list := func(opts store.ListOptions) []*store.Thread {
		t.Helper()
		got, err := s.Threads(ctx, opts)
		if err != nil {
			t.Fatalf("Threads(%+v): %v", opts, err)
		}
		return got
	}
	check := func(opts store.ListOptions, want string) []*store.Thread {
		t.Helper()
		got := list(opts)
		if show(got) != want {
			t.Errorf("Threads(%+v) = %q, want %q", opts, show(got), want)
		}
		return got
	}
	all := check(store.ListOptions{}, "a:2:waiting b:1:failed c:1:cancelled d:0: e:1:running")
	check(store.ListOptions{Order: store.OldestFirst}, "e:1:running d:0: c:1:cancelled b:1:failed a:2:waiting")
	for _, th := range all {
		want := threads[strings.Index("abcde", th.ID)]
		if th.Workflow != want.Workflow || th.Source != want.Source || !sameTime(th.Updated, want.Updated) || fmt.Sprint(th.Meta) != fmt.Sprint(want.Meta) {
			t.Errorf("listed thread %s = %+v, want %+v", th.ID, th, want)
		}
	}
	if th, err := s.Thread(ctx, "a"); err != nil || th.LastRun != 2 || th.Status != store.Waiting {
		t.Errorf("Thread(a) latest run = %d %q, %v; want 2 waiting", th.LastRun, th.Status, err)
	}
	if th, err := s.Thread(ctx, "d"); err != nil || th.LastRun != 0 || th.Status != "" {
		t.Errorf("Thread(d) latest run = %d %q, %v; want none", th.LastRun, th.Status, err)
	}

	// Filters.
	check(store.ListOptions{Status: []store.Status{store.Waiting}}, "a:2:waiting")
	check(store.ListOptions{Status: []store.Status{store.Cancelled, store.Failed}}, "b:1:failed c:1:cancelled")
	check(store.ListOptions{Status: []store.Status{store.Completed}}, "") // a's run 1 is not its latest
	check(store.ListOptions{Workflow: "w1"}, "a:2:waiting b:1:failed d:0:")
	check(store.ListOptions{Workflow: "w3"}, "")
	check(store.ListOptions{Source: d1}, "a:2:waiting d:0:")
	check(store.ListOptions{Source: d2, Order: store.OldestFirst}, "c:1:cancelled")
	check(store.ListOptions{Meta: map[string]string{"team": "red"}}, "a:2:waiting c:1:cancelled d:0:")
	check(store.ListOptions{Meta: map[string]string{"team": "red", "env": "prod"}}, "a:2:waiting")
	check(store.ListOptions{Meta: map[string]string{odd: "v"}}, "e:1:running")
	check(store.ListOptions{Meta: map[string]string{"team": ""}}, "e:1:running") // present and empty
	check(store.ListOptions{Meta: map[string]string{"env": ""}}, "")             // absent is not empty
	check(store.ListOptions{Meta: map[string]string{"env": "prod"}, Workflow: "w2"}, "")
	check(store.ListOptions{Workflow: "w1", Meta: map[string]string{"team": "red"}, Status: []store.Status{store.Waiting, store.Running}}, "a:2:waiting")

	// Paging: pages of two, each after the last thread of the one before.
	page1 := check(store.ListOptions{Limit: 2}, "a:2:waiting b:1:failed")
	// A thread created between pages, before the cursor, does not shift
	// the next page.
	mustThread(t, s, "f", hour(6))
	page2 := check(store.ListOptions{Limit: 2, After: page1[1].Cursor()}, "c:1:cancelled d:0:")
	page3 := check(store.ListOptions{Limit: 2, After: page2[1].Cursor()}, "e:1:running")
	check(store.ListOptions{Limit: 2, After: page3[0].Cursor()}, "")
	check(store.ListOptions{After: all[0].Cursor(), Offset: 1, Limit: 2}, "c:1:cancelled d:0:")
	// Ties of Updated (c and d) go by ID, ascending newest first and
	// descending oldest first (each order the other's exact reverse), and
	// a page boundary between them neither skips nor repeats one.
	old1 := check(store.ListOptions{Order: store.OldestFirst, Limit: 2}, "e:1:running d:0:")
	check(store.ListOptions{Order: store.OldestFirst, Limit: 2, After: old1[1].Cursor()}, "c:1:cancelled b:1:failed")
	// The threads before a cursor, nearest first, are those after it in
	// the other order: before d (newest first) comes c, its tie.
	check(store.ListOptions{Order: store.OldestFirst, Limit: 2, After: page2[1].Cursor()}, "c:1:cancelled b:1:failed")
	check(store.ListOptions{Limit: 2, After: old1[1].Cursor()}, "e:1:running")
	red := check(store.ListOptions{Meta: map[string]string{"team": "red"}, Limit: 1}, "a:2:waiting")
	red = check(store.ListOptions{Meta: map[string]string{"team": "red"}, Limit: 1, After: red[0].Cursor()}, "c:1:cancelled")
	red = check(store.ListOptions{Meta: map[string]string{"team": "red"}, Limit: 1, After: red[0].Cursor()}, "d:0:")
	check(store.ListOptions{Meta: map[string]string{"team": "red"}, Limit: 1, After: red[0].Cursor()}, "")

	// Options a store cannot take.
	for name, opts := range map[string]store.ListOptions{
		"an unknown status": {Status: []store.Status{"done"}},
		"an unknown order":  {Order: 7},
		"a negative limit":  {Limit: -1},
		"a negative offset": {Offset: -1},
	} {
		if _, err := s.Threads(ctx, opts); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Threads with %s: %v, want ErrInvalid", name, err)
		}
	}
}

// testThreadSearch checks ListOptions.Search: a substring of the ID or of
// a Meta value (not a key), ASCII letters of either case, %, _ and \
// matching themselves only, other letters their own case only; with the
// other filters and keyset paging.
func testThreadSearch(t *testing.T, s store.Store) {
	ctx := t.Context()
	hour := func(n int) time.Time { return base().Add(time.Duration(n) * time.Hour) }
	for _, th := range []*store.Thread{
		{ID: "Order-ABC-1", Workflow: "w1", Updated: hour(9), Meta: map[string]string{"user": `"alice"`}},
		{ID: "order-xyz-2", Workflow: "w2", Updated: hour(8), Meta: map[string]string{"user": `"bob"`, "note": "50% off"}},
		{ID: "t3", Workflow: "w1", Updated: hour(7), Meta: map[string]string{"path": `C:\tmp\x`, "owner": "Alice"}},
		{ID: "t4", Workflow: "w1", Updated: hour(6), Meta: map[string]string{"tag": "a_b", "city": "Évian"}},
		{ID: "t5", Workflow: "w2", Updated: hour(5), Meta: map[string]string{"tag": "axb", "user": "carol"}},
		{ID: "t6", Workflow: "w1", Updated: hour(4), Meta: map[string]string{"order": "none", "cmp": "x<y&z"}},
	} {
		th.Created = th.Updated
		if err := s.CreateThread(ctx, th); err != nil {
			t.Fatalf("CreateThread(%s): %v", th.ID, err)
		}
	}
	if err := s.PutRun(ctx, &store.Run{ID: "r3", ThreadID: "t3", Number: 1, Status: store.Failed, Created: base(), Updated: base()}); err != nil {
		t.Fatal(err)
	}
	list := func(opts store.ListOptions) (string, []*store.Thread) {
		t.Helper()
		got, err := s.Threads(ctx, opts)
		if err != nil {
			t.Fatalf("Threads(%+v): %v", opts, err)
		}
		ids := make([]string, len(got))
		for i, th := range got {
			ids[i] = th.ID
		}
		return strings.Join(ids, " "), got
	}
	for _, c := range []struct {
		opts store.ListOptions
		want string
	}{
		{store.ListOptions{Search: "order"}, "Order-ABC-1 order-xyz-2"}, // ids, either case; not t6's key
		{store.ListOptions{Search: "ORDER-x"}, "order-xyz-2"},
		{store.ListOptions{Search: "abc"}, "Order-ABC-1"},
		{store.ListOptions{Search: "alice"}, "Order-ABC-1 t3"}, // a JSON text value and a plain one
		{store.ListOptions{Search: `"bob"`}, "order-xyz-2"},
		{store.ListOptions{Search: "none"}, "t6"},
		{store.ListOptions{Search: "<Y&"}, "t6"},        // characters JSON may escape
		{store.ListOptions{Search: "%"}, "order-xyz-2"}, // % is itself, not any text
		{store.ListOptions{Search: "0% o"}, "order-xyz-2"},
		{store.ListOptions{Search: "a_b"}, "t4"}, // _ is itself: not axb
		{store.ListOptions{Search: "_"}, "t4"},
		{store.ListOptions{Search: `\`}, "t3"}, // \ is itself
		{store.ListOptions{Search: `c:\TMP\`}, "t3"},
		{store.ListOptions{Search: "Évian"}, "t4"},
		{store.ListOptions{Search: "évian"}, ""}, // only ASCII letters fold
		{store.ListOptions{Search: "zzz"}, ""},
		{store.ListOptions{Search: "o", Workflow: "w2"}, "order-xyz-2 t5"},
		{store.ListOptions{Search: "alice", Status: []store.Status{store.Failed}}, "t3"},
		{store.ListOptions{Search: "alice", Meta: map[string]string{"user": `"alice"`}}, "Order-ABC-1"},
		{store.ListOptions{Search: "t", Order: store.OldestFirst}, "t6 t5 t4 t3"},
		{store.ListOptions{Search: "t", Offset: 1, Limit: 2}, "t4 t5"},
	} {
		if got, _ := list(c.opts); got != c.want {
			t.Errorf("Threads(%+v) = %q, want %q", c.opts, got, c.want)
		}
	}
	// Keyset paging through a search: pages of two.
	var pages []string
	opts := store.ListOptions{Search: "T", Limit: 2}
	for {
		ids, got := list(opts)
		if len(got) == 0 {
			break
		}
		pages = append(pages, ids)
		opts.After = got[len(got)-1].Cursor()
	}
	if got := strings.Join(pages, " | "); got != "t3 t4 | t5 t6" {
		t.Errorf("pages of Search %q = %q", opts.Search, got)
	}
}
