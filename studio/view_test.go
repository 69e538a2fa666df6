package studio_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/internal/napper"
)

// newViewRig is newRig with Go actions: the thread view's workflows.
func newViewRig(t testing.TB, acts *engine.Registry, files ...string) *rig {
	t.Helper()
	return buildRig(t, "", acts, files...)
}

// api calls the API directly: the status and the body.
func (r *rig) api(method, path, body string) (int, string) {
	r.t.Helper()
	req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.c.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitStatus waits for the thread's status, or fails.
func (r *rig) waitStatus(id, status string) {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, body := r.api("GET", "/threads/"+id, "")
		if strings.Contains(body, `"status":"`+status+`"`) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("thread %s never became %s: %s", id, status, body)
		}
	}
}

// waitRuns waits for the thread's runs to end, or fails.
func (r *rig) waitRuns(id string) {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, body := r.api("GET", "/threads/"+id+"/runs", "")
		if !strings.Contains(body, `"status":"pending"`) && !strings.Contains(body, `"status":"running"`) && strings.Contains(body, `"run_id"`) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("thread %s's runs never ended: %s", id, body)
		}
	}
}

// approvalThread starts an Approval run on a new thread, waiting for its
// review: the thread's id.
func approvalThread(r *rig, text string) string {
	r.t.Helper()
	_, at := r.startRun("Approval", url.Values{"input_text": {text}})
	id := strings.TrimPrefix(at, "/studio/threads/")
	r.waitStatus(id, "interrupted")
	return id
}

func (r *rig) startRun(flow string, form url.Values) (int, string) {
	r.t.Helper()
	code, body, at := r.post("/studio/workflows/"+flow+"/run", form)
	if code != 200 || !strings.HasPrefix(at, "/studio/threads/") {
		r.t.Fatalf("run form: %d at %s\n%s", code, at, body)
	}
	return code, at
}

var stepLink = regexp.MustCompile(`href="/studio/threads/[^/"]+/steps/(\d+)"`)

// TestThreadHistory: the thread page lists the thread's steps, newest
// first, each with its node and what it changed, and links each to its
// step page; the graph is marked done/waiting with the path taken.
func TestThreadHistory(t *testing.T) {
	r := newViewRig(t, nil, "../server/testdata/approval.wf")
	long := strings.Repeat("long text ", 20)
	id := approvalThread(r, long)
	code, page := r.get("/studio/threads/" + id)
	for _, want := range []string{
		`<section id="thread" data-thread="` + id + `" data-status="interrupted"`,
		`<g class="done" data-node="draft"`, `<g class="waiting" data-node="review"`, `class="taken" data-from="draft" data-to="review"`,
		`<code>draft</code>`,
		`<code class="key">draft.body</code> = <code class="new">&#34;long text long text`, // the step's diff, cut short
		"…</code>",
		`<code class="key">input_text</code>`,
		`review asks: Approve this draft?`,
		`<select id="ans-verdict" name="verdict" required>`,
	} {
		if code != 200 || !strings.Contains(page, want) {
			t.Fatalf("thread page: %d, no %s in\n%s", code, want, page)
		}
	}
	if strings.Contains(page, `class="done" data-node="publish"`) || strings.Contains(page, `cancel-form`) {
		t.Fatalf("publish is not done, and the thread is not busy:\n%s", page)
	}
	// A step's page: the full value, and the fork form.
	links := stepLink.FindAllStringSubmatch(page, -1)
	if len(links) < 2 {
		t.Fatalf("step links: %v", links)
	}
	code, sp := r.get("/studio/threads/" + id + "/steps/" + links[0][1])
	for _, want := range []string{
		strings.TrimSpace(long), `<form class="card fork-form"`, `name="checkpoint_id" value="` + links[0][1] + `"`,
		`id="val-rounds" name="rounds" type="number"  value="0"`, `<textarea id="val-input_text" name="input_text" rows="2">` + strings.TrimSpace(long) + `</textarea>`,
	} {
		if code != 200 || !strings.Contains(sp, want) {
			t.Fatalf("step page: %d, no %q in\n%s", code, want, sp)
		}
	}
	if code, body := r.get("/studio/threads/" + id + "/steps/999"); code != 404 {
		t.Fatalf("a missing step: %d %s", code, body)
	}
}

