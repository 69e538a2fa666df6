package studio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
	"github.com/weftlang/weft/studio"
)

// apiJSON calls the API the rig serves beside the studio and decodes its
// JSON answer into v (when v is not nil); a status other than 200 fails.
func (r *rig) apiJSON(method, path, body string, v any) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.c.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		r.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			r.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// newThread makes a thread with metadata (JSON) through the API.
func (r *rig) newThread(id, meta string) {
	r.t.Helper()
	r.apiJSON("POST", "/threads", fmt.Sprintf(`{"thread_id":%q,"metadata":%s}`, id, meta), nil)
}

var rowRE = regexp.MustCompile(`<tr data-thread="([^"]+)">`)

// rows are the ids of the threads a list shows, in order.
func rows(html string) []string {
	var ids []string
	for _, m := range rowRE.FindAllStringSubmatch(html, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// list gets the threads list at query and returns its HTML and rows.
func (r *rig) list(query string) (string, []string) {
	r.t.Helper()
	code, body := r.get("/studio/threads" + query)
	if code != 200 {
		r.t.Fatalf("threads%s: %d\n%s", query, code, body)
	}
	return body, rows(body)
}

func TestThreadsListFilters(t *testing.T) {
	r := newRig(t, "")
	r.newThread("t-ops", `{"team":"ops","n":3}`)
	r.newThread("t-dev", `{"team":"dev","graph_id":"Elsewhere"}`)
	r.newThread("t-run", `{"team":"ops"}`)
	r.apiJSON("POST", "/threads/t-run/runs", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`, nil)
	r.waitStatus("t-run", "interrupted")

	page, ids := r.list("")
	if fmt.Sprint(ids) != "[t-run t-dev t-ops]" {
		t.Fatalf("all threads, newest update first: %v\n%s", ids, page)
	}
	for _, want := range []string{
		`<a href="/studio/threads/t-run"><code>t-run</code></a>`,
		`<a href="/studio/workflows/Approval">Approval</a>`, // a served workflow links to its page
		`<td>Elsewhere</td>`, // one not served does not
		`<span class="status status-interrupted">interrupted</span> <span class="awaits">awaits a person at <code>review</code></span>`,
		`<span class="status status-idle">idle</span>`,
		`title="20`, // the absolute time, in a title
		`just now</time>`,
		`Threads 1–3 of 3</p>`,
		`<option value="Approval">Approval</option>`,
		`<script src="/studio/assets/threads.js" defer></script>`,
		`data-url="/studio/threads?partial=1"`,
	} {
		if !strings.Contains(page, want) {
			t.Fatalf("no %s in\n%s", want, page)
		}
	}
	for q, want := range map[string]string{
		"?status=interrupted":                "[t-run]",
		"?status=idle":                       "[t-dev t-ops]",
		"?status=error":                      "[]",
		"?workflow=Approval":                 "[t-run]",
		"?meta=team%3Dops":                   "[t-run t-ops]",
		"?meta=n%3D3":                        "[t-ops]",             // 3 as JSON: the number
		"?meta=n%3D%223%22":                  "[]",                  // "3": the text
		"?meta=team%3Dops&status=idle":       "[t-ops]",             // filters combine
		"?q=t-dev":                           "[t-dev]",             // the whole id
		"?q=T-":                              "[t-run t-dev t-ops]", // a part of it, either case
		"?q=-d":                              "[t-dev]",
		"?q=elsew":                           "[t-dev]",             // a part of a metadata value
		"?q=team":                            "[]",                  // not a key
		"?q=ops&status=idle":                 "[t-ops]",             // with the other filters
		"?q=%25":                             "[]",                  // % is itself, not any text
		"?workflow=Approval&meta=team%3Ddev": "[]",                  // workflow and metadata both
		"?status=&workflow=&meta=&q=":        "[t-run t-dev t-ops]", // the empty form
	} {
		page, ids := r.list(q)
		if fmt.Sprint(ids) != want {
			t.Errorf("threads%s: %v, want %s", q, ids, want)
		}
		if want == "[]" && !strings.Contains(page, "No thread matches.") {
			t.Errorf("threads%s: no empty list's message", q)
		}
	}
	// The form keeps what it filters by.
	page, _ = r.list("?status=idle&workflow=Approval&meta=team%3Dops&q=x")
	for _, want := range []string{`<option value="idle" selected>`, `<option value="Approval" selected>`, `value="team=ops"`, `value="x"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the form does not keep %s", want)
		}
	}
	// A bad filter is said, not a failure.
	for q, want := range map[string]string{
		"?status=sleepy":    `status &#34;sleepy&#34;: want idle, busy, interrupted or error`,
		"?meta=nokey":       `metadata &#34;nokey&#34;: want key=value`,
		"?page=0":           `page &#34;0&#34;`,
		"?after=x&before=y": `after and before: one at a time`,
		"?after=nope":       `the API refused the search`,
	} {
		page, ids := r.list(q)
		if len(ids) != 0 || !strings.Contains(page, `<p class="error" role="alert">`+want) {
			t.Errorf("threads%s: %v; want the error %s in\n%s", q, ids, want, page)
		}
	}
}

var nextRE, prevRE = regexp.MustCompile(`<a href="([^"]+)" rel="next">`), regexp.MustCompile(`<a href="([^"]+)" rel="prev">`)

// follow is the URL of a page's link (nextRE or prevRE), as a query of
// /studio/threads; "" when the page has none.
func follow(t *testing.T, page string, re *regexp.Regexp) string {
	t.Helper()
	m := re.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	u := strings.ReplaceAll(m[1], "&amp;", "&")
	if !strings.HasPrefix(u, "/studio/threads?") {
		t.Fatalf("link %q", u)
	}
	return strings.TrimPrefix(u, "/studio/threads")
}

func TestThreadsListPages(t *testing.T) {
	r := newRig(t, "")
	for i := range 120 {
		r.newThread(fmt.Sprintf("p%03d", i), `{"batch":"b"}`)
	}
	page, ids := r.list("?meta=batch%3Db")
	if len(ids) != 50 || ids[0] != "p119" || ids[49] != "p070" {
		t.Fatalf("page 1: %v", ids)
	}
	next := follow(t, page, nextRE)
	if !strings.Contains(page, "Threads 1–50</p>") || strings.Contains(page, `rel="prev"`) ||
		!strings.HasPrefix(next, "?after=") || !strings.Contains(next, "&meta=batch%3Db&page=2") ||
		!strings.Contains(page, `<a href="/studio/threads?meta=batch%3Db&amp;count=1">Count them</a>`) {
		t.Fatalf("page 1's count and links (next %q):\n%s", next, page)
	}
	page, ids = r.list(next)
	if len(ids) != 50 || ids[0] != "p069" || ids[49] != "p020" || !strings.Contains(page, "Threads 51–100</p>") ||
		!strings.HasPrefix(follow(t, page, prevRE), "?before=") || strings.Contains(follow(t, page, prevRE), "page=") || !strings.Contains(follow(t, page, nextRE), "&page=3") {
		t.Fatalf("page 2: %v\n%s", ids, page)
	}
	page2 := page
	// The last page knows the total.
	page, ids = r.list(follow(t, page, nextRE))
	if len(ids) != 20 || ids[0] != "p019" || ids[19] != "p000" || !strings.Contains(page, "Threads 101–120 of 120") ||
		strings.Contains(page, `rel="next"`) || strings.Contains(page, "Count them") {
		t.Fatalf("page 3: %v\n%s", ids, page)
	}
	// Previous goes back page by page, to the first (which has none).
	back, ids := r.list(follow(t, page, prevRE))
	if len(ids) != 50 || ids[0] != "p069" || ids[49] != "p020" || !strings.Contains(back, "Threads 51–100</p>") {
		t.Fatalf("back to page 2: %v\n%s", ids, back)
	}
	back, ids = r.list(follow(t, page2, prevRE))
	if len(ids) != 50 || ids[0] != "p119" || !strings.Contains(back, "Threads 1–50</p>") || strings.Contains(back, `rel="prev"`) ||
		follow(t, back, nextRE) == "" {
		t.Fatalf("back to page 1: %v\n%s", ids, back)
	}
	// A thread made meanwhile comes first; page 2 by its cursor stays.
	r.newThread("p120", `{"batch":"b"}`)
	if _, ids = r.list(next); ids[0] != "p069" {
		t.Fatalf("page 2 after a new thread: %v", ids)
	}
	// Counted when asked (POST /threads/count), not by the live list.
	r.newThread("other", `{}`)
	if page, _ = r.list("?meta=batch%3Db&count=1"); !strings.Contains(page, `<p id="threads-total">121 threads match (counted at `) {
		t.Fatalf("counted:\n%s", page)
	}
	if page, _ = r.list("?count=1"); !strings.Contains(page, `122 threads match`) {
		t.Fatalf("all counted:\n%s", page)
	}
	if _, frag := r.get("/studio/threads?count=1&partial=1"); strings.Contains(frag, "122") {
		t.Fatalf("the live list counts:\n%s", frag)
	}
	// With a status the API is not asked to count (it would read every
	// thread's state): the pages say from and to, and Next comes when
	// more follow.
	page, ids = r.list("?status=idle")
	if len(ids) != 50 || !strings.Contains(page, "Threads 1–50</p>") || !strings.Contains(follow(t, page, nextRE), "status=idle") {
		t.Fatalf("idle, page 1: %v\n%s", ids, page)
	}
	// And with a search, over pages: p000...p099.
	seen := 0
	for q := "?q=P0"; q != ""; {
		page, ids = r.list(q)
		seen += len(ids)
		for _, id := range ids {
			if !strings.HasPrefix(id, "p0") {
				t.Fatalf("search P0 lists %s", id)
			}
		}
		q = follow(t, page, nextRE)
	}
	if want := 100; seen != want {
		t.Errorf("search P0 listed %d threads over its pages, want %d", seen, want)
	}
}

func TestThreadsListPartial(t *testing.T) {
	r := newRig(t, "")
	r.newThread("first", `{}`)
	code, frag := r.get("/studio/threads?partial=1")
	if code != 200 || strings.Contains(frag, "<html") || strings.Contains(frag, "<form") || fmt.Sprint(rows(frag)) != "[first]" {
		t.Fatalf("the list alone: %d\n%s", code, frag)
	}
	// A new thread, and a status that changes, show on the next fetch.
	r.newThread("second", `{"graph_id":"Approval"}`)
	r.apiJSON("POST", "/threads/first/runs", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`, nil)
	r.waitStatus("first", "interrupted")
	_, frag = r.get("/studio/threads?partial=1")
	if fmt.Sprint(rows(frag)) != "[first second]" || !strings.Contains(frag, "status-interrupted") {
		t.Fatalf("the next fetch: %v\n%s", rows(frag), frag)
	}
	// The fragment keeps the filters.
	if _, frag = r.get("/studio/threads?status=idle&partial=1"); fmt.Sprint(rows(frag)) != "[second]" {
		t.Fatalf("idle: %v", rows(frag))
	}
	if code, frag = r.get("/studio/threads?status=nope&partial=1"); code != 200 || !strings.Contains(frag, `role="alert"`) {
		t.Fatalf("a bad filter, the list alone: %d %s", code, frag)
	}
}

// TestBrowserThreads: in chromium, the threads list filters by status
// through its form, and follows the threads live: a run started through
// the API shows as a new row that comes to wait for a person, without a
// reload.
func TestBrowserThreads(t *testing.T) {
	ctx, cancel := context.WithTimeout(browser(t), 60*time.Second)
	defer cancel()
	r := newRig(t, "")
	r.newThread("quiet", `{"team":"ops"}`)
	r.newThread("asker", `{"team":"ops"}`)
	r.apiJSON("POST", "/threads/asker/runs", `{"assistant_id":"Approval","input":{"input_text":"doc A"}}`, nil)
	r.waitStatus("asker", "interrupted")
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/studio/threads")); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#thread-list"); !strings.Contains(got, "quiet") || !strings.Contains(got, "asker") {
		t.Fatalf("the list: %q", got)
	}
	// Filter by status through the form.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#f-status`), "interrupted"),
		chromedp.Submit(chromedp.CSS(`form.filters`)),
	); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === 'complete' ? location.search : ''`))
		if err == nil && strings.Contains(loc, "status=interrupted") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the form: at %q (%v)", loc, err)
		}
	}
	if got := text(t, ctx, "#thread-list"); strings.Contains(got, "quiet") || !strings.Contains(got, "awaits a person at review") {
		t.Fatalf("interrupted only: %q", got)
	}
	// Live: a marker on the page says it is not reloaded; a new run's
	// thread comes into the interrupted list.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	r.newThread("newcomer", `{"team":"dev"}`)
	r.apiJSON("POST", "/threads/newcomer/runs", `{"assistant_id":"Approval","input":{"input_text":"doc N"}}`, nil)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-thread="newcomer"] .status-interrupted`))); err != nil {
		t.Fatalf("the new thread, waiting, never showed in the list without a reload: %v", err)
	}
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !same {
		t.Fatalf("the page reloaded (%v)", err)
	}
	if got := text(t, ctx, "#threads-live"); !strings.Contains(got, "Live: updated every 2 s") {
		t.Fatalf("the live note: %q", got)
	}
	// And with no filter, the idle thread next to them.
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/studio/threads")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-thread="quiet"]`))); err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "threads")
	// More than a page: Next, and the total on request.
	for i := range 60 {
		r.newThread(fmt.Sprintf("bulk-%02d", i), `{"team":"bulk"}`)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(r.url+"/studio/threads"),
		chromedp.Click(chromedp.CSS(`#threads-total a`)),
	); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById('threads-total') || {}).textContent || ''`))
		if err == nil && strings.Contains(got, "63 threads match") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the total: %q (%v)", got, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`a[rel="next"]`))); err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "threads-pages")
}

// BenchmarkThreadsList times the threads page, server side (the studio
// and the API in-process, no network), over 10,000 threads in the memory
// store and in SQLite: 10,000 made through the store (idle, without runs;
// half of them with graph_id Approval, each with a user of 100) and 10
// more with a run waiting for a person.
//
// Pages far in are reached by following Next (cursors), as a browser
// does.
//
//	go test -run '^$' -bench ThreadsList -benchtime 20x -benchmem ./studio
func BenchmarkThreadsList(b *testing.B) {
	const n = 10_000
	for _, kind := range []string{"memory", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			var st store.Store
			if kind == "memory" {
				st = memory.New()
			} else {
				sq, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "weft.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { sq.Close() })
				st = sq
			}
			h := benchStudio(b, st)
			start := time.Now()
			for i := range n {
				meta := map[string]string{"user": fmt.Sprintf(`"u%d"`, i%100)}
				if i%2 == 0 {
					meta["graph_id"] = `"Approval"`
				}
				if err := st.CreateThread(ctx, &store.Thread{ID: fmt.Sprintf("t%05d", i), Meta: meta}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 10 {
				id := fmt.Sprintf("w%02d", i)
				if c, body := benchCall(h, "POST", "/threads", `{"thread_id":"`+id+`"}`); c != 200 {
					b.Fatal(body)
				}
				if c, body := benchCall(h, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`); c != 200 {
					b.Fatal(body)
				}
			}
			b.Logf("%s: %d threads made in %v", kind, n+10, time.Since(start).Round(time.Millisecond))
			// deep follows a list's Next n times from q: the URL of its
			// page n+1, by cursor.
			deep := func(q string, n int) string {
				for range n {
					c, body := benchCall(h, "GET", "/studio/threads"+q, "")
					m := nextRE.FindStringSubmatch(body)
					if c != 200 || m == nil {
						b.Fatalf("%s: %d, no next page\n%s", q, c, body)
					}
					q = strings.TrimPrefix(strings.ReplaceAll(m[1], "&amp;", "&"), "/studio/threads")
				}
				return q
			}
			for _, c := range []struct{ name, q string }{
				{"page1", ""},
				{"page101", deep("", 100)},
				{"interrupted", "?status=interrupted"}, // the 10 waiting
				{"idle-page1", "?status=idle"},
				{"idle-page101", deep("?status=idle", 100)},
				{"workflow", "?workflow=Approval"},
				{"meta-page2", deep("?meta=user%3Du7", 1)},
				{"search-page1", "?q=U7"},            // u7, u70...u79: 1,100 threads
				{"search-page20", deep("?q=U7", 19)}, // deep in them
				{"search-id", "?q=t04321"},           // a part of ids: one
				{"partial", "?partial=1"},            // what threads.js fetches
				{"count", "?count=1"},                // counted on request
			} {
				b.Run(c.name, func(b *testing.B) {
					if code, body := benchCall(h, "GET", "/studio/threads"+c.q, ""); code != 200 || !strings.Contains(body, "data-thread=") {
						b.Fatalf("%d\n%s", code, body)
					}
					for b.Loop() {
						benchCall(h, "GET", "/studio/threads"+c.q, "")
					}
				})
			}
		})
	}
}

