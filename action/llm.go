package action

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/prompt"
	"github.com/weftlang/weft/llm/replay"
	"github.com/weftlang/weft/llm/structured"
	"github.com/weftlang/weft/llm/tool"
)

// Binder turns actions bound in a workflow's source into implementations,
// LLM calls and HTTP requests among them. Its Bind method is an
// engine.BindFunc. A Binder opens each model spec once and shares the
// model between actions; it is safe for concurrent use.
type Binder struct {
	// Open opens a model by spec, e.g. "ollama:llama3.1" (see
	// llm/providers). Nil leaves LLM bindings without a provider.
	Open func(spec string) (llm.Model, error)
	// Default is the spec used by bindings that name no model: the
	// --llm flag or WEFT_LLM.
	Default string
	// MaxRepairs bounds the re-asks after a reply that breaks the
	// output schema (0: structured.DefaultMaxRepairs).
	MaxRepairs int
	// ContextTokens is the context window (llm.Request.ContextTokens,
	// Ollama's num_ctx) of LLM actions whose node, action and workflow
	// set no context_tokens; 0 leaves it to the server.
	ContextTokens int
	// Tools holds the tools LLM bindings may name in `tools: [...]` and
	// TOOL bindings in `tool: "name"`.
	Tools *tool.Registry
	// HTTPClient sends the requests of HTTP bindings. Nil means a shared
	// client with the default transport's connection timeouts; each
	// request is bounded by its node's timeout, else DefaultHTTPTimeout.
	HTTPClient *http.Client

	mu     sync.Mutex
	models map[string]llm.Model
}

