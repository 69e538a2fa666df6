package server_test

import (
	"strings"
	"testing"
)

func TestStoreItems(t *testing.T) {
	f := newFixture(t, nil)
	if code, body := f.do("PUT", "/store/items", `{"namespace":["users","u1"],"key":"prefs","value":{"theme":"dark","n":1}}`); code != 204 {
		t.Fatalf("put: %d %s", code, body)
	}
	f.do("PUT", "/store/items", `{"namespace":["users","u2"],"key":"prefs","value":{"theme":"light","n":2}}`)
	code, body := f.do("GET", "/store/items?namespace=users.u1&key=prefs", "")
	if code != 200 || !strings.HasPrefix(body, `{"namespace":["users","u1"],"key":"prefs","value":{"theme":"dark","n":1},"created_at":"`) {
		t.Fatalf("get: %d %s", code, body)
	}
	if code, body := f.do("GET", "/store/items?namespace=users.u9&key=prefs", ""); code != 200 || strings.TrimSpace(body) != "null" {
		t.Fatalf("get a missing item: %d %s", code, body)
	}
	code, body = f.do("POST", "/store/items/search", `{"namespace_prefix":["users"],"filter":{"n":2.0}}`)
	if code != 200 || !strings.Contains(body, `"namespace":["users","u2"]`) || strings.Contains(body, `"u1"`) {
		t.Fatalf("search: %d %s", code, body)
	}
	code, body = f.do("POST", "/store/namespaces", `{"prefix":["users"],"max_depth":1}`)
	if code != 200 || strings.TrimSpace(body) != `{"namespaces":[["users"]]}` {
		t.Fatalf("namespaces: %d %s", code, body)
	}
	if code, body := f.do("DELETE", "/store/items", `{"namespace":["users","u1"],"key":"prefs"}`); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	if _, body := f.do("GET", "/store/items?namespace=users.u1&key=prefs", ""); strings.TrimSpace(body) != "null" {
		t.Fatalf("after delete: %s", body)
	}
	for _, c := range []struct{ method, body, want string }{
		{"PUT", `{"namespace":["a.b"],"key":"k","value":{}}`, `contains`},
		{"PUT", `{"namespace":["a"],"key":"","value":{}}`, `$.key`},
		{"PUT", `{"namespace":["a"],"key":"k","value":[1]}`, `object`},
		{"POST", `{"query":"cats"}`, `$.query`},
	} {
		path := "/store/items"
		if c.method == "POST" {
			path = "/store/items/search"
		}
		code, body := f.do(c.method, path, c.body)
		if code != 422 || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want 422 with %q", c.method, c.body, code, body, c.want)
		}
	}
}
