package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Value is a weft runtime value: null, Bool, Int, Float, String, Duration,
// List or Object. Values are immutable: a List or Object is never changed
// after it is made, so values can be shared between steps, branches and
// events without copying. The zero Value is null.
type Value struct {
	k Kind
	n uint64 // Bool (0/1), Int, Float bits, Duration
	s string
	x any // []Value for a List, map[string]Value for an Object
}

// Null is the null value, the value of a cell never written.
var Null = Value{}

// BoolValue returns a Bool.
func BoolValue(b bool) Value {
	if b {
		return Value{k: KindBool, n: 1}
	}
	return Value{k: KindBool}
}

// IntValue returns an Int.
func IntValue(i int64) Value { return Value{k: KindInt, n: uint64(i)} }

// FloatValue returns a Float.
func FloatValue(f float64) Value { return Value{k: KindFloat, n: math.Float64bits(f)} }

// StringValue returns a String.
func StringValue(s string) Value { return Value{k: KindString, s: s} }

// DurationValue returns a Duration.
func DurationValue(d time.Duration) Value { return Value{k: KindDuration, n: uint64(d)} }

// ListValue returns a List holding elems. The caller must not change elems
// afterwards.
func ListValue(elems ...Value) Value {
	if elems == nil {
		elems = []Value{}
	}
	return Value{k: KindList, x: elems}
}

// StringList returns a List of Strings.
func StringList(ss ...string) Value {
	vs := make([]Value, len(ss))
	for i, s := range ss {
		vs[i] = StringValue(s)
	}
	return ListValue(vs...)
}

// ObjectValue returns an Object holding m. The caller must not change m
// afterwards.
func ObjectValue(m map[string]Value) Value {
	if m == nil {
		m = map[string]Value{}
	}
	return Value{k: KindObject, x: m}
}

// Kind returns the value's kind; KindNull for null.
func (v Value) Kind() Kind { return v.k }

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.k == KindNull }

// Bool returns the value of a Bool, and false for other kinds.
func (v Value) Bool() bool { return v.k == KindBool && v.n != 0 }

// Int returns the value of an Int (a Float is truncated), and 0 for other
// kinds.
func (v Value) Int() int64 {
	switch v.k {
	case KindInt, KindDuration:
		return int64(v.n)
	case KindFloat:
		return int64(math.Float64frombits(v.n))
	}
	return 0
}

// Float returns the value of a Float or an Int, and 0 for other kinds.
func (v Value) Float() float64 {
	switch v.k {
	case KindFloat:
		return math.Float64frombits(v.n)
	case KindInt:
		return float64(int64(v.n))
	}
	return 0
}

// Str returns the value of a String, and "" for other kinds (use String for
// a printable form of any value).
func (v Value) Str() string { return v.s }

// Duration returns the value of a Duration, and 0 for other kinds.
func (v Value) Duration() time.Duration {
	if v.k == KindDuration {
		return time.Duration(v.n)
	}
	return 0
}

// List returns the elements of a List, and nil for other kinds. The result
// must not be changed.
func (v Value) List() []Value {
	if l, ok := v.x.([]Value); ok {
		return l
	}
	return nil
}

// Object returns the fields of an Object, and nil for other kinds. The
// result must not be changed.
func (v Value) Object() map[string]Value {
	if m, ok := v.x.(map[string]Value); ok {
		return m
	}
	return nil
}

// Len returns the length of a String (in bytes), List or Object, and 0
// otherwise.
func (v Value) Len() int {
	switch v.k {
	case KindString:
		return len(v.s)
	case KindList:
		return len(v.List())
	case KindObject:
		return len(v.Object())
	}
	return 0
}

// Truthy reports whether v counts as true in a condition: true, a non-zero
// number, a non-empty string, list or object.
func (v Value) Truthy() bool {
	switch v.k {
	case KindBool, KindInt, KindDuration:
		return v.n != 0
	case KindFloat:
		return v.Float() != 0
	case KindString, KindList, KindObject:
		return v.Len() > 0
	}
	return false
}

// Equal reports whether v and w are the same value. Int and Float compare by
// number; Lists and Objects compare deeply.
func (v Value) Equal(w Value) bool {
	if v.k != w.k {
		if isNum(v.k) && isNum(w.k) {
			return v.Float() == w.Float()
		}
		return false
	}
	switch v.k {
	case KindNull:
		return true
	case KindString:
		return v.s == w.s
	case KindFloat:
		return v.Float() == w.Float()
	case KindList:
		return slices.EqualFunc(v.List(), w.List(), Value.Equal)
	case KindObject:
		a, b := v.Object(), w.Object()
		if len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !x.Equal(y) {
				return false
			}
		}
		return true
	}
	return v.n == w.n
}

