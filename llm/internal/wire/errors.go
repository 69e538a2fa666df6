package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/weftlang/weft/llm"
)

// RequestError reports a request that got no reply: the call was
// cancelled, or the connection failed (llm.KindUnavailable, retryable
// when transient).
func RequestError(provider string, ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return Cancelled(provider, ctx)
	}
	return &llm.Error{Provider: provider, Kind: llm.KindUnavailable, Message: "request failed: " + err.Error(), Retryable: llm.IsTransient(err), Err: err}
}

// Cancelled reports a call aborted through its context.
func Cancelled(provider string, ctx context.Context) error {
	return &llm.Error{Provider: provider, Message: "call aborted: " + context.Cause(ctx).Error(), Err: ctx.Err()}
}

// ReadBody reads a whole (non-streamed) reply. A cancelled call, or a
// body longer than the limit of a reader from Cap, is ReadError's error; a
// body cut short is a retryable *llm.Error of llm.KindUnavailable saying
// how much arrived.
func ReadBody(provider string, ctx context.Context, body io.Reader) ([]byte, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		if e := ReadError(provider, ctx, err); e != nil {
			return nil, e
		}
		return nil, &llm.Error{Provider: provider, Kind: llm.KindUnavailable, Retryable: true, Err: err,
			Message: fmt.Sprintf("reply cut after %d bytes: %v", len(b), err)}
	}
	return b, nil
}

// MaxReply is the limit on one reply's bytes a client configured with n
// applies: n if positive, llm.DefaultMaxReplyBytes if 0, none (-1) if
// negative.
func MaxReply(n int64) int64 {
	switch {
	case n > 0:
		return n
	case n == 0:
		return llm.DefaultMaxReplyBytes
	}
	return -1
}

// capped is a reader of a reply that refuses to read more than its
// limit: past it, Read returns a *LimitError.
type capped struct {
	r     io.Reader
	limit int64
	n     int64 // bytes read
}

// Cap returns a reader of r that reads at most limit bytes and then fails
// with a *LimitError; r itself if limit is negative (no limit).
func Cap(r io.Reader, limit int64) io.Reader {
	if limit < 0 {
		return r
	}
	return &capped{r: r, limit: limit}
}

// Read reads from the underlying reader, up to the limit.
func (c *capped) Read(p []byte) (int, error) {
	if c.n > c.limit {
		return 0, &LimitError{Limit: c.limit}
	}
	// Read one byte past the limit, to tell a body that ends at the
	// limit from a longer one.
	if left := c.limit + 1 - c.n; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.limit {
		return n - int(c.n-c.limit), &LimitError{Limit: c.limit}
	}
	return n, err
}

// LimitError is the read error of a reader from Cap past its limit.
type LimitError struct {
	Limit int64
}

// Error names the limit.
func (e *LimitError) Error() string {
	return fmt.Sprintf("reply longer than the limit of %d bytes", e.Limit)
}

// ReadError returns the error of a failed read of a reply that the
// server did not cause: Cancelled's error if ctx is done, and for a
// *LimitError the *llm.Error of KindReplyTooLarge naming the limit. It
// returns nil for any other error: the reply was cut, which the caller
// describes.
func ReadError(provider string, ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return Cancelled(provider, ctx)
	}
	var le *LimitError
	if !errors.As(err, &le) {
		return nil
	}
	return &llm.Error{Provider: provider, Kind: llm.KindReplyTooLarge, Err: le,
		Message: fmt.Sprintf("reply longer than the limit of %d bytes (%s); not read further", le.Limit, sizeText(le.Limit))}
}

// sizeText writes n bytes in binary units, e.g. "8 MiB".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// SafeName makes a name that the providers accept for a tool or a schema,
// [a-zA-Z0-9_-]{1,64}: other characters become '_', the rest is cut, and
// an empty name becomes fallback.
func SafeName(s, fallback string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 64 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return fallback
	}
	return b.String()
}

// Malformed reports JSON that does not parse, in where, whose data starts
// at byte offset start of the body.
func Malformed(provider string, err error, where string, start int64) error {
	off := start
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off += se.Offset
	}
	return &llm.Error{Provider: provider, Err: err,
		Message: fmt.Sprintf("malformed JSON in %s at byte offset %d: %v", where, off, err)}
}

// Clip shortens a provider's message to a sane length.
func Clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 1000 {
		s = strings.ToValidUTF8(s[:1000], "") + "..."
	}
	return s
}

// Drain reads what is left of a body (up to a bound) so that the
// connection can be reused.
func Drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 256<<10)) }

// StreamEnd is the error of a streamed reply whose body ended before its
// final event (Ollama's done line, OpenAI's finish_reason or [DONE],
// Anthropic's message_stop), err being the read error and what the
// description of what had arrived. A body that ended cleanly (io.EOF) was
// ended by the server: an *llm.Error of llm.KindIncomplete, not
// retryable, for the server chose to stop there (Ollama does, when a
// reply repeats one token too often). A body cut by the network is one of
// llm.KindUnavailable, retryable.
func StreamEnd(provider string, err error, what string) error {
	if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return &llm.Error{Provider: provider, Kind: llm.KindIncomplete, Err: err,
			Message: "the server ended the reply before its final event, so it is not complete (Ollama does this when a reply repeats itself): " + what}
	}
	return &llm.Error{Provider: provider, Kind: llm.KindUnavailable, Retryable: true, Err: err,
		Message: "stream cut after " + what}
}
