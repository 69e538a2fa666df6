// Command shipments runs the Elasticsearch query agent of seed 003
// (package github.com/weftlang/weft/examples/shipments) on a message, or on
// a conversation read from standard input, one message per line, one turn
// each.
//
//	shipments --llm ollama:llama3.1 --input "Show me Maersk shipments to LA"
//	shipments --llm ollama:llama3.1 --thread demo --store /tmp/shipments.db --input "show me more"
//	shipments --llm replay:examples/shipments/sessions/maersk_la.replay.jsonl < examples/shipments/sessions/maersk_la.txt
//
// Flags:
//
//	--llm SPEC      the model: ollama:MODEL, openai:MODEL, anthropic:MODEL or
//	                replay:FILE (offline); default $WEFT_LLM
//	--record FILE   record every LLM exchange to FILE, for --llm replay:FILE
//	--es TARGET     the search backend: an Elasticsearch URL
//	                (http://localhost:9200; credentials in the URL or in
//	                $ELASTICSEARCH_API_KEY), bleve:DIR for an embedded index
//	                on disk (created and loaded with the generated dataset
//	                when DIR has no index yet), or empty (the default) for an
//	                in-memory embedded index loaded with the generated dataset
//	--load          with an Elasticsearch URL: create the index and load the
//	                generated dataset first
//	--index NAME    the index (default shipments)
//	--seed N, --n N the generated dataset: Generate(seed, n) (default 2025, 5000)
//	--today DATE    the date relative dates are resolved against, YYYY-MM-DD
//	                or "now"; default the dataset's AsOfDate, 2025-06-30
//	--thread ID     run in durable thread ID: its conversation carries over
//	                between invocations
//	--store PATH    the SQLite file keeping threads (default shipments.db
//	                when --thread is given)
//	--input TEXT    the message; without it, messages are read from stdin
//	--page-size N   shipments per page when the user asks for no other number
//	                (default 20, at most 100)
//	--hits          print the page's shipments after each response (default
//	                true)
//	--trace         print the run's events to stderr (the thread's step
//	                records in thread mode)
//	--log LEVEL     node logs to stderr: debug, info, warn (default) or error
//	--llm-timeout D bound on each LLM attempt (default 5m)
//
// Without --thread and --store, the messages of one invocation still form
// one conversation, kept in memory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/weftlang/weft/examples/internal/agentcli"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
	"github.com/weftlang/weft/search/es"
)

// DefaultStore is the thread store's path when --thread is given without
// --store.
const DefaultStore = "shipments.db"

// The generated dataset's defaults.
const (
	DefaultSeed = 2025
	DefaultN    = 5000
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// options are the parsed flags.
type options struct {
	llm, record, es, index, thread, store, input, logLevel, today string
	seed                                                          int64
	n, pageSize                                                   int
	load, hits, trace                                             bool
	llmTimeout                                                    time.Duration
}

// run is the program: it returns the exit status (0 ok, 1 failure, 2
// usage).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	var o options
	fs := flag.NewFlagSet("shipments", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.llm, "llm", "", "model spec: ollama:MODEL, openai:MODEL, anthropic:MODEL or replay:FILE (default $"+providers.EnvVar+")")
	fs.StringVar(&o.record, "record", "", "record every LLM exchange to `FILE` (JSON lines, for --llm replay:FILE)")
	fs.StringVar(&o.es, "es", "", "search backend: an Elasticsearch `URL`, bleve:DIR (embedded index on disk), or empty for an in-memory embedded index of the generated dataset")
	fs.BoolVar(&o.load, "load", false, "with an Elasticsearch URL: create the index and load the generated dataset first")
	fs.StringVar(&o.index, "index", shipments.DefaultIndex, "the index searched")
	fs.Int64Var(&o.seed, "seed", DefaultSeed, "the generated dataset's seed")
	fs.IntVar(&o.n, "n", DefaultN, "the generated dataset's number of shipments")
	fs.StringVar(&o.today, "today", dataset.AsOfDate, "the `date` relative dates are resolved against (YYYY-MM-DD, or now)")
	fs.IntVar(&o.pageSize, "page-size", shipments.DefaultPageSize, "shipments per page when the user asks for no other number")
	fs.StringVar(&o.thread, "thread", "", "run in durable thread `ID` (conversation kept across invocations)")
	fs.StringVar(&o.store, "store", "", "SQLite file keeping threads (default "+DefaultStore+" with --thread)")
	fs.StringVar(&o.input, "input", "", "the message; without it, one message per line from stdin")
	fs.BoolVar(&o.hits, "hits", true, "print the page's shipments after each response")
	fs.BoolVar(&o.trace, "trace", false, "print the run's events to stderr")
	fs.StringVar(&o.logLevel, "log", "warn", "node log `level` on stderr: debug, info, warn or error")
	fs.DurationVar(&o.llmTimeout, "llm-timeout", 5*time.Minute, "bound on each LLM attempt")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "shipments: unexpected arguments %q; the message goes in --input\n", fs.Args())
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		fmt.Fprintf(stderr, "shipments: --log: %v\n", err)
		return 2
	}
	now, err := clock(o.today)
	if err != nil {
		fmt.Fprintf(stderr, "shipments: --today: %v\n", err)
		return 2
	}
	if o.n <= 0 {
		fmt.Fprintln(stderr, "shipments: --n must be positive")
		return 2
	}
	if err := serve(ctx, o, level, now, stdin, stdout, stderr, getenv); err != nil {
		fmt.Fprintf(stderr, "shipments: %v\n", err)
		return 1
	}
	return 0
}

