// Package kv gives workflows the store's cross-thread key-value store
// (store.Items; LangGraph's "Store", used for long-term memory): actions
// that put, get, search and delete JSON objects under a key in a
// namespace, shared by every thread and readable over the server's
// /store endpoints.
//
// The actions read their node's inputs by name:
//
//	kv.put     namespace, key, value (an Object)        outputs: none needed
//	kv.get     namespace, key                           outputs: value (Object, null when absent), found (Bool)
//	kv.search  namespace (a prefix), filter?, limit?    outputs: items (List of {namespace, key, value})
//	kv.delete  namespace, key                           outputs: none needed
//
// A namespace is a List[String] of labels, or a String of labels joined
// by "." ("users.u1"). An output a node does not declare is not set.
package kv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// The action names.
const (
	Put    = "kv.put"
	Get    = "kv.get"
	Search = "kv.search"
	Delete = "kv.delete"
)

// Register adds the kv actions over items to reg, replacing any of the
// same names.
func Register(reg *engine.Registry, items store.Items) {
	reg.Replace(Put, engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		ns, err := namespace(c)
		if err != nil {
			return err
		}
		v := c.Input("value")
		if v.Kind() != flow.KindObject {
			return fmt.Errorf("%s: input value must be an Object, not %s", Put, v.Kind())
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return items.PutItem(ctx, &store.Item{Namespace: ns, Key: c.Input("key").Text(), Value: raw})
	}))
	reg.Replace(Get, engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		ns, err := namespace(c)
		if err != nil {
			return err
		}
		it, err := items.Item(ctx, ns, c.Input("key").Text())
		if errors.Is(err, store.ErrNotFound) {
			return setIf(c, map[string]flow.Value{"value": flow.Null, "found": flow.BoolValue(false)})
		}
		if err != nil {
			return err
		}
		var v flow.Value
		if err := json.Unmarshal(it.Value, &v); err != nil {
			return err
		}
		return setIf(c, map[string]flow.Value{"value": v, "found": flow.BoolValue(true)})
	}))
	reg.Replace(Search, engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		ns, err := prefix(c)
		if err != nil {
			return err
		}
		q := store.ItemQuery{Prefix: ns, Limit: int(c.Input("limit").Int())}
		if f := c.Input("filter"); f.Kind() == flow.KindObject {
			q.Filter = map[string]json.RawMessage{}
			for k, v := range f.Object() {
				raw, err := json.Marshal(v)
				if err != nil {
					return err
				}
				q.Filter[k] = raw
			}
		} else if !f.IsNull() {
			return fmt.Errorf("%s: input filter must be an Object, not %s", Search, f.Kind())
		}
		found, err := items.SearchItems(ctx, q)
		if err != nil {
			return err
		}
		list := make([]flow.Value, 0, len(found))
		for _, it := range found {
			var v flow.Value
			if err := json.Unmarshal(it.Value, &v); err != nil {
				return err
			}
			list = append(list, flow.ObjectValue(map[string]flow.Value{"namespace": flow.StringList(it.Namespace...), "key": flow.StringValue(it.Key), "value": v}))
		}
		return setIf(c, map[string]flow.Value{"items": flow.ListValue(list...)})
	}))
	reg.Replace(Delete, engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		ns, err := namespace(c)
		if err != nil {
			return err
		}
		return items.DeleteItem(ctx, ns, c.Input("key").Text())
	}))
}

// namespace reads the namespace input: a list of labels, or a string of
// labels joined by ".".
func namespace(c *engine.Call) ([]string, error) {
	ns, err := prefix(c)
	if err == nil && len(ns) == 0 {
		err = fmt.Errorf("%s: node %s: input namespace is empty", c.Action, c.Node.Name)
	}
	return ns, err
}

// prefix reads the namespace input, which may be empty.
func prefix(c *engine.Call) ([]string, error) {
	v := c.Input("namespace")
	switch v.Kind() {
	case flow.KindNull:
		return nil, nil
	case flow.KindString:
		if v.Text() == "" {
			return nil, nil
		}
		return strings.Split(v.Text(), store.NamespaceSep), nil
	case flow.KindList:
		if ss, ok := v.Strings(); ok {
			return ss, nil
		}
	}
	return nil, fmt.Errorf("%s: node %s: input namespace must be a List[String] or a String, not %s", c.Action, c.Node.Name, v.Kind())
}

// setIf sets the outputs the node declares among out.
func setIf(c *engine.Call, out map[string]flow.Value) error {
	for _, o := range c.Node.Outputs {
		if v, ok := out[o.Name]; ok {
			if err := c.SetOutput(o.Name, v); err != nil {
				return err
			}
		}
	}
	return nil
}
