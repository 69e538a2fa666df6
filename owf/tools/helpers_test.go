package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// rec is a request as the fake server received it.
type rec struct {
	Method string
	URI    string // path and query, as sent
	Header http.Header
	Body   string
}

// fake is a test server that records every request.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []rec
}

// newFake answers every request with status, Content-Type ctype and body.
func newFake(t *testing.T, status int, ctype, body string) *fake {
	t.Helper()
	return newFakeFunc(t, func(w http.ResponseWriter, r *http.Request) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

// newFakeFunc records each request, then calls h.
func newFakeFunc(t *testing.T, h http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, rec{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: string(b)})
		f.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// count is the number of requests received.
func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// only returns the one request received, failing the test otherwise.
func (f *fake) only(t *testing.T) rec {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) != 1 {
		t.Fatalf("server got %d requests, want 1: %+v", len(f.reqs), f.reqs)
	}
	return f.reqs[0]
}

// hangUp takes the connection over and closes it without answering.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// predefined returns a predefined tool or fails the test.
func predefined(t *testing.T, name string, opts Options) *Tool {
	t.Helper()
	tool, err := Predefined(name, opts)
	if err != nil {
		t.Fatalf("Predefined(%q): %v", name, err)
	}
	return tool
}

// call runs a tool with arguments given as JSON text.
func call(t *testing.T, tool *Tool, args string) (string, error) {
	t.Helper()
	return tool.Call(context.Background(), json.RawMessage(args))
}

// mustCall runs a tool and fails the test on an error.
func mustCall(t *testing.T, tool *Tool, args string) string {
	t.Helper()
	out, err := call(t, tool, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Def.Name, args, err)
	}
	return out
}

// wantHeader checks one header's values.
func wantHeader(t *testing.T, r rec, name string, want ...string) {
	t.Helper()
	got := r.Header.Values(name)
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Errorf("header %s = %q, want %q", name, got, want)
	}
}

// asError checks that err is a *E and returns it.
func asError[E error](t *testing.T, err error) E {
	t.Helper()
	var e E
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a %T", err, err, e)
	}
	return e
}

// eq fails the test when got != want, showing both.
func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}