func isNum(k Kind) bool { return k == KindInt || k == KindFloat }

// Compare orders two values of comparable kinds (numbers, strings,
// durations, bools): it returns -1, 0 or +1, and ok=false when the kinds
// cannot be ordered against each other.
func (v Value) Compare(w Value) (c int, ok bool) {
	switch {
	case v.k == KindInt && w.k == KindInt:
		return cmpOrdered(int64(v.n), int64(w.n)), true
	case isNum(v.k) && isNum(w.k):
		return cmpOrdered(v.Float(), w.Float()), true
	case v.k == KindString && w.k == KindString:
		return strings.Compare(v.s, w.s), true
	case v.k == KindDuration && w.k == KindDuration:
		return cmpOrdered(int64(v.n), int64(w.n)), true
	case v.k == KindBool && w.k == KindBool:
		return cmpOrdered(v.n, w.n), true
	}
	return 0, false
}

func cmpOrdered[T int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// String returns a readable form: strings quoted, lists and objects in JSON
// style with object keys sorted. It is meant for messages and traces.
func (v Value) String() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v Value) write(b *strings.Builder) {
	switch v.k {
	case KindNull:
		b.WriteString("null")
	case KindBool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case KindInt:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case KindFloat:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case KindString:
		b.WriteString(strconv.Quote(v.s))
	case KindDuration:
		b.WriteString(v.Duration().String())
	case KindList:
		b.WriteByte('[')
		for i, e := range v.List() {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteByte(']')
	case KindObject:
		m := v.Object()
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteString(": ")
			m[k].write(b)
		}
		b.WriteByte('}')
	}
}

// Text returns the value as plain text, the way a prompt or a message shows
// it: a String without quotes, anything else as String does.
func (v Value) Text() string {
	if v.k == KindString {
		return v.s
	}
	return v.String()
}

// MarshalJSON encodes the value as JSON; a Duration becomes its string form
// ("1m30s").
func (v Value) MarshalJSON() ([]byte, error) {
	return json.Marshal(v.Go())
}

// UnmarshalJSON decodes any JSON value. Numbers without a fraction or
// exponent become Int, others Float.
func (v *Value) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return err
	}
	val, err := FromGo(x)
	if err != nil {
		return err
	}
	*v = val
	return nil
}

// Go returns the value as plain Go data: nil, bool, int64, float64, string,
// []any or map[string]any (a Duration becomes its string form).
func (v Value) Go() any {
	switch v.k {
	case KindBool:
		return v.Bool()
	case KindInt:
		return v.Int()
	case KindFloat:
		return v.Float()
	case KindString:
		return v.s
	case KindDuration:
		return v.Duration().String()
	case KindList:
		l := v.List()
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e.Go()
		}
		return out
	case KindObject:
		m := v.Object()
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = e.Go()
		}
		return out
	}
	return nil
}

// FromGo converts plain Go data to a Value: nil, bools, integers, floats,
// strings, time.Duration, json.Number, Value, slices and arrays, maps with
// string keys, and structs (exported fields, named by their json tag).
func FromGo(x any) (Value, error) {
	switch t := x.(type) {
	case nil:
		return Null, nil
	case Value:
		return t, nil
	case bool:
		return BoolValue(t), nil
	case int:
		return IntValue(int64(t)), nil
	case int64:
		return IntValue(t), nil
	case float64:
		return FloatValue(t), nil
	case string:
		return StringValue(t), nil
	case time.Duration:
		return DurationValue(t), nil
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return IntValue(i), nil
		}
		f, err := t.Float64()
		if err != nil {
			return Null, fmt.Errorf("flow: bad number %q: %w", t, err)
		}
		return FloatValue(f), nil
	case []string:
		return StringList(t...), nil
	case []any:
		vs := make([]Value, len(t))
		for i, e := range t {
			v, err := FromGo(e)
			if err != nil {
				return Null, fmt.Errorf("[%d]: %w", i, err)
			}
			vs[i] = v
		}
		return ListValue(vs...), nil
	case map[string]any:
		m := make(map[string]Value, len(t))
		for k, e := range t {
			v, err := FromGo(e)
			if err != nil {
				return Null, fmt.Errorf("%s: %w", k, err)
			}
			m[k] = v
		}
		return ObjectValue(m), nil
	}
	return fromReflect(reflect.ValueOf(x))
}

