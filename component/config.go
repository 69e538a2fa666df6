package component

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkConfig walks raw against the type of x, before it is decoded, and
// returns the JSON path of the first member no field takes, or of the
// first value that decodes itself (a Secret given a literal value,
// a malformed Duration) and fails, with the problem. Other problems
// (wrong types) are left to the decoder.
func checkConfig(raw json.RawMessage, x any) (string, error) {
	return walk(raw, reflect.TypeOf(x), "")
}

func walk(raw json.RawMessage, t reflect.Type, path string) (string, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		// It decodes itself (a Secret, a Duration): decode into a fresh
		// value here, so that its error gets the path.
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			return path, err
		}
		return "", nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return "", nil
		}
		fields := jsonFields(t)
		for _, key := range sortedKeys(obj) {
			f, ok := fields[key]
			if !ok {
				for name, g := range fields {
					if strings.EqualFold(name, key) {
						f, ok = g, true
						break
					}
				}
			}
			if !ok {
				return path + "." + key, fmt.Errorf("unknown field %q", key)
			}
			if p, err := walk(obj[key], f, path+"."+key); err != nil {
				return p, err
			}
		}
	case reflect.Slice, reflect.Array:
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil {
			return "", nil
		}
		for i, el := range arr {
			if p, err := walk(el, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return p, err
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return "", nil
		}
		for _, key := range sortedKeys(obj) {
			if p, err := walk(obj[key], t.Elem(), path+"."+key); err != nil {
				return p, err
			}
		}
	}
	return "", nil
}

// jsonFields maps the JSON names of t's fields (embedded structs'
// included) to their types, as encoding/json names them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := fields[k]; !ok {
						fields[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
