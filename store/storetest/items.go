package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// The Items subtests check a store.Items (skipped for a store that is
// not one).

func itemsOf(t *testing.T, s store.Store) store.Items {
	t.Helper()
	is, ok := s.(store.Items)
	if !ok {
		t.Skip("the store is not a store.Items")
	}
	return is
}

func mustPutItem(t *testing.T, is store.Items, ns []string, key, value string, updated time.Time) *store.Item {
	t.Helper()
	it := &store.Item{Namespace: ns, Key: key, Value: json.RawMessage(value), Updated: updated}
	if err := is.PutItem(t.Context(), it); err != nil {
		t.Fatalf("PutItem(%v, %s): %v", ns, key, err)
	}
	return it
}

// itemKeys names items as "ns/key", in the order given.
func itemKeys(items []*store.Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, store.JoinNamespace(it.Namespace)+"/"+it.Key)
	}
	return out
}

// wantInvalid checks that err wraps store.ErrInvalid and names field.
func wantInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), field) {
		t.Errorf("%s: got %v, want store.ErrInvalid naming %q", what, err, field)
	}
}

// testItemCRUD: put, get, replace (Created stays), delete (a missing item
// is not an error), values read back byte for byte, no aliasing.
func testItemCRUD(t *testing.T, s store.Store) {
	is := itemsOf(t, s)
	ctx := t.Context()
	ns := []string{"users", "u1"}
	before := time.Now()
	it := &store.Item{Namespace: ns, Key: "prefs", Value: json.RawMessage(`{"theme": "dark", "n": 1.50}`)}
	if err := is.PutItem(ctx, it); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	if it.Created.IsZero() || !it.Created.Equal(it.Updated) || it.Created.Before(before.Add(-clockSlack)) || it.Created.After(time.Now().Add(clockSlack)) {
		t.Errorf("PutItem set Created %v, Updated %v; want both now", it.Created, it.Updated)
	}
	got, err := is.Item(ctx, ns, "prefs")
	if err != nil {
		t.Fatalf("Item: %v", err)
	}
	if !slices.Equal(got.Namespace, ns) || got.Key != "prefs" || string(got.Value) != `{"theme": "dark", "n": 1.50}` ||
		!sameTime(got.Created, it.Created) || !sameTime(got.Updated, it.Updated) {
		t.Errorf("Item = %+v (value %s), want what was put: %+v", got, got.Value, it)
	}
	got.Value[2] = 'X' // the caller's copy
	got.Namespace[0] = "X"
	if again, _ := is.Item(ctx, ns, "prefs"); string(again.Value) != `{"theme": "dark", "n": 1.50}` || again.Namespace[0] != "users" {
		t.Errorf("Item after changing a returned copy = %+v %s", again, again.Value)
	}
	// The same key in another namespace, a longer one, and a shorter one
	// are other items.
	mustPutItem(t, is, []string{"users", "u2"}, "prefs", `{"theme":"light"}`, time.Time{})
	mustPutItem(t, is, []string{"users", "u1", "deep"}, "prefs", `{"theme":"deep"}`, time.Time{})
	mustPutItem(t, is, []string{"users"}, "prefs", `{"theme":"top"}`, time.Time{})

	// Replace: Created stays, Updated moves, Value changes.
	later := base().Add(100 * 24 * time.Hour)
	rep := &store.Item{Namespace: ns, Key: "prefs", Value: json.RawMessage(`{"theme":"light"}`), Created: base(), Updated: later}
	if err := is.PutItem(ctx, rep); err != nil {
		t.Fatalf("PutItem (replace): %v", err)
	}
	if !sameTime(rep.Created, it.Created) || !sameTime(rep.Updated, later) {
		t.Errorf("replace wrote back Created %v, Updated %v; want %v and %v", rep.Created, rep.Updated, it.Created, later)
	}
	got, err = is.Item(ctx, ns, "prefs")
	if err != nil || string(got.Value) != `{"theme":"light"}` || !sameTime(got.Created, it.Created) || !sameTime(got.Updated, later) {
		t.Errorf("Item after replace = %+v, %v", got, err)
	}
	for _, other := range [][]string{{"users", "u2"}, {"users", "u1", "deep"}, {"users"}} {
		if o, err := is.Item(ctx, other, "prefs"); err != nil || strings.Contains(string(o.Value), `"light"`) != (other[len(other)-1] == "u2") {
			t.Errorf("Item(%v) after replacing another = %+v, %v", other, o, err)
		}
	}

	// Delete, and delete again.
	for i := range 2 {
		if err := is.DeleteItem(ctx, ns, "prefs"); err != nil {
			t.Errorf("DeleteItem #%d: %v", i+1, err)
		}
	}
	_, err = is.Item(ctx, ns, "prefs")
	wantNotFound(t, "Item after DeleteItem", err)
	if _, err := is.Item(ctx, []string{"users", "u1", "deep"}, "prefs"); err != nil {
		t.Errorf("a longer namespace's item after DeleteItem: %v", err)
	}
	_, err = is.Item(ctx, []string{"nobody"}, "k")
	wantNotFound(t, "Item never put", err)
	// Put after delete creates afresh.
	again := mustPutItem(t, is, ns, "prefs", `{}`, time.Time{})
	if !again.Created.After(it.Created) && !again.Created.Equal(it.Created) {
		t.Errorf("re-created item's Created %v is before the first's %v", again.Created, it.Created)
	}

	// Items belong to no thread: deleting a thread leaves them.
	mustThread(t, s, "th", base())
	if err := s.DeleteThread(ctx, "th"); err != nil {
		t.Fatal(err)
	}
	if _, err := is.Item(ctx, ns, "prefs"); err != nil {
		t.Errorf("Item after deleting a thread: %v", err)
	}
}

