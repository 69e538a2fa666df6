package owf

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/weakmap"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/owf/tools"
)

// Dialect says how LLM requests are shaped, following the reference's
// per-provider code (its section 6).
type Dialect int

// The dialects.
const (
	// DialectPlain sends the messages with their roles, max_tokens when
	// the workflow sets it, and a task's schema as JSON Schema when it is
	// JSON.
	DialectPlain Dialect = iota
	// DialectOllama is the reference's Ollama path: roles other than
	// user and assistant become user, num_predict is max_tokens or 250,
	// and a schema is base64 text decoded into a leading assistant message
	// with JSON output requested.
	DialectOllama
	// DialectOpenAI is the reference's OpenAI path: system, user and
	// assistant roles, no max_tokens, and a schema is a JSON Schema sent as
	// strict structured output named "structured_output" with
	// additionalProperties false.
	DialectOpenAI
)

// Options configure the actions that carry out ollama-workflows tasks.
// The zero Options run workflows that need no model, embedder or tool.
type Options struct {
	Model     llm.Model // generation and function calling
	ModelName string    // the model named in requests, e.g. "llama3.1"
	Dialect   Dialect

	Embedder    llm.Embedder // the file system's embeddings (insert, search, HaveSimilar)
	EmbedModel  string
	QueryPrefix string // put before a search query before it is embedded; the reference's Ollama embedder uses "Represent this sentence for searching relevant passages: "

	Tools tools.Options // where the predefined tools send their requests, and their keys

	// Intn picks sample's random element: a number in [0, n). nil uses
	// math/rand/v2.
	Intn func(n int) int
}

// OllamaQueryPrefix is what the reference's Ollama embedder puts before a
// search query.
const OllamaQueryPrefix = "Represent this sentence for searching relevant passages: "

func (o *Options) intn(n int) int {
	if o.Intn != nil {
		return o.Intn(n)
	}
	return rand.IntN(n)
}

// role maps a message's role for the dialect.
func (o *Options) role(r string) llm.Role {
	switch r {
	case "user", "assistant":
		return llm.Role(r)
	case "system":
		if o.Dialect == DialectOllama {
			return llm.User
		}
		return llm.System
	}
	return llm.User
}

// Register adds the owf.* actions, which carry out ollama-workflows tasks
// with opts, to reg.
func Register(reg *engine.Registry, opts Options) error {
	return register(reg, &actions{opts: opts})
}

func register(reg *engine.Registry, a *actions) error {
	for _, o := range taskOps {
		if err := reg.Register(string(o), engine.ActionFunc(a.task)); err != nil {
			return err
		}
	}
	if err := reg.Register(string(opStart), engine.ActionFunc(a.start)); err != nil {
		return err
	}
	if err := reg.Register(string(opReturn), engine.ActionFunc(a.ret)); err != nil {
		return err
	}
	return reg.Register(string(opFail), engine.ActionFunc(a.fail))
}

// actions implements the owf.* actions. Specs are decoded once per plan
// node, and kept while the node's plan is in use: the actions live as long
// as their registry, which may run plan after plan.
type actions struct {
	opts  Options
	specs weakmap.Map[flow.PlanNode, *cachedSpec]
}

// cachedSpec is a decoded spec and the values it was decoded from. It
// must not refer to the plan node (see weakmap.Map).
type cachedSpec struct {
	task, step flow.Value
	spec       *nodeSpec
}

// spec decodes the node's task and step inputs, once per plan node as long
// as they are the same values (they are literals in what Compile and weft
// convert produce).
func (a *actions) spec(c *engine.Call) (*nodeSpec, error) {
	task, step := c.Input("task"), c.Input("step")
	if cs, ok := a.specs.Load(c.Node); ok {
		if cs.task.Same(task) && cs.step.Same(step) {
			return cs.spec, nil
		}
	}
	r := &specReader{node: c.Node.Name}
	s := r.nodeSpec(op(c.Action), task, step)
	if r.err != nil {
		return nil, r.err
	}
	a.specs.Store(c.Node, &cachedSpec{task: task, step: step, spec: s})
	return s, nil
}

