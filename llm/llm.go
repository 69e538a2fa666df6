// Package llm is weft's interface to large language models: chat messages
// (system, user, assistant and tool roles), tool definitions and tool calls,
// an optional JSON Schema for structured output, sampling settings, token
// usage, and streaming of text and tool-call deltas.
//
// A Model is one method. Providers (Ollama, OpenAI-compatible servers,
// Anthropic) are thin clients over net/http in the sub-packages; the
// fake servers that speak their wire protocols, and a conformance suite
// every Model can run, are in llmtest.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Model is a chat model.
//
// Chat sends req and returns the complete reply. If onChunk is not nil the
// reply is streamed: onChunk is called, from the calling goroutine, for
// every piece as it arrives (text, or a tool-call delta), and the returned
// Response still holds the whole reply. An error returned by onChunk stops
// the stream and is returned by Chat. Chat honours ctx: cancelling it
// aborts the request. A Model is safe for concurrent use.
type Model interface {
	Chat(ctx context.Context, req *Request, onChunk func(Chunk) error) (*Response, error)
}

// Role says who wrote a message.
type Role string

// The roles.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool" // the result of a tool call, sent back to the model
)

// Message is one message of a conversation.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // calls an assistant message asks for
	ToolCallID string     `json:"tool_call_id,omitempty"` // for a ToolRole message: the call it answers
	Name       string     `json:"name,omitempty"`         // for a ToolRole message: the tool's name
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON object
}

// Tool describes a tool the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema of an object
}

// Effort is a reasoning-effort hint, for models that think before they
// answer. Providers that have no such knob ignore it.
type Effort string

// The efforts.
const (
	EffortDefault Effort = ""
	EffortLow     Effort = "low"
	EffortMedium  Effort = "medium"
	EffortHigh    Effort = "high"
)

// Request is one chat request.
type Request struct {
	Model    string    `json:"model"` // provider's model name, e.g. "llama3.1"
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// Schema, when set, asks for a reply that is one JSON value valid
	// against this JSON Schema (structured output).
	Schema      json.RawMessage `json:"schema,omitempty"`
	SchemaName  string          `json:"schema_name,omitempty"` // a name for the schema, where the protocol wants one
	Temperature *float64        `json:"temperature,omitempty"`
	MaxTokens   int             `json:"max_tokens,omitempty"`
	Stop        []string        `json:"stop,omitempty"`
	Seed        *int64          `json:"seed,omitempty"`
	Effort      Effort          `json:"effort,omitempty"`
	// ContextTokens, when positive, is the context window to run the
	// model with, in tokens (Ollama's num_ctx). A prompt longer than the
	// window is an Error of KindContextOverflow, never cut silently.
	// Providers whose window is fixed by the model ignore it.
	ContextTokens int `json:"context_tokens,omitempty"`
}

// Usage counts the tokens of one call.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Response is a complete reply.
type Response struct {
	Message      Message `json:"message"` // Role Assistant; Content and/or ToolCalls
	Usage        Usage   `json:"usage"`
	FinishReason string  `json:"finish_reason,omitempty"` // FinishStop, FinishLength, FinishToolCalls, or as the provider says it
	Model        string  `json:"model,omitempty"`         // the model that answered
}

// The finish reasons every provider reports in the same words.
const (
	// FinishStop is a reply the model ended itself.
	FinishStop = "stop"
	// FinishLength is a reply cut at the token limit (MaxTokens, or the
	// provider's own): not a complete answer.
	FinishLength = "length"
	// FinishToolCalls is a reply that asks for tool calls.
	FinishToolCalls = "tool_calls"
)

// Chunk is one piece of a streamed reply: some text, or a delta of a tool
// call (the Index says which call; Name and ID come in the first delta of
// a call, Arguments arrives in pieces to concatenate).
type Chunk struct {
	Text     string         `json:"text,omitempty"`
	ToolCall *ToolCallDelta `json:"tool_call,omitempty"`
}

// ToolCallDelta is a piece of a streamed tool call.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// Error is a failed call to a provider. errors.As finds it; Retryable says
// whether trying again may help (429, 5xx, a dropped connection), and
// RetryAfter is the wait the server asked for, if any.
type Error struct {
	Provider   string        // "ollama", "openai", "anthropic"
	Kind       ErrorKind     // what went wrong, for programs; empty when only Status and Message say
	Status     int           // HTTP status, 0 if the request never got one
	Message    string        // the provider's message, or a description
	Retryable  bool          // whether another attempt may succeed
	RetryAfter time.Duration // from a Retry-After header; 0 if none
	Err        error         // the underlying error, if any
}

