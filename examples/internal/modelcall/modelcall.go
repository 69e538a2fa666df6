// Package modelcall holds the model calls the Go reference agents
// (examples/adaptiverag, examples/shipments) make from their nodes: a
// structured-output call that fails (a *structured.CallError or
// *structured.InvalidError) when the model does, so that the node takes
// its own fallback values, explicitly and visibly, and a plain call that
// returns the reply's text without reasoning blocks. Each is bounded by a
// timeout.
package modelcall

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/structured"
)

// Caller makes the calls of one agent. The zero Timeout leaves calls
// bounded only by their context; MaxRepairs is structured.Options'. A
// Caller keeps the compiled schema of each list of fields it is asked
// for, so use one by pointer; it is safe for concurrent use.
type Caller struct {
	Model      llm.Model
	Name       string // the model name put in requests ("" lets the provider choose)
	Timeout    time.Duration
	MaxRepairs int

	askers sync.Map // the fields' signature -> *structured.Asker
}

// Context bounds one call (a model's, or a tool's the node makes) by
// Timeout.
func (c *Caller) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.Timeout > 0 {
		return context.WithTimeout(ctx, c.Timeout)
	}
	return context.WithCancel(ctx)
}

// Request is a request of a system and a user message.
func (c *Caller) Request(system, user string) *llm.Request {
	return &llm.Request{Model: c.Name, Messages: []llm.Message{
		{Role: llm.System, Content: system},
		{Role: llm.User, Content: user},
	}}
}

// Ask makes a structured-output call for fields and returns its values,
// or an error: the provider failed (a *structured.CallError), or no reply
// matched the schema after the repairs (a *structured.InvalidError listing
// the violations).
func (c *Caller) Ask(ctx context.Context, req *llm.Request, fields []*flow.Field) (map[string]flow.Value, error) {
	asker, err := c.asker(fields)
	if err != nil {
		return nil, err
	}
	cctx, cancel := c.Context(ctx)
	defer cancel()
	res, err := asker.Ask(cctx, c.Model, req, nil)
	if err != nil {
		return nil, err
	}
	return res.Values, nil
}

// asker returns the Asker of fields, made at their first call.
func (c *Caller) asker(fields []*flow.Field) (*structured.Asker, error) {
	var key strings.Builder
	for _, f := range fields {
		key.WriteString(f.Name)
		key.WriteByte(':')
		key.WriteString(f.Type.String())
		key.WriteByte(';')
	}
	if a, ok := c.askers.Load(key.String()); ok {
		return a.(*structured.Asker), nil
	}
	a, err := structured.NewAsker(fields, structured.Options{MaxRepairs: c.MaxRepairs})
	if err != nil {
		return nil, err
	}
	v, _ := c.askers.LoadOrStore(key.String(), a)
	return v.(*structured.Asker), nil
}

// ErrNoText is returned by Chat for a reply with no text.
var ErrNoText = errors.New("the model replied with no text")

// Chat makes a plain call and returns the reply's text, trimmed, without
// reasoning blocks (StripThinking).
func (c *Caller) Chat(ctx context.Context, req *llm.Request) (string, error) {
	cctx, cancel := c.Context(ctx)
	defer cancel()
	resp, err := c.Model.Chat(cctx, req, nil)
	if err != nil {
		return "", err
	}
	text := strings.TrimSpace(StripThinking(resp.Message.Content))
	if text == "" {
		return "", ErrNoText
	}
	return text, nil
}

// StripThinking removes the <think>...</think> blocks that reasoning
// models served through Ollama put before their answer; an unclosed block
// removes the rest of the text.
func StripThinking(s string) string {
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len("</think>"):]
	}
}
