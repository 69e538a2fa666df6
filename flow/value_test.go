package flow_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
)

func TestValueConstructorsAndAccessors(t *testing.T) {
	if !flow.Null.IsNull() || flow.Null.Kind() != flow.KindNull || (flow.Value{}).Kind() != flow.KindNull {
		t.Error("the zero Value is not null")
	}
	b := flow.BoolValue(true)
	if b.Kind() != flow.KindBool || !b.Bool() || flow.BoolValue(false).Bool() {
		t.Error("Bool")
	}
	i := flow.IntValue(-42)
	if i.Kind() != flow.KindInt || i.Int() != -42 || i.Float() != -42 {
		t.Errorf("Int: %v %v %v", i.Kind(), i.Int(), i.Float())
	}
	f := flow.FloatValue(2.75)
	if f.Kind() != flow.KindFloat || f.Float() != 2.75 || f.Int() != 2 {
		t.Errorf("Float: %v %v %v", f.Kind(), f.Float(), f.Int())
	}
	s := flow.StringValue("héllo")
	if s.Kind() != flow.KindString || s.Str() != "héllo" || s.Len() != 6 {
		t.Errorf("String: %v %q %d", s.Kind(), s.Str(), s.Len())
	}
	d := flow.DurationValue(90 * time.Second)
	if d.Kind() != flow.KindDuration || d.Duration() != 90*time.Second {
		t.Error("Duration")
	}
	l := flow.ListValue(i, s)
	if l.Kind() != flow.KindList || l.Len() != 2 || !l.List()[1].Equal(s) {
		t.Error("List")
	}
	if e := flow.ListValue(); e.List() == nil || e.Len() != 0 || e.IsNull() {
		t.Error("empty List must be a non-nil empty list")
	}
	sl := flow.StringList("a", "b")
	if sl.Len() != 2 || sl.List()[0].Str() != "a" {
		t.Error("StringList")
	}
	o := flow.ObjectValue(map[string]flow.Value{"k": i})
	if o.Kind() != flow.KindObject || o.Len() != 1 || !o.Object()["k"].Equal(i) {
		t.Error("Object")
	}
	if e := flow.ObjectValue(nil); e.Object() == nil || e.Len() != 0 {
		t.Error("ObjectValue(nil) must be an empty object")
	}
	// Accessors of the wrong kind return zero values.
	if s.Int() != 0 || s.Float() != 0 || s.Bool() || s.Duration() != 0 || s.List() != nil || s.Object() != nil {
		t.Error("accessors of a String")
	}
	if i.Str() != "" || i.Len() != 0 || b.Len() != 0 {
		t.Error("accessors of an Int")
	}
}

func TestValueTruthy(t *testing.T) {
	for _, c := range []struct {
		v    flow.Value
		want bool
	}{
		{flow.Null, false},
		{flow.BoolValue(true), true}, {flow.BoolValue(false), false},
		{flow.IntValue(0), false}, {flow.IntValue(-1), true},
		{flow.FloatValue(0), false}, {flow.FloatValue(math.Copysign(0, -1)), false}, {flow.FloatValue(0.1), true},
		{flow.StringValue(""), false}, {flow.StringValue("x"), true},
		{flow.DurationValue(0), false}, {flow.DurationValue(time.Second), true},
		{flow.ListValue(), false}, {flow.StringList("a"), true},
		{flow.ObjectValue(nil), false}, {flow.ObjectValue(map[string]flow.Value{"a": flow.Null}), true},
	} {
		if got := c.v.Truthy(); got != c.want {
			t.Errorf("%v.Truthy() = %v", c.v, got)
		}
	}
}

func obj(kv ...any) flow.Value {
	m := map[string]flow.Value{}
	for i := 0; i < len(kv); i += 2 {
		v, err := flow.FromGo(kv[i+1])
		if err != nil {
			panic(err)
		}
		m[kv[i].(string)] = v
	}
	return flow.ObjectValue(m)
}

