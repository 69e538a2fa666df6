package action

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm/prompt"
)

// HTTP action limits.
const (
	// DefaultHTTPTimeout bounds a request whose context has no deadline
	// (a node without a timeout, in a run without a max_time). A node's
	// timeout, longer or shorter, replaces it.
	DefaultHTTPTimeout = 60 * time.Second
	// MaxHTTPResponse is the largest response body an HTTP action reads:
	// a longer one fails the attempt.
	MaxHTTPResponse = 4 << 20
	// HTTPErrorBodyLen is how many bytes of a non-2xx response's body an
	// *HTTPError keeps.
	HTTPErrorBodyLen = 512
)

// HTTPType is the type written `type: HTTP` in source. The compiler stores
// HTTP bindings as flow.Tool bindings with a url; a binding of either kind
// is an HTTP action (see IsHTTP).
const HTTPType flow.NodeType = "HTTP"

// defaultHTTPClient is the client of HTTP actions given none: the default
// transport's connection timeouts (30s to connect, 10s for the TLS
// handshake), at most 10 redirects, and no overall limit of its own (the
// node's timeout or DefaultHTTPTimeout bounds each request).
var defaultHTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

// IsHTTP reports whether a binding is carried out by an HTTP request: its
// type is HTTP, or TOOL with a url.
func IsHTTP(bd *flow.Binding) bool {
	return bd.Type == HTTPType || bd.Type == flow.Tool && !bd.Config["url"].IsNull()
}

// HTTPAction is an action carried out by an HTTP request (an HTTP binding,
// or a node of type HTTP with its own url).
//
// The request is built from the binding's settings, each overridable on
// the node:
//
//   - url: a template over the node's inputs ({{name}}, {{node.field}});
//     each placeholder's text is percent-encoded, every byte but
//     letters, digits and -._~, so it is one path segment or one query
//     value. The result must be an absolute http or https URL.
//   - method: GET when there is no body template, POST when there is one.
//   - headers: an object of header values, each a template (not escaped).
//   - body: a template. Without one, a POST, PUT or PATCH sends the node's
//     inputs as a JSON object by name (Content-Type: application/json);
//     other methods send no body. A templated body is sent as
//     application/json when it is valid JSON and text/plain otherwise,
//     unless the headers set Content-Type.
//
// When the run is kept in a thread (engine.Call.Key is set) the request
// carries the header "Idempotency-Key: THREAD/RUN-ID/STEP[/ITEM]". The same
// step retried, or run again after a crash, sends the same key, so a
// server that honours the header carries out its effect once. A header of
// that name in headers replaces it.
//
// The response must have a 2xx status, else the attempt fails with an
// *HTTPError. Its body (at most MaxHTTPResponse bytes) sets the node's
// outputs:
//
//   - a JSON object sets each declared output from the field of its name,
//     conformed to the output's type; a missing field is an error naming
//     the output, and other fields are ignored;
//   - a node with one output whose body is not a JSON object with that
//     field gets the whole body: its JSON value, or its text when it is
//     not JSON (a String output always gets the text unless the body is
//     a JSON string);
//   - a body whose Content-Type is JSON but which does not parse is an
//     error, as is a body that is not a JSON object when the node has two
//     or more outputs.
//
// Each request is reported as an "http" event: method, url, status,
// bytes and duration_ms.
type HTTPAction struct {
	binding *flow.Binding
	client  *http.Client
	spec    *httpSpec
}

// httpSpec is the parsed request settings of a binding or node.
type httpSpec struct {
	cfg     map[string]flow.Value // the settings it was parsed from
	method  string
	url     *prompt.Template
	escaped map[string]*prompt.Template // "{{name}}" for each URL placeholder
	headers []httpHeader
	body    *prompt.Template // nil: none
}

type httpHeader struct {
	name  string // canonical
	value *prompt.Template
}

// httpKeys are the settings an HTTP request is built from.
var httpKeys = []string{"url", "method", "headers", "body"}

// NewHTTP makes the action of an HTTP binding. client nil means a shared
// client with the default transport's connection timeouts.
func NewHTTP(bd *flow.Binding, client *http.Client) (*HTTPAction, error) {
	if client == nil {
		client = defaultHTTPClient
	}
	spec, err := parseHTTP(bd.Name, bd.Config)
	if err != nil {
		return nil, err
	}
	return &HTTPAction{binding: bd, client: client, spec: spec}, nil
}

