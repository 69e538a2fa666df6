package wire

import (
	"bytes"
	"context"
	"net/http"
	"net/url"

	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm"
)

// NewHTTPClient returns the client providers use when none is configured:
// the default transport with room for enough idle connections per host
// that concurrent calls reuse them.
func NewHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	return &http.Client{Transport: tr}
}

// Post sends a JSON body to url and returns the response of a 200 reply;
// the caller closes its body. extra headers (the user's) go first, then
// Content-Type, Accept (streamAccept when streaming, else JSON) and the
// provider's own headers. A failed request is an *llm.Error from
// RequestError; another status is what statusError makes of the response
// (its body is closed).
func Post(ctx context.Context, provider string, hc *http.Client, url string, body []byte,
	extra, own http.Header, stream bool, streamAccept string, statusError func(*http.Response) error) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &llm.Error{Provider: provider, Message: "cannot build the request: " + err.Error(), Err: err}
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	accept := "application/json"
	if stream {
		accept = streamAccept
	}
	vals := []string{"application/json", accept} // one allocation for both
	req.Header["Content-Type"], req.Header["Accept"] = vals[0:1:1], vals[1:2:2]
	for k, v := range own {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, RequestError(provider, ctx, absURLError(err, req.URL, resp))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return resp, nil
}

// absURLError returns err, a *url.Error from http.Client.Do, naming an
// absolute URL without credentials: net/http names the Location header
// as it came, often relative, when it stops following redirects (resp
// is then the last redirect), and the URL with its user name otherwise.
func absURLError(err error, reqURL *url.URL, resp *http.Response) error {
	ue, ok := err.(*url.Error)
	if !ok {
		return err
	}
	base := reqURL
	if resp != nil && resp.Request != nil && resp.Request.URL != nil {
		base = resp.Request.URL
	}
	u, perr := base.Parse(ue.URL)
	if perr != nil {
		return err
	}
	c := *ue
	c.URL = redact.SafeURL(u)
	return &c
}
