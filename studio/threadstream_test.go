package studio_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserLiveThreadStream: a thread page open before any run follows
// the thread's stream: a run started through the API (not the page)
// shows live, without a reload, then the next one; the page says it
// follows the stream. The time from the API's answer to the run's
// showing is logged.
func TestBrowserLiveThreadStream(t *testing.T) {
	ctx := browser(t)
	r := newLiveRig(t, &liveActs{tokens: 3})
	r.newThread("tl", `{}`)
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/studio/threads/tl")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the thread stream open", `weftStudio.stats.threadStream === "open" && document.getElementById("live").dataset.watch === "stream"`)
	waitJS(t, ctx, "no run yet", `document.getElementById("live-status").textContent.startsWith("No run yet.")`)
	for i, input := range []string{"doc A", "doc B"} {
		began := time.Now()
		code, body := r.api("POST", "/threads/tl/runs", `{"assistant_id":"Live","input":{"input_text":"`+input+`"},"stream_mode":["values","updates","messages-tuple","custom","tasks"]}`)
		answered := time.Now()
		var run struct {
			RunID string `json:"run_id"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &run) != nil {
			t.Fatalf("run %d: %d %s", i+1, code, body)
		}
		waitJS(t, ctx, "run "+run.RunID+" shown", `document.getElementById("live-status").textContent.includes(`+jsString(run.RunID)+`)`)
		shown := time.Now()
		// The page opened before the thread named its workflow: the
		// run's start brings its graph, whose nodes the frames mark.
		waitJS(t, ctx, "the graph drawn", `weftStudio.stats.graphFetched === 4 && document.querySelectorAll('#graph-box .graph g[data-node]').length === 4`)
		t.Logf("run %d shown %v after the API answered (%v after the request)", i+1, shown.Sub(answered).Round(time.Millisecond), shown.Sub(began).Round(time.Millisecond))
		waitJS(t, ctx, "run "+run.RunID+" ended", `document.getElementById("live-status").textContent.startsWith("Run `+run.RunID+` ended success.")`)
		waitJS(t, ctx, "its nodes", `[...document.querySelectorAll('#timeline tbody tr')].map(tr => tr.cells[0].textContent).join() === 'plan,write,lookup,report'`)
	}
	waitJS(t, ctx, "two runs through the thread stream", `weftStudio.stats.threadRuns === 2 && weftStudio.stats.threadStream === "open"`)
	waitJS(t, ctx, "the path marked", `[...document.querySelectorAll('#graph-box g[data-node].done')].map(g => g.dataset.node).sort().join() === 'lookup,plan,report,write'`)
	shot(t, ctx, "live-thread-stream")
}

// TestBrowserLiveThreadStreamFallback: when the thread's stream is
// refused (here: the thread was deleted under the page), the page falls
// back to looking for runs, and says so.
func TestBrowserLiveThreadStreamFallback(t *testing.T) {
	ctx := browser(t)
	r := newLiveRig(t, &liveActs{tokens: 3})
	r.newThread("tf", `{}`)
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/studio/threads/tf")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the thread stream open", `weftStudio.stats.threadStream === "open"`)
	if code, body := r.api("DELETE", "/threads/tf", ""); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	waitJS(t, ctx, "the fallback", `weftStudio.stats.threadStream === "failed" && document.getElementById("live").dataset.watch === "poll" && document.getElementById("live-status").textContent.includes("the thread's stream failed")`)
	shot(t, ctx, "live-thread-stream-fallback")
}

// jsString quotes s for a script.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "<", `\u003c`)
}
