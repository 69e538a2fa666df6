package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readmeCommands returns the logical lines of a README's code blocks (a
// trailing \ joins the next line), without a "$ " prompt.
func readmeCommands(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	cur := ""
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
		if c, ok := strings.CutSuffix(l, "\\"); ok {
			cur += c + " "
			continue
		}
		out = append(out, cur+l)
		cur = ""
	}
	return out
}

// flagValues returns the values of every --name in words.
func flagValues(words []string, name string) []string {
	var out []string
	for i, w := range words {
		if w == name && i+1 < len(words) {
			out = append(out, words[i+1])
		}
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestExampleREADMEsCommandEverySession: every recorded session of an
// example (examples/*/sessions/*.jsonl) is named in the example's README
// by a command line that replays it, and every line naming it gives the
// input, answers, workflow and data the replay test uses (so the command
// works: TestIntentQASessions and TestSQLAnalystSessions run the same
// command lines when the data is there; shipments' sessions replay in its
// own TestRecordThenReplaySessions).
func TestExampleREADMEsCommandEverySession(t *testing.T) {
	root := filepath.Join("..", "..")
	known := map[string]session{}
	for _, s := range slices.Concat(intentqaSessions(), sqlanalystSessions(), owfSessions()) {
		known[s.example+"/"+s.name+".jsonl"] = s
		if _, err := os.Stat(s.recording()); err != nil {
			t.Errorf("session %s/%s has no recording: %v", s.example, s.name, err)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "examples", "*", "sessions", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sessions found: %v", err)
	}
	for _, f := range files {
		example := filepath.Base(filepath.Dir(filepath.Dir(f)))
		name := filepath.Base(f)
		rel := "examples/" + example + "/sessions/" + name
		t.Run(example+"/"+name, func(t *testing.T) {
			var lines [][]string
			for _, l := range readmeCommands(t, filepath.Join(root, "examples", example, "README.md")) {
				if !strings.Contains(l, "--llm") {
					continue // output shown in a block, or another command
				}
				words := mustShellWords(t, l)
				if slices.Contains(words, "--llm") && slices.Contains(flagValues(words, "--llm"), "replay:"+rel) {
					lines = append(lines, words)
				}
			}
			if len(lines) == 0 {
				t.Fatalf("examples/%s/README.md has no command with --llm replay:%s", example, rel)
			}
			if s, ok := known[example+"/"+name]; ok && !slices.ContainsFunc(lines, func(words []string) bool { return slices.Contains(words, "examples/"+example+"/"+s.file) }) {
				t.Errorf("no command replays %s with examples/%s/%s", rel, example, s.file)
			}
			for _, words := range lines {
				if s, ok := known[example+"/"+name]; ok {
					if got := flagValues(words, "--input"); !slices.Equal(got, []string{s.input}) {
						t.Errorf("%q: --input %q, the session's is %q", strings.Join(words, " "), got, s.input)
					}
					if got := flagValues(words, "--answer"); !slices.Equal(got, s.answers) {
						t.Errorf("%q: --answer %q, the session's are %q", strings.Join(words, " "), got, s.answers)
					}
					for flag, data := range s.data {
						if got := flagValues(words, flag); len(got) != 1 || (got[0] != data && !strings.HasSuffix(got[0], "/"+data)) {
							t.Errorf("%q: %s %q, want the data file %[4]s (in the data directory) or .../%[4]s", strings.Join(words, " "), flag, got, data)
						}
					}
					continue
				}
				// A Go program's session reads its messages from stdin.
				base := strings.TrimSuffix(name, ".replay.jsonl")
				i := slices.Index(words, "<")
				if want := "examples/" + example + "/sessions/" + base + ".txt"; i < 0 || i+1 >= len(words) || words[i+1] != want {
					t.Errorf("%q: want its messages from < %s", strings.Join(words, " "), want)
				} else if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(want))); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