// Error names the provider, the status and the message.
func (e *Error) Error() string {
	s := e.Provider + ": "
	if e.Status != 0 {
		s += fmt.Sprintf("HTTP %d: ", e.Status)
	}
	s += e.Message
	if e.Err != nil && e.Message == "" {
		s += e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's Kind:
// errors.Is(err, ErrReplyTooLarge) holds for an Error of
// KindReplyTooLarge.
func (e *Error) Is(target error) bool {
	return e.Kind != "" && target == e.Kind.sentinel()
}

// ErrorKind classifies an Error for programs.
type ErrorKind string

// The kinds of Error.
const (
	// KindReplyTooLarge is a reply longer than the client's limit on the
	// bytes of one reply (see DefaultMaxReplyBytes); the Message names the
	// limit. It is not retryable.
	KindReplyTooLarge ErrorKind = "reply_too_large"
	// KindRetryAfterTooLong is a server asking, by Retry-After, for a
	// longer wait than a Reliable model's Policy allows; the Message
	// names both.
	KindRetryAfterTooLong ErrorKind = "retry_after_too_long"
	// KindNotFound is an HTTP 404: no such model (the Message is the
	// server's, e.g. model 'x' not found), or no such path, when the
	// Message names the URL asked for (an OpenAI-compatible base URL
	// without its /v1, say). It is not retryable.
	KindNotFound ErrorKind = "not_found"
	// KindInvalidRequest is a request the server refuses as it stands: an
	// HTTP 400 or 422, or a 500 whose message says what is wrong with the
	// request (Ollama answers an unusable JSON Schema or an empty
	// embedding input so). The Message is the server's. It is not
	// retryable.
	KindInvalidRequest ErrorKind = "invalid_request"
	// KindContextOverflow is a prompt longer than the model's context
	// window, refused by the server rather than cut (Ollama's clients send
	// "truncate": false). The Message is the server's, with the token
	// counts where the server gives them, and the window the request
	// asked for (Request.ContextTokens), if any. It is not retryable.
	KindContextOverflow ErrorKind = "context_overflow"
	// KindUnsupported is a request field the model or server does not
	// accept, such as reasoning_effort (Request.Effort) sent to a model
	// that does not think. The Message names the field. It is not
	// retryable: the field is not dropped silently.
	KindUnsupported ErrorKind = "unsupported"
	// KindUnavailable is a call that got no complete reply because of the
	// network: the server could not be reached, or the connection failed
	// before the reply was complete. The Message is the network's error,
	// naming the URL. It is retryable when the failure may be transient
	// (see IsTransient): a refused or reset connection, a timeout.
	KindUnavailable ErrorKind = "unavailable"
	// KindIncomplete is a reply the server ended without marking it
	// complete: no final done event (Ollama), no finish_reason (OpenAI),
	// no message_stop (Anthropic), or a whole reply marked "done": false.
	// Ollama ends a reply so when the model repeats one token too often.
	// The text received is not a complete answer. It is not retryable.
	KindIncomplete ErrorKind = "incomplete"
)

// Sentinels that errors.Is finds in an Error of the matching Kind.
var (
	ErrReplyTooLarge     = errors.New("llm: reply too large")
	ErrRetryAfterTooLong = errors.New("llm: server asked for a longer wait than allowed")
	ErrNotFound          = errors.New("llm: not found")
	ErrInvalidRequest    = errors.New("llm: invalid request")
	ErrContextOverflow   = errors.New("llm: prompt longer than the model's context")
	ErrUnsupported       = errors.New("llm: request field not supported")
	ErrUnavailable       = errors.New("llm: server unavailable")
	ErrIncomplete        = errors.New("llm: reply ended before it was complete")
)

func (k ErrorKind) sentinel() error {
	switch k {
	case KindReplyTooLarge:
		return ErrReplyTooLarge
	case KindRetryAfterTooLong:
		return ErrRetryAfterTooLong
	case KindNotFound:
		return ErrNotFound
	case KindInvalidRequest:
		return ErrInvalidRequest
	case KindContextOverflow:
		return ErrContextOverflow
	case KindUnsupported:
		return ErrUnsupported
	case KindUnavailable:
		return ErrUnavailable
	case KindIncomplete:
		return ErrIncomplete
	}
	return nil
}

// KindOf returns the Kind of the first *Error in err's chain, or "" if
// there is none.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// DefaultMaxReplyBytes is the most bytes of one reply a provider client
// reads when its Config sets no limit: 8 MiB, some two million tokens of
// text, far more than a model writes in one reply, and room for a batch of
// 64 embeddings of 3072 dimensions (about 5 MB as JSON). A longer reply,
// streamed or not, fails with an Error of KindReplyTooLarge instead of
// growing the process without bound.
const DefaultMaxReplyBytes = 8 << 20

// IsRetryable reports whether err is an *Error that another attempt may
// fix.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable
}