// parseHTTP parses the request settings in cfg.
func parseHTTP(name string, cfg map[string]flow.Value) (*httpSpec, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("HTTP action %s: "+format, append([]any{name}, args...)...)
	}
	s := &httpSpec{cfg: cfg}
	u := cfg["url"]
	if u.Kind() != flow.KindString || strings.TrimSpace(u.Str()) == "" {
		return nil, fail("url must be a non-empty string, not %s", u)
	}
	var err error
	if s.url, err = prompt.Parse(u.Str()); err != nil {
		return nil, fail("url: %w", err)
	}
	s.escaped = map[string]*prompt.Template{}
	for _, p := range s.url.Placeholders() {
		if p.Func != prompt.FuncValue {
			return nil, fail("url: %d:%d: only {{name}} placeholders may be used in a URL, not {{%s %s}}", p.Line, p.Col, p.Func, p.Name)
		}
		if s.escaped[p.Name], err = prompt.Parse("{{" + p.Name + "}}"); err != nil {
			return nil, fail("url: %w", err)
		}
	}
	if b := cfg["body"]; !b.IsNull() {
		if b.Kind() != flow.KindString {
			return nil, fail("body must be a string template, not %s", b.Kind())
		}
		if s.body, err = prompt.Parse(b.Str()); err != nil {
			return nil, fail("body: %w", err)
		}
	}
	switch m := cfg["method"]; {
	case m.IsNull() && s.body != nil:
		s.method = http.MethodPost
	case m.IsNull():
		s.method = http.MethodGet
	case m.Kind() != flow.KindString || !isToken(m.Str()):
		return nil, fail("method must be an HTTP method such as GET or POST, not %s", m)
	default:
		s.method = strings.ToUpper(m.Str())
	}
	if h := cfg["headers"]; !h.IsNull() {
		if h.Kind() != flow.KindObject {
			return nil, fail(`headers must be an object such as { "Authorization": "Bearer {{token}}" }, not %s`, h.Kind())
		}
		obj := h.Object()
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !isToken(k) {
				return nil, fail("headers: %q is not a valid header name", k)
			}
			v := obj[k]
			switch v.Kind() {
			case flow.KindString, flow.KindInt, flow.KindFloat, flow.KindBool:
			default:
				return nil, fail("headers: %s must be a string, not %s", k, v.Kind())
			}
			t, err := prompt.Parse(v.Text())
			if err != nil {
				return nil, fail("headers: %s: %w", k, err)
			}
			s.headers = append(s.headers, httpHeader{name: http.CanonicalHeaderKey(k), value: t})
		}
	}
	return s, nil
}

// isToken reports whether s is a non-empty HTTP token (a method or a
// header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// specFor returns the request settings of a call: the binding's, unless
// the node overrides one of them.
func (a *HTTPAction) specFor(c *engine.Call) (*httpSpec, error) {
	if c.Config == nil {
		return a.spec, nil
	}
	for _, k := range httpKeys {
		if !c.Config[k].Equal(a.spec.cfg[k]) {
			return parseHTTP(a.binding.Name, c.Config)
		}
	}
	return a.spec, nil
}

// Run sends the request for the node's inputs and sets its outputs from
// the response.
func (a *HTTPAction) Run(ctx context.Context, c *engine.Call) error {
	s, err := a.specFor(c)
	if err != nil {
		return err
	}
	req, err := a.request(ctx, s, c)
	if err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultHTTPTimeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	// The request's credentials (its URL's password and secret query
	// values, its credential headers) are kept out of every error and
	// event: a server or proxy may quote them back.
	shown := redact.SafeURL(req.URL)
	red := func() *redact.Redactor { return redact.New(req.URL.String(), "", req.Header) }
	start := time.Now()
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("HTTP action %s: %w", a.binding.Name, red().Error(err))
	}
	defer resp.Body.Close()
	fail := func(format string, args ...any) error {
		return red().Error(fmt.Errorf("HTTP action %s: %s %s: "+format, append([]any{a.binding.Name, req.Method, shown}, args...)...))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, HTTPErrorBodyLen))
		a.report(c, req.Method, shown, resp.StatusCode, len(head), start)
		return &HTTPError{
			Action:     a.binding.Name,
			Method:     req.Method,
			URL:        shown,
			StatusCode: resp.StatusCode,
			Status:     resp.Status,
			Body:       red().String(prefix(head, HTTPErrorBodyLen)),
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxHTTPResponse+1))
	if err != nil {
		return fail("reading the response: %w", err)
	}
	a.report(c, req.Method, shown, resp.StatusCode, len(body), start)
	if len(body) > MaxHTTPResponse {
		return fail("the response body is larger than %d bytes", MaxHTTPResponse)
	}
	if err := setHTTPOutputs(c, body, isJSONType(resp.Header.Get("Content-Type"))); err != nil {
		return fail("%w", err)
	}
	return nil
}

// report emits the "http" event of a request.
func (a *HTTPAction) report(c *engine.Call, method, u string, status, n int, start time.Time) {
	c.Emit("http", flow.ObjectValue(map[string]flow.Value{
		"method":      flow.StringValue(method),
		"url":         flow.StringValue(u),
		"status":      flow.IntValue(int64(status)),
		"bytes":       flow.IntValue(int64(n)),
		"duration_ms": flow.FloatValue(float64(time.Since(start).Microseconds()) / 1000),
	}))
}