// Bind makes the implementation of a binding: an LLM call for LLM
// bindings, a request with HTTPClient for HTTP ones (see HTTPAction), a
// call of the tool it names from Tools for other TOOL ones (see
// ToolAction), a question for HUMAN ones.
func (b *Binder) Bind(bd *flow.Binding) (engine.Action, error) {
	if IsHTTP(bd) {
		return NewHTTP(bd, b.HTTPClient)
	}
	if bd.Type == flow.Tool {
		return b.bindTool(bd)
	}
	if bd.Type != flow.LLM {
		return Bind(bd)
	}
	spec := bd.Config["model"].Str()
	if spec == "" {
		spec = b.Default
	}
	if spec == "" {
		return nil, fmt.Errorf("LLM action %s names no model and the Binder has no default model: %w", bd.Name, ErrNoProvider)
	}
	m, err := b.model(spec)
	if err != nil {
		return nil, fmt.Errorf("LLM action %s: %w", bd.Name, err)
	}
	a, err := NewLLM(bd, m, b.MaxRepairs)
	if err != nil {
		return nil, err
	}
	a.contextTokens = b.ContextTokens
	if names := bd.Config["tools"]; !names.IsNull() {
		if a.tools, err = b.toolset(bd, names); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// toolset picks the tools a binding names from the Binder's registry.
func (b *Binder) toolset(bd *flow.Binding, names flow.Value) (*tool.Registry, error) {
	if names.Kind() != flow.KindList {
		return nil, fmt.Errorf("LLM action %s: tools must be a list of tool names, not %s", bd.Name, names)
	}
	set := &tool.Registry{}
	for _, n := range names.List() {
		t, known := b.lookupTool(n.Str())
		if t == nil {
			return nil, fmt.Errorf("LLM action %s: unknown tool %s (known: %s)", bd.Name, n, strings.Join(known, ", "))
		}
		if err := set.Add(t); err != nil {
			return nil, fmt.Errorf("LLM action %s: %w", bd.Name, err)
		}
	}
	return set, nil
}

// Model returns the model spec names ("" is not Default: the caller
// resolves it), opened with Open at its first use and kept: the one every
// binding of that spec then gets. A preflight check opens the models a
// plan binds with it, so the run uses the models it checked.
func (b *Binder) Model(spec string) (llm.Model, error) { return b.model(spec) }

func (b *Binder) model(spec string) (llm.Model, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m, ok := b.models[spec]; ok {
		return m, nil
	}
	if b.Open == nil {
		return nil, ErrNoProvider
	}
	m, err := b.Open(spec)
	if err != nil {
		return nil, err
	}
	if b.models == nil {
		b.models = map[string]llm.Model{}
	}
	b.models[spec] = m
	return m, nil
}

// LLMAction is an action carried out by a model: the binding's prompt
// (a template over the node's inputs) is sent, and the reply fills the
// node's declared outputs. A node with one String output gets the reply's
// text (mode generate, streamed as "token" events); any other outputs are
// asked for as structured output whose JSON Schema is derived from the
// declared outputs (modes classify and extract), validated and repaired.
//
// A model that fails (unreachable, a 4xx, a 5xx after the retries) or
// never gives a reply that fits fails the action like any action error,
// with the provider's message: the node's retry, on: error edges and the
// run's max_time apply, and a node that asked for it with fallback: {...}
// falls back (the engine does, and says so). A text reply cut at the
// token limit sets the output and is reported as a "truncated" notice.
type LLMAction struct {
	binding       *flow.Binding
	model         llm.Model
	prompt        *prompt.Template
	system        *prompt.Template
	maxRepairs    int
	contextTokens int            // the Binder's default context window
	tools         *tool.Registry // nil: no tools
	askers        sync.Map       // *flow.Node -> *structured.Asker, made at the node's first structured call
}

// NewLLM makes the action of an LLM binding for model m.
func NewLLM(bd *flow.Binding, m llm.Model, maxRepairs int) (*LLMAction, error) {
	a := &LLMAction{binding: bd, model: m, maxRepairs: maxRepairs}
	var err error
	if a.prompt, err = prompt.Parse(bd.Config["prompt"].Str()); err != nil {
		return nil, fmt.Errorf("LLM action %s, prompt: %w", bd.Name, err)
	}
	if sys := bd.Config["system"].Str(); sys != "" {
		if a.system, err = prompt.Parse(sys); err != nil {
			return nil, fmt.Errorf("LLM action %s, system: %w", bd.Name, err)
		}
	}
	return a, nil
}

// Run renders the prompt over the node's inputs, calls the model, and
// sets the node's outputs. An error that says the call itself is wrong (a
// model the server does not have, a request it refuses, a prompt that
// does not render, a replayed run asking what was never recorded) is
// marked engine.ErrMisuse: it fails the node even where the workflow
// asks for a fallback.
func (a *LLMAction) Run(ctx context.Context, c *engine.Call) error {
	return misuse(a.run(ctx, c))
}

// misuse marks the errors of a call that is wrong, not failed (see Run).
func misuse(err error) error {
	if err == nil {
		return nil
	}
	switch llm.KindOf(err) {
	case llm.KindNotFound, llm.KindInvalidRequest, llm.KindUnsupported:
		return engine.Misuse(err)
	}
	var miss *replay.MissError
	var cfg *structured.ConfigError
	var tpl *prompt.MissingError
	if errors.As(err, &miss) || errors.As(err, &cfg) || errors.As(err, &tpl) {
		return engine.Misuse(err)
	}
	return err
}

func (a *LLMAction) run(ctx context.Context, c *engine.Call) error {
	values := c.InputMap()
	text, err := a.prompt.Render(values)
	if err != nil {
		return fmt.Errorf("prompt of %s: %w", a.binding.Name, err)
	}
	// The request and room for its message, in one allocation.
	box := &struct {
		req llm.Request
		msg [1]llm.Message
	}{}
	req := &box.req
	req.Messages = box.msg[:0]
	if a.system != nil {
		req.Messages = make([]llm.Message, 0, 2)
		sys, err := a.system.Render(values)
		if err != nil {
			return fmt.Errorf("system prompt of %s: %w", a.binding.Name, err)
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.System, Content: sys})
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.User, Content: text})
	if t := c.Config["temperature"]; !t.IsNull() {
		f := t.Float()
		req.Temperature = &f
	}
	if n := c.Config["max_tokens"].Int(); n > 0 {
		req.MaxTokens = int(n)
	}
	req.ContextTokens = a.contextTokens
	if n := c.Config[ContextTokensKey].Int(); n > 0 {
		req.ContextTokens = int(n)
	}
	// The reply is streamed only to be shown as "token" events: unobserved,
	// it is asked for whole, so that a reply cut mid-way is retried from
	// the start (llm.Reliable does not retry a stream it has passed on).
	var stream func(llm.Chunk) error
	if c.Observed() {
		stream = func(ch llm.Chunk) error {
			if ch.Text != "" {
				c.Emit("token", flow.StringValue(ch.Text))
			}
			return nil
		}
	}

	fields := c.Node.Node.Outputs
	mode := strings.ToLower(c.Config["mode"].Str())
	generate := len(fields) <= 1 && mode != "classify" && mode != "extract" && (len(fields) == 0 || fields[0].Type.Kind == flow.KindString)
	if a.tools != nil {
		if !generate {
			return fmt.Errorf("LLM action %s uses tools, so its node must declare one String output (the answer)", a.binding.Name)
		}
		return a.runTools(ctx, c, req, stream)
	}
	if generate {
		res, err := a.model.Chat(ctx, req, stream)
		if err != nil {
			return err
		}
		if c.Observed() {
			c.Emit("usage", usageValue(res.Usage))
		}
		if len(fields) == 1 {
			c.Outputs[0] = flow.StringValue(res.Message.Content)
		}
		noteCut(c, req, res)
		return nil
	}
	asker, err := a.asker(c.Node.Node, fields)
	if err != nil {
		return err
	}
	res, err := asker.Ask(ctx, a.model, req, stream)
	if err != nil {
		return err
	}
	if c.Observed() {
		c.Emit("usage", usageValue(res.Usage))
	}
	return c.SetOutputs(res.Values)
}

