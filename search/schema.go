package search

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FieldType is the type of an indexed field, named as in Elasticsearch
// mappings.
type FieldType string

// The field types a Schema may use.
const (
	// Keyword is an exact string: not analyzed, matched by term, terms,
	// prefix and wildcard queries as a whole, sortable.
	Keyword FieldType = "keyword"
	// Text is full text, analyzed like Elasticsearch's standard analyzer
	// (Unicode word segmentation, lower-cased, no stop words); matched by
	// match and match_phrase queries, not sortable.
	Text FieldType = "text"
	// Date is an instant with millisecond precision, given in documents as
	// strict_date_optional_time strings ("2025-03-15",
	// "2025-03-15T10:30:00Z") or epoch milliseconds.
	Date FieldType = "date"
	// Long is a 64-bit integer (held as a float64 by the embedded backend,
	// so exact up to 2^53).
	Long FieldType = "long"
	// Integer is a 32-bit integer.
	Integer FieldType = "integer"
	// Double is a 64-bit floating-point number.
	Double FieldType = "double"
	// Float is a 32-bit floating-point number (held as a float64 by the
	// embedded backend).
	Float FieldType = "float"
	// Boolean is true or false.
	Boolean FieldType = "boolean"
)

// Numeric reports whether t is one of the numeric types.
func (t FieldType) Numeric() bool {
	switch t {
	case Long, Integer, Double, Float:
		return true
	}
	return false
}

// Integral reports whether t is an integer type.
func (t FieldType) Integral() bool { return t == Long || t == Integer }

func (t FieldType) valid() bool {
	switch t {
	case Keyword, Text, Date, Long, Integer, Double, Float, Boolean:
		return true
	}
	return false
}

// Field is the mapping of one field.
type Field struct {
	// Type is the field's type.
	Type FieldType `json:"type"`
	// Fields are multi-fields: the same value indexed again, with another
	// type, under the path "<field>.<name>". The usual one is a keyword
	// multi-field named "keyword" on a text field, so that
	// {"term": {"shipper_name.keyword": "..."}} is an exact match while
	// {"match": {"shipper_name": "..."}} is a full-text one. Multi-fields
	// cannot have multi-fields of their own.
	Fields map[string]Field `json:"fields,omitempty"`
}

// Schema is the explicit mapping of an index: the type of every searchable
// field. Fields are named by their dotted path in the document, so the
// path "origin.port" is the "port" member of a JSON object "origin". Members
// of a document absent from the schema are kept in its _source but are not
// searchable (Elasticsearch's "dynamic": false).
type Schema struct {
	Fields map[string]Field `json:"fields"`
}

// Validate reports the first problem of s as a *SchemaError: an empty or
// malformed path, an unknown type, a path that is both a field and an object
// holding other fields, or a multi-field that clashes with another field.
func (s Schema) Validate() error {
	if len(s.Fields) == 0 {
		return &SchemaError{Msg: "no fields"}
	}
	all := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(s.Fields)) {
		f := s.Fields[p]
		if err := validPath(p); err != nil {
			return &SchemaError{Field: p, Msg: err.Error()}
		}
		if !f.Type.valid() {
			return &SchemaError{Field: p, Msg: fmt.Sprintf("unknown type %q", f.Type)}
		}
		all[p] = true
		for _, name := range slices.Sorted(maps.Keys(f.Fields)) {
			sub := f.Fields[name]
			sp := p + "." + name
			if name == "" || strings.Contains(name, ".") {
				return &SchemaError{Field: sp, Msg: "a multi-field name must be non-empty and have no dot"}
			}
			if !sub.Type.valid() {
				return &SchemaError{Field: sp, Msg: fmt.Sprintf("unknown type %q", sub.Type)}
			}
			if len(sub.Fields) > 0 {
				return &SchemaError{Field: sp, Msg: "multi-fields cannot have multi-fields"}
			}
			if _, dup := s.Fields[sp]; dup {
				return &SchemaError{Field: sp, Msg: "multi-field clashes with a field of the same path"}
			}
			all[sp] = true
		}
	}
	// A leaf field cannot also be an object that holds other fields.
	for p := range s.Fields {
		for i := strings.IndexByte(p, '.'); i >= 0; i = nextDot(p, i) {
			parent := p[:i]
			if _, ok := s.Fields[parent]; ok {
				return &SchemaError{Field: p, Msg: fmt.Sprintf("%q is a field, so it cannot hold sub-fields", parent)}
			}
		}
	}
	return nil
}

