package graph

import (
	"fmt"
	"math"
	"reflect"
	"time"
	"unsafe"

	"github.com/weftlang/weft/flow"
)

// The fast path. A node whose state and update fields all have one of the
// simple shapes below converts them without reflection: each field is
// read or written in place, at the offset reflection found for it at
// Compile, through a pointer of the field's exact memory type. The state
// and the update then stay on the stack, and a step allocates nothing in
// this package (a []string field still allocates its slice). Every other
// node takes the reflective path in node.go, which allocates the state
// and the update on the heap.
type fastKind uint8

const (
	fkNone     fastKind = iota
	fkBool              // kind bool
	fkInt               // kind int
	fkInt64             // kind int64, except time.Duration
	fkInt32             // kind int32
	fkFloat64           // kind float64
	fkString            // kind string
	fkStrings           // a slice whose elements are of kind string
	fkDuration          // time.Duration
)

// fastKindOf returns the fast shape of rt, or fkNone. Named types count by
// their underlying kind: only the memory layout matters.
func fastKindOf(rt reflect.Type) fastKind {
	if rt == typeDuration {
		return fkDuration
	}
	// A type with its own JSON encoding goes through the codec.
	if implements(rt, typeJSONMarsh) || implements(rt, typeTextMarsh) || implements(rt, typeJSONUnm) || implements(rt, typeTextUnm) {
		return fkNone
	}
	switch rt.Kind() {
	case reflect.Bool:
		return fkBool
	case reflect.Int:
		return fkInt
	case reflect.Int64:
		return fkInt64
	case reflect.Int32:
		return fkInt32
	case reflect.Float64:
		return fkFloat64
	case reflect.String:
		return fkString
	case reflect.Slice:
		if et := rt.Elem(); et.Kind() == reflect.String && fastKindOf(et) == fkString {
			return fkStrings
		}
	}
	return fkNone
}

// fastDec stores *v at p, a field of kind k. The value comes by pointer:
// a flow.Value is large enough for the copy to show. Only the common cases
// are handled here, in a function with a small stack frame: nodes often
// run on fresh goroutines (parallel branches), whose stacks would
// otherwise have to grow on the first call. Everything else, and every
// error, goes through fastDecSlow.
func fastDec(k fastKind, v *flow.Value, p unsafe.Pointer) error {
	switch k {
	case fkInt:
		if v.Kind() == flow.KindInt {
			if i := v.Int(); int64(int(i)) == i {
				*(*int)(p) = int(i)
				return nil
			}
		}
	case fkInt64:
		if v.Kind() == flow.KindInt {
			*(*int64)(p) = v.Int()
			return nil
		}
	case fkBool:
		if v.Kind() == flow.KindBool {
			*(*bool)(p) = v.Bool()
			return nil
		}
	case fkFloat64:
		if v.Kind() == flow.KindFloat {
			*(*float64)(p) = v.Float()
			return nil
		}
	case fkString:
		if v.Kind() == flow.KindString {
			*(*string)(p) = v.Str()
			return nil
		}
	case fkStrings:
		if v.Kind() == flow.KindList {
			if v.Len() == 0 {
				*(*[]string)(p) = nil
				return nil
			}
			if out, ok := v.Strings(); ok {
				*(*[]string)(p) = out
				return nil
			}
		}
	}
	return fastDecSlow(k, v, p)
}

