package wftest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/termtext"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/service"
)

// Options adjust Run.
type Options struct {
	// Registry holds the actions implemented in Go; it may be nil. A case's
	// stubs replace actions of the same name, and action.Register adds the
	// built-ins (ask_user) that neither provides.
	Registry *engine.Registry
	// Run selects the cases whose name it matches; nil runs all.
	Run *regexp.Regexp
	// Observer receives the events of every run (for a trace); nil: none.
	Observer func(suite, caseName string, e engine.Event)
}

// Report is the outcome of Run.
type Report struct {
	Suites []*SuiteResult
	Passed int // cases that passed
	Failed int // cases that failed, plus suites that could not be loaded
}

// SuiteResult is the outcome of one test file.
type SuiteResult struct {
	Path  string
	Cases []*CaseResult // the cases that ran, in file order
	Err   error         // the file or its workflow could not be loaded; counts as one failure
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	Name     string
	Passed   bool
	Failures []string // one entry per mismatch; an entry may span several lines
	Notes    []string // information shown by Print in verbose mode: unused stubs
	Duration time.Duration
	Result   *engine.Result // nil when the workflow did not compile
}

// CompileError is a workflow that does not compile. Its message holds the
// formatted diagnostics, with source lines.
type CompileError struct {
	Workflow    string
	Diagnostics flow.Diagnostics
	text        string
}

// Error returns the formatted diagnostics.
func (e *CompileError) Error() string { return strings.TrimRight(e.text, "\n") }

// Unwrap returns the diagnostics as an error.
func (e *CompileError) Unwrap() error { return e.Diagnostics.Err() }

func newCompileError(path string, ds flow.Diagnostics, src func(string) []byte) *CompileError {
	var b bytes.Buffer
	_ = lang.FormatDiagnostics(&b, ds.Errors(), src)
	return &CompileError{Workflow: path, Diagnostics: ds, text: b.String()}
}

// Run runs the test file at path, or every test file under the directory
// path (recursively: files named *.test.yaml or *_test.yaml, in sorted
// order). It returns an error only when path cannot be read or a
// directory holds no test file; problems inside a file are in the Report.
func Run(ctx context.Context, path string, opts Options) (*Report, error) {
	files, err := testFiles(path)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	for _, f := range files {
		sr := runSuite(ctx, f, &opts)
		rep.Suites = append(rep.Suites, sr)
		if sr.Err != nil {
			rep.Failed++
		}
		for _, c := range sr.Cases {
			if c.Passed {
				rep.Passed++
			} else {
				rep.Failed++
			}
		}
	}
	return rep, nil
}

// IsTestFile reports whether name is a test file name: *.test.yaml or
// *_test.yaml.
func IsTestFile(name string) bool {
	base := filepath.Base(name)
	return strings.HasSuffix(base, ".test.yaml") || strings.HasSuffix(base, "_test.yaml")
}

func testFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("wftest: %w", err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && IsTestFile(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("wftest: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("wftest: no test files (*.test.yaml, *_test.yaml) under %s", path)
	}
	slices.Sort(files)
	return files, nil
}

func runSuite(ctx context.Context, path string, opts *Options) *SuiteResult {
	sr := &SuiteResult{Path: path}
	s, err := Load(path)
	if err != nil {
		sr.Err = err
		return sr
	}
	mod, ds := lang.Load(s.Workflow)
	if ds.HasErrors() {
		sr.Err = newCompileError(s.Workflow, ds, mod.Source)
		return sr
	}
	w := mod.Main()
	if w == nil {
		sr.Err = fmt.Errorf("%s declares no workflow", s.Workflow)
		return sr
	}
	// An action counts as existing for the static checks when the
	// Registry has it or any case of the file stubs it: a case stubs only
	// the actions its route calls, and a call to an action it does not
	// stub fails at run time, naming the action.
	stubbed := map[string]bool{}
	for _, c := range s.Cases {
		for name := range c.Stubs {
			stubbed[name] = true
		}
	}
	for _, c := range s.Cases {
		if opts.Run != nil && !opts.Run.MatchString(c.Name) {
			continue
		}
		sr.Cases = append(sr.Cases, runCase(ctx, s, c, mod, w, stubbed, opts))
	}
	return sr
}

// noSleep skips retry backoff: tests need not wait.
func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func runCase(ctx context.Context, s *Suite, c *Case, mod *lang.Module, w *flow.Workflow, stubbed map[string]bool, opts *Options) *CaseResult {
	start := time.Now()
	cr := &CaseResult{Name: c.Name}
	defer func() {
		cr.Duration = time.Since(start)
		cr.Passed = len(cr.Failures) == 0
	}()
	names := stubTargets(w)
	for _, key := range slices.Sorted(maps.Keys(c.Stubs)) {
		if !slices.Contains(names, key) {
			cr.Failures = append(cr.Failures, fmt.Sprintf("stubs.%s: no node calls an action %q, and no node without an action has that name%s", key, key, flow.Suggest(key, names)))
		}
	}
	if len(cr.Failures) > 0 {
		return cr
	}

	base := engine.NewRegistry()
	for _, name := range opts.Registry.Names() {
		if a, ok := opts.Registry.Lookup(name); ok {
			base.Replace(name, a)
		}
	}
	action.Register(base)
	reg, rec := NewStubRegistry(base, c.Stubs)
	has := func(name string) bool { return reg.Has(name) || stubbed[name] }
	plan, ds, err := service.Compile(w, &service.OpenOptions{HasAction: has})
	if err != nil {
		cr.Failures = append(cr.Failures, err.Error())
		return cr
	}
	if plan == nil {
		cr.Failures = append(cr.Failures, "workflow does not compile (an action is known when the Registry has it or a case of this file stubs it):\n"+newCompileError(s.Workflow, ds, mod.Source).Error())
		return cr
	}
	runner := &engine.Runner{
		Registry: reg,
		Bind: func(b *flow.Binding) (engine.Action, error) {
			a, err := action.Bind(b)
			if err != nil {
				return nil, err
			}
			return rec.wrap(b.Name, a), nil
		},
		Sleep: noSleep,
	}
	params, init, failures := caseVars(plan, c)
	if len(failures) > 0 {
		cr.Failures = append(cr.Failures, failures...)
		return cr
	}
	var obs engine.Observer
	if opts.Observer != nil {
		obs = engine.ObserverFunc(func(e engine.Event) { opts.Observer(s.Path, c.Name, e) })
	}
	res, _ := runner.RunWith(ctx, plan, params, obs, &engine.RunOptions{Init: init})
	cr.Result = res
	cr.Failures = append(cr.Failures, check(&c.Expect, res, rec)...)
	left := rec.Remaining()
	for _, name := range slices.Sorted(maps.Keys(left)) {
		cr.Notes = append(cr.Notes, fmt.Sprintf("unused stubs: %s: %d of %d replies left", name, left[name], len(c.Stubs[name])))
	}
	return cr
}

// caseVars splits a case's vars into the run's parameters (input_text
// among them) and the variables' starting values, each checked against its
// declared type. A name that is neither, or a value of the wrong type, is
// a failure naming it.
func caseVars(plan *flow.Plan, c *Case) (params, init map[string]flow.Value, failures []string) {
	params = map[string]flow.Value{flow.InputText: flow.StringValue(c.Input)}
	init = map[string]flow.Value{}
	var pnames, vnames []string
	for _, p := range plan.Params {
		pnames = append(pnames, p.Name)
	}
	for _, v := range plan.Vars {
		vnames = append(vnames, v.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Vars)) {
		p, what, into := plan.Param(name), "parameter", params
		if p == nil {
			p, what, into = plan.Var(name), "variable", init
		}
		if p == nil {
			known := "parameters: " + strings.Join(pnames, ", ")
			if len(vnames) > 0 {
				known += "; variables: " + strings.Join(vnames, ", ")
			}
			failures = append(failures, fmt.Sprintf("vars.%s: workflow %s has no parameter or variable %s%s (%s)", name, plan.Workflow.Name, name, flow.Suggest(name, append(slices.Clone(pnames), vnames...)), known))
			continue
		}
		v, err := flow.Conform(c.Vars[name], p.Type)
		if err != nil {
			failures = append(failures, fmt.Sprintf("vars.%s: %s %s (%s): %v", name, what, name, p.Type, err))
			continue
		}
		into[name] = v
	}
	return params, init, failures
}

// stubTargets returns the names a stub may have: every action a node calls
// and the names of nodes without an action, in w and its subworkflows.
func stubTargets(w *flow.Workflow) []string {
	var out []string
	seen := map[*flow.Workflow]bool{}
	var visit func(w *flow.Workflow)
	visit = func(w *flow.Workflow) {
		if w == nil || seen[w] {
			return
		}
		seen[w] = true
		for _, n := range w.Nodes {
			switch {
			case n.Type == flow.Subflow:
				visit(n.Subflow)
			case n.Type == flow.End:
			case n.Action != "":
				out = append(out, n.Action)
			default:
				out = append(out, n.Name)
			}
		}
	}
	visit(w)
	slices.Sort(out)
	return slices.Compact(out)
}

// Print writes one line per case, "ok   name (1.2ms)" or "FAIL name"
// followed by its failures indented, and ends with the line "N passed, M
// failed". A suite that could not be loaded prints as "FAIL path" and its
// error. With several suites each is headed by its path. verbose adds, for
// every case, its status and path and the stubs it left unused. What the
// files say (names, values, errors) is printed with control characters
// and invalid UTF-8 escaped, as \x1b and \xff, so that a terminal shows
// them rather than acts on them.
func (r *Report) Print(w io.Writer, verbose bool) {
	if r == nil {
		r = &Report{}
	}
	for _, s := range r.Suites {
		if len(r.Suites) > 1 || verbose {
			fmt.Fprintf(w, "=== %s\n", termtext.Safe(s.Path, false))
		}
		if s.Err != nil {
			fmt.Fprintf(w, "FAIL %s\n", termtext.Safe(s.Path, false))
			writeIndented(w, s.Err.Error())
			continue
		}
		for _, c := range s.Cases {
			if c.Passed {
				fmt.Fprintf(w, "ok   %s (%s)\n", termtext.Safe(c.Name, false), formatDuration(c.Duration))
			} else {
				fmt.Fprintf(w, "FAIL %s\n", termtext.Safe(c.Name, false))
				for _, f := range c.Failures {
					writeIndented(w, f)
				}
			}
			if !verbose {
				continue
			}
			if res := c.Result; res != nil {
				writeIndented(w, fmt.Sprintf("run: %s after %s", res.Status, formatPath(res.Path)))
				if res.Err != nil {
					writeIndented(w, "run error: "+res.Err.Error())
				}
			}
			for _, n := range c.Notes {
				writeIndented(w, n)
			}
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", r.Passed, r.Failed)
}

func writeIndented(w io.Writer, text string) {
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", termtext.Safe(line, true))
	}
}

func formatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
