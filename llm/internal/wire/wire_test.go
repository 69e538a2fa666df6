package wire

import (
	"strings"
	"testing"
)

func TestScanner(t *testing.T) {
	s := NewScanner([]byte(` {"a": "x\u00e9\n", "n": 12, "list": [1, true, null, {"k": []}], "i": 42} `))
	var got []string
	ok := s.Object(func(key []byte) bool {
		got = append(got, string(key))
		switch string(key) {
		case "a":
			v, ok := s.Str()
			return ok && v == "xé\n"
		case "i":
			n, ok := s.SmallInt()
			return ok && n == 42
		}
		return s.Skip()
	}) && s.End()
	if !ok || strings.Join(got, ",") != "a,n,list,i" {
		t.Fatalf("ok=%v keys=%v", ok, got)
	}
	for _, bad := range []string{`{"a": }`, `{"a": "x}`, `{"a": 1,}`, `[1 2]`, `{"a": tru}`} {
		if NewScanner([]byte(bad)).Skip() && NewScanner([]byte(bad)).End() {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, ok := NewScanner([]byte("012")).SmallInt(); ok {
		t.Error("a leading zero was accepted")
	}
}

func TestSSEReader(t *testing.T) {
	r := NewSSEReader(strings.NewReader("event: a\ndata: 1\ndata: 2\n\n: comment\ndata: 3\n\n"))
	name, data, err := r.Next()
	if err != nil || string(name) != "a" || string(data) != "1\n2" {
		t.Fatalf("first event = %q %q %v", name, data, err)
	}
	name, data, err = r.Next()
	if err != nil || string(name) != "" || string(data) != "3" || r.First != 6 {
		t.Fatalf("second event = %q %q %v (first line %d)", name, data, err, r.First)
	}
}

func TestLineReader(t *testing.T) {
	r := NewLineReader(strings.NewReader("{\"a\":1}\n\n{\"b\":2}\n"))
	var lines []string
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		lines = append(lines, string(l))
	}
	// Blank lines come back as empty lines; the caller skips them.
	if strings.Join(lines, "|") != `{"a":1}||{"b":2}` || r.Line != 3 {
		t.Errorf("lines = %q, line count %d", lines, r.Line)
	}
}
