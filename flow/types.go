package flow

import (
	"slices"
	"strconv"
	"strings"
)

// Kind is the shape of a Type or of a Value.
type Kind uint8

// The kinds. KindNull is only a Value kind: the value of a cell that was
// never written, and of the null literal.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindString
	KindDuration
	KindEnum // a Type kind only: its values are strings
	KindList
	KindObject
	KindAny // any JSON value, including null
)

var kindNames = [...]string{
	KindNull:     "Null",
	KindBool:     "Bool",
	KindInt:      "Int",
	KindFloat:    "Float",
	KindString:   "String",
	KindDuration: "Duration",
	KindEnum:     "Enum",
	KindList:     "List",
	KindObject:   "Object",
	KindAny:      "Any",
}

// String returns the kind's name as the .wf language spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Type is a weft type: String, Int, Float, Bool, Duration, Enum[...],
// List[T], Object (a JSON object) or Any (any JSON value). Types are small
// immutable values; compare them with Equal.
type Type struct {
	Kind   Kind
	Elem   *Type    // element type of a List
	Values []string // the values of an Enum, in declaration order
}

// The basic types.
var (
	TBool     = Type{Kind: KindBool}
	TInt      = Type{Kind: KindInt}
	TFloat    = Type{Kind: KindFloat}
	TString   = Type{Kind: KindString}
	TDuration = Type{Kind: KindDuration}
	TObject   = Type{Kind: KindObject}
	TAny      = Type{Kind: KindAny}
)

// EnumOf returns the type Enum[values...].
func EnumOf(values ...string) Type { return Type{Kind: KindEnum, Values: values} }

// ListOf returns the type List[elem].
func ListOf(elem Type) Type { return Type{Kind: KindList, Elem: &elem} }

// TypeByName returns the named basic type ("String", "Int", "Float", "Bool",
// "Duration", "Object", "JSON", "Any"); ok is false for other names.
func TypeByName(name string) (t Type, ok bool) {
	switch name {
	case "String":
		return TString, true
	case "Int":
		return TInt, true
	case "Float":
		return TFloat, true
	case "Bool":
		return TBool, true
	case "Duration":
		return TDuration, true
	case "Object":
		return TObject, true
	case "JSON", "Any":
		return TAny, true
	}
	return Type{}, false
}

// IsZero reports whether t is the zero Type (no type at all).
func (t Type) IsZero() bool { return t.Kind == KindNull && t.Elem == nil && t.Values == nil }

// String spells the type as the .wf language does: List[Enum["a","b"]].
func (t Type) String() string {
	switch t.Kind {
	case KindEnum:
		var b strings.Builder
		b.WriteString("Enum[")
		for i, v := range t.Values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(v))
		}
		b.WriteByte(']')
		return b.String()
	case KindList:
		if t.Elem == nil {
			return "List[Any]"
		}
		return "List[" + t.Elem.String() + "]"
	}
	return t.Kind.String()
}

// Equal reports whether t and u are the same type.
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case KindEnum:
		return slices.Equal(t.Values, u.Values)
	case KindList:
		return t.elem().Equal(u.elem())
	}
	return true
}

func (t Type) elem() Type {
	if t.Elem == nil {
		return TAny
	}
	return *t.Elem
}

// ElemType returns the element type of a List (Any for other kinds).
func (t Type) ElemType() Type {
	if t.Kind == KindList {
		return t.elem()
	}
	return TAny
}

// HasValue reports whether an Enum type lists v.
func (t Type) HasValue(v string) bool { return slices.Contains(t.Values, v) }

// AssignableTo reports whether a value of type t may be stored where type u
// is expected. Any accepts everything and is accepted everywhere (it is
// checked again at run time); Int widens to Float; an Enum is a String, and
// a String is accepted for an Enum (its value is checked at run time);
// lists are covariant.
func (t Type) AssignableTo(u Type) bool {
	if t.Kind == KindAny || u.Kind == KindAny || t.IsZero() || u.IsZero() {
		return true
	}
	switch u.Kind {
	case KindFloat:
		return t.Kind == KindFloat || t.Kind == KindInt
	case KindString:
		return t.Kind == KindString || t.Kind == KindEnum
	case KindEnum:
		if t.Kind == KindEnum {
			for _, v := range t.Values {
				if !u.HasValue(v) {
					return false
				}
			}
			return true
		}
		return t.Kind == KindString
	case KindList:
		return t.Kind == KindList && t.elem().AssignableTo(u.elem())
	}
	return t.Kind == u.Kind
}

// Join returns the narrowest type that both t and u are assignable to:
// equal types join to themselves, Int and Float to Float, Enums and Strings
// to String (or to the union Enum when both are Enums), anything else to Any.
// The zero Type is the identity.
func Join(t, u Type) Type {
	switch {
	case t.IsZero():
		return u
	case u.IsZero():
		return t
	case t.Equal(u):
		return t
	case t.Kind == KindAny || u.Kind == KindAny:
		return TAny
	}
	num := func(k Kind) bool { return k == KindInt || k == KindFloat }
	str := func(k Kind) bool { return k == KindString || k == KindEnum }
	switch {
	case num(t.Kind) && num(u.Kind):
		return TFloat
	case t.Kind == KindEnum && u.Kind == KindEnum:
		vals := slices.Clone(t.Values)
		for _, v := range u.Values {
			if !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		return EnumOf(vals...)
	case str(t.Kind) && str(u.Kind):
		return TString
	case t.Kind == KindList && u.Kind == KindList:
		return ListOf(Join(t.elem(), u.elem()))
	}
	return TAny
}

// ZeroOf returns the typed zero of t, the value an output left out of a
// fallback takes: "" for a String, 0 for an Int or a Float, false for a
// Bool, 0s for a Duration, [] for a List, {} for an Object, null for Any.
// An Enum has none (its first value is an answer like any other, not an
// absence of one): ok is false.
func ZeroOf(t Type) (v Value, ok bool) {
	switch t.Kind {
	case KindString:
		return StringValue(""), true
	case KindInt:
		return IntValue(0), true
	case KindFloat:
		return FloatValue(0), true
	case KindBool:
		return BoolValue(false), true
	case KindDuration:
		return DurationValue(0), true
	case KindList:
		return ListValue(), true
	case KindObject:
		return ObjectValue(nil), true
	case KindAny:
		return Null, true
	}
	return Null, false
}
