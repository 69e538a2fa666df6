package search_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/search"
)

func testSchema() search.Schema {
	return search.Schema{Fields: map[string]search.Field{
		"name":        {Type: search.Text, Fields: map[string]search.Field{"keyword": {Type: search.Keyword}}},
		"origin.port": {Type: search.Keyword},
		"origin.geo":  {Type: search.Keyword},
		"weight_kg":   {Type: search.Long},
	}}
}

func TestSchemaLookup(t *testing.T) {
	s := testSchema()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]search.FieldType{
		"name": search.Text, "name.keyword": search.Keyword, "origin.port": search.Keyword, "weight_kg": search.Long,
	} {
		if got, ok := s.Lookup(path); !ok || got != want {
			t.Errorf("Lookup(%s) = %s, %v", path, got, ok)
		}
	}
	for _, path := range []string{"origin", "name.raw", "missing", ""} {
		if _, ok := s.Lookup(path); ok {
			t.Errorf("Lookup(%s) found", path)
		}
	}
	if got := s.Under("origin"); !slices.Equal(got, []string{"origin.geo", "origin.port"}) {
		t.Errorf("Under(origin) = %v", got)
	}
	if got := s.Under("name"); len(got) != 0 {
		t.Errorf("Under(name) = %v", got)
	}
	if got := s.Paths(); len(got) != 5 {
		t.Errorf("Paths = %v", got)
	}
}

func TestSchemaValidate(t *testing.T) {
	bad := []search.Schema{
		{},
		{Fields: map[string]search.Field{"a": {Type: "string"}}},
		{Fields: map[string]search.Field{"_id": {Type: search.Keyword}}},
		{Fields: map[string]search.Field{"a..b": {Type: search.Keyword}}},
		{Fields: map[string]search.Field{"a*": {Type: search.Keyword}}},
		{Fields: map[string]search.Field{"a": {Type: search.Keyword}, "a.b": {Type: search.Keyword}}},
		{Fields: map[string]search.Field{"a": {Type: search.Text, Fields: map[string]search.Field{"k": {Type: "nope"}}}}},
		{Fields: map[string]search.Field{"a": {Type: search.Text, Fields: map[string]search.Field{"k.x": {Type: search.Keyword}}}}},
		{Fields: map[string]search.Field{
			"a":   {Type: search.Text, Fields: map[string]search.Field{"k": {Type: search.Keyword}}},
			"a.k": {Type: search.Keyword}}},
		{Fields: map[string]search.Field{"a": {Type: search.Text, Fields: map[string]search.Field{
			"k": {Type: search.Keyword, Fields: map[string]search.Field{"x": {Type: search.Keyword}}}}}}},
	}
	for i, s := range bad {
		var se *search.SchemaError
		if err := s.Validate(); !errors.As(err, &se) {
			t.Errorf("schema %d: %v, want a *SchemaError", i, err)
		}
	}
}

func TestSchemaMappingAndEqual(t *testing.T) {
	s := testSchema()
	raw, err := s.Mapping()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mappings":{"dynamic":false,"properties":{"name":{"fields":{"keyword":{"type":"keyword"}},"type":"text"},` +
		`"origin":{"properties":{"geo":{"type":"keyword"},"port":{"type":"keyword"}}},"weight_kg":{"type":"long"}}}}`
	if string(raw) != want {
		t.Errorf("Mapping =\n%s\nwant\n%s", raw, want)
	}
	var back search.Schema
	b, _ := json.Marshal(s)
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(s) || !s.Equal(back) {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
	other := testSchema()
	other.Fields["weight_kg"] = search.Field{Type: search.Double}
	if s.Equal(other) {
		t.Error("schemas with another type are equal")
	}
}

func TestSyntaxError(t *testing.T) {
	body := []byte("{\n  \"a\": tru\n}")
	var v any
	err := json.Unmarshal(body, &v)
	se := search.NewSyntaxError(body, err)
	if se.Offset != 12 || se.Line != 2 || se.Column != 11 || !errors.Is(se, err) {
		t.Errorf("%+v", se)
	}
	if !strings.Contains(se.Error(), "byte offset 12 (line 2, column 11)") {
		t.Errorf("message %q", se)
	}
}

func TestErrorMessages(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&search.QueryError{Path: "query.term.x", Msg: "bad"}, "search: invalid request at query.term.x: bad"},
		{&search.QueryError{Msg: "bad"}, "search: invalid request: bad"},
		{&search.UnsupportedError{Path: "aggs"}, "search: aggs is not supported by this backend (see search/DSL.md)"},
		{&search.IndexNotFoundError{Index: "x"}, "search: no such index [x]"},
		{&search.BulkError{Index: "x", Total: 3, Failed: []search.DocError{{ID: "a", Position: 1, Type: "t", Reason: "r"}}},
			`search: 1 of 3 documents rejected by index [x]; first: document 1 (id "a"): t: r`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
