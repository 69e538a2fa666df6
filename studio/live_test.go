package studio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// liveActs are the Go actions of testdata/live.wf: step (plan, report),
// write (streams tokens), lookup (calls a tool; fails when its text
// says "fail").
type liveActs struct {
	started chan string   // each node, as its action starts; nil: not told
	gate    chan struct{} // each action waits for one before it ends; nil: it goes on
	tokens  int           // the tokens write streams
	rate    int           // tokens per second; 0: all at once
}

func (a *liveActs) registry() *engine.Registry {
	wait := func(ctx context.Context, c *engine.Call) error {
		if a.started != nil {
			a.started <- c.Node.Name
		}
		if a.gate != nil {
			select {
			case <-a.gate:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		return nil
	}
	reg := engine.NewRegistry()
	reg.Replace("step", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		if err := wait(ctx, c); err != nil {
			return err
		}
		c.Outputs[0] = flow.StringValue(c.Node.Name + "(" + c.Inputs[0].Text() + ")")
		return nil
	}))
	reg.Replace("write", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		// Tokens in batches of a hundredth of a second's worth, paced
		// to the rate.
		batch := max(1, a.rate/100)
		began := time.Now()
		for i := 0; i < a.tokens; i++ {
			c.Emit("token", flow.StringValue(fmt.Sprintf("tok%d ", i)))
			if a.rate > 0 && (i+1)%batch == 0 {
				due := began.Add(time.Duration(i+1) * time.Second / time.Duration(a.rate))
				time.Sleep(time.Until(due))
			}
		}
		if err := wait(ctx, c); err != nil {
			return err
		}
		c.Outputs[0] = flow.StringValue("write(" + c.Inputs[0].Text() + ")")
		return nil
	}))
	reg.Replace("lookup", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		c.Emit("tool_call", flow.ObjectValue(map[string]flow.Value{"name": flow.StringValue("search"), "id": flow.StringValue("call-1"), "arguments": flow.StringValue(`{"q":"weft"}`)}))
		c.Emit("tool_result", flow.ObjectValue(map[string]flow.Value{"name": flow.StringValue("search"), "id": flow.StringValue("call-1"), "content": flow.StringValue("3 hits"), "duration_ms": flow.FloatValue(4.5)}))
		if err := wait(ctx, c); err != nil {
			return err
		}
		if strings.Contains(c.Inputs[0].Text(), "cache") {
			c.Notice(engine.NoticeFallback, "the search index was down: answered from the cache")
		}
		if strings.Contains(c.Inputs[0].Text(), "fail") {
			return fmt.Errorf("lookup: the search service said no")
		}
		c.Outputs[0] = flow.StringValue("lookup(" + c.Inputs[0].Text() + ")")
		return nil
	}))
	return reg
}

// newLiveRig is a rig serving testdata/live.wf with acts.
func newLiveRig(t *testing.T, acts *liveActs) *rig {
	t.Helper()
	return buildRig(t, "", acts.registry(), "testdata/live.wf")
}

// TestLiveBlock: the script is served; a run started from the form asks
// for the stream modes the live view reads, and its thread page has the
// live block (status line, timeline with its filter, node executions,
// output).
func TestLiveBlock(t *testing.T) {
	r := newLiveRig(t, &liveActs{tokens: 3})
	if code, js := r.get("/studio/assets/studio.js"); code != 200 || !strings.Contains(js, "new EventSource(") || !strings.Contains(js, "window.weftStudio") {
		t.Fatalf("studio.js: %d", code)
	}
	if code, css := r.get("/studio/assets/studio.css"); code != 200 || !strings.Contains(css, "/* live") {
		t.Fatalf("studio.css: %d, no live section", code)
	}
	code, page, at := r.post("/studio/workflows/Live/run", url.Values{"input_text": {"doc L"}})
	if code != 200 || !strings.HasPrefix(at, "/studio/threads/") {
		t.Fatalf("run form: %d at %s\n%s", code, at, page)
	}
	for _, want := range []string{`<section id="live"`, `id="live-status" class="live-status" role="status"`, `<table id="timeline"`, `<input type="checkbox" id="failed-only">`, `<ol id="live-nodes"`, `<pre id="live-output"`, `<noscript>`} {
		if !strings.Contains(page, want) {
			t.Fatalf("thread page: no %s in\n%s", want, page)
		}
	}
	thread := strings.TrimPrefix(at, "/studio/threads/")
	_, body := r.get("/threads/" + thread + "/runs")
	var runs []struct {
		Kwargs struct {
			StreamMode []string `json:"stream_mode"`
		} `json:"kwargs"`
	}
	if err := json.Unmarshal([]byte(body), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %s", err, body)
	}
	if got := strings.Join(runs[0].Kwargs.StreamMode, ","); got != "values,updates,messages-tuple,custom,tasks" {
		t.Fatalf("the run's stream modes: %s", got)
	}
}

