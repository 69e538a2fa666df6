package flow_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
)

// Every built-in reducer, from the one table: its name parses to its kind
// and prints back, the variable types it accepts, whether a write has the
// variable's type, and what it makes of a write, as the compiled cell runs
// it.
func TestBuiltinReducers(t *testing.T) {
	types := []flow.Type{flow.TString, flow.TInt, flow.TFloat, flow.TDuration, flow.TBool, flow.TObject, flow.ListOf(flow.TString), flow.TAny}
	for _, c := range []struct {
		name       string
		kind       flow.ReducerKind
		accepts    []flow.Type // of types; TAny always
		writesType bool
		typ        flow.Type // a variable's type to run it on
		old, upd   flow.Value
		want       flow.Value
	}{
		{"replace", flow.ReduceReplace, types, true, flow.TInt, flow.IntValue(3), flow.IntValue(4), flow.IntValue(4)},
		{"append", flow.ReduceAppend, []flow.Type{flow.ListOf(flow.TString), flow.TAny}, false, flow.ListOf(flow.TString), flow.StringList("a"), flow.StringValue("b"), flow.StringList("a", "b")},
		{"sum", flow.ReduceSum, []flow.Type{flow.TInt, flow.TFloat, flow.TDuration, flow.TAny}, true, flow.TDuration, flow.DurationValue(time.Second), flow.DurationValue(2 * time.Second), flow.DurationValue(3 * time.Second)},
		{"max", flow.ReduceMax, []flow.Type{flow.TInt, flow.TFloat, flow.TDuration, flow.TAny}, true, flow.TFloat, flow.FloatValue(0.5), flow.FloatValue(0.25), flow.FloatValue(0.5)},
		{"min", flow.ReduceMin, []flow.Type{flow.TInt, flow.TFloat, flow.TDuration, flow.TAny}, true, flow.TInt, flow.IntValue(5), flow.IntValue(2), flow.IntValue(2)},
		{"merge", flow.ReduceMerge, []flow.Type{flow.TObject, flow.TAny}, true, flow.TObject, obj("a", 1, "b", 2), obj("b", 3), obj("a", 1, "b", 3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref := flow.ParseReducer(c.name)
			if ref != (flow.ReducerRef{Kind: c.kind}) || ref.String() != c.name || c.kind.String() != c.name || !c.kind.Builtin() {
				t.Errorf("ParseReducer(%q) = %+v (%s, builtin %v)", c.name, ref, ref, c.kind.Builtin())
			}
			for _, ty := range types {
				if got, want := c.kind.Accepts(ty), slices.ContainsFunc(c.accepts, ty.Equal); got != want {
					t.Errorf("Accepts(%s) = %v, want %v", ty, got, want)
				}
			}
			if c.kind.WritesVarType() != c.writesType {
				t.Errorf("WritesVarType = %v", !c.writesType)
			}
			w := seedWorkflow()
			w.Vars = append(w.Vars, &flow.Var{Name: "v", Type: c.typ, Reducer: ref})
			p := mustCompile(t, w, seedOptions())
			_, cl := cellByName(t, p, "v")
			if cl.Red != ref || cl.Reducer == nil {
				t.Fatalf("cell reducer %+v", cl.Red)
			}
			got, err := cl.Reducer(c.old, c.upd)
			if err != nil || !got.Equal(c.want) {
				t.Errorf("%s(%v, %v) = %v, %v; want %v", c.name, c.old, c.upd, got, err, c.want)
			}
			// A type the reducer does not take is a compile error, in
			// the words of the table.
			for _, ty := range types {
				if c.kind.Accepts(ty) {
					continue
				}
				w := seedWorkflow()
				w.Vars = append(w.Vars, &flow.Var{Name: "v", Type: ty, Reducer: ref, Pos: P(5, 5)})
				_, ds := flow.Compile(w, seedOptions())
				wantDiag(t, ds, "type-mismatch", flow.Error, P(5, 5), fmt.Sprintf("variable v: reducer %s needs ", c.name), "not "+ty.String())
				break
			}
		})
	}
	if got := flow.BuiltinReducerNames(); !slices.Equal(got, []string{"replace", "append", "sum", "max", "min", "merge"}) {
		t.Errorf("BuiltinReducerNames = %q", got)
	}
}

// The zero ReducerRef replaces; a name that is no built-in is a custom
// reducer, which the compiled cell marks as such; one registered under a
// built-in's name is custom too.
func TestReducerRef(t *testing.T) {
	if r := flow.ParseReducer(""); r != (flow.ReducerRef{}) || !r.IsReplace() || r.String() != "replace" {
		t.Errorf(`ParseReducer("") = %+v`, r)
	}
	if r := flow.ParseReducer("double"); r != flow.CustomReducer("double") || r.Kind.Builtin() || r.String() != "double" || r.Kind.String() != "custom" {
		t.Errorf(`ParseReducer("double") = %+v`, r)
	}
	w := seedWorkflow()
	w.Vars = append(w.Vars,
		&flow.Var{Name: "d", Type: flow.TInt, Reducer: flow.CustomReducer("double")},
		&flow.Var{Name: "s", Type: flow.TString, Reducer: flow.ReducerRef{Kind: flow.ReduceSum}},
	)
	opts := seedOptions()
	twice := func(_, v flow.Value) (flow.Value, error) { return flow.IntValue(2 * v.Int()), nil }
	opts.Reducers = map[string]flow.Reducer{"double": twice, "sum": twice}
	p := mustCompile(t, w, opts)
	for name, want := range map[string]flow.ReducerRef{"d": flow.CustomReducer("double"), "s": flow.CustomReducer("sum")} {
		if _, cl := cellByName(t, p, name); cl.Red != want {
			t.Errorf("%s: reducer %+v, want %+v", name, cl.Red, want)
		}
	}
}

// An unknown reducer is reported as before the reducers were typed.
func TestUnknownReducerDiagnostic(t *testing.T) {
	for name, want := range map[string]string{
		"apend":  `variable v: unknown reducer "apend"; did you mean "append"?`,
		"maxx":   `variable v: unknown reducer "maxx"; did you mean "max"?`,
		"zzzzzz": `variable v: unknown reducer "zzzzzz"`,
	} {
		w := seedWorkflow()
		w.Vars = append(w.Vars, &flow.Var{Name: "v", Type: flow.TInt, Reducer: flow.ParseReducer(name), Pos: P(5, 5)})
		_, ds := flow.Compile(w, seedOptions())
		d := wantDiag(t, ds, "unknown-name", flow.Error, P(5, 5), want)
		if d.Msg != want {
			t.Errorf("%s: %q, want %q", name, d.Msg, want)
		}
	}
}
