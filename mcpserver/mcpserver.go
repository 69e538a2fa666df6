// Package mcpserver serves weft workflows as the tools of a Model Context
// Protocol server, with the official Go SDK: each workflow is one tool
// whose input schema comes from its parameters (input_text among them)
// and whose output schema from its final nodes' outputs, and the tool
// weft_resume answers the questions of a run that waits for a person.
// Runs go through a service.Service, in durable threads of its store:
// weft mcp serves them over stdio, weft serve at /mcp over streamable
// HTTP. See docs/mcp.md.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
)

// ResumeTool is the name of the tool that answers a waiting run.
const ResumeTool = "weft_resume"

// DefaultMaxArgumentBytes bounds the JSON arguments of one tool call.
const DefaultMaxArgumentBytes = 1 << 20

// DefaultMaxConcurrent bounds the runs that the tools carry out at once.
const DefaultMaxConcurrent = server.DefaultPoolSize

// DefaultSessionTimeout is how long an HTTP session may go without a
// request before it is closed: a client that goes without ending its
// session leaves nothing behind for longer.
const DefaultSessionTimeout = 30 * time.Minute

// ErrConfig is what New's errors match (errors.Is): the options cannot
// make a server (no service, two workflows with one tool name).
var ErrConfig = errors.New("mcpserver: bad options")

// Workflow is a workflow served as a tool.
type Workflow struct {
	// Name is the tool's name before it is made valid (see ToolName);
	// "" is the workflow's declared name.
	Name string
	// Description describes the tool; "" is the workflow's description,
	// or one made from its name.
	Description string
	// Workflow is the workflow, from Service.Open.
	Workflow *service.Workflow
	// Components and ContextTokens are the run spec of its runs.
	Components    []component.Spec
	ContextTokens int
}

// Options configure a Server.
type Options struct {
	// Service runs the workflows. Required.
	Service *service.Service
	// Workflows are the workflows served, one tool each.
	Workflows []Workflow
	// MaxConcurrent bounds the runs carried out at once (0:
	// DefaultMaxConcurrent); a call beyond it waits for a free slot or
	// its cancellation.
	MaxConcurrent int
	// MaxArgumentBytes bounds a call's arguments (0:
	// DefaultMaxArgumentBytes); a larger call is a tool error.
	MaxArgumentBytes int
	// Version is the server's version in the MCP handshake; "" is "dev".
	Version string
	// Logger logs the SDK's activity; nil discards.
	Logger *slog.Logger
	// SessionTimeout closes an HTTP session (Handler) that had no
	// request for that long (0: DefaultSessionTimeout); a later request
	// with its id is answered 404, and the client starts a new session.
	SessionTimeout time.Duration
}

// Server is an MCP server whose tools run workflows.
type Server struct {
	opts  Options
	mcp   *sdk.Server
	slots chan struct{}
	tools map[string]*tool
	// plans are the served plans by digest, to type answers with.
	plans map[string]*flow.Plan
	// closed ends with Close: the runs in progress are cancelled.
	closed context.Context
	close  context.CancelFunc
}

// tool is one served workflow.
type tool struct {
	name string
	wf   Workflow
}

var invalidName = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// ToolName makes name a valid MCP tool name (^[a-zA-Z0-9_-]{1,64}$):
// each run of other characters becomes "_", and it is cut at 64 bytes;
// an empty name is "workflow".
func ToolName(name string) string {
	n := invalidName.ReplaceAllString(name, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	if n == "" || strings.Trim(n, "_") == "" {
		return "workflow"
	}
	return n
}

// New makes a server of the workflows.
func New(opts Options) (*Server, error) {
	if opts.Service == nil {
		return nil, fmt.Errorf("%w: no service", ErrConfig)
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	if opts.MaxArgumentBytes <= 0 {
		opts.MaxArgumentBytes = DefaultMaxArgumentBytes
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	s := &Server{opts: opts, slots: make(chan struct{}, opts.MaxConcurrent), tools: map[string]*tool{}, plans: map[string]*flow.Plan{}}
	s.closed, s.close = context.WithCancel(context.Background())
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "weft", Version: opts.Version},
		&sdk.ServerOptions{Logger: opts.Logger, Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
			Instructions: "Each tool runs a weft workflow in a durable thread. A run that waits for a person returns status \"waiting\" with its thread_id and questions: answer them with " + ResumeTool + "."})
	var humans []any
	for _, w := range opts.Workflows {
		if w.Workflow == nil || w.Workflow.Plan == nil {
			return nil, fmt.Errorf("%w: workflow %q is not compiled", ErrConfig, w.Name)
		}
		raw := w.Name
		if raw == "" {
			raw = w.Workflow.Name
		}
		name := ToolName(raw)
		if name == ResumeTool || s.tools[name] != nil {
			return nil, fmt.Errorf("%w: two tools would be called %s (workflow %q)", ErrConfig, name, raw)
		}
		t := &tool{name: name, wf: w}
		s.tools[name] = t
		s.plans[w.Workflow.Digest] = w.Workflow.Plan
		humans = append(humans, answerSchemas(name, w.Workflow.Plan, "")...)
		s.mcp.AddTool(&sdk.Tool{
			Name:         name,
			Title:        raw,
			Description:  describe(w),
			InputSchema:  InputSchema(w.Workflow.Plan),
			OutputSchema: OutputSchema(w.Workflow.Plan),
		}, t.handler(s))
	}
	s.mcp.AddTool(&sdk.Tool{
		Name:         ResumeTool,
		Title:        "Answer a waiting weft run",
		Description:  "Answers the question a weft workflow run waits on (a tool call that returned status \"waiting\"), and continues the run: its result is as the workflow tool's.",
		InputSchema:  resumeSchema(humans),
		OutputSchema: envelope(Schema{}, nil),
	}, s.resume)
	return s, nil
}

// Close cancels the runs of the calls in progress (each thread records
// its run cancelled; each call returns a cancelled result) and refuses
// new calls. It does not close the sessions.
func (s *Server) Close() { s.close() }

// MCP returns the SDK's server, to run on a transport.
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Handler serves the tools over streamable HTTP (mount it at /mcp).
func (s *Server) Handler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp }, &sdk.StreamableHTTPOptions{Logger: s.opts.Logger, SessionTimeout: s.opts.SessionTimeout})
}

// Serve serves the tools on r and w, newline-delimited JSON-RPC as the
// stdio transport (weft mcp gives its standard input and output), until
// the client closes r or ctx ends. A message longer than twice
// MaxArgumentBytes ends the session.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	t := &sdk.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}, MaxLineLength: 2 * s.opts.MaxArgumentBytes}
	return s.mcp.Run(ctx, t)
}

// nopWriteCloser is a Writer whose Close does nothing: the caller owns w.
type nopWriteCloser struct{ io.Writer }

// Close does nothing.
func (nopWriteCloser) Close() error { return nil }

// describe is a tool's description.
func describe(w Workflow) string {
	if w.Description != "" {
		return w.Description
	}
	if d := w.Workflow.Plan.Workflow.Description; d != "" {
		return d
	}
	return "Runs the weft workflow " + w.Workflow.Name + "."
}
