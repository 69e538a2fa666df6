package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
)

// TestTutorial runs docs/tutorial.md as a reader would, in an empty home
// folder: it writes every file the tutorial shows (a fenced block whose
// info string says file=NAME) and runs every command of its console blocks
// (lines starting with "$ "), checking each command's output against the
// lines shown under it and its exit code against the "# exits N" comment
// on its line (0 without one). The shown output is matched as
// transcripts are (matchLines): a line "..." stands for any lines, a line
// ending in "..." for any line that starts with what precedes it.
// The picture the tutorial shows, docs/tutorial-triage.svg, must be the
// one its graph command draws.
//
// Only commands a reader types are allowed: "go install ./cmd/weft" (run
// in this clone, installing into a temporary GOBIN), weft (that binary, in
// its own process, stdout and stderr into one stream as a terminal shows
// them), mkdir, cd and export. A local Ollama is the fake in llm/llmtest:
// "export OLLAMA_HOST=..." points the runs at it, whatever address the
// tutorial shows. Any other command fails the test, so that nothing in the
// tutorial goes unrun.
func TestTutorial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft: not in -short mode")
	}
	src, err := os.ReadFile("../../docs/tutorial.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := fencedBlocks(string(src))
	if err != nil {
		t.Fatal(err)
	}
	clone, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	srv.RepeatFunc(tutorialModel)
	srv.SetModels(llmtest.Model{Name: "llama3.2"}) // what "ollama pull llama3.2" gave the reader

	home := t.TempDir()
	gobin := t.TempDir()
	cwd := home
	vars := map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, ".local", "share"), "PATH": gobin}
	path := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			p = filepath.Join(home, rest)
		}
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	ran := 0
	for _, b := range blocks {
		if name, ok := b.file(); ok {
			if err := os.WriteFile(path(name), []byte(b.body), 0o644); err != nil {
				t.Fatalf("docs/tutorial.md:%d: %v", b.line, err)
			}
			continue
		}
		if b.lang != "console" {
			continue
		}
		for _, c := range consoleCommands(b) {
			ran++
			where := fmt.Sprintf("docs/tutorial.md:%d", c.line)
			if err := shellFree(c.cmd); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			args, err := shellWords(c.cmd)
			if err != nil || len(args) == 0 {
				t.Fatalf("%s: %q: %v", where, c.cmd, err)
			}
			var buf bytes.Buffer
			code := 0
			switch args[0] {
			case "go":
				if strings.Join(args, " ") != "go install ./cmd/weft" {
					t.Fatalf("%s: the test runs only \"go install ./cmd/weft\", not %q", where, c.cmd)
				}
				cmd := exec.Command("go", "install", "./cmd/weft")
				cmd.Dir = clone
				cmd.Env = append(os.Environ(), "GOBIN="+gobin)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: go install: %v\n%s", where, err, b)
				}
			case "weft":
				cmd := exec.Command(filepath.Join(gobin, "weft"), args[1:]...)
				cmd.Dir = cwd
				for k, v := range vars {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
				cmd.Stdout, cmd.Stderr = &buf, &buf
				err := cmd.Run()
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					code = ee.ExitCode()
				case err != nil:
					t.Fatalf("%s: %v", where, err)
				}
			case "mkdir":
				for _, d := range args[1:] {
					if d != "-p" {
						if err := os.MkdirAll(path(d), 0o755); err != nil {
							t.Fatalf("%s: %v", where, err)
						}
					}
				}
			case "cd":
				cwd = path(args[1])
			case "export":
				k, v, ok := strings.Cut(args[1], "=")
				if !ok {
					t.Fatalf("%s: export without =", where)
				}
				if k == "OLLAMA_HOST" {
					v = srv.BaseURL()
				}
				vars[k] = v
			default:
				t.Fatalf("%s: the test cannot run %q: keep to go install, weft, mkdir, cd and export", where, args[0])
			}
			out := strings.ReplaceAll(buf.String(), home, "~")
			got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if out == "" {
				got = nil
			}
			if code != c.code {
				t.Errorf("%s: $ %s\nexit code %d, want %d; output:\n%s", where, c.cmd, code, c.code, out)
			}
			if !matchLines(c.want, got) {
				t.Errorf("%s: $ %s\noutput differs from the tutorial's.\ngot:\n%s\nthe tutorial shows:\n%s", where, c.cmd, out, strings.Join(c.want, "\n"))
			}
		}
	}
	want, err := os.ReadFile("../../docs/tutorial-triage.svg")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(home, "triage", "triage.svg")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("docs/tutorial-triage.svg is not what the tutorial's graph command draws (%v); copy it from there", err)
	}
	if ran < 8 {
		t.Fatalf("ran %d commands; the tutorial's console blocks were not found", ran)
	}
}

