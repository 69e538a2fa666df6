package graph

import (
	"context"
	"reflect"
	"unsafe"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// nodeSpec is what the action of a Go node knows once the graph compiled.
type nodeSpec struct {
	name     string
	fields   []*field       // the node's inputs, one per state field, in order
	updates  []update       // the node's outputs, in order; the route output follows
	reducers []flow.Reducer // per update: the state field's reducer, from the plan
	targets  []string       // what the routing function may return; nil without one
	routes   []flow.Value   // targets as values, the route output's possible values
	fast     bool           // every field and update has a fast shape (fast.go)
}

// goNode is the engine action of a node added with AddNode.
type goNode[S, U any] struct {
	spec  *nodeSpec
	fn    func(context.Context, S) (U, error)
	route func(S) string
}

// Run decodes the node's inputs into an S, calls the node function,
// encodes the fields of its update as the node's outputs and, when the node
// routes, computes the state after the update and asks the routing
// function where to go.
func (a *goNode[S, U]) Run(ctx context.Context, c *engine.Call) error {
	if a.spec.fast {
		return a.runFast(ctx, c)
	}
	return a.runReflect(ctx, c)
}

// runFast is Run for nodes whose fields all have fast shapes: no
// reflection, and S and U stay on the stack.
func (a *goNode[S, U]) runFast(ctx context.Context, c *engine.Call) error {
	spec := a.spec
	var s S
	sp := unsafe.Pointer(&s)
	for i, f := range spec.fields {
		if err := fastDec(f.fast, &c.Inputs[i], unsafe.Add(sp, f.off)); err != nil {
			return &FieldError{Node: spec.name, Field: f.goName, Err: err}
		}
	}
	var u U
	if a.fn != nil {
		var err error
		if u, err = a.fn(ctx, s); err != nil {
			return err
		}
	}
	up := unsafe.Pointer(&u)
	for j := range spec.updates {
		x := &spec.updates[j]
		p := unsafe.Add(up, x.off)
		if x.mode == updOptional {
			if p = *(*unsafe.Pointer)(p); p == nil {
				if x.keep {
					c.Outputs[j] = c.Inputs[x.fi]
				} else {
					c.Outputs[j] = x.ident
				}
				continue
			}
		}
		fastEnc(x.fast, p, &c.Outputs[j])
	}
	if a.route == nil {
		return nil
	}
	// The routing function sees the state after the update.
	for j := range spec.updates {
		x := &spec.updates[j]
		dst := unsafe.Add(sp, x.f.off)
		if x.f.reducer == flow.ReduceReplace && x.mode != updElem {
			src := unsafe.Add(up, x.off)
			if x.mode == updOptional {
				if src = *(*unsafe.Pointer)(src); src == nil {
					continue
				}
			}
			fastCopy(x.fast, dst, src)
			continue
		}
		nv, err := spec.reducers[j](c.Inputs[x.fi], c.Outputs[j])
		if err == nil {
			err = fastDec(x.f.fast, &nv, dst)
		}
		if err != nil {
			return &FieldError{Node: spec.name, Field: x.f.goName, Err: err}
		}
	}
	return a.choose(c, a.route(s))
}

// choose sets the route output to next, which must be a declared target.
func (a *goNode[S, U]) choose(c *engine.Call, next string) error {
	spec := a.spec
	for k, t := range spec.targets {
		if t == next {
			c.Outputs[len(spec.updates)] = spec.routes[k]
			return nil
		}
	}
	return &RouteError{Node: spec.name, Route: next, Targets: spec.targets}
}

// runReflect is Run for any state and update type.
func (a *goNode[S, U]) runReflect(ctx context.Context, c *engine.Call) error {
	spec := a.spec
	sp := new(S)
	sv := reflect.ValueOf(sp).Elem()
	for i, f := range spec.fields {
		if err := f.codec.dec(c.Inputs[i], sv.Field(f.index)); err != nil {
			return &FieldError{Node: spec.name, Field: f.goName, Err: err}
		}
	}
	var u U
	if a.fn != nil {
		var err error
		if u, err = a.fn(ctx, *sp); err != nil {
			return err
		}
	}
	if len(spec.updates) > 0 {
		uv := reflect.ValueOf(&u).Elem()
		for j := range spec.updates {
			up := &spec.updates[j]
			fv := uv.Field(up.index)
			if up.mode == updOptional {
				if fv.IsNil() {
					if up.keep {
						c.Outputs[j] = c.Inputs[up.fi]
					} else {
						c.Outputs[j] = up.ident
					}
					continue
				}
				fv = fv.Elem()
			}
			v, err := up.codec.enc(fv)
			if err != nil {
				return &FieldError{Node: spec.name, Field: up.goName, Err: err}
			}
			c.Outputs[j] = v
		}
		if a.route != nil {
			// The routing function sees the state after the update.
			for j := range spec.updates {
				up := &spec.updates[j]
				dst := sv.Field(up.f.index)
				if up.f.reducer == flow.ReduceReplace && up.mode != updElem {
					fv := uv.Field(up.index)
					if up.mode == updOptional {
						if fv.IsNil() {
							continue
						}
						fv = fv.Elem()
					}
					dst.Set(fv)
					continue
				}
				nv, err := spec.reducers[j](c.Inputs[up.fi], c.Outputs[j])
				if err == nil {
					err = up.f.codec.dec(nv, dst)
				}
				if err != nil {
					return &FieldError{Node: spec.name, Field: up.f.goName, Err: err}
				}
			}
		}
	}
	if a.route == nil {
		return nil
	}
	return a.choose(c, a.route(*sp))
}
