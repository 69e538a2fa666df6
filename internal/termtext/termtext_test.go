package termtext

import "testing"

func TestSafe(t *testing.T) {
	for _, tc := range []struct {
		in        string
		multiline bool
		want      string
	}{
		{"plain text, ünïcode", false, "plain text, ünïcode"},
		{"a\x1b[2Jb\x00c\r\a", false, `a\x1b[2Jb\x00c\r\a`},
		{"bad \xff\xfe utf8", true, `bad \xff\xfe utf8`},
		{"line1\n\tline2", true, "line1\n\tline2"},
		{"line1\n\tline2", false, `line1\n\tline2`},
		{"rtl \u202e override", false, `rtl \u202e override`},
	} {
		if got := Safe(tc.in, tc.multiline); got != tc.want {
			t.Errorf("Safe(%q, %v) = %q, want %q", tc.in, tc.multiline, got, tc.want)
		}
	}
}
