package action

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/prompt"
	"github.com/weftlang/weft/llm/structured"
)

// Binder turns actions bound in a workflow's source into implementations,
// LLM calls among them. Its Bind method is an engine.BindFunc. A Binder
// opens each model spec once and shares the model between actions; it is
// safe for concurrent use.
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

	mu     sync.Mutex
	models map[string]llm.Model
}

// Bind makes the implementation of a binding: an LLM call for LLM
// bindings, a question for HUMAN ones.
func (b *Binder) Bind(bd *flow.Binding) (engine.Action, error) {
	if bd.Type != flow.LLM {
		return Bind(bd)
	}
	spec := bd.Config["model"].Str()
	if spec == "" {
		spec = b.Default
	}
	if spec == "" {
		return nil, fmt.Errorf("LLM action %s names no model and no default is set (use --llm or WEFT_LLM): %w", bd.Name, ErrNoProvider)
	}
	m, err := b.model(spec)
	if err != nil {
		return nil, fmt.Errorf("LLM action %s: %w", bd.Name, err)
	}
	return NewLLM(bd, m, b.MaxRepairs)
}

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
// declared outputs (modes classify and extract), validated, repaired, and
// replaced by typed defaults if the model never gets it right (a
// "fallback" event says so; the run goes on).
type LLMAction struct {
	binding    *flow.Binding
	model      llm.Model
	prompt     *prompt.Template
	system     *prompt.Template
	maxRepairs int
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
// sets the node's outputs.
func (a *LLMAction) Run(ctx context.Context, c *engine.Call) error {
	values := c.InputMap()
	text, err := a.prompt.Render(values)
	if err != nil {
		return fmt.Errorf("prompt of %s: %w", a.binding.Name, err)
	}
	req := &llm.Request{Messages: make([]llm.Message, 0, 2)}
	if a.system != nil {
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
	stream := func(ch llm.Chunk) error {
		if ch.Text != "" {
			c.Emit("token", flow.StringValue(ch.Text))
		}
		return nil
	}

	fields := c.Node.Node.Outputs
	mode := strings.ToLower(c.Config["mode"].Str())
	if len(fields) <= 1 && mode != "classify" && mode != "extract" && (len(fields) == 0 || fields[0].Type.Kind == flow.KindString) {
		res, err := a.model.Chat(ctx, req, stream)
		if err != nil {
			return err
		}
		c.Emit("usage", usageValue(res.Usage))
		if len(fields) == 1 {
			c.Outputs[0] = flow.StringValue(res.Message.Content)
		}
		return nil
	}
	res, err := structured.Ask(ctx, a.model, req, fields, structured.Options{MaxRepairs: a.maxRepairs, OnChunk: stream})
	if err != nil {
		return err
	}
	c.Emit("usage", usageValue(res.Usage))
	if res.FellBack {
		var vs []flow.Value
		for _, v := range res.Violations {
			vs = append(vs, flow.StringValue(v.Path+": "+v.Message))
		}
		info := map[string]flow.Value{"attempts": flow.IntValue(int64(res.Attempts)), "violations": flow.ListValue(vs...)}
		if res.Err != nil {
			info["error"] = flow.StringValue(res.Err.Error())
		}
		c.Emit("fallback", flow.ObjectValue(info))
	}
	return c.SetOutputs(res.Values)
}

func usageValue(u llm.Usage) flow.Value {
	return flow.ObjectValue(map[string]flow.Value{
		"input_tokens":  flow.IntValue(int64(u.InputTokens)),
		"output_tokens": flow.IntValue(int64(u.OutputTokens)),
	})
}
