package graph

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/weftlang/weft/flow"
)

// field is one field of the state struct: one variable of the workflow.
type field struct {
	name    string           // the variable's name in the IR
	goName  string           // the Go field name
	index   int              // reflect field index in the state struct
	reducer flow.ReducerKind // a built-in: state tags name no custom reducers
	codec   *codec
	off     uintptr  // offset in the state struct, for the fast path
	fast    fastKind // fkNone: the field takes the reflective path
	param   string   // the parameter that carries the field's value at the start of a run: "init_" + name
	input   string   // the node input that receives the field's value: "in_" + name
}

// layout is the state struct S seen through reflection, once.
type layout struct {
	rt     reflect.Type
	fields []*field
	byName map[string]*field // by IR name
	byGo   map[string]*field // by Go field name
	codecs codecs
	diags  flow.Diagnostics
}

func newLayout(rt reflect.Type, at flow.Pos) *layout {
	l := &layout{rt: rt, byName: map[string]*field{}, byGo: map[string]*field{}, codecs: codecs{}}
	errorf := func(format string, args ...any) {
		l.diags = append(l.diags, flow.Diagnostic{Pos: at, Severity: flow.Error, Code: "state", Msg: fmt.Sprintf(format, args...)})
	}
	if rt == nil || rt.Kind() != reflect.Struct {
		errorf("the state type %v is not a struct", rt)
		return l
	}
	for i := range rt.NumField() {
		sf := rt.Field(i)
		tag, hasTag := sf.Tag.Lookup("weft")
		if tag == "-" {
			continue
		}
		if sf.Anonymous {
			errorf("state %s: embedded field %s is not supported; give it a name", rt, sf.Name)
			continue
		}
		if !sf.IsExported() {
			if hasTag {
				errorf("state %s: field %s is unexported and cannot be state", rt, sf.Name)
			}
			continue
		}
		name, red, _ := strings.Cut(tag, ",")
		if name == "" {
			name = snakeCase(sf.Name)
		}
		f := &field{name: name, goName: sf.Name, index: i, off: sf.Offset, fast: fastKindOf(sf.Type), param: "init_" + name, input: "in_" + name}
		switch {
		case !isIdent(name):
			errorf("state %s: field %s: name %q is not an identifier (letters, digits, _)", rt, sf.Name, name)
			continue
		case strings.HasPrefix(name, "__") || name == flow.InputText:
			errorf("state %s: field %s: name %q is reserved", rt, sf.Name, name)
			continue
		case strings.Contains(red, ","):
			errorf("state %s: field %s: tag %q has more than a name and a reducer", rt, sf.Name, tag)
			continue
		}
		if prev, dup := l.byName[name]; dup {
			errorf("state %s: fields %s and %s are both named %q", rt, prev.goName, sf.Name, name)
			continue
		}
		c, err := l.codecs.of(sf.Type)
		if err != nil {
			errorf("state %s: field %s: %v", rt, sf.Name, err)
			continue
		}
		f.codec = c
		ref := flow.ParseReducer(red)
		if msg := checkReducer(ref, c.typ); msg != "" {
			errorf("state %s: field %s: %s", rt, sf.Name, msg)
			continue
		}
		f.reducer = ref.Kind
		l.fields = append(l.fields, f)
		l.byName[name] = f
		l.byGo[sf.Name] = f
	}
	return l
}

// checkReducer says what is wrong with reducer ref on a field of type t,
// in Go's words.
func checkReducer(ref flow.ReducerRef, t flow.Type) string {
	if ref.Kind == flow.ReduceCustom {
		return fmt.Sprintf("unknown reducer %q (want one of %s)", ref.Name, strings.Join(flow.BuiltinReducerNames(), ", "))
	}
	if ref.Kind.Accepts(t) {
		return ""
	}
	switch ref.Kind {
	case flow.ReduceAppend:
		return fmt.Sprintf("reducer append needs a slice, the field is %s", t)
	case flow.ReduceMerge:
		return fmt.Sprintf("reducer merge needs a map or a struct, the field is %s", t)
	}
	return fmt.Sprintf("reducer %s needs a number or a time.Duration, the field is %s", ref.Kind, t)
}

// snakeCase spells a Go name the way state fields are named by default:
// Count -> count, RetrievedDocs -> retrieved_docs, UserID -> user_id,
// HTTPStatus -> http_status.
func snakeCase(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
					b.WriteByte('_')
				}
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isIdent reports whether s is an identifier of the .wf language: ASCII
// letters, digits and _, not starting with a digit.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}