func fromReflect(rv reflect.Value) (Value, error) {
	switch rv.Kind() {
	case reflect.Invalid:
		return Null, nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return Null, nil
		}
		return fromReflect(rv.Elem())
	case reflect.Bool:
		return BoolValue(rv.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if rv.Type() == reflect.TypeFor[time.Duration]() {
			return DurationValue(time.Duration(rv.Int())), nil
		}
		return IntValue(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return Null, fmt.Errorf("flow: integer %d overflows Int", u)
		}
		return IntValue(int64(u)), nil
	case reflect.Float32, reflect.Float64:
		return FloatValue(rv.Float()), nil
	case reflect.String:
		return StringValue(rv.String()), nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return ListValue(), nil
		}
		vs := make([]Value, rv.Len())
		for i := range vs {
			v, err := fromReflect(rv.Index(i))
			if err != nil {
				return Null, fmt.Errorf("[%d]: %w", i, err)
			}
			vs[i] = v
		}
		return ListValue(vs...), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return Null, fmt.Errorf("flow: map key type %s is not a string", rv.Type().Key())
		}
		m := make(map[string]Value, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			v, err := fromReflect(it.Value())
			if err != nil {
				return Null, fmt.Errorf("%s: %w", it.Key().String(), err)
			}
			m[it.Key().String()] = v
		}
		return ObjectValue(m), nil
	case reflect.Struct:
		m := map[string]Value{}
		t := rv.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Name
			if tag, ok := f.Tag.Lookup("json"); ok {
				n, _, _ := strings.Cut(tag, ",")
				if n == "-" {
					continue
				}
				if n != "" {
					name = n
				}
			}
			v, err := fromReflect(rv.Field(i))
			if err != nil {
				return Null, fmt.Errorf("%s: %w", name, err)
			}
			m[name] = v
		}
		return ObjectValue(m), nil
	}
	return Null, fmt.Errorf("flow: cannot convert a Go %s to a value", rv.Type())
}

// Conform checks v against type t and returns it in t's representation: an
// Int stored as a Float widens, a String names an Enum value, a
// Duration may be given as a string ("5s"). A mismatch is a *TypeError whose
// Path names the offending element ("[2].name").
func Conform(v Value, t Type) (Value, error) {
	return conform(v, t, "")
}

// TypeError reports a value that does not fit its declared type.
type TypeError struct {
	Path string // where inside the value, e.g. "[2].name"; empty for the value itself
	Want Type
	Got  Value
}

// Error says what was expected and what was found.
func (e *TypeError) Error() string {
	where := ""
	if e.Path != "" {
		where = " at " + e.Path
	}
	if e.Want.Kind == KindEnum {
		return fmt.Sprintf("value %s%s is not one of %s", e.Got, where, e.Want)
	}
	return fmt.Sprintf("want %s%s, got %s %s", e.Want, where, kindOf(e.Got), e.Got)
}

func kindOf(v Value) string {
	if v.k == KindNull {
		return "null"
	}
	return v.k.String()
}

func conform(v Value, t Type, path string) (Value, error) {
	bad := func() (Value, error) { return Null, &TypeError{Path: path, Want: t, Got: v} }
	switch t.Kind {
	case KindAny, KindNull:
		return v, nil
	case KindBool, KindInt, KindString, KindObject:
		if v.k != t.Kind {
			return bad()
		}
	case KindFloat:
		switch v.k {
		case KindFloat:
		case KindInt:
			return FloatValue(v.Float()), nil
		default:
			return bad()
		}
	case KindDuration:
		switch v.k {
		case KindDuration:
		case KindString:
			d, err := time.ParseDuration(v.s)
			if err != nil {
				return bad()
			}
			return DurationValue(d), nil
		default:
			return bad()
		}
	case KindEnum:
		if v.k != KindString || !t.HasValue(v.s) {
			return bad()
		}
	case KindList:
		if v.k != KindList {
			return bad()
		}
		l := v.List()
		var out []Value
		for i, e := range l {
			c, err := conform(e, t.elem(), path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return Null, err
			}
			if out == nil && !sameRepr(c, e) {
				out = slices.Clone(l)
			}
			if out != nil {
				out[i] = c
			}
		}
		if out != nil {
			return ListValue(out...), nil
		}
	}
	return v, nil
}

func sameRepr(a, b Value) bool { return a.k == b.k && a.n == b.n }
