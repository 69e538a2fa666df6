package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// appendCounting is a memory store that counts appends and job status
// changes made by SetJob.
type appendCounting struct {
	*memory.Store
	mu      sync.Mutex
	appends int
	setJobs int
}

func (c *appendCounting) Append(ctx context.Context, recs ...*store.Record) error {
	c.mu.Lock()
	c.appends++
	c.mu.Unlock()
	return c.Store.Append(ctx, recs...)
}

func (c *appendCounting) SetJob(ctx context.Context, id string, from []store.JobStatus, to store.JobStatus, run, errText string) (*store.Job, error) {
	c.mu.Lock()
	c.setJobs++
	c.mu.Unlock()
	return c.Store.SetJob(ctx, id, from, to, run, errText)
}

func (c *appendCounting) take() (appends, setJobs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	appends, setJobs = c.appends, c.setJobs
	c.appends, c.setJobs = 0, 0
	return
}

// TestRunDurability: a run's "durability" (or its deprecated
// "checkpoint_during") chooses when its steps reach the store: "exit"
// makes no append (its records go with the run's end), "sync" one per
// step; the server's default is Options.Durability. Whatever the mode the
// conversation's results are the same, and the job's end is written with
// the run's (one SetJob per run: its claim). A durability that is not one
// of LangGraph's is a 422 naming the field.
func TestRunDurability(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, field string
		def         engine.Durability
		ok          func(appends int) bool
	}{
		{"sync", `,"durability":"sync"`, 0, func(n int) bool { return n >= 2 }},
		{"exit", `,"durability":"exit"`, 0, func(n int) bool { return n == 0 }},
		{"checkpoint_during false", `,"checkpoint_during":false`, engine.Sync, func(n int) bool { return n == 0 }},
		{"server default exit", ``, engine.Exit, func(n int) bool { return n == 0 }},
		{"server default sync", ``, engine.Sync, func(n int) bool { return n >= 2 }},
		{"durability over checkpoint_during", `,"durability":"sync","checkpoint_during":false`, 0, func(n int) bool { return n >= 2 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &appendCounting{Store: memory.New()}
			svc, err := service.New(service.Options{Store: st})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			wf, err := svc.Open(ctx, service.Source{Name: "testdata/approval.wf"})
			if err != nil {
				t.Fatal(err)
			}
			f := serve(t, svc, st, wf, func(o *server.Options) { o.Durability = c.def })
			if code, body := f.do("POST", "/threads", `{"thread_id":"d"}`); code != 200 {
				t.Fatalf("create: %d %s", code, body)
			}
			st.take()
			code, body := f.do("POST", "/threads/d/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc D"}`+c.field+`}`)
			if code != 200 || !strings.Contains(body, "Approve this draft?") {
				t.Fatalf("first run: %d %s", code, body)
			}
			a1, j1 := st.take()
			code, body = f.do("POST", "/threads/d/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}`+c.field+`}`)
			if code != 200 || !strings.Contains(body, `"published":"doc D"`) {
				t.Fatalf("resume: %d %s", code, body)
			}
			a2, j2 := st.take()
			if !c.ok(a1) || !c.ok(a2) {
				t.Errorf("appends: %d in the first run, %d in the resume", a1, a2)
			}
			if j1 != 0 || j2 != 0 {
				t.Errorf("SetJob calls: %d and %d; want none (the claim goes with the job's create, the end with the run's)", j1, j2)
			}
			_, runs := f.do("GET", "/threads/d/runs", "")
			if strings.Count(runs, `"status":"success"`) != 2 {
				t.Errorf("runs: %s; want both success", runs)
			}
			if _, state := f.do("GET", "/threads/d/state", ""); !strings.Contains(state, `"published":"doc D"`) || !strings.Contains(state, `"next":[]`) {
				t.Errorf("state: %s", state)
			}
		})
	}
	f := newFixture(t, nil)
	code, body := f.do("POST", "/threads", `{"thread_id":"x"}`)
	if code != 200 {
		t.Fatal(code, body)
	}
	code, body = f.do("POST", "/threads/x/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"x"},"durability":"fast"}`)
	if code != 422 || !strings.Contains(body, "$.durability") || !strings.Contains(body, "sync, async or exit") {
		t.Errorf("durability fast: %d %s; want a 422 naming $.durability", code, body)
	}
}

// TestMountsBehindAPIKey: a handler mounted on the server (River's UI) is
// served under its prefix only with the API key, as the API is; a mount
// at one path ("/mcp") serves that path only; a mount that is not a path
// is refused by New.
func TestMountsBehindAPIKey(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ui " + r.URL.Path)) })
	f := newFixture(t, func(o *server.Options) {
		o.APIKey = "k3y"
		o.Mounts = []server.Mount{{Prefix: "/riverui/", Handler: ui}, {Prefix: "/one", Handler: ui}}
	})
	if code, body := f.do("GET", "/one", ""); code != 401 {
		t.Fatalf("one path without the key: %d %s", code, body)
	}
	if code, body := f.do("GET", "/one", "", "x-api-key", "k3y"); code != 200 || body != "ui /one" {
		t.Fatalf("one path with the key: %d %s", code, body)
	}
	if code, body := f.do("GET", "/one/more", "", "x-api-key", "k3y"); code != 404 {
		t.Fatalf("below a one-path mount: %d %s", code, body)
	}
	if code, body := f.do("GET", "/riverui/jobs", ""); code != 401 && code != 403 {
		t.Fatalf("without the key: %d %s", code, body)
	}
	if code, body := f.do("GET", "/riverui/jobs", "", "x-api-key", "k3y"); code != 200 || body != "ui /riverui/jobs" {
		t.Fatalf("with the key: %d %s", code, body)
	}
	svc, err := service.New(service.Options{Store: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := server.New(server.Options{Service: svc, Store: memory.New(), Mounts: []server.Mount{{Prefix: "riverui/", Handler: ui}}}); err == nil || !strings.Contains(err.Error(), "mount") {
		t.Fatalf("a mount that is not a path: %v", err)
	}
}
