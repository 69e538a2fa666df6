package wire

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm"
)

// StatusError is the *llm.Error of a reply with a status other than 200:
// msg is the message the provider's error body carries ("" if it had none
// the caller could read), body the start of the body as read. It sets the
// Kind the status and the message say:
//
//   - 404: llm.KindNotFound. A body without the provider's message (the
//     "404 page not found" of a server that has no such path, as for an
//     OpenAI-compatible base URL without its /v1) is quoted with the
//     method and URL asked for, credentials removed.
//   - 400, 413, 422, and a 500 whose message says what is wrong with the
//     request (see ClientMistake): llm.KindInvalidRequest, not retryable;
//     llm.KindContextOverflow when the message says the prompt is longer
//     than the context, llm.KindUnsupported when it says the model does
//     not think.
//
// Retryable follows llm.RetryableStatus otherwise.
func StatusError(provider string, resp *http.Response, msg string, body []byte) *llm.Error {
	st := resp.StatusCode
	e := &llm.Error{
		Provider:   provider,
		Status:     st,
		Message:    msg,
		Retryable:  llm.RetryableStatus(st),
		RetryAfter: llm.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}
	bare := msg == "" || strings.EqualFold(msg, http.StatusText(st)) || strings.EqualFold(msg, "404 page not found")
	if msg == "" {
		e.Message = plainText(body)
		if e.Message == "" {
			e.Message = http.StatusText(st)
		}
	}
	low := strings.ToLower(e.Message)
	switch {
	case st == http.StatusNotFound:
		e.Kind = llm.KindNotFound
		if bare && resp.Request != nil && resp.Request.URL != nil {
			e.Message = fmt.Sprintf("%s (%s %s: the server has no such path)", e.Message, resp.Request.Method, redact.SafeURL(resp.Request.URL))
		}
		return e
	case st == http.StatusBadRequest, st == http.StatusRequestEntityTooLarge, st == http.StatusUnprocessableEntity,
		st == http.StatusInternalServerError && ClientMistake(e.Message):
		e.Kind, e.Retryable = llm.KindInvalidRequest, false
	default:
		return e
	}
	switch {
	case ContextOverflow(low) || strings.Contains(strings.ToLower(string(body)), "context_length_exceeded"):
		e.Kind = llm.KindContextOverflow
	case strings.Contains(low, "does not support thinking"), strings.Contains(low, "reasoning_effort"):
		e.Kind = llm.KindUnsupported
	}
	return e
}

// clientMistakes are the messages with which servers answer HTTP 500 to a
// request that no retry can fix: Ollama's for a JSON Schema llama.cpp's
// grammar cannot take, for a format that is neither "json" nor a schema,
// and for an empty embedding input.
var clientMistakes = []string{
	"invalid json schema",
	"invalid format",
	"no input provided",
}

// ClientMistake reports whether the message of an HTTP 500 says what is
// wrong with the request, so that another attempt cannot help.
func ClientMistake(msg string) bool {
	low := strings.ToLower(msg)
	for _, m := range clientMistakes {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
}

// contextOverflows are the (lower-cased) messages of servers refusing a
// prompt longer than the context: Ollama's (with "truncate": false),
// OpenAI's and vLLM's, llama.cpp's server's, Anthropic's.
var contextOverflows = []string{
	"exceeds the context length",
	"maximum context length",
	"exceeds the available context size",
	"exceed_context_size",
	"prompt is too long",
	"context window",
}

// ContextOverflow reports whether a lower-cased error message says the
// prompt is longer than the model's context.
func ContextOverflow(low string) bool {
	for _, m := range contextOverflows {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
}

// plainText is body as a message when it is short printable text (not
// an HTML page), trimmed; "" otherwise.
func plainText(body []byte) string {
	s := strings.TrimSpace(string(body))
	if s == "" || len(s) > 200 || !utf8.ValidString(s) || strings.ContainsAny(s, "<{") {
		return ""
	}
	for _, r := range s {
		if r < ' ' && r != '\t' && r != '\n' {
			return ""
		}
	}
	return s
}

// Annotate adds to an error of a chat request what the request did that
// the error is about: to an *llm.Error of KindUnsupported from a request
// with an Effort, the field that carried it (effortField, e.g.
// "reasoning_effort"); to one of KindContextOverflow, the size of the
// prompt and the context window the request asked for (ctxField, e.g.
// "num_ctx"; "" when the protocol has none). Other errors are returned as
// they are.
func Annotate(err error, req *llm.Request, effortField, ctxField string) error {
	e, ok := err.(*llm.Error)
	if !ok || req == nil {
		return err
	}
	switch e.Kind {
	case llm.KindUnsupported:
		if req.Effort == "" {
			return err
		}
		c := *e
		c.Message = fmt.Sprintf("%s: the request sent %s %q (Request.Effort), which this model does not accept", e.Message, effortField, req.Effort)
		return &c
	case llm.KindContextOverflow:
		chars := 0
		for i := range req.Messages {
			chars += utf8.RuneCountInString(req.Messages[i].Content)
		}
		c := *e
		c.Message = fmt.Sprintf("%s (the prompt: %d messages, %d characters, about %d tokens at 4 characters a token", e.Message, len(req.Messages), chars, (chars+3)/4)
		if req.ContextTokens > 0 && ctxField != "" {
			c.Message += fmt.Sprintf("; the request asked for a context of %d tokens, %s", req.ContextTokens, ctxField)
		}
		c.Message += ")"
		return &c
	}
	return err
}
