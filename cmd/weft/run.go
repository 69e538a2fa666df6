package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/owf"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/wftest"
)

// runOptions are the flags of `weft run`.
type runOptions struct {
	input     string
	vars      []string
	trace     bool   // --trace given
	traceMode string // traceSteps or traceFull
	// otel is set by newService when the OTEL_* variables turned
	// OpenTelemetry tracing on (weft serve then takes the requests'
	// trace context).
	otel       bool
	json       bool
	stubs      string
	answers    []string
	workflow   string
	llm        string
	record     string
	llmTimeout time.Duration
	thread     string
	store      string
	embed      string
	docs       string // --docs: the retrieve tool's documents
	db         string // --db: the SQL tools' database
	dbUnsafe   bool   // --db-allow-unsafe-role
	es         string // --es: the search tool's backend
	owf        bool   // the workflow is an ollama-workflows document
	// contextTokens is --context-tokens (notices.go).
	contextTokens int
	// bound are the models the workflow's LLM actions name (prepare
	// finds them; runSpecs gives their providers components).
	bound []string
	// mcp is the workflow whose MCP server declarations (`mcp NAME
	// { ... }`) runSpecs makes components of; nil for none.
	mcp *flow.Workflow
}

// newRunCmd builds `weft run`.
func newRunCmd(e env) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a workflow",
		Long: `Run loads FILE, checks it, and runs its workflow (the first one in the file,
or the one named by --workflow). Warnings are printed to stderr; errors stop
the run before it starts.

When the run reaches a human node it asks its question: on a terminal weft
prints the question and reads the answer from stdin; otherwise it uses the
next --answer value, and when none is left it prints the question and exits
with code 3. An answer fills the node's single output (as typed text, or as
JSON for non-String outputs), or is a JSON object naming each output when
the node has several.

On success the final node's outputs are printed, one "name: value" a line;
with --json a single JSON object describes the run instead.`,
		Example: `  weft run examples/intentqa/intentqa.wf --stubs stubs.yaml --input "What was the revenue?"
  weft run flow.wf --var limit=5 --var tags='["a","b"]' --json
  weft run flow.wf --input "summarise this" --answer "the Q3 report" --trace`,
		Args: exactFiles(1, "one workflow file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWorkflow(cmd.Context(), e, args[0], &o, cmd.Flags().Changed("input"))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.input, "input", "", "the run's input `TEXT` (input_text)")
	f.StringArrayVar(&o.vars, "var", nil, "set a parameter, or a variable's starting value: `NAME=VALUE`; VALUE is JSON when it parses as JSON of its type, else text (repeatable)")
	traceFlag(f, &o)
	f.BoolVar(&o.json, "json", false, "print the result as one JSON object")
	f.StringVar(&o.stubs, "stubs", "", "answer actions from a stubs `FILE` (YAML, as in workflow tests)")
	f.StringArrayVar(&o.answers, "answer", nil, "`TEXT` answering the next question a human node asks (repeatable, used in order)")
	f.StringVar(&o.workflow, "workflow", "", "run the workflow called `NAME` instead of the file's first")
	f.StringVar(&o.llm, "llm", "", "the model of LLM actions that name none: `SPEC` ollama:MODEL, openai:MODEL, anthropic:MODEL or replay:FILE (default $WEFT_LLM)")
	f.StringVar(&o.record, "record", "", "record every LLM exchange to `FILE` (JSON lines), to replay with --llm replay:FILE")
	f.DurationVar(&o.llmTimeout, "llm-timeout", defaultPolicy.Timeout, "bound on each LLM call (`DURATION`); failed calls are retried twice")
	f.StringVar(&o.thread, "thread", "", "run in the durable thread `ID`: every step is recorded in the store, the run can be resumed after a crash or a question, and the thread's variables carry over to its next run")
	f.StringVar(&o.embed, "embed", "", "the embedding model `SPEC` (ollama:MODEL or openai:MODEL) of an ollama-workflows file system, and of the retrieve tool, which then searches by BM25 and vectors (default $WEFT_EMBED; for ollama-workflows, else the reference's)")
	f.StringVar(&o.store, "store", "", "where threads are kept: a SQLite file `PATH` or a postgres:// URL (default $WEFT_STORE, else "+defaultStoreHint+"); without --thread, starts a new thread")
	toolFlags(f, &o)
	modelFlags(f, &o)
	return cmd
}

