package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Policy says how a Reliable model times out, retries and limits its
// calls. The zero Policy retries up to 3 attempts in all, waiting 500 ms
// then 1 s, with no jitter, no per-call timeout and no concurrency limit;
// DefaultPolicy is the recommended starting point.
type Policy struct {
	// Timeout bounds each attempt; 0 means no per-attempt bound (ctx
	// still applies). An attempt that times out is retried like a
	// retryable error.
	Timeout time.Duration
	// MaxAttempts is the number of attempts in all, the first included;
	// 0 means 3, 1 means no retries.
	MaxAttempts int
	// Backoff is the wait before the first retry; it doubles for each
	// further retry. 0 means 500 ms.
	Backoff time.Duration
	// MaxBackoff caps the computed wait; 0 means 30 s. A server asking,
	// by Retry-After, for a longer wait than MaxBackoff ends the retries:
	// rather than blocking for that long, the call fails with an *Error
	// of KindRetryAfterTooLong whose Message names both waits (the
	// server's RetryAfter is kept).
	MaxBackoff time.Duration
	// Jitter is the fraction, in [0, 1], by which a backoff is randomly
	// shortened (and a Retry-After wait randomly lengthened), so that
	// clients failing together do not retry together.
	Jitter float64
	// Concurrency is the most calls in flight at once through this
	// model; 0 means no limit. A call waiting for a slot honours its ctx.
	// Calls do not hold a slot while they wait to retry.
	Concurrency int
	// Sleep waits for d or until ctx is done, returning ctx's error in
	// that case. Tests set it to record or skip the waits; nil means a
	// timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultPolicy returns a policy for a remote provider: 5 minutes per
// attempt, 4 attempts, 500 ms doubling to at most 30 s, 20% jitter, at
// most 4 calls in flight.
func DefaultPolicy() Policy {
	return Policy{
		Timeout:     5 * time.Minute,
		MaxAttempts: 4,
		Backoff:     500 * time.Millisecond,
		MaxBackoff:  30 * time.Second,
		Jitter:      0.2,
		Concurrency: 4,
	}
}

// Reliable wraps m with policy p: a per-attempt timeout, retries of
// retryable errors (see Error.Retryable) with exponential backoff and
// jitter, waiting at least as long as a Retry-After asks, and a limit on
// the calls in flight.
//
// A streamed call is never retried once a chunk has been delivered to
// onChunk: the caller has already seen part of a reply, and a second
// attempt would deliver a different one. Its error, which a retry might
// have fixed (a stream cut mid-way, say), then says so: its Message ends
// with "not retried, because N chunks of the reply had already been
// delivered to onChunk", and it wraps the attempt's error. A caller that
// shows nothing of the reply as it comes should pass a nil onChunk: a cut
// reply is then retried from the start.
//
// Waits and the wait for a concurrency slot end as soon as ctx is done.
// A retry is not attempted when its wait would end after ctx's deadline,
// nor when the server asks by Retry-After for a longer wait than
// Policy.MaxBackoff: the error then says so (see MaxBackoff). When the
// attempts are exhausted, the error is the last attempt's, its Message
// ending with "; gave up after N attempts", wrapping it. Either way
// errors.As finds an *Error with the attempt's Provider, Kind, Status and
// message, and errors.Is the sentinel of its Kind.
//
// Only retryable errors are retried (see Error.Retryable): a transient
// network failure, HTTP 408, 429 and 5xx, but never another 4xx (an
// unknown model, an invalid request, a prompt over the context, an
// unsupported field) nor a 500 whose message says what is wrong with the
// request.
func Reliable(m Model, p Policy) Model {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 3
	}
	if p.Backoff <= 0 {
		p.Backoff = 500 * time.Millisecond
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 30 * time.Second
	}
	p.Jitter = min(max(p.Jitter, 0), 1)
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	r := &reliable{m: m, p: p}
	if p.Concurrency > 0 {
		r.sem = make(chan struct{}, p.Concurrency)
	}
	return r
}

type reliable struct {
	m   Model
	p   Policy
	sem chan struct{} // nil: no limit
}

