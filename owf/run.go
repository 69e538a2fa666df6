package owf

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// Executor runs ollama-workflows documents on weft's engine: it is the
// counterpart of the reference's Executor, with the model, embedder and
// tools given in Options.
type Executor struct {
	reg *engine.Registry
}

// NewExecutor registers the owf actions with opts.
func NewExecutor(opts Options) (*Executor, error) {
	reg := engine.NewRegistry()
	if err := Register(reg, opts); err != nil {
		return nil, err
	}
	return &Executor{reg: reg}, nil
}

// Registry returns the executor's actions.
func (e *Executor) Registry() *engine.Registry { return e.reg }

// Plan compiles doc into a plan for the engine.
func (e *Executor) Plan(doc *Document) (*flow.Plan, error) {
	w, err := Compile(doc)
	if err != nil {
		return nil, err
	}
	plan, ds := flow.Compile(w, &flow.CompileOptions{HasAction: e.reg.Has})
	if plan == nil {
		return nil, fmt.Errorf("owf: %s does not compile: %w", doc.File, ds.Err())
	}
	return plan, nil
}

// Execute runs doc with input (nil: no input, as when the reference's
// execute gets None) and returns the return value. A failed run returns a
// *WorkflowError with the reference's message; the result, when not nil,
// holds the state at the end (the memory is in its "cache", "stacks" and
// "files" variables).
func (e *Executor) Execute(ctx context.Context, doc *Document, input *string, obs engine.Observer) (string, *engine.Result, error) {
	plan, err := e.Plan(doc)
	if err != nil {
		return "", nil, err
	}
	params := map[string]flow.Value{}
	if input != nil {
		params[flow.InputText] = flow.StringValue(*input)
	}
	r := &engine.Runner{Registry: e.reg}
	res, err := r.Run(ctx, plan, params, obs)
	if err != nil {
		return "", res, Explain(err)
	}
	return res.Output("result").Str(), res, nil
}

// Explain maps an engine error of an ollama-workflows run to the
// reference's: the *WorkflowError raised by __fail, and the run's max_time
// (which weft enforces preemptively) as "Max execution time exceeded".
// Other errors are returned as they are.
func Explain(err error) error {
	var we *WorkflowError
	if errors.As(err, &we) {
		return we
	}
	var le *engine.LimitError
	if errors.As(err, &le) && le.Limit == engine.LimitMaxTime {
		return &WorkflowError{Msg: msgMaxTime}
	}
	return err
}
