package graph

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/weftlang/weft/flow"
)

// A codec converts between one Go type and flow.Value. Codecs are built once
// per type, at Compile, by reflection; at run time they only walk values.
// Decoding writes into a settable reflect.Value; a null value, an empty List
// and an empty Object decode to the Go zero value (nil slices and maps), so
// that a zero State round-trips unchanged.
type codec struct {
	typ flow.Type
	rt  reflect.Type
	enc func(rv reflect.Value) (flow.Value, error)
	dec func(v flow.Value, rv reflect.Value) error
}

var (
	typeDuration  = reflect.TypeFor[time.Duration]()
	typeValue     = reflect.TypeFor[flow.Value]()
	typeStrings   = reflect.TypeFor[[]string]()
	typeJSONMarsh = reflect.TypeFor[json.Marshaler]()
	typeJSONUnm   = reflect.TypeFor[json.Unmarshaler]()
	typeTextMarsh = reflect.TypeFor[encoding.TextMarshaler]()
	typeTextUnm   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// codecs builds and caches codecs for the Go types of one graph.
type codecs map[reflect.Type]*codec

// convError is a value that does not fit a Go type.
func convError(rt reflect.Type, v flow.Value) error {
	return fmt.Errorf("cannot store %s value %s in Go %s", kindName(v), v, rt)
}

func kindName(v flow.Value) string {
	if v.IsNull() {
		return "null"
	}
	return v.Kind().String()
}

func implements(rt, iface reflect.Type) bool {
	return rt.Implements(iface) || reflect.PointerTo(rt).Implements(iface)
}

// of returns the codec of rt, or an error saying why the type cannot be
// state.
func (cs codecs) of(rt reflect.Type) (*codec, error) {
	if c, ok := cs[rt]; ok {
		return c, nil
	}
	// Placeholder for recursive types: an element of a type being built
	// sees it typed Any, and calls through it once it is filled.
	c := &codec{typ: flow.TAny, rt: rt}
	cs[rt] = c
	if err := cs.build(c, rt); err != nil {
		delete(cs, rt)
		return nil, err
	}
	return c, nil
}

func (cs codecs) build(c *codec, rt reflect.Type) error {
	switch {
	case rt == typeValue:
		c.typ = flow.TAny
		c.enc = func(rv reflect.Value) (flow.Value, error) { return rv.Interface().(flow.Value), nil }
		c.dec = func(v flow.Value, rv reflect.Value) error {
			rv.Set(reflect.ValueOf(v))
			return nil
		}
		return nil
	case rt == typeDuration:
		c.typ = flow.TDuration
		c.enc = func(rv reflect.Value) (flow.Value, error) { return flow.DurationValue(time.Duration(rv.Int())), nil }
		c.dec = func(v flow.Value, rv reflect.Value) error {
			switch v.Kind() {
			case flow.KindDuration:
				rv.SetInt(int64(v.Duration()))
			case flow.KindNull:
				rv.SetInt(0)
			case flow.KindString:
				d, err := time.ParseDuration(v.Str())
				if err != nil {
					return convError(rt, v)
				}
				rv.SetInt(int64(d))
			case flow.KindInt:
				rv.SetInt(v.Int())
			default:
				return convError(rt, v)
			}
			return nil
		}
		return nil
	case rt.Kind() != reflect.Pointer && rt.Kind() != reflect.Interface &&
		(implements(rt, typeJSONMarsh) || implements(rt, typeJSONUnm) || implements(rt, typeTextMarsh) || implements(rt, typeTextUnm)):
		// Types with their own encoding (time.Time, big numbers, ...)
		// go through encoding/json, both ways.
		jsonCodec(c, rt, flow.TAny)
		return nil
	}
	switch rt.Kind() {
	case reflect.Bool:
		c.typ = flow.TBool
		c.enc = func(rv reflect.Value) (flow.Value, error) { return flow.BoolValue(rv.Bool()), nil }
		c.dec = func(v flow.Value, rv reflect.Value) error {
			if v.Kind() != flow.KindBool && !v.IsNull() {
				return convError(rt, v)
			}
			rv.SetBool(v.Bool())
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.typ = flow.TInt
		c.enc = func(rv reflect.Value) (flow.Value, error) { return flow.IntValue(rv.Int()), nil }
		c.dec = func(v flow.Value, rv reflect.Value) error {
			var i int64
			switch v.Kind() {
			case flow.KindInt:
				i = v.Int()
			case flow.KindNull:
			case flow.KindFloat:
				f := v.Float()
				if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
					return convError(rt, v)
				}
				i = int64(f)
			default:
				return convError(rt, v)
			}
			if rv.OverflowInt(i) {
				return fmt.Errorf("%d overflows Go %s", i, rt)
			}
			rv.SetInt(i)
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.typ = flow.TInt
		c.enc = func(rv reflect.Value) (flow.Value, error) {
			u := rv.Uint()
			if u > math.MaxInt64 {
				return flow.Null, fmt.Errorf("%d overflows Int", u)
			}
			return flow.IntValue(int64(u)), nil
		}
		c.dec = func(v flow.Value, rv reflect.Value) error {
			if v.Kind() != flow.KindInt && !v.IsNull() {
				return convError(rt, v)
			}
			i := v.Int()
			if i < 0 || rv.OverflowUint(uint64(i)) {
				return fmt.Errorf("%d overflows Go %s", i, rt)
			}
			rv.SetUint(uint64(i))
			return nil
		}
	case reflect.Float32, reflect.Float64:
		c.typ = flow.TFloat
		c.enc = func(rv reflect.Value) (flow.Value, error) { return flow.FloatValue(rv.Float()), nil }
		c.dec = func(v flow.Value, rv reflect.Value) error {
			switch v.Kind() {
			case flow.KindFloat, flow.KindInt, flow.KindNull:
				rv.SetFloat(v.Float())
				return nil
			}
			return convError(rt, v)
		}
	case reflect.String:
		c.typ = flow.TString
		c.enc = func(rv reflect.Value) (flow.Value, error) { return flow.StringValue(rv.String()), nil }
		c.dec = func(v flow.Value, rv reflect.Value) error {
			if v.Kind() != flow.KindString && !v.IsNull() {
				return convError(rt, v)
			}
			rv.SetString(v.Str())
			return nil
		}
	case reflect.Slice, reflect.Array:
		return cs.list(c, rt)
	case reflect.Map:
		return cs.mapCodec(c, rt)
	case reflect.Struct:
		return cs.structCodec(c, rt)
	case reflect.Pointer:
		ec, err := cs.of(rt.Elem())
		if err != nil {
			return err
		}
		c.typ = flow.TAny // nil is null, which only Any admits
		c.enc = func(rv reflect.Value) (flow.Value, error) {
			if rv.IsNil() {
				return flow.Null, nil
			}
			return ec.enc(rv.Elem())
		}
		c.dec = func(v flow.Value, rv reflect.Value) error {
			if v.IsNull() {
				rv.SetZero()
				return nil
			}
			p := reflect.New(rt.Elem())
			if err := ec.dec(v, p.Elem()); err != nil {
				return err
			}
			rv.Set(p)
			return nil
		}
	case reflect.Interface:
		if rt.NumMethod() > 0 {
			return fmt.Errorf("interface type %s cannot hold state: a value could not be decoded back into it (use any, or a concrete type)", rt)
		}
		c.typ = flow.TAny
		c.enc = func(rv reflect.Value) (flow.Value, error) {
			if rv.IsNil() {
				return flow.Null, nil
			}
			return anyToValue(rv.Interface())
		}
		c.dec = func(v flow.Value, rv reflect.Value) error {
			if v.IsNull() {
				rv.SetZero()
				return nil
			}
			rv.Set(reflect.ValueOf(v.Go()))
			return nil
		}
	default:
		return fmt.Errorf("Go type %s cannot hold state (want a bool, number, string, time.Duration, slice, map, struct, pointer or any)", rt)
	}
	return nil
}

// anyToValue converts the dynamic value of an `any` field: plain data
// directly, other types as encoding/json would see them.
func anyToValue(x any) (flow.Value, error) {
	switch x.(type) {
	case nil, flow.Value, bool, int, int64, float64, string, time.Duration, json.Number, []string, []any, map[string]any:
		return flow.FromGo(x)
	}
	return jsonValue(x)
}

func jsonValue(x any) (flow.Value, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return flow.Null, err
	}
	var v flow.Value
	if err := v.UnmarshalJSON(b); err != nil {
		return flow.Null, err
	}
	return v, nil
}

// jsonCodec converts through encoding/json: the Go type's own JSON form
// becomes the value, and the value's JSON form decodes back.
func jsonCodec(c *codec, rt reflect.Type, t flow.Type) {
	c.typ = t
	c.enc = func(rv reflect.Value) (flow.Value, error) { return jsonValue(rv.Interface()) }
	c.dec = func(v flow.Value, rv reflect.Value) error {
		rv.SetZero()
		if v.IsNull() {
			return nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		p := reflect.New(rt)
		if err := json.Unmarshal(b, p.Interface()); err != nil {
			return err
		}
		rv.Set(p.Elem())
		return nil
	}
}

func (cs codecs) list(c *codec, rt reflect.Type) error {
	et := rt.Elem()
	if et.Kind() == reflect.Uint8 && rt.Kind() == reflect.Slice {
		// []byte is text or binary data: a String holding the bytes.
		c.typ = flow.TString
		c.enc = func(rv reflect.Value) (flow.Value, error) { return flow.StringValue(string(rv.Bytes())), nil }
		c.dec = func(v flow.Value, rv reflect.Value) error {
			if v.Kind() != flow.KindString && !v.IsNull() {
				return convError(rt, v)
			}
			if v.Str() == "" {
				rv.SetZero()
				return nil
			}
			rv.SetBytes([]byte(v.Str()))
			return nil
		}
		return nil
	}
	ec, err := cs.of(et)
	if err != nil {
		return err
	}
	c.typ = flow.ListOf(ec.typ)
	if rt == typeStrings {
		c.enc = func(rv reflect.Value) (flow.Value, error) {
			if rv.CanAddr() {
				return flow.StringList(*rv.Addr().Interface().(*[]string)...), nil
			}
			return flow.StringList(rv.Interface().([]string)...), nil
		}
		c.dec = func(v flow.Value, rv reflect.Value) error {
			l := v.List()
			if len(l) == 0 {
				if v.Kind() != flow.KindList && !v.IsNull() {
					return convError(rt, v)
				}
				rv.SetZero()
				return nil
			}
			out := make([]string, len(l))
			for i, e := range l {
				if e.Kind() != flow.KindString && !e.IsNull() {
					return fmt.Errorf("[%d]: %w", i, convError(et, e))
				}
				out[i] = e.Str()
			}
			*rv.Addr().Interface().(*[]string) = out
			return nil
		}
		return nil
	}
	c.enc = func(rv reflect.Value) (flow.Value, error) {
		n := rv.Len()
		vs := make([]flow.Value, n)
		for i := range n {
			v, err := ec.enc(rv.Index(i))
			if err != nil {
				return flow.Null, fmt.Errorf("[%d]: %w", i, err)
			}
			vs[i] = v
		}
		return flow.ListValue(vs...), nil
	}
	c.dec = func(v flow.Value, rv reflect.Value) error {
		if v.Kind() != flow.KindList && !v.IsNull() {
			return convError(rt, v)
		}
		l := v.List()
		if rt.Kind() == reflect.Array {
			if len(l) > rt.Len() {
				return fmt.Errorf("%d elements do not fit Go %s", len(l), rt)
			}
			rv.SetZero()
		} else {
			if len(l) == 0 {
				rv.SetZero()
				return nil
			}
			rv.Set(reflect.MakeSlice(rt, len(l), len(l)))
		}
		for i, e := range l {
			if err := ec.dec(e, rv.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	}
	return nil
}

func (cs codecs) mapCodec(c *codec, rt reflect.Type) error {
	if rt.Key().Kind() != reflect.String || implements(rt.Key(), typeTextMarsh) {
		// encoding/json knows how to key a map by numbers and text types.
		jsonCodec(c, rt, flow.TAny)
		return nil
	}
	ec, err := cs.of(rt.Elem())
	if err != nil {
		return err
	}
	c.typ = flow.TObject
	kt, et := rt.Key(), rt.Elem()
	c.enc = func(rv reflect.Value) (flow.Value, error) {
		m := make(map[string]flow.Value, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			v, err := ec.enc(it.Value())
			if err != nil {
				return flow.Null, fmt.Errorf("%s: %w", it.Key().String(), err)
			}
			m[it.Key().String()] = v
		}
		return flow.ObjectValue(m), nil
	}
	c.dec = func(v flow.Value, rv reflect.Value) error {
		if v.Kind() != flow.KindObject && !v.IsNull() {
			return convError(rt, v)
		}
		o := v.Object()
		if len(o) == 0 {
			rv.SetZero()
			return nil
		}
		m := reflect.MakeMapWithSize(rt, len(o))
		ev := reflect.New(et).Elem()
		for k, x := range o {
			ev.SetZero()
			if err := ec.dec(x, ev); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(kt), ev)
		}
		rv.Set(m)
		return nil
	}
	return nil
}

type structField struct {
	name      string
	index     int
	omitEmpty bool
	codec     *codec
}

func (cs codecs) structCodec(c *codec, rt reflect.Type) error {
	var fields []structField
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous || strings.Contains(","+opts+",", ",string,") {
			// Promoted fields and quoted numbers: leave the
			// layout to encoding/json.
			jsonCodec(c, rt, flow.TObject)
			return nil
		}
		if !f.IsExported() || name == "-" && opts == "" {
			continue
		}
		if !hasTag || name == "" {
			name = f.Name
		}
		fc, err := cs.of(f.Type)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		fields = append(fields, structField{name: name, index: i, omitEmpty: strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,"), codec: fc})
	}
	c.typ = flow.TObject
	c.enc = func(rv reflect.Value) (flow.Value, error) {
		m := make(map[string]flow.Value, len(fields))
		for _, f := range fields {
			fv := rv.Field(f.index)
			if f.omitEmpty && fv.IsZero() {
				continue
			}
			v, err := f.codec.enc(fv)
			if err != nil {
				return flow.Null, fmt.Errorf("%s: %w", f.name, err)
			}
			m[f.name] = v
		}
		return flow.ObjectValue(m), nil
	}
	c.dec = func(v flow.Value, rv reflect.Value) error {
		if v.Kind() != flow.KindObject && !v.IsNull() {
			return convError(rt, v)
		}
		o := v.Object()
		for _, f := range fields {
			if err := f.codec.dec(o[f.name], rv.Field(f.index)); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		return nil
	}
	return nil
}
