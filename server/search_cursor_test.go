package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// searchPage posts a search and returns the ids listed and the cursors
// of the pages next to it.
func (f *fixture) searchPage(body string) (ids, prev, next string) {
	f.t.Helper()
	resp, err := http.Post(f.ts.URL+"/threads/search", "application/json", strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		ID string `json:"thread_id"`
	}
	if resp.StatusCode != 200 {
		f.t.Fatalf("search %s: status %d", body, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, th := range list {
		out = append(out, th.ID)
	}
	return strings.Join(out, " "), resp.Header.Get("X-Weft-Prev-Cursor"), resp.Header.Get("X-Weft-Next-Cursor")
}

// TestSearchQueryAndCursors: weft's query (a part of an id or of a
// metadata value) and cursor paging (after, before, the X-Weft-*-Cursor
// headers), alone and with filters; a page after a cursor lists from
// there (about a page of threads), not every thread before it.
func TestSearchQueryAndCursors(t *testing.T) {
	st := &loadCounter{Store: memory.New()}
	base := newFixture(t, nil)
	f := serve(t, base.svc, st, base.wf, nil)
	ctx := t.Context()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// t00 (newest) ... t19 (oldest); every third one of Ann's, with
	// ids of "Order-..." for t05 and t10.
	var want []string
	for i := range 20 {
		id := fmt.Sprintf("t%02d", i)
		if i == 5 || i == 10 {
			id = fmt.Sprintf("Order-%02d", i)
		}
		want = append(want, id)
		user := `"bob"`
		if i%3 == 0 {
			user = `"Ann Smith"`
		}
		th := &store.Thread{ID: id, Updated: at.Add(-time.Duration(i) * time.Minute), Meta: map[string]string{"user": user}}
		th.Created = th.Updated
		if err := st.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	// query.
	for _, c := range []struct{ body, want string }{
		{`{"query":"order","limit":100}`, "Order-05 Order-10"},
		{`{"query":"ann s","limit":100}`, "t00 t03 t06 t09 t12 t15 t18"},
		{`{"query":"ANN","metadata":{"user":"Ann Smith"},"limit":2,"offset":1}`, "t03 t06"},
		{`{"query":"t1","status":"idle","limit":100}`, "t11 t12 t13 t14 t15 t16 t17 t18 t19"},
		{`{"query":"nobody"}`, ""},
	} {
		if got, _, _ := f.searchPage(c.body); got != c.want {
			t.Errorf("search %s = %q, want %q", c.body, got, c.want)
		}
	}
	var n int
	f.json("POST", "/threads/count", `{"query":"ann"}`, 200, &n)
	if n != 7 {
		t.Errorf("count of query ann = %d, want 7", n)
	}

	// Pages of 6 by cursor, forward then back, for each filter.
	for _, c := range []struct{ filter, all string }{
		{``, strings.Join(want, " ")},
		{`"status":"idle",`, strings.Join(want, " ")},
		{`"query":"t",`, strings.Join(slicesWithout(want, "Order-05", "Order-10"), " ")},
		{`"metadata":{"user":"bob"},`, "t01 t02 t04 Order-05 t07 t08 Order-10 t11 t13 t14 t16 t17 t19"},
		{`"sort_order":"asc",`, strings.Join(reversed(want), " ")},
	} {
		var pages, prevs []string
		ids, prev, next := f.searchPage(`{` + c.filter + `"limit":6}`)
		if prev != "" {
			t.Errorf("%s: the first page has a previous page %q", c.filter, prev)
		}
		pages = append(pages, ids)
		for next != "" {
			if len(pages) > 10 {
				t.Fatalf("%s: more than 10 pages of 6: %q", c.filter, pages)
			}
			st.take()
			ids, prev, next = f.searchPage(`{` + c.filter + `"limit":6,"after":"` + next + `"}`)
			if _, listed := st.take(); listed > 7 {
				t.Errorf("%s: a page of 6 after a cursor listed %d threads", c.filter, listed)
			}
			pages = append(pages, ids)
			prevs = append(prevs, prev)
		}
		if got := strings.Join(pages, " "); got != c.all {
			t.Errorf("%s: pages %q, want %q", c.filter, pages, c.all)
		}
		// Back from the last page: each Previous is the page before.
		for i := len(prevs) - 1; i >= 0; i-- {
			ids, prev, next := f.searchPage(`{` + c.filter + `"limit":6,"before":"` + prevs[i] + `"}`)
			if ids != pages[i] || (prev != "") != (i > 0) || next == "" {
				t.Errorf("%s: before page %d = %q (prev %q, next %q), want %q", c.filter, i+2, ids, prev, next, pages[i])
			}
		}
	}

	// Bad cursors.
	_, _, next := f.searchPage(`{"limit":6}`)
	for body, path := range map[string]string{
		`{"after":"nope"}`: "$.after",
		`{"before":"` + next + `","after":"` + next + `"}`: "$.before",
		`{"after":"` + next + `","sort_by":"created_at"}`:  "$.sort_by",
		`{"before":"!!"}`: "$.before",
	} {
		if code, b := f.do("POST", "/threads/search", body); code != 422 || !strings.Contains(b, path) {
			t.Errorf("search %s: %d %s, want 422", body, code, b)
		}
	}
}

func slicesWithout(xs []string, drop ...string) []string {
	var out []string
	for _, x := range xs {
		if !strings.Contains(strings.Join(drop, " "), x) {
			out = append(out, x)
		}
	}
	return out
}

func reversed(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}

// Pages back and forth over threads updated at the same instant: every
// page forward, then every page back (by the Prev cursors), lists the
// threads as the first listing did, none skipped or repeated (the store's
// two orders are each other's exact reverse, ties included).
func TestSearchCursorsOverTies(t *testing.T) {
	f := newFixture(t, nil)
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"a", "b1", "b2", "b3", "d"} {
		u := at
		switch id {
		case "a":
			u = at.Add(time.Second)
		case "d":
			u = at.Add(-time.Second)
		}
		if err := f.st.CreateThread(context.Background(), &store.Thread{ID: id, Created: u, Updated: u}); err != nil {
			t.Fatal(err)
		}
	}
	all, _, _ := f.searchPage(`{"limit":10}`)
	if all != "a b1 b2 b3 d" {
		t.Fatalf("all: %q", all)
	}
	var pages []string
	var prevs []string
	body := `{"limit":2}`
	for range 5 {
		ids, prev, next := f.searchPage(body)
		pages, prevs = append(pages, ids), append(prevs, prev)
		if next == "" {
			break
		}
		body = `{"limit":2,"after":"` + next + `"}`
	}
	if got := strings.Join(pages, " | "); got != "a b1 | b2 b3 | d" {
		t.Fatalf("pages forward: %q", got)
	}
	for i := len(pages) - 1; i > 0; i-- {
		ids, _, _ := f.searchPage(`{"limit":2,"before":"` + prevs[i] + `"}`)
		if ids != pages[i-1] {
			t.Errorf("the page before page %d: %q, want %q", i+1, ids, pages[i-1])
		}
	}
}
