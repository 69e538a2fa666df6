package flow

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"
)

// Value is a weft runtime value: null, Bool, Int, Float, String, Duration,
// List or Object. Values are immutable: a List or Object is never changed
// after it is made, so values can be shared between steps, branches and
// events without copying. The zero Value is null.
type Value struct {
	// The representation is log/slog's: 24 bytes, no allocation for
	// scalars or strings. num holds a Bool (0/1), an Int, Float bits, a
	// Duration, or the length of a String or List; any holds the Kind of
	// a scalar, a stringptr (String data), a listptr (first List
	// element), a *listBuf (a List made by AppendList), a
	// map[string]Value (Object), or nil (null).
	_   [0]func() // not comparable with ==: use Equal
	num uint64
	any any
}

type (
	stringptr *byte  // the data of a String; num is its length
	listptr   *Value // the first element of a List; num is its length
)

// listBuf is the backing array of Lists made by AppendList. Every List
// over it is a prefix elems[:n]; used is the longest prefix handed out so
// far. Slots below used are never written again, so the Lists stay
// immutable, and the List of length used (the newest of its chain) can
// grow in place: appending to a reducer's List is amortized O(1) instead
// of a copy of the whole list per step. An older, shorter List that is
// appended to gets a copy, as before.
type listBuf struct {
	used  atomic.Int64
	elems []Value // len(elems) == cap(elems)

	strMu sync.Mutex
	strs  []string // Go strings of elems[:len(strs)], made by Strings
}

// Small buffers come with their header in one allocation.
type (
	listBuf8 struct {
		listBuf
		arr [8]Value
	}
	listBuf16 struct {
		listBuf
		arr [16]Value
	}
	listBuf32 struct {
		listBuf
		arr [32]Value
	}
)

// newListBuf returns a listBuf with room for at least n elements.
func newListBuf(n int) *listBuf {
	switch {
	case n <= 8:
		b := new(listBuf8)
		b.elems = b.arr[:]
		return &b.listBuf
	case n <= 16:
		b := new(listBuf16)
		b.elems = b.arr[:]
		return &b.listBuf
	case n <= 32:
		b := new(listBuf32)
		b.elems = b.arr[:]
		return &b.listBuf
	}
	return &listBuf{elems: make([]Value, n)}
}

// AppendList returns the List of the elements of list (a List, or null
// for none) followed by add. list is unchanged, and so is every other
// List: when list is the newest List over a buffer with room, the new
// List shares its memory, so that a chain of appends (an append reducer
// run step after step) copies each element about once. It is safe for
// concurrent use. It returns null and false when list is neither a List
// nor null.
func AppendList(list Value, add ...Value) (Value, bool) {
	n := 0
	switch x := list.any.(type) {
	case *listBuf:
		n = int(list.num)
		if end := n + len(add); end <= len(x.elems) && x.used.CompareAndSwap(int64(n), int64(end)) {
			copy(x.elems[n:end], add)
			return Value{num: uint64(end), any: x}, true
		}
	case listptr:
		n = int(list.num)
	case nil:
	default:
		return Null, false
	}
	if len(add) == 0 {
		return list, true
	}
	end := n + len(add)
	buf := newListBuf(max(2*end, 8))
	copy(buf.elems, list.List())
	copy(buf.elems[n:], add)
	buf.used.Store(int64(end))
	return Value{num: uint64(end), any: buf}, true
}

// Null is the null value, the value of a cell never written.
var Null = Value{}

// BoolValue returns a Bool.
func BoolValue(b bool) Value {
	if b {
		return Value{num: 1, any: KindBool}
	}
	return Value{any: KindBool}
}

// IntValue returns an Int.
func IntValue(i int64) Value { return Value{num: uint64(i), any: KindInt} }

// FloatValue returns a Float.
func FloatValue(f float64) Value { return Value{num: math.Float64bits(f), any: KindFloat} }

// StringValue returns a String.
func StringValue(s string) Value {
	return Value{num: uint64(len(s)), any: stringptr(unsafe.StringData(s))}
}

// DurationValue returns a Duration.
func DurationValue(d time.Duration) Value { return Value{num: uint64(d), any: KindDuration} }

