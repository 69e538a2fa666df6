package tools

import (
	"encoding/json"
	"errors"

	"github.com/weftlang/weft/owf/internal/canon"
)

// JSON is written as serde_json writes it without preserve_order (compact,
// object keys sorted, strings escaped minimally, floats in ryu's form), by
// owf/internal/canon.

// canonical re-encodes one JSON document canonically.
func canonical(data []byte) (string, error) {
	out, ok := canon.Canonical(string(data))
	if !ok {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return "", err
		}
		return "", errors.New("a number out of range or nesting too deep")
	}
	return out, nil
}

// mustJSON encodes a value built by this package (strings, maps and slices
// of them) canonically; it cannot fail.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("tools: " + err.Error()) // unreachable: only strings, maps and slices
	}
	out, ok := canon.Canonical(string(b))
	if !ok {
		panic("tools: encoding/json wrote JSON canon rejects: " + string(b)) // unreachable
	}
	return out
}