// TestHistoryPages: a long thread shows its newest 100 steps, and an
// "older" link reads on from the oldest shown to the thread's start.
func TestHistoryPages(t *testing.T) {
	r := newViewRig(t, nil, "testdata/loop.wf")
	_, at := r.startRun("Loop", url.Values{"input_text": {"tick"}, "times": {"150"}})
	id := strings.TrimPrefix(at, "/studio/threads/")
	r.waitRuns(id)
	_, page := r.get("/studio/threads/" + id)
	older := regexp.MustCompile(`<a class="older" href="/studio/threads/[^?"]+\?before=(\d+)">`).FindStringSubmatch(page)
	if n := strings.Count(page, `<tr class="step"`); n != 100 || older == nil {
		t.Fatalf("the newest page: %d steps, older link %v", n, older)
	}
	links := stepLink.FindAllStringSubmatch(page, -1)
	if links[len(links)-1][1] != older[1] {
		t.Fatalf("older reads on from %s; the oldest shown is %s", older[1], links[len(links)-1][1])
	}
	_, page2 := r.get("/studio/threads/" + id + "?before=" + older[1])
	links2 := stepLink.FindAllStringSubmatch(page2, -1)
	n2 := strings.Count(page2, `<tr class="step"`)
	if n2 == 0 || n2 >= 100 || strings.Contains(page2, `class="older"`) || links2[0][1] == older[1] || links2[len(links2)-1][1] != "1" {
		t.Fatalf("the older page: %d steps from %s to %s", n2, links2[0][1], links2[len(links2)-1][1])
	}
	if !strings.Contains(page2, `<code class="key">n</code>: <code class="old">`) {
		t.Fatalf("the older page shows no change of n:\n%s", page2)
	}
}

// TestThreadHistoryChanges: a step that changes a value shows the old
// and the new one; one that writes nothing new says so.
func TestThreadHistoryChanges(t *testing.T) {
	r := newViewRig(t, nil, "../server/testdata/approval.wf")
	id := approvalThread(r, "doc D")
	// "no" loops back to review, adding 1 to rounds.
	if code, body, _ := r.post("/studio/threads/"+id+"/answer", url.Values{"verdict": {"no"}}); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	r.waitStatus(id, "interrupted")
	_, page := r.get("/studio/threads/" + id)
	if !regexp.MustCompile(`<code class="key">rounds</code>: <code class="old">0</code> → <code class="new">1</code>`).MatchString(page) {
		t.Fatalf("no change of rounds 0 → 1 in\n%s", page)
	}
	if !strings.Contains(page, `<code class="key">review.verdict</code> = <code class="new">&#34;no&#34;</code>`) {
		t.Fatalf("no verdict added in\n%s", page)
	}
}