// waitJS waits until js is true in the page, failing after 15s.
func waitJS(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("live-status").textContent`))
			t.Fatalf("%s: never so (%s); the live status says %q", what, js, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nodeIs is a script: is the graph's node name of class cls?
func nodeIs(name, cls string) string {
	return fmt.Sprintf(`document.querySelector('.graph g[data-node=%q]').classList.contains(%q)`, name, cls)
}

// startLive starts a run of Live from its form in the browser, with input.
func startLive(t *testing.T, ctx context.Context, r *rig, input string) {
	t.Helper()
	startFrom(t, ctx, r, "Live", input)
}

// startFrom starts a run of workflow wf from its form, with input.
func startFrom(t *testing.T, ctx context.Context, r *rig, wf, input string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(r.url+"/studio/workflows/"+wf),
		chromedp.SendKeys(chromedp.CSS(`#in-input_text`), input),
		chromedp.Submit(chromedp.CSS(`form.run-form`)),
		chromedp.WaitVisible(chromedp.CSS(`#live-body`)),
	); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserLive: a run started from the form is followed on its thread
// page: the current node moves from node to node as the test lets each
// action end, the edges taken are marked, write's tokens and lookup's
// tool call show under their executions, the timeline fills, and at the
// end the output shows and the thread's status is updated.
func TestBrowserLive(t *testing.T) {
	ctx := browser(t)
	acts := &liveActs{started: make(chan string, 8), gate: make(chan struct{}), tokens: 30}
	r := newLiveRig(t, acts)
	startLive(t, ctx, r, "doc L")
	nodes := []string{"plan", "write", "lookup", "report"}
	for i, n := range nodes {
		select {
		case got := <-acts.started:
			if got != n {
				t.Fatalf("action of %s started, want %s", got, n)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%s never started", n)
		}
		waitJS(t, ctx, n+" current", nodeIs(n, "current"))
		for _, other := range nodes[:i] {
			if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](nodeIs(other, "done")+` && !`+nodeIs(other, "current"))); err != nil || !ok {
				t.Fatalf("at %s, %s is not done only (%v)", n, other, err)
			}
		}
		if i > 0 {
			waitJS(t, ctx, "edge "+nodes[i-1]+"->"+n+" taken", fmt.Sprintf(`!!document.querySelector('.graph path[data-from=%q][data-to=%q].taken')`, nodes[i-1], n))
		}
		waitJS(t, ctx, "the status line names "+n, fmt.Sprintf(`document.getElementById("live-status").textContent.includes(": %s…")`, n))
		switch n {
		case "write":
			waitJS(t, ctx, "write's tokens", `[...document.querySelectorAll('#live-nodes .exec')].some(li => li.querySelector('strong').textContent === 'write' && li.querySelector('.tokens').textContent.includes('tok0 tok1 ') && li.querySelector('.tokens').textContent.includes('tok29'))`)
		case "lookup":
			waitJS(t, ctx, "lookup's tool call", `[...document.querySelectorAll('#live-nodes .exec')].some(li => li.querySelector('strong').textContent === 'lookup' && li.querySelector('.events').textContent.includes('tool_call search({"q":"weft"})') && li.querySelector('.events').textContent.includes('tool_result search → 3 hits'))`)
			waitJS(t, ctx, "three rows", `document.querySelectorAll('#timeline tbody tr').length === 3`)
			shot(t, ctx, "live")
		}
		acts.gate <- struct{}{}
	}
	waitJS(t, ctx, "the run's end", `document.getElementById("live-status").textContent.includes("ended success")`)
	waitJS(t, ctx, "the output", `document.getElementById("live-output").textContent.includes('"out": "report(lookup(write(plan(doc L))))"')`)
	waitJS(t, ctx, "the thread's status", `document.querySelector('h1 .status').textContent === 'idle'`)
	waitJS(t, ctx, "no cancel button once the run ended", `[...document.querySelectorAll('form.cancel-form')].every(f => f.hidden)`)
	for _, n := range nodes {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](nodeIs(n, "done"))); err != nil || !ok {
			t.Fatalf("at the end, %s is not done (%v)", n, err)
		}
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#timeline tbody tr')].map(tr => tr.cells[0].textContent + ' ' + tr.cells[4].textContent + ' ' + (tr.cells[3].textContent !== ''))`))
	if err != nil || strings.Join(rows, "|") != "plan done true|write done true|lookup done true|report done true" {
		t.Fatalf("timeline: %q (%v)", rows, err)
	}
	shot(t, ctx, "live-done")
}