// prepared is a workflow opened (loaded and compiled once, by service),
// with the settings of the components a run of it gets from the flags;
// the checks before a run (check) and the run itself go through service.
type prepared struct {
	wf   *service.Workflow
	mod  *lang.Module
	plan *flow.Plan
	// tools are the built-in tools' settings, from the flags or the
	// environment.
	tools *toolset
	// owfActions: the workflow calls owf.* actions (an ollama-workflows
	// document, or a .wf converted from one).
	owfActions bool
}

// prepare opens the workflow at path (service.Open: one compile) for the
// diagnostics and advice the CLI prints, reads the stubs file and the
// tools' settings, and records in o what runSpecs needs of the plan.
// Errors are printed; the returned error carries the exit code.
func prepare(e env, path string, o *runOptions) (*prepared, error) {
	if o.contextTokens < 0 {
		return nil, usageErrorf("--context-tokens %d: want a positive number of tokens (0: the server's default)", o.contextTokens)
	}
	src, err := readSource(path)
	if err != nil {
		return nil, err
	}
	wf, err := service.Open(context.Background(), service.Source{Name: path, Data: src, Workflow: o.workflow}, nil)
	var de *service.DiagnosticsError
	var nw *service.NoWorkflowError
	switch {
	case errors.As(err, &de):
		printDiags(e.stderr, wf.Diagnostics, wf.Module)
		return nil, silent(exitFailed)
	case errors.As(err, &nw) && nw.Name != "":
		return nil, usageErrorf("%v", err)
	case err != nil:
		return nil, failed(err)
	}
	printDiags(e.stderr, wf.Diagnostics, wf.Module) // warnings
	w := wf.Plan.Workflow
	if o.stubs != "" {
		stubs, err := wftest.LoadStubs(o.stubs)
		if err != nil {
			return nil, usageErrorf("--stubs: %v", err)
		}
		warnUnusedStubs(e.stderr, w, slices.Sorted(maps.Keys(stubs)))
	}
	// Resolved here, so that a thread records where the file really is.
	o.docs, o.db = resolveData(getenvOf(e), o.docs), resolveData(getenvOf(e), o.db)
	o.owf = isOWF(path)
	owfActions := o.owf || usesOWF(w)
	if owfActions {
		warnNoModel(e, o, w)
	}
	o.bound = boundModels(wf.Plan)
	o.mcp = w
	return &prepared{wf: wf, mod: wf.Module, plan: wf.Plan, tools: newToolset(e, o), owfActions: owfActions}, nil
}

// traceFlag defines --trace on f: a line per node step, or with
// --trace=full every event (NDJSON, every event, with --json).
func traceFlag(f *pflag.FlagSet, o *runOptions) {
	f.Var(traceValue{on: &o.trace, mode: &o.traceMode}, "trace", "print a line per node step to stderr, values clipped; --trace=full prints every event whole (tokens, tool calls); with --json, every event as NDJSON")
	f.Lookup("trace").NoOptDefVal = traceSteps
}

// observers builds the observers of a run from the flags, and its status
// line (nil when none is shown).
func observers(e env, o *runOptions) (multiObserver, *statusLine) {
	var obs multiObserver
	switch {
	case o.trace && o.json:
		obs = append(obs, ndjsonTrace(e.stderr)) // Seq goes on across resumes
	case o.trace && o.traceMode == traceFull:
		obs = append(obs, engine.ObserverFunc(func(ev engine.Event) {
			if ev.Type != engine.RunWaiting { // the command prints the question, once
				fmt.Fprintln(e.stderr, termSafe(ev.String(), false))
			}
		}))
	case o.trace:
		obs = append(obs, newStepTracer(e.stderr))
	}
	var status *statusLine
	if e.stderrTTY && !o.trace && !o.json {
		status = newStatusLine(e.stderr, e.clock(), e.width)
		obs = append(obs, status)
	}
	return obs, status
}