// testItemInvalid: every validation error wraps ErrInvalid and names its
// field.
func testItemInvalid(t *testing.T, s store.Store) {
	is := itemsOf(t, s)
	ctx := t.Context()
	for _, tc := range []struct {
		what  string
		ns    []string
		key   string
		value string
		field string
	}{
		{"empty namespace", nil, "k", `{}`, "namespace"},
		{"empty label", []string{"a", ""}, "k", `{}`, "namespace"},
		{"label with a dot", []string{"a.b"}, "k", `{}`, "namespace"},
		{"empty key", []string{"a"}, "", `{}`, "key"},
		{"array value", []string{"a"}, "k", `[1]`, "value"},
		{"string value", []string{"a"}, "k", `"x"`, "value"},
		{"null value", []string{"a"}, "k", `null`, "value"},
		{"no value", []string{"a"}, "k", ``, "value"},
		{"bad JSON", []string{"a"}, "k", `{"a":}`, "value"},
		{"two values", []string{"a"}, "k", `{} {}`, "value"},
	} {
		err := is.PutItem(ctx, &store.Item{Namespace: tc.ns, Key: tc.key, Value: json.RawMessage(tc.value)})
		wantInvalid(t, "PutItem with "+tc.what, err, tc.field)
		if tc.field != "value" {
			_, err = is.Item(ctx, tc.ns, tc.key)
			wantInvalid(t, "Item with "+tc.what, err, tc.field)
			wantInvalid(t, "DeleteItem with "+tc.what, is.DeleteItem(ctx, tc.ns, tc.key), tc.field)
		}
	}
	wantInvalid(t, "PutItem(nil)", is.PutItem(ctx, nil), "item")
	_, err := is.SearchItems(ctx, store.ItemQuery{Limit: -1})
	wantInvalid(t, "SearchItems with a negative limit", err, "limit")
	_, err = is.SearchItems(ctx, store.ItemQuery{Offset: -1})
	wantInvalid(t, "SearchItems with a negative offset", err, "offset")
	_, err = is.SearchItems(ctx, store.ItemQuery{Prefix: []string{"a.b"}})
	wantInvalid(t, "SearchItems with a dotted prefix", err, "prefix")
	_, err = is.SearchItems(ctx, store.ItemQuery{Filter: map[string]json.RawMessage{"x": json.RawMessage(`{"$like": 1}`)}})
	wantInvalid(t, "SearchItems with an unknown operator", err, "filter")
	_, err = is.SearchItems(ctx, store.ItemQuery{Filter: map[string]json.RawMessage{"x": json.RawMessage(`{`)}})
	wantInvalid(t, "SearchItems with a filter not JSON", err, "filter")
	for _, q := range []store.NamespaceQuery{{Limit: -1}, {Offset: -1}, {MaxDepth: -1}} {
		_, err = is.Namespaces(ctx, q)
		wantInvalid(t, fmt.Sprintf("Namespaces(%+v)", q), err, "negative")
	}
	_, err = is.Namespaces(ctx, store.NamespaceQuery{Suffix: []string{""}})
	wantInvalid(t, "Namespaces with an empty suffix label", err, "suffix")
	// Nothing was stored.
	if got, err := is.SearchItems(ctx, store.ItemQuery{}); err != nil || len(got) != 0 {
		t.Errorf("SearchItems after refused puts = %v, %v", itemKeys(got), err)
	}
}

