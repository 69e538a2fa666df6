package studio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeScript is axe-core's browser build, which .ci/run installs with npm
// ci in test/axe (pinned in its package.json).
var axeScript = filepath.Join("..", "test", "axe", "node_modules", "axe-core", "axe.min.js")

// axeSource reads axe.min.js, or skips the test when test/axe has no
// node_modules.
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(axeScript)
	if err != nil {
		t.Skipf("skipped: %s is missing (%v); run `npm ci` in test/axe to run the studio's accessibility audit", axeScript, err)
	}
	return string(b)
}

// axeViolation is one rule a page breaks, as axe.run reports it.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target         []any  `json:"target"`
		FailureSummary string `json:"failureSummary"`
	} `json:"nodes"`
}

// audit runs axe-core on the page ctx shows, with the WCAG 2.1 A and AA
// rules and axe's best practices (landmarks, heading order), and returns
// what it finds, one line per element at fault. What axe could not
// decide (the contrast of text drawn in the SVG graph, whose background
// it cannot compute) is logged, not failed.
func audit(t *testing.T, ctx context.Context, axe string) []string {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+"\n;typeof axe === 'object'")); err != nil {
		t.Fatalf("injecting axe-core: %v", err)
	}
	js := `axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}, resultTypes: ['violations', 'incomplete']}).then(r => JSON.stringify({violations: r.violations, incomplete: r.incomplete}))`
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe.run: %v", err)
	}
	var res struct{ Violations, Incomplete []axeViolation }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("axe.run's answer: %v in %s", err, out)
	}
	lines := func(vs []axeViolation) []string {
		var ls []string
		for _, v := range vs {
			for _, n := range v.Nodes {
				ls = append(ls, fmt.Sprintf("%s (%s) at %v: %s; %s", v.ID, v.Impact, n.Target, v.Help, strings.ReplaceAll(n.FailureSummary, "\n", " ")))
			}
		}
		return ls
	}
	for _, v := range res.Incomplete {
		if v.ID == "color-contrast" && len(v.Nodes) > 0 && svgTextOnly(ctx, v) {
			continue // checked by svgContrast
		}
		t.Logf("axe could not decide %s on %d elements (the first: %v: %s)", v.ID, len(v.Nodes), v.Nodes[0].Target, strings.ReplaceAll(v.Nodes[0].FailureSummary, "\n", " "))
	}
	return lines(res.Violations)
}

// svgTextOnly reports whether every element of v is text in the graph's
// SVG, whose contrast svgContrast checks.
func svgTextOnly(ctx context.Context, v axeViolation) bool {
	for _, n := range v.Nodes {
		if len(n.Target) != 1 || !strings.HasPrefix(fmt.Sprint(n.Target[0]), "text[") {
			return false
		}
	}
	return true
}

// svgContrast is a script: the text of the page's graph drawn with less
// than WCAG AA's contrast (4.5:1) against the fill of the shape it sits
// on (a node's outline, an edge label's box; the SVG's white elsewhere),
// as lines "text: ratio".
const svgContrast = `(() => {
	const lum = c => { const m = c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]; };
	const low = [];
	document.querySelectorAll('.graph svg text').forEach(t => {
		const g = t.parentNode;
		const shape = g.querySelector(':scope > path[fill]:not([fill="none"]), :scope > rect[fill]');
		const bg = shape ? getComputedStyle(shape).fill : 'rgb(255, 255, 255)';
		const a = lum(getComputedStyle(t).fill), b = lum(bg);
		const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
		if (ratio < 4.5) { low.push(t.textContent + ': ' + ratio.toFixed(2)); }
	});
	return low;
})()`