// ListValue returns a List holding elems. The caller must not change elems
// afterwards.
func ListValue(elems ...Value) Value {
	return Value{num: uint64(len(elems)), any: listptr(unsafe.SliceData(elems))}
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
	return Value{any: m}
}

// Kind returns the value's kind; KindNull for null.
func (v Value) Kind() Kind {
	switch x := v.any.(type) {
	case Kind:
		return x
	case stringptr:
		return KindString
	case listptr, *listBuf:
		return KindList
	case map[string]Value:
		return KindObject
	}
	return KindNull
}

// Same reports whether v and w are the same value by representation: the
// same scalar, the same string or list memory, the same object map. It is
// a cheap test of "unchanged" (Equal compares contents); values that are
// Equal but built separately are not Same.
func (v Value) Same(w Value) bool {
	if v.num != w.num {
		return false
	}
	switch a := v.any.(type) {
	case map[string]Value:
		b, ok := w.any.(map[string]Value)
		return ok && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	case nil:
		return w.any == nil
	}
	if _, isMap := w.any.(map[string]Value); isMap {
		return false
	}
	return v.any == w.any
}

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.any == nil }

// Bool returns the value of a Bool, and false for other kinds.
func (v Value) Bool() bool { k, _ := v.any.(Kind); return k == KindBool && v.num != 0 }

// Int returns the value of an Int (a Float is truncated, a Duration gives
// nanoseconds), and 0 for other kinds.
func (v Value) Int() int64 {
	k, _ := v.any.(Kind)
	switch k {
	case KindInt, KindDuration:
		return int64(v.num)
	case KindFloat:
		return int64(math.Float64frombits(v.num))
	}
	return 0
}

// Float returns the value of a Float or an Int, and 0 for other kinds.
func (v Value) Float() float64 {
	k, _ := v.any.(Kind)
	switch k {
	case KindFloat:
		return math.Float64frombits(v.num)
	case KindInt:
		return float64(int64(v.num))
	}
	return 0
}

// Str returns the value of a String, and "" for other kinds (use String for
// a printable form of any value).
func (v Value) Str() string { return v.str() }

func (v Value) str() string {
	if sp, ok := v.any.(stringptr); ok {
		return unsafe.String(sp, v.num)
	}
	return ""
}

// Duration returns the value of a Duration, and 0 for other kinds.
func (v Value) Duration() time.Duration {
	if k, _ := v.any.(Kind); k == KindDuration {
		return time.Duration(v.num)
	}
	return 0
}

// List returns the elements of a List, and nil for other kinds. The result
// must not be changed.
func (v Value) List() []Value {
	if lp, ok := v.any.(listptr); ok {
		if lp == nil {
			return []Value{}
		}
		return unsafe.Slice((*Value)(lp), v.num)
	}
	if b, ok := v.any.(*listBuf); ok {
		return b.elems[:v.num:v.num]
	}
	return nil
}

// Strings returns the elements of a List of Strings as Go strings (a null
// element as ""), and false when v is not a List or holds another kind.
// The result must not be changed: it may be shared. Its capacity is its
// length, so appending to it copies. A List grown by AppendList keeps the
// strings made for it, so that reading a growing list step after step (a
// log, a conversation) converts each element once, not once per read.
func (v Value) Strings() ([]string, bool) {
	b, ok := v.any.(*listBuf)
	if !ok {
		l := v.List()
		if l == nil {
			return nil, false
		}
		out := make([]string, len(l))
		for i, e := range l {
			if e.Kind() != KindString && !e.IsNull() {
				return nil, false
			}
			out[i] = e.Str()
		}
		return out, true
	}
	n := int(v.num)
	b.strMu.Lock()
	if k := len(b.strs); k < n {
		if cap(b.strs) < n {
			grown := make([]string, k, len(b.elems))
			copy(grown, b.strs)
			b.strs = grown
		}
		for _, e := range b.elems[k:n] {
			switch x := e.any.(type) {
			case stringptr:
				b.strs = append(b.strs, unsafe.String((*byte)(x), e.num))
			case nil:
				b.strs = append(b.strs, "")
			default:
				b.strMu.Unlock()
				return nil, false
			}
		}
	}
	out := b.strs[:n:n]
	b.strMu.Unlock()
	return out, true
}

