package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// sort_by is honoured: created_at, thread_id and status order the
// threads by that field, not by when they were last updated.
func TestSearchThreadsSortBy(t *testing.T) {
	f := newFixture(t, nil)
	for _, id := range []string{"b", "c", "a"} {
		f.json("POST", "/threads", `{"thread_id":"`+id+`"}`, 200, nil)
	}
	// b is updated last, and interrupted.
	f.json("PATCH", "/threads/b", `{"metadata":{"x":1}}`, 200, nil)
	f.start("b", "doc")
	ids := func(body string) string {
		t.Helper()
		var list []map[string]any
		f.json("POST", "/threads/search", body, 200, &list)
		var out []string
		for _, th := range list {
			out = append(out, th["thread_id"].(string))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ body, want string }{
		{`{"sort_by":"created_at","sort_order":"asc"}`, "b c a"},
		{`{"sort_by":"created_at","sort_order":"desc"}`, "a c b"},
		{`{"sort_by":"created_at"}`, "a c b"},
		{`{"sort_by":"thread_id","sort_order":"asc"}`, "a b c"},
		{`{"sort_by":"thread_id","sort_order":"desc","limit":2}`, "c b"},
		{`{"sort_by":"thread_id","sort_order":"asc","limit":1,"offset":1}`, "b"},
		{`{"sort_by":"status","sort_order":"asc","limit":1}`, "a"},
		{`{"sort_by":"status","sort_order":"desc","limit":1}`, "b"},
		{`{"sort_by":"updated_at","sort_order":"desc"}`, "b a c"},
		{`{"sort_by":"created_at","sort_order":"asc","status":"idle"}`, "c a"},
	} {
		if got := ids(c.body); got != c.want {
			t.Errorf("search %s = %q, want %q", c.body, got, c.want)
		}
	}
}

// A thread that never ran copies to a new thread with its metadata and
// no state.
func TestCopyThreadThatNeverRan(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"n","metadata":{"user":"u"}}`, 200, nil)
	var cp map[string]any
	f.json("POST", "/threads/n/copy", "", 200, &cp)
	if cp["thread_id"] == "n" || cp["metadata"].(map[string]any)["user"] != "u" || cp["status"] != "idle" {
		t.Fatalf("copy = %v", cp)
	}
	var st map[string]any
	f.json("GET", "/threads/"+cp["thread_id"].(string)+"/state", "", 200, &st)
	if next, _ := json.Marshal(st["next"]); string(next) != `[]` {
		t.Fatalf("state of the copy: %v", st)
	}
}
