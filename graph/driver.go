package graph

import (
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// Actions returns a new registry holding the actions the compiled graph
// runs: its Go nodes' ("go:NAME") and those Options.Registry gave it.
// With Workflow, it is what another driver needs to run the graph: a
// service.Service takes them as Options.Actions and a Go source, so that
// the graph runs in its threads like a .wf workflow. Changing the
// registry returned does not change the graph. Bindings of flow nodes
// (Options.Bind) are not in it: that driver binds them.
func (c *Compiled[S]) Actions() *engine.Registry {
	reg := engine.NewRegistry()
	for _, name := range c.runner.Registry.Names() {
		a, _ := c.runner.Registry.Lookup(name)
		reg.Replace(name, a)
	}
	return reg
}

// Input returns what a run in a thread starts with for state in, as
// Threads.Run starts one: params holds a parameter for every state field
// ("init_FIELD"); update holds the fields that have a reducer, to be
// applied through it onto what the thread carries (engine.RunOptions.Update),
// and their parameters are their zero values. A driver other than
// Threads (service.StartRequest's Input and Update) runs the graph's
// workflow with them. A field that does not convert is a *FieldError.
func (c *Compiled[S]) Input(in S) (params, update map[string]flow.Value, err error) {
	var zero S
	zp, err := c.params(&zero)
	if err != nil {
		return nil, nil, err
	}
	params, err = c.params(&in)
	if err != nil {
		return nil, nil, err
	}
	return params, c.splitUpdates(params, zp), nil
}

// splitUpdates moves the values of the fields with a reducer from params
// to the updates it returns, leaving their zero values (zp) as parameters.
func (c *Compiled[S]) splitUpdates(params, zp map[string]flow.Value) map[string]flow.Value {
	updates := map[string]flow.Value{}
	for _, f := range c.layout.fields {
		if f.reducer != flow.ReduceReplace {
			updates[f.name] = params[f.param]
			params[f.param] = zp[f.param]
		}
	}
	return updates
}