// runWorkflow is `weft run`.
func runWorkflow(ctx context.Context, e env, path string, o *runOptions, inputSet bool) error {
	p, err := prepare(e, path, o)
	if err != nil {
		return err
	}
	if o.thread != "" || o.store != "" {
		params, init, err := runParams(p.plan, o, inputSet)
		if err != nil {
			return err
		}
		return runInThread(ctx, e, path, o, p, params, init)
	}
	specs, err := runSpecs(e, o, p.tools, p.owfActions, true)
	if err != nil {
		return err
	}
	svc, closeSvc, err := newService(e, o, memory.New(), specs, nil)
	if err != nil {
		return err
	}
	defer closeSvc()
	if err := p.check(ctx, e, o, svc, specs); err != nil {
		return err
	}
	params, init, err := runParams(p.plan, o, inputSet)
	if err != nil {
		return err
	}
	wf := p.wf
	input := make(map[string]flow.Value, len(params)+len(init))
	maps.Copy(input, params)
	maps.Copy(input, init)
	obs, status := observers(e, o)
	res, err := withStatus(status, e.tick, func() (*service.Result, error) {
		return svc.Run(ctx, service.StartRequest{Workflow: wf, Components: specs.components, ContextTokens: o.contextTokens, Input: input, Observer: obs.observer()})
	})
	if err != nil && res == nil {
		return report(e, o, nil, err)
	}
	// Each Continue takes the Result the last one returned: a Result is
	// continued once (engine.ErrStale).
	cur := res
	res, err = answerLoop(ctx, e, o, wf.Plan, res, err, func(id string, out map[string]flow.Value) (*service.Result, error) {
		return withStatus(status, e.tick, func() (*service.Result, error) {
			next, err := svc.Continue(ctx, cur, []service.Answer{{ID: id, Values: out}}, obs.observer())
			if next != nil {
				cur = next
			}
			return next, err
		})
	})
	return report(e, o, res, err)
}

// answerLoop answers the questions of a waiting run, from --answer values
// or, on a terminal, from stdin, resuming it with resume after each. It
// returns the run's result once it no longer waits, or an exit error when
// it waits and nothing can answer (after printing the question).
func answerLoop(ctx context.Context, e env, o *runOptions, plan *flow.Plan, res *service.Result, err error, resume func(id string, out map[string]flow.Value) (*service.Result, error)) (*service.Result, error) {
	var stdin *bufio.Reader
	if e.stdinTTY {
		stdin = bufio.NewReader(e.stdin)
	}
	for res != nil && res.Status == engine.Waiting && len(res.Waiting) > 0 {
		p := res.Waiting[0]
		pn := service.FindNode(plan, p.Node)
		if pn == nil {
			return res, internal(fmt.Errorf("run waits at unknown node %s", p.Node))
		}
		var out map[string]flow.Value
		switch {
		case len(o.answers) > 0:
			text := o.answers[0]
			o.answers = o.answers[1:]
			if out, err = service.ParseAnswer(pn, text); err != nil {
				return res, usageErrorf("--answer %q for %s: %v", text, p.Node, err)
			}
		case stdin != nil:
			out, err = ask(ctx, e.stderr, stdin, pn, p)
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(e.stderr)
				return res, waiting(e, o, res)
			}
			if err != nil {
				return res, failed(fmt.Errorf("waiting for an answer at %s: %w", p.Node, err))
			}
		default:
			return res, waiting(e, o, res)
		}
		res, err = resume(p.ID, out)
		if err != nil && res != nil && res.Status == engine.Waiting {
			return res, internal(fmt.Errorf("resuming %s: %w", p.Node, err))
		}
	}
	return res, err
}