// request builds the request of a call.
func (a *HTTPAction) request(ctx context.Context, s *httpSpec, c *engine.Call) (*http.Request, error) {
	name := a.binding.Name
	values := c.InputMap()
	raw, err := s.renderURL(values)
	if err != nil {
		return nil, fmt.Errorf("HTTP action %s, url: %w", name, err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("HTTP action %s: bad url: %w", name, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("HTTP action %s: url %s is not an absolute http or https URL", name, u.Redacted())
	}
	var body []byte
	contentType := ""
	switch {
	case s.body != nil:
		text, err := s.body.Render(values)
		if err != nil {
			return nil, fmt.Errorf("HTTP action %s, body: %w", name, err)
		}
		body = []byte(text)
		contentType = "text/plain; charset=utf-8"
		if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && isJSON(trimmed) {
			contentType = "application/json"
		}
	case s.method == http.MethodPost || s.method == http.MethodPut || s.method == http.MethodPatch:
		if body, err = flow.ObjectValue(values).MarshalJSON(); err != nil {
			return nil, fmt.Errorf("HTTP action %s: encoding the inputs as JSON: %w", name, err)
		}
		contentType = "application/json"
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, s.method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("HTTP action %s: %w", name, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json, */*;q=0.5")
	req.Header.Set("User-Agent", "weft")
	if c.Key != "" {
		req.Header.Set("Idempotency-Key", c.Key)
	}
	for _, h := range s.headers {
		v, err := h.value.Render(values)
		if err != nil {
			return nil, fmt.Errorf("HTTP action %s, header %s: %w", name, h.name, err)
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("HTTP action %s: header %s: a value must not contain a line break", name, h.name)
		}
		if h.name == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(h.name, v)
	}
	return req, nil
}

// renderURL renders the URL template with each placeholder's text
// percent-encoded.
func (s *httpSpec) renderURL(values map[string]flow.Value) (string, error) {
	esc := make(map[string]flow.Value, len(s.escaped))
	for n, t := range s.escaped {
		text, err := t.Render(values)
		if err != nil {
			// Render the whole URL for an error that says where.
			if _, werr := s.url.Render(values); werr != nil {
				return "", werr
			}
			return "", err
		}
		esc[n] = flow.StringValue(escapeURL(text))
	}
	return s.url.Render(esc)
}

// escapeURL percent-encodes every byte of s but the unreserved characters
// of RFC 3986 (letters, digits, -._~).
func escapeURL(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// isJSONType reports whether a Content-Type is JSON: application/json or
// a +json type.
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// isJSON reports whether b is one JSON value.
func isJSON(b []byte) bool {
	var v flow.Value
	return v.UnmarshalJSON(b) == nil
}

// setHTTPOutputs sets the node's outputs from a response body.
func setHTTPOutputs(c *engine.Call, body []byte, jsonType bool) error {
	outs := c.Node.Outputs
	if len(outs) == 0 {
		return nil
	}
	var v flow.Value
	parsed := false
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 {
		err := v.UnmarshalJSON(trimmed)
		switch {
		case err == nil:
			parsed = true
		case jsonType:
			return fmt.Errorf("malformed JSON response: %v (body starts %q)", err, prefix(body, 120))
		}
	}
	if len(outs) == 1 {
		o := outs[0]
		if f, ok := v.Object()[o.Name]; ok && v.Kind() == flow.KindObject {
			return setConformed(c, 0, o, f)
		}
		whole := v
		if !parsed || o.Type.Kind == flow.KindString && v.Kind() != flow.KindString {
			whole = flow.StringValue(strings.ToValidUTF8(string(body), "\uFFFD"))
		}
		return setConformed(c, 0, o, whole)
	}
	if !parsed || v.Kind() != flow.KindObject {
		return fmt.Errorf("the response is not a JSON object, so it cannot set the outputs %s (body starts %q)", outputList(outs), prefix(body, 120))
	}
	obj := v.Object()
	var missing []string
	for i, o := range outs {
		f, ok := obj[o.Name]
		if !ok {
			missing = append(missing, o.Name)
			continue
		}
		if err := setConformed(c, i, o, f); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the response has no field for output %s (fields: %s)", strings.Join(missing, ", "), strings.Join(slices.Sorted(maps.Keys(obj)), ", "))
	}
	return nil
}

// setConformed sets output i to v in the output's declared type.
func setConformed(c *engine.Call, i int, o flow.PlanOutput, v flow.Value) error {
	cv, err := flow.Conform(v, o.Type)
	if err != nil {
		return fmt.Errorf("output %s: %w", o.Name, err)
	}
	c.Outputs[i] = cv
	return nil
}

func outputList(outs []flow.PlanOutput) string {
	names := make([]string, len(outs))
	for i, o := range outs {
		names[i] = o.Name
	}
	return strings.Join(names, ", ")
}

// prefix returns up to n bytes of b as valid UTF-8.
func prefix(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// HTTPError is the error of an HTTP action whose response has a status
// outside 2xx. Use errors.As to get it from a node's error.
type HTTPError struct {
	Action     string // the action's name
	Method     string
	URL        string // the request's URL, without its user and secret query values
	StatusCode int    // e.g. 404
	Status     string // e.g. "404 Not Found"
	Body       string // the first HTTPErrorBodyLen bytes of the body, the request's credentials redacted
}

// Error names the action, the request, the status and the start of the
// body.
func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("HTTP action %s: %s %s: status %s", e.Action, e.Method, e.URL, e.Status)
	if b := strings.TrimSpace(e.Body); b != "" {
		msg += ": " + b
	}
	return msg
}
