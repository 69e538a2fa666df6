package lang

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
)

func formatOne(t *testing.T, d flow.Diagnostic, src []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := FormatDiagnostics(&b, flow.Diagnostics{d}, func(string) []byte { return src }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// caretUnder returns the text of quoted above the caret of caretLine, as
// a terminal shows it: one column per rune, tabs in both lines alike.
func caretUnder(t *testing.T, quoted, caretLine string) string {
	t.Helper()
	col := utf8.RuneCountInString(strings.TrimSuffix(caretLine, "^"))
	if !strings.HasSuffix(caretLine, "^") {
		t.Fatalf("no caret in %q", caretLine)
	}
	r := []rune(quoted)
	if col > len(r) {
		return ""
	}
	return string(r[col:])
}

// A diagnostic in a 1 MB line quotes a window around its column, marked
// "…" on both sides, and the caret stays under the column.
func TestFormatDiagnosticsClipsLongLines(t *testing.T) {
	const n = 1 << 20
	for _, c := range []struct {
		name        string
		line        string
		col         int
		wantAtCaret string
		left, right bool // "…" expected
	}{
		{"middle", strings.Repeat("a", n/2) + "XYZ" + strings.Repeat("b", n/2), n/2 + 1, "XYZ", true, true},
		{"start", "XYZ" + strings.Repeat("b", n), 1, "XYZ", false, true},
		{"end", strings.Repeat("a", n) + "XYZ", n + 1, "XYZ", true, false},
		{"multibyte", strings.Repeat("é", n/4) + "XYZ" + strings.Repeat("ü", n/4), 2*(n/4) + 1, "XYZ", true, true},
		{"tabs", strings.Repeat("\t", n/2) + "XYZ" + strings.Repeat("b", n/2), n/2 + 1, "XYZ", true, true},
		{"short", "let XYZ = 1", 5, "XYZ = 1", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := []byte("first\n" + c.line + "\nlast\n")
			out := formatOne(t, flow.Diagnostic{Pos: flow.Pos{File: "big.wf", Line: 2, Col: c.col}, Msg: "bad"}, src)
			if len(out) > 4096 {
				t.Fatalf("%d bytes of diagnostics for one error", len(out))
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 3 || lines[0] != "big.wf:2:"+itoa(c.col)+": bad" {
				t.Fatalf("output:\n%s", out)
			}
			if got := caretUnder(t, lines[1], lines[2]); !strings.HasPrefix(got, c.wantAtCaret) {
				t.Errorf("caret is under %.20q, want %q", got, c.wantAtCaret)
			}
			if got := strings.HasPrefix(lines[1], "…"); got != c.left {
				t.Errorf("left mark %v, want %v: %.40q", got, c.left, lines[1])
			}
			if got := strings.HasSuffix(lines[1], "…"); got != c.right {
				t.Errorf("right mark %v, want %v", got, c.right)
			}
		})
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

// Invalid UTF-8, control characters and bidirectional controls in quoted
// source or in a message are printed escaped, and the caret still points
// at the column.
func TestFormatDiagnosticsEscapes(t *testing.T) {
	line := "a\x00b\x1b[31m\xff\xfe\u202eZ here"
	col := strings.Index(line, "Z") + 1
	out := formatOne(t, flow.Diagnostic{Pos: flow.Pos{File: "x.wf", Line: 1, Col: col}, Msg: "found \x1b[2J\xff token"}, []byte(line+"\n"))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("output:\n%q", out)
	}
	if want := `x.wf:1:` + itoa(col) + `: found \x1b[2J\xff token`; lines[0] != want {
		t.Errorf("message line %q, want %q", lines[0], want)
	}
	if want := `a\x00b\x1b[31m\xff\xfe\u202eZ here`; lines[1] != want {
		t.Errorf("source line %q, want %q", lines[1], want)
	}
	if got := caretUnder(t, lines[1], lines[2]); !strings.HasPrefix(got, "Z here") {
		t.Errorf("caret under %q", got)
	}
	for i := range len(out) {
		if c := out[i]; c < 0x20 && c != '\n' || c == 0x7f {
			t.Errorf("raw control byte %#x in output", c)
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("output is not valid UTF-8: %q", out)
	}
}

// A huge message (a token quoted whole) is clipped, visibly.
func TestFormatDiagnosticsClipsMessages(t *testing.T) {
	msg := "unexpected " + strings.Repeat("x", 1<<20)
	out := formatOne(t, flow.Diagnostic{Msg: msg}, nil)
	if len(out) > 4096 || !strings.Contains(out, "… (") || !strings.Contains(out, "more bytes)") {
		t.Errorf("%d bytes: %.200q", len(out), out)
	}
}

// Many diagnostics in a large file are printed in time linear in the file
// and their number: each line is found through an index built once.
func TestFormatDiagnosticsManyInLargeFile(t *testing.T) {
	var src strings.Builder
	var ds flow.Diagnostics
	for i := 1; i <= 20000; i++ {
		src.WriteString(strings.Repeat("y", 50))
		src.WriteString("\n")
		ds = append(ds, flow.Diagnostic{Pos: flow.Pos{File: "f.wf", Line: i, Col: 3}, Msg: "m"})
	}
	ds = append(ds, flow.Diagnostic{Pos: flow.Pos{File: "f.wf", Line: 20001, Col: 1}, Msg: "after the end"})
	text := []byte(src.String())
	calls := 0
	var b bytes.Buffer
	if err := FormatDiagnostics(&b, ds, func(string) []byte { calls++; return text }); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("source read %d times", calls)
	}
	want := "f.wf:20000:3: m\n" + strings.Repeat("y", 50) + "\n  ^\nf.wf:20001:1: after the end\n"
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("output ends %q", b.String()[b.Len()-200:])
	}
}