// clock returns the clock --today names.
func clock(today string) (func() time.Time, error) {
	if today == "now" {
		return time.Now, nil
	}
	t, err := time.Parse(time.DateOnly, today)
	if err != nil {
		return nil, fmt.Errorf("want YYYY-MM-DD or now: %w", err)
	}
	return func() time.Time { return t }, nil
}

// serve answers the messages.
func serve(ctx context.Context, o options, level slog.Level, now func() time.Time, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (err error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	backend, closeBackend, err := openBackend(ctx, o, now, getenv, logger)
	if err != nil {
		return fmt.Errorf("--es: %w", err)
	}
	defer func() {
		if cerr := closeBackend(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	model, closeModel, err := agentcli.OpenModel(ctx, o.llm, o.record, o.llmTimeout, getenv)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeModel(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	c, err := shipments.New(shipments.Deps{
		Model:    model,
		Backend:  backend,
		Index:    o.index,
		Logger:   logger,
		Now:      now,
		PageSize: o.pageSize,
	})
	if err != nil {
		return err
	}
	turns := &agentcli.Turns[shipments.State]{
		Graph: c,
		Start: func(msg string, prev shipments.State) shipments.State {
			return shipments.State{Question: msg, ConversationHistory: prev.ConversationHistory}
		},
		Thread:       o.thread,
		Store:        o.store,
		DefaultStore: DefaultStore,
		Trace:        o.trace,
		Log:          stderr,
		Name:         "shipments",
	}
	ask, closeAsk, err := turns.Open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeAsk(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	for q := range agentcli.Messages(o.input, stdin) {
		out, err := ask(ctx, q)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, out.Response)
		if o.hits && out.Page != nil && len(out.Page.Hits) > 0 {
			fmt.Fprintln(stdout)
			fmt.Fprint(stdout, shipments.FormatHits(out.Page))
		}
		if o.input == "" {
			fmt.Fprintln(stdout)
		}
		for _, e := range out.Errors {
			fmt.Fprintf(stderr, "shipments: recovered from %s\n", e)
		}
		for _, w := range out.Warnings {
			fmt.Fprintf(stderr, "shipments: note: %s\n", w)
		}
	}
	return nil
}

// openBackend opens the search backend --es names and, for an embedded
// index without the data (or --load), loads the generated dataset.
func openBackend(ctx context.Context, o options, now func() time.Time, getenv func(string) string, logger *slog.Logger) (search.Backend, func() error, error) {
	load := func(b search.Backend) error {
		ships := dataset.Generate(o.seed, o.n)
		start := time.Now()
		if err := shipments.LoadDataset(ctx, b, o.index, ships); err != nil {
			return err
		}
		logger.InfoContext(ctx, "loaded the generated dataset", slog.Int("shipments", len(ships)), slog.Int64("seed", o.seed),
			slog.String("index", o.index), slog.Duration("took", time.Since(start)))
		return nil
	}
	target := strings.TrimSpace(o.es)
	switch {
	case target == "" || strings.HasPrefix(target, "bleve:"):
		dir, _ := strings.CutPrefix(target, "bleve:")
		if target != "" && dir == "" {
			return nil, nil, errors.New("bleve: needs a directory: bleve:DIR")
		}
		b, err := blevesearch.New(blevesearch.Options{Dir: dir, Now: now})
		if err != nil {
			return nil, nil, err
		}
		if dir == "" || !slices.Contains(b.Indexes(), o.index) || o.load {
			if err := load(b); err != nil {
				b.Close()
				return nil, nil, err
			}
		}
		return b, b.Close, nil
	case strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://"):
		b, err := es.New(es.Options{Addresses: []string{target}, APIKey: getenv("ELASTICSEARCH_API_KEY")})
		if err != nil {
			return nil, nil, err
		}
		if o.load {
			if err := load(b); err != nil {
				return nil, nil, err
			}
		}
		return b, func() error { return nil }, nil
	}
	return nil, nil, fmt.Errorf("%q is not an Elasticsearch URL (http://..., https://...) or bleve:DIR", target)
}
