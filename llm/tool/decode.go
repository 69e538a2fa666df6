package tool

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxProblems bounds the problems one ArgsError lists.
const maxProblems = 10

// decoder decodes a JSON document into a Go value along a node tree,
// collecting every problem with the path of the field concerned.
type decoder struct {
	problems []Problem
	more     bool // problems were left off
}

func (d *decoder) add(path, format string, args ...any) {
	if len(d.problems) == maxProblems {
		d.more = true
		return
	}
	d.problems = append(d.problems, Problem{Field: path, Message: fmt.Sprintf(format, args...)})
}

// decodeArgs decodes the arguments raw into dst (a settable struct value)
// strictly: unknown properties, missing required properties, wrong types
// and values outside an enum are problems. An empty document or null means
// no arguments ({}), and a JSON string that holds an object is read as
// that object (some models encode the arguments twice).
func decodeArgs(raw json.RawMessage, dst reflect.Value, n *node) []Problem {
	var d decoder
	raw = bytes.TrimSpace(raw)
	var v any = map[string]any{}
	if len(raw) > 0 {
		x, err := parse(raw)
		if err != nil {
			return []Problem{{Message: "the arguments are not valid JSON: " + err.Error()}}
		}
		if s, ok := x.(string); ok {
			if y, err := parse([]byte(s)); err == nil {
				if _, obj := y.(map[string]any); obj {
					x = y
				}
			}
		}
		if x != nil {
			v = x
		}
	}
	d.decode("", v, dst, n)
	if d.more {
		d.problems = append(d.problems, Problem{Message: "more problems were left off"})
	}
	return d.problems
}

// parse reads one JSON value, numbers as json.Number.
func parse(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// expected names what node n wants, for messages.
func (n *node) expected() string {
	switch n.kind {
	case kString:
		return "a string"
	case kBool:
		return "a boolean"
	case kInt, kUint:
		return "an integer"
	case kFloat:
		return "a number"
	case kSlice:
		return "an array"
	case kMap, kStruct:
		return "an object"
	case kBytes:
		return "a base64 string"
	case kTime:
		return "a date-time string (RFC 3339)"
	case kDuration:
		return `a duration string such as "90s"`
	case kPointer:
		return n.elem.expected()
	}
	return "a JSON value"
}

// decode sets dst from v; path names dst in messages.
func (d *decoder) decode(path string, v any, dst reflect.Value, n *node) {
	wrong := func() { d.add(path, "expected %s, got %s", n.expected(), jsonType(v)) }
	switch n.kind {
	case kAny, kRaw:
		b, err := json.Marshal(v)
		if err != nil {
			d.add(path, "%v", err)
			return
		}
		if n.kind == kRaw {
			dst.SetBytes(b)
			return
		}
		if err := json.Unmarshal(b, dst.Addr().Interface()); err != nil {
			d.add(path, "%v", err)
		}
		return
	case kPointer:
		if v == nil {
			dst.SetZero()
			return
		}
		p := reflect.New(n.elem.typ)
		d.decode(path, v, p.Elem(), n.elem)
		dst.Set(p)
		return
	}
	switch x := v.(type) {
	case string:
		switch n.kind {
		case kString:
			if len(n.enum) > 0 && !slices.Contains(n.enum, x) {
				d.add(path, "%q is not one of %s", x, quoteAll(n.enum))
				return
			}
			dst.SetString(x)
		case kBytes:
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				d.add(path, "expected a base64 string: %v", err)
				return
			}
			dst.SetBytes(b)
		case kTime:
			t, err := time.Parse(time.RFC3339, x)
			if err != nil {
				d.add(path, "expected a date-time string (RFC 3339, e.g. \"2024-05-01T12:00:00Z\"), got %q", x)
				return
			}
			dst.Set(reflect.ValueOf(t))
		case kDuration:
			t, err := time.ParseDuration(x)
			if err != nil {
				d.add(path, "expected a duration string such as \"90s\" or \"1h30m\", got %q", x)
				return
			}
			dst.SetInt(int64(t))
		default:
			wrong()
		}
	case bool:
		if n.kind != kBool {
			wrong()
			return
		}
		dst.SetBool(x)
	case json.Number:
		d.number(path, x, dst, n, wrong)
	case []any:
		if n.kind != kSlice {
			wrong()
			return
		}
		if n.length >= 0 {
			if len(x) != n.length {
				d.add(path, "expected an array of %d items, got %d", n.length, len(x))
				return
			}
		} else {
			dst.Set(reflect.MakeSlice(n.typ, len(x), len(x)))
		}
		for i, e := range x {
			d.decode(path+"["+strconv.Itoa(i)+"]", e, dst.Index(i), n.elem)
		}
	case map[string]any:
		switch n.kind {
		case kMap:
			m := reflect.MakeMapWithSize(n.typ, len(x))
			for _, k := range sortedKeys(x) {
				e := reflect.New(n.elem.typ).Elem()
				d.decode(join(path, k), x[k], e, n.elem)
				m.SetMapIndex(reflect.ValueOf(k).Convert(n.typ.Key()), e)
			}
			dst.Set(m)
		case kStruct:
			d.object(path, x, dst, n)
		default:
			wrong()
		}
	default: // nil
		wrong()
	}
}

