package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/weftlang/weft/llm/schema"
)

// kind is how a Go type appears in JSON.
type kind int

const (
	kString kind = iota
	kBool
	kInt
	kUint
	kFloat
	kSlice    // slice or array
	kBytes    // []byte: a base64 string, as encoding/json writes it
	kMap      // map[string]T
	kStruct   // struct: an object with fixed properties
	kTime     // time.Time: an RFC 3339 date-time string
	kDuration // time.Duration: a Go duration string such as "90s"
	kPointer  // *T: T, optional
	kAny      // interface{}: any JSON value
	kRaw      // json.RawMessage: any JSON value, kept as text
)

// node is the shape of one Go type, derived once by reflection and then
// used both to write the JSON Schema and to decode arguments strictly.
type node struct {
	kind   kind
	typ    reflect.Type
	elem   *node    // kSlice, kMap, kPointer
	length int      // kSlice: the length of an array, -1 for a slice
	enum   []string // kString: the allowed values, if any
	fields []*field // kStruct, sorted by name
}

// field is one property of a struct.
type field struct {
	name     string // the JSON name
	index    []int  // for reflect.Value.FieldByIndex (embedded structs)
	required bool
	desc     string
	node     *node
}

// The Go types with a JSON form of their own.
func timeType() reflect.Type     { return reflect.TypeFor[time.Time]() }
func durationType() reflect.Type { return reflect.TypeFor[time.Duration]() }
func rawType() reflect.Type      { return reflect.TypeFor[json.RawMessage]() }

// deriveArgs derives the node of an argument type, which must be a struct.
func deriveArgs(t reflect.Type) (*node, error) {
	if t.Kind() != reflect.Struct || t == timeType() {
		return nil, &SchemaError{Type: t.String(), Reason: "the arguments must be a struct"}
	}
	d := deriver{root: t, active: map[reflect.Type]bool{}}
	return d.derive(t, "")
}

// deriver walks a type; active holds the structs being walked, to reject
// recursive types, whose schema would be infinite.
type deriver struct {
	root   reflect.Type
	active map[reflect.Type]bool
}

func (d *deriver) fail(path, format string, args ...any) error {
	return &SchemaError{Type: d.root.String(), Field: path, Reason: fmt.Sprintf(format, args...)}
}

func (d *deriver) derive(t reflect.Type, path string) (*node, error) {
	switch t {
	case timeType():
		return &node{kind: kTime, typ: t}, nil
	case durationType():
		return &node{kind: kDuration, typ: t}, nil
	case rawType():
		return &node{kind: kRaw, typ: t}, nil
	}
	n := &node{typ: t}
	switch t.Kind() {
	case reflect.String:
		n.kind = kString
	case reflect.Bool:
		n.kind = kBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.kind = kInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n.kind = kUint
	case reflect.Float32, reflect.Float64:
		n.kind = kFloat
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return nil, d.fail(path, "interface type %s is not supported (only any)", t)
		}
		n.kind = kAny
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Pointer {
			return nil, d.fail(path, "pointer to pointer %s is not supported", t)
		}
		elem, err := d.derive(t.Elem(), path)
		if err != nil {
			return nil, err
		}
		n.kind, n.elem = kPointer, elem
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			n.kind = kBytes
			return n, nil
		}
		elem, err := d.derive(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		n.kind, n.elem, n.length = kSlice, elem, -1
		if t.Kind() == reflect.Array {
			n.length = t.Len()
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, d.fail(path, "map key type %s is not supported (only string keys)", t.Key())
		}
		elem, err := d.derive(t.Elem(), path+"{}")
		if err != nil {
			return nil, err
		}
		n.kind, n.elem = kMap, elem
	case reflect.Struct:
		if d.active[t] {
			return nil, d.fail(path, "recursive type %s is not supported", t)
		}
		d.active[t] = true
		defer delete(d.active, t)
		n.kind = kStruct
		if err := d.fields(t, nil, path, n); err != nil {
			return nil, err
		}
		slices.SortFunc(n.fields, func(a, b *field) int { return strings.Compare(a.name, b.name) })
	default:
		return nil, d.fail(path, "type %s is not supported", t)
	}
	return n, nil
}

