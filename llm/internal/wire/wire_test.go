package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/weftlang/weft/llm"
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

// FuzzAppendString checks that AppendString writes what encoding/json
// writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t\b\f\x00\x1f\x7f", "<a href='x'>&amp;</a>",
		"héllo wörld \U0001F600", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x82", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got[1:], want)
		}
	})
}

// FuzzAppendFloat checks that AppendFloat writes what encoding/json
// writes, and refuses what it refuses.
func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1, 0.7, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		want, err := json.Marshal(x)
		got, ok := AppendFloat(nil, x)
		if ok != (err == nil) || string(got) != string(want) {
			t.Fatalf("AppendFloat(%v) = %s, %v; encoding/json %s, %v", x, got, ok, want, err)
		}
	})
}

// TestText checks that the pieces a Text hands back stay unchanged as it
// grows, and that it decodes escapes.
func TestText(t *testing.T) {
	var tx Text
	var pieces []string
	want := ""
	for i := range 200 {
		raw := []byte(strings.Repeat(string(rune('a'+i%26)), i%7+1) + `\n\u00e9`)
		pieces = append(pieces, tx.AppendQuoted(raw, true))
		want += strings.Repeat(string(rune('a'+i%26)), i%7+1) + "\né"
		if i%50 == 0 {
			tx.AppendString("<s>")
			want += "<s>"
		}
	}
	if tx.String() != want || tx.Len() != len(want) {
		t.Fatalf("text = %q, want %q", tx.String(), want)
	}
	for i, p := range pieces {
		if w := strings.Repeat(string(rune('a'+i%26)), i%7+1) + "\né"; p != w {
			t.Fatalf("piece %d = %q, want %q", i, p, w)
		}
	}
	if s := tx.AppendQuoted(nil, false); s != "" {
		t.Errorf("empty piece %q", s)
	}
}

// FuzzRawString checks the scanner's strings against encoding/json: a
// string it reads is one encoding/json reads, to the same value.
func FuzzRawString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\\c\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00\ud800"`, `"tab	in"`,
		`"\x"`, `"unterminated`, `"\u12"`, `"x\"`, `"é" tail`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := NewScanner(b)
		got, ok := s.Str()
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(b[:s.i], &want); err != nil {
			t.Fatalf("scanner read %q from %q, which encoding/json refuses: %v", got, b[:s.i], err)
		}
		if got != want {
			t.Fatalf("scanner read %q from %q, encoding/json %q", got, b[:s.i], want)
		}
	})
}

// TestReaderReuse checks that a released reader, taken again from the
// pool, starts afresh: no bytes, lines or counts of its last body.
func TestReaderReuse(t *testing.T) {
	for range 3 {
		r := NewLineReader(strings.NewReader(strings.Repeat("x", 5000) + "\nshort\n"))
		for _, want := range []string{strings.Repeat("x", 5000), "short"} {
			l, err := r.Next()
			if err != nil || string(l) != want {
				t.Fatalf("line %.20q, %v; want %.20q", l, err, want)
			}
		}
		if r.Line != 2 || r.Off != 5007 {
			t.Fatalf("line %d, offset %d", r.Line, r.Off)
		}
		r.Release()
		s := NewSSEReader(strings.NewReader("event: e\ndata: " + strings.Repeat("y", 5000) + "\n\n"))
		name, data, err := s.Next()
		if err != nil || string(name) != "e" || len(data) != 5000 || s.First != 2 {
			t.Fatalf("event %q of %d bytes, %v, first line %d", name, len(data), err, s.First)
		}
		s.Release()
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"answer":                "answer",
		"my schema/v2":          "my_schema_v2",
		"":                      "fallback",
		strings.Repeat("a", 70): strings.Repeat("a", 64),
	} {
		if got := SafeName(in, "fallback"); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadBodyCut(t *testing.T) {
	_, err := ReadBody("p", context.Background(), io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(io.ErrUnexpectedEOF)))
	var le *llm.Error
	if !errors.As(err, &le) || !le.Retryable || !strings.Contains(le.Message, "after 3 bytes") {
		t.Errorf("cut body: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadBody("p", ctx, iotest.ErrReader(io.ErrUnexpectedEOF)); !errors.As(err, &le) || le.Retryable {
		t.Errorf("cancelled: %v", err)
	}
	if b, err := ReadBody("p", context.Background(), strings.NewReader("ok")); err != nil || string(b) != "ok" {
		t.Errorf("whole body: %q, %v", b, err)
	}
}

// TestCap checks the limit on a reply's bytes: a body of exactly the
// limit is read whole, one byte more is a *llm.Error of
// KindReplyTooLarge naming the limit, and a negative limit reads all.
func TestCap(t *testing.T) {
	ctx := context.Background()
	body := strings.Repeat("x", 1000)
	if b, err := ReadBody("p", ctx, Cap(strings.NewReader(body), 1000)); err != nil || string(b) != body {
		t.Errorf("a body of the limit: %d bytes, %v", len(b), err)
	}
	_, err := ReadBody("p", ctx, Cap(strings.NewReader(body+"y"), 1000))
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindReplyTooLarge || le.Retryable || !errors.Is(err, llm.ErrReplyTooLarge) ||
		!strings.Contains(err.Error(), "1000 bytes") {
		t.Errorf("a body over the limit: %v", err)
	}
	// Reads past the limit keep failing, and never report a negative count.
	c := Cap(iotest.OneByteReader(strings.NewReader(body+"yz")), 1000)
	n, err := io.Copy(io.Discard, c)
	if n != 1000 || err == nil {
		t.Errorf("copied %d bytes, %v", n, err)
	}
	if k, err := c.Read(make([]byte, 10)); k != 0 || err == nil {
		t.Errorf("read past the limit: %d, %v", k, err)
	}
	if b, err := ReadBody("p", ctx, Cap(strings.NewReader(body), -1)); err != nil || len(b) != 1000 {
		t.Errorf("no limit: %d bytes, %v", len(b), err)
	}
	if MaxReply(0) != llm.DefaultMaxReplyBytes || MaxReply(5) != 5 || MaxReply(-3) != -1 {
		t.Error("MaxReply")
	}
}