// TestBrowserLiveFailure: a run that fails shows its failed node in red in
// the graph and the timeline, says why, and "failed only" keeps only the
// failed row.
func TestBrowserLiveFailure(t *testing.T) {
	ctx := browser(t)
	r := newLiveRig(t, &liveActs{tokens: 5})
	startLive(t, ctx, r, "please fail")
	waitJS(t, ctx, "the failure", `document.getElementById("live-status").textContent.includes("the search service said no")`)
	waitJS(t, ctx, "lookup failed", nodeIs("lookup", "failed"))
	waitJS(t, ctx, "the failed row", `!!document.querySelector('#timeline tbody tr.exec-failed') && document.querySelector('#timeline tbody tr.exec-failed').cells[0].textContent === 'lookup'`)
	visible := `[...document.querySelectorAll('#timeline tbody tr')].filter(tr => tr.offsetParent !== null).map(tr => tr.cells[0].textContent)`
	if rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](visible)); err != nil || strings.Join(rows, ",") != "plan,write,lookup" {
		t.Fatalf("rows before the filter: %q (%v)", rows, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#failed-only`))); err != nil {
		t.Fatal(err)
	}
	if rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](visible)); err != nil || strings.Join(rows, ",") != "lookup" {
		t.Fatalf("failed only: %q (%v)", rows, err)
	}
	shot(t, ctx, "live-failed")
}

// TestBrowserLiveWaits: a run that comes to a person's question marks its
// node waiting, says what it asks, and the thread's status shows
// interrupted, without a reload.
func TestBrowserLiveWaits(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, "")
	startFrom(t, ctx, r, "Approval", "doc W")
	waitJS(t, ctx, "the question", `document.getElementById("live-status").textContent.includes("waits for a person at review: Approve this draft?")`)
	waitJS(t, ctx, "review waiting", nodeIs("review", "waiting")+` && `+nodeIs("draft", "done"))
	waitJS(t, ctx, "edge draft->review taken", `!!document.querySelector('.graph path[data-from="draft"][data-to="review"].taken')`)
	waitJS(t, ctx, "the thread's status", `document.querySelector('h1 .status').textContent === 'interrupted' && document.getElementById('live').dataset.status === 'interrupted'`)
	if rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#timeline tbody tr')].map(tr => tr.cells[0].textContent + ' ' + tr.cells[4].textContent)`)); err != nil || strings.Join(rows, "|") != "draft done|review waits for a person" {
		t.Fatalf("timeline: %q (%v)", rows, err)
	}
	shot(t, ctx, "live-waiting")
}

