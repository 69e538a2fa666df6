package flow

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzJSONString checks the string encoder against encoding/json (without
// HTML escaping): the same bytes.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"uote\\", "ctl\x00\x01\b\f\n\r\t\x1f", "<a&b>", "ünï©ødé", "\u2028\u2029", "bad\xff\xfeutf8", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

// FuzzJSONFloat checks the float encoder against encoding/json, and that
// the result decodes as a Float.
func FuzzJSONFloat(f *testing.F) {
	for _, x := range []float64{0, 1, -2, 0.5, 1e-7, 1.5e21, 123456789.125, 1e20, math.SmallestNonzeroFloat64, math.MaxFloat64, -1e-6} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		want, _ := json.Marshal(x)
		if !bytes.ContainsAny(want, ".eE") {
			want = append(want, ".0"...)
		}
		got := appendJSONFloat(nil, x)
		if !bytes.Equal(got, want) {
			t.Errorf("%v: got %s, want %s", x, got, want)
		}
		var v Value
		if err := json.Unmarshal(got, &v); err != nil || v.Kind() != KindFloat || v.Float() != x {
			t.Errorf("%s decodes to %v (%v)", got, v, err)
		}
	})
}
