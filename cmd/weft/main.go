// Command weft runs, checks, formats, draws and tests weft workflows.
//
// Usage:
//
//	weft run FILE [--input TEXT] [--var k=v ...] [--stubs FILE] [--answer TEXT ...] [--thread ID] [--store S] [--trace] [--json]
//	weft resume THREAD [--answer TEXT ...] [--id ID ...]
//	weft threads list|show|history|fork|prune
//	weft validate FILE...
//	weft fmt [-w] [-l] FILE...
//	weft graph FILE [--format mermaid|dot|svg] [-o OUT]
//	weft test FILE|DIR [--run REGEX] [-v]
//	weft data fetch|list|status
//	weft version
//
// Exit codes: 0 success; 1 the workflow failed, validation errors, tests
// failed or fmt -l found differences; 2 usage error; 3 the run is waiting
// for a person; 4 internal error. See docs/cli.md.
//
// The commands are built by newRootCmd from an env value that carries the
// standard streams and what is known about the terminal, so tests run the
// whole CLI in-process.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/owf"
)

// Exit codes of the weft command.
const (
	exitOK       = 0 // success
	exitFailed   = 1 // the workflow failed, validation errors, tests failed, fmt -l found differences
	exitUsage    = 2 // bad flag, missing file, bad --var
	exitWaiting  = 3 // the run waits for a person and no answer is available
	exitInternal = 4 // a bug or an environment failure
)

// exitCodesHelp is appended to `weft --help`.
const exitCodesHelp = `Exit codes:
  0  success
  1  the workflow failed, validation found errors, tests failed,
     or fmt -l found files to reformat
  2  usage error: bad flag or argument, missing file, bad --var,
     no such thread or store
  3  the run is waiting for a person (no terminal and no --answer left)
  4  internal error, or a thread store that cannot be opened, read
     or written`

func main() {
	os.Exit(run(os.Args[1:], osEnv()))
}

// env is everything the CLI touches outside its arguments. Tests build one
// with in-memory streams.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// stdinTTY reports that stdin is an interactive terminal: a waiting
	// run then asks its question and reads the answer from stdin.
	stdinTTY bool
	// stderrTTY reports that stderr is a terminal able to redraw a
	// status line in place.
	stderrTTY bool
	// width is the terminal width in columns; 0 when unknown.
	width int
	// now is the clock of the status line; nil means time.Now.
	now func() time.Time
	// tick is the redraw interval of the status line; 0 means no timed
	// redraws (only on events).
	tick time.Duration
	// signals makes a run stop cleanly on SIGINT or SIGTERM.
	signals bool
	// getenv reads the environment (WEFT_LLM, OLLAMA_HOST, API keys...);
	// nil means an empty environment.
	getenv func(string) string
}

// osEnv describes the process's real streams and terminal.
func osEnv() env {
	e := env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, now: time.Now, tick: 100 * time.Millisecond, signals: true, getenv: os.Getenv}
	e.stdinTTY = term.IsTerminal(int(os.Stdin.Fd()))
	if term.IsTerminal(int(os.Stderr.Fd())) && os.Getenv("TERM") != "dumb" {
		e.stderrTTY = true
		if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil {
			e.width = w
		}
	}
	return e
}

func (e env) clock() func() time.Time {
	if e.now == nil {
		return time.Now
	}
	return e.now
}

