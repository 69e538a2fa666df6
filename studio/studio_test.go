package studio_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/studio"
)

// rig is a server serving testdata workflows with the studio beside it,
// as weft serve composes them.
type rig struct {
	t   *testing.T
	url string
	c   *http.Client
}

func newRig(t *testing.T, apiKey string, files ...string) *rig {
	t.Helper()
	return buildRig(t, apiKey, nil, files...)
}

// buildRig is a rig whose server's key is apiKey (none: "") and whose
// service carries out acts (nil: none but the built-in ones), serving
// files (none: Approval).
func buildRig(t testing.TB, apiKey string, acts *engine.Registry, files ...string) *rig {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	svc, err := service.New(service.Options{Store: st, Actions: acts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if len(files) == 0 {
		files = []string{"../server/testdata/approval.wf"}
	}
	var as []server.Assistant
	for _, f := range files {
		wf, err := svc.Open(ctx, service.Source{Name: f})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, server.Assistant{Workflow: wf})
	}
	srv, err := server.New(server.Options{Service: svc, Store: st, Assistants: as, APIKey: apiKey})
	if err != nil {
		t.Fatal(err)
	}
	sd, err := studio.New(studio.Options{API: srv.Handler(), APIKey: apiKey, Assistants: as})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv.Handler())
	mux.Handle(sd.Prefix(), sd)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		hs.CloseClientConnections() // a browser's stream of a run a failed test left waiting
		hs.Close()
		srv.Close(context.Background())
	})
	jar, _ := cookiejar.New(nil)
	tt, _ := t.(*testing.T)
	return &rig{t: tt, url: hs.URL, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

func (r *rig) get(path string) (int, string) {
	r.t.Helper()
	resp, err := r.c.Get(r.url + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (r *rig) post(path string, form url.Values) (int, string, string) {
	r.t.Helper()
	resp, err := r.c.PostForm(r.url+path, form)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Request.URL.Path
}

func TestWorkflowPages(t *testing.T) {
	r := newRig(t, "")
	code, home := r.get("/studio/")
	if code != 200 || !strings.Contains(home, `href="/studio/workflows/Approval"`) || !strings.Contains(home, "Draft, review by a person, publish.") {
		t.Fatalf("home: %d\n%s", code, home)
	}
	code, wf := r.get("/studio/workflows/Approval")
	for _, want := range []string{
		`<svg`, `data-node="review"`, `data-from="draft" data-to="review"`, // the graph
		`<span class="tok-kw">workflow</span> <span class="tok-name">Approval</span>`, // coloured source
		`<label for="in-input_text">input_text`,                                       // the run form
		`<code>publish.published</code>`,                                              // outputs
	} {
		if code != 200 || !strings.Contains(wf, want) {
			t.Fatalf("workflow page: %d, no %s in\n%s", code, want, wf)
		}
	}
	if code, body := r.get("/studio/workflows/Nope"); code != 404 || !strings.Contains(body, `no workflow &#34;Nope&#34; is served here`) {
		t.Fatalf("a missing workflow: %d %s", code, body)
	}
	if code, css := r.get("/studio/assets/studio.css"); code != 200 || !strings.Contains(css, ".tok-kw") {
		t.Fatalf("css: %d", code)
	}
}

func TestRunFormStartsARun(t *testing.T) {
	r := newRig(t, "")
	code, body, at := r.post("/studio/workflows/Approval/run", url.Values{"input_text": {"doc Q"}})
	if code != 200 || !strings.HasPrefix(at, "/studio/threads/") {
		t.Fatalf("run form: %d at %s\n%s", code, at, body)
	}
	id := strings.TrimPrefix(at, "/studio/threads/")
	// The run goes on in the background: the thread waits for a person.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, page := r.get("/studio/threads/" + id)
		if strings.Contains(page, "status-interrupted") && strings.Contains(page, "doc Q") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread page:\n%s", page)
		}
	}
}

func TestAPIKeySession(t *testing.T) {
	r := newRig(t, "s3cret")
	resp, err := r.c.Get(r.url + "/studio/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/studio/login" {
		t.Fatalf("without a session: at %s; want the login page", resp.Request.URL.Path)
	}
	if code, _ := r.get("/studio/api/assistants/search"); code != 401 {
		t.Fatalf("the API through the studio without a session: %d", code)
	}
	if code, body, _ := r.post("/studio/login", url.Values{"key": {"wrong"}}); code != 401 || !strings.Contains(body, "not the server&#39;s API key") {
		t.Fatalf("a wrong key: %d\n%s", code, body)
	}
	code, body, at := r.post("/studio/login", url.Values{"key": {"s3cret"}})
	if code != 200 || at != "/studio/" || !strings.Contains(body, "Approval") {
		t.Fatalf("the right key: %d at %s", code, at)
	}
	for _, c := range r.c.Jar.Cookies(mustURL(t, r.url+"/studio/")) {
		if strings.Contains(c.Value, "s3cret") {
			t.Fatal("the session cookie holds the key")
		}
	}
	resp, err = r.c.Post(r.url+"/studio/api/assistants/search", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"graph_id":"Approval"`) {
		t.Fatalf("the API through the studio with a session: %d %s", resp.StatusCode, b)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
