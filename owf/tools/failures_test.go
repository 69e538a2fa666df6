package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// caller is one way to reach a service: a tool call or a web search.
type caller struct {
	name string // the tool name errors must carry
	run  func(ctx context.Context, base string, client *http.Client) (string, error)
}

func toolCaller(t *testing.T, name, config string, opts func(base string) Options, args string) caller {
	return caller{name: name, run: func(ctx context.Context, base string, client *http.Client) (string, error) {
		o := opts(base)
		o.Client = client
		tool, err := Predefined(config, o)
		if err != nil {
			t.Fatal(err)
		}
		return tool.Call(ctx, json.RawMessage(strings.ReplaceAll(args, "BASE", base)))
	}}
}

const secretToken = "s3cret-token"

// callers reaches every service this package talks to.
func callers(t *testing.T) []caller {
	return []caller{
		toolCaller(t, JinaName, "jina", func(b string) Options { return Options{JinaURL: b + "/", JinaKey: secretToken} }, `{"website":"https://example.com"}`),
		toolCaller(t, SerperName, "serper", func(b string) Options { return Options{SerperURL: b, SerperKey: secretToken} }, `{"query":"q"}`),
		toolCaller(t, BrowserlessName, "browserless", func(b string) Options { return Options{BrowserlessURL: b, BrowserlessToken: secretToken} }, `{"website":"https://example.com"}`),
		toolCaller(t, DuckDuckGoName, "duckduckgo", func(b string) Options { return Options{DuckDuckGoURL: b + "/html/"} }, `{"query":"q"}`),
		toolCaller(t, StockName, "stock", func(b string) Options { return Options{StockURL: b + "/quote/"} }, `{"exchange":"NASDAQ","ticker":"AAPL"}`),
		toolCaller(t, ScraperName, "scraper", func(b string) Options { return Options{} }, `{"website":"BASE/page"}`),
		{name: "PriceFeed", run: func(ctx context.Context, base string, client *http.Client) (string, error) {
			tool := NewCustomHTTP(CustomHTTP{Name: "PriceFeed", URL: base + "/price", Method: "POST"}, Options{Client: client, APIKey: secretToken})
			return tool.Call(ctx, json.RawMessage(`{"symbol":"BTC"}`))
		}},
		{name: SearchSerperName, run: func(ctx context.Context, base string, client *http.Client) (string, error) {
			return WebSearch(ctx, SearchRequest{Query: "q"}, Options{Client: client, SerperURL: base, SerperKey: secretToken})
		}},
		{name: SearchDuckDuckGoName, run: func(ctx context.Context, base string, client *http.Client) (string, error) {
			return WebSearch(ctx, SearchRequest{Query: "q"}, Options{Client: client, DuckDuckGoURL: base + "/html/"})
		}},
	}
}

// checkRequestError checks that err is a *RequestError naming the tool
// and hiding the secret.
func checkRequestError(t *testing.T, c caller, err error) *RequestError {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", c.name)
	}
	e := asError[*RequestError](t, err)
	eq(t, "tool", e.Tool, c.name)
	if !strings.Contains(err.Error(), `tool "`+c.name+`"`) {
		t.Errorf("%s: message %q does not name the tool", c.name, err.Error())
	}
	if strings.Contains(err.Error(), secretToken) {
		t.Errorf("%s: message %q shows the token", c.name, err.Error())
	}
	return e
}

func TestDroppedConnection(t *testing.T) {
	for _, c := range callers(t) {
		srv := newFakeFunc(t, hangUp)
		out, err := c.run(context.Background(), srv.URL, nil)
		eq(t, c.name+" output", out, "")
		e := checkRequestError(t, c, err)
		if !errors.Is(err, io.EOF) && !strings.Contains(e.Err.Error(), "EOF") && !strings.Contains(e.Err.Error(), "reset") {
			t.Errorf("%s: cause %v is not a dropped connection", c.name, e.Err)
		}
		if srv.count() == 0 {
			t.Errorf("%s: the server got no request", c.name)
		}
	}
}

func TestDroppedConnectionMidBody(t *testing.T) {
	for _, c := range callers(t) {
		srv := newFakeFunc(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			io.WriteString(w, `{"organic":[`)
			w.(http.Flusher).Flush()
			hangUp(w, r)
		})
		_, err := c.run(context.Background(), srv.URL, nil)
		e := checkRequestError(t, c, err)
		if !strings.Contains(e.Err.Error(), "reading the response") {
			t.Errorf("%s: cause %v does not say the body was cut", c.name, e.Err)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	for _, c := range callers(t) {
		got := make(chan struct{}, 1)
		srv := newFakeFunc(t, func(w http.ResponseWriter, r *http.Request) {
			got <- struct{}{}
			<-r.Context().Done() // until the client gives up
		})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-got
			cancel()
		}()
		_, err := c.run(ctx, srv.URL, nil)
		checkRequestError(t, c, err)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v is not context.Canceled", c.name, err)
		}
		cancel()
	}
}

func TestCancelledBeforeCall(t *testing.T) {
	for _, c := range callers(t) {
		srv := newFake(t, 200, "text/plain", "{}")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.run(ctx, srv.URL, nil)
		checkRequestError(t, c, err)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v is not context.Canceled", c.name, err)
		}
		eq(t, c.name+" requests", srv.count(), 0)
	}
}

func TestClientTimeout(t *testing.T) {
	for _, c := range callers(t) {
		srv := newFakeFunc(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		})
		start := time.Now()
		_, err := c.run(context.Background(), srv.URL, &http.Client{Timeout: 50 * time.Millisecond})
		checkRequestError(t, c, err)
		var te interface{ Timeout() bool }
		if !errors.As(err, &te) || !te.Timeout() {
			t.Errorf("%s: %v is not a timeout", c.name, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: gave up after %v", c.name, d)
		}
	}
}

// endless is a body that never ends.
type endless struct{ chunk []byte }

func (e endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], e.chunk)
	}
	return n, nil
}
func (endless) Close() error { return nil }

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestBodyTooLarge(t *testing.T) {
	// A body of unknown length that goes on past MaxBody.
	client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: endless{[]byte(strings.Repeat("x", 64<<10))}, ContentLength: -1, Request: r}, nil
	})}
	_, err := call(t, predefined(t, "jina", Options{Client: client}), `{"website":"big"}`)
	e := asError[*ResponseError](t, err)
	eq(t, "message", err.Error(), `tool "jina_web_scraper": the response body is larger than 32 MiB`)
	eq(t, "tool", e.Tool, JinaName)
}

func TestBodyTooLargeByLength(t *testing.T) {
	srv := newFakeFunc(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(MaxBody+1))
		w.WriteHeader(200)
		io.WriteString(w, "the rest never comes")
	})
	_, err := call(t, predefined(t, "scraper", Options{}), `{"website":"`+srv.URL+`"}`)
	e := asError[*ResponseError](t, err)
	eq(t, "tool", e.Tool, ScraperName)
}

func TestContextDeadline(t *testing.T) {
	srv := newFakeFunc(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := predefined(t, "scraper", Options{}).Call(ctx, json.RawMessage(`{"website":"`+srv.URL+`"}`))
	asError[*RequestError](t, err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v is not context.DeadlineExceeded", err)
	}
}
