package studio

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// formInput maps a form's values to a run's input, typed by fields: a
// Bool is a checkbox, numbers parse, an Enum must be one of its values,
// other types are JSON. An empty optional field is left out; a value that
// does not fit is an error naming its field.
func formInput(fields []field, form url.Values) (map[string]any, error) {
	in := map[string]any{}
	for _, f := range fields {
		raw := strings.TrimSpace(form.Get(f.Name))
		if f.Kind == "Bool" {
			in[f.Name] = raw == "true" || raw == "on"
			continue
		}
		if raw == "" {
			if f.Required {
				return nil, fmt.Errorf("%s: a value is required", f.Name)
			}
			continue
		}
		v, err := parseValue(f, raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		in[f.Name] = v
	}
	return in, nil
}

// parseValue parses one form value as f's type.
func parseValue(f field, raw string) (any, error) {
	switch f.Kind {
	case "String":
		return raw, nil
	case "Int":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", raw)
		}
		return n, nil
	case "Float":
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", raw)
		}
		return x, nil
	case "Enum":
		for _, c := range f.Choices {
			if c == raw {
				return raw, nil
			}
		}
		return nil, fmt.Errorf("%q is not one of %s", raw, strings.Join(f.Choices, ", "))
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("not JSON (%s): %v", f.Type, err)
	}
	return v, nil
}