// testItemSearch: prefix selection, order (updated desc, then key), limit
// and offset, and filter semantics.
func testItemSearch(t *testing.T, s store.Store) {
	is := itemsOf(t, s)
	ctx := t.Context()
	at := func(m int) time.Time { return base().Add(time.Duration(m) * time.Minute) }
	mustPutItem(t, is, []string{"docs"}, "a", `{"n": 1, "kind": "note", "tags": ["x", "y"], "meta": {"a": 1, "b": {"c": true}}}`, at(1))
	mustPutItem(t, is, []string{"docs", "sub"}, "b", `{"n": 2.0, "kind": "note", "meta": {"b": {"c": true}, "a": 1.0}}`, at(3))
	mustPutItem(t, is, []string{"docs", "sub", "deeper"}, "c", `{"n": 3, "kind": "memo", "tags": ["y", "x"]}`, at(2))
	mustPutItem(t, is, []string{"docs", "sub"}, "d", `{"n": 10, "kind": "note", "s": "b"}`, at(3)) // ties b by time
	mustPutItem(t, is, []string{"docsx"}, "e", `{"n": 1}`, at(9))                                  // not under docs
	mustPutItem(t, is, []string{"doc"}, "f", `{"n": 1}`, at(9))                                    // nor this
	mustPutItem(t, is, []string{"other", "docs"}, "g", `{"n": 1.0, "s": "a"}`, at(8))

	search := func(q store.ItemQuery) []string {
		t.Helper()
		got, err := is.SearchItems(ctx, q)
		if err != nil {
			t.Fatalf("SearchItems(%+v): %v", q, err)
		}
		return itemKeys(got)
	}
	check := func(what string, q store.ItemQuery, want ...string) {
		t.Helper()
		if got := search(q); !slices.Equal(got, want) {
			t.Errorf("%s: SearchItems = %v, want %v", what, got, want)
		}
	}
	f := func(kv ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = json.RawMessage(kv[i+1])
		}
		return m
	}
	check("prefix docs", store.ItemQuery{Prefix: []string{"docs"}}, "docs.sub/b", "docs.sub/d", "docs.sub.deeper/c", "docs/a")
	check("prefix docs.sub", store.ItemQuery{Prefix: []string{"docs", "sub"}}, "docs.sub/b", "docs.sub/d", "docs.sub.deeper/c")
	check("exact deepest", store.ItemQuery{Prefix: []string{"docs", "sub", "deeper"}}, "docs.sub.deeper/c")
	check("prefix past every namespace", store.ItemQuery{Prefix: []string{"docs", "sub", "deeper", "no"}})
	check("no prefix", store.ItemQuery{}, "docsx/e", "doc/f", "other.docs/g", "docs.sub/b", "docs.sub/d", "docs.sub.deeper/c", "docs/a")
	check("limit", store.ItemQuery{Limit: 2}, "docsx/e", "doc/f")
	check("offset", store.ItemQuery{Offset: 5, Limit: 1}, "docs.sub.deeper/c")
	check("offset past the end", store.ItemQuery{Offset: 50})

	// Filters: numbers by value, nested objects in any key order.
	check("n = 1 (1 and 1.0)", store.ItemQuery{Filter: f("n", `1`)}, "docsx/e", "doc/f", "other.docs/g", "docs/a")
	check("n = 2 matches 2.0", store.ItemQuery{Filter: f("n", `2`)}, "docs.sub/b")
	check("n = 1e0 under docs", store.ItemQuery{Prefix: []string{"docs"}, Filter: f("n", `1e0`)}, "docs/a")
	check("nested object, keys reordered, 1 vs 1.0", store.ItemQuery{Filter: f("meta", `{"b": {"c": true}, "a": 1}`)}, "docs.sub/b", "docs/a")
	check("nested object differs", store.ItemQuery{Filter: f("meta", `{"a": 1}`)})
	check("array in order", store.ItemQuery{Filter: f("tags", `["x", "y"]`)}, "docs/a")
	check("two fields", store.ItemQuery{Filter: f("kind", `"note"`, "n", `10`)}, "docs.sub/d")
	check("missing field", store.ItemQuery{Filter: f("nope", `1`)})
	check("$eq", store.ItemQuery{Filter: f("kind", `{"$eq": "memo"}`)}, "docs.sub.deeper/c")
	check("$ne (missing passes)", store.ItemQuery{Prefix: []string{"docs"}, Filter: f("kind", `{"$ne": "note"}`)}, "docs.sub.deeper/c")
	check("$gt", store.ItemQuery{Filter: f("n", `{"$gt": 2}`)}, "docs.sub/d", "docs.sub.deeper/c")
	check("$gte 2.0", store.ItemQuery{Filter: f("n", `{"$gte": 2.0}`)}, "docs.sub/b", "docs.sub/d", "docs.sub.deeper/c")
	check("$lt and $gte", store.ItemQuery{Filter: f("n", `{"$gte": 2, "$lt": 10}`)}, "docs.sub/b", "docs.sub.deeper/c")
	check("$lte", store.ItemQuery{Prefix: []string{"docs"}, Filter: f("n", `{"$lte": 1}`)}, "docs/a")
	check("strings compare", store.ItemQuery{Filter: f("s", `{"$gt": "a"}`)}, "docs.sub/d")
	check("number vs string never orders", store.ItemQuery{Filter: f("s", `{"$gt": 0}`)})
	check("filter with limit and offset", store.ItemQuery{Filter: f("n", `1`), Offset: 1, Limit: 2}, "doc/f", "other.docs/g")

	// Without a limit, DefaultItemLimit.
	var want []string
	for i := range store.DefaultItemLimit + 2 {
		k := fmt.Sprintf("k%02d", i)
		mustPutItem(t, is, []string{"many"}, k, `{}`, at(100))
		if i < store.DefaultItemLimit {
			want = append(want, "many/"+k)
		}
	}
	check("default limit", store.ItemQuery{Prefix: []string{"many"}}, want...)
}