func (a *actions) executor(c *engine.Call, t *Task) *executor {
	return &executor{
		opts: &a.opts,
		mem:  newMemory(c.Input("cache"), c.Input("stacks"), c.Input("files")),
		task: t,
		emit: func(kind, msg string) { c.Emit(kind, flow.StringValue(msg)) },
	}
}

// task runs one task node: the task, then its step's routing. A task
// failure is data (failure or a fallback in next), not an engine error, so
// the memory side effects before it are kept, as in the reference.
func (a *actions) task(ctx context.Context, c *engine.Call) error {
	spec, err := a.spec(c)
	if err != nil {
		return err
	}
	x := a.executor(c, spec.Task)
	res, err := x.execute(ctx, spec)
	var next, failure string
	if err == nil {
		next, err = x.route(ctx, spec.Step)
		if err != nil {
			res = ""
			failure, err = a.failure(ctx, err)
		}
	} else {
		var te *TaskError
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &te) && spec.Step.Fallback != nil:
			next, err = *spec.Step.Fallback, nil
			c.Emit("task_failed", flow.StringValue(te.Error()))
			// The reference takes the fallback silently; weft says so.
			c.Notice(engine.NoticeFallback, fmt.Sprintf("task %s failed (%s); took its fallback step, to %s", spec.Task.ID, te.Error(), next))
		default:
			failure, err = a.failure(ctx, err)
		}
		res = ""
	}
	if err != nil {
		return err
	}
	cw, sw, fw := x.mem.writes()
	return errors.Join(
		c.SetOutput("cache_writes", cw),
		c.SetOutput("stack_writes", sw),
		c.SetOutput("new_files", fw),
		c.SetOutput("next", flow.StringValue(next)),
		c.SetOutput("failure", flow.StringValue(failure)),
		c.SetOutput("result", flow.StringValue(res)),
	)
}

// failure turns an error into the run's failure message; cancellation
// stays an engine error.
func (a *actions) failure(ctx context.Context, err error) (string, error) {
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return err.Error(), nil
}

// start loads external memory and the input into memory.
func (a *actions) start(_ context.Context, c *engine.Call) error {
	r := &specReader{node: c.Node.Name}
	ext := r.external(c.Input("external"))
	if r.err != nil {
		return r.err
	}
	m := newMemory(c.Input("cache"), c.Input("stacks"), flow.Null)
	for _, e := range ext {
		if e.Stack {
			for _, it := range e.Items {
				m.push(e.Key, it)
			}
		} else if len(e.Items) == 1 {
			m.write(e.Key, e.Items[0])
		}
	}
	// An empty input counts as none (weft run without --input).
	if in := c.Input("input"); in.Kind() == flow.KindString && in.Str() != "" {
		m.write(inputKey, TryJSON(in.Str()))
	}
	cw, sw, _ := m.writes()
	return errors.Join(c.SetOutput("cache_writes", cw), c.SetOutput("stack_writes", sw))
}

// ret computes the return value.
func (a *actions) ret(ctx context.Context, c *engine.Call) error {
	r := &specReader{node: c.Node.Name}
	rv := r.returnValue(c.Input("return"))
	if r.err != nil {
		return r.err
	}
	x := a.executor(c, &Task{ID: "return_value"})
	s, err := x.returnValue(ctx, rv)
	if err != nil {
		return &WorkflowError{Msg: err.Error()}
	}
	cw, sw, _ := x.mem.writes()
	return errors.Join(c.SetOutput("cache_writes", cw), c.SetOutput("stack_writes", sw), c.SetOutput("result", flow.StringValue(s)))
}

// fail ends the run with the reference's error.
func (a *actions) fail(_ context.Context, c *engine.Call) error {
	return &WorkflowError{Msg: c.Input("message").Str()}
}