func nextDot(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '.')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func validPath(p string) error {
	if p == "" {
		return fmt.Errorf("empty path")
	}
	if strings.HasPrefix(p, "_") {
		return fmt.Errorf("paths starting with an underscore are reserved")
	}
	for seg := range strings.SplitSeq(p, ".") {
		if seg == "" {
			return fmt.Errorf("empty path segment")
		}
		if strings.ContainsAny(seg, "*?\"\\") || strings.TrimSpace(seg) != seg {
			return fmt.Errorf("path segment %q has a reserved character or surrounding spaces", seg)
		}
	}
	return nil
}

// Lookup returns the type of the searchable field at path, resolving
// multi-fields ("shipper_name.keyword"). ok is false for unmapped paths and
// for object paths such as "origin" that only hold other fields.
func (s Schema) Lookup(path string) (t FieldType, ok bool) {
	if f, ok := s.Fields[path]; ok {
		return f.Type, true
	}
	if i := strings.LastIndexByte(path, '.'); i > 0 {
		if f, ok := s.Fields[path[:i]]; ok {
			if sub, ok := f.Fields[path[i+1:]]; ok {
				return sub.Type, true
			}
		}
	}
	return "", false
}

// Paths returns every searchable path of s, multi-fields included, sorted.
func (s Schema) Paths() []string {
	var out []string
	for p, f := range s.Fields {
		out = append(out, p)
		for name := range f.Fields {
			out = append(out, p+"."+name)
		}
	}
	slices.Sort(out)
	return out
}

// Under returns the searchable paths strictly inside the object path
// prefix ("origin" gives "origin.port", "origin.port_code", ...), sorted.
func (s Schema) Under(prefix string) []string {
	var out []string
	for _, p := range s.Paths() {
		if strings.HasPrefix(p, prefix+".") {
			if _, isField := s.Fields[prefix]; !isField {
				out = append(out, p)
			}
		}
	}
	return out
}

// Equal reports whether s and o map the same paths to the same types.
func (s Schema) Equal(o Schema) bool {
	if len(s.Fields) != len(o.Fields) {
		return false
	}
	for p, f := range s.Fields {
		g, ok := o.Fields[p]
		if !ok || f.Type != g.Type || len(f.Fields) != len(g.Fields) {
			return false
		}
		for n, sf := range f.Fields {
			if gf, ok := g.Fields[n]; !ok || gf.Type != sf.Type {
				return false
			}
		}
	}
	return true
}

// Mapping returns the body of an Elasticsearch create-index request that
// maps the fields of s the same way, with "dynamic": false so that
// unmapped members stay in _source only. Dotted paths become nested object
// properties.
func (s Schema) Mapping() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	props := map[string]any{}
	for _, p := range slices.Sorted(maps.Keys(s.Fields)) {
		f := s.Fields[p]
		segs := strings.Split(p, ".")
		cur := props
		for _, seg := range segs[:len(segs)-1] {
			obj, ok := cur[seg].(map[string]any)
			if !ok {
				obj = map[string]any{"properties": map[string]any{}}
				cur[seg] = obj
			}
			cur = obj["properties"].(map[string]any)
		}
		m := map[string]any{"type": string(f.Type)}
		if len(f.Fields) > 0 {
			subs := map[string]any{}
			for n, sf := range f.Fields {
				subs[n] = map[string]any{"type": string(sf.Type)}
			}
			m["fields"] = subs
		}
		cur[segs[len(segs)-1]] = m
	}
	return json.Marshal(map[string]any{
		"mappings": map[string]any{"dynamic": false, "properties": props},
	})
}