// report prints a run's result and returns its exit error.
func report(e env, o *runOptions, res *service.Result, err error) error {
	var xe *exitError
	if errors.As(err, &xe) {
		return err
	}
	printNotices(e.stderr, res)
	if res == nil {
		if err != nil {
			if o.owf {
				err = owf.Explain(err)
			}
			return failed(err)
		}
		return internal(errors.New("the engine returned no result"))
	}
	if o.json {
		if werr := writeResultJSON(e.stdout, res); werr != nil {
			return internal(werr)
		}
	}
	switch res.Status {
	case engine.Completed:
		if !o.json && o.owf {
			// The return value, as the reference's execute returns it.
			out := res.Output("result").Text()
			if !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			fmt.Fprint(e.stdout, out)
			return nil
		}
		if !o.json {
			for _, nv := range res.Outputs {
				fmt.Fprintf(e.stdout, "%s: %s\n", nv.Name, nv.Value.Text())
			}
		}
		return nil
	case engine.Failed, engine.Cancelled:
		if err == nil {
			err = res.Err
		}
		if errors.Is(err, engine.ErrThreadAdvanced) && res.Thread != "" {
			err = fmt.Errorf("%w. See where it is with: %s", err, resumeHint(o.store, "threads", "show", res.Thread))
		}
		if o.owf {
			err = owf.Explain(err)
		}
		var ie *engine.InputError
		if errors.As(err, &ie) {
			return &exitError{code: exitUsage, err: err}
		}
		return failed(err)
	}
	return internal(fmt.Errorf("the run ended in state %s", res.Status))
}

// waiting reports a run that waits for an answer no one can give here,
// and exits with code 3.
func waiting(e env, o *runOptions, res *service.Result) error {
	printNotices(e.stderr, res)
	if o.json {
		if err := writeResultJSON(e.stdout, res); err != nil {
			return internal(err)
		}
	} else {
		for _, p := range res.Waiting {
			// The question may come from a model or the store: escaped.
			node, q := termSafe(p.Node, false), termSafe(p.Question.Text(), true)
			if res.Thread != "" {
				fmt.Fprintf(e.stdout, "waiting at %s (question %s): %s\n", node, termSafe(p.ID, false), q)
			} else {
				fmt.Fprintf(e.stdout, "waiting at %s: %s\n", node, q)
			}
		}
	}
	if res.Thread != "" {
		how := resumeHint(o.store, "resume", res.Thread) + " --answer TEXT"
		if len(res.Waiting) > 1 {
			how = resumeHint(o.store, "resume", res.Thread) + " --id ID --answer TEXT, for each question"
		}
		return &exitError{code: exitWaiting, err: fmt.Errorf("thread %s waits for an answer at %s; answer it with: %s", res.Thread, waitingNodes(res), how)}
	}
	return &exitError{code: exitWaiting, err: fmt.Errorf("the run is waiting for an answer at %s; pass --answer TEXT to give one", res.Waiting[0].Node)}
}

// runParams builds the run's parameters from --input and --var, and the
// starting values of the variables --var names. Unknown names, values that
// do not fit the parameter's or variable's type and missing required
// parameters are usage errors.
func runParams(plan *flow.Plan, o *runOptions, inputSet bool) (params, init map[string]flow.Value, err error) {
	params = map[string]flow.Value{}
	if inputSet {
		params[flow.InputText] = flow.StringValue(o.input)
	}
	var pnames, vnames []string
	for _, p := range plan.Params {
		pnames = append(pnames, p.Name)
	}
	for _, v := range plan.Vars {
		vnames = append(vnames, v.Name)
	}
	for _, kv := range o.vars {
		name, text, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, nil, usageErrorf("--var %q: want NAME=VALUE", kv)
		}
		p, what := plan.Param(name), "parameter"
		if p == nil {
			p, what = plan.Var(name), "variable"
		}
		if p == nil {
			known := "parameters: " + strings.Join(pnames, ", ")
			if len(vnames) > 0 {
				known += "; variables: " + strings.Join(vnames, ", ")
			}
			return nil, nil, usageErrorf("--var %s: workflow %s has no parameter or variable %s%s (%s)", kv, plan.Workflow.Name, name, flow.Suggest(name, append(slices.Clone(pnames), vnames...)), known)
		}
		if name == flow.InputText && inputSet {
			return nil, nil, usageErrorf("--var %s: input_text is already set by --input", kv)
		}
		v, err := service.ParseValue(text, p.Type)
		if err != nil {
			return nil, nil, usageErrorf("--var %s: %s %s (%s): %v", kv, what, name, p.Type, err)
		}
		if what == "parameter" {
			params[name] = v
			continue
		}
		if init == nil {
			init = map[string]flow.Value{}
		}
		init[name] = v
	}
	for _, p := range plan.Params {
		if _, ok := params[p.Name]; !ok && p.Default == nil && p.Name != flow.InputText {
			return nil, nil, usageErrorf("parameter %s (%s) is required: pass --var %s=VALUE", p.Name, p.Type, p.Name)
		}
	}
	return params, init, nil
}

