package graph

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/weftlang/weft/flow"
)

// updMode says how a field of an update struct writes its state field.
type updMode uint8

const (
	updDirect   updMode = iota // same type as the state field
	updOptional                // *T for a state field of type T: nil writes nothing
	updElem                    // T for an append field of type []T: appends one element
)

// update is one field of a node's update type U, checked against the state.
type update struct {
	f      *field    // the state field it writes
	fi     int       // index of f in layout.fields, which is also the node input index
	index  int       // reflect field index in U
	goName string    // the field's name in U
	mode   updMode   //
	codec  *codec    // converts the value written (the element, for updElem)
	typ    flow.Type // the node output's type
	keep   bool      // updOptional: nil writes the current value back (replace, max, min)
	ident  flow.Value
	off    uintptr  // offset in U, for the fast path
	fast   fastKind // the shape of the value written (after *); fkNone: reflective path
}

// analyzeUpdate checks an update type against the state layout: every
// field must name a state field and have its type (or *T, or the element
// type of an append field).
func analyzeUpdate(l *layout, ut reflect.Type, node string, at flow.Pos) ([]update, flow.Diagnostics) {
	var diags flow.Diagnostics
	errorf := func(format string, args ...any) {
		diags = append(diags, flow.Diagnostic{Pos: at, Severity: flow.Error, Code: "update", Msg: fmt.Sprintf("node %s: ", node) + fmt.Sprintf(format, args...)})
	}
	if ut == l.rt {
		// A full update: every field, through its reducer.
		ups := make([]update, len(l.fields))
		for i, f := range l.fields {
			ups[i] = update{f: f, fi: i, index: f.index, goName: f.goName, codec: f.codec, typ: f.codec.typ, off: f.off, fast: f.fast}
		}
		return ups, nil
	}
	if ut.Kind() != reflect.Struct {
		errorf("the update type %s is not a struct (return a struct whose fields name state fields, the state itself, or graph.Nothing)", ut)
		return nil, diags
	}
	var ups []update
	for i := range ut.NumField() {
		uf := ut.Field(i)
		tag := uf.Tag.Get("weft")
		if tag == "-" {
			continue
		}
		name, red, _ := strings.Cut(tag, ",")
		if uf.Anonymous {
			errorf("update %s: embedded field %s is not supported; list the fields", ut, uf.Name)
			continue
		}
		if !uf.IsExported() {
			errorf("update %s: field %s is unexported", ut, uf.Name)
			continue
		}
		if red != "" {
			errorf("update %s: field %s: the reducer belongs on the state field, not on the update (%s)", ut, uf.Name, tag)
			continue
		}
		var f *field
		if name != "" {
			f = l.byName[name]
		} else if f = l.byGo[uf.Name]; f == nil {
			name = snakeCase(uf.Name)
			f = l.byName[name]
		}
		if f == nil {
			var names []string
			for _, sf := range l.fields {
				names = append(names, sf.goName)
			}
			what := uf.Name
			if name != "" && name != uf.Name {
				what = fmt.Sprintf("%s (%q)", uf.Name, name)
			}
			errorf("update %s: field %s is not a field of the state %s%s", ut, what, l.rt, flow.Suggest(uf.Name, names))
			continue
		}
		fi := slices.Index(l.fields, f)
		if j := slices.IndexFunc(ups, func(u update) bool { return u.f == f }); j >= 0 {
			errorf("update %s: fields %s and %s both write state field %s", ut, ups[j].goName, uf.Name, f.goName)
			continue
		}
		sft := l.rt.Field(f.index).Type
		u := update{f: f, fi: fi, index: i, goName: uf.Name, codec: f.codec, typ: f.codec.typ, off: uf.Offset, fast: f.fast}
		switch {
		case uf.Type == sft:
		case uf.Type.Kind() == reflect.Pointer && uf.Type.Elem() == sft:
			u.mode = updOptional
			switch f.reducer {
			case flow.ReduceReplace, flow.ReduceMax, flow.ReduceMin:
				u.keep = true
			case flow.ReduceAppend:
				u.ident = flow.ListValue()
			case flow.ReduceMerge:
				u.ident = flow.ObjectValue(nil)
			case flow.ReduceSum:
				switch f.codec.typ.Kind {
				case flow.KindFloat:
					u.ident = flow.FloatValue(0)
				case flow.KindDuration:
					u.ident = flow.DurationValue(0)
				default:
					u.ident = flow.IntValue(0)
				}
			}
		case f.reducer == flow.ReduceAppend && (sft.Kind() == reflect.Slice || sft.Kind() == reflect.Array) && uf.Type == sft.Elem():
			ec, err := l.codecs.of(uf.Type)
			if err != nil {
				errorf("update %s: field %s: %v", ut, uf.Name, err)
				continue
			}
			if k := ec.typ.Kind; k == flow.KindList || k == flow.KindAny {
				errorf("update %s: field %s of type %s is ambiguous as one element of append field %s (it could be a list of elements): write the field as %s", ut, uf.Name, uf.Type, f.goName, sft)
				continue
			}
			u.mode, u.codec, u.typ, u.fast = updElem, ec, ec.typ, fastKindOf(uf.Type)
		default:
			want := sft.String()
			if f.reducer == flow.ReduceAppend {
				want += " (or one element, " + sft.Elem().String() + ")"
			}
			errorf("update %s: field %s has type %s, but state field %s has type %s; want %s, or *%s to make the write optional", ut, uf.Name, uf.Type, f.goName, sft, want, sft)
			continue
		}
		ups = append(ups, u)
	}
	return ups, diags
}