// testNamespaces: distinct namespaces, sorted, with prefix, suffix,
// wildcards, max depth, limit and offset.
func testNamespaces(t *testing.T, s store.Store) {
	is := itemsOf(t, s)
	ctx := t.Context()
	for _, ns := range [][]string{
		{"a", "b", "c"}, {"a", "b", "c"}, {"a", "b"}, {"a", "x", "c"}, {"a", "b", "d", "e"}, {"b"}, {"ab", "c"},
	} {
		mustPutItem(t, is, ns, fmt.Sprintf("k%d", len(ns)), `{}`, time.Time{})
	}
	mustPutItem(t, is, []string{"a", "b", "c"}, "another", `{}`, time.Time{})
	list := func(q store.NamespaceQuery, want ...[]string) {
		t.Helper()
		got, err := is.Namespaces(ctx, q)
		if err != nil {
			t.Fatalf("Namespaces(%+v): %v", q, err)
		}
		if want == nil {
			want = [][]string{}
		}
		if got == nil {
			got = [][]string{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Namespaces(%+v) = %v, want %v", q, got, want)
		}
	}
	list(store.NamespaceQuery{}, []string{"a", "b"}, []string{"a", "b", "c"}, []string{"a", "b", "d", "e"}, []string{"a", "x", "c"}, []string{"ab", "c"}, []string{"b"})
	list(store.NamespaceQuery{Prefix: []string{"a"}}, []string{"a", "b"}, []string{"a", "b", "c"}, []string{"a", "b", "d", "e"}, []string{"a", "x", "c"})
	list(store.NamespaceQuery{Prefix: []string{"a", "b"}}, []string{"a", "b"}, []string{"a", "b", "c"}, []string{"a", "b", "d", "e"})
	list(store.NamespaceQuery{Suffix: []string{"c"}}, []string{"a", "b", "c"}, []string{"a", "x", "c"}, []string{"ab", "c"})
	list(store.NamespaceQuery{Prefix: []string{"a"}, Suffix: []string{"c"}}, []string{"a", "b", "c"}, []string{"a", "x", "c"})
	list(store.NamespaceQuery{Prefix: []string{"a", "*", "c"}}, []string{"a", "b", "c"}, []string{"a", "x", "c"})
	list(store.NamespaceQuery{Suffix: []string{"*", "c"}}, []string{"a", "b", "c"}, []string{"a", "x", "c"}, []string{"ab", "c"})
	list(store.NamespaceQuery{MaxDepth: 1}, []string{"a"}, []string{"ab"}, []string{"b"})
	list(store.NamespaceQuery{Prefix: []string{"a"}, MaxDepth: 2}, []string{"a", "b"}, []string{"a", "x"})
	list(store.NamespaceQuery{Limit: 2, Offset: 1}, []string{"a", "b", "c"}, []string{"a", "b", "d", "e"})
	list(store.NamespaceQuery{Prefix: []string{"zz"}})
	// A namespace goes with its last item.
	if err := is.DeleteItem(ctx, []string{"ab", "c"}, "k2"); err != nil {
		t.Fatal(err)
	}
	list(store.NamespaceQuery{MaxDepth: 1}, []string{"a"}, []string{"b"})
}
