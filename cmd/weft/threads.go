package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/internal/termtext"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
	"github.com/weftlang/weft/store/sqlite"
)

// defaultStoreHint is where threads are kept when neither --store nor
// $WEFT_STORE says.
const defaultStoreHint = "$XDG_DATA_HOME/weft/threads.db"

// envStore names the environment variable of the default store.
const envStore = "WEFT_STORE"

// envLeaseTTL is the environment variable that sets how long the lease a
// run or resume takes on its thread lasts unless renewed (a Go duration;
// default defaultLeaseTTL): a killed process holds its thread that long.
const envLeaseTTL = "WEFT_LEASE_TTL"

// defaultLeaseTTL is the CLI's lease TTL: short, so that `weft resume` of
// a killed process's thread waits little; renewed every third of it.
const defaultLeaseTTL = 10 * time.Second

// leaseTTL is $WEFT_LEASE_TTL, else defaultLeaseTTL.
func leaseTTL(e env) (time.Duration, error) {
	ttl := defaultLeaseTTL
	if v := getenvOf(e)(envLeaseTTL); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, usageErrorf("$%s=%q: want a positive duration such as 10s", envLeaseTTL, v)
		}
		ttl = d
	}
	return ttl, nil
}

// Thread labels an older weft kept instead of a run spec: resume reads
// them from such a thread, and gives it a spec.
const (
	metaFile     = "file"
	metaWorkflow = "workflow"
	metaStubs    = "stubs"
	metaLLM      = "llm"
	metaDocs     = "docs"
	metaES       = "es"
	metaEmbed    = "embed"
	metaDB       = "db" // without its password: PGPASSWORD or ~/.pgpass supplies it on resume
)

// storeSpec resolves the store: --store, else $WEFT_STORE, else a SQLite
// file in the user's data directory.
func storeSpec(e env, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	getenv := getenvOf(e)
	if s := getenv(envStore); s != "" {
		return s, nil
	}
	dir := getenv("XDG_DATA_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", usageErrorf("no store: pass --store PATH (a SQLite file) or a postgres:// URL, or set $%s", envStore)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "weft", "threads.db"), nil
}

// openStore opens the store a spec names: a postgres:// or postgresql://
// URL, or a SQLite file, created with its directory when missing if create
// is set. Commands that only look threads up do not create it: a missing
// SQLite file is a usage error that says no store is there. A store that
// cannot be opened is exit code 4 (storeFailed).
func openStore(ctx context.Context, e env, flag string, create bool) (store.Store, string, error) {
	spec, err := storeSpec(e, flag)
	if err != nil {
		return nil, "", err
	}
	if strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://") {
		s, err := postgres.Open(ctx, spec)
		if err != nil {
			return nil, spec, storeFailed(fmt.Errorf("opening the store %s: %w", redact.DSN(spec), err))
		}
		return s, redact.DSN(spec), nil
	}
	path := strings.TrimPrefix(spec, "sqlite:")
	if !create {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, path, usageErrorf("no store at %s: no thread has been recorded there (weft run --thread ID --store %s creates it)", path, shellQuote(path))
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, path, storeFailed(fmt.Errorf("opening the store %s: %w", path, err))
	}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, path, storeFailed(fmt.Errorf("opening the store %s: %w", path, err))
	}
	return s, path, nil
}

// storeFailed is the exit error of a store that cannot be opened, read or
// written, or whose records are damaged: exit code 4, as docs/cli.md
// says. A thread or run that is not in the store is a usage error.
func storeFailed(err error) error { return exitFor(err, internal) }

// exitFor gives err its exit code: its own if it has one, a usage error
// for a thread or run that is not in the store, else what other makes of
// it.
func exitFor(err error, other func(error) error) error {
	var xe *exitError
	switch {
	case errors.As(err, &xe):
		return err
	case errors.Is(err, store.ErrNotFound):
		return usageErrorf("%v", err)
	}
	return other(err)
}

// resumeHint is a `weft ARGS...` command line to paste: each word quoted
// for a POSIX shell where it needs it, and --store STORE added when the
// command named its store with --store (the default store, or
// $WEFT_STORE's, needs none). A URL's password is left out.
func resumeHint(storeFlag string, args ...string) string {
	words := []string{"weft"}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	if storeFlag != "" {
		if strings.Contains(storeFlag, "://") {
			storeFlag = withoutPassword(storeFlag)
		}
		words = append(words, "--store", shellQuote(storeFlag))
	}
	return strings.Join(words, " ")
}