// exitError carries an exit code through cobra. Its message, when not
// empty, is printed as "weft: message".
type exitError struct {
	code int
	err  error // nil: the command already printed what it had to say
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a usage error (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// failed is exit code 1 with a message (nil when it is already printed).
func failed(err error) error { return &exitError{code: exitFailed, err: err} }

// internal is exit code 4.
func internal(err error) error { return &exitError{code: exitInternal, err: err} }

// silent exits with code without printing anything more.
func silent(code int) error { return &exitError{code: code} }

// run executes the weft command line args and returns the exit code. It
// never panics: a panic is reported as an internal error.
func run(args []string, e env) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(e.stderr, "weft: internal error: %v\n%s", p, debug.Stack())
			code = exitInternal
		}
	}()
	ctx := context.Background()
	if e.signals {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	root := newRootCmd(e)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var xe *exitError
	if !errors.As(err, &xe) {
		// Errors that are not ours come from cobra itself: unknown
		// commands and flags, wrong argument counts.
		xe = &exitError{code: exitUsage, err: err}
	}
	if xe.err != nil {
		// An error may quote what a store, a model or a file holds:
		// printed escaped (termSafe), line breaks kept.
		fmt.Fprintf(e.stderr, "weft: %s\n", termSafe(withAdvice(xe.err), true))
		if xe.code == exitUsage {
			where := "weft"
			if cmd != nil {
				where = cmd.CommandPath()
			}
			fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", where)
		}
	}
	return xe.code
}

// withAdvice returns err's message (see fileWording) followed by the
// flag that mends it, for the library errors that need one: the library
// packages name no flag, so the advice is added here, found by errors.Is.
func withAdvice(err error) string {
	msg := fileWording(err)
	var advice string
	switch {
	case errors.Is(err, action.ErrNoProvider):
		advice = "pass --llm PROVIDER:MODEL or set " + providers.EnvVar + ", or stub the action with --stubs FILE"
	case errors.Is(err, providers.ErrNoModel):
		advice = "pass --llm PROVIDER:MODEL or set " + providers.EnvVar
	case errors.Is(err, owf.ErrNoModel):
		advice = "pass --llm SPEC or set " + providers.EnvVar
	case errors.Is(err, owf.ErrNoEmbedder):
		advice = "pass --embed SPEC or set " + providers.EmbedEnvVar
	default:
		advice = toolAdvice(err)
	}
	if advice == "" {
		return msg
	}
	return msg + " (" + advice + ")"
}

// fileWording returns err's message with each file error in it worded the
// same way whatever the command and the system call that met it: "PATH:
// reason" for "open PATH: reason", "stat PATH: reason" and the like. The
// message is matched as text, since many callers format the cause with
// %v.
func fileWording(err error) string {
	return fileOpRE.ReplaceAllString(err.Error(), "$1")
}

// fileOpRE matches the system call before the path of an *fs.PathError's
// message, for the reasons a user meets: the path and reason are kept.
var fileOpRE = regexp.MustCompile(`\b(?:open|stat|lstat|read|readdir|readlink) ([^\n]+?: (?:no such file or directory|is a directory|not a directory|permission denied))`)

// newRootCmd builds the weft command tree over e.
func newRootCmd(e env) *cobra.Command {
	root := &cobra.Command{
		Use:   "weft",
		Short: "weft runs LLM agent workflows",
		Long: `weft runs, checks, formats, draws and tests workflows written in the .wf
language: graphs of steps that call LLMs, tools and people.

` + exitCodesHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(e.stderr)
			_ = cmd.Usage()
			return silent(exitUsage)
		},
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: true},
		Version:           versionString(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	root.AddCommand(
		newRunCmd(e),
		newResumeCmd(e),
		newServeCmd(e),
		newWorkerCmd(e),
		newMCPCmd(e),
		newStudioCmd(e),
		newThreadsCmd(e),
		newValidateCmd(e),
		newFmtCmd(e),
		newGraphCmd(e),
		newConvertCmd(e),
		newTestCmd(e),
		newEvalCmd(e),
		newIndexCmd(e),
		newDataCmd(e),
		newVersionCmd(e),
	)
	return root
}

// getenvOf returns e's environment lookup; without one, every variable is
// unset.
func getenvOf(e env) func(string) string {
	if e.getenv == nil {
		return func(string) string { return "" }
	}
	return e.getenv
}

// exactFiles is cobra.ExactArgs with a usage error naming what is missing.
func exactFiles(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("want %s, got %d argument(s)", what, len(args))
		}
		return nil
	}
}

// minFiles requires at least one argument.
func minFiles(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageErrorf("want %s", what)
		}
		return nil
	}
}