// Chat calls the wrapped model under the policy.
func (r *reliable) Chat(ctx context.Context, req *Request, onChunk func(Chunk) error) (*Response, error) {
	delivered := 0
	cb := onChunk
	if onChunk != nil {
		cb = func(c Chunk) error {
			delivered++
			return onChunk(c)
		}
	}
	for attempt := 1; ; attempt++ {
		resp, err := r.attempt(ctx, req, cb)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil || !IsRetryable(err) {
			return nil, err
		}
		if attempt >= r.p.MaxAttempts {
			if attempt == 1 {
				return nil, err
			}
			return nil, giveUp(err, "", fmt.Sprintf("gave up after %d attempts", attempt))
		}
		if delivered > 0 {
			return nil, notRetried(err, delivered)
		}
		wait, ok := r.wait(attempt, err)
		if !ok {
			var e *Error
			errors.As(err, &e)
			return nil, giveUp(err, KindRetryAfterTooLong, fmt.Sprintf("the server asked to retry after %v, more than the %v this model waits at most (Policy.MaxBackoff)",
				e.RetryAfter, r.p.MaxBackoff))
		}
		if dl, has := ctx.Deadline(); has && time.Until(dl) < wait {
			return nil, giveUp(err, "", fmt.Sprintf("not retried: waiting %v to retry would pass the call's deadline, %v away",
				wait.Round(time.Millisecond), time.Until(dl).Round(time.Millisecond)))
		}
		if serr := r.p.Sleep(ctx, wait); serr != nil {
			return nil, &Error{
				Provider: providerOf(err),
				Message:  fmt.Sprintf("cancelled while waiting %v to retry after: %v", wait.Round(time.Millisecond), err),
				Err:      serr,
			}
		}
	}
}

// giveUp is the error of a call not retried although its error was
// retryable: err's fields, kind if set, and err's message followed by
// why; it wraps err.
func giveUp(err error, kind ErrorKind, why string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	if kind != "" {
		c.Kind = kind
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	c.Message = msg + "; " + why
	c.Err = err
	return &c
}

// notRetried is the error of a streamed call that failed in a way worth
// retrying after chunks of its reply were delivered: err, saying why it
// was not retried. Its fields are err's, and it wraps err.
func notRetried(err error, chunks int) error {
	return giveUp(err, "", fmt.Sprintf("not retried, because %d chunks of the reply had already been delivered to onChunk", chunks))
}

// attempt makes one call, holding a concurrency slot and bounded by the
// per-attempt timeout.
func (r *reliable) attempt(ctx context.Context, req *Request, onChunk func(Chunk) error) (*Response, error) {
	if r.sem != nil {
		if err := ctx.Err(); err != nil {
			return nil, &Error{Message: "cancelled while waiting for a free call slot", Err: context.Cause(ctx)}
		}
		select {
		case r.sem <- struct{}{}:
			defer func() { <-r.sem }()
		case <-ctx.Done():
			return nil, &Error{Message: "cancelled while waiting for a free call slot", Err: context.Cause(ctx)}
		}
	}
	if r.p.Timeout <= 0 {
		return r.m.Chat(ctx, req, onChunk)
	}
	actx, cancel := context.WithTimeout(ctx, r.p.Timeout)
	defer cancel()
	resp, err := r.m.Chat(actx, req, onChunk)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, &Error{
			Provider:  providerOf(err),
			Message:   fmt.Sprintf("call timed out after %v", r.p.Timeout),
			Retryable: true,
			Err:       err,
		}
	}
	return resp, err
}

// wait is how long to wait before retry number attempt (1 for the first
// retry); ok is false when the server asked for longer than MaxBackoff.
func (r *reliable) wait(attempt int, err error) (d time.Duration, ok bool) {
	d = r.p.Backoff
	for i := 1; i < attempt && d < r.p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.p.MaxBackoff)
	if r.p.Jitter > 0 {
		d -= time.Duration(float64(d) * r.p.Jitter * rand.Float64())
	}
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		if e.RetryAfter > r.p.MaxBackoff {
			return 0, false
		}
		ra := e.RetryAfter + time.Duration(float64(e.RetryAfter)*r.p.Jitter*rand.Float64())
		d = max(d, ra)
	}
	return d, true
}

func providerOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Provider
	}
	return ""
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// RetryableStatus reports whether an HTTP status is worth another attempt:
// 408, 429, 500, 502, 503, 504 and 529 (Anthropic's "overloaded").
// Providers use it so that they all agree.
func RetryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}

// ParseRetryAfter reads a Retry-After header value, either seconds
// ("120", fractions allowed) or an HTTP date, as a wait from now. It
// returns 0 for an empty, malformed or past value.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || secs > 1e6 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// IsTransient reports whether a network error is one that another attempt
// may not meet: a connection reset, refused or closed before the reply was
// complete, or a network timeout. Context cancellation is not transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}
