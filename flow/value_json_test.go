package flow

import (
	"testing"
)

// FuzzValueUnmarshalScalar checks UnmarshalJSON's scalar fast path against
// the general decoder: for any input, the same value of the same kind, or
// an error from both.
func FuzzValueUnmarshalScalar(f *testing.F) {
	for _, s := range []string{`null`, `true`, `false`, `"x"`, `""`, `"a\"b"`, `"x\u00e9\n"`, `"\ud800"`, "\"bad\xff\"", `"a" `, ` "a"`, `"a""b"`, `"a`, `"`, `nul`, `truex`, `1`, `-0.5`, `[]`, `{"a":1}`, `"\u0000"`, `"tab	in"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, slow Value
		ferr := fast.UnmarshalJSON(data)
		serr := slow.unmarshalJSON(data)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("%q: fast path error %v, decoder error %v", data, ferr, serr)
		}
		if ferr == nil && (!fast.Equal(slow) || fast.Kind() != slow.Kind()) {
			t.Fatalf("%q: fast path %v (%v), decoder %v (%v)", data, fast, fast.Kind(), slow, slow.Kind())
		}
	})
}

// BenchmarkValueUnmarshalString decodes a string value, as a thread's
// records hold them, by UnmarshalJSON and by the general decoder.
func BenchmarkValueUnmarshalString(b *testing.B) {
	data := []byte(`"a document of some sixty characters, with \"quotes\" and é"`)
	for _, c := range []struct {
		name string
		fn   func(*Value, []byte) error
	}{{"UnmarshalJSON", (*Value).UnmarshalJSON}, {"decoder", (*Value).unmarshalJSON}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var v Value
			for b.Loop() {
				if err := c.fn(&v, data); err != nil || v.Kind() != KindString {
					b.Fatal(v, err)
				}
			}
		})
	}
}
