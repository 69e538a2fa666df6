package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/mcpserver"
	"github.com/weftlang/weft/server"
)

// newMCPCmd builds `weft mcp`.
func newMCPCmd(e env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "mcp [FILE|DIR ...]",
		Short: "Serve workflows as the tools of an MCP server on stdin and stdout",
		Long: `MCP serves the workflows given (files, the .wf files of a directory, or
--config's) as the tools of a Model Context Protocol server on standard
input and output, for an MCP client (Claude Desktop, an IDE, an agent) that
starts it as a command. Each workflow is a tool named after it, whose
arguments are its parameters; a call runs it in a new thread of --store
(or continues the thread its thread_id argument names) and returns the
final node's outputs. A run that waits for a person returns its questions
and thread id: the tool weft_resume answers them. The run flags configure
the components as for weft serve. Logs go to stderr: stdout is the
protocol's. weft serve serves the same tools over HTTP at /mcp. See
docs/mcp.md.`,
		Example: `  weft mcp examples/intentqa/intentqa.wf --llm ollama:llama3.2 --store weft.db
  weft mcp --config weft.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.mcp = true
			return serveMCP(cmd.Context(), e, cmd, args, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.store, "store", "", "where threads are kept: a SQLite file `PATH` or a postgres:// URL (default $WEFT_STORE, else "+defaultStoreHint+")")
	f.StringVar(&o.config, "config", "", "serve the workflows and components of a JSON config `FILE`, as weft serve's")
	f.IntVar(&o.workers, "workers", server.DefaultPoolSize, "how many tool calls run at once (`N`); more wait for a free one")
	servedFlags(f, &o)
	return cmd
}

// serveMCP is `weft mcp`.
func serveMCP(ctx context.Context, e env, cmd *cobra.Command, args []string, o *serveOptions) error {
	if o.workers < 1 {
		return usageErrorf("--workers %d: give 1 or more", o.workers)
	}
	su, err := setupServed(ctx, e, cmd, args, o)
	if err != nil {
		return err
	}
	defer su.close()
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ms, err := mcpserver.New(mcpserver.Options{Service: su.svc, Workflows: mcpWorkflows(su.assistants), MaxConcurrent: o.workers, Version: versionString(), Logger: sdkLogger(e)})
	if err != nil {
		return usageErrorf("%v", err)
	}
	var names []string
	for _, w := range mcpWorkflows(su.assistants) {
		n := w.Name
		if n == "" {
			n = w.Workflow.Name
		}
		names = append(names, mcpserver.ToolName(n))
	}
	log.Info("serving MCP on stdio", "tools", strings.Join(names, ",")+","+mcpserver.ResumeTool, "store", su.where)
	if err := ms.Serve(ctx, e.stdin, e.stdout); err != nil && ctx.Err() == nil {
		return internal(fmt.Errorf("serving MCP: %w", err))
	}
	log.Info("stopped")
	return nil
}

// sdkLogger is the MCP SDK's logger: its warnings and errors on stderr
// (its info lines are per session and request).
func sdkLogger(e env) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