// Object returns the fields of an Object, and nil for other kinds. The
// result must not be changed.
func (v Value) Object() map[string]Value {
	if m, ok := v.any.(map[string]Value); ok {
		return m
	}
	return nil
}

// Len returns the length of a String (in bytes), List or Object, and 0
// otherwise.
func (v Value) Len() int {
	switch v.Kind() {
	case KindString:
		return len(v.str())
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
	switch v.Kind() {
	case KindBool, KindInt, KindDuration:
		return v.num != 0
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
	if v.Kind() != w.Kind() {
		if isNum(v.Kind()) && isNum(w.Kind()) {
			return v.Float() == w.Float()
		}
		return false
	}
	switch v.Kind() {
	case KindNull:
		return true
	case KindString:
		return v.str() == w.str()
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
	return v.num == w.num
}

func isNum(k Kind) bool { return k == KindInt || k == KindFloat }

// Compare orders two values of comparable kinds (numbers, strings,
// durations, bools): it returns -1, 0 or +1, and ok=false when the kinds
// cannot be ordered against each other.
func (v Value) Compare(w Value) (c int, ok bool) {
	switch {
	case v.Kind() == KindInt && w.Kind() == KindInt:
		return cmpOrdered(int64(v.num), int64(w.num)), true
	case isNum(v.Kind()) && isNum(w.Kind()):
		return cmpOrdered(v.Float(), w.Float()), true
	case v.Kind() == KindString && w.Kind() == KindString:
		return strings.Compare(v.str(), w.str()), true
	case v.Kind() == KindDuration && w.Kind() == KindDuration:
		return cmpOrdered(int64(v.num), int64(w.num)), true
	case v.Kind() == KindBool && w.Kind() == KindBool:
		return cmpOrdered(v.num, w.num), true
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
	switch v.Kind() {
	case KindNull:
		b.WriteString("null")
	case KindBool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case KindInt:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case KindFloat:
		b.WriteString(formatFloat(v.Float()))
	case KindString:
		b.WriteString(strconv.Quote(v.str()))
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
			if isIdentName(k) {
				b.WriteString(k)
			} else {
				b.WriteString(strconv.Quote(k))
			}
			b.WriteString(": ")
			m[k].write(b)
		}
		b.WriteByte('}')
	}
}

// formatFloat prints a Float so that it reads back as a Float: 2.0, not 2.
func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") { // N: NaN and Inf
		s += ".0"
	}
	return s
}

// MaxBrief is the most bytes of a value Brief prints.
const MaxBrief = 200

// Brief returns v as String does, cut to MaxBrief bytes with "… (N bytes)"
// when longer: the form messages use, so that an error about a huge value
// names it without copying it.
func Brief(v Value) string {
	s := v.String()
	head, cut := clip(s, MaxBrief)
	if !cut {
		return s
	}
	return head + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// clip returns s cut to at most n bytes, on a rune boundary, and whether
// it had to cut.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Text returns the value as plain text, the way a prompt or a message shows
// it: a String without quotes, anything else as String does.
func (v Value) Text() string {
	if v.Kind() == KindString {
		return v.str()
	}
	return v.String()
}

// MarshalJSON encodes the value as JSON; a Duration becomes its string form
// ("1m30s"). A Float is always written with a fraction or an exponent (2.0),
// so that it decodes as a Float again, and object keys are sorted.
func (v Value) MarshalJSON() ([]byte, error) {
	return v.appendJSON(nil)
}

// AppendJSON appends the JSON encoding of v (as MarshalJSON writes it) to
// b, for encoders that build a larger document without reflection.
func (v Value) AppendJSON(b []byte) ([]byte, error) {
	return v.appendJSON(b)
}

func (v Value) appendJSON(b []byte) ([]byte, error) {
	switch v.Kind() {
	case KindBool:
		return strconv.AppendBool(b, v.Bool()), nil
	case KindInt:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case KindFloat:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("flow: %s has no JSON form", formatFloat(f))
		}
		return appendJSONFloat(b, f), nil
	case KindString:
		return appendJSONString(b, v.str()), nil
	case KindDuration:
		return appendJSONString(b, v.Duration().String()), nil
	case KindList:
		b = append(b, '[')
		for i, e := range v.List() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = e.appendJSON(b); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case KindObject:
		m := v.Object()
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendJSONString(b, k), ':')
			var err error
			if b, err = m[k].appendJSON(b); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return append(b, "null"...), nil
}

// UnmarshalJSON decodes one JSON value. Numbers without a fraction or
// exponent become Int (Float when they overflow an Int), others Float.
func (v *Value) UnmarshalJSON(data []byte) error {
	// A string, true, false or null (most values a thread's records
	// hold) is decoded without a json.Decoder and its buffer.
	if val, ok := scalarJSON(data); ok {
		*v = val
		return nil
	}
	return v.unmarshalJSON(data)
}

// scalarJSON decodes data when it is exactly one JSON string, true,
// false or null; ok is false for anything else (numbers, lists, objects,
// surrounding space, bad JSON), which unmarshalJSON decodes.
func scalarJSON(data []byte) (Value, bool) {
	switch string(data) {
	case "null":
		return Null, true
	case "true":
		return BoolValue(true), true
	case "false":
		return BoolValue(false), true
	}
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return Null, false
	}
	var s string
	if json.Unmarshal(data, &s) != nil {
		return Null, false
	}
	return StringValue(s), true
}

