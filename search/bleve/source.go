package blevesearch

import (
	"bytes"
	"encoding/json"
)

// sourceFilter is the _source option of a request.
type sourceFilter struct {
	disabled bool
	includes []string
	excludes []string
}

func (f sourceFilter) identity() bool {
	return !f.disabled && len(f.includes) == 0 && len(f.excludes) == 0
}

// apply filters a stored JSON source. Key order of filtered objects is
// sorted, as encoding/json writes maps.
func (f sourceFilter) apply(src []byte) json.RawMessage {
	if f.disabled {
		return nil
	}
	if f.identity() {
		return json.RawMessage(src)
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(src)
	}
	out := f.filterObject(v, "", len(f.includes) == 0)
	b, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage(src)
	}
	return b
}

// filterObject keeps the members of obj at prefix that are included (an
// include pattern matches them or an ancestor, or there are no includes) and
// not excluded (no exclude pattern matches them or an ancestor).
func (f sourceFilter) filterObject(obj map[string]any, prefix string, included bool) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		if matchAny(f.excludes, p) {
			continue
		}
		inc := included || matchAny(f.includes, p)
		if fv, keep := f.filterValue(v, p, inc); keep {
			out[k] = fv
		}
	}
	return out
}

func (f sourceFilter) filterValue(v any, p string, included bool) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		sub := f.filterObject(x, p, included)
		if len(sub) == 0 && !included {
			return nil, false
		}
		return sub, true
	case []any:
		var arr []any
		for _, e := range x {
			if fe, keep := f.filterValue(e, p, included); keep {
				arr = append(arr, fe)
			}
		}
		if len(arr) == 0 && !included {
			return nil, false
		}
		if arr == nil {
			arr = []any{}
		}
		return arr, true
	default:
		return v, included
	}
}

func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if glob(pat, p) {
			return true
		}
	}
	return false
}

// glob matches s against pattern, where '*' matches any run of characters
// (dots included) and every other character matches itself.
func glob(pattern, s string) bool {
	// Iterative matcher with backtracking to the last star.
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(pattern) && pattern[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(pattern) && pattern[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}