// TestAnswerResumes: the question's form resumes the run, which goes to
// its end; a wrong answer stays on the page with the error.
func TestAnswerResumes(t *testing.T) {
	r := newViewRig(t, nil, "../server/testdata/approval.wf")
	id := approvalThread(r, "doc A")
	code, body, at := r.post("/studio/threads/"+id+"/answer", url.Values{"verdict": {"maybe"}})
	if code != 200 || at != "/studio/threads/"+id || !strings.Contains(body, `verdict: &#34;maybe&#34; is not one of yes, no`) {
		t.Fatalf("a wrong answer: %d at %s\n%s", code, at, body)
	}
	code, body, at = r.post("/studio/threads/"+id+"/answer", url.Values{"verdict": {"yes"}})
	if code != 200 || at != "/studio/threads/"+id {
		t.Fatalf("answer: %d at %s\n%s", code, at, body)
	}
	r.waitStatus(id, "idle")
	_, page := r.get("/studio/threads/" + id)
	for _, want := range []string{html.EscapeString(`"published": "doc A"`), `<g class="done" data-node="publish"`, `class="taken" data-from="review" data-to="publish"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("no %s after the answer:\n%s", want, page)
		}
	}
	if strings.Contains(page, "answer-form") {
		t.Fatal("the thread asks nothing now, yet shows the answer form")
	}
	if code, body, _ := r.post("/studio/threads/"+id+"/answer", url.Values{"verdict": {"yes"}}); code != 200 || !strings.Contains(body, "asks no question now") {
		t.Fatalf("answering a thread that asks nothing: %d\n%s", code, body)
	}
}

// TestForkAtStep: forking a thread at a step with an edited value makes
// a new thread as the thread was at that step, with that value, linked to
// its parent, which runs on from there; the parent is left as it was.
func TestForkAtStep(t *testing.T) {
	r := newViewRig(t, nil, "../server/testdata/approval.wf")
	id := approvalThread(r, "doc F")
	if code, body, _ := r.post("/studio/threads/"+id+"/answer", url.Values{"verdict": {"yes"}}); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	r.waitRuns(id)
	_, page := r.get("/studio/threads/" + id)
	links := stepLink.FindAllStringSubmatch(page, -1)
	cp := links[len(links)-2][1] // draft's step: review runs next
	code, body, _ := r.post("/studio/threads/"+id+"/fork", url.Values{"checkpoint_id": {cp}, "input_text": {"doc F"}, "rounds": {"x"}})
	if code != 200 || !strings.Contains(body, `rounds: &#34;x&#34; is not a whole number`) {
		t.Fatalf("a bad value: %d\n%s", code, body)
	}
	code, body, at := r.post("/studio/threads/"+id+"/fork", url.Values{"checkpoint_id": {cp}, "input_text": {"doc F"}, "rounds": {"2"}})
	nid := strings.TrimPrefix(at, "/studio/threads/")
	if code != 200 || nid == id || !strings.HasPrefix(at, "/studio/threads/") {
		t.Fatalf("fork: %d at %s\n%s", code, at, body)
	}
	for _, want := range []string{`class="parent-link" href="/studio/threads/` + id + `/steps/` + cp + `"`, html.EscapeString(`"rounds": 2`), `form class="run-on-form"`} {
		if !strings.Contains(body, want) {
			t.Fatalf("the fork's page has no %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "publish.published") || strings.Contains(body, `class="done" data-node="publish"`) {
		t.Fatalf("the fork holds what its parent did after the step:\n%s", body)
	}
	_, parent := r.api("GET", "/threads/"+id+"/state", "")
	if !strings.Contains(parent, `"rounds":0`) || !strings.Contains(parent, `"published":"doc F"`) {
		t.Fatalf("the parent changed: %s", parent)
	}
	// Run on: review asks; "no" with rounds 2 publishes at once.
	code, body, at = r.post("/studio/threads/"+nid+"/run", nil)
	if code != 200 || at != "/studio/threads/"+nid {
		t.Fatalf("run on: %d at %s\n%s", code, at, body)
	}
	r.waitStatus(nid, "interrupted")
	if code, body, _ := r.post("/studio/threads/"+nid+"/answer", url.Values{"verdict": {"no"}}); code != 200 {
		t.Fatalf("answer the fork: %d %s", code, body)
	}
	r.waitStatus(nid, "idle")
	if _, st := r.api("GET", "/threads/"+nid+"/state", ""); !strings.Contains(st, `"publish":{"published":"doc F","revisions":2}`) {
		t.Fatalf("the fork's run: %s", st)
	}
	// A fork of the thread's end runs anew from its edited values.
	cp = links[0][1]
	_, _, at = r.post("/studio/threads/"+id+"/fork", url.Values{"checkpoint_id": {cp}, "input_text": {"doc G"}, "rounds": {"0"}})
	nid = strings.TrimPrefix(at, "/studio/threads/")
	if code, body, _ := r.post("/studio/threads/"+nid+"/run", nil); code != 200 {
		t.Fatalf("run on: %d\n%s", code, body)
	}
	r.waitRuns(nid)
	if _, st := r.api("GET", "/threads/"+nid+"/state", ""); !strings.Contains(st, `"draft":{"body":"doc G"}`) || !strings.Contains(st, `"question":"Approve this draft?"`) {
		t.Fatalf("a new run on the fork: %s", st)
	}
}

// TestCancelRun: the cancel form stops a running run.
func TestCancelRun(t *testing.T) {
	n := napper.New()
	r := newViewRig(t, n.Registry(), "testdata/sleepy.wf")
	_, at := r.startRun("Sleepy", url.Values{"input_text": {"zz"}})
	id := strings.TrimPrefix(at, "/studio/threads/")
	n.WaitStarted(t, "")
	r.waitStatus(id, "busy")
	_, page := r.get("/studio/threads/" + id)
	if !strings.Contains(page, `<form class="cancel-form" method="post" action="/studio/threads/`+id+`/cancel">`) {
		t.Fatalf("no cancel form on a busy thread:\n%s", page)
	}
	code, body, at := r.post("/studio/threads/"+id+"/cancel", nil)
	if code != 200 || at != "/studio/threads/"+id || strings.Contains(body, `class="error"`) {
		t.Fatalf("cancel: %d at %s\n%s", code, at, body)
	}
	_, runs := r.api("GET", "/threads/"+id+"/runs", "")
	if !strings.Contains(runs, `"status":"interrupted"`) {
		t.Fatalf("the run after cancel: %s", runs)
	}
	if code, body, _ := r.post("/studio/threads/"+id+"/cancel", nil); code != 200 || !strings.Contains(body, "no run of this thread is in progress") {
		t.Fatalf("cancel again: %d\n%s", code, body)
	}
}

// submit submits the form sel selects and waits for the page it leads to.
func submit(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.weftOld = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Submit(chromedp.CSS(sel))); err != nil {
		t.Fatalf("submit %s: %v", sel, err)
	}
	waitJS(t, ctx, "the page", `window.weftOld === undefined && document.readyState === "complete"`)
}

// reloadUntil reloads the page until js is true in it.
func reloadUntil(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never came to: %s", js)
		}
	}
}

