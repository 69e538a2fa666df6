package studio_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless chromium for the test, or skips it when
// there is none.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		p, err := exec.LookPath("chromium")
		if err != nil {
			t.Skip("no chromium here (apt-get install -y chromium): the studio's browser tests need it")
		}
		path = p
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(1366, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	if _, err := chromedp.Run(ctx, chromedp.Title()); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// shot saves a PNG of the page as name in WEFT_SCREENSHOTS (a directory),
// or in the test's temporary directory.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG (less is JPEG)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	saveShot(t, name, png)
}

// saveShot saves png as name in WEFT_SCREENSHOTS, or in the test's
// temporary directory.
func saveShot(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := os.Getenv("WEFT_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserStartARun: in chromium, the workflows page lists Approval;
// its page shows the graph and the run form; a run started from the form
// lands on its thread, which comes to wait for a person.
func TestBrowserStartARun(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, "")
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/studio/")); err != nil {
		t.Fatal(err)
	}
	home := text(t, ctx, "main")
	if title, err := chromedp.Run(ctx, chromedp.Title()); err != nil || !strings.Contains(home, "Approval") || !strings.Contains(title, "weft studio") {
		t.Fatalf("home: %q %q %v", title, home, err)
	}
	shot(t, ctx, "workflows")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href="/studio/workflows/Approval"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.graph svg`)),
	); err != nil {
		t.Fatal(err)
	}
	if nodes, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.graph g[data-node]').length`)); err != nil || nodes != 3 {
		t.Fatalf("graph nodes: %d (%v), want 3", nodes, err)
	}
	shot(t, ctx, "workflow")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#in-input_text`), "doc B"),
		chromedp.Submit(chromedp.CSS(`form.run-form`)),
		chromedp.WaitVisible(chromedp.CSS(`.status`)),
	); err != nil {
		t.Fatal(err)
	}
	if url, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.Contains(url, "/studio/threads/") {
		t.Fatalf("after the run form: at %s (%v)", url, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		if state := text(t, ctx, ".state"); strings.Contains(state, "doc B") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the thread page never showed the run's state")
		}
		time.Sleep(100 * time.Millisecond)
	}
	shot(t, ctx, "thread")
}

// text is the text of the first element sel selects.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}
