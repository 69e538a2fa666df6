package shipments

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
)

// Slots are one sub-goal's outputs by slot name, the seed's slot dicts:
// JSON data (nil, bool, int, float64, string, []any, map[string]any).
// Decoding keeps integers as int, so that an offset read back from a
// thread or a state is the int it was written as; other numbers are
// float64.
type Slots map[string]any

// UnmarshalJSON decodes a JSON object, integers as int.
func (s *Slots) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := decodeJSON(b, &m); err != nil {
		return err
	}
	if m == nil {
		*s = nil
		return nil
	}
	*s = Slots(normalizeMap(m))
	return nil
}

// Has reports whether slot name is present.
func (s Slots) Has(name string) bool {
	_, ok := s[name]
	return ok
}

// Int returns slot name as an int: ok is false when it is absent or not
// an integral number.
func (s Slots) Int(name string) (int, bool) {
	return asInt(s[name])
}

// String returns slot name as a string: ok is false when it is absent or
// not a string.
func (s Slots) String(name string) (string, bool) {
	v, ok := s[name].(string)
	return v, ok
}

// Bool returns slot name as a bool: false when absent or not a bool.
func (s Slots) Bool(name string) bool {
	v, _ := s[name].(bool)
	return v
}

// Object returns slot name as a JSON object: ok is false when it is
// absent or not an object.
func (s Slots) Object(name string) (map[string]any, bool) {
	switch v := s[name].(type) {
	case map[string]any:
		return v, true
	case Slots:
		return map[string]any(v), true
	}
	return nil, false
}

// Clone returns a copy of s (the values are shared).
func (s Slots) Clone() Slots { return maps.Clone(s) }

// asInt converts a decoded JSON number to an int.
func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n), true
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return int(i), true
		}
	}
	return 0, false
}

// decodeJSON decodes b into v keeping numbers as json.Number, and
// rejects data after the value.
func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// normalize turns decoded JSON (with json.Number) into plain data:
// integers as int, other numbers as float64.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		return normalizeMap(x)
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	}
	return v
}

func normalizeMap(m map[string]any) map[string]any {
	for k, e := range m {
		m[k] = normalize(e)
	}
	return m
}

// cloneJSON deep-copies JSON data (maps and slices), so that a query can
// be changed without changing the slot it came from.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneJSON(e)
		}
		return out
	case Slots:
		return cloneJSON(map[string]any(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSON(e)
		}
		return out
	}
	return v
}

// withOutputs returns a copy of completed with slots added under id.
func withOutputs(completed map[int]Slots, id int, slots Slots) map[int]Slots {
	out := make(map[int]Slots, len(completed)+1)
	maps.Copy(out, completed)
	if slots == nil {
		slots = Slots{}
	}
	out[id] = slots
	return out
}
