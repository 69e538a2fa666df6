package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/weftlang/weft/llm"
)

// DefaultMaxSteps is the model-call bound of Loop when LoopOptions.MaxSteps
// is 0.
const DefaultMaxSteps = 8

// LoopOptions tunes Loop. The zero value is ready to use.
type LoopOptions struct {
	// MaxSteps bounds the model calls (the steps); 0 means
	// DefaultMaxSteps. When the reply of the last allowed call still asks
	// for tools, Loop returns a *StepLimitError.
	MaxSteps int
	// Sequential runs the calls of one reply one after the other, in
	// order, instead of concurrently.
	Sequential bool
	// Observe, if not nil, gets an Event for every tool call, before it
	// runs, and for every result. It is never called concurrently: the
	// calls of one step are reported in order before any runs, and the
	// results as they complete.
	Observe func(Event)
	// OnChunk, if not nil, streams the model's replies (see llm.Model).
	OnChunk func(llm.Chunk) error
}

// EventKind says what an Event reports.
type EventKind string

// The event kinds.
const (
	EventCall   EventKind = "tool_call"   // the model asked for a call
	EventResult EventKind = "tool_result" // a call finished
)

// Event is a tool call or its result, for an event stream.
type Event struct {
	Kind      EventKind
	Step      int             // the model call that asked for it, from 1
	Index     int             // the position of the call in the reply, from 0
	ID        string          // the call's ID
	Name      string          // the tool
	Arguments json.RawMessage // the arguments, as the model wrote them
	// For EventResult:
	Content  string        // what the model is sent: the result's JSON or "error: ..."
	Err      error         // the failure, nil on success
	Duration time.Duration // how long the call ran
}

// LoopResult is the outcome of a Loop that ended with an answer.
type LoopResult struct {
	Response *llm.Response // the final reply, which asks for no tool
	// Messages is the whole conversation: the request's messages, then
	// per step the assistant message and one ToolRole message per call,
	// and last the final assistant message.
	Messages []llm.Message
	Steps    int       // the model calls made
	Usage    llm.Usage // summed over all model calls
}

// Loop runs a tool-calling conversation. It sends a copy of req, with
// Tools set to reg's definitions (replacing any), to m; while the reply
// asks for tools it runs the calls (concurrently when there are several,
// unless opts.Sequential), appends the assistant message and one ToolRole
// message per call in the order of the calls, and asks m again. It returns
// the final reply, the conversation, the number of model calls and the
// summed token usage. req is not modified.
//
// A tool's result goes back as its JSON; a failed call (the tool's error,
// a panic, arguments that do not fit, an unknown tool) goes back as
// "error: " and the message, so the model can recover: tools never end the
// loop. A call without an ID gets one ("call_<step>_<index>").
//
// Loop fails with a *StepLimitError after opts.MaxSteps model calls whose
// replies all asked for tools, a *LoopError when a model call fails or ctx
// ends, and a *ConfigError when m or req is nil. reg may be nil (no
// tools).
func Loop(ctx context.Context, m llm.Model, req *llm.Request, reg *Registry, opts LoopOptions) (*LoopResult, error) {
	if m == nil {
		return nil, &ConfigError{Reason: "the model is nil"}
	}
	if req == nil {
		return nil, &ConfigError{Reason: "the request is nil"}
	}
	maxSteps := opts.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	r := *req
	r.Messages = slices.Clone(req.Messages)
	r.Tools = reg.Defs()
	obs := newObserver(opts.Observe)
	var usage llm.Usage
	for step := 1; ; step++ {
		if err := ctx.Err(); err != nil {
			return nil, &LoopError{Step: step - 1, Messages: r.Messages, Usage: usage, Err: err}
		}
		call := r // each call gets its own header; Messages only grows
		resp, err := m.Chat(ctx, &call, opts.OnChunk)
		if err == nil && resp == nil {
			err = &ConfigError{Reason: "the model returned no response and no error"}
		}
		if err != nil {
			return nil, &LoopError{Step: step, Messages: r.Messages, Usage: usage, Err: err}
		}
		usage.InputTokens += resp.Usage.InputTokens
		usage.OutputTokens += resp.Usage.OutputTokens
		msg := resp.Message
		if msg.Role == "" {
			msg.Role = llm.Assistant
		}
		if len(msg.ToolCalls) == 0 {
			return &LoopResult{
				Response: resp,
				Messages: append(r.Messages, msg),
				Steps:    step,
				Usage:    usage,
			}, nil
		}
		if step >= maxSteps {
			return nil, &StepLimitError{MaxSteps: maxSteps, Messages: r.Messages, Last: resp, Usage: usage}
		}
		msg.ToolCalls = slices.Clone(msg.ToolCalls)
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", step, i)
			}
		}
		results := runCalls(ctx, reg, step, msg.ToolCalls, opts.Sequential, obs)
		r.Messages = append(r.Messages, msg)
		r.Messages = append(r.Messages, results...)
	}
}

// observer serializes calls of an Observe function.
type observer struct {
	mu sync.Mutex
	fn func(Event)
}

func newObserver(fn func(Event)) *observer { return &observer{fn: fn} }

func (o *observer) emit(e Event) {
	if o.fn == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fn(e)
}

// runCalls runs the calls of one step and returns their ToolRole messages,
// in the order of the calls.
func runCalls(ctx context.Context, reg *Registry, step int, calls []llm.ToolCall, sequential bool, obs *observer) []llm.Message {
	for i, c := range calls {
		obs.emit(Event{Kind: EventCall, Step: step, Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	out := make([]llm.Message, len(calls))
	if sequential || len(calls) == 1 {
		for i, c := range calls {
			out[i] = runCall(ctx, reg, step, i, c, obs)
		}
		return out
	}
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { out[i] = runCall(ctx, reg, step, i, c, obs) })
	}
	wg.Wait()
	return out
}

// callIDKey is the context key of the ID of the call a tool runs.
type callIDKey struct{}

// CallID returns the ID of the model's tool call that a tool's Run is
// running, as Loop puts it in the Run's context (for a trace, a log);
// "" when the tool was not called by Loop (a TOOL node, say).
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// runCall runs one call and returns its ToolRole message.
func runCall(ctx context.Context, reg *Registry, step, i int, c llm.ToolCall, obs *observer) llm.Message {
	start := time.Now()
	var content string
	var err error
	if t, ok := reg.Get(c.Name); ok {
		content, err = t.Call(context.WithValue(ctx, callIDKey{}, c.ID), c.Arguments)
	} else {
		err = &UnknownToolError{Name: c.Name, Known: reg.Names()}
	}
	if err != nil {
		content = "error: " + err.Error()
	}
	obs.emit(Event{
		Kind: EventResult, Step: step, Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments,
		Content: content, Err: err, Duration: time.Since(start),
	})
	return llm.Message{Role: llm.ToolRole, Content: content, ToolCallID: c.ID, Name: c.Name}
}