// benchStudio serves Approval over st: the API at /, the studio at
// /studio/.
func benchStudio(b *testing.B, st store.Store) http.Handler {
	ctx := context.Background()
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(ctx, service.Source{Name: "../server/testdata/approval.wf"})
	if err != nil {
		b.Fatal(err)
	}
	as := []server.Assistant{{Workflow: wf}}
	srv, err := server.New(server.Options{Service: svc, Store: st, Assistants: as})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close(context.Background()) })
	sd, err := studio.New(studio.Options{API: srv.Handler(), Assistants: as})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv.Handler())
	mux.Handle(sd.Prefix(), sd)
	return mux
}

// benchCall serves one request in-process: the status and the body.
func benchCall(h http.Handler, method, path, body string) (int, string) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// TestBrowserThreadsSearch: in chromium, typing a part of a thread id,
// then a part of a metadata value, into the search box and submitting
// the form lists the threads that match, and only those.
func TestBrowserThreadsSearch(t *testing.T) {
	ctx, cancel := context.WithTimeout(browser(t), 60*time.Second)
	defer cancel()
	r := newRig(t, "")
	r.newThread("invoice-2026-001", `{"customer":"Acme Corp"}`)
	r.newThread("invoice-2026-002", `{"customer":"Globex"}`)
	r.newThread("refund-77", `{"customer":"acme ltd"}`)
	search := func(text, want string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.Navigate(r.url+"/studio/threads"),
			chromedp.SendKeys(chromedp.CSS(`#f-q`), text),
			chromedp.Submit(chromedp.CSS(`form.filters`)),
		); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === 'complete' && location.search.includes('q=') ?
				Array.from(document.querySelectorAll('#thread-list tr[data-thread]')).map(tr => tr.dataset.thread).join(' ') : '?'`))
			if err == nil && got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("search %q lists %q (%v), want %q", text, got, err, want)
			}
		}
	}
	search("2026-00", "invoice-2026-002 invoice-2026-001") // a part of ids
	search("ACME", "refund-77 invoice-2026-001")           // a part of metadata values, either case
	if v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#f-q`))); err != nil || v != "ACME" {
		t.Fatalf("the search box keeps %q (%v)", v, err)
	}
	shot(t, ctx, "threads-search")
}

// A thread page's graph alone (?partial=graph): none while the thread
// names no workflow, the workflow's once a run named it, and the API's
// 404 for a thread that does not exist.
func TestThreadGraphPartial(t *testing.T) {
	r := newRig(t, "")
	r.newThread("g1", `{}`)
	code, frag := r.get("/studio/threads/g1?partial=graph")
	if code != 200 || strings.Contains(frag, "<html") || !strings.Contains(frag, "names no workflow served here") || strings.Contains(frag, "data-node") {
		t.Fatalf("before a run: %d\n%s", code, frag)
	}
	r.apiJSON("POST", "/threads/g1/runs", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`, nil)
	r.waitStatus("g1", "interrupted")
	code, frag = r.get("/studio/threads/g1?partial=graph")
	if code != 200 || strings.Contains(frag, "<html") || !strings.Contains(frag, `data-node="review"`) || !strings.Contains(frag, `aria-label="The graph of Approval`) {
		t.Fatalf("after a run: %d\n%s", code, frag)
	}
	if code, frag = r.get("/studio/threads/nope?partial=graph"); code != 404 {
		t.Fatalf("an unknown thread: %d %s", code, frag)
	}
}
