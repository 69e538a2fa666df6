package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"
)

// httpc is the HTTP side of a tool: one client, shared by the calls of
// one Tool.
type httpc struct {
	client *http.Client
}

// request describes one call to a service.
type request struct {
	tool    string // the tool's name, for errors
	method  string
	url     string
	shown   string // the URL in errors; "" means url
	header  http.Header
	body    []byte // nil: no body
	jsonCT  bool   // set Content-Type: application/json unless header has one
	noCache bool   // set Cache-Control: no-cache
}

// response is a complete response: status, headers and body.
type response struct {
	status int
	header http.Header
	body   []byte
}

// text is the body decoded as reqwest's Response::text decodes it: the
// charset of Content-Type (UTF-8 by default), invalid bytes replaced.
func (r *response) text() string {
	if _, params, err := mime.ParseMediaType(r.header.Get("Content-Type")); err == nil {
		if cs := params["charset"]; cs != "" && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
			if enc, err := htmlindex.Get(cs); err == nil {
				if b, err := enc.NewDecoder().Bytes(r.body); err == nil {
					return validUTF8(b)
				}
			}
		}
	}
	return validUTF8(r.body)
}

// validUTF8 returns b as a string with each invalid byte replaced by U+FFFD.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

// do sends the request and reads the whole response. A failure to send or
// to read is a *RequestError; a body over MaxBody is a *ResponseError.
func (h *httpc) do(ctx context.Context, r request) (*response, error) {
	shown := r.shown
	if shown == "" {
		shown = r.url
	}
	fail := func(err error) error {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error repeats the URL, which may hold a token.
			err = ue.Err
		}
		return &RequestError{Tool: r.tool, Method: r.method, URL: shown, Err: err}
	}
	var body io.Reader
	if r.body != nil {
		body = strings.NewReader(string(r.body))
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		return nil, fail(err)
	}
	for k, vs := range r.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if r.noCache {
		req.Header.Set("Cache-Control", "no-cache")
	}
	if r.jsonCT && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = errors.Join(ctxErr, err)
		}
		return nil, fail(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength > MaxBody {
		return nil, &ResponseError{Tool: r.tool, Reason: "the response body is larger than 32 MiB"}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, fail(errors.Join(errors.New("reading the response"), err))
	}
	if len(data) > MaxBody {
		return nil, &ResponseError{Tool: r.tool, Reason: "the response body is larger than 32 MiB"}
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// statusError returns a *StatusError for a non-2xx response, else nil.
func statusError(tool string, r *response) error {
	if r.status >= 200 && r.status < 300 {
		return nil
	}
	b := r.body
	if len(b) > 512 {
		b = b[:512]
	}
	return &StatusError{Tool: tool, Status: r.status, Body: strings.TrimSpace(validUTF8(b))}
}

// argsObject decodes tool-call arguments into an object; empty or null is {}.
func argsObject(tool string, args json.RawMessage) (map[string]json.RawMessage, error) {
	s := strings.TrimSpace(string(args))
	if s == "" || s == "null" {
		return map[string]json.RawMessage{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return nil, &ArgsError{Tool: tool, Reason: "not valid JSON: " + s}
		}
		return nil, &ArgsError{Tool: tool, Reason: "not a JSON object: " + s}
	}
	return m, nil
}

// str returns the argument k if it is a JSON string (serde's as_str).
func str(m map[string]json.RawMessage, k string) (string, bool) {
	raw, ok := m[k]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// requiredStr returns the string argument k or an *ArgsError.
func requiredStr(tool string, m map[string]json.RawMessage, k string) (string, error) {
	s, ok := str(m, k)
	if !ok {
		if _, present := m[k]; present {
			return "", &ArgsError{Tool: tool, Arg: k, Reason: "must be a string"}
		}
		return "", &ArgsError{Tool: tool, Arg: k, Reason: "is required"}
	}
	return s, nil
}