// unmarshalJSON decodes one JSON value of any kind.
func (v *Value) unmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("flow: unexpected data after the JSON value")
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
	switch v.Kind() {
	case KindBool:
		return v.Bool()
	case KindInt:
		return v.Int()
	case KindFloat:
		return v.Float()
	case KindString:
		return v.str()
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
	v, err := fromGo(x)
	if err != nil {
		return Null, err
	}
	return v, nil
}

// FromGoError reports Go data that FromGo cannot convert.
type FromGoError struct {
	Path string // where inside the data, e.g. "[2].name"; empty for the data itself
	Err  error
}

// Error names the place and the problem.
func (e *FromGoError) Error() string {
	if e.Path == "" {
		return "flow: " + e.Err.Error()
	}
	return "flow: " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *FromGoError) Unwrap() error { return e.Err }

func convErr(format string, args ...any) error {
	return &FromGoError{Err: fmt.Errorf(format, args...)}
}

// inside prefixes the path of a conversion error with an element ("[2]") or
// a field ("name").
func inside(elem string, err error) error {
	fe, ok := err.(*FromGoError)
	if !ok {
		return err
	}
	path := fe.Path
	switch {
	case path == "":
		path = elem
	case strings.HasPrefix(path, "["):
		path = elem + path
	default:
		path = elem + "." + path
	}
	return &FromGoError{Path: path, Err: fe.Err}
}

func fromGo(x any) (Value, error) {
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
		if !isFinite(t) {
			return Null, &FromGoError{Err: &NonFiniteError{Value: t}}
		}
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
			return Null, convErr("bad number %q: %w", string(t), err)
		}
		return FloatValue(f), nil
	case []string:
		return StringList(t...), nil
	case []any:
		vs := make([]Value, len(t))
		for i, e := range t {
			v, err := fromGo(e)
			if err != nil {
				return Null, inside("["+strconv.Itoa(i)+"]", err)
			}
			vs[i] = v
		}
		return ListValue(vs...), nil
	case map[string]any:
		m := make(map[string]Value, len(t))
		for k, e := range t {
			v, err := fromGo(e)
			if err != nil {
				return Null, inside(k, err)
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
	}
	if rv.CanInterface() {
		// Types that convert by themselves, as encoding/json sees them: a
		// Value inside a []Value or a struct, a json.Number, a time.Time.
		switch x := rv.Interface().(type) {
		case Value:
			return x, nil
		case json.Number:
			return fromGo(x)
		case json.Marshaler:
			data, err := x.MarshalJSON()
			if err != nil {
				return Null, convErr("%s: %w", rv.Type(), err)
			}
			var v Value
			if err := v.UnmarshalJSON(data); err != nil {
				return Null, convErr("%s: %w", rv.Type(), err)
			}
			return v, nil
		case encoding.TextMarshaler:
			text, err := x.MarshalText()
			if err != nil {
				return Null, convErr("%s: %w", rv.Type(), err)
			}
			return StringValue(string(text)), nil
		}
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
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
			return Null, convErr("integer %d overflows Int", u)
		}
		return IntValue(int64(u)), nil
	case reflect.Float32, reflect.Float64:
		if f := rv.Float(); !isFinite(f) {
			return Null, &FromGoError{Err: &NonFiniteError{Value: f}}
		}
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
				return Null, inside("["+strconv.Itoa(i)+"]", err)
			}
			vs[i] = v
		}
		return ListValue(vs...), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return Null, convErr("map key type %s is not a string", rv.Type().Key())
		}
		m := make(map[string]Value, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			v, err := fromReflect(it.Value())
			if err != nil {
				return Null, inside(it.Key().String(), err)
			}
			m[it.Key().String()] = v
		}
		return ObjectValue(m), nil
	case reflect.Struct:
		m := map[string]Value{}
		if err := structFields(rv, m); err != nil {
			return Null, err
		}
		return ObjectValue(m), nil
	}
	return Null, convErr("cannot convert a Go %s to a value", rv.Type())
}