// TestBrowserAccessibility: axe-core (WCAG 2.1 A and AA rules) finds
// nothing wrong on any studio screen: the workflows, a workflow, the
// threads list, a thread waiting for a person (its question form), an
// idle thread, a step, a run followed live (going, failed, ended), an
// error and the sign-in page.
func TestBrowserAccessibility(t *testing.T) {
	axe := axeSource(t)
	ctx := browser(t)
	acts := &liveActs{started: make(chan string, 8), gate: make(chan struct{}), tokens: 20}
	r := buildRig(t, "", acts.registry(), "../server/testdata/approval.wf", "testdata/live.wf")
	waiting := approvalThread(r, "doc A")
	_, done := r.startRun("Live", url.Values{"input_text": {"doc D"}})
	done = strings.TrimPrefix(done, "/studio/threads/")
	go func() {
		for range 4 {
			acts.gate <- struct{}{}
		}
	}()
	r.waitStatus(done, "idle")
	for range 4 {
		<-acts.started
	}
	_, failed := r.startRun("Live", url.Values{"input_text": {"please fail"}})
	failed = strings.TrimPrefix(failed, "/studio/threads/")
	go func() {
		for range 3 {
			acts.gate <- struct{}{}
		}
	}()
	r.waitStatus(failed, "error")
	for range 3 {
		<-acts.started
	}
	_, body := r.get("/studio/threads/" + waiting)
	step := stepLink.FindStringSubmatch(body)
	if step == nil {
		t.Fatalf("no step link on the waiting thread's page:\n%s", body)
	}

	check := func(name, path, ready string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(r.url+path)); err != nil {
			t.Fatal(err)
		}
		if ready != "" {
			waitJS(t, ctx, name+": ready", ready)
		}
		shot(t, ctx, "a11y-"+name)
		if low, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](svgContrast)); err != nil || len(low) > 0 {
			t.Errorf("%s: graph text below 4.5:1 (%v): %q", name, err, low)
		}
		if found := audit(t, ctx, axe); len(found) > 0 {
			t.Errorf("%s (%s): %d accessibility violations:\n  %s", name, path, len(found), strings.Join(found, "\n  "))
		}
	}
	check("workflows", "/studio/", "")
	check("workflow", "/studio/workflows/Approval", "")
	check("workflow-live", "/studio/workflows/Live", "")
	check("threads", "/studio/threads", `document.querySelectorAll('#thread-list tr[data-thread]').length === 3`)
	check("thread-waiting", "/studio/threads/"+waiting, `document.getElementById('live-status').textContent.includes('waits for a person') || document.getElementById('live-status').textContent.includes('No run in progress')`)
	check("thread-idle", "/studio/threads/"+done, `document.getElementById('live-status').textContent.includes('No run in progress')`)
	check("thread-failed", "/studio/threads/"+failed, `document.getElementById('live-status').textContent.includes('No run in progress')`)
	check("step", "/studio/threads/"+waiting+"/steps/"+step[1], "")
	check("error", "/studio/workflows/Nope", "")

	// A run followed live, going, then failed: the live block drawn.
	startLive(t, ctx, r, "please fail")
	if got := <-acts.started; got != "plan" {
		t.Fatalf("started %s, want plan", got)
	}
	waitJS(t, ctx, "plan current", nodeIs("plan", "current"))
	shot(t, ctx, "a11y-live-going")
	if found := audit(t, ctx, axe); len(found) > 0 {
		t.Errorf("live, going: %d accessibility violations:\n  %s", len(found), strings.Join(found, "\n  "))
	}
	go func() {
		for range 3 {
			acts.gate <- struct{}{}
		}
	}()
	waitJS(t, ctx, "the failure", `document.getElementById("live-status").textContent.includes("the search service said no")`)
	waitJS(t, ctx, "the output", `!document.getElementById("live-output").textContent.includes("has not ended")`)
	shot(t, ctx, "a11y-live-failed")
	if found := audit(t, ctx, axe); len(found) > 0 {
		t.Errorf("live, failed: %d accessibility violations:\n  %s", len(found), strings.Join(found, "\n  "))
	}

	// The sign-in page of a server with an API key.
	kr := newRig(t, "s3cret")
	if err := chromedp.Do(ctx, chromedp.Navigate(kr.url+"/studio/")); err != nil {
		t.Fatal(err)
	}
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.Contains(loc, "/studio/login") {
		t.Fatalf("with a key, at %s (%v); want the login page", loc, err)
	}
	shot(t, ctx, "a11y-login")
	if found := audit(t, ctx, axe); len(found) > 0 {
		t.Errorf("login: %d accessibility violations:\n  %s", len(found), strings.Join(found, "\n  "))
	}
}

// focused describes the element that has the keyboard focus and how its
// focus shows.
type focused struct {
	Desc         string  // tag#id.class
	OutlineStyle string  // computed outline-style
	OutlineWidth float64 // computed outline-width, px
	OutlineColor string  // computed outline-color
}

// TestBrowserKeyboard: on a thread that waits for a person, Tab goes
// from the skip link through the page to the question's answer field and
// its Answer button, then to the graph and the state (scrollable: the
// keyboard scrolls them), and every element it lands on shows its focus
// with a visible outline (3px, the focus colour).
func TestBrowserKeyboard(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, "")
	id := approvalThread(r, "doc K")
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/studio/threads/"+id)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the live status", `document.getElementById('live-status').textContent.includes('No run in progress')`)
	const where = `(() => { const e = document.activeElement; const s = getComputedStyle(e);
		return {desc: e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : '') + (e.type === 'submit' ? '[submit]' : ''),
			outlineStyle: s.outlineStyle, outlineWidth: parseFloat(s.outlineWidth), outlineColor: s.outlineColor}; })()`
	var path []string
	answer, submit, graph := -1, -1, -1
	for i := 0; i < 40 && !strings.HasPrefix(path0(path), "pre.state"); i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		f, err := chromedp.Run(ctx, chromedp.Evaluate[focused](where))
		if err != nil {
			t.Fatal(err)
		}
		path = append(path, f.Desc)
		if f.OutlineStyle != "solid" || f.OutlineWidth < 3 || f.OutlineColor != "rgb(255, 191, 71)" {
			t.Errorf("Tab %d: %s shows its focus with outline %s %gpx %s; want a 3px solid rgb(255, 191, 71) outline", i+1, f.Desc, f.OutlineStyle, f.OutlineWidth, f.OutlineColor)
		}
		if i == 0 {
			shot(t, ctx, "keyboard-skip")
		}
		switch {
		case f.Desc == "select#ans-verdict":
			answer = i
		case answer >= 0 && f.Desc == "button[submit]":
			in, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.activeElement.closest('form.answer-form')`))
			if err != nil || !in {
				t.Fatalf("Tab %d: the button after the answer field is not the answer form's (%v)", i+1, err)
			}
			submit = i
			shot(t, ctx, "keyboard-answer")
		case f.Desc == "div.graph":
			graph = i
		}
	}
	t.Logf("Tab goes: %s", strings.Join(path, " → "))
	if path[0] != "a.skip" {
		t.Errorf("the first Tab lands on %s, want the skip link", path[0])
	}
	if answer < 0 || submit < 0 || graph < submit || !strings.HasPrefix(path0(path), "pre.state") {
		t.Fatalf("Tab did not reach the answer field, its button, the graph and the state in turn: %s", strings.Join(path, " → "))
	}
}

// path0 is the last of path, or "".
func path0(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1]
}
