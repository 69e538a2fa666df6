// Command testskips reads the JSON events of `go test -json` on stdin and
// prints one line per package: whether it passed, how many tests ran, and
// which were skipped and why (the t.Skip messages, grouped). A plain
// `go test ./...` shows only "ok" for a package whose tests skipped, since
// go test prints a passing package's output only with -v; this says what
// did not run:
//
//	go test -json ./... | go run ./internal/testskips
//
// The output of failing tests, and of packages that do not build, is
// printed after their line. It exits 1 when a package failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

func main() {
	failed, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testskips:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Output     string
	Test       string
	Elapsed    float64
}

// pkgResult is what the events say of one package.
type pkgResult struct {
	name     string
	action   string // pass, fail, skip (no test files), or "" when unfinished
	elapsed  float64
	passed   int
	failed   []string
	skipped  map[string]int // reason -> tests
	output   map[string][]string
	pkgLines []string // output not tied to a test (build errors, panics)
}

// summarize reads test2json events from r and writes one line per package
// to w, in the order the packages finished. It reports whether any
// package failed.
func summarize(r io.Reader, w io.Writer) (bool, error) {
	pkgs := map[string]*pkgResult{}
	build := map[string][]string{} // ImportPath -> build output
	var order []*pkgResult
	get := func(name string) *pkgResult {
		p := pkgs[name]
		if p == nil {
			p = &pkgResult{name: name, skipped: map[string]int{}, output: map[string][]string{}}
			pkgs[name] = p
		}
		return p
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		err := json.Unmarshal(line, &ev)
		if err == nil && ev.Package == "" && ev.ImportPath != "" {
			if ev.Action == "build-output" {
				build[ev.ImportPath] = append(build[ev.ImportPath], ev.Output)
			}
			continue
		}
		if err != nil || ev.Package == "" {
			// go test prints build errors before the events, not as JSON.
			if len(strings.TrimSpace(string(line))) > 0 {
				fmt.Fprintln(w, string(line))
			}
			continue
		}
		p := get(ev.Package)
		switch {
		case ev.Action == "output" && ev.Test != "":
			p.output[ev.Test] = append(p.output[ev.Test], ev.Output)
		case ev.Action == "output":
			p.pkgLines = append(p.pkgLines, ev.Output)
		case ev.Test != "" && ev.Action == "pass" && !strings.Contains(ev.Test, "/"):
			p.passed++
		case ev.Test != "" && ev.Action == "fail":
			p.failed = append(p.failed, ev.Test)
		case ev.Test != "" && ev.Action == "skip":
			p.skipped[skipReason(p.output[ev.Test])]++
		case ev.Test == "" && (ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip"):
			p.action, p.elapsed = ev.Action, ev.Elapsed
			order = append(order, p)
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	for _, p := range pkgs {
		if p.action == "" {
			p.action = "fail" // the events stopped before the package ended
			order = append(order, p)
		}
	}
	anyFailed := false
	for _, p := range order {
		switch p.action {
		case "skip":
			fmt.Fprintf(w, "?    %s [no test files]\n", p.name)
			continue
		case "fail":
			anyFailed = true
		}
		word := "ok  "
		if p.action == "fail" {
			word = "FAIL"
		}
		s := fmt.Sprintf("%s %s %.1fs: %d passed", word, p.name, p.elapsed, p.passed)
		if len(p.failed) > 0 {
			s += fmt.Sprintf(", %d failed (%s)", len(p.failed), strings.Join(p.failed, ", "))
		}
		if n := total(p.skipped); n > 0 {
			s += fmt.Sprintf(", %d skipped: %s", n, reasons(p.skipped))
		}
		fmt.Fprintln(w, s)
		if p.action == "fail" {
			for _, t := range p.failed {
				for _, l := range p.output[t] {
					fmt.Fprint(w, "    "+l)
				}
			}
			if len(p.failed) == 0 {
				for _, l := range append(build[p.name], p.pkgLines...) {
					fmt.Fprint(w, "    "+l)
				}
			}
		}
	}
	return anyFailed, nil
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// reasons lists the skip reasons, most frequent first: "reason (N tests)".
func reasons(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", k, m[k])
	}
	return strings.Join(parts, "; ")
}

// fileLine is the "file_test.go:12: " prefix testing puts on a message.
var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// noData is datadir.Require's message: the dataset's name is the reason.
var noData = regexp.MustCompile(`data "([^"]+)" not found`)

// skipReason returns why a test skipped, from its output: the message
// t.Skip printed, without its file:line prefix, on one line, clipped.
func skipReason(out []string) string {
	msg := ""
	for _, l := range out {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") || strings.HasPrefix(t, "--- PASS") {
			continue
		}
		if fileLine.MatchString(l) {
			msg = fileLine.ReplaceAllString(l, "")
		}
	}
	msg = strings.TrimSpace(msg)
	if m := noData.FindStringSubmatch(msg); m != nil {
		return "no data " + m[1] + " ($WEFT_DATA, see examples/README.md)"
	}
	if msg == "" {
		return "no reason given"
	}
	if r := []rune(msg); len(r) > 100 {
		msg = string(r[:100]) + "…"
	}
	return msg
}
