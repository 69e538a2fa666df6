// Command adaptiverag runs the adaptive RAG agent of seed 001
// (package github.com/weftlang/weft/examples/adaptiverag) on a question,
// or on a conversation read from standard input, one question per line.
//
//	adaptiverag --llm ollama:llama3.1 --docs examples/adaptiverag/testdata/docs.json \
//	    --input "What was Acme's revenue in 2023?"
//	adaptiverag --llm replay:examples/adaptiverag/testdata/demo.replay.jsonl \
//	    --docs examples/adaptiverag/testdata/docs.json --thread demo --store /tmp/rag.db < questions.txt
//
// Flags:
//
//	--llm SPEC      the model: ollama:MODEL, openai:MODEL, anthropic:MODEL or
//	                replay:FILE (offline); default $WEFT_LLM
//	--record FILE   record every LLM exchange to FILE, for --llm replay:FILE
//	--docs PATH     the documents: a TAT-QA JSON file, a .json array or .jsonl
//	                file of passages, or a directory of .txt/.md files (see
//	                adaptiverag.OpenIndex); indexed in memory with SQLite FTS5
//	--thread ID     run in durable thread ID: its conversation carries over
//	                between invocations
//	--store PATH    the SQLite file keeping threads (default adaptiverag.db
//	                when --thread is given)
//	--input TEXT    the question; without it, questions are read from stdin
//	--trace         print the run's events to stderr (the thread's step
//	                records in thread mode)
//	--log LEVEL     node logs to stderr: debug, info (the ---NODE--- lines),
//	                warn (default) or error
//
// Without --thread and --store, the questions of one invocation still
// form one conversation, kept in memory.
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
	"time"

	"github.com/weftlang/weft/examples/adaptiverag"
	"github.com/weftlang/weft/llm/providers"
)

// DefaultStore is the thread store's path when --thread is given without
// --store.
const DefaultStore = "adaptiverag.db"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// options are the parsed flags.
type options struct {
	llm, record, docs, thread, store, input, logLevel string
	trace                                             bool
	llmTimeout                                        time.Duration
	historyTurns, topK                                int
}

// run is the program: it returns the exit status (0 ok, 1 failure, 2
// usage).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	var o options
	fs := flag.NewFlagSet("adaptiverag", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.llm, "llm", "", "model spec: ollama:MODEL, openai:MODEL, anthropic:MODEL or replay:FILE (default $"+providers.EnvVar+")")
	fs.StringVar(&o.record, "record", "", "record every LLM exchange to `FILE` (JSON lines, for --llm replay:FILE)")
	fs.StringVar(&o.docs, "docs", "", "documents to search, indexed in memory with SQLite FTS5: a TAT-QA JSON file, a .json array or .jsonl file of passages, or a directory of .txt/.md files (required)")
	fs.StringVar(&o.thread, "thread", "", "run in durable thread `ID` (conversation kept across invocations)")
	fs.StringVar(&o.store, "store", "", "SQLite file keeping threads (default "+DefaultStore+" with --thread)")
	fs.StringVar(&o.input, "input", "", "the question; without it, one question per line from stdin")
	fs.BoolVar(&o.trace, "trace", false, "print the run's events to stderr")
	fs.StringVar(&o.logLevel, "log", "warn", "node log `level` on stderr: debug, info, warn or error")
	fs.DurationVar(&o.llmTimeout, "llm-timeout", 5*time.Minute, "bound on each LLM attempt")
	fs.IntVar(&o.historyTurns, "history", adaptiverag.DefaultHistoryTurns, "earlier turns included in the prompts (0: none)")
	fs.IntVar(&o.topK, "top-k", adaptiverag.DefaultTopK, "passages the answer is generated from")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "adaptiverag: unexpected arguments %q; the question goes in --input\n", fs.Args())
		return 2
	}
	if o.docs == "" {
		fmt.Fprintln(stderr, "adaptiverag: --docs is required (e.g. examples/adaptiverag/testdata/docs.json)")
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		fmt.Fprintf(stderr, "adaptiverag: --log: %v\n", err)
		return 2
	}
	if err := serve(ctx, o, level, stdin, stdout, stderr, getenv); err != nil {
		fmt.Fprintf(stderr, "adaptiverag: %v\n", err)
		return 1
	}
	return 0
}

// serve answers the questions.
func serve(ctx context.Context, o options, level slog.Level, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (err error) {
	ix, err := adaptiverag.OpenIndex(ctx, o.docs)
	if err != nil {
		return fmt.Errorf("--docs: %w", err)
	}
	defer ix.Close()
	model, closeModel, err := agentcli.OpenModel(ctx, o.llm, o.record, o.llmTimeout, getenv)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeModel(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if o.historyTurns == 0 {
		o.historyTurns = -1 // none; Deps reads 0 as the default
	}
	c, err := adaptiverag.New(adaptiverag.Deps{
		Model:        model,
		Retriever:    adaptiverag.IndexRetriever{Index: ix},
		Logger:       slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		HistoryTurns: o.historyTurns,
		TopK:         o.topK,
	})
	if err != nil {
		return err
	}
	turns := &agentcli.Turns[adaptiverag.State]{
		Graph: c,
		Start: func(msg string, prev adaptiverag.State) adaptiverag.State {
			return adaptiverag.State{Question: msg, Messages: prev.Messages}
		},
		Thread:       o.thread,
		Store:        o.store,
		DefaultStore: DefaultStore,
		Trace:        o.trace,
		Log:          stderr,
		Name:         "adaptiverag",
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
		fmt.Fprintln(stdout, out.FinalResponse)
		if o.input == "" {
			fmt.Fprintln(stdout)
		}
		for _, e := range out.Errors {
			fmt.Fprintf(stderr, "adaptiverag: recovered from %s\n", e)
		}
	}
	return nil
}