// fastDecSlow is fastDec for the uncommon shapes and for errors.
func fastDecSlow(k fastKind, v *flow.Value, p unsafe.Pointer) error {
	switch k {
	case fkBool:
		if v.Kind() != flow.KindBool && !v.IsNull() {
			return fastErr(k, v)
		}
		*(*bool)(p) = v.Bool()
	case fkInt, fkInt64, fkInt32:
		var i int64
		switch v.Kind() {
		case flow.KindInt:
			i = v.Int()
		case flow.KindNull:
		case flow.KindFloat:
			f := v.Float()
			if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
				return fastErr(k, v)
			}
			i = int64(f)
		default:
			return fastErr(k, v)
		}
		switch k {
		case fkInt:
			if int64(int(i)) != i {
				return fmt.Errorf("%d overflows a Go int", i)
			}
			*(*int)(p) = int(i)
		case fkInt64:
			*(*int64)(p) = i
		default:
			if int64(int32(i)) != i {
				return fmt.Errorf("%d overflows a Go int32", i)
			}
			*(*int32)(p) = int32(i)
		}
	case fkFloat64:
		switch v.Kind() {
		case flow.KindFloat, flow.KindInt, flow.KindNull:
			*(*float64)(p) = v.Float()
		default:
			return fastErr(k, v)
		}
	case fkString:
		if v.Kind() != flow.KindString && !v.IsNull() {
			return fastErr(k, v)
		}
		*(*string)(p) = v.Str()
	case fkDuration:
		switch v.Kind() {
		case flow.KindDuration, flow.KindNull:
			*(*time.Duration)(p) = v.Duration()
		case flow.KindString:
			d, err := time.ParseDuration(v.Str())
			if err != nil {
				return fastErr(k, v)
			}
			*(*time.Duration)(p) = d
		default:
			return fastErr(k, v)
		}
	case fkStrings:
		if v.Len() == 0 {
			if v.Kind() != flow.KindList && !v.IsNull() {
				return fastErr(k, v)
			}
			*(*[]string)(p) = nil
			return nil
		}
		// Shared with other steps when the list grows by appends: nodes
		// get their state read-only (see AddNode).
		out, ok := v.Strings()
		if !ok {
			for i, e := range v.List() {
				if e.Kind() != flow.KindString && !e.IsNull() {
					return fmt.Errorf("[%d]: %w", i, fastErr(k, v))
				}
			}
			return fastErr(k, v)
		}
		*(*[]string)(p) = out
	default:
		return fmt.Errorf("graph: internal error: no fast path for kind %d", k)
	}
	return nil
}

// fastErr says why v does not fit a field of kind k.
func fastErr(k fastKind, v *flow.Value) error {
	return fmt.Errorf("cannot store %s value %s in a Go %s field", kindName(*v), *v, k)
}

// fastEnc reads the field of kind k at p into *out.
func fastEnc(k fastKind, p unsafe.Pointer, out *flow.Value) {
	switch k {
	case fkBool:
		*out = flow.BoolValue(*(*bool)(p))
	case fkInt:
		*out = flow.IntValue(int64(*(*int)(p)))
	case fkInt64:
		*out = flow.IntValue(*(*int64)(p))
	case fkInt32:
		*out = flow.IntValue(int64(*(*int32)(p)))
	case fkFloat64:
		*out = flow.FloatValue(*(*float64)(p))
	case fkString:
		*out = flow.StringValue(*(*string)(p))
	case fkDuration:
		*out = flow.DurationValue(*(*time.Duration)(p))
	case fkStrings:
		*out = flow.StringList(*(*[]string)(p)...)
	default:
		*out = flow.Null
	}
}

// fastCopy copies a field of kind k from src to dst.
func fastCopy(k fastKind, dst, src unsafe.Pointer) {
	switch k {
	case fkBool:
		*(*bool)(dst) = *(*bool)(src)
	case fkInt:
		*(*int)(dst) = *(*int)(src)
	case fkInt64, fkDuration:
		*(*int64)(dst) = *(*int64)(src)
	case fkInt32:
		*(*int32)(dst) = *(*int32)(src)
	case fkFloat64:
		*(*float64)(dst) = *(*float64)(src)
	case fkString:
		*(*string)(dst) = *(*string)(src)
	case fkStrings:
		*(*[]string)(dst) = *(*[]string)(src)
	}
}

// String names the kind in messages.
func (k fastKind) String() string {
	switch k {
	case fkBool:
		return "bool"
	case fkInt:
		return "int"
	case fkInt64:
		return "int64"
	case fkInt32:
		return "int32"
	case fkFloat64:
		return "float64"
	case fkString:
		return "string"
	case fkStrings:
		return "[]string"
	case fkDuration:
		return "time.Duration"
	}
	return "value"
}
