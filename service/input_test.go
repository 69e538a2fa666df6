package service

import (
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/flow"
)

func TestParseValue(t *testing.T) {
	for _, tc := range []struct {
		text string
		typ  flow.Type
		want flow.Value
		err  bool
	}{
		{"5", flow.TInt, flow.IntValue(5), false},
		{"5", flow.TFloat, flow.FloatValue(5), false},
		{"5", flow.TString, flow.StringValue("5"), false},
		{"5", flow.TAny, flow.IntValue(5), false},
		{"hello", flow.TAny, flow.StringValue("hello"), false},
		{`"hi"`, flow.TString, flow.StringValue("hi"), false},
		{"true", flow.TBool, flow.BoolValue(true), false},
		{"yes", flow.TBool, flow.Null, true},
		{"qa", flow.EnumOf("qa", "other"), flow.StringValue("qa"), false},
		{"nope", flow.EnumOf("qa", "other"), flow.Null, true},
		{`["a"]`, flow.ListOf(flow.TString), flow.StringList("a"), false},
		{"1m30s", flow.TDuration, flow.DurationValue(90e9), false},
		{"{}", flow.TObject, flow.ObjectValue(map[string]flow.Value{}), false},
	} {
		got, err := ParseValue(tc.text, tc.typ)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("ParseValue(%q, %s) = %v, %v; want %v (error %v)", tc.text, tc.typ, got, err, tc.want, tc.err)
		}
	}
}

func TestParseAnswer(t *testing.T) {
	one := &flow.PlanNode{Name: "ask", Outputs: []flow.PlanOutput{{Name: "year", Type: flow.TInt}}}
	got, err := ParseAnswer(one, "2023")
	if err != nil || !got["year"].Equal(flow.IntValue(2023)) {
		t.Errorf("single Int output: %v, %v", got, err)
	}
	if _, err := ParseAnswer(one, "last year"); err == nil {
		t.Error("a non-number answer for an Int output was accepted")
	}
	str := &flow.PlanNode{Name: "ask", Outputs: []flow.PlanOutput{{Name: "query", Type: flow.TString}}}
	got, err = ParseAnswer(str, `"quoted" as typed`)
	if err != nil || got["query"].Str() != `"quoted" as typed` {
		t.Errorf("single String output: %v, %v", got, err)
	}
	two := &flow.PlanNode{Name: "ask", Outputs: []flow.PlanOutput{{Name: "ok", Type: flow.TBool}, {Name: "note", Type: flow.TString}}}
	got, err = ParseAnswer(two, `{"ok": true, "note": "fine"}`)
	if err != nil || !got["ok"].Bool() || got["note"].Str() != "fine" {
		t.Errorf("two outputs: %v, %v", got, err)
	}
	for _, bad := range []string{"yes", `{"ok": true}`, `{"ok": true, "note": "x", "extra": 1}`, `{"ok": "yes", "note": "x"}`} {
		if _, err := ParseAnswer(two, bad); err == nil {
			t.Errorf("answer %s was accepted", bad)
		}
	}
}

func TestAnswerErrorsNameTheOutput(t *testing.T) {
	two := &flow.PlanNode{Name: "ask", Outputs: []flow.PlanOutput{{Name: "ok", Type: flow.TBool}, {Name: "note", Type: flow.TString}}}
	for _, tc := range []struct{ text, output, want string }{
		{`{"ok": true}`, "note", "the answer has no note (want ok: Bool, note: String)"},
		{`{"ok": true, "note": "x", "extra": 1}`, "extra", "node ask has no output extra"},
		{`{"ok": "yes", "note": "x"}`, "ok", "output ok:"},
		{`yes`, "", "answer with a JSON object"},
	} {
		_, err := ParseAnswer(two, tc.text)
		var ae *AnswerError
		if !errors.As(err, &ae) || ae.Node != "ask" || ae.Output != tc.output || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an *AnswerError on %q saying %q", tc.text, err, tc.output, tc.want)
		}
	}
}

func TestSplitInput(t *testing.T) {
	w := mustOpen(t, Bytes("v.wf", []byte(`workflow V {
  parameters { limit: Int = 3 }
  variables { seen: List[String] = [] }
  nodes {
    node n {
      type: FUNCTION
      action: "pass"
      inputs { x: limit }
      outputs { y: Int }
    }
  }
  edges { }
  initial: n
  finals: [ n ]
}
`)), nil)
	params, init := SplitInput(w.Plan, map[string]flow.Value{"limit": flow.IntValue(5), "seen": flow.StringList("a"), "nope": flow.Null, flow.InputText: flow.StringValue("hi")})
	if len(params) != 3 || !params["limit"].Equal(flow.IntValue(5)) || !params[flow.InputText].Equal(flow.StringValue("hi")) || params["nope"].Kind() != flow.KindNull {
		t.Errorf("params = %v", params)
	}
	if len(init) != 1 || !init["seen"].Equal(flow.StringList("a")) {
		t.Errorf("init = %v", init)
	}
}