// structFields adds the fields of a struct to m, named as encoding/json
// names them: by json tag, else by field name; fields of embedded structs
// without a tag are promoted, and lose to the outer struct's own fields.
func structFields(rv reflect.Value, m map[string]Value) error {
	t := rv.Type()
	promoted := map[string]Value{}
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Name
		tagName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tagName == "-" {
			continue
		}
		if tagName != "" {
			name = tagName
		}
		if f.Anonymous && tagName == "" {
			ft, fv := f.Type, rv.Field(i)
			if ft.Kind() == reflect.Pointer {
				if !f.IsExported() || fv.IsNil() {
					continue
				}
				ft, fv = ft.Elem(), fv.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := structFields(fv, promoted); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		v, err := fromReflect(rv.Field(i))
		if err != nil {
			return inside(name, err)
		}
		m[name] = v
	}
	for k, v := range promoted {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return nil
}

// Conform checks v against type t and returns it in t's representation: an
// Int stored as a Float widens, a String names an Enum value, a
// Duration may be given as a string ("5s"). A mismatch is a *TypeError whose
// Path names the offending element ("[2].name").
//
// A Float that is NaN or infinite, anywhere inside v, is refused with a
// *NonFiniteError (errors.Is finds ErrNonFinite): such a number has no JSON
// form, so a run could neither print nor record it.
func Conform(v Value, t Type) (Value, error) {
	// The common case first: a scalar of exactly the declared kind.
	switch t.Kind {
	case KindAny:
		return v, CheckFinite(v)
	case KindFloat:
		if v.Kind() == KindFloat {
			return v, CheckFinite(v)
		}
	case KindObject:
		if v.Kind() == KindObject {
			return v, CheckFinite(v)
		}
	case KindBool, KindInt, KindString, KindDuration:
		if v.Kind() == t.Kind {
			return v, nil
		}
	case KindEnum:
		if _, ok := v.any.(stringptr); ok && t.HasValue(v.str()) {
			return v, nil
		}
	}
	v, err := conform(v, t)
	if err != nil {
		return Null, err
	}
	return v, CheckFinite(v)
}

// NonFiniteError reports a Float that is NaN or infinite, which no value
// may hold (see ErrNonFinite).
type NonFiniteError struct {
	Path  string // where inside the value, e.g. "[2].score"; empty for the value itself
	Value float64
}

// Error names the place and the number.
func (e *NonFiniteError) Error() string {
	msg := formatFloat(e.Value) + " has no JSON form"
	if e.Path == "" {
		return msg
	}
	return e.Path + ": " + msg
}

// Unwrap returns ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return ErrNonFinite }

// CheckFinite returns a *NonFiniteError naming the first NaN or infinite
// Float inside v (object members in key order), or nil when there is none.
// It does not allocate unless it finds one.
func CheckFinite(v Value) error {
	f, path, ok := findNonFinite(v)
	if ok {
		return nil
	}
	return &NonFiniteError{Path: path, Value: f}
}

// findNonFinite returns the first non-finite Float inside v and its path;
// ok is true when there is none. The path is only built for a find.
func findNonFinite(v Value) (f float64, path string, ok bool) {
	switch v.Kind() {
	case KindFloat:
		if f := v.Float(); !isFinite(f) {
			return f, "", false
		}
	case KindList:
		for i, e := range v.List() {
			if f, path, ok := findNonFinite(e); !ok {
				return f, "[" + strconv.Itoa(i) + "]" + path, false
			}
		}
	case KindObject:
		m := v.Object()
		var bad []string
		for k, e := range m {
			if _, _, ok := findNonFinite(e); !ok {
				bad = append(bad, k)
			}
		}
		if len(bad) > 0 {
			k := slices.Min(bad)
			f, path, _ := findNonFinite(m[k])
			step := k
			if !isIdentName(k) {
				step = strconv.Quote(k)
			}
			if path != "" && path[0] != '[' {
				path = "." + path
			}
			return f, step + path, false
		}
	}
	return 0, "", true
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
		return fmt.Sprintf("value %s%s is not one of %s", Brief(e.Got), where, e.Want)
	}
	if e.Got.IsNull() {
		return fmt.Sprintf("want %s%s, got null", e.Want, where)
	}
	return fmt.Sprintf("want %s%s, got %s %s", e.Want, where, kindOf(e.Got), Brief(e.Got))
}

func kindOf(v Value) string {
	if v.Kind() == KindNull {
		return "null"
	}
	return v.Kind().String()
}

// conform checks v against t. A *TypeError's Path is relative to v; callers
// descending into lists prefix it on the way back up, so no path is built
// unless there is an error.
func conform(v Value, t Type) (Value, error) {
	bad := func() (Value, error) { return Null, &TypeError{Want: t, Got: v} }
	switch t.Kind {
	case KindAny, KindNull:
		return v, nil
	case KindInt:
		switch v.Kind() {
		case KindInt:
		case KindFloat:
			// LLM JSON often writes 3.0 for 3: accept integral floats.
			f := v.Float()
			if f != math.Trunc(f) || f > math.MaxInt64 || f < math.MinInt64 {
				return bad()
			}
			return IntValue(int64(f)), nil
		default:
			return bad()
		}
	case KindBool, KindString, KindObject:
		if v.Kind() != t.Kind {
			return bad()
		}
	case KindFloat:
		switch v.Kind() {
		case KindFloat:
		case KindInt:
			return FloatValue(v.Float()), nil
		default:
			return bad()
		}
	case KindDuration:
		switch v.Kind() {
		case KindDuration:
		case KindString:
			d, err := time.ParseDuration(v.str())
			if err != nil {
				return bad()
			}
			return DurationValue(d), nil
		default:
			return bad()
		}
	case KindEnum:
		if v.Kind() != KindString || !t.HasValue(v.str()) {
			return bad()
		}
	case KindList:
		if v.Kind() != KindList {
			return bad()
		}
		l := v.List()
		var out []Value
		for i, e := range l {
			c, err := conform(e, t.elem())
			if err != nil {
				if te, ok := err.(*TypeError); ok {
					te.Path = "[" + strconv.Itoa(i) + "]" + te.Path
				}
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

// sameRepr reports whether conform returned e unchanged. Lists are
// compared by identity: a nested list whose elements were widened is a new
// list.
func sameRepr(a, b Value) bool {
	if a.Kind() != b.Kind() || a.num != b.num || a.str() != b.str() {
		return false
	}
	if a.Kind() == KindList {
		la, lb := a.List(), b.List()
		return len(la) == len(lb) && (len(la) == 0 || &la[0] == &lb[0])
	}
	return true
}

// appendJSONFloat appends f as encoding/json writes a float64, with a
// fraction added when there is none (2 becomes 2.0), so that it decodes as
// a Float again.
func appendJSONFloat(b []byte, f float64) []byte {
	start := len(b)
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	if !bytes.ContainsAny(b[start:], ".eE") {
		b = append(b, ".0"...)
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped as encoding/json
// does except that <, > and & are kept: values are data, not markup.
// Invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
