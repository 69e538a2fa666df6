package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tool"
)

// httpServer serves the test routes on loopback; hits counts /loop requests.
func httpServer(t *testing.T, hits *atomic.Int32) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Set-Cookie", "secret=1")
		fmt.Fprint(w, `{"hello":"world"}`)
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "%s %s ct=%s x=%s ua=%s", r.Method, b, r.Header.Get("Content-Type"), r.Header.Get("X-Test"), r.Header.Get("User-Agent"))
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(100_000))
		io.WriteString(w, strings.Repeat("é", 50_000)) // 2 bytes each
	})
	mux.HandleFunc("GET /missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("GET /hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusFound)
	})
	mux.HandleFunc("GET /away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://blocked.invalid/", http.StatusFound)
	})
	mux.HandleFunc("GET /loop", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// onlyLoopback allows the test server's host only.
func onlyLoopback(u *url.URL) bool { return u.Hostname() == "127.0.0.1" }

func callHTTP(t *testing.T, h *tool.Tool, args map[string]any) (*tool.HTTPResult, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	content, err := h.Call(context.Background(), raw)
	if err != nil {
		return nil, err
	}
	var res tool.HTTPResult
	if err := json.Unmarshal([]byte(content), &res); err != nil {
		t.Fatalf("result %s: %v", content, err)
	}
	return &res, nil
}

func TestHTTPGet(t *testing.T) {
	srv := httpServer(t, nil)
	h := tool.HTTP(srv.Client(), tool.HTTPOptions{Allow: onlyLoopback})
	if h.Def.Name != "http_request" {
		t.Errorf("name = %q", h.Def.Name)
	}
	res, err := callHTTP(t, h, map[string]any{"url": srv.URL + "/hello"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || res.Body != `{"hello":"world"}` || res.Truncated {
		t.Errorf("result = %+v", res)
	}
	if res.Headers["Content-Type"] != "application/json" || res.Headers["Etag"] != `"v1"` {
		t.Errorf("headers = %v", res.Headers)
	}
	if _, ok := res.Headers["Set-Cookie"]; ok {
		t.Error("Set-Cookie returned although not selected")
	}
	// A redirect is followed; the result names the final URL.
	res, err = callHTTP(t, h, map[string]any{"url": srv.URL + "/hop"})
	if err != nil || res.Status != 200 || res.URL != srv.URL+"/hello" {
		t.Errorf("redirect: %+v, %v", res, err)
	}
	// An HTTP error status is a result, not a tool error.
	res, err = callHTTP(t, h, map[string]any{"url": srv.URL + "/missing"})
	if err != nil || res.Status != 404 || !strings.Contains(res.Body, "no such page") {
		t.Errorf("404: %+v, %v", res, err)
	}
}

func TestHTTPPost(t *testing.T) {
	srv := httpServer(t, nil)
	h := tool.HTTP(srv.Client(), tool.HTTPOptions{
		Header: http.Header{"User-Agent": {"weft-test"}},
	})
	res, err := callHTTP(t, h, map[string]any{
		"method":  "POST",
		"url":     srv.URL + "/echo",
		"headers": map[string]string{"x-test": "yes"},
		"body":    `{"n":1}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `POST {"n":1} ct=application/json x=yes ua=weft-test`; res.Status != 201 || res.Body != want {
		t.Errorf("got %d %q, want 201 %q", res.Status, res.Body, want)
	}
	res, err = callHTTP(t, h, map[string]any{"method": "POST", "url": srv.URL + "/echo", "body": "plain words",
		"headers": map[string]string{"Content-Type": "text/csv"}})
	if err != nil || res.Body != "POST plain words ct=text/csv x= ua=weft-test" {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestHTTPTruncates(t *testing.T) {
	srv := httpServer(t, nil)
	h := tool.HTTP(srv.Client(), tool.HTTPOptions{MaxBody: 1001})
	res, err := callHTTP(t, h, map[string]any{"url": srv.URL + "/big"})
	if err != nil {
		t.Fatal(err)
	}
	// 1001 bytes would cut an "é" in two: the half is dropped.
	if !res.Truncated || len(res.Body) != 1000 || res.Body != strings.Repeat("é", 500) {
		t.Errorf("truncated=%v, %d bytes", res.Truncated, len(res.Body))
	}
	if res.Note != "the body was truncated to its first 1000 bytes of 100000" {
		t.Errorf("note = %q", res.Note)
	}
	// The default is 64 KiB.
	res, err = callHTTP(t, tool.HTTP(srv.Client(), tool.HTTPOptions{}), map[string]any{"url": srv.URL + "/big"})
	if err != nil || !res.Truncated || len(res.Body) != tool.DefaultMaxBody {
		t.Errorf("default: truncated=%v, %d bytes, %v", res.Truncated, len(res.Body), err)
	}
}

func TestHTTPRefused(t *testing.T) {
	var hits atomic.Int32
	srv := httpServer(t, &hits)
	h := tool.HTTP(srv.Client(), tool.HTTPOptions{Allow: onlyLoopback, Timeout: 200 * time.Millisecond})
	var na *tool.NotAllowedError
	var he *tool.HTTPError

	_, err := callHTTP(t, h, map[string]any{"url": "http://example.com/"})
	if !errors.As(err, &na) || err.Error() != "requests to http://example.com/ are not allowed" {
		t.Errorf("disallowed host: %v", err)
	}
	_, err = callHTTP(t, h, map[string]any{"url": "file:///etc/passwd"})
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "not an absolute http or https URL") {
		t.Errorf("file URL: %v", err)
	}
	_, err = callHTTP(t, h, map[string]any{"url": srv.URL + "/away"})
	if !errors.As(err, &na) || !errors.As(err, &he) || !strings.Contains(err.Error(), "redirect refused: requests to http://blocked.invalid/ are not allowed") {
		t.Errorf("redirect to a disallowed host: %v", err)
	}
	var rl *tool.RedirectLimitError
	_, err = callHTTP(t, h, map[string]any{"url": srv.URL + "/loop"})
	if !errors.As(err, &rl) || !strings.Contains(err.Error(), "stopped after 5 redirects") {
		t.Errorf("redirect loop: %v", err)
	}
	if n := hits.Load(); n != 1+tool.MaxRedirects {
		t.Errorf("the loop was requested %d times, want %d", n, 1+tool.MaxRedirects)
	}
	start := time.Now()
	_, err = callHTTP(t, h, map[string]any{"url": srv.URL + "/slow"})
	if !errors.As(err, &he) || he.Timeout != 200*time.Millisecond || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Errorf("timeout: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	// A port nobody listens on: connection refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = callHTTP(t, h, map[string]any{"url": "http://" + addr + "/"})
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("connection refused: %v", err)
	}
	// A method outside the enum is an argument error.
	var ae *tool.ArgsError
	if _, err = callHTTP(t, h, map[string]any{"method": "get", "url": srv.URL}); !errors.As(err, &ae) {
		t.Errorf("method: %v", err)
	}
}

func TestHTTPInLoop(t *testing.T) {
	srv := httpServer(t, nil)
	reg, err := tool.NewRegistry(tool.HTTP(srv.Client(), tool.HTTPOptions{Allow: onlyLoopback}))
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(
		callTools(
			tc("c1", "http_request", fmt.Sprintf(`{"url":%q}`, srv.URL+"/hello")),
			tc("c2", "http_request", `{"url":"http://metadata.internal/latest"}`),
		),
		func(req *llm.Request) (*llm.Response, error) {
			msgs := req.Messages[len(req.Messages)-2:]
			if !strings.Contains(msgs[0].Content, `"status":200`) || !strings.Contains(msgs[0].Content, `"body":"{\"hello\":\"world\"}"`) {
				t.Errorf("first result = %s", msgs[0].Content)
			}
			if msgs[1].Content != "error: requests to http://metadata.internal/latest are not allowed" {
				t.Errorf("second result = %s", msgs[1].Content)
			}
			return answer("world")(req)
		},
	)
	res, err := tool.Loop(context.Background(), m, user("fetch"), reg, tool.LoopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Response.Message.Content != "world" {
		t.Errorf("answer = %q", res.Response.Message.Content)
	}
	if d := m.reqs[0].Tools; len(d) != 1 || d[0].Name != "http_request" {
		t.Errorf("tools = %+v", d)
	}
}

func TestHTTPDoesNotModifyClient(t *testing.T) {
	c := &http.Client{}
	tool.HTTP(c, tool.HTTPOptions{})
	if c.CheckRedirect != nil {
		t.Error("HTTP changed the caller's client")
	}
	if h := tool.HTTP(nil, tool.HTTPOptions{}); h.Run == nil {
		t.Error("HTTP(nil) has no Run")
	}
}
