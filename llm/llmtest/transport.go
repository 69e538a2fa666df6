package llmtest

import (
	"net/http"
	"sync/atomic"
)

// CountingTransport is an http.RoundTripper that counts the requests a
// client sends through it, then sends them with http.DefaultTransport: a
// test's way to see how many attempts a client made, even to a server
// that is down and so records nothing. It is safe for concurrent use.
type CountingTransport struct{ n atomic.Int64 }

// RoundTrip counts r and sends it.
func (c *CountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// Count returns the number of requests sent so far.
func (c *CountingTransport) Count() int { return int(c.n.Load()) }
