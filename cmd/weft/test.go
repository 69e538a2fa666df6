package main

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/wftest"
)

// newTestCmd builds `weft test`.
func newTestCmd(e env) *cobra.Command {
	var runPat string
	var trace, asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "test FILE|DIR",
		Short: "Run workflow tests written in YAML",
		Long: `Test runs the workflow tests in FILE, or in every test file under DIR
(*.test.yaml and *_test.yaml): each case runs the workflow with stubbed
actions and checks the status, path, outputs, calls, variables, error or
question it expects. It prints a line per case ("ok   name (1.2ms)", or
"FAIL name" and what differed) and a closing "N passed, M failed" line,
and exits 1 if any case failed. -v adds each run's status and path, its
error and the stubs it left unused.
The format is described in docs/testing.md.`,
		Example: `  weft test examples/intentqa
  weft test examples/intentqa/intentqa.test.yaml --run 'rephrase' -v --trace`,
		Args: exactFiles(1, "one test file or directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var re *regexp.Regexp
			if runPat != "" {
				var err error
				if re, err = regexp.Compile(runPat); err != nil {
					return usageErrorf("--run: %v", err)
				}
			}
			return runTests(cmd, e, args[0], re, trace, asJSON, verbose)
		},
	}
	f := cmd.Flags()
	f.StringVar(&runPat, "run", "", "run only the cases whose name matches `REGEX`")
	f.BoolVar(&trace, "trace", false, "print every event of every case to stderr (NDJSON with --json)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVarP(&verbose, "verbose", "v", false, "also print each run's status and path, its error and its unused stubs, headed by the file")
	return cmd
}

// traceLine is one event of `weft test --trace --json`.
type traceLine struct {
	Suite string       `json:"suite"`
	Case  string       `json:"case"`
	Event engine.Event `json:"event"`
}

func runTests(cmd *cobra.Command, e env, path string, re *regexp.Regexp, trace, asJSON, verbose bool) error {
	base := engine.NewRegistry()
	action.Register(base)
	opts := wftest.Options{Registry: base, Run: re}
	if trace {
		enc := json.NewEncoder(e.stderr)
		enc.SetEscapeHTML(false)
		var lastSuite, lastCase string
		opts.Observer = func(suite, caseName string, ev engine.Event) {
			if asJSON {
				_ = enc.Encode(traceLine{Suite: suite, Case: caseName, Event: ev})
				return
			}
			if suite != lastSuite || caseName != lastCase {
				lastSuite, lastCase = suite, caseName
				fmt.Fprintf(e.stderr, "--- %s: %s\n", termSafe(suite, false), termSafe(caseName, false))
			}
			fmt.Fprintf(e.stderr, "    %s\n", termSafe(ev.String(), false))
		}
	}
	rep, err := wftest.Run(cmd.Context(), path, opts)
	if err != nil {
		// Run fails only when path cannot be read or holds no test file.
		return usageErrorf("%v", err)
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reportJSON(rep)); err != nil {
			return internal(err)
		}
	} else {
		rep.Print(e.stdout, verbose)
	}
	if rep.Failed > 0 {
		return silent(exitFailed)
	}
	return nil
}

// testReportJSON is the --json form of a test report.
type testReportJSON struct {
	Passed int             `json:"passed"`
	Failed int             `json:"failed"`
	Suites []testSuiteJSON `json:"suites"`
}

type testSuiteJSON struct {
	Path  string         `json:"path"`
	Error *string        `json:"error"` // the file or its workflow could not be loaded
	Cases []testCaseJSON `json:"cases"`
}

type testCaseJSON struct {
	Name       string   `json:"name"`
	Passed     bool     `json:"passed"`
	Failures   []string `json:"failures"`
	Notes      []string `json:"notes"`
	DurationMS float64  `json:"duration_ms"`
	Status     string   `json:"status,omitempty"` // of the run; "" when the workflow did not compile
	Path       []string `json:"path,omitempty"`
}

func reportJSON(r *wftest.Report) testReportJSON {
	out := testReportJSON{Passed: r.Passed, Failed: r.Failed, Suites: []testSuiteJSON{}}
	for _, s := range r.Suites {
		sj := testSuiteJSON{Path: s.Path, Cases: []testCaseJSON{}}
		if s.Err != nil {
			msg := s.Err.Error()
			sj.Error = &msg
		}
		for _, c := range s.Cases {
			cj := testCaseJSON{
				Name:       c.Name,
				Passed:     c.Passed,
				Failures:   append([]string{}, c.Failures...),
				Notes:      append([]string{}, c.Notes...),
				DurationMS: float64(c.Duration.Microseconds()) / 1000,
			}
			if c.Result != nil {
				cj.Status = c.Result.Status.String()
				cj.Path = c.Result.Path
			}
			sj.Cases = append(sj.Cases, cj)
		}
		out.Suites = append(out.Suites, sj)
	}
	return out
}
