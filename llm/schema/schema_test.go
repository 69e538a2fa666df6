package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func field(name string, t flow.Type) *flow.Field { return &flow.Field{Name: name, Type: t} }

// reiterate is seed 003's ReiterateResult.
func reiterate() []*flow.Field {
	return []*flow.Field{
		field("main_goal", flow.TString),
		field("reasoning", flow.TString),
		field("user_query_text", flow.TAny),
		field("references_prior_results", flow.TBool),
		field("force_execute", flow.TBool),
	}
}

func everyType() []*flow.Field {
	return []*flow.Field{
		field("s", flow.TString),
		field("i", flow.TInt),
		field("f", flow.TFloat),
		field("b", flow.TBool),
		field("d", flow.TDuration),
		field("intent", flow.EnumOf("qa", "summarization", "not_clear")),
		field("tags", flow.ListOf(flow.TString)),
		field("matrix", flow.ListOf(flow.ListOf(flow.TInt))),
		field("o", flow.TObject),
		field("a", flow.TAny),
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatalf("schema is not JSON: %v\n%s", err, got)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
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
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatalf("the schema does not compile against the draft 2020-12 metaschema: %v", err)
	}
	return s
}

func TestFromFieldsGolden(t *testing.T) {
	for name, fields := range map[string][]*flow.Field{
		"reiterate.json":  reiterate(),
		"every_type.json": everyType(),
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := schema.FromFields(fields)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name, raw)
			compile(t, raw)
		})
	}
}

func TestFromFieldsDeterministic(t *testing.T) {
	first, err := schema.FromFields(everyType())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := schema.FromFields(everyType())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("output changed between calls:\n%s\n%s", first, again)
		}
	}
}

func TestFromType(t *testing.T) {
	for _, tc := range []struct {
		t    flow.Type
		want string
	}{
		{flow.TString, `{"type":"string"}`},
		{flow.TInt, `{"type":"integer"}`},
		{flow.TFloat, `{"type":"number"}`},
		{flow.TBool, `{"type":"boolean"}`},
		{flow.EnumOf("b", "a", "b"), `{"enum":["b","a"],"type":"string"}`},
		{flow.ListOf(flow.TBool), `{"items":{"type":"boolean"},"type":"array"}`},
		{flow.Type{Kind: flow.KindList}, `{"items":{},"type":"array"}`},
		{flow.TObject, `{"type":"object"}`},
		{flow.TAny, `{}`},
		{flow.Type{}, `{}`},
	} {
		got, err := schema.FromType(tc.t)
		if err != nil {
			t.Errorf("%s: %v", tc.t, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.t, got, tc.want)
		}
	}
}

func TestFromFieldsErrors(t *testing.T) {
	for _, tc := range []struct {
		fields []*flow.Field
		want   string
	}{
		{[]*flow.Field{nil}, "output 0 is nil"},
		{[]*flow.Field{field("", flow.TString)}, "output 0 has no name"},
		{[]*flow.Field{field("x", flow.TString), field("x", flow.TInt)}, "output x: declared twice"},
		{[]*flow.Field{field("e", flow.EnumOf())}, "output e: Enum has no values"},
		{[]*flow.Field{field("l", flow.ListOf(flow.EnumOf()))}, "output l: list element: Enum has no values"},
		{[]*flow.Field{field("k", flow.Type{Kind: 200})}, "has no JSON Schema"},
	} {
		_, err := schema.FromFields(tc.fields)
		var se *schema.Error
		if !errors.As(err, &se) {
			t.Errorf("want a *schema.Error containing %q, got %v", tc.want, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %q, want it to contain %q", err, tc.want)
		}
	}
}

func TestDurationPattern(t *testing.T) {
	re := regexp.MustCompile(schema.DurationPattern)
	for _, s := range []string{"0", "90s", "1h30m", "1.5h", "-2m", "+3ms", "250ms", "10us", "10µs", "10μs", ".5s", "1h2m3s4ms5us6ns"} {
		if !re.MatchString(s) {
			t.Errorf("pattern rejects %q", s)
		}
		if _, err := time.ParseDuration(s); err != nil {
			t.Errorf("test case %q is not a Go duration: %v", s, err)
		}
	}
	for _, s := range []string{"", "1", "1 h", "h", "1d", "PT1M", "1.5", "00"} {
		if re.MatchString(s) {
			t.Errorf("pattern accepts %q", s)
		}
	}
}

func TestDecode(t *testing.T) {
	raw := json.RawMessage(`{"s":"hi","i":3.0,"f":2,"b":true,"d":"1m30s","intent":"qa",
		"tags":["x","y"],"matrix":[[1,2],[3.0]],"o":{"k":1},"a":null,"extra":1}`)
	got, err := schema.Decode(raw, everyType())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]flow.Value{
		"s":      flow.StringValue("hi"),
		"i":      flow.IntValue(3),
		"f":      flow.FloatValue(2),
		"b":      flow.BoolValue(true),
		"d":      flow.DurationValue(90 * time.Second),
		"intent": flow.StringValue("qa"),
		"tags":   flow.StringList("x", "y"),
		"matrix": flow.ListValue(flow.ListValue(flow.IntValue(1), flow.IntValue(2)), flow.ListValue(flow.IntValue(3))),
		"o":      flow.ObjectValue(map[string]flow.Value{"k": flow.IntValue(1)}),
		"a":      flow.Null,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !g.Equal(w) || g.Kind() != w.Kind() {
			t.Errorf("%s: got %v (%s), want %v (%s)", k, g, g.Kind(), w, w.Kind())
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	fields := []*flow.Field{field("n", flow.TInt), field("intent", flow.EnumOf("qa", "other"))}
	for _, tc := range []struct {
		raw, want string
	}{
		{`{"n":1`, "reply is not JSON"},
		{`[1]`, "reply is a JSON array, not an object"},
		{`{"n":1}`, "output intent: missing from the reply"},
		{`{"n":1.5,"intent":"qa"}`, "output n: want Int, got Float 1.5"},
		{`{"n":1,"intent":"nope"}`, `output intent: value "nope" is not one of Enum["qa","other"]`},
	} {
		_, err := schema.Decode(json.RawMessage(tc.raw), fields)
		var se *schema.Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a *schema.Error containing %q", tc.raw, err, tc.want)
		}
	}
	_, err := schema.Decode(json.RawMessage(`{"n":1.5,"intent":"qa"}`), fields)
	var te *flow.TypeError
	if !errors.As(err, &te) {
		t.Errorf("a type mismatch should wrap *flow.TypeError, got %T", errors.Unwrap(err))
	}
}

func TestZero(t *testing.T) {
	for _, tc := range []struct {
		t    flow.Type
		want string
	}{
		{flow.TString, `""`},
		{flow.TInt, `0`},
		{flow.TFloat, `0.0`},
		{flow.TBool, `false`},
		{flow.TDuration, `0s`},
		{flow.EnumOf("qa", "x"), `"qa"`},
		{flow.ListOf(flow.TInt), `[]`},
		{flow.TObject, `{}`},
		{flow.TAny, `null`},
	} {
		if got := schema.Zero(tc.t).String(); got != tc.want {
			t.Errorf("Zero(%s) = %s, want %s", tc.t, got, tc.want)
		}
	}
}
