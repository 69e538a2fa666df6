package flow_test

import (
	"testing"

	"github.com/weftlang/weft/flow"
)

var (
	enumAB  = flow.EnumOf("a", "b")
	enumBC  = flow.EnumOf("b", "c")
	enumA   = flow.EnumOf("a")
	listAB  = flow.ListOf(enumAB)
	listStr = flow.ListOf(flow.TString)
	listInt = flow.ListOf(flow.TInt)
	listFlt = flow.ListOf(flow.TFloat)
	listAny = flow.ListOf(flow.TAny)
)

func TestTypeString(t *testing.T) {
	for _, c := range []struct {
		t    flow.Type
		want string
	}{
		{flow.TBool, "Bool"}, {flow.TInt, "Int"}, {flow.TFloat, "Float"}, {flow.TString, "String"},
		{flow.TDuration, "Duration"}, {flow.TObject, "Object"}, {flow.TAny, "Any"},
		{enumAB, `Enum["a","b"]`},
		{flow.EnumOf(`say "hi"`), `Enum["say \"hi\""]`},
		{listAB, `List[Enum["a","b"]]`},
		{flow.ListOf(listStr), "List[List[String]]"},
		{flow.Type{Kind: flow.KindList}, "List[Any]"},
		{flow.Type{Kind: flow.Kind(99)}, "Kind(99)"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("String() = %s, want %s", got, c.want)
		}
	}
}

func TestTypeByName(t *testing.T) {
	for name, want := range map[string]flow.Type{
		"String": flow.TString, "Int": flow.TInt, "Float": flow.TFloat, "Bool": flow.TBool,
		"Duration": flow.TDuration, "Object": flow.TObject, "JSON": flow.TAny, "Any": flow.TAny,
	} {
		got, ok := flow.TypeByName(name)
		if !ok || !got.Equal(want) {
			t.Errorf("TypeByName(%s) = %v, %v", name, got, ok)
		}
	}
	for _, name := range []string{"string", "List", "Enum", "Null", ""} {
		if _, ok := flow.TypeByName(name); ok {
			t.Errorf("TypeByName(%q) ok", name)
		}
	}
}

func TestTypeEqualAndHelpers(t *testing.T) {
	if !enumAB.Equal(flow.EnumOf("a", "b")) || enumAB.Equal(flow.EnumOf("b", "a")) || enumAB.Equal(flow.TString) {
		t.Error("Enum Equal")
	}
	if !listAB.Equal(flow.ListOf(flow.EnumOf("a", "b"))) || listStr.Equal(listInt) {
		t.Error("List Equal")
	}
	if !(flow.Type{Kind: flow.KindList}).Equal(listAny) {
		t.Error("List without Elem is List[Any]")
	}
	if !listStr.ElemType().Equal(flow.TString) || !flow.TString.ElemType().Equal(flow.TAny) {
		t.Error("ElemType")
	}
	if !enumAB.HasValue("a") || enumAB.HasValue("c") || flow.TString.HasValue("a") {
		t.Error("HasValue")
	}
	if !(flow.Type{}).IsZero() || flow.TAny.IsZero() || flow.TBool.IsZero() {
		t.Error("IsZero")
	}
}

func TestAssignableTo(t *testing.T) {
	zero := flow.Type{}
	for _, c := range []struct {
		from, to flow.Type
		want     bool
	}{
		{flow.TInt, flow.TInt, true},
		{flow.TInt, flow.TFloat, true},
		{flow.TFloat, flow.TInt, false},
		{flow.TString, flow.TInt, false},
		{flow.TBool, flow.TString, false},
		{flow.TAny, flow.TInt, true},
		{flow.TInt, flow.TAny, true},
		{listStr, flow.TAny, true},
		{zero, flow.TBool, true},
		{flow.TBool, zero, true},
		{enumAB, flow.TString, true},
		{flow.TString, enumAB, true},
		{enumA, enumAB, true},
		{enumAB, enumA, false},
		{enumAB, enumBC, false},
		{enumAB, flow.TInt, false},
		{listInt, listFlt, true},
		{listFlt, listInt, false},
		{listAB, listStr, true},
		{listStr, listAB, true},
		{listStr, flow.TString, false},
		{flow.TString, listStr, false},
		{listAny, listInt, true},
		{flow.ListOf(listInt), flow.ListOf(listFlt), true},
		{flow.TDuration, flow.TDuration, true},
		{flow.TDuration, flow.TInt, false},
		{flow.TInt, flow.TDuration, false},
		{flow.TObject, flow.TObject, true},
		{flow.TObject, listAny, false},
	} {
		if got := c.from.AssignableTo(c.to); got != c.want {
			t.Errorf("%v.AssignableTo(%v) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestJoin(t *testing.T) {
	zero := flow.Type{}
	for _, c := range []struct {
		a, b, want flow.Type
	}{
		{zero, flow.TInt, flow.TInt},
		{flow.TInt, zero, flow.TInt},
		{zero, zero, zero},
		{flow.TInt, flow.TInt, flow.TInt},
		{flow.TInt, flow.TFloat, flow.TFloat},
		{flow.TFloat, flow.TInt, flow.TFloat},
		{flow.TString, flow.TString, flow.TString},
		{enumAB, enumAB, enumAB},
		{enumAB, enumBC, flow.EnumOf("a", "b", "c")},
		{enumAB, flow.TString, flow.TString},
		{flow.TString, enumAB, flow.TString},
		{flow.TString, listStr, flow.TAny}, // seed 000: result_source
		{flow.TString, flow.TInt, flow.TAny},
		{flow.TBool, flow.TInt, flow.TAny},
		{flow.TAny, flow.TInt, flow.TAny},
		{flow.TInt, flow.TAny, flow.TAny},
		{listInt, listFlt, listFlt},
		{listAB, listStr, listStr},
		{listStr, listInt, listAny},
		{flow.TObject, flow.TObject, flow.TObject},
		{flow.TObject, listAny, flow.TAny},
		{flow.TDuration, flow.TInt, flow.TAny},
	} {
		got := flow.Join(c.a, c.b)
		if !got.Equal(c.want) {
			t.Errorf("Join(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		// Both sides are assignable to the join.
		if !c.want.IsZero() && (!c.a.AssignableTo(got) || !c.b.AssignableTo(got)) {
			t.Errorf("Join(%v, %v) = %v does not accept both", c.a, c.b, got)
		}
	}
}

func TestKindString(t *testing.T) {
	if flow.KindNull.String() != "Null" || flow.KindEnum.String() != "Enum" || flow.KindAny.String() != "Any" {
		t.Error("Kind.String")
	}
}