// tutorialModel is the tutorial's local model: it sorts tickets by their
// words, drafts a reply (mentioning the refund's delay once a reviewer
// asked for it) and approves a draft only when it says when the money
// comes back.
func tutorialModel(req llm.Request) llmtest.Reply {
	prompt := req.Messages[len(req.Messages)-1].Content
	switch {
	case strings.Contains(prompt, "Sort this support ticket"):
		ticket := strings.ToLower(prompt[strings.Index(prompt, "Ticket:"):])
		cat := "unclear"
		switch {
		case strings.Contains(ticket, "charged"), strings.Contains(ticket, "invoice"):
			cat = "billing"
		case strings.Contains(ticket, "crash"), strings.Contains(ticket, "error"):
			cat = "bug"
		}
		return llmtest.JSON(map[string]any{"category": cat})
	case strings.Contains(prompt, "Write a short, friendly reply"):
		if strings.Contains(prompt, "refund") && strings.Contains(prompt, "feedback on the last draft: Say") {
			return llmtest.Text("Sorry about the double charge! We have refunded it; the money is back on your card within 5 business days.")
		}
		if strings.Contains(prompt, "export") {
			return llmtest.Text("Thanks for the details! We reproduced the crash when exporting a PDF and will ship a fix this week.")
		}
		return llmtest.Text("Sorry about the double charge! We have refunded it.")
	case strings.Contains(prompt, "Review this reply"):
		if strings.Contains(prompt, "refund") && !strings.Contains(prompt, "business days") {
			return llmtest.JSON(map[string]any{"verdict": "revise", "feedback": "Say when the refund reaches the customer."})
		}
		return llmtest.JSON(map[string]any{"verdict": "approve", "feedback": ""})
	}
	return llmtest.Status(404, fmt.Sprintf("the tutorial's model does not expect this prompt: %.80q", prompt))
}

// block is a fenced code block of a Markdown file.
type block struct {
	lang, info string
	body       string
	line       int // of the block's first body line
}

// file returns the name in the block's info string, file=NAME.
func (b block) file() (string, bool) {
	for _, f := range strings.Fields(b.info) {
		if name, ok := strings.CutPrefix(f, "file="); ok {
			return name, true
		}
	}
	return "", false
}

// fencedBlocks returns the ``` blocks of a Markdown text.
func fencedBlocks(md string) ([]block, error) {
	var out []block
	var cur *block
	var body strings.Builder
	sc := bufio.NewScanner(strings.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if cur == nil {
				info := strings.TrimPrefix(line, "```")
				lang, _, _ := strings.Cut(info, " ")
				cur = &block{lang: lang, info: info, line: n + 1}
				body.Reset()
				continue
			}
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
			continue
		}
		if cur != nil {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("docs/tutorial.md:%d: a code block is not closed", cur.line-1)
	}
	return out, sc.Err()
}

// command is one "$ " line of a console block, with the output shown
// under it.
type command struct {
	cmd  string
	code int
	want []string
	line int
}

var exitsComment = regexp.MustCompile(`\s+# exits (\d+)$`)

// consoleCommands splits a console block into its commands. A command
// continues on the next line after a trailing backslash.
func consoleCommands(b block) []command {
	var out []command
	lines := strings.Split(strings.TrimSuffix(b.body, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "$ ") {
			if len(out) > 0 {
				out[len(out)-1].want = append(out[len(out)-1].want, l)
			}
			continue
		}
		c := command{cmd: strings.TrimPrefix(l, "$ "), line: b.line + i}
		for strings.HasSuffix(c.cmd, "\\") && i+1 < len(lines) {
			i++
			c.cmd = strings.TrimSuffix(c.cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if m := exitsComment.FindStringSubmatch(c.cmd); m != nil {
			c.code, _ = strconv.Atoi(m[1])
			c.cmd = strings.TrimSuffix(c.cmd, m[0])
		}
		out = append(out, c)
	}
	return out
}