// shellQuote returns s as one word of a POSIX shell: as is when it holds
// only letters, digits and -_./:@%+=, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// withoutPassword removes the password of a database URL (a file path is
// returned as is, made absolute).
func withoutPassword(dsn string) string {
	if !strings.Contains(dsn, "://") {
		if abs, err := filepath.Abs(dsn); err == nil {
			return abs
		}
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	u.User = url.User(u.User.Username())
	return u.String()
}

func newThreadID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t-" + hex.EncodeToString(b[:])
}

// runInThread is `weft run --thread`: the run is recorded step by step,
// and the thread keeps the run's spec (the workflow's source and the
// components the flags configure), so that resume needs only the thread.
func runInThread(ctx context.Context, e env, path string, o *runOptions, p *prepared, params, init map[string]flow.Value) error {
	st, where, err := openStore(ctx, e, o.store, true)
	if err != nil {
		return err
	}
	defer st.Close()
	specs, err := runSpecs(e, o, p.tools, p.owfActions, true)
	if err != nil {
		return err
	}
	svc, closeSvc, err := newService(e, o, st, specs, nil)
	if err != nil {
		return err
	}
	defer closeSvc()
	if err := p.check(ctx, e, o, svc, specs); err != nil {
		return err
	}
	wf := p.wf
	id := o.thread
	if id == "" {
		id = newThreadID()
		fmt.Fprintf(e.stderr, "weft: thread %s (in %s)\n", id, where)
	}
	input := make(map[string]flow.Value, len(params)+len(init))
	maps.Copy(input, params)
	maps.Copy(input, init)
	obs, status := observers(e, o)
	res, err := withStatus(status, e.tick, func() (*service.Result, error) {
		return svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: id, Components: specs.components, ContextTokens: o.contextTokens, Input: input, Observer: obs.observer()})
	})
	if err != nil && res == nil {
		var te *engine.ThreadError
		if errors.As(err, &te) && te.Thread == id {
			switch {
			case errors.Is(err, engine.ErrWaiting):
				return failed(fmt.Errorf("%w: %s --answer TEXT", err, resumeHint(o.store, "resume", id)))
			case te.Status == engine.Running:
				return failed(fmt.Errorf("%w: %s", err, resumeHint(o.store, "resume", id)))
			}
		}
		return threadErr(err)
	}
	res, err = answerLoop(ctx, e, o, wf.Plan, res, err, func(qid string, out map[string]flow.Value) (*service.Result, error) {
		return withStatus(status, e.tick, func() (*service.Result, error) {
			return svc.Resume(ctx, service.ResumeRequest{Thread: id, Answers: []service.Answer{{ID: qid, Values: out}}, Observer: obs.observer()})
		})
	})
	return report(e, o, res, err)
}

// threadErr maps the engine's thread errors to exit codes: a missing
// thread is a usage error, a thread in the wrong state a failure.
func threadErr(err error) error { return exitFor(err, failed) }

func waitingNodes(res *service.Result) string {
	var names []string
	for _, p := range res.Waiting {
		names = append(names, p.Node)
	}
	return strings.Join(names, ", ")
}

// resumeOptions are the flags of `weft resume`.
type resumeOptions struct {
	runOptions
	ids  []string
	file string
}

