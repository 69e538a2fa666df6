package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file writes JSON as serde_json does without preserve_order:
// compact, object keys sorted, strings escaped minimally, integers as
// integers and floats in ryu's shortest form ("100.0", "1e21", "-0.0").

// canonical decodes one JSON document (trailing whitespace allowed) and
// re-encodes it canonically.
func canonical(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", errors.New("trailing data after the JSON value")
	}
	b, err := appendJSON(nil, v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// mustJSON encodes a value built by this package (strings, maps and slices
// of them); it cannot fail.
func mustJSON(v any) string {
	b, err := appendJSON(nil, v)
	if err != nil {
		panic("tools: " + err.Error()) // unreachable: only strings, maps and slices
	}
	return string(b)
}

// appendJSON appends v, a value of the shapes encoding/json decodes into
// with UseNumber, plus map[string]string and []map[string]string.
func appendJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		return appendString(dst, v), nil
	case json.Number:
		return appendNumber(dst, string(v))
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSON(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case []map[string]string:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, _ = appendJSON(dst, e)
		}
		return append(dst, ']'), nil
	case []string:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, e)
		}
		return append(dst, ']'), nil
	case map[string]string:
		dst = append(dst, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, v[k])
		}
		return append(dst, '}'), nil
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendJSON(dst, v[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("cannot encode %T as JSON", v)
}

const hexDigits = "0123456789abcdef"

// appendString escapes as serde_json does: '"', '\\' and control
// characters only; \b \f \n \r \t short, others \u00xx.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendNumber re-prints a JSON number literal as serde_json's Value
// does: an integer literal that fits u64 (or i64 when negative) stays an
// integer, "-0" and everything else become an f64.
func appendNumber(dst []byte, lit string) ([]byte, error) {
	if !strings.ContainsAny(lit, ".eE") {
		if strings.HasPrefix(lit, "-") {
			if i, err := strconv.ParseInt(lit, 10, 64); err == nil && i != 0 {
				return strconv.AppendInt(dst, i, 10), nil
			}
		} else if u, err := strconv.ParseUint(lit, 10, 64); err == nil {
			return strconv.AppendUint(dst, u, 10), nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number out of range: %s", lit)
	}
	return appendFloat(dst, f), nil
}

// appendFloat prints a finite f64 as ryu does for serde_json.
func appendFloat(dst []byte, f float64) []byte {
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d[.ddd]e±XX
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	length := len(digits)
	kk := x + 1 // 10^(kk-1) <= f < 10^kk
	k := kk - length
	switch {
	case 0 <= k && kk <= 16:
		dst = append(dst, digits...)
		for range k {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	case 0 < kk && kk <= 16:
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:]...)
	case -5 < kk && kk <= 0:
		dst = append(dst, '0', '.')
		for range -kk {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	case length == 1:
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0], '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(kk-1), 10)
}
