// Package schema turns a node's declared outputs into a JSON Schema
// (draft 2020-12) for structured model output, and turns a JSON reply that
// matches that schema back into typed flow values.
//
// The mapping from weft types to JSON Schema:
//
//	String      {"type": "string"}
//	Int         {"type": "integer"}
//	Float       {"type": "number"}
//	Bool        {"type": "boolean"}
//	Duration    {"type": "string", "pattern": <Go duration syntax>}
//	Enum[a, b]  {"type": "string", "enum": ["a", "b"]}
//	List[T]     {"type": "array", "items": <T>}
//	Object      {"type": "object"}
//	Any         {} (any JSON value, null included)
//
// The schema of a list of outputs is an object whose properties are the
// outputs, all required, with additionalProperties false. Output is
// deterministic (object keys sorted), so schemas can be golden-tested and
// used as cache or replay keys.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weftlang/weft/flow"
)

// Draft is the JSON Schema dialect of the schemas this package writes.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// DurationPattern is the regular expression a Duration output must match:
// Go's time.ParseDuration syntax ("90s", "1h30m", "1.5h", "-2m", "0").
// It is valid both as a Go regexp and as an ECMA-262 one.
const DurationPattern = `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

// Error reports an output declaration that has no JSON Schema, or a JSON
// reply that does not fit the declared outputs.
type Error struct {
	Field string // the output concerned; "" when the problem is not about one output
	Err   error  // what is wrong; a *flow.TypeError when a value does not fit its type
}

// Error names the output and the problem.
func (e *Error) Error() string {
	if e.Field == "" {
		return "schema: " + e.Err.Error()
	}
	return "schema: output " + e.Field + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// FromFields returns the JSON Schema of an object that has one required
// property per declared output and no other properties.
func FromFields(fields []*flow.Field) (json.RawMessage, error) {
	doc, err := objectSchema(fields)
	if err != nil {
		return nil, err
	}
	doc["$schema"] = Draft
	return marshal(doc)
}

// FromType returns the JSON Schema of one weft type. It has no "$schema"
// keyword: it is meant to be embedded in a larger schema (a tool's
// parameters, a property).
func FromType(t flow.Type) (json.RawMessage, error) {
	doc, err := typeSchema(t)
	if err != nil {
		return nil, &Error{Err: err}
	}
	return marshal(doc)
}

// Object returns the schema of FromFields as a Go value (maps and slices),
// for callers that embed it in a larger document.
func Object(fields []*flow.Field) (map[string]any, error) {
	return objectSchema(fields)
}

// objectSchema builds the schema of FromFields, without "$schema".
func objectSchema(fields []*flow.Field) (map[string]any, error) {
	props := make(map[string]any, len(fields))
	required := make([]string, 0, len(fields))
	for i, f := range fields {
		if f == nil {
			return nil, &Error{Err: fmt.Errorf("output %d is nil", i)}
		}
		if f.Name == "" {
			return nil, &Error{Err: fmt.Errorf("output %d has no name", i)}
		}
		if _, dup := props[f.Name]; dup {
			return nil, &Error{Field: f.Name, Err: errors.New("declared twice")}
		}
		s, err := typeSchema(f.Type)
		if err != nil {
			return nil, &Error{Field: f.Name, Err: err}
		}
		props[f.Name] = s
		required = append(required, f.Name)
	}
	slices.Sort(required)
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}, nil
}

// typeSchema builds the schema of one type.
func typeSchema(t flow.Type) (map[string]any, error) {
	switch t.Kind {
	case flow.KindString:
		return map[string]any{"type": "string"}, nil
	case flow.KindInt:
		return map[string]any{"type": "integer"}, nil
	case flow.KindFloat:
		return map[string]any{"type": "number"}, nil
	case flow.KindBool:
		return map[string]any{"type": "boolean"}, nil
	case flow.KindDuration:
		return map[string]any{
			"type":        "string",
			"pattern":     DurationPattern,
			"description": `a duration in Go syntax, e.g. "90s", "1h30m", "250ms"`,
		}, nil
	case flow.KindEnum:
		if len(t.Values) == 0 {
			return nil, errors.New("Enum has no values")
		}
		vals := make([]string, 0, len(t.Values))
		for _, v := range t.Values {
			if !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		return map[string]any{"type": "string", "enum": vals}, nil
	case flow.KindList:
		items, err := typeSchema(t.ElemType())
		if err != nil {
			return nil, fmt.Errorf("list element: %w", err)
		}
		return map[string]any{"type": "array", "items": items}, nil
	case flow.KindObject:
		return map[string]any{"type": "object"}, nil
	case flow.KindAny, flow.KindNull:
		// KindNull is the zero Type: no declared type, so anything goes.
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("type %s has no JSON Schema", t)
}

// marshal writes doc as JSON without HTML escaping; encoding/json sorts map
// keys, which makes the output deterministic.
func marshal(doc any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, &Error{Err: err}
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// Decode converts a JSON object holding the declared outputs into flow
// values, each conformed to its declared type (flow.Conform): an integral
// Float becomes an Int, a string names an Enum value or parses as a
// Duration. Every declared output must be present (an Any output may be
// null); properties that are not declared are ignored. The first problem
// found is returned as an *Error naming the output.
func Decode(raw json.RawMessage, fields []*flow.Field) (map[string]flow.Value, error) {
	var v flow.Value
	if err := v.UnmarshalJSON(raw); err != nil {
		return nil, &Error{Err: fmt.Errorf("reply is not JSON: %w", err)}
	}
	obj := v.Object()
	if v.Kind() != flow.KindObject {
		return nil, &Error{Err: fmt.Errorf("reply is a JSON %s, not an object", jsonKind(v))}
	}
	out := make(map[string]flow.Value, len(fields))
	for i, f := range fields {
		if f == nil {
			return nil, &Error{Err: fmt.Errorf("output %d is nil", i)}
		}
		x, ok := obj[f.Name]
		if !ok {
			return nil, &Error{Field: f.Name, Err: errors.New("missing from the reply")}
		}
		c, err := flow.Conform(x, f.Type)
		if err != nil {
			return nil, &Error{Field: f.Name, Err: err}
		}
		out[f.Name] = c
	}
	return out, nil
}

// Zero returns the fallback value of a type: "" for a String, 0 for
// numbers and Durations, false for a Bool, the first value of an Enum, an
// empty List or Object, and null for Any.
func Zero(t flow.Type) flow.Value {
	switch t.Kind {
	case flow.KindString:
		return flow.StringValue("")
	case flow.KindInt:
		return flow.IntValue(0)
	case flow.KindFloat:
		return flow.FloatValue(0)
	case flow.KindBool:
		return flow.BoolValue(false)
	case flow.KindDuration:
		return flow.DurationValue(0)
	case flow.KindEnum:
		if len(t.Values) > 0 {
			return flow.StringValue(t.Values[0])
		}
		return flow.StringValue("")
	case flow.KindList:
		return flow.ListValue()
	case flow.KindObject:
		return flow.ObjectValue(nil)
	}
	return flow.Null
}

// jsonKind names the JSON kind of a value, for messages.
func jsonKind(v flow.Value) string {
	switch v.Kind() {
	case flow.KindNull:
		return "null"
	case flow.KindBool:
		return "boolean"
	case flow.KindInt, flow.KindFloat:
		return "number"
	case flow.KindString:
		return "string"
	case flow.KindList:
		return "array"
	}
	return "object"
}