// TestBrowserThreadView: in chromium, a waiting thread's question is
// answered in its form (no: it asks again; yes: it publishes); its
// history lists the steps with their changes; a step's page forks the
// thread with an edited value into a new thread linked to its parent; a
// run of a slow action is cancelled from its thread's page.
func TestBrowserThreadView(t *testing.T) {
	ctx := browser(t)
	n := napper.New()
	r := newViewRig(t, n.Registry(), "../server/testdata/approval.wf", "testdata/sleepy.wf")
	id := approvalThread(r, "doc B")
	page := r.url + "/studio/threads/" + id
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`form.answer-form`))); err != nil {
		t.Fatal(err)
	}
	if q := text(t, ctx, ".question h2"); q != "review asks: Approve this draft?" {
		t.Fatalf("question: %q", q)
	}
	if w, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.graph g[data-node=review]').getAttribute('class')`)); err != nil || w != "waiting" {
		t.Fatalf("review in the graph: %q %v", w, err)
	}
	shot(t, ctx, "question")
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#ans-verdict`), "no")); err != nil {
		t.Fatal(err)
	}
	submit(t, ctx, `form.answer-form`)
	reloadUntil(t, ctx, `document.querySelector('#thread').dataset.status === "interrupted" && document.body.textContent.includes("review.verdict")`)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#ans-verdict`), "yes")); err != nil {
		t.Fatal(err)
	}
	submit(t, ctx, `form.answer-form`)
	reloadUntil(t, ctx, `document.querySelector('#thread').dataset.status === "idle"`)
	if st := text(t, ctx, ".state"); !strings.Contains(st, `"published": "doc B"`) || !strings.Contains(st, `"rounds": 1`) {
		t.Fatalf("state after the answers: %s", st)
	}
	hist := text(t, ctx, "table.steps")
	for _, want := range []string{"rounds: 0 → 1", `review.verdict: "no" → "yes"`, `publish.published = "doc B"`} {
		if !strings.Contains(hist, want) {
			t.Fatalf("history has no %q:\n%s", want, hist)
		}
	}
	// The page of an ended run keeps the marks the server drew (the
	// live view, finding nothing to follow, leaves them).
	waitJS(t, ctx, "the live view settled", `/No run in progress|ended/.test(document.getElementById("live-status").textContent)`)
	for _, n := range []string{"draft", "review", "publish"} {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('.graph g[data-node="`+n+`"]').classList.contains('done')`)); err != nil || !ok {
			t.Fatalf("the ended thread's graph: %s is not marked done (%v)", n, err)
		}
	}
	shot(t, ctx, "history")

	// The oldest step: fork it with another text.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`table.steps tr.step:last-child a`)), chromedp.WaitVisible(chromedp.CSS(`form.fork-form`))); err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "step")
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#val-input_text`), "doc B, again"), chromedp.SetValue(chromedp.CSS(`#val-rounds`), "2")); err != nil {
		t.Fatal(err)
	}
	submit(t, ctx, `form.fork-form`)
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('a.parent-link').getAttribute('href')`))
	if err != nil || !strings.HasPrefix(href, "/studio/threads/"+id+"/steps/") {
		t.Fatalf("the fork's parent link: %q %v", href, err)
	}
	if fid, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#thread').dataset.thread`)); fid == id || fid == "" {
		t.Fatalf("the fork is thread %q", fid)
	}
	if st := text(t, ctx, ".state"); !strings.Contains(st, `"input_text": "doc B, again"`) || !strings.Contains(st, `"rounds": 2`) {
		t.Fatalf("the fork's state: %s", st)
	}
	shot(t, ctx, "fork")

	// Cancel a run of the slow action.
	_, at := r.startRun("Sleepy", url.Values{"input_text": {"zz"}})
	n.WaitStarted(t, "")
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+at), chromedp.WaitVisible(chromedp.CSS(`form.cancel-form`))); err != nil {
		t.Fatal(err)
	}
	submit(t, ctx, `form.cancel-form`)
	reloadUntil(t, ctx, `document.querySelector('#thread').dataset.status !== "busy" && !document.querySelector('form.cancel-form')`)
	_, runs := r.api("GET", "/threads/"+strings.TrimPrefix(at, "/studio/threads/")+"/runs", "")
	if !strings.Contains(runs, `"status":"interrupted"`) {
		t.Fatalf("the cancelled run: %s", runs)
	}
}