// TestBrowserLiveKeepsUp: write streams 5,000 tokens at 1,000 a second;
// the page applies every frame it receives, in animation frames, and is
// never far behind. The figures are logged.
func TestBrowserLiveKeepsUp(t *testing.T) {
	ctx := browser(t)
	const tokens = 5000
	r := newLiveRig(t, &liveActs{tokens: tokens, rate: 1000})
	began := time.Now()
	startLive(t, ctx, r, "burst")
	waitJS(t, ctx, "the run's end", `document.getElementById("live-status").textContent.includes("ended success")`)
	took := time.Since(began)
	type stats struct {
		Received, Applied, Flushes, MaxBacklog, MsBehind, MaxMsBehind, Tokens int
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[stats](`window.weftStudio.stats`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tokens at 1,000/s in %v: %+v (%.0f frames per animation frame)", tokens, took.Round(time.Millisecond), s, float64(s.Applied)/float64(max(1, s.Flushes)))
	if s.Tokens != tokens || s.Applied != s.Received || s.Received < tokens {
		t.Fatalf("stats: %+v: want every one of %d tokens received and applied", s, tokens)
	}
	if s.MaxMsBehind > 250 {
		t.Fatalf("the page fell %d ms behind the stream (want under 250)", s.MaxMsBehind)
	}
	if tail, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#live-nodes .exec:nth-child(2) .tokens').textContent`)); err != nil || !strings.HasPrefix(tail, "…") || !strings.HasSuffix(tail, "tok4999 ") || len(tail) > 20010 {
		t.Fatalf("write's text: %d chars, %q…%q (%v): want the cut's mark and the last token", len(tail), tail[:min(20, len(tail))], tail[max(0, len(tail)-20):], err)
	}
}

// TestBrowserLiveFindsTheRun: a thread page opened without ?run= finds
// the thread's run in progress and follows it to its end; lookup's
// fallback shows in the timeline and under its execution.
func TestBrowserLiveFindsTheRun(t *testing.T) {
	ctx := browser(t)
	acts := &liveActs{started: make(chan string, 8), gate: make(chan struct{}), tokens: 3}
	r := newLiveRig(t, acts)
	code, _, at := r.post("/studio/workflows/Live/run", url.Values{"input_text": {"doc F cache"}})
	if code != 200 || !strings.HasPrefix(at, "/studio/threads/") {
		t.Fatalf("run form: %d at %s", code, at)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+at)); err != nil { // the path alone
		t.Fatal(err)
	}
	select {
	case <-acts.started:
	case <-time.After(15 * time.Second):
		t.Fatal("plan never started")
	}
	waitJS(t, ctx, "plan current", nodeIs("plan", "current"))
	go func() {
		for range 4 {
			acts.gate <- struct{}{}
		}
	}()
	waitJS(t, ctx, "the run's end", `document.getElementById("live-status").textContent.includes("ended success")`)
	waitJS(t, ctx, "report done", nodeIs("report", "done"))
	waitJS(t, ctx, "lookup's fallback", `[...document.querySelectorAll('#timeline tbody tr.exec-fellback')].map(tr => tr.cells[0].textContent + ': ' + tr.cells[4].textContent).join() === 'lookup: done (fell back)' && document.querySelector('#live-nodes .exec:nth-child(3) .notes').textContent === 'fell back: the search index was down: answered from the cache'`)
	shot(t, ctx, "live-fallback")
}

