package flow

import "fmt"

// ReducerKind says how writes to a variable or slot combine with its
// current value: one of the built-in reducers, or ReduceCustom for a
// reducer given in CompileOptions.Reducers. The zero value is
// ReduceReplace.
type ReducerKind uint8

// The reducer kinds. Their .wf, JSON and graph-tag spellings are the
// lowercase names String returns ("replace", "append", ...).
const (
	ReduceReplace ReducerKind = iota // a write replaces the value
	ReduceAppend                     // a write appends an element or a list to a List
	ReduceSum                        // a write adds an Int, a Float or a Duration
	ReduceMax                        // the greater of the value and the write
	ReduceMin                        // the lesser of the value and the write
	ReduceMerge                      // a write's keys are merged into an Object
	ReduceCustom                     // a reducer from CompileOptions.Reducers, named by ReducerRef.Name
)

// builtinReducer describes one built-in reducer: its name, the kinds of
// value a variable with it may have (TAny always may), how those are said
// in a diagnostic, and whether a written value must have the variable's
// type (append takes an element or a list, checked at run time).
type builtinReducer struct {
	name      string
	kinds     []Kind // nil: any type
	needs     string // "a List", for "reducer append needs a List, not Int"
	writeType bool   // a written value has the variable's type
	fn        Reducer
}

// builtinReducers is the one table of the built-in reducers, indexed by
// kind. It is never written.
var builtinReducers = [...]builtinReducer{
	ReduceReplace: {name: "replace", writeType: true, fn: replaceReducer},
	ReduceAppend:  {name: "append", kinds: []Kind{KindList}, needs: "a List", fn: appendReducer},
	ReduceSum:     {name: "sum", kinds: []Kind{KindInt, KindFloat, KindDuration}, needs: "an Int, a Float or a Duration", writeType: true, fn: sumReducer},
	ReduceMax:     {name: "max", kinds: []Kind{KindInt, KindFloat, KindDuration}, needs: "an Int, a Float or a Duration", writeType: true, fn: maxReducer},
	ReduceMin:     {name: "min", kinds: []Kind{KindInt, KindFloat, KindDuration}, needs: "an Int, a Float or a Duration", writeType: true, fn: minReducer},
	ReduceMerge:   {name: "merge", kinds: []Kind{KindObject}, needs: "an Object", writeType: true, fn: mergeReducer},
}

// String returns the kind's name as .wf source spells it: "replace",
// "append", "sum", "max", "min", "merge", or "custom".
func (k ReducerKind) String() string {
	if k.Builtin() {
		return builtinReducers[k].name
	}
	if k == ReduceCustom {
		return "custom"
	}
	return fmt.Sprintf("ReducerKind(%d)", uint8(k))
}

// Builtin reports whether k is one of flow's reducers, which cannot fail
// on a written value that fits the variable's type.
func (k ReducerKind) Builtin() bool { return int(k) < len(builtinReducers) }

// Accepts reports whether a variable of type t may have the built-in
// reducer k: append needs a List, sum, max and min a number or a
// Duration, merge an Object; an untyped (Any) variable may have any. A
// custom reducer accepts every type.
func (k ReducerKind) Accepts(t Type) bool {
	if !k.Builtin() || t.Kind == KindAny {
		return true
	}
	kinds := builtinReducers[k].kinds
	if kinds == nil {
		return true
	}
	for _, kk := range kinds {
		if t.Kind == kk {
			return true
		}
	}
	return false
}

// WritesVarType reports whether a value written through reducer k must
// have the variable's type. Append takes an element or a list and a
// custom reducer anything, so for those the written value is not checked
// against the variable's type at compile time.
func (k ReducerKind) WritesVarType() bool { return k.Builtin() && builtinReducers[k].writeType }

// BuiltinReducerNames lists the built-in reducers' names, in kind order.
func BuiltinReducerNames() []string {
	names := make([]string, len(builtinReducers))
	for i, b := range builtinReducers {
		names[i] = b.name
	}
	return names
}

// A ReducerRef names a variable's reducer: a built-in kind, or
// ReduceCustom with the name of a reducer from CompileOptions.Reducers.
// The zero value is replace.
type ReducerRef struct {
	Kind ReducerKind
	Name string // for ReduceCustom only: the key in CompileOptions.Reducers
}

// CustomReducer names the reducer registered as name in
// CompileOptions.Reducers.
func CustomReducer(name string) ReducerRef { return ReducerRef{Kind: ReduceCustom, Name: name} }

// ParseReducer reads a reducer's name as the source spells it: "" and
// "replace" are ReduceReplace, the other built-in names their kinds, and
// any other name a custom reducer, which Compile looks up in
// CompileOptions.Reducers (and reports as unknown when it is not there).
func ParseReducer(name string) ReducerRef {
	if name == "" {
		return ReducerRef{}
	}
	for k, b := range builtinReducers {
		if b.name == name {
			return ReducerRef{Kind: ReducerKind(k)}
		}
	}
	return CustomReducer(name)
}

// String returns the reducer's name as the source spells it.
func (r ReducerRef) String() string {
	if r.Kind == ReduceCustom {
		return r.Name
	}
	return r.Kind.String()
}

// IsReplace reports whether writes simply replace the value (no reducer).
func (r ReducerRef) IsReplace() bool { return r.Kind == ReduceReplace }

func replaceReducer(_, update Value) (Value, error) { return update, nil }

func appendReducer(old, update Value) (Value, error) {
	var out Value
	ok := false
	if update.Kind() == KindList {
		out, ok = AppendList(old, update.List()...)
	} else {
		out, ok = AppendList(old, update)
	}
	if !ok {
		return Null, fmt.Errorf("append reducer: current value is %s, not a List", kindOf(old))
	}
	return out, nil
}

func sumReducer(old, update Value) (Value, error) {
	if old.IsNull() {
		return update, nil
	}
	switch {
	case isNum(old.Kind()) && isNum(update.Kind()), old.Kind() == KindDuration && update.Kind() == KindDuration:
		v, err := arithValues("+", old, update)
		if err != nil {
			return Null, fmt.Errorf("sum reducer: %w", err)
		}
		return v, nil
	}
	return Null, fmt.Errorf("sum reducer: cannot add %s to %s", kindOf(update), kindOf(old))
}

func maxReducer(old, update Value) (Value, error) { return extremum("max", true, old, update) }

func minReducer(old, update Value) (Value, error) { return extremum("min", false, old, update) }

func extremum(name string, isMax bool, old, update Value) (Value, error) {
	if old.IsNull() {
		return update, nil
	}
	c, ok := update.Compare(old)
	if !ok {
		return Null, fmt.Errorf("%s reducer: cannot compare %s with %s", name, kindOf(update), kindOf(old))
	}
	if c > 0 == isMax && c != 0 {
		return update, nil
	}
	return old, nil
}

func mergeReducer(old, update Value) (Value, error) {
	if update.Kind() != KindObject {
		return Null, fmt.Errorf("merge reducer: written value is %s, not an Object", kindOf(update))
	}
	if old.IsNull() {
		return update, nil
	}
	if old.Kind() != KindObject {
		return Null, fmt.Errorf("merge reducer: current value is %s, not an Object", kindOf(old))
	}
	m := make(map[string]Value, old.Len()+update.Len())
	for k, v := range old.Object() {
		m[k] = v
	}
	for k, v := range update.Object() {
		m[k] = v
	}
	return ObjectValue(m), nil
}
