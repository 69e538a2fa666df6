package flow

import (
	"fmt"
	"maps"
	"slices"
)

// FallbackKey is the configuration field, on a node or on the action it
// calls, that asks for a fallback: `fallback: { intent: "not_clear" }`.
const FallbackKey = "fallback"

// PlanFallback is what a node completes with when it fails after its
// retries and its workflow asked for it (`fallback: {...}` on the node or
// on its action): the values given, by output, and the typed zero
// (ZeroOf) of the outputs left out. The engine records every fallback it
// takes as a notice of the run.
type PlanFallback struct {
	Outputs []Value  // parallel to the node's Outputs
	Given   []string // the outputs the fallback names, in output order
	Pos     Pos      // where the fallback was written
}

// compileFallbacks compiles each node's fallback: the node's own
// `fallback` (null turns off its action's), else its action's. It must
// name declared outputs, with values of their types, and give a value
// to every Enum output (an Enum has no typed zero); a node that falls
// back never fails, so an `on: error` edge from it is an error too.
func (c *planner) compileFallbacks() {
	for _, pn := range c.p.Nodes {
		n := pn.Node
		v, at, owner, ok := c.fallbackOf(n)
		if !ok || v.IsNull() {
			continue
		}
		if v.Kind() != KindObject {
			c.errorf(at, "type-mismatch", "%s: fallback must be an object of output values, e.g. fallback: { %s }, not %s", owner, exampleFallback(pn), v)
			continue
		}
		given := v.Object()
		fb := &PlanFallback{Outputs: make([]Value, len(pn.Outputs)), Pos: at}
		bad := false
		for _, name := range slices.Sorted(maps.Keys(given)) {
			if !slices.ContainsFunc(pn.Outputs, func(o PlanOutput) bool { return o.Name == name }) {
				c.errorf(at, "unknown-name", "%s: fallback for %s, which is not an output of node %s%s", owner, name, n.Name, suggest(name, outputNamesOf(pn)))
				bad = true
			}
		}
		for i, o := range pn.Outputs {
			x, ok := given[o.Name]
			if !ok {
				z, has := ZeroOf(o.Type)
				if !has {
					c.errorf(at, "missing", "%s: fallback gives no value for %s, an %s, which has no typed zero: give one, e.g. %s: %q", owner, o.Name, o.Type, o.Name, exampleValue(o.Type))
					bad = true
				}
				fb.Outputs[i] = z
				continue
			}
			cv, err := Conform(x, o.Type)
			if err != nil {
				c.errorf(at, "type-mismatch", "%s: fallback for %s: %v", owner, o.Name, err)
				bad = true
				continue
			}
			fb.Outputs[i] = cv
			fb.Given = append(fb.Given, o.Name)
		}
		if len(pn.OnError) > 0 {
			e := pn.OnError[0].Edge
			c.errorf(e.Pos, "unreachable", "node %s falls back (%s) and so never fails: its on: error edge is never taken; remove the fallback or the edge", n.Name, owner)
			bad = true
		}
		if !bad {
			pn.Fallback = fb
		}
	}
}

// fallbackOf returns the fallback asked for a node: its own, else its
// action's; at is where it was written and owner names it for messages.
func (c *planner) fallbackOf(n *Node) (v Value, at Pos, owner string, ok bool) {
	if v, ok := n.Config[FallbackKey]; ok {
		return v, n.ConfigPos[FallbackKey], "node " + n.Name, true
	}
	if n.Action == "" {
		return Null, Pos{}, "", false
	}
	b := c.w.Binding(n.Action)
	if b == nil {
		return Null, Pos{}, "", false
	}
	if v, ok := b.Config[FallbackKey]; ok {
		return v, b.ConfigPos[FallbackKey], "node " + n.Name + ", fallback of action " + b.Name, true
	}
	return Null, Pos{}, "", false
}

func outputNamesOf(pn *PlanNode) []string {
	names := make([]string, len(pn.Outputs))
	for i, o := range pn.Outputs {
		names[i] = o.Name
	}
	return names
}

// exampleFallback writes a fallback for pn's first output, for messages.
func exampleFallback(pn *PlanNode) string {
	if len(pn.Outputs) == 0 {
		return ""
	}
	o := pn.Outputs[0]
	if o.Type.Kind == KindEnum {
		return fmt.Sprintf("%s: %q", o.Name, exampleValue(o.Type))
	}
	z, _ := ZeroOf(o.Type)
	return fmt.Sprintf("%s: %s", o.Name, z)
}

func exampleValue(t Type) string {
	if len(t.Values) > 0 {
		return t.Values[len(t.Values)-1]
	}
	return ""
}
