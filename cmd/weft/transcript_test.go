package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A transcript is a console block of a document: "$ weft ..." command
// lines (a trailing \ continues one, "# ..." ends it as a comment), each
// followed by what it prints on stdout and stderr, in the order printed. In the printed lines,
// a line "..." stands for any lines, and a line ending in "..." for any
// line that starts with what precedes it.

type transcriptStep struct {
	line string   // the command as written
	args []string // its words, without "weft"
	want []string // the lines it prints
}

// consoleBlock returns the lines of the first ```console block of doc that
// follows the line heading.
func consoleBlock(t *testing.T, doc, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	at := strings.Index(text, "\n"+heading+"\n")
	if at < 0 {
		t.Fatalf("%s has no line %q", doc, heading)
	}
	text = text[at:]
	start := strings.Index(text, "```console\n")
	if start < 0 {
		t.Fatalf("%s: no console block after %q", doc, heading)
	}
	text = text[start+len("```console\n"):]
	end := strings.Index(text, "```\n")
	if end < 0 {
		t.Fatalf("%s: the console block after %q does not end", doc, heading)
	}
	return strings.Split(strings.TrimSuffix(text[:end], "\n"), "\n")
}

// parseTranscript splits a console block into commands and their output.
func parseTranscript(t *testing.T, lines []string) []transcriptStep {
	t.Helper()
	var steps []transcriptStep
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "$ ") {
			if len(steps) == 0 {
				t.Fatalf("transcript starts with %q, not a command", l)
			}
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
			continue
		}
		cmd := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		words := mustShellWords(t, cmd)
		if len(words) == 0 || words[0] != "weft" {
			t.Fatalf("transcript command %q does not run weft", cmd)
		}
		steps = append(steps, transcriptStep{line: cmd, args: words[1:]})
	}
	return steps
}

// shellWords splits a command line as a POSIX shell would, for the
// quoting documents use: words separated by blanks, single and double
// quotes (a backslash in double quotes escapes " \ $ and `), and # starting
// a comment. Other characters are kept as written ($WEFT_DATA stays
// $WEFT_DATA): a test that runs the command without a shell checks it
// with shellFree first.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '"' && c == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0:
			i++
			cur.WriteByte(s[i])
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '#' && !in:
			i = len(s)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unbalanced quote", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// shellFree returns an error if s needs a shell: a character a shell
// would expand or act on ($, `, globs, pipes, ; & < > and parentheses)
// outside single quotes.
func shellFree(s string) error {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '\'':
		case c == '#' && quote == 0 && (i == 0 || s[i-1] == ' '):
			return nil
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case strings.IndexByte("$`", c) >= 0, quote == 0 && strings.IndexByte("*?|&;<>()", c) >= 0:
			return fmt.Errorf("%q: %q needs a shell, and the command is run without one", s, c)
		}
	}
	return nil
}

// mustShellWords is shellWords for a command a test cannot do without.
func mustShellWords(t *testing.T, s string) []string {
	t.Helper()
	words, err := shellWords(s)
	if err != nil {
		t.Fatal(err)
	}
	return words
}

// matchLines reports whether got matches want, with want's "..." lines
// and line ends.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	w := want[0]
	if w == "..." {
		for k := 0; k <= len(got); k++ {
			if matchLines(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 {
		return false
	}
	ok := got[0] == w
	if p, cut := strings.CutSuffix(w, "..."); cut {
		ok = strings.HasPrefix(got[0], p)
	}
	return ok && matchLines(want[1:], got[1:])
}

// runTranscript runs every command of a transcript from the repository's
// root, with each path of paths (as written in the document) replaced by
// a fresh one in a temporary directory, and compares what each prints.
func runTranscript(t *testing.T, steps []transcriptStep, paths ...string) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(filepath.Join("..", ".."))
	sub := map[string]string{}
	for i, p := range paths {
		sub[p] = filepath.Join(dir, strings.Repeat("d", i+1), filepath.Base(p))
	}
	for _, s := range steps {
		args := make([]string, len(s.args))
		for i, a := range s.args {
			args[i] = a
			if n, ok := sub[a]; ok {
				args[i] = n
			}
		}
		// What a terminal shows: stdout and stderr in the order written.
		var both bytes.Buffer
		weft(t, args, func(e *env) {
			e.stdout = io.MultiWriter(e.stdout, &both)
			e.stderr = io.MultiWriter(e.stderr, &both)
		})
		out := both.String()
		for p, n := range sub {
			out = strings.ReplaceAll(out, n, p)
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			got = nil
		}
		if !matchLines(s.want, got) {
			t.Errorf("$ %s\nprints:\n%s\nthe document says:\n%s", s.line, strings.Join(got, "\n"), strings.Join(s.want, "\n"))
		}
	}
}

func TestMatchLines(t *testing.T) {
	for _, tc := range []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "...", "d"}, []string{"a", "b", "c", "d"}, true},
		{[]string{"a", "...", "d"}, []string{"a", "d"}, true},
		{[]string{"a", "...", "d"}, []string{"a", "b"}, false},
		{[]string{"q1  IntentQA  ..."}, []string{"q1  IntentQA  2026-11-26"}, true},
		{[]string{"q1  IntentQA  ..."}, []string{"q2  IntentQA  2026-11-26"}, false},
		{[]string{"a"}, []string{"a", "b"}, false},
	} {
		if got := matchLines(tc.want, tc.got); got != tc.ok {
			t.Errorf("matchLines(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
	for in, want := range map[string]string{
		`weft run "a b" 'c "d"' e  # comment`:              `weft|run|a b|c "d"|e`,
		`run a.wf --input "What was it?" --x 'single q' p`: `run|a.wf|--input|What was it?|--x|single q|p`,
		`echo "a \"b\" \$c" '$d'`:                          `echo|a "b" $c|$d`,
	} {
		if got, err := shellWords(in); err != nil || strings.Join(got, "|") != want {
			t.Errorf("shellWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got, err := shellWords(`echo "open`); err == nil {
		t.Errorf("shellWords of an open quote = %q, want an error", got)
	}
	for in, free := range map[string]bool{
		`run --docs $WEFT_DATA/x`: false, `a | b`: false, `a; b`: false, `a > f`: false, `a "$b"`: false,
		`a '$b' "c d" # $x`: true, `run --input "What? (2019)"`: true,
	} {
		if err := shellFree(in); (err == nil) != free {
			t.Errorf("shellFree(%q) = %v, want free %v", in, err, free)
		}
	}
}

// TestThreadsDocTranscript runs docs/threads.md's command-line example,
// fork included, and compares what each command prints with the document.
func TestThreadsDocTranscript(t *testing.T) {
	lines := consoleBlock(t, filepath.Join("..", "..", "docs", "threads.md"), "## From the command line")
	runTranscript(t, parseTranscript(t, lines), "/tmp/weft.db")
}

// TestCLIDocTraceTranscript runs docs/cli.md's --trace examples.
func TestCLIDocTraceTranscript(t *testing.T) {
	lines := consoleBlock(t, filepath.Join("..", "..", "docs", "cli.md"), "### Trace and progress")
	runTranscript(t, parseTranscript(t, lines))
}