// BenchmarkThreadPage: the page of a thread of 1,000 steps (Loop goes
// round 1,000 times), read with its history's newest page, its state
// and its graph.
func BenchmarkThreadPage(b *testing.B) {
	r := newViewRig(b, nil, "testdata/loop.wf")
	do := func(method, path, body string) string {
		req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return string(out)
	}
	var th struct {
		ID string `json:"thread_id"`
	}
	if err := json.Unmarshal([]byte(do("POST", "/threads", `{"metadata":{"graph_id":"Loop"}}`)), &th); err != nil {
		b.Fatal(err)
	}
	if out := do("POST", "/threads/"+th.ID+"/runs/wait", `{"assistant_id":"Loop","input":{"input_text":"tick"}}`); !strings.Contains(out, `"out":"tick"`) {
		b.Fatalf("the loop: %s", out)
	}
	if hist := do("POST", "/threads/"+th.ID+"/history", `{"limit":2000}`); strings.Count(hist, `"checkpoint_id"`) < 2000 {
		b.Fatalf("the thread has %d checkpoints, want over 1,000", strings.Count(hist, `"checkpoint_id"`)/2)
	}
	b.ResetTimer()
	for b.Loop() {
		page := do("GET", "/studio/threads/"+th.ID, "")
		if !strings.Contains(page, `class="older"`) || strings.Count(page, `<tr class="step"`) != 100 {
			b.Fatalf("the page shows %d steps", strings.Count(page, `<tr class="step"`))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/page")
}
