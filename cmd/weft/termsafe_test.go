package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	_ "modernc.org/sqlite" // the "sqlite" driver, to damage the store behind its back
)

// wantTermSafe fails unless out is valid UTF-8 without the control
// characters a terminal acts on (escape sequences, carriage returns,
// bells) or bidi overrides.
func wantTermSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s prints invalid UTF-8: %q", what, out)
	}
	for _, bad := range []string{"\x1b", "\r", "\a", "\u202e", "\x00"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s prints %q raw: %q", what, bad, out)
		}
	}
}

// TestGarbageQuestionsPrintedEscaped: a pending question holding terminal
// escape sequences, a carriage return, a bidi override or bytes that are
// not UTF-8 (written behind the store's back, or by a hostile model) is
// printed by `weft threads show` and `weft resume` escaped, as \x1b and
// the like, never raw.
func TestGarbageQuestionsPrintedEscaped(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	stubs := "testdata/intentqa_unclear.yaml"
	r := weft(t, []string{"run", intentQA, "--stubs", stubs, "--input", "hmm", "--thread", "q1", "--store", db})
	r.wantCode(t, exitWaiting)

	set := func(question []byte, node string) {
		t.Helper()
		conn, err := sql.Open("sqlite", db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Exec(`UPDATE pending SET question = ?, node = ? WHERE thread_id = 'q1'`, question, node); err != nil {
			t.Fatal(err)
		}
	}
	// JSON whose string holds control characters.
	set([]byte(`"Which\u001b]0;owned\u0007 year\u001b[2J?\r\u202eevil"`), "ask\x1b[31m_user")
	r = weft(t, []string{"threads", "show", "q1", "--store", db})
	r.wantCode(t, exitOK)
	wantTermSafe(t, "threads show", r.stdout)
	if !strings.Contains(r.stdout, `Which\x1b]0;owned\a year\x1b[2J?\r\u202eevil`) {
		t.Errorf("threads show does not print the question escaped:\n%s", r.stdout)
	}
	r = weft(t, []string{"resume", "q1", "--store", db})
	r.wantCode(t, exitWaiting)
	wantTermSafe(t, "resume (stdout)", r.stdout)
	wantTermSafe(t, "resume (stderr)", r.stderr)
	if !strings.Contains(r.stdout, `Which\x1b]0;owned\a year\x1b[2J?\r\u202eevil`) {
		t.Errorf("resume does not print the question escaped:\n%s", r.stdout)
	}

	// Bytes that are not JSON, nor UTF-8.
	set([]byte("\xff\xfe\x1b[31mred\xc3"), "ask_user\xff")
	r = weft(t, []string{"threads", "show", "q1", "--store", db})
	r.wantCode(t, exitOK)
	wantTermSafe(t, "threads show of a non-JSON question", r.stdout)
	if !strings.Contains(r.stdout, `\xff\xfe\x1b[31mred\xc3`) {
		t.Errorf("threads show does not print the bytes escaped:\n%s", r.stdout)
	}
	r = weft(t, []string{"resume", "q1", "--store", db})
	r.wantCode(t, exitInternal) // a damaged store, as docs/cli.md says
	wantTermSafe(t, "resume of a non-JSON question (stderr)", r.stderr)
	if !strings.Contains(r.stderr, "pending") {
		t.Errorf("resume does not name the damaged question: %q", r.stderr)
	}
}

// TestClipKeepsRunes: clip cuts at a rune boundary, so that what it cuts
// stays valid UTF-8.
func TestClipKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", 60) // 120 bytes
	for n := 4; n < 130; n++ {
		got := clip(s, n)
		if !utf8.ValidString(got) || len(got) > n {
			t.Fatalf("clip(%d) = %q (%d bytes)", n, got, len(got))
		}
	}
}

// TestErrorsPrintedEscaped: an error that quotes what the store holds (a
// thread id with an escape sequence) is printed escaped.
func TestErrorsPrintedEscaped(t *testing.T) {
	db := filepath.Join(t.TempDir(), "threads.db")
	weft(t, []string{"run", intentQA, "--stubs", "testdata/intentqa_unclear.yaml", "--input", "x", "--thread", "q1", "--store", db}).wantCode(t, exitWaiting)
	r := weft(t, []string{"resume", "no\x1b[2Jsuch\xff", "--store", db})
	r.wantCode(t, exitUsage)
	wantTermSafe(t, "the error of a resume of a missing thread", r.stderr)
	if !strings.Contains(r.stderr, `no\x1b[2Jsuch\xff`) {
		t.Errorf("stderr = %q, want the thread id escaped", r.stderr)
	}
}

// TestTermSafe: what termSafe keeps and what it escapes.
func TestTermSafe(t *testing.T) {
	for _, c := range []struct {
		in        string
		multiline bool
		want      string
	}{
		{"plain text, é, 日本", false, "plain text, é, 日本"},
		{"two\nlines\tand a tab", true, "two\nlines\tand a tab"},
		{"two\nlines\tand a tab", false, `two\nlines\tand a tab`},
		{"\x1b[31mred\x1b[0m", true, `\x1b[31mred\x1b[0m`},
		{"over\rwrite\a", true, `over\rwrite\a`},
		{"bidi \u202eevil", true, `bidi \u202eevil`},
		{"bad \xff\xfe utf-8 \xc3", true, `bad \xff\xfe utf-8 \xc3`},
		{"nul \x00 del \x7f c1 \u0085", true, `nul \x00 del \x7f c1 \u0085`},
		{"\uFFFD the replacement character itself", true, "\uFFFD the replacement character itself"},
	} {
		if got := termSafe(c.in, c.multiline); got != c.want {
			t.Errorf("termSafe(%q, %v) = %q, want %q", c.in, c.multiline, got, c.want)
		}
	}
}
