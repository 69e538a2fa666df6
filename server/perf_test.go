package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/sqlite"
)

// sqliteFixture serves the Approval workflow over a SQLite store.
func sqliteFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(ctx, service.Source{Name: "testdata/approval.wf"})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, svc, st, wf, nil)
}

// TestCreateThreadReplyIsStored checks that POST /threads answers the
// thread as the store keeps it (its reply is made without reading it
// back): the same JSON as GET /threads/{id}, times and metadata included,
// on SQLite and in memory.
func TestCreateThreadReplyIsStored(t *testing.T) {
	for name, f := range map[string]*fixture{"sqlite": sqliteFixture(t), "memory": newFixture(t, nil)} {
		t.Run(name, func(t *testing.T) {
			for _, body := range []string{`{}`, `{"thread_id":"m1","metadata":{"user":"ann","n":1,"tags":["a"]}}`} {
				code, created := f.do("POST", "/threads", body)
				if code != 200 {
					t.Fatalf("create %s: %d %s", body, code, created)
				}
				id := created[len(`{"thread_id":"`):strings.Index(created, `","created_at"`)]
				code, got := f.do("GET", "/threads/"+id, "")
				if code != 200 || strings.TrimSpace(got) != strings.TrimSpace(created) {
					t.Errorf("create %s answered\n%s\nGET answers (%d)\n%s", body, created, code, got)
				}
			}
		})
	}
}

// TestRunLabelsThread checks the labels a run writes on its thread (as
// LangGraph does) with the thread read once per request: on a thread
// made by POST /threads, one made by if_not_exists create, and after a
// PATCH of its metadata between runs, which the next run keeps.
func TestRunLabelsThread(t *testing.T) {
	f := sqliteFixture(t)
	ctx := context.Background()
	f.json("POST", "/threads", `{"thread_id":"l1","metadata":{"user":"ann"}}`, 200, nil)
	f.json("POST", "/threads/l1/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`, 200, nil)
	f.json("PATCH", "/threads/l1", `{"metadata":{"topic":"x"}}`, 200, nil)
	f.json("POST", "/threads/l1/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`, 200, nil)
	f.json("POST", "/threads/l2/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc"},"if_not_exists":"create"}`, 200, nil)
	var as []map[string]any
	f.json("POST", "/assistants/search", `{}`, 200, &as)
	if len(as) != 1 {
		t.Fatalf("assistants: %v", as)
	}
	aid := `"` + as[0]["assistant_id"].(string) + `"`
	for id, want := range map[string]map[string]string{
		"l1": {"user": `"ann"`, "topic": `"x"`, "graph_id": `"Approval"`, "assistant_id": aid},
		"l2": {"graph_id": `"Approval"`, "assistant_id": aid},
	} {
		thr, err := f.st.Thread(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(thr.Meta) != len(want) {
			t.Errorf("%s: meta %v, want %v", id, thr.Meta, want)
		}
		for k, v := range want {
			if thr.Meta[k] != v {
				t.Errorf("%s: meta %s = %q, want %q (all: %v)", id, k, thr.Meta[k], v, thr.Meta)
			}
		}
		if thr.Workflow != "Approval" || len(thr.Spec) == 0 {
			t.Errorf("%s: workflow %q, spec %d bytes: the run's spec is lost", id, thr.Workflow, len(thr.Spec))
		}
	}
}

// sqliteOpener returns a function that opens (again) one SQLite store in
// the test's temporary directory, each open closed at the test's end: a
// server stopped and the next one started on the same store.
func sqliteOpener(t *testing.T) func() store.Store {
	path := filepath.Join(t.TempDir(), "weft.db")
	return func() store.Store {
		t.Helper()
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
}
