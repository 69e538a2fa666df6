package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlang/weft/llm/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Inner is a nested struct.
type Inner struct {
	Name  string  `json:"name" desc:"the inner name"`
	Score float64 `json:"score,omitempty"`
}

// base is embedded: its fields are promoted, as encoding/json does.
type base struct {
	Trace string `json:"trace,omitempty" desc:"a promoted field"`
}

// AllKinds has a field of every supported kind.
type AllKinds struct {
	base
	S        string            `json:"s" desc:"a <plain> string & more"`
	Mode     string            `json:"mode" enum:"fast, slow,exact" desc:"how to run"`
	B        bool              `json:"b"`
	I        int               `json:"i"`
	I8       int8              `json:"i8,omitempty"`
	U16      uint16            `json:"u16,omitempty"`
	F32      float32           `json:"f32,omitempty"`
	F        float64           `json:"f"`
	Opt      *string           `json:"opt" desc:"a pointer is optional"`
	Zero     int               `json:"zero,omitzero"`
	Tags     []string          `json:"tags"`
	Modes    []string          `json:"modes,omitempty" enum:"a,b"`
	Matrix   [][]int           `json:"matrix,omitempty"`
	Pair     [2]float64        `json:"pair,omitempty"`
	Counts   map[string]int    `json:"counts,omitempty"`
	Nested   Inner             `json:"nested"`
	NestPtr  *Inner            `json:"nest_ptr"`
	List     []Inner           `json:"list,omitempty"`
	ByName   map[string]*Inner `json:"by_name,omitempty"`
	When     time.Time         `json:"when"`
	Every    time.Duration     `json:"every" desc:"how often"`
	Data     []byte            `json:"data,omitempty"`
	Any      any               `json:"any,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	NoTag    string
	Skipped  string `json:"-"`
	internal int
}

func golden(t *testing.T, name string, raw []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n%s", name, buf.String())
	}
}

func compile(t *testing.T, raw []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatalf("the schema does not compile against the draft 2020-12 metaschema: %v", err)
	}
	return s
}

func TestSchemaGolden(t *testing.T) {
	raw, err := tool.SchemaFor[AllKinds]()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "all_kinds.json", raw)
	compile(t, raw)
	for range 20 {
		again, err := tool.SchemaFor[AllKinds]()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, again) {
			t.Fatalf("output changed between calls:\n%s\n%s", raw, again)
		}
	}
	h, err := tool.SchemaFor[tool.HTTPArgs]()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "http_args.json", h)
	compile(t, h)
}

const validAll = `{
	"trace": "t1",
	"s": "hello",
	"mode": "slow",
	"b": true,
	"i": -3,
	"i8": 100,
	"u16": 65535,
	"f32": 1.5,
	"f": 2.0,
	"opt": "here",
	"tags": ["x", "y"],
	"modes": ["b", "a"],
	"matrix": [[1, 2], [3]],
	"pair": [0.5, 1e3],
	"counts": {"k": 7},
	"nested": {"name": "n"},
	"nest_ptr": {"name": "p", "score": 0.25},
	"list": [{"name": "l0"}, {"name": "l1", "score": 1}],
	"by_name": {"a": {"name": "A"}},
	"when": "2024-05-01T12:30:00Z",
	"every": "1h30m",
	"data": "aGk=",
	"any": {"n": 1, "l": [true, null]},
	"raw": {"keep": [1, 2]},
	"NoTag": "nt"
}`

func TestDecodeValid(t *testing.T) {
	var got AllKinds
	tl, err := tool.Func("all", "", func(_ context.Context, a AllKinds) (string, error) {
		got = a
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The document is valid against the schema, for a real validator too.
	raw, _ := tool.SchemaFor[AllKinds]()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(validAll))
	if err != nil {
		t.Fatal(err)
	}
	if err := compile(t, raw).Validate(inst); err != nil {
		t.Fatalf("the test document does not fit the schema: %v", err)
	}
	content, err := tl.Call(context.Background(), json.RawMessage(validAll))
	if err != nil {
		t.Fatal(err)
	}
	if content != `"ok"` {
		t.Errorf("content = %s, want \"ok\"", content)
	}
	opt := "here"
	want := AllKinds{
		base: base{Trace: "t1"},
		S:    "hello", Mode: "slow", B: true, I: -3, I8: 100, U16: 65535, F32: 1.5, F: 2,
		Opt:     &opt,
		Tags:    []string{"x", "y"},
		Modes:   []string{"b", "a"},
		Matrix:  [][]int{{1, 2}, {3}},
		Pair:    [2]float64{0.5, 1000},
		Counts:  map[string]int{"k": 7},
		Nested:  Inner{Name: "n"},
		NestPtr: &Inner{Name: "p", Score: 0.25},
		List:    []Inner{{Name: "l0"}, {Name: "l1", Score: 1}},
		ByName:  map[string]*Inner{"a": {Name: "A"}},
		When:    time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC),
		Every:   90 * time.Minute,
		Data:    []byte("hi"),
		Any:     map[string]any{"n": 1.0, "l": []any{true, nil}},
		Raw:     json.RawMessage(`{"keep":[1,2]}`),
		NoTag:   "nt",
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(AllKinds{})); diff != "" {
		t.Errorf("decoded arguments (-want +got):\n%s", diff)
	}
}

type small struct {
	City  string   `json:"city" enum:"paris,rome"`
	Days  int      `json:"days"`
	Units *string  `json:"units"`
	Tags  []string `json:"tags,omitempty"`
	Inner Inner    `json:"inner,omitempty"`
}

func TestDecodeProblems(t *testing.T) {
	tl, err := tool.Func("small", "", func(_ context.Context, a small) (small, error) { return a, nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, args string
		want       []string // substrings of the error
	}{
		{"unknown field", `{"city":"rome","days":1,"colour":"red"}`, []string{`field "colour": unknown field`, `"city", "days"`}},
		{"wrong type", `{"city":"rome","days":"two"}`, []string{`field "days": expected an integer, got string`}},
		{"fraction", `{"city":"rome","days":1.5}`, []string{`field "days": expected an integer, got 1.5`}},
		{"missing", `{"days":1}`, []string{`field "city": missing required field`}},
		{"enum", `{"city":"oslo","days":1}`, []string{`field "city": "oslo" is not one of "paris", "rome"`}},
		{"null required", `{"city":null,"days":1}`, []string{`field "city": expected a string, got null`}},
		{"nested", `{"city":"rome","days":1,"inner":{"name":3,"x":1}}`, []string{`field "inner.name": expected a string, got number`, `field "inner.x": unknown field`}},
		{"array item", `{"city":"rome","days":1,"tags":["a",2]}`, []string{`field "tags[1]": expected a string, got number`}},
		{"not an object", `[1]`, []string{`expected an object, got array`}},
		{"not json", `{"city":`, []string{`not valid JSON`}},
		{"several", `{"days":"x","q":1}`, []string{`field "city": missing`, `field "days": expected`, `field "q": unknown`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tl.Call(context.Background(), json.RawMessage(tc.args))
			var ae *tool.ArgsError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *ArgsError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDecodeLenient(t *testing.T) {
	tl, err := tool.Func("small", "", func(_ context.Context, a small) (small, error) { return a, nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, args, want string }{
		{"null optional", `{"city":"rome","days":2,"units":null,"tags":null}`, `{"city":"rome","days":2,"units":null,"inner":{"name":""}}`},
		{"integral float", `{"city":"rome","days":2.0}`, `{"city":"rome","days":2,"units":null,"inner":{"name":""}}`},
		{"encoded twice", `"{\"city\":\"paris\",\"days\":1}"`, `{"city":"paris","days":1,"units":null,"inner":{"name":""}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tl.Call(context.Background(), json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	noArgs, err := tool.Func("now", "", func(context.Context, struct{}) (int, error) { return 1, nil })
	if err != nil {
		t.Fatal(err)
	}
	if string(noArgs.Def.Parameters) != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("parameters of struct{} = %s", noArgs.Def.Parameters)
	}
	for _, args := range []string{``, ` `, `null`, `{}`} {
		if _, err := noArgs.Call(context.Background(), json.RawMessage(args)); err != nil {
			t.Errorf("args %q: %v", args, err)
		}
	}
}

func TestDecodeRanges(t *testing.T) {
	type nums struct {
		I8 int8          `json:"i8,omitempty"`
		U  uint          `json:"u,omitempty"`
		F  float32       `json:"f,omitempty"`
		D  time.Duration `json:"d,omitempty"`
		T  time.Time     `json:"t,omitzero"`
		P  [2]int        `json:"p,omitempty"`
		B  []byte        `json:"b,omitempty"`
	}
	tl, err := tool.Func("nums", "", func(_ context.Context, a nums) (nums, error) { return a, nil })
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"i8":300}`:        `field "i8": 300 is out of range for int8`,
		`{"u":-1}`:          `field "u": expected an integer of at least 0, got -1`,
		`{"f":1e300}`:       `field "f": 1e300 is out of range for float32`,
		`{"d":90}`:          `field "d": expected a duration string such as "90s", got number`,
		`{"d":"soon"}`:      `field "d": expected a duration string such as "90s" or "1h30m", got "soon"`,
		`{"t":"yesterday"}`: `field "t": expected a date-time string (RFC 3339`,
		`{"p":[1]}`:         `field "p": expected an array of 2 items, got 1`,
		`{"b":"%%"}`:        `field "b": expected a base64 string`,
	} {
		_, err := tl.Call(context.Background(), json.RawMessage(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("args %s: err = %v, want it to contain %q", args, err, want)
		}
	}
}

type recursive struct {
	Children []recursive `json:"children"`
}

func TestSchemaErrors(t *testing.T) {
	check := func(name string, err error, want string) {
		t.Helper()
		var se *tool.SchemaError
		if !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want a *SchemaError", name, err)
			return
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not contain %q", name, err, want)
		}
	}
	_, err := tool.SchemaFor[int]()
	check("int", err, "must be a struct")
	_, err = tool.SchemaFor[struct {
		C chan int `json:"c"`
	}]()
	check("chan", err, `field "c": type chan int is not supported`)
	_, err = tool.SchemaFor[recursive]()
	check("recursive", err, "recursive type")
	_, err = tool.SchemaFor[struct {
		M map[int]string `json:"m"`
	}]()
	check("map key", err, "map key type int")
	_, err = tool.SchemaFor[struct {
		N int `json:"n" enum:"1,2"`
	}]()
	check("enum on int", err, "an enum tag needs a string type")
	_, err = tool.SchemaFor[struct {
		N int `json:"n,string"`
	}]()
	check("string option", err, `"string" is not supported`)
	_, err = tool.SchemaFor[struct {
		A string `json:"X"`
		X string
	}]()
	check("duplicate", err, `two fields have the JSON name "X"`)
	_, err = tool.Func("bad", "", func(context.Context, []string) (int, error) { return 0, nil })
	check("Func", err, "must be a struct")
}
