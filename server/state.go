package server

import (
	"encoding/json"
	"strings"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// Values is a thread's state as LangGraph shows it: one JSON object of
// the parameters (input_text among them), the variables and slots by
// name, and each node's latest outputs as an object under the node's
// name. Cells never written are left out, as LangGraph leaves out
// channels never written. Keys keep the workflow's order.
type Values struct {
	keys []string
	vals []json.RawMessage
}

// Get returns the JSON of key, or nil.
func (v *Values) Get(key string) json.RawMessage {
	if v == nil {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// Len is the number of keys.
func (v *Values) Len() int {
	if v == nil {
		return 0
	}
	return len(v.keys)
}

// set sets key (in place when present, else at the end).
func (v *Values) set(key string, raw json.RawMessage) {
	for i, k := range v.keys {
		if k == key {
			v.vals[i] = raw
			return
		}
	}
	v.keys = append(v.keys, key)
	v.vals = append(v.vals, raw)
}

// MarshalJSON writes the object, keys in order.
func (v *Values) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	var b []byte
	b = append(b, '{')
	for i, k := range v.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(b, kb...)
		b = append(b, ':')
		b = append(b, v.vals[i]...)
	}
	return append(b, '}'), nil
}

// ValuesOf maps a thread's state to its Values (nil state: empty).
func ValuesOf(ts *engine.ThreadState) (*Values, error) {
	out := &Values{}
	if ts == nil || ts.State == nil {
		return out, nil
	}
	nodes := map[string]*Values{}
	for _, cv := range ts.State.Cells {
		if cv.Cell < 0 || cv.Cell >= len(ts.Cells) || cv.Value.Kind() == flow.KindNull {
			continue
		}
		c := ts.Cells[cv.Cell]
		raw, err := json.Marshal(cv.Value)
		if err != nil {
			return nil, err
		}
		switch c.Kind {
		case flow.CellParam, flow.CellVar, flow.CellSlot:
			out.set(c.Name, raw)
		case flow.CellOutput:
			node, field, ok := strings.Cut(c.Name, ".")
			if !ok {
				continue
			}
			nv := nodes[node]
			if nv == nil {
				nv = &Values{}
				nodes[node] = nv
				out.set(node, nil) // its place, filled below
			}
			nv.set(field, raw)
		}
	}
	for node, nv := range nodes {
		raw, err := nv.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out.set(node, raw)
	}
	return out, nil
}
