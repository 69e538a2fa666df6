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