// fields adds the properties of struct t (reached through index) to n,
// flattening embedded structs as encoding/json does.
func (d *deriver) fields(t reflect.Type, index []int, path string, n *node) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(slices.Clip(index), i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				if ft.Elem().Kind() == reflect.Struct {
					return d.fail(join(path, sf.Name), "embedded pointer %s is not supported", ft)
				}
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != timeType() {
				if d.active[ft] {
					return d.fail(join(path, sf.Name), "recursive type %s is not supported", ft)
				}
				d.active[ft] = true
				err := d.fields(ft, idx, path, n)
				delete(d.active, ft)
				if err != nil {
					return err
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fpath := join(path, name)
		optional := false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				optional = true
			case "string":
				return d.fail(fpath, `the json tag option "string" is not supported`)
			}
		}
		if slices.ContainsFunc(n.fields, func(f *field) bool { return f.name == name }) {
			return d.fail(fpath, "two fields have the JSON name %q", name)
		}
		fn, err := d.derive(sf.Type, fpath)
		if err != nil {
			return err
		}
		if fn.kind == kPointer {
			optional = true
		}
		if e, ok := sf.Tag.Lookup("enum"); ok {
			if err := setEnum(fn, e); err != nil {
				return d.fail(fpath, "%v", err)
			}
		}
		n.fields = append(n.fields, &field{
			name:     name,
			index:    idx,
			required: !optional,
			desc:     sf.Tag.Get("desc"),
			node:     fn,
		})
	}
	return nil
}

// setEnum puts the values of an enum tag on the string node n, or on the
// string element of a pointer, slice or array.
func setEnum(n *node, tag string) error {
	for n.kind == kPointer || n.kind == kSlice {
		n = n.elem
	}
	if n.kind != kString {
		return fmt.Errorf("an enum tag needs a string type, not %s", n.typ)
	}
	for v := range strings.SplitSeq(tag, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return fmt.Errorf("enum tag %q has an empty value", tag)
		}
		if !slices.Contains(n.enum, v) {
			n.enum = append(n.enum, v)
		}
	}
	return nil
}

// join appends a property name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// schema returns the JSON Schema of n as maps and slices.
func (n *node) schema() map[string]any {
	switch n.kind {
	case kString:
		s := map[string]any{"type": "string"}
		if len(n.enum) > 0 {
			s["enum"] = n.enum
		}
		return s
	case kBool:
		return map[string]any{"type": "boolean"}
	case kInt:
		return map[string]any{"type": "integer"}
	case kUint:
		return map[string]any{"type": "integer", "minimum": 0}
	case kFloat:
		return map[string]any{"type": "number"}
	case kBytes:
		return map[string]any{"type": "string", "contentEncoding": "base64"}
	case kSlice:
		s := map[string]any{"type": "array", "items": n.elem.schema()}
		if n.length >= 0 {
			s["minItems"], s["maxItems"] = n.length, n.length
		}
		return s
	case kMap:
		return map[string]any{"type": "object", "additionalProperties": n.elem.schema()}
	case kStruct:
		props := make(map[string]any, len(n.fields))
		var required []string
		for _, f := range n.fields {
			p := f.node.schema()
			if f.desc != "" {
				p["description"] = f.desc
			}
			props[f.name] = p
			if f.required {
				required = append(required, f.name)
			}
		}
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			slices.Sort(required)
			s["required"] = required
		}
		return s
	case kTime:
		return map[string]any{"type": "string", "format": "date-time"}
	case kDuration:
		return map[string]any{
			"type":        "string",
			"pattern":     schema.DurationPattern,
			"description": `a duration in Go syntax, e.g. "90s", "1h30m", "250ms"`,
		}
	case kPointer:
		return n.elem.schema()
	}
	return map[string]any{} // kAny, kRaw
}

// marshalSchema writes the schema of n as compact JSON, keys sorted (by
// encoding/json), without HTML escaping.
func marshalSchema(n *node) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(n.schema()); err != nil {
		return nil, &SchemaError{Type: n.typ.String(), Reason: err.Error()}
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// SchemaFor returns the JSON Schema that Func derives for the argument
// struct A: an object whose properties are A's exported fields, named by
// their json tags, with additionalProperties false. A field is required
// unless its json tag says omitempty or omitzero or its type is a pointer.
// A `desc:"..."` tag becomes the property's description and an
// `enum:"a,b,c"` tag on a string (or a slice of strings) lists its allowed
// values. Keys are sorted, so the output is the same bytes every time.
//
// Supported field types: string, bool, the integer and float types, slices
// and arrays, []byte (base64), maps with string keys, structs (nested or
// embedded), pointers (optional), time.Time (an RFC 3339 date-time string),
// time.Duration (a Go duration string such as "90s"), any and
// json.RawMessage (any JSON value). Anything else, a recursive type or the
// json tag option ",string" gives a *SchemaError.
func SchemaFor[A any]() (json.RawMessage, error) {
	n, err := deriveArgs(reflect.TypeFor[A]())
	if err != nil {
		return nil, err
	}
	return marshalSchema(n)
}
