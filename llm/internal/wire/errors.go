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
// cancelled, or the connection failed (retryable when transient).
func RequestError(provider string, ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return Cancelled(provider, ctx)
	}
	return &llm.Error{Provider: provider, Message: "request failed: " + err.Error(), Retryable: llm.IsTransient(err), Err: err}
}

// Cancelled reports a call aborted through its context.
func Cancelled(provider string, ctx context.Context) error {
	return &llm.Error{Provider: provider, Message: "call aborted: " + context.Cause(ctx).Error(), Err: ctx.Err()}
}

// ReadBody reads a whole (non-streamed) reply. A body cut short is a
// retryable *llm.Error saying how much arrived; a cancelled call is
// Cancelled's error.
func ReadBody(provider string, ctx context.Context, body io.Reader) ([]byte, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, Cancelled(provider, ctx)
		}
		return nil, &llm.Error{Provider: provider, Retryable: true, Err: err,
			Message: fmt.Sprintf("reply cut after %d bytes: %v", len(b), err)}
	}
	return b, nil
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
