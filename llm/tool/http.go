package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weftlang/weft/llm"
)

// HTTP tool defaults.
const (
	DefaultHTTPTimeout = 30 * time.Second
	DefaultMaxBody     = 64 << 10 // bytes of a response body the model gets
	MaxRedirects       = 5        // redirects the http_request tool follows
)

// DefaultHTTPHeaders are the response headers the http_request tool
// returns when HTTPOptions.Headers is nil.
func DefaultHTTPHeaders() []string {
	return []string{"Content-Type", "Content-Length", "Location", "Retry-After", "Last-Modified", "ETag"}
}

// HTTPOptions configures the http_request tool. The zero value allows
// every http and https URL.
type HTTPOptions struct {
	// Allow, if not nil, must return true for a URL (the request's, and
	// each redirect's) to be fetched; a refused URL is a tool error.
	Allow func(*url.URL) bool
	// Timeout bounds one request, redirects and reading the body
	// included; 0 means DefaultHTTPTimeout.
	Timeout time.Duration
	// MaxBody is how many bytes of a response body the model gets; 0
	// means DefaultMaxBody. A longer body is cut and the result says so.
	MaxBody int
	// Headers lists the response headers returned to the model; nil
	// means DefaultHTTPHeaders.
	Headers []string
	// Header is added to every request, over the headers the model sets
	// (for a User-Agent, or credentials the model should not see).
	Header http.Header
}

// HTTPArgs are the arguments of the http_request tool.
type HTTPArgs struct {
	Method  string            `json:"method,omitempty" enum:"GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS" desc:"the HTTP method; GET when omitted"`
	URL     string            `json:"url" desc:"the absolute http or https URL to request"`
	Headers map[string]string `json:"headers,omitempty" desc:"request headers, by name"`
	Body    string            `json:"body,omitempty" desc:"the request body, as text"`
}

// HTTPResult is the result of the http_request tool.
type HTTPResult struct {
	Status    int               `json:"status"`            // the HTTP status code
	URL       string            `json:"url"`               // the URL that answered, after redirects
	Headers   map[string]string `json:"headers,omitempty"` // the selected response headers
	Body      string            `json:"body"`              // the body as text, cut to MaxBody bytes
	Truncated bool              `json:"truncated,omitempty"`
	Note      string            `json:"note,omitempty"` // says how the body was cut
}

// HTTP returns the "http_request" tool: it makes an HTTP request with the
// model's method (GET by default), URL, headers and body, and returns the
// status, the response headers of opts.Headers and the body as text, cut
// to opts.MaxBody bytes. It follows at most MaxRedirects redirects, each
// checked with opts.Allow. A status such as 404 or 500 is a result; a
// request that gets no response (a refused host or URL, a refused
// connection, a timeout, too many redirects) is a tool error, which the
// loop sends back to the model.
//
// client is not modified; nil means http.DefaultClient. Its Transport and
// Jar are used; its CheckRedirect, if any, is called after the tool's own
// checks.
func HTTP(client *http.Client, opts HTTPOptions) *Tool {
	if client == nil {
		client = http.DefaultClient
	}
	h := &httpTool{opts: opts, timedOut: errors.New("the http_request timeout expired")}
	if h.opts.Timeout <= 0 {
		h.opts.Timeout = DefaultHTTPTimeout
	}
	if h.opts.MaxBody <= 0 {
		h.opts.MaxBody = DefaultMaxBody
	}
	if h.opts.Headers == nil {
		h.opts.Headers = DefaultHTTPHeaders()
	}
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > MaxRedirects {
			return &RedirectLimitError{Max: MaxRedirects}
		}
		if !h.allowed(req.URL) {
			return &NotAllowedError{URL: req.URL.Redacted()}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	h.client = &c
	t, err := Func("http_request", "Make an HTTP request and get the status, selected headers and body (as text) of the response.", h.do)
	if err != nil {
		// Cannot happen: HTTPArgs has a schema. Still, never panic.
		return &Tool{
			Def: llm.Tool{Name: "http_request"},
			Run: func(context.Context, json.RawMessage) (any, error) { return nil, err },
		}
	}
	return t
}

type httpTool struct {
	opts     HTTPOptions
	client   *http.Client
	timedOut error // the cause of the timeout's context
}

// cutRune drops a last character that a cut left incomplete.
func cutRune(data []byte) []byte {
	i := len(data) - 1
	for i >= 0 && i > len(data)-utf8.UTFMax && !utf8.RuneStart(data[i]) {
		i--
	}
	if i >= 0 && !utf8.FullRune(data[i:]) {
		return data[:i]
	}
	return data
}

// allowed reports whether u may be fetched.
func (h *httpTool) allowed(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return false
	}
	return h.opts.Allow == nil || h.opts.Allow(u)
}

func (h *httpTool) do(ctx context.Context, a HTTPArgs) (*HTTPResult, error) {
	method := a.Method
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return nil, &HTTPError{Method: method, URL: a.URL, Err: err}
	}
	if !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, &HTTPError{Method: method, URL: a.URL, Err: errors.New("not an absolute http or https URL")}
	}
	if !h.allowed(u) {
		return nil, &NotAllowedError{URL: u.Redacted()}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, h.opts.Timeout, h.timedOut)
	defer cancel()
	var body io.Reader
	if a.Body != "" {
		body = strings.NewReader(a.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, &HTTPError{Method: method, URL: u.Redacted(), Err: err}
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	if a.Body != "" && req.Header.Get("Content-Type") == "" {
		if json.Valid([]byte(a.Body)) {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	for k, vs := range h.opts.Header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, h.fail(ctx, method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.opts.MaxBody)+1))
	if err != nil {
		return nil, h.fail(ctx, method, u, fmt.Errorf("reading the body: %w", err))
	}
	res := &HTTPResult{Status: resp.StatusCode, URL: resp.Request.URL.Redacted()}
	if len(data) > h.opts.MaxBody {
		data = data[:h.opts.MaxBody]
		data = cutRune(data)
		res.Truncated = true
		res.Note = fmt.Sprintf("the body was truncated to its first %d bytes", len(data))
		if resp.ContentLength > 0 {
			res.Note += fmt.Sprintf(" of %d", resp.ContentLength)
		}
	}
	res.Body = strings.ToValidUTF8(string(data), "\uFFFD")
	for _, name := range h.opts.Headers {
		if v := resp.Header.Values(name); len(v) > 0 {
			if res.Headers == nil {
				res.Headers = map[string]string{}
			}
			res.Headers[http.CanonicalHeaderKey(name)] = strings.Join(v, ", ")
		}
	}
	return res, nil
}

// fail turns a client error into the tool's error.
func (h *httpTool) fail(ctx context.Context, method string, u *url.URL, err error) error {
	var na *NotAllowedError
	if errors.As(err, &na) {
		return &HTTPError{Method: method, URL: u.Redacted(), Err: fmt.Errorf("redirect refused: %w", na)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the url.Error repeats the method and URL
	}
	e := &HTTPError{Method: method, URL: u.Redacted(), Err: err}
	if context.Cause(ctx) == h.timedOut {
		e.Timeout = h.opts.Timeout
	}
	return e
}
