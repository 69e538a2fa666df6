package tools

import (
	"math"
	"testing"
)

func TestAppendFloat(t *testing.T) {
	// ryu's output, as serde_json prints an f64.
	cases := []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{100, "100.0"},
		{123.456, "123.456"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e16"},
		{1.5e16, "1.5e16"},
		{1234567890123456.7, "1234567890123456.8"},
		{123456789012345680000, "1.2345678901234568e20"},
		{0.001234, "0.001234"},
		{0.00001, "0.00001"},
		{0.000001, "1e-6"},
		{1.5e-7, "1.5e-7"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e308"},
	}
	for _, c := range cases {
		eq(t, "float", string(appendFloat(nil, c.f)), c.want)
	}
}

func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{` { "b" : 1 , "a" : [ true , false , null ] } `, `{"a":[true,false,null],"b":1}`},
		{`{"z":{"y":1,"x":2},"a":"A"}`, `{"a":"A","z":{"x":2,"y":1}}`},
		{`{"k":1,"k":2}`, `{"k":2}`},
		{`[18446744073709551615, 18446744073709551616, -9223372036854775808, -9223372036854775809, -0, 0, 1E2, 1.0, 2.50]`,
			`[18446744073709551615,1.8446744073709552e19,-9223372036854775808,-9.223372036854776e18,-0.0,0,100.0,1.0,2.5]`},
		{`"\u0001\b\f\n\r\t\"\\\/\u007f<>&\u2028é\ud83d\ude00"`, `"\u0001\b\f\n\r\t\"\\/` + "\x7f<>&\u2028é😀" + `"`},
	}
	for _, c := range cases {
		got, err := canonical([]byte(c.in))
		if err != nil {
			t.Errorf("canonical(%s): %v", c.in, err)
			continue
		}
		eq(t, c.in, got, c.want)
	}
	for _, bad := range []string{``, `{`, `{"a":1} x`, `1e400`, `[1,]`} {
		if got, err := canonical([]byte(bad)); err == nil {
			t.Errorf("canonical(%q) = %q, want an error", bad, got)
		}
	}
}