func TestValueEqual(t *testing.T) {
	deep := func(x string) flow.Value {
		return obj("a", []any{int64(1), map[string]any{"b": x}}, "c", nil)
	}
	for _, c := range []struct {
		a, b flow.Value
		want bool
	}{
		{flow.Null, flow.Null, true},
		{flow.Null, flow.IntValue(0), false},
		{flow.IntValue(2), flow.FloatValue(2), true},
		{flow.FloatValue(2), flow.IntValue(2), true},
		{flow.IntValue(2), flow.FloatValue(2.5), false},
		{flow.IntValue(1), flow.BoolValue(true), false},
		{flow.IntValue(1), flow.DurationValue(1), false},
		{flow.StringValue("1"), flow.IntValue(1), false},
		{flow.FloatValue(math.NaN()), flow.FloatValue(math.NaN()), false},
		{flow.DurationValue(time.Second), flow.DurationValue(time.Second), true},
		{flow.BoolValue(false), flow.BoolValue(false), true},
		{flow.StringList("a", "b"), flow.StringList("a", "b"), true},
		{flow.StringList("a", "b"), flow.StringList("b", "a"), false},
		{flow.StringList("a"), flow.StringList("a", "b"), false},
		{flow.ListValue(flow.IntValue(1)), flow.ListValue(flow.FloatValue(1)), true},
		{deep("x"), deep("x"), true},
		{deep("x"), deep("y"), false},
		{obj("a", 1), obj("a", 1, "b", 2), false},
		{obj("a", 1), obj("b", 1), false},
		{obj("a", nil), obj("b", nil), false},
		{flow.ListValue(), flow.ObjectValue(nil), false},
	} {
		if got := c.a.Equal(c.b); got != c.want {
			t.Errorf("%v.Equal(%v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestValueCompare(t *testing.T) {
	for _, c := range []struct {
		a, b flow.Value
		want int
		ok   bool
	}{
		{flow.IntValue(1), flow.IntValue(2), -1, true},
		{flow.IntValue(math.MaxInt64), flow.IntValue(math.MaxInt64 - 1), 1, true},
		{flow.IntValue(2), flow.FloatValue(1.5), 1, true},
		{flow.FloatValue(1.5), flow.FloatValue(1.5), 0, true},
		{flow.StringValue("a"), flow.StringValue("b"), -1, true},
		{flow.DurationValue(time.Minute), flow.DurationValue(time.Second), 1, true},
		{flow.BoolValue(false), flow.BoolValue(true), -1, true},
		{flow.StringValue("1"), flow.IntValue(1), 0, false},
		{flow.Null, flow.Null, 0, false},
		{flow.StringList("a"), flow.StringList("a"), 0, false},
		{flow.DurationValue(1), flow.IntValue(1), 0, false},
	} {
		got, ok := c.a.Compare(c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("%v.Compare(%v) = %d, %v; want %d, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}

func TestValueString(t *testing.T) {
	for _, c := range []struct {
		v         flow.Value
		str, text string
	}{
		{flow.Null, "null", "null"},
		{flow.BoolValue(true), "true", "true"},
		{flow.IntValue(-3), "-3", "-3"},
		{flow.FloatValue(2.5), "2.5", "2.5"},
		{flow.FloatValue(2), "2.0", "2.0"}, // a Float reads as a Float
		{flow.FloatValue(1e21), "1e+21", "1e+21"},
		{flow.StringValue("a \"b\"\n"), `"a \"b\"\n"`, "a \"b\"\n"},
		{flow.DurationValue(90 * time.Second), "1m30s", "1m30s"},
		{flow.ListValue(flow.IntValue(1), flow.StringValue("x"), flow.Null), `[1, "x", null]`, `[1, "x", null]`},
		{obj("b", 1, "a", []any{true}), `{a: [true], b: 1}`, `{a: [true], b: 1}`},
		{obj("two words", 1), `{"two words": 1}`, `{"two words": 1}`},
		{flow.ObjectValue(nil), "{}", "{}"},
	} {
		if got := c.v.String(); got != c.str {
			t.Errorf("String() = %q, want %q", got, c.str)
		}
		if got := c.v.Text(); got != c.text {
			t.Errorf("Text() = %q, want %q", got, c.text)
		}
	}
}

func TestValueJSONRoundTrip(t *testing.T) {
	for _, src := range []string{
		`null`, `true`, `false`, `0`, `-17`, `9007199254740993`, `2.5`, `1e+21`, `"x\u00e9\n"`,
		`[]`, `{}`, `[1,2.5,"a",null,[true]]`, `{"a":{"b":[1,{"c":null}]},"d":-0.5}`,
	} {
		var v flow.Value
		if err := json.Unmarshal([]byte(src), &v); err != nil {
			t.Fatalf("Unmarshal(%s): %v", src, err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", v, err)
		}
		var back flow.Value
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", out, err)
		}
		if !back.Equal(v) || !sameKinds(back, v) {
			t.Errorf("%s -> %v -> %s -> %v", src, v, out, back)
		}
	}

	// Integers stay Int, numbers with a fraction or exponent are Float.
	var v flow.Value
	if err := json.Unmarshal([]byte(`[3, 3.0, 3e0, 9223372036854775807, 18446744073709551616]`), &v); err != nil {
		t.Fatal(err)
	}
	kinds := []flow.Kind{flow.KindInt, flow.KindFloat, flow.KindFloat, flow.KindInt, flow.KindFloat}
	for i, e := range v.List() {
		if e.Kind() != kinds[i] {
			t.Errorf("element %d (%v): kind %v, want %v", i, e, e.Kind(), kinds[i])
		}
	}
	if v.List()[3].Int() != math.MaxInt64 {
		t.Errorf("max int64 lost precision: %v", v.List()[3])
	}

	// A Float keeps its kind through JSON, even when it has no fraction:
	// a checkpointed 3.0 must not come back as the Int 3 (3/2 would change).
	for _, f := range []float64{3, -0.0, 1e21, 1e-7} {
		out, err := json.Marshal(flow.FloatValue(f))
		if err != nil {
			t.Fatal(err)
		}
		var back flow.Value
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if back.Kind() != flow.KindFloat || back.Float() != f {
			t.Errorf("FloatValue(%v) -> %s -> %v (%v)", f, out, back, back.Kind())
		}
	}

	// A Duration encodes as its string form.
	out, err := json.Marshal(obj("d", 90*time.Second))
	if err != nil || string(out) != `{"d":"1m30s"}` {
		t.Errorf("Duration JSON: %s, %v", out, err)
	}
	// NaN has no JSON form.
	if _, err := json.Marshal(flow.FloatValue(math.NaN())); err == nil {
		t.Error("NaN marshaled without error")
	}
	// Bad input and trailing garbage are errors.
	for _, bad := range []string{`{`, `1 2`, `[1,]`, ``} {
		var v flow.Value
		if err := v.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("UnmarshalJSON(%q) = %v, want an error", bad, v)
		}
	}
}

// sameKinds compares the kinds of two values deeply.
func sameKinds(a, b flow.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case flow.KindList:
		for i := range a.List() {
			if !sameKinds(a.List()[i], b.List()[i]) {
				return false
			}
		}
	case flow.KindObject:
		for k, x := range a.Object() {
			if !sameKinds(x, b.Object()[k]) {
				return false
			}
		}
	}
	return true
}

func TestValueGo(t *testing.T) {
	v := obj("i", 1, "f", 1.5, "s", "x", "b", true, "n", nil, "d", time.Second, "l", []any{int64(1)})
	g := v.Go().(map[string]any)
	want := map[string]any{"i": int64(1), "f": 1.5, "s": "x", "b": true, "n": nil, "d": "1s", "l": []any{int64(1)}}
	for k, w := range want {
		got := g[k]
		if l, ok := w.([]any); ok {
			if gl, ok := got.([]any); !ok || len(gl) != 1 || gl[0] != l[0] {
				t.Errorf("%s: %#v", k, got)
			}
			continue
		}
		if got != w {
			t.Errorf("Go()[%s] = %#v, want %#v", k, got, w)
		}
	}
}

type inner struct {
	Deep string `json:"deep"`
}

type Embedded struct {
	Shared string `json:"shared"`
}

type sample struct {
	Embedded
	Name    string                `json:"name"`
	Count   int32                 `json:"count,omitempty"`
	Ratio   float32               `json:"ratio"`
	Skip    string                `json:"-"`
	NoTag   bool                  // named by the field name
	Ptr     *inner                `json:"ptr"`
	NilPtr  *inner                `json:"nil_ptr"`
	Tags    []string              `json:"tags"`
	NilList []int                 `json:"nil_list"`
	Arr     [2]uint8              `json:"arr"`
	Meta    map[string]any        `json:"meta"`
	Wait    time.Duration         `json:"wait"`
	Vals    []flow.Value          `json:"vals"`
	ByName  map[string]flow.Value `json:"by_name"`
	Num     json.Number           `json:"num"`
	Raw     json.RawMessage       `json:"raw"`
	When    time.Time             `json:"when"`
	private int
}

func TestFromGo(t *testing.T) {
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	s := &sample{
		Embedded: Embedded{Shared: "emb"},
		Name:     "n", Count: 3, Ratio: 0.5, Skip: "no", NoTag: true,
		Ptr: &inner{Deep: "d"}, Tags: []string{"a"}, Arr: [2]uint8{1, 2},
		Meta: map[string]any{"k": []any{1, "x"}}, Wait: 2 * time.Second,
		Vals:   []flow.Value{flow.IntValue(7), flow.StringValue("v")},
		ByName: map[string]flow.Value{"x": flow.BoolValue(true)},
		Num:    json.Number("12"), Raw: json.RawMessage(`{"r":[1.5]}`), When: when,
		private: 1,
	}
	v, err := flow.FromGo(s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"shared":   `"emb"`,
		"name":     `"n"`,
		"count":    `3`,
		"ratio":    `0.5`,
		"NoTag":    `true`,
		"ptr":      `{deep: "d"}`,
		"nil_ptr":  `null`,
		"tags":     `["a"]`,
		"nil_list": `[]`,
		"arr":      `[1, 2]`,
		"meta":     `{k: [1, "x"]}`,
		"wait":     `2s`,
		"vals":     `[7, "v"]`,
		"by_name":  `{x: true}`,
		"num":      `12`,
		"raw":      `{r: [1.5]}`,
		"when":     `"2024-05-06T07:08:09Z"`,
	}
	m := v.Object()
	for k, w := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("field %s missing in %v", k, v)
			continue
		}
		if got.String() != w {
			t.Errorf("field %s = %s, want %s", k, got, w)
		}
	}
	for _, k := range []string{"Skip", "-", "private", "Embedded"} {
		if _, ok := m[k]; ok {
			t.Errorf("field %s should not be converted", k)
		}
	}
	if m["wait"].Kind() != flow.KindDuration || m["num"].Kind() != flow.KindInt || m["count"].Kind() != flow.KindInt {
		t.Errorf("kinds: wait %v, num %v, count %v", m["wait"].Kind(), m["num"].Kind(), m["count"].Kind())
	}

	// Plain data.
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{(*inner)(nil), "null"},
		{int8(-3), "-3"},
		{uint64(7), "7"},
		{float32(1.5), "1.5"},
		{"s", `"s"`},
		{[]string{"a", "b"}, `["a", "b"]`},
		{map[string]int{"a": 1}, `{a: 1}`},
		{[]any{1, []any{2.5}}, `[1, [2.5]]`},
		{json.Number("1.25"), "1.25"},
		{flow.IntValue(9), "9"},
		{time.Minute, "1m0s"},
	} {
		v, err := flow.FromGo(c.in)
		if err != nil {
			t.Errorf("FromGo(%#v): %v", c.in, err)
			continue
		}
		if v.String() != c.want {
			t.Errorf("FromGo(%#v) = %s, want %s", c.in, v, c.want)
		}
	}

	// Unsupported data is an error that says where.
	for _, c := range []struct {
		in   any
		path string
		msg  string
	}{
		{make(chan int), "", "flow: cannot convert a Go chan int to a value"},
		{func() {}, "", "flow: cannot convert a Go func() to a value"},
		{map[int]string{1: "a"}, "", "flow: map key type int is not a string"},
		{uint64(math.MaxUint64), "", "flow: integer 18446744073709551615 overflows Int"},
		{[]any{1, 2, make(chan int)}, "[2]", "flow: [2]: cannot convert a Go chan int to a value"},
		{map[string]any{"k": []any{map[string]any{"z": complex(1, 2)}}}, "k[0].z", "flow: k[0].z: cannot convert a Go complex128 to a value"},
		{struct{ C []chan int }{C: []chan int{nil}}, "C[0]", "flow: C[0]: cannot convert a Go chan int to a value"},
		{map[string][]func(){"f": {nil}}, "f[0]", "flow: f[0]: cannot convert a Go func() to a value"},
		{json.Number("x"), "", `flow: bad number "x": strconv.ParseFloat: parsing "x": invalid syntax`},
	} {
		v, err := flow.FromGo(c.in)
		var fe *flow.FromGoError
		if !errors.As(err, &fe) {
			t.Errorf("FromGo(%T) = %v, %v; want a *FromGoError", c.in, v, err)
			continue
		}
		if fe.Path != c.path || err.Error() != c.msg {
			t.Errorf("FromGo(%T): path %q, error %q; want %q, %q", c.in, fe.Path, err, c.path, c.msg)
		}
	}
}

func TestConform(t *testing.T) {
	enum := flow.EnumOf("qa", "summarization", "not_clear")
	for _, c := range []struct {
		name string
		v    flow.Value
		t    flow.Type
		want flow.Value
	}{
		{"any", obj("a", 1), flow.TAny, obj("a", 1)},
		{"any null", flow.Null, flow.TAny, flow.Null},
		{"bool", flow.BoolValue(true), flow.TBool, flow.BoolValue(true)},
		{"int", flow.IntValue(3), flow.TInt, flow.IntValue(3)},
		{"float", flow.FloatValue(1.5), flow.TFloat, flow.FloatValue(1.5)},
		{"int widens to float", flow.IntValue(3), flow.TFloat, flow.FloatValue(3)},
		{"string", flow.StringValue("x"), flow.TString, flow.StringValue("x")},
		{"duration", flow.DurationValue(time.Second), flow.TDuration, flow.DurationValue(time.Second)},
		{"duration from string", flow.StringValue("1m30s"), flow.TDuration, flow.DurationValue(90 * time.Second)},
		{"enum", flow.StringValue("qa"), enum, flow.StringValue("qa")},
		{"object", obj("a", 1), flow.TObject, obj("a", 1)},
		{"list", flow.StringList("a"), flow.ListOf(flow.TString), flow.StringList("a")},
		{"list of enum", flow.StringList("qa", "not_clear"), flow.ListOf(enum), flow.StringList("qa", "not_clear")},
		{"empty list", flow.ListValue(), flow.ListOf(flow.TInt), flow.ListValue()},
	} {
		got, err := flow.Conform(c.v, c.t)
		if err != nil {
			t.Errorf("%s: Conform(%v, %v): %v", c.name, c.v, c.t, err)
			continue
		}
		if !got.Equal(c.want) || !sameKinds(got, c.want) {
			t.Errorf("%s: Conform(%v, %v) = %v (%v), want %v", c.name, c.v, c.t, got, got.Kind(), c.want)
		}
	}

	// Widening inside lists, also nested, and the input is left alone.
	in := flow.ListValue(flow.ListValue(flow.IntValue(1), flow.FloatValue(2.5)), flow.ListValue(flow.IntValue(3)))
	got, err := flow.Conform(in, flow.ListOf(flow.ListOf(flow.TFloat)))
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range got.List() {
		for j, e := range row.List() {
			if e.Kind() != flow.KindFloat {
				t.Errorf("[%d][%d] = %v is %v, want Float", i, j, e, e.Kind())
			}
		}
	}
	if in.List()[0].List()[0].Kind() != flow.KindInt {
		t.Error("Conform changed its input")
	}
	durs, err := flow.Conform(flow.ListValue(flow.StringValue("1s"), flow.DurationValue(time.Minute)), flow.ListOf(flow.TDuration))
	if err != nil || durs.List()[0].Kind() != flow.KindDuration || durs.List()[0].Duration() != time.Second {
		t.Errorf("list of durations: %v, %v", durs, err)
	}

	// Mismatches.
	for _, c := range []struct {
		name string
		v    flow.Value
		t    flow.Type
		path string
		msg  string
	}{
		{"enum mismatch", flow.StringValue("qaa"), enum, "", `value "qaa" is not one of Enum["qa","summarization","not_clear"]`},
		{"enum non-string", flow.IntValue(1), enum, "", `value 1 is not one of Enum["qa","summarization","not_clear"]`},
		{"int from float", flow.FloatValue(1.5), flow.TInt, "", "want Int, got Float 1.5"},
		{"int from string", flow.StringValue("1"), flow.TInt, "", `want Int, got String "1"`},
		{"null", flow.Null, flow.TString, "", "want String, got null"},
		{"bool", flow.StringValue("true"), flow.TBool, "", `want Bool, got String "true"`},
		{"float from string", flow.StringValue("1.5"), flow.TFloat, "", `want Float, got String "1.5"`},
		{"bad duration", flow.StringValue("soon"), flow.TDuration, "", `want Duration, got String "soon"`},
		{"duration from int", flow.IntValue(5), flow.TDuration, "", "want Duration, got Int 5"},
		{"object from list", flow.ListValue(), flow.TObject, "", "want Object, got List []"},
		{"list from string", flow.StringValue("a"), flow.ListOf(flow.TString), "", `want List[String], got String "a"`},
		{"list element", flow.ListValue(flow.StringValue("a"), flow.StringValue("b"), flow.IntValue(3)), flow.ListOf(flow.TString), "[2]", "want String at [2], got Int 3"},
		{"enum list element", flow.StringList("qa", "qa", "x"), flow.ListOf(enum), "[2]", `value "x" at [2] is not one of Enum["qa","summarization","not_clear"]`},
		{"nested", flow.ListValue(flow.ListValue(), flow.ListValue(flow.IntValue(1), flow.Null)), flow.ListOf(flow.ListOf(flow.TInt)), "[1][1]", "want Int at [1][1], got null"},
	} {
		got, err := flow.Conform(c.v, c.t)
		var te *flow.TypeError
		if !errors.As(err, &te) {
			t.Errorf("%s: Conform(%v, %v) = %v, %v; want a *TypeError", c.name, c.v, c.t, got, err)
			continue
		}
		if te.Path != c.path {
			t.Errorf("%s: Path = %q, want %q", c.name, te.Path, c.path)
		}
		if err.Error() != c.msg {
			t.Errorf("%s: message\n  %s\nwant\n  %s", c.name, err, c.msg)
		}
	}
}

func TestConformIntegralFloatToInt(t *testing.T) {
	v, err := flow.Conform(flow.FloatValue(3.0), flow.TInt)
	if err != nil || v.Kind() != flow.KindInt || v.Int() != 3 {
		t.Fatalf("Conform(3.0, Int) = %v, %v; want Int 3", v, err)
	}
	if _, err := flow.Conform(flow.FloatValue(3.5), flow.TInt); err == nil {
		t.Fatal("Conform(3.5, Int) succeeded; want a TypeError")
	}
}

func TestMarshalJSONKeepsHTML(t *testing.T) {
	b, err := flow.StringValue("a < b && c > d").MarshalJSON()
	if err != nil || string(b) != `"a < b && c > d"` {
		t.Fatalf("MarshalJSON = %s, %v", b, err)
	}
}