func newResumeCmd(e env) *cobra.Command {
	var o resumeOptions
	cmd := &cobra.Command{
		Use:   "resume THREAD",
		Short: "Continue a thread's run: answer its questions, or finish a run cut short",
		Long: `Resume continues the last run of a thread kept in the store, in this process.

A run that waits for a person takes the answers given with --answer (with
--id ID before each when the run asks several questions, as listed by
'weft threads show'); the human nodes complete with them and no earlier node
runs again. A run whose process stopped before it ended (a crash, a kill)
continues from its last recorded step: the steps that were in flight run
again, with the same idempotency keys.

The workflow file, the stubs file, the --llm, --embed, --docs, --db and
--es (URLs without their password) of the thread's first run are used again unless given here.`,
		Example: `  weft resume support-42 --answer "fiscal 2019"
  weft resume t-3f2a --id 4 --answer yes --id 5 --answer no
  weft resume batch-7            # after a crash`,
		Args: exactFiles(1, "one thread id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			return resumeThread(cmd.Context(), e, args[0], &o, fl.Changed("stubs"), fl.Changed("llm"))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.store, "store", "", "where threads are kept: a SQLite file `PATH` or a postgres:// URL (default $WEFT_STORE, else "+defaultStoreHint+")")
	f.StringArrayVar(&o.answers, "answer", nil, "`TEXT` answering a question (repeatable; after --id ID when the run asks several)")
	f.StringArrayVar(&o.ids, "id", nil, "the `ID` of the question the next --answer answers (repeatable)")
	f.StringVar(&o.file, "file", "", "the workflow `FILE` (default: the file of the thread's first run)")
	f.StringVar(&o.stubs, "stubs", "", "answer actions from a stubs `FILE` (default: the thread's)")
	f.StringVar(&o.llm, "llm", "", "the model of LLM actions that name none: `SPEC` (default: the thread's, else $WEFT_LLM)")
	f.StringVar(&o.embed, "embed", "", "the embedding model `SPEC` of the retrieve tool and of an ollama-workflows file system (default: the thread's, else $WEFT_EMBED)")
	traceFlag(f, &o.runOptions)
	f.BoolVar(&o.json, "json", false, "print the result as one JSON object")
	f.StringVar(&o.record, "record", "", "record every LLM exchange to `FILE`")
	f.DurationVar(&o.llmTimeout, "llm-timeout", defaultPolicy.Timeout, "bound on each LLM call (`DURATION`)")
	toolFlags(f, &o.runOptions)
	modelFlags(f, &o.runOptions)
	return cmd
}

func resumeThread(ctx context.Context, e env, id string, o *resumeOptions, stubsSet, llmSet bool) error {
	if len(o.ids) > 0 && len(o.ids) != len(o.answers) {
		return usageErrorf("%d --id and %d --answer: give one --id before each --answer", len(o.ids), len(o.answers))
	}
	st, where, err := openStore(ctx, e, o.store, false)
	if err != nil {
		return err
	}
	defer st.Close()
	specs := &cliSpecs{secrets: map[string]string{}, flags: map[string]string{}, quiet: map[string]bool{}}
	svc, closeSvc, err := newService(e, &o.runOptions, st, specs, nil)
	if err != nil {
		return err
	}
	defer closeSvc()
	view, err := svc.Thread(ctx, id)
	var se *service.SpecError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return usageErrorf("no thread %s in %s", id, where)
	case errors.As(err, &se):
		// A thread an older weft recorded: its flags are labels.
		thr, terr := st.Thread(ctx, id)
		if terr != nil {
			return storeFailed(terr)
		}
		if o.file == "" && thr.Meta[metaFile] == "" {
			return usageErrorf("thread %s does not say which workflow file it runs: pass --file FILE", id)
		}
		legacyFlags(thr, o, stubsSet, llmSet)
		stubsSet, llmSet = o.stubs != "", o.llm != ""
	case err != nil:
		return threadErr(err)
	}
	// The workflow and components of the thread's spec, unless flags
	// given here replace them.
	var wf *service.Workflow
	if view != nil {
		wf = view.Workflow
	}
	override := o.file != ""
	if override {
		if wf, err = svc.Open(ctx, service.Source{Name: o.file, Workflow: o.workflow}); err != nil {
			var de *service.DiagnosticsError
			if errors.As(err, &de) && wf != nil {
				printDiags(e.stderr, de.Diagnostics, wf.Module)
				return silent(exitFailed)
			}
			return usageErrorf("--file %s: %v", o.file, err)
		}
		o.owf = wf.Format == service.FormatOWF
	} else {
		o.owf = wf.Format == service.FormatOWF
	}
	var comps []component.Spec
	if view == nil || stubsSet || llmSet || o.docs != "" || o.db != "" || o.es != "" || o.embed != "" {
		ts := &toolset{docs: resolveData(getenvOf(e), o.docs), db: resolveData(getenvOf(e), o.db), es: o.es, embed: o.embed}
		given, err := runSpecs(e, &o.runOptions, ts, o.owf && (llmSet || o.embed != ""), view == nil)
		if err != nil {
			return err
		}
		maps.Copy(specs.secrets, given.secrets)
		maps.Copy(specs.flags, given.flags)
		maps.Copy(specs.quiet, given.quiet)
		var stored []component.Spec
		if view != nil {
			stored = view.Spec.Components
		}
		comps = replaceSpecs(stored, given.components)
	}
	var ts *engine.ThreadState
	if view != nil {
		ts = view.State
	} else {
		th := &engine.Threads{Store: st}
		if ts, err = th.Load(ctx, id); err != nil {
			return storeFailed(err)
		}
	}
	plan := wf.Plan
	req := service.ResumeRequest{Thread: id, Components: comps}
	if override || view == nil {
		req.Workflow = wf
	}
	resume := func(answers []service.Answer, obs engine.Observer) (*service.Result, error) {
		r := req
		r.Answers, r.Observer = answers, obs
		return svc.Resume(ctx, r)
	}
	var answers []service.Answer
	if ts.Status() == engine.Waiting {
		asks := ts.Waiting()
		node := func(qid string) (*flow.PlanNode, error) {
			for _, t := range asks {
				if t.QuestionID() != qid {
					continue
				}
				if pn := service.FindNode(plan, ts.NodeOf(t)); pn != nil {
					return pn, nil
				}
				return nil, failed(fmt.Errorf("thread %s waits at node %s, which its workflow no longer has: resume it with the workflow it started with (--file)", id, ts.NodeOf(t)))
			}
			return nil, usageErrorf("thread %s asks no question %s%s", id, qid, questionList(ts))
		}
		switch {
		case len(o.ids) > 0:
			for i, qid := range o.ids {
				pn, err := node(qid)
				if err != nil {
					return err
				}
				out, err := service.ParseAnswer(pn, o.answers[i])
				if err != nil {
					return usageErrorf("--answer %q for question %s (%s): %v", o.answers[i], qid, pn.Name, err)
				}
				answers = append(answers, service.Answer{ID: qid, Values: out})
			}
			o.answers = nil
		case len(o.answers) > 0 && len(asks) > 1:
			return usageErrorf("thread %s asks %d questions: answer each with --id ID --answer TEXT%s", id, len(asks), questionList(ts))
		case len(o.answers) > 0:
			qid := asks[0].QuestionID()
			pn, err := node(qid)
			if err != nil {
				return err
			}
			out, err := service.ParseAnswer(pn, o.answers[0])
			if err != nil {
				return usageErrorf("--answer %q for %s: %v", o.answers[0], pn.Name, err)
			}
			answers = append(answers, service.Answer{ID: qid, Values: out})
			o.answers = o.answers[1:]
		default:
			pend, err := st.Pending(ctx, id)
			if err != nil {
				return storeFailed(err)
			}
			questions := map[string]flow.Value{}
			for _, pq := range pend {
				var q flow.Value
				if err := json.Unmarshal(pq.Question, &q); err != nil {
					return storeFailed(&store.CorruptError{ThreadID: id, Field: "pending " + pq.ID + " question", Detail: err.Error()})
				}
				questions[pq.ID] = q
			}
			res := &service.Result{Status: engine.Waiting, Thread: id, Run: ts.RunNumber, Outputs: service.Values{}, Vars: service.Values{}, Path: []string{}, Fallbacks: []service.Notice{}, Notices: []service.Notice{}}
			for _, t := range asks {
				res.Waiting = append(res.Waiting, service.Question{ID: t.QuestionID(), Node: ts.NodeOf(t), Question: questions[t.QuestionID()]})
			}
			if e.stdinTTY && len(asks) == 1 {
				// Ask on the terminal, as run does.
				res, err := answerLoop(ctx, e, &o.runOptions, plan, res, nil, func(qid string, out map[string]flow.Value) (*service.Result, error) {
					return resume([]service.Answer{{ID: qid, Values: out}}, nil)
				})
				return report(e, &o.runOptions, res, err)
			}
			return waiting(e, &o.runOptions, res)
		}
	} else if len(o.answers) > 0 {
		return noQuestion(ctx, st, id, ts, o.store)
	}
	obs, status := observers(e, &o.runOptions)
	res, err := withStatus(status, e.tick, func() (*service.Result, error) {
		return resume(answers, obs.observer())
	})
	if err != nil && res == nil {
		return threadErr(err)
	}
	res, err = answerLoop(ctx, e, &o.runOptions, plan, res, err, func(qid string, out map[string]flow.Value) (*service.Result, error) {
		return withStatus(status, e.tick, func() (*service.Result, error) {
			return resume([]service.Answer{{ID: qid, Values: out}}, obs.observer())
		})
	})
	return report(e, &o.runOptions, res, err)
}

// legacyFlags reads the flags an older weft kept as a thread's labels
// into o, where o does not set them: resuming such a thread gives it a
// run spec.
func legacyFlags(thr *store.Thread, o *resumeOptions, stubsSet, llmSet bool) {
	if o.file == "" {
		o.file = thr.Meta[metaFile]
	}
	if o.workflow == "" {
		o.workflow = thr.Meta[metaWorkflow]
	}
	if !stubsSet {
		o.stubs = thr.Meta[metaStubs]
	}
	if !llmSet {
		o.llm = thr.Meta[metaLLM]
	}
	for _, kv := range []struct {
		dst *string
		key string
	}{{&o.docs, metaDocs}, {&o.db, metaDB}, {&o.es, metaES}, {&o.embed, metaEmbed}} {
		if *kv.dst == "" {
			*kv.dst = thr.Meta[kv.key]
		}
	}
}

// replaceSpecs returns the stored components with those given in their
// place: a given component replaces the stored ones of its id, and a
// model (llm.*) every stored model.
func replaceSpecs(stored, given []component.Spec) []component.Spec {
	out := make([]component.Spec, 0, len(stored)+len(given))
	for _, sp := range stored {
		replaced := slices.ContainsFunc(given, func(g component.Spec) bool {
			return g.ID == sp.ID || strings.HasPrefix(g.ID, "llm.") && strings.HasPrefix(sp.ID, "llm.")
		})
		if !replaced {
			out = append(out, sp)
		}
	}
	out = append(out, given...)
	// Stubs answer in place of every other action: they load last.
	slices.SortStableFunc(out, func(a, b component.Spec) int {
		return cmp.Compare(boolInt(a.ID == "action.stubs"), boolInt(b.ID == "action.stubs"))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// noQuestion is the error of answers given to a thread that asks no
// question. When its questions are still pending, or its run's row still
// says it waits, another process answered them first and holds the
// thread: say so, rather than suggest resuming without answers, which
// would run the thread beside that process.
func noQuestion(ctx context.Context, st store.Store, id string, ts *engine.ThreadState, storeFlag string) error {
	switch ts.Status() {
	case engine.Completed, engine.Failed, engine.Cancelled:
		return usageErrorf("thread %s asks no question: its run %d has ended (%s); another process may have answered it. See it with: %s", id, ts.RunNumber, ts.Status(), resumeHint(storeFlag, "threads", "show", id))
	}
	pend, err := st.Pending(ctx, id)
	if err != nil {
		return storeFailed(err)
	}
	r, err := st.Run(ctx, ts.Run)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return storeFailed(err)
	}
	if len(pend) > 0 || err == nil && r.Status != store.Running {
		return failed(fmt.Errorf("thread %s asks no question: %w, answering its question first; it holds the thread (it is running the run on, or it stopped before the run ended). See where it is with: %s", id, engine.ErrThreadAdvanced, resumeHint(storeFlag, "threads", "show", id)))
	}
	return usageErrorf("thread %s asks no question: its run did not end (another process runs it, or it stopped in the middle); once no other process runs it, continue it without --answer: %s", id, resumeHint(storeFlag, "resume", id))
}

func questionList(ts *engine.ThreadState) string {
	var b strings.Builder
	b.WriteString(" (questions:")
	for _, t := range ts.Waiting() {
		fmt.Fprintf(&b, " %d at %s", t.ID, termSafe(ts.NodeOf(t), false))
	}
	b.WriteString(")")
	return b.String()
}

// threadsOptions are the flags shared by the threads subcommands.
type threadsOptions struct {
	store string
	json  bool
}

func newThreadsCmd(e env) *cobra.Command {
	var o threadsOptions
	cmd := &cobra.Command{
		Use:   "threads",
		Short: "List, inspect, fork and prune the threads in the store",
		Long: `Threads works on the durable threads that 'weft run --thread' records: list
them, show one's state and pending questions, read its history step by step,
fork a new thread from any step (time travel, with edits), and prune old runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(e.stderr)
			_ = cmd.Usage()
			return silent(exitUsage)
		},
	}
	cmd.PersistentFlags().StringVar(&o.store, "store", "", "where threads are kept: a SQLite file `PATH` or a postgres:// URL (default $WEFT_STORE, else "+defaultStoreHint+")")
	cmd.PersistentFlags().BoolVar(&o.json, "json", false, "print JSON")
	cmd.AddCommand(threadsList(e, &o), threadsShow(e, &o), threadsHistory(e, &o), threadsFork(e, &o), threadsPrune(e, &o))
	return cmd
}

// withService opens the store for a threads subcommand, and a Service
// on it that builds no component: the threads subcommands read and edit
// what the store keeps.
func withService(ctx context.Context, e env, o *threadsOptions, fn func(svc *service.Service, st store.Store) error) error {
	st, _, err := openStore(ctx, e, o.store, false)
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		return internal(err)
	}
	defer svc.Close()
	return fn(svc, st)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return internal(err)
	}
	return nil
}

func threadsList(e env, o *threadsOptions) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List threads, most recently updated first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return withService(ctx, e, o, func(svc *service.Service, _ store.Store) error {
				ths, err := svc.Threads(ctx, store.ListOptions{Limit: limit})
				if err != nil {
					return storeFailed(err)
				}
				if o.json {
					return writeJSON(e.stdout, ths)
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "THREAD\tWORKFLOW\tRUNS\tLAST RUN\tUPDATED")
				for _, t := range ths {
					status := cmp.Or(t.Status, "-")
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", termSafe(t.ID, false), termSafe(t.Workflow, false), t.Runs, termSafe(status, false), t.Updated.Local().Format(time.DateTime))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "list at most `N` threads")
	return cmd
}

func threadsShow(e env, o *threadsOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "show THREAD",
		Short: "Show a thread's state: its last run, variables and pending questions",
		Args:  exactFiles(1, "one thread id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return withService(ctx, e, o, func(svc *service.Service, _ store.Store) error {
				out, err := svc.State(ctx, args[0])
				if err != nil {
					return storeFailed(err)
				}
				if o.json {
					return writeJSON(e.stdout, out)
				}
				// What the store holds is printed escaped (termSafe).
				var w strings.Builder
				fmt.Fprintf(&w, "thread:   %s\nworkflow: %s\n", termSafe(out.ID, false), termSafe(out.Workflow, false))
				if file := out.Meta[metaFile]; file != "" {
					fmt.Fprintf(&w, "file:     %s\n", termSafe(file, false))
				}
				if out.Forked != nil {
					fmt.Fprintf(&w, "forked:   from %s at record %d\n", termSafe(out.Forked.Thread, false), out.Forked.Seq)
				}
				fmt.Fprintf(&w, "run:      %d (%s), %d records\n", out.Run, out.Status, out.Records)
				if len(out.Vars) > 0 {
					fmt.Fprintln(&w, "variables:")
					for _, v := range out.Vars {
						fmt.Fprintf(&w, "  %s = %s\n", termSafe(v.Name, false), termSafe(clip(v.Value.String(), 100), false))
					}
				}
				for _, q := range out.Pending {
					fmt.Fprintf(&w, "question %s at %s: %s\n", termSafe(q.ID, false), termSafe(q.Node, false), termSafe(q.Question.Text(), true))
				}
				switch out.Status {
				case engine.Waiting.String():
					fmt.Fprintf(&w, "answer with: %s --answer TEXT\n", termSafe(resumeHint(o.store, "resume", out.ID), false))
				case engine.Running.String():
					fmt.Fprintf(&w, "the run did not finish: another process may be running it; if none is, continue it with: %s\n", termSafe(resumeHint(o.store, "resume", out.ID), false))
				}
				_, err = fmt.Fprint(e.stdout, w.String())
				return err
			})
		},
	}
}

// clip cuts s to at most n bytes, "..." included, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n-3, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// termSafe returns s with what a terminal would act on, or show garbled,
// escaped as Go escapes it: bytes that are not UTF-8 as \xNN, control
// characters (escape sequences, carriage returns, bells) and format
// characters (bidi overrides) as \x1b, \r, \u202e. Newlines and tabs stay
// when multiline is set, and are escaped too otherwise. What the store
// holds (a question, a node name, a thread id) may come from anywhere:
// a model's output, a hand-edited database.
func termSafe(s string, multiline bool) string { return termtext.Safe(s, multiline) }

func threadsHistory(e env, o *threadsOptions) *cobra.Command {
	var from int64
	cmd := &cobra.Command{
		Use:   "history THREAD",
		Short: "Show a thread's records, one per step: what each step wrote and where it went",
		Long: `History prints a thread's log: one line per record, numbered (the number
'weft threads fork --at' takes), with the run and step, the node whose task
completed, the values it wrote (name+=[...] for an append), the nodes it
started, the run's status after it, and the record's size.`,
		Args: exactFiles(1, "one thread id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return withService(ctx, e, o, func(svc *service.Service, _ store.Store) error {
				hist, err := svc.History(ctx, args[0], from)
				if err != nil {
					return threadErr(err)
				}
				if o.json {
					return writeJSON(e.stdout, hist)
				}
				for _, h := range hist {
					fmt.Fprintln(e.stdout, termSafe(historyLine(h), false))
				}
				return nil
			})
		},
	}
	cmd.Flags().Int64Var(&from, "from", 1, "start at record `N`")
	return cmd
}

func historyLine(h service.HistoryEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%-4d run %d step %-3d ", h.Seq, h.Run, h.Step)
	switch h.Kind {
	case service.HistoryStep, service.HistoryAnswer:
		node := h.Node
		if h.Item > 0 {
			node += fmt.Sprintf("[%d]", h.Item)
		}
		if h.Kind == service.HistoryAnswer {
			node += " (answered)"
		}
		b.WriteString(node)
	default:
		b.WriteString("(" + string(h.Kind) + ")")
	}
	var parts []string
	for _, c := range h.Changes {
		if c.Value.IsNull() && !c.Append {
			continue
		}
		op := "="
		if c.Append {
			op = "+="
		}
		parts = append(parts, c.Name+op+clip(c.Value.String(), 40))
	}
	if len(parts) > 0 {
		b.WriteString("  " + clip(strings.Join(parts, ", "), 160))
	}
	if len(h.Next) > 0 {
		b.WriteString("  -> " + strings.Join(h.Next, ", "))
	}
	if h.Error != "" {
		b.WriteString("  error: " + clip(h.Error, 120))
	}
	fmt.Fprintf(&b, "  [%s, %d B]", h.Status, h.Bytes)
	return b.String()
}

func threadsFork(e env, o *threadsOptions) *cobra.Command {
	var (
		at   int64
		to   string
		sets []string
	)
	cmd := &cobra.Command{
		Use:   "fork THREAD --at N [--set NAME=VALUE ...] [--to NEW]",
		Short: "Start a new thread from any record of a thread, with edits (time travel)",
		Long: `Fork copies a thread's state right after record N (see 'weft threads
history') into a new thread, setting variables with --set. A run that was in
the middle of its steps there continues with 'weft resume NEW'; a waiting one
takes its answer with 'weft resume NEW --answer TEXT'; after an ended run,
'weft run FILE --thread NEW' starts the next. The source thread is unchanged.`,
		Args: exactFiles(1, "one thread id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("at") {
				return usageErrorf("fork needs --at N, a record number from 'weft threads history %s'", args[0])
			}
			ctx := cmd.Context()
			return withService(ctx, e, o, func(svc *service.Service, st store.Store) error {
				src := args[0]
				if to == "" {
					to = fmt.Sprintf("%s-at-%d", src, at)
				}
				req := service.ForkRequest{Thread: src, At: at, To: to, SetText: map[string]string{}}
				given := map[string]string{} // each name's --set, for errors
				for _, kv := range sets {
					name, text, ok := strings.Cut(kv, "=")
					if !ok || strings.TrimSpace(name) == "" {
						return usageErrorf("--set %q: want NAME=VALUE", kv)
					}
					name = strings.TrimSpace(name)
					req.SetText[name] = text
					given[name] = kv
				}
				if len(sets) > 0 {
					wf, err := legacyWorkflow(ctx, e, st, src)
					if err != nil {
						return err
					}
					req.Workflow = wf
				}
				fr, err := svc.Fork(ctx, req)
				var ee *service.EditError
				switch {
				case errors.As(err, &ee):
					return usageErrorf("--set %s: %v", given[ee.Name], ee.Err)
				case err != nil:
					return threadErr(err)
				}
				if o.json {
					return writeJSON(e.stdout, fr)
				}
				fmt.Fprintln(e.stdout, fr.Thread)
				switch fr.Status {
				case engine.Waiting:
					fmt.Fprintf(e.stderr, "weft: %s waits for an answer: %s --answer TEXT\n", termSafe(to, false), termSafe(resumeHint(o.store, "resume", to), false))
				case engine.Running:
					fmt.Fprintf(e.stderr, "weft: continue the run with: %s\n", termSafe(resumeHint(o.store, "resume", to), false))
				default:
					fmt.Fprintf(e.stderr, "weft: its run has ended; start the next with: %s\n", termSafe(resumeHint(o.store, "run", "FILE", "--thread", to), false))
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&at, "at", 0, "the record `N` to fork after")
	f.StringVar(&to, "to", "", "the new thread's `ID` (default THREAD-at-N)")
	f.StringArrayVar(&sets, "set", nil, "set a variable, slot or parameter: `NAME=VALUE` (repeatable)")
	return cmd
}

// legacyWorkflow is, for a thread an older weft recorded (no run spec,
// its workflow file named by a label), that workflow, to type --set
// values with; nil for a thread with a spec (the Service opens the
// workflow its spec names from the store) or without a file label. A
// file that no longer opens is said on stderr, and the values are read
// as JSON, else text.
func legacyWorkflow(ctx context.Context, e env, st store.Store, id string) (*service.Workflow, error) {
	thr, err := st.Thread(ctx, id)
	if err != nil {
		return nil, threadErr(err)
	}
	file := thr.Meta[metaFile]
	if len(thr.Spec) > 0 || file == "" {
		return nil, nil
	}
	wf, err := service.Open(ctx, service.Source{Name: file, Workflow: thr.Meta[metaWorkflow]}, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "weft: the values of --set are not typed: the workflow of thread %s does not open: %s\n", termSafe(id, false), termSafe(err.Error(), false))
		return nil, nil
	}
	return wf, nil
}

func threadsPrune(e env, o *threadsOptions) *cobra.Command {
	var (
		keep  int
		older time.Duration
	)
	cmd := &cobra.Command{
		Use:   "prune [THREAD]",
		Short: "Remove old runs: keep each thread's last K runs, or drop what is older than a TTL",
		Long: `Prune removes runs and their records. With --keep K it keeps each thread's
last K runs; with --older-than DURATION it removes runs last updated before
then, and, without a THREAD, whole threads not updated since. A thread's last
run, and the snapshot the kept records start from, are always kept.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if keep <= 0 && older <= 0 {
				return usageErrorf("prune needs --keep K or --older-than DURATION")
			}
			ctx := cmd.Context()
			return withService(ctx, e, o, func(svc *service.Service, _ store.Store) error {
				policy := service.PrunePolicy{KeepRuns: keep}
				if older > 0 {
					policy.Before = time.Now().Add(-older)
				}
				if len(args) == 1 {
					policy.Thread = args[0]
				}
				res, err := svc.Prune(ctx, policy)
				if err != nil {
					if res != nil && *res != (service.PruneResult{}) {
						err = fmt.Errorf("%w (before it, removed %s from %s and deleted %s)", err, plural(res.RecordsRemoved, "record"), plural(res.ThreadsPruned, "thread"), plural(res.ThreadsDeleted, "whole thread"))
					}
					return storeFailed(err)
				}
				if o.json {
					return writeJSON(e.stdout, res)
				}
				fmt.Fprintf(e.stdout, "removed %s from %s; deleted %s\n", plural(res.RecordsRemoved, "record"), plural(res.ThreadsPruned, "thread"), plural(res.ThreadsDeleted, "whole thread"))
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&keep, "keep", 0, "keep each thread's last `K` runs")
	cmd.Flags().DurationVar(&older, "older-than", 0, "remove what was last updated more than `DURATION` ago (e.g. 720h)")
	return cmd
}
