package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/propagation"

	"github.com/weftlang/weft/action/kv"
	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/mcpserver"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/server/riverexec"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/postgres"
	"github.com/weftlang/weft/studio"
)

// serveOptions are the flags of `weft serve`.
type serveOptions struct {
	runOptions
	addr      string
	config    string
	apiKeyEnv string
	cors      []string
	maxBody   int64
	workers   int
	drain     time.Duration
	durable   string
	queue     string
	worker    bool // weft worker: carry out runs, serve no API
	studio    bool // weft studio: a fresh local server, its studio's address on stdout
	open      bool // weft studio: open the studio in a browser
	mcp       bool // weft mcp: serve the workflows as MCP tools on stdio
}

// defaultServeAddr is where `weft serve` listens unless told: LangGraph's
// dev server's address, so that clients find it where they look.
const defaultServeAddr = "127.0.0.1:2024"

// newServeCmd builds `weft serve`.
func newServeCmd(e env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [FILE|DIR ...]",
		Short: "Serve workflows over the LangGraph Server API",
		Long: `Serve runs the workflows given (files, or the .wf files of a directory) as a
server that speaks the LangGraph Server API: each workflow is an assistant
whose id is its name, each LangGraph thread a durable weft thread in the
store, so LangGraph clients (@langchain/langgraph-sdk, agent-chat-ui,
LangGraph Studio) run them unmodified. --config names several workflows
with their own components instead (the role of langgraph.json).

The run flags (--llm, --embed, --docs, --db, --es, ...) configure the
components every workflow uses. Threads, runs and checkpoints are kept in
--store: a run in progress when the server stops (SIGTERM, Ctrl-C, or a
crash) is picked up again by the next server and resumes from its last
recorded step. See docs/server.md.`,
		Example: `  weft serve examples/intentqa/intentqa.wf --llm ollama:llama3.2
  weft serve flows/ --store weft.db --addr 0.0.0.0:8123 --api-key-env WEFT_API_KEY
  weft serve --config weft.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serve(cmd.Context(), e, cmd, args, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", defaultServeAddr, "listen on `HOST:PORT`")
	f.StringVar(&o.store, "store", "", "where threads are kept: a SQLite file `PATH` or a postgres:// URL (default $WEFT_STORE, else "+defaultStoreHint+")")
	f.StringVar(&o.config, "config", "", "serve the workflows, components and settings of a JSON config `FILE` (docs/server.md)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "require every request (but GET /ok) to carry the API key held in the environment variable `NAME`, in its x-api-key header")
	f.StringSliceVar(&o.cors, "cors", nil, "let browser pages of these `ORIGINS` call the server (\"*\" for any; none by default)")
	f.Int64Var(&o.maxBody, "max-body", server.DefaultMaxBody, "the largest request body read, in `BYTES`")
	f.IntVar(&o.workers, "workers", server.DefaultPoolSize, "how many runs execute at once in this process (`N`); with a PostgreSQL store, 0 serves the API and only queues runs, for `weft worker` processes to carry out")
	f.StringVar(&o.queue, "queue", "", "with a PostgreSQL store, the River queue runs go to (`NAME`; default River's)")
	f.StringVar(&o.durable, "durability", "async", "when a run's steps reach the store, for runs whose request names none: `MODE` sync (each step before the next), async (in the background, LangGraph's default) or exit (with the run's end)")
	f.DurationVar(&o.drain, "drain", 30*time.Second, "on SIGTERM, how long runs in progress get to reach their next checkpoint (`DURATION`)")
	servedFlags(f, &o)
	return cmd
}

// servedFlags are the flags of weft serve and weft worker that choose the
// workflows' components.
func servedFlags(f *pflag.FlagSet, o *serveOptions) {
	f.StringVar(&o.workflow, "workflow", "", "serve the workflow called `NAME` of a file of several, instead of its first")
	f.StringVar(&o.llm, "llm", "", "the model of LLM actions that name none: `SPEC` ollama:MODEL, openai:MODEL, anthropic:MODEL or replay:FILE (default $WEFT_LLM)")
	f.DurationVar(&o.llmTimeout, "llm-timeout", defaultPolicy.Timeout, "bound on each LLM call (`DURATION`); failed calls are retried twice")
	f.StringVar(&o.embed, "embed", "", "the embedding model `SPEC` (ollama:MODEL or openai:MODEL) of the retrieve tool and of ollama-workflows files (default $WEFT_EMBED)")
	f.StringVar(&o.stubs, "stubs", "", "answer actions from a stubs `FILE` (YAML, as in workflow tests)")
	toolFlags(f, &o.runOptions)
	modelFlags(f, &o.runOptions)
}

// served is one workflow to serve, from the arguments or the config.
type served struct {
	graphID     string
	path        string
	workflow    string
	description string
	components  []component.Spec // the config's own; nil: from the flags
	ctxTokens   int
}

// serveTargets lists the workflows to serve: the config's graphs, or the
// files given (a directory gives its .wf files).
func serveTargets(args []string, o *serveOptions, cfg *serveConfig) ([]served, error) {
	if cfg != nil {
		if len(args) > 0 {
			return nil, usageErrorf("give the workflows either as arguments or in --config, not both")
		}
		var out []served
		for _, id := range cfg.graphIDs() {
			g := cfg.Graphs[id]
			comps := g.Components
			if comps == nil {
				comps = cfg.Components
			}
			out = append(out, served{graphID: id, path: g.Path, workflow: g.Workflow, description: g.Description, components: comps, ctxTokens: g.ContextTokens})
		}
		return out, nil
	}
	if len(args) == 0 {
		return nil, usageErrorf("no workflow to serve: give FILE or DIR arguments, or --config FILE")
	}
	var out []served
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, usageErrorf("%s: %v", a, errors.Unwrap(err))
		}
		if !fi.IsDir() {
			out = append(out, served{path: a, workflow: o.workflow, ctxTokens: o.contextTokens})
			continue
		}
		files, err := filepath.Glob(filepath.Join(a, "*.wf"))
		if err != nil {
			return nil, usageErrorf("%s: %v", a, err)
		}
		if len(files) == 0 {
			return nil, usageErrorf("%s: no .wf file in the directory", a)
		}
		slices.Sort(files)
		for _, f := range files {
			out = append(out, served{path: f, ctxTokens: o.contextTokens})
		}
	}
	return out, nil
}

// servedSetup is what weft serve, studio, worker and mcp build alike from
// their arguments and flags: the store, the service running the served
// workflows, and those workflows.
type servedSetup struct {
	st         store.Store
	where      string
	svc        *service.Service
	assistants []server.Assistant
	apiKey     string
	closers    []func()
}

// close releases what setupServed made, the last made first.
func (s *servedSetup) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// setupServed reads --config (which fills the flags not given), opens the
// store and each workflow with its components, builds one Service for
// them all and checks each workflow's runs against it. On error, what it
// made is released.
func setupServed(ctx context.Context, e env, cmd *cobra.Command, args []string, o *serveOptions) (_ *servedSetup, err error) {
	su := &servedSetup{}
	defer func() {
		if err != nil {
			su.close()
		}
	}()
	var cfg *serveConfig
	if o.config != "" {
		var err error
		if cfg, err = readServeConfig(o.config); err != nil {
			return nil, err
		}
		flags := cmd.Flags()
		if cfg.Store != "" && !flags.Changed("store") {
			o.store = cfg.Store
			if !filepath.IsAbs(o.store) && !strings.Contains(o.store, "://") {
				o.store = filepath.Join(cfg.dir, o.store)
			}
		}
		if cfg.Addr != "" && !flags.Changed("addr") {
			o.addr = cfg.Addr
		}
		if cfg.APIKeyEnv != "" && !flags.Changed("api-key-env") {
			o.apiKeyEnv = cfg.APIKeyEnv
		}
		if cfg.CORS != nil && !flags.Changed("cors") {
			o.cors = cfg.CORS
		}
	}
	targets, err := serveTargets(args, o, cfg)
	if err != nil {
		return nil, err
	}
	if o.apiKeyEnv != "" && !o.mcp {
		if su.apiKey = getenvOf(e)(o.apiKeyEnv); su.apiKey == "" {
			return nil, usageErrorf("--api-key-env %s: the variable is not set, or empty", o.apiKeyEnv)
		}
	}
	if o.studio && o.store == "" {
		// A fresh store of its own, gone at the end.
		dir, err := os.MkdirTemp("", "weft-studio-")
		if err != nil {
			return nil, internal(err)
		}
		su.closers = append(su.closers, func() { os.RemoveAll(dir) })
		o.store = filepath.Join(dir, "studio.db")
	}
	st, where, err := openStore(ctx, e, o.store, true)
	if err != nil {
		return nil, err
	}
	su.st, su.where = st, where
	su.closers = append(su.closers, func() { st.Close() })

	// Each workflow is opened and its components made from the flags
	// (or taken from the config); one Service runs them all.
	type prep struct {
		t     served
		p     *prepared
		specs *cliSpecs
		o     runOptions
	}
	var preps []prep
	all := &cliSpecs{secrets: map[string]string{}, flags: map[string]string{}, quiet: map[string]bool{}, modelErrs: map[string]error{}}
	for _, t := range targets {
		ro := o.runOptions
		ro.workflow, ro.contextTokens = t.workflow, t.ctxTokens
		p, err := prepare(e, t.path, &ro)
		if err != nil {
			return nil, err
		}
		specs, err := runSpecs(e, &ro, p.tools, p.owfActions, true)
		if err != nil {
			return nil, err
		}
		if t.components != nil {
			// The config's components, and the MCP servers the file
			// declares (none of the config's names).
			sps, err := service.MCPSpecs(ro.mcp, getenvOf(e), t.components)
			if err != nil {
				return nil, usageErrorf("%v", err)
			}
			specs.components = append(slices.Clone(t.components), sps...)
		}
		for k, v := range specs.secrets {
			all.secrets[k] = v
		}
		for k, v := range specs.flags {
			all.flags[k] = v
		}
		for k, v := range specs.quiet {
			all.quiet[k] = v
		}
		preps = append(preps, prep{t: t, p: p, specs: specs, o: ro})
	}
	var extra *engine.Registry
	if items, ok := st.(store.Items); ok {
		extra = engine.NewRegistry()
		kv.Register(extra, items)
	}
	svc, closeSvc, err := newService(e, &o.runOptions, st, all, extra)
	if err != nil {
		return nil, err
	}
	su.svc = svc
	su.closers = append(su.closers, closeSvc)
	for _, pr := range preps {
		if err := pr.p.check(ctx, e, &pr.o, svc, pr.specs); err != nil {
			return nil, err
		}
		su.assistants = append(su.assistants, server.Assistant{GraphID: pr.t.graphID, Description: pr.t.description, Workflow: pr.p.wf, Components: pr.specs.components, ContextTokens: pr.o.contextTokens})
	}
	return su, nil
}

// serve is `weft serve`.
func serve(ctx context.Context, e env, cmd *cobra.Command, args []string, o *serveOptions) error {
	su, err := setupServed(ctx, e, cmd, args, o)
	if err != nil {
		return err
	}
	defer su.close()
	st, where, svc, assistants, apiKey := su.st, su.where, su.svc, su.assistants, su.apiKey
	dur, err := engine.ParseDurability(o.durable)
	if err != nil || dur == engine.DefaultDurability {
		return usageErrorf("--durability %q: want sync, async or exit", o.durable)
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var exec server.Executor
	var mounts []server.Mount
	if pg, ok := st.(*postgres.Store); ok {
		// Runs go through River's queue in the database: any number of
		// weft serve and weft worker processes share them.
		ttl, err := leaseTTL(e)
		if err != nil {
			return err
		}
		rx, err := riverexec.New(ctx, riverexec.Options{Store: pg, Workers: o.workers, Queue: o.queue, Logger: log, LeaseTTL: ttl})
		if err != nil {
			return storeFailed(err)
		}
		exec = rx
		if !o.worker {
			// River's UI, behind the API key.
			ui, err := rx.UI(ctx, "/riverui")
			if err != nil {
				_ = rx.Close(context.Background())
				return internal(err)
			}
			mounts = append(mounts, server.Mount{Prefix: "/riverui/", Handler: ui})
		}
	} else {
		if o.worker {
			return usageErrorf("weft worker needs a PostgreSQL store (--store postgres://...): runs reach workers through its queue")
		}
		if o.workers < 1 {
			return usageErrorf("--workers %d: with a SQLite store the runs are carried out in this process; give 1 or more (0 needs a PostgreSQL store and weft worker processes)", o.workers)
		}
		if o.queue != "" {
			return usageErrorf("--queue needs a PostgreSQL store")
		}
		exec = server.NewPool(o.workers)
	}
	// The workflows as MCP tools at /mcp (streamable HTTP), behind the
	// API key. The runs of its calls are cancelled when the server stops.
	stopMCP := func() {}
	if !o.worker {
		ms, err := mcpserver.New(mcpserver.Options{Service: svc, Workflows: mcpWorkflows(assistants), MaxConcurrent: o.workers, Version: versionString(), Logger: sdkLogger(e)})
		if err != nil {
			_ = exec.Close(context.Background())
			return usageErrorf("%v", err)
		}
		stopMCP = ms.Close
		defer ms.Close()
		mounts = append(mounts, server.Mount{Prefix: "/mcp", Handler: ms.Handler()})
	}
	sopts := server.Options{
		Durability: dur,
		Service:    svc, Store: st, Assistants: assistants, APIKey: apiKey, CORSOrigins: o.cors,
		MaxBody: o.maxBody, Executor: exec, Mounts: mounts, Logger: log, Version: versionString(),
	}
	if o.otel {
		// A run is traced as a child of the span of the client that
		// asked for it (W3C traceparent), in whichever process runs it.
		sopts.Propagator = propagation.TraceContext{}
	}
	srv, err := server.New(sopts)
	if err != nil {
		_ = exec.Close(context.Background())
		return usageErrorf("%v", err)
	}
	handler := srv.Handler()
	if o.worker {
		// A worker serves no API: its health only.
		handler = workerHandler(exec)
	} else {
		// The studio beside the API: /studio/, and / sends a browser
		// there (API clients never ask for /).
		sd, err := studio.New(studio.Options{API: handler, APIKey: apiKey, Assistants: assistants, Logger: log})
		if err != nil {
			_ = srv.Close(context.Background())
			return internal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.Handle(sd.Prefix(), sd)
		mux.Handle("GET /{$}", http.RedirectHandler(sd.Prefix(), http.StatusFound))
		handler = mux
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		_ = srv.Close(context.Background())
		return usageErrorf("--addr %s: %v", o.addr, err)
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	var names []string
	for _, a := range assistants {
		names = append(names, a.GraphID)
		if a.GraphID == "" {
			names[len(names)-1] = a.Workflow.Name
		}
	}
	if o.worker {
		log.Info("carrying out runs", "health", "http://"+ln.Addr().String()+"/ok", "assistants", strings.Join(names, ","), "store", where, "concurrency", o.workers)
	} else {
		log.Info("serving", "url", "http://"+ln.Addr().String(), "studio", "http://"+ln.Addr().String()+"/studio/", "assistants", strings.Join(names, ","), "store", where)
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	if o.studio {
		url := "http://" + ln.Addr().String() + "/studio/"
		fmt.Fprintln(e.stdout, url)
		if o.open {
			openBrowser(e, url)
		}
	}
	select {
	case err := <-served:
		_ = srv.Close(context.Background())
		return internal(fmt.Errorf("serving: %w", err))
	case <-ctx.Done():
	}
	// Stop: no new connections; runs in progress are cancelled at their
	// next step and go back to pending (every step they took is
	// recorded); their clients are told; then the connections close.
	log.Info("stopping: runs in progress are kept for the next server")
	stopMCP()
	dctx, cancel := context.WithTimeout(context.Background(), o.drain)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(dctx) }()
	cerr := srv.Close(dctx)
	if err := <-shut; err != nil {
		log.Warn("connections still open at the end of --drain", "err", err)
	}
	if cerr != nil {
		return internal(fmt.Errorf("stopping the runs in progress: %w", cerr))
	}
	log.Info("stopped")
	return nil
}

// mcpWorkflows are the assistants as MCP tools.
func mcpWorkflows(as []server.Assistant) []mcpserver.Workflow {
	out := make([]mcpserver.Workflow, len(as))
	for i, a := range as {
		out[i] = mcpserver.Workflow{Name: a.GraphID, Description: a.Description, Workflow: a.Workflow, Components: a.Components, ContextTokens: a.ContextTokens}
	}
	return out
}

// workerHandler is what weft worker answers: GET /ok, and GET /status
// with the runs it carries out and the queue's depth.
func workerHandler(exec server.Executor) http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	m.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		out := map[string]any{}
		if rx, ok := exec.(*riverexec.Executor); ok {
			out["running"] = rx.Running()
			n, err := rx.Queued(r.Context())
			if err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			out["queued"] = n
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	return m
}

// newStudioCmd builds `weft studio`: weft serve on a fresh local server
// (a free port, a store of its own unless --store names one), with its
// studio's address on stdout and opened in a browser.
func newStudioCmd(e env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "studio [FILE|DIR ...]",
		Short: "Open weft studio, the web UI, on a fresh local server",
		Long: `Studio serves the workflows given as weft serve does, on a free local port
and, unless --store names one, a store of its own that is gone when it
stops; it prints the studio's address and opens it in a browser (--open).
The studio shows each workflow's graph and source, starts runs, follows
them live, shows threads' history and state, answers the questions runs
ask and forks threads at a step. See docs/studio.md.`,
		Example: `  weft studio examples/intentqa/app.wf --llm ollama:llama3.2
  weft studio flows/ --store weft.db --open=false`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.studio = true
			return serve(cmd.Context(), e, cmd, args, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen on `HOST:PORT` (default a free local port)")
	f.StringVar(&o.store, "store", "", "keep threads in a SQLite file `PATH` or a postgres:// URL (default a fresh store, gone at the end)")
	f.StringVar(&o.config, "config", "", "serve the workflows, components and settings of a JSON config `FILE`, as weft serve's")
	f.BoolVar(&o.open, "open", true, "open the studio in a browser")
	f.IntVar(&o.workers, "workers", server.DefaultPoolSize, "how many runs execute at once (`N`)")
	f.StringVar(&o.durable, "durability", "async", "when a run's steps reach the store: `MODE` sync, async or exit")
	f.DurationVar(&o.drain, "drain", 5*time.Second, "on Ctrl-C, how long runs in progress get to reach their next checkpoint (`DURATION`)")
	o.maxBody = server.DefaultMaxBody
	servedFlags(f, &o)
	return cmd
}

// openBrowser opens url with the desktop's opener ($BROWSER, xdg-open or
// open), telling on stderr when there is none or it fails.
func openBrowser(e env, url string) {
	var cmd *exec.Cmd
	switch {
	case getenvOf(e)("BROWSER") != "":
		cmd = exec.Command(getenvOf(e)("BROWSER"), url)
	default:
		for _, name := range []string{"xdg-open", "open"} {
			if p, err := exec.LookPath(name); err == nil {
				cmd = exec.Command(p, url)
				break
			}
		}
	}
	if cmd == nil {
		fmt.Fprintln(e.stderr, "weft studio: no browser opener here ($BROWSER, xdg-open, open): open the address above")
		return
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(e.stderr, "weft studio: opening a browser: %v: open the address above\n", err)
		return
	}
	go func() { _ = cmd.Wait() }()
}

// newWorkerCmd builds `weft worker`.
func newWorkerCmd(e env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "worker [FILE|DIR ...]",
		Short: "Carry out the runs weft serve queues, on a PostgreSQL store",
		Long: `Worker carries out the runs that weft serve processes queue in a PostgreSQL
store (River's queue in the same database), with the workflows and
components given as to weft serve (files, a directory, or --config, and the
run flags). Any number of workers on any number of machines share the
runs; each thread is driven by one at a time, under its lease. A run's
clients, connected to any weft serve, follow it through the store.
SIGTERM or Ctrl-C stops taking runs and hands those in progress back to
the queue, with every step they took recorded. See docs/deploy.md.`,
		Example: `  weft worker flows/ --store postgres://weft@db/weft --concurrency 8
  weft worker --config weft.json --store postgres://weft@db/weft`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.worker = true
			return serve(cmd.Context(), e, cmd, args, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:0", "answer health checks (GET /ok, GET /status) on `HOST:PORT`")
	f.StringVar(&o.store, "store", "", "the PostgreSQL store: a postgres:// `URL` (default $WEFT_STORE)")
	f.StringVar(&o.config, "config", "", "the workflows, components and settings of a JSON config `FILE`, as weft serve's")
	f.IntVar(&o.workers, "concurrency", server.DefaultPoolSize, "how many runs this worker carries out at once (`N`)")
	f.StringVar(&o.queue, "queue", "", "the River queue to take runs from (`NAME`; default River's)")
	f.StringVar(&o.durable, "durability", "async", "when a run's steps reach the store, for runs whose request names none: `MODE` sync, async or exit")
	f.DurationVar(&o.drain, "drain", 30*time.Second, "on SIGTERM, how long runs in progress get to reach their next checkpoint (`DURATION`)")
	servedFlags(f, &o)
	return cmd
}