// number sets an integer or float dst from x.
func (d *decoder) number(path string, x json.Number, dst reflect.Value, n *node, wrong func()) {
	switch n.kind {
	case kInt:
		i, err := strconv.ParseInt(x.String(), 10, 64)
		if err != nil {
			f, ferr := x.Float64()
			if ferr != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
				d.add(path, "expected an integer, got %s", x)
				return
			}
			i = int64(f)
		}
		if dst.OverflowInt(i) {
			d.add(path, "%s is out of range for %s", x, n.typ)
			return
		}
		dst.SetInt(i)
	case kUint:
		u, err := strconv.ParseUint(x.String(), 10, 64)
		if err != nil {
			f, ferr := x.Float64()
			if ferr != nil || f != math.Trunc(f) || f < 0 || f >= math.MaxUint64 {
				if strings.HasPrefix(x.String(), "-") {
					d.add(path, "expected an integer of at least 0, got %s", x)
				} else {
					d.add(path, "expected an integer, got %s", x)
				}
				return
			}
			u = uint64(f)
		}
		if dst.OverflowUint(u) {
			d.add(path, "%s is out of range for %s", x, n.typ)
			return
		}
		dst.SetUint(u)
	case kFloat:
		f, err := x.Float64()
		if err != nil || dst.OverflowFloat(f) {
			d.add(path, "%s is out of range for %s", x, n.typ)
			return
		}
		dst.SetFloat(f)
	default:
		wrong()
	}
}

// object sets struct dst from the properties in x.
func (d *decoder) object(path string, x map[string]any, dst reflect.Value, n *node) {
	for _, k := range sortedKeys(x) {
		i, ok := slices.BinarySearchFunc(n.fields, k, func(f *field, k string) int { return strings.Compare(f.name, k) })
		if !ok {
			d.add(join(path, k), "unknown field (the fields are %s)", fieldNames(n))
			continue
		}
		f := n.fields[i]
		v := x[k]
		if v == nil && !f.required {
			continue // null for an optional field: absent
		}
		d.decode(join(path, k), v, dst.FieldByIndex(f.index), f.node)
	}
	for _, f := range n.fields {
		if _, ok := x[f.name]; f.required && !ok {
			d.add(join(path, f.name), "missing required field")
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func fieldNames(n *node) string {
	if len(n.fields) == 0 {
		return "none"
	}
	names := make([]string, len(n.fields))
	for i, f := range n.fields {
		names[i] = f.name
	}
	return quoteAll(names)
}

func quoteAll(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