// ContextTokensKey is the field of an LLM node, action or workflow that
// sets the model's context window in tokens (llm.Request.ContextTokens,
// what Ollama calls num_ctx).
const ContextTokensKey = "context_tokens"

// noteCut reports a text reply cut at the token limit: the output holds
// what came before the cut, and a "truncated" notice says so.
func noteCut(c *engine.Call, req *llm.Request, res *llm.Response) {
	if res == nil || res.FinishReason != llm.FinishLength {
		return
	}
	limit := "the server's limit"
	if req.MaxTokens > 0 {
		limit = fmt.Sprintf("max_tokens %d", req.MaxTokens)
	}
	c.Notice(engine.NoticeTruncated, fmt.Sprintf("the reply was cut at the token limit (%s) after %d tokens: the output holds only what came before the cut", limit, res.Usage.OutputTokens))
}

// runTools runs the tool-calling loop: model, tools, model, until an
// answer. Every call and result is an event of the run.
func (a *LLMAction) runTools(ctx context.Context, c *engine.Call, req *llm.Request, stream func(llm.Chunk) error) error {
	observe := func(e tool.Event) {
		info := map[string]flow.Value{
			"name": flow.StringValue(e.Name),
			"id":   flow.StringValue(e.ID),
			"step": flow.IntValue(int64(e.Step)),
		}
		if e.Kind == tool.EventCall {
			info["arguments"] = flow.StringValue(string(e.Arguments))
			c.Emit("tool_call", flow.ObjectValue(info))
			return
		}
		info["content"] = flow.StringValue(e.Content)
		info["duration_ms"] = flow.FloatValue(float64(e.Duration.Microseconds()) / 1000)
		if e.Err != nil {
			info["error"] = flow.StringValue(e.Err.Error())
		}
		c.Emit("tool_result", flow.ObjectValue(info))
	}
	res, err := tool.Loop(ctx, a.model, req, a.tools, tool.LoopOptions{Observe: observe, OnChunk: stream})
	if err != nil {
		return err
	}
	if c.Observed() {
		c.Emit("usage", usageValue(res.Usage))
	}
	if len(c.Outputs) == 1 {
		c.Outputs[0] = flow.StringValue(res.Response.Message.Content)
	}
	noteCut(c, req, res.Response)
	return nil
}

func usageValue(u llm.Usage) flow.Value {
	return flow.ObjectValue(map[string]flow.Value{
		"input_tokens":  flow.IntValue(int64(u.InputTokens)),
		"output_tokens": flow.IntValue(int64(u.OutputTokens)),
	})
}

// asker returns the structured.Asker of a node's outputs, made once per
// node (a node's outputs never change once compiled). The key is the
// workflow's node, not the plan node: the Runner keeps this action under a
// weak key to the plan node, which a strong reference from here would
// keep alive.
func (a *LLMAction) asker(n *flow.Node, fields []*flow.Field) (*structured.Asker, error) {
	if v, ok := a.askers.Load(n); ok {
		return v.(*structured.Asker), nil
	}
	asker, err := structured.NewAsker(fields, structured.Options{MaxRepairs: a.maxRepairs})
	if err != nil {
		return nil, err
	}
	v, _ := a.askers.LoadOrStore(n, asker)
	return v.(*structured.Asker), nil
}

// TemplateReads returns the names the templates of an LLM binding read:
// the placeholders of its prompt and system message, in order, each once.
// It is flow.CompileOptions.BindingReads for workflows whose LLM actions
// are bound in source: a prompt may then read any value in the calling
// node's scope ({{input_text}}, {{retrieve.query}}, a variable) without
// the node declaring it as an input. Other bindings, and templates that do
// not parse (Bind reports those), read nothing.
func TemplateReads(b *flow.Binding) []string {
	if b == nil || b.Type != flow.LLM {
		return nil
	}
	var names []string
	for _, key := range []string{"system", "prompt"} {
		v := b.Config[key]
		if v.Kind() != flow.KindString {
			continue
		}
		t, err := prompt.Parse(v.Str())
		if err != nil {
			continue
		}
		for _, n := range t.Names() {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}