// TestBrowserLiveRetry: a node whose first attempt fails and whose retry
// policy gives it a second shows the retry as it happens (the server's
// retry frame): while the second attempt runs, its row and execution say
// "attempt 2" and show the failed attempt's error in red; at the end the
// row and notes say how many attempts it took, the failed one still
// listed.
func TestBrowserLiveRetry(t *testing.T) {
	ctx := browser(t)
	var calls atomic.Int32
	second := make(chan struct{})
	reg := engine.NewRegistry()
	reg.Replace("flaky", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		if calls.Add(1) == 1 {
			return errors.New("the first attempt fails")
		}
		select {
		case <-second:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		c.Outputs[0] = flow.StringValue("ok " + c.Inputs[0].Text())
		return nil
	}))
	r := newViewRig(t, reg, "../server/testdata/flaky.wf")
	startFrom(t, ctx, r, "Flaky", "x")
	row := `[...document.querySelectorAll('#timeline tbody tr')].map(tr => tr.cells[0].textContent + ': ' + tr.cells[4].textContent).join()`
	waitJS(t, ctx, "the retry, live", row+` === 'try: attempt 2 runningattempt 1 failed: the first attempt fails'`)
	for what, js := range map[string]string{
		"the failed attempt in red": `(() => { const s = document.querySelector('#timeline tbody tr.exec-retried td span.bad'); return !!s && getComputedStyle(s).color === 'rgb(180, 35, 24)'; })()`,
		"the badge":                 `document.querySelector('#live-nodes .exec.exec-retrying .badge').textContent === 'attempt 2'`,
		"the execution's attempts":  `[...document.querySelectorAll('#live-nodes .exec .attempts li.bad')].map(li => li.textContent).join() === 'attempt 1 failed: the first attempt fails'`,
		"the node current":          nodeIs("try", "current"),
		"the status line names it":  `document.getElementById("live-status").textContent.includes(": try…")`,
	} {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil || !ok {
			t.Fatalf("while retrying, %s: not so (%v)", what, err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d calls while the second attempt runs", n)
	}
	shot(t, ctx, "live-retrying")
	close(second)
	waitJS(t, ctx, "the retried node's row", row+` === 'try: done (2 attempts)'`)
	waitJS(t, ctx, "its notes", `document.querySelector('#live-nodes .exec .notes').textContent === 'retried: 2 attempts' && document.querySelector('#live-nodes .exec .attempts').textContent === 'attempt 1 failed: the first attempt fails'`)
	waitJS(t, ctx, "the run's end", `document.getElementById("live-status").textContent.includes("ended success")`)
	// Failed only keeps the retried row: it had a failure.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#failed-only`))); err != nil {
		t.Fatal(err)
	}
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#timeline tbody tr.exec-retried').offsetParent !== null`)); err != nil || !ok {
		t.Fatalf("failed only hides the retried row (%v)", err)
	}
}

// TestBrowserLiveCapsRows: a run of 1,002 node executions (Loop's tick
// 1,001 times, then done) keeps the last 50 of each node on the page, in
// the timeline and the list, with one row per node saying how many
// earlier ones are not shown; every execution is still counted.
func TestBrowserLiveCapsRows(t *testing.T) {
	ctx := browser(t)
	r := newViewRig(t, nil, "testdata/loop.wf")
	startFrom(t, ctx, r, "Loop", "x")
	waitJS(t, ctx, "the run's end", `document.getElementById("live-status").textContent.includes("ended success")`)
	type page struct {
		Execs, Rows, Items, TickRows, DoneRows int
		Earlier                                []string
		FirstTick, LastTick                    string
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[page](`(() => {
		const rows = [...document.querySelectorAll('#timeline tbody:not(.earlier) tr')];
		const ticks = rows.filter(tr => tr.cells[0].textContent === 'tick');
		return {
			execs: window.weftStudio.stats.execs,
			rows: rows.length,
			items: document.querySelectorAll('#live-nodes > li').length,
			tickRows: ticks.length,
			doneRows: rows.filter(tr => tr.cells[0].textContent === 'done').length,
			earlier: [...document.querySelectorAll('#timeline tbody.earlier tr')].map(tr => tr.cells[0].textContent + ': ' + tr.cells[1].textContent)
				.concat([...document.querySelectorAll('#live-nodes > li.exec-earlier')].map(li => li.textContent)),
			firstTick: ticks[0].cells[1].textContent,
			lastTick: ticks[ticks.length - 1].cells[1].textContent,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", got)
	want := page{
		Execs: 1002, Rows: 51, Items: 52, TickRows: 50, DoneRows: 1,
		Earlier:   []string{"tick: 951 earlier executions not shown; the last 50 follow", "tick: 951 earlier executions not shown; the last 50 follow."},
		FirstTick: "952", LastTick: "1001",
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("the page:\n %+v\nwant\n %+v", got, want)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.weftStudio.stats.received`)); err != nil || n < 2*1002 {
		t.Fatalf("frames received: %d (%v), want at least a start and an end per execution", n, err)
	} else {
		t.Logf("%d frames received", n)
	}
	shot(t, ctx, "live-capped")
	if png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#timeline`))); err == nil {
		saveShot(t, "live-capped-timeline", png)
	}
}