// ask prints the question of a waiting node to w and reads answers from r
// until one fits the node's outputs. It returns io.EOF when stdin ends.
func ask(ctx context.Context, w io.Writer, r *bufio.Reader, pn *flow.PlanNode, p service.Question) (map[string]flow.Value, error) {
	fmt.Fprintf(w, "%s asks: %s\n", p.Node, p.Question.Text())
	if len(pn.Outputs) > 1 {
		fmt.Fprintf(w, "(answer with a JSON object: %s)\n", service.OutputList(pn))
	}
	for {
		fmt.Fprint(w, "> ")
		line, err := readLine(ctx, r)
		if err != nil {
			return nil, err
		}
		out, perr := service.ParseAnswer(pn, line)
		if perr == nil {
			return out, nil
		}
		fmt.Fprintf(w, "weft: %v; try again\n", perr)
	}
}

// readLine reads one line, without its line end; it gives up when ctx
// ends. A last line without a line end counts; io.EOF means no more input.
func readLine(ctx context.Context, r *bufio.Reader) (string, error) {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := r.ReadString('\n')
		ch <- result{s, err}
	}()
	select {
	case x := <-ch:
		if x.err != nil && (x.s == "" || !errors.Is(x.err, io.EOF)) {
			return "", x.err
		}
		return strings.TrimRight(x.s, "\r\n"), nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// withStatus runs fn with the status line ticking (when there is one) and
// clears the line afterwards.
func withStatus(s *statusLine, tick time.Duration, fn func() (*service.Result, error)) (*service.Result, error) {
	if s == nil {
		return fn()
	}
	defer s.Clear()
	if tick <= 0 {
		return fn()
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.Tick()
			case <-done:
				return
			}
		}
	}()
	defer wg.Wait()
	defer close(done)
	return fn()
}

// multiObserver sends each event to several observers.
type multiObserver []engine.Observer

// observer returns o as an engine.Observer, or nil when it is empty so
// that the engine records no events.
func (o multiObserver) observer() engine.Observer {
	switch len(o) {
	case 0:
		return nil
	case 1:
		return o[0]
	}
	return o
}

// Observe passes e to every observer.
func (o multiObserver) Observe(e engine.Event) {
	for _, x := range o {
		x.Observe(e)
	}
}

// ndjsonTrace writes each event as one JSON line.
func ndjsonTrace(w io.Writer) engine.Observer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return engine.ObserverFunc(func(e engine.Event) {
		if err := enc.Encode(e); err != nil {
			fmt.Fprintf(w, "{\"type\":\"trace_error\",\"error\":%q}\n", err.Error())
		}
	})
}

// writeResultJSON writes the --json form of a run's result: the
// service's Result, indented.
func writeResultJSON(w io.Writer, res *service.Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// resultOf converts an engine result for printing; nil stays nil.
func resultOf(res *engine.Result) *service.Result {
	if res == nil {
		return nil
	}
	return service.NewResult(res)
}
