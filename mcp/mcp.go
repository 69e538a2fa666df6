// Package mcp is weft's client of MCP (Model Context Protocol) servers,
// built on the official Go SDK (github.com/modelcontextprotocol/go-sdk):
// it connects to one server, over stdio (a command it starts) or
// streamable HTTP (a URL), lists the server's tools and offers each as an
// llm/tool Tool, so that models (`tools: [...]`) and TOOL nodes call it
// like any other tool.
//
// Names: a server's tool T is offered as SERVER__T (two underscores), the
// server being the configured name. Providers accept tool names of 1 to 64
// letters, digits, '_' and '-' only (OpenAI's ^[a-zA-Z0-9_-]{1,64}$), so a
// dot cannot separate them; a character of T outside that set becomes '_',
// and a name that would be longer than 64 characters, or that another
// tool of the server already took, is cut and ends with '_' and 8
// hexadecimal digits of a hash of T.
//
// Results: a result of text only reaches the model as that text; any
// other result as the JSON of a Result (its text, its structuredContent,
// and its images, audio, resource links and embedded resources as Blocks,
// binary data base64-encoded up to Config.MaxInline bytes and a placeholder
// beyond). A result with isError, a server that died, a timeout (each call
// is bounded by Config.Timeout) and a protocol error are an *Error of
// their kind, naming the server and the tool; the tool loop sends it back
// to the model as the call's result, and a TOOL node fails with it.
//
// Restarts: a server whose connection ends (its process exited, the HTTP
// session was lost) is connected again by the next call, up to
// Config.MaxRestarts attempts with a doubling backoff, with a warning in
// the log; the call that saw the server die is not repeated (a tool call
// may not be safe to run twice).
package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tool"
)

// Defaults of Config.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultMaxRestarts = 3
	// Separator joins the server's name and the tool's in a qualified
	// tool name.
	Separator = "__"
)

// firstBackoff is the wait before the second attempt of a restart; it
// doubles after each failed attempt.
const firstBackoff = 200 * time.Millisecond

// Config is one MCP server: how to reach it and the bounds of its calls.
// Exactly one of Command and URL is set.
type Config struct {
	// Name names the server in qualified tool names (SERVER__TOOL), logs
	// and errors: 1 to 32 letters, digits, '-' and '_', without "__" and
	// not ending with '_'.
	Name string
	// Command, Args and Env start a server that speaks MCP on its stdin
	// and stdout. The process gets Env and, from weft's environment, only
	// the variables a program needs to run (PATH, HOME, USER, LOGNAME,
	// SHELL, TERM, TMPDIR, LANG, LC_ALL, TZ, SYSTEMROOT), not weft's
	// credentials. Dir is its working directory ("" for weft's).
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL is the endpoint of a server speaking streamable HTTP; Headers
	// are sent with every request.
	URL     string
	Headers map[string]string
	// HTTPClient makes the HTTP requests (nil: a client of its own).
	HTTPClient *http.Client
	// Timeout bounds connecting and each call (0: DefaultTimeout).
	Timeout time.Duration
	// MaxRestarts is how many times a call tries to connect again to a
	// server that died, before it fails (0: DefaultMaxRestarts).
	MaxRestarts int
	// MaxInline is how many bytes of binary content a result carries
	// inline (0: DefaultMaxInline; negative: none).
	MaxInline int
	// Logger gets the warnings (a server that died, restarts) and errors
	// (a restart that failed); nil: slog.Default().
	Logger *slog.Logger
}

// namePattern is a server name.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// CheckName reports whether name can name a server, as an *Error of kind
// ErrConfig.
func CheckName(name string) error {
	if !namePattern.MatchString(name) || strings.Contains(name, Separator) || strings.HasSuffix(name, "_") {
		return &Error{Server: name, Op: "config", Kind: ErrConfig, Err: errors.New(`a server name has 1 to 32 letters, digits, '-' and '_', starts with a letter or digit, and holds no "__" and no final '_'`)}
	}
	return nil
}

func (cfg *Config) check() error {
	if err := CheckName(cfg.Name); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return &Error{Server: cfg.Name, Op: "config", Kind: ErrConfig, Err: fmt.Errorf(format, args...)}
	}
	if (cfg.Command == "") == (cfg.URL == "") {
		return bad("give exactly one of command and url")
	}
	if cfg.URL != "" && (len(cfg.Args) > 0 || len(cfg.Env) > 0 || cfg.Dir != "") {
		return bad("args, env and dir are for a command, not a url")
	}
	if cfg.Command != "" && len(cfg.Headers) > 0 {
		return bad("headers are for a url, not a command")
	}
	if cfg.URL != "" && !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return bad("url: want an http:// or https:// URL")
	}
	if cfg.Timeout < 0 || cfg.MaxRestarts < 0 {
		return bad("timeout and max_restarts must not be negative")
	}
	return nil
}

// Client is a connection to one MCP server and the tools it offers. It is
// safe for concurrent use.
type Client struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context // ended by Close: background work
	cancel context.CancelFunc
	bg     sync.WaitGroup // the background listings, waited for by Close
	bgMu   sync.Mutex
	bgDone bool // Close began: no more background listings

	mu     sync.Mutex
	conn   *conn // nil after a failed restart
	tools  []*tool.Tool
	closed bool
	// restarting is the restart in progress, nil when none: one caller
	// restarts the server, outside mu, while the others wait for it (or
	// for their context), and Tools and Close do not wait at all.
	restarting *restart
}

// restart is a restart of the server in progress: done is closed when it
// has ended, with err its failure (nil: c.conn is the new session).
type restart struct {
	done chan struct{}
	err  error
}

// conn is one session with the server.
type conn struct {
	sess   *sdk.ClientSession
	cmd    *exec.Cmd     // the server process, for a command
	stderr *tail         // the end of its standard error
	done   chan struct{} // closed when the session has ended
	ready  chan struct{} // closed when dial has ended: sess is set, or will never be
	mu     sync.Mutex
	ending bool // Close ended it: not a death
	failed bool // a request found the connection broken
}

func (c *conn) dead() bool {
	c.mu.Lock()
	failed := c.failed
	c.mu.Unlock()
	if failed {
		return true
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Connect starts or reaches the server of cfg, initialises the session and
// lists its tools. Its error is an *Error (of kind ErrConfig, ErrConnect,
// ErrTimeout or ErrProtocol).
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRestarts == 0 {
		cfg.MaxRestarts = DefaultMaxRestarts
	}
	if cfg.MaxInline == 0 {
		cfg.MaxInline = DefaultMaxInline
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Client{cfg: cfg, log: log.With("mcp_server", cfg.Name)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	cn, err := c.dial(ctx)
	if err != nil {
		c.cancel()
		return nil, err
	}
	ts, err := c.list(ctx, cn)
	if err != nil {
		c.cancel()
		cn.close()
		return nil, err
	}
	c.mu.Lock()
	c.conn, c.tools = cn, ts
	c.mu.Unlock()
	return c, nil
}

// Name returns the server's configured name.
func (c *Client) Name() string { return c.cfg.Name }

// Tools returns the server's tools, as of the last listing: at Connect,
// after a restart and after the server said its list changed.
func (c *Client) Tools() []*tool.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
}

// Close ends the session and stops the server's process. It is safe to
// call more than once.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cn := c.conn
	c.conn = nil
	c.mu.Unlock()
	c.bgMu.Lock()
	c.bgDone = true
	c.bgMu.Unlock()
	c.cancel()
	c.bg.Wait()
	if cn == nil {
		return nil
	}
	// A process that had to be stopped by a signal, or exited with a
	// status, is stopped: what Close is for.
	var exit *exec.ExitError
	if err := cn.close(); err != nil && !errors.Is(err, sdk.ErrConnectionClosed) && !errors.As(err, &exit) {
		return &Error{Server: c.cfg.Name, Op: "close", Kind: ErrClosed, Err: err}
	}
	return nil
}

func (cn *conn) close() error {
	cn.mu.Lock()
	cn.ending = true
	cn.mu.Unlock()
	err := cn.sess.Close()
	<-cn.done
	return err
}

// inherited are the variables of weft's environment a server process gets.
var inherited = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "LANG", "LC_ALL", "TZ", "SYSTEMROOT"}

// dial starts a session, bounded by the timeout.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	cn := &conn{done: make(chan struct{}), ready: make(chan struct{})}
	defer close(cn.ready)
	var t sdk.Transport
	if c.cfg.Command != "" {
		cmd := exec.Command(c.cfg.Command, c.cfg.Args...)
		cmd.Dir = c.cfg.Dir
		for _, k := range inherited {
			if v, ok := os.LookupEnv(k); ok {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
		}
		for _, k := range sortedKeys(c.cfg.Env) {
			cmd.Env = append(cmd.Env, k+"="+c.cfg.Env[k])
		}
		cn.stderr = &tail{}
		cmd.Stderr = cn.stderr
		cn.cmd = cmd
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	} else {
		hc := c.cfg.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		if len(c.cfg.Headers) > 0 {
			h := *hc
			base := h.Transport
			if base == nil {
				base = http.DefaultTransport
			}
			h.Transport = headerTransport{base: base, headers: c.cfg.Headers}
			hc = &h
		}
		t = &sdk.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: hc, MaxRetries: -1}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "weft", Version: "1"}, &sdk.ClientOptions{
		// No roots: a server must not trade the directories it was
		// given for ones weft would offer.
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			// Not c.mu: a restart holds it while it connects, and the
			// server may send this before the handshake ends.
			c.bgMu.Lock()
			defer c.bgMu.Unlock()
			if !c.bgDone {
				c.bg.Add(1)
				go c.relist(cn)
			}
		},
	})
	// A server that never answered is killed once the SDK has returned
	// (it starts the process): here, or after connectSession gave up.
	kill := func() {
		if cn.cmd != nil && cn.cmd.Process != nil {
			_ = cn.cmd.Process.Kill()
		}
	}
	sess, abandoned, err := connectSession(ctx, client, t, kill)
	if err != nil {
		if !abandoned {
			kill()
		}
		kind := ErrConnect
		if ctx.Err() != nil {
			kind = ErrTimeout
		}
		return nil, &Error{Server: c.cfg.Name, Op: "connect", Kind: kind, Err: cn.withStderr(err)}
	}
	cn.sess = sess
	go func() {
		err := sess.Wait()
		cn.mu.Lock()
		ending := cn.ending
		cn.mu.Unlock()
		if !ending { // logged before done is closed, which those who wait on it may read
			c.log.Warn("mcp: the server's connection ended; the next call restarts it", "err", err, "stderr", cn.stderr.String())
		}
		close(cn.done)
	}()
	return cn, nil
}

// connectSession runs client.Connect, returning when it does or when ctx
// ends, whichever comes first: the SDK may still be closing a half-made
// session when ctx ends (its Close waits for requests in flight to a
// server that does not answer), and neither a restart's caller nor Close
// waits for that. When it gives up (abandoned), a session made after all
// is closed when it comes, and then, once the SDK has returned, cleanup
// runs.
func connectSession(ctx context.Context, client *sdk.Client, t sdk.Transport, cleanup func()) (_ *sdk.ClientSession, abandoned bool, _ error) {
	type made struct {
		sess *sdk.ClientSession
		err  error
	}
	ch := make(chan made, 1)
	go func() {
		sess, err := client.Connect(ctx, t, nil)
		ch <- made{sess, err}
	}()
	select {
	case m := <-ch:
		return m.sess, false, m.err
	case <-ctx.Done():
		go func() {
			if m := <-ch; m.sess != nil {
				_ = m.sess.Close()
			}
			cleanup()
		}()
		return nil, true, fmt.Errorf("connecting: %w", context.Cause(ctx))
	}
}

// withStderr adds the end of the server's standard error to err.
func (cn *conn) withStderr(err error) error {
	if s := cn.stderr.String(); s != "" {
		return fmt.Errorf("%w (the server's stderr ends with: %s)", err, s)
	}
	return err
}

// headerTransport adds headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// list lists the server's tools, bounded by the timeout.
func (c *Client) list(ctx context.Context, cn *conn) ([]*tool.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var out []*tool.Tool
	taken := map[string]bool{}
	for t, err := range cn.sess.Tools(ctx, nil) {
		if err != nil {
			return nil, c.callError(ctx, cn, "list tools", "", err)
		}
		out = append(out, c.makeTool(t, taken))
	}
	return out, nil
}

// relist lists the tools again after the server said they changed.
func (c *Client) relist(cn *conn) {
	defer c.bg.Done()
	// The server may say so during the handshake, before the session is
	// set.
	select {
	case <-cn.ready:
	case <-c.ctx.Done():
		return
	}
	if cn.sess == nil {
		return // the connection failed
	}
	ts, err := c.list(c.ctx, cn)
	if c.ctx.Err() != nil {
		return // closed meanwhile
	}
	if err != nil {
		c.log.Warn("mcp: listing the tools again after the server's tools/list_changed failed", "err", err)
		return
	}
	c.mu.Lock()
	if c.conn == cn {
		c.tools = ts
	}
	c.mu.Unlock()
}

// QualifiedName returns the name under which the server's tool named
// toolName is offered: SERVER__TOOL, made valid as the package doc says.
// taken holds the names given so far (nil: none), and gets this one.
func QualifiedName(server, toolName string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range toolName {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := server + Separator + b.String()
	if len(name) > 64 || taken[name] || toolName == "" {
		sum := sha256.Sum256([]byte(toolName))
		suffix := "_" + hex.EncodeToString(sum[:4])
		name = name[:min(len(name), 64-len(suffix))] + suffix
	}
	if taken != nil {
		taken[name] = true
	}
	return name
}

// makeTool makes the llm/tool Tool of the server's tool t.
func (c *Client) makeTool(t *sdk.Tool, taken map[string]bool) *tool.Tool {
	params, err := json.Marshal(t.InputSchema)
	if err != nil || len(params) == 0 || params[0] != '{' {
		params = nil // the tool takes no arguments
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	name := t.Name
	return &tool.Tool{
		Def: llm.Tool{Name: QualifiedName(c.cfg.Name, name, taken), Description: desc, Parameters: params},
		Run: func(ctx context.Context, args json.RawMessage) (any, error) { return c.Call(ctx, name, args) },
	}
}

// Call calls the server's tool named name (its name on the server, not
// the qualified one) with args, a JSON object ("" or null: none), and
// returns its result as the package doc says: a string or a Result. A
// server found dead is restarted first. Its error is an *Error.
func (c *Client) Call(ctx context.Context, name string, args json.RawMessage) (any, error) {
	a, err := objectArgs(args)
	if err != nil {
		return nil, &Error{Server: c.cfg.Name, Tool: name, Op: "call", Kind: ErrArgs, Err: err}
	}
	cn, err := c.session(ctx, name)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	res, err := cn.sess.CallTool(cctx, &sdk.CallToolParams{Name: name, Arguments: a})
	if err != nil {
		return nil, c.callError(cctx, cn, "call", name, err)
	}
	if res.IsError {
		return nil, &Error{Server: c.cfg.Name, Tool: name, Op: "call", Kind: ErrTool, Err: errors.New(errorText(res))}
	}
	if res.NeedsInput() {
		return nil, &Error{Server: c.cfg.Name, Tool: name, Op: "call", Kind: ErrProtocol, Err: errors.New("the tool asks the client for input, which weft does not give")}
	}
	return resultValue(res, c.cfg.MaxInline), nil
}

// objectArgs reads a call's arguments: a JSON object, or one encoded as a
// JSON string (some models encode twice); empty or null is {}.
func objectArgs(raw json.RawMessage) (map[string]any, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return map[string]any{}, nil
	}
	var str string
	if json.Unmarshal([]byte(s), &str) == nil {
		s = str
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, errors.New("the arguments are not a JSON object")
	}
	return m, nil
}

// callError classifies the error of a request on cn, whose context is
// ctx; a connection that ended is dropped, for the next call to restart.
func (c *Client) callError(ctx context.Context, cn *conn, op, name string, err error) error {
	e := &Error{Server: c.cfg.Name, Tool: name, Op: op, Err: err}
	var we *jsonrpc.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.Kind, e.Err = ErrTimeout, fmt.Errorf("no answer within %s: %w", c.cfg.Timeout, err)
	case ctx.Err() != nil:
		e.Kind = ErrClosed
		e.Err = fmt.Errorf("the call was cancelled: %w", err)
	case errors.As(err, &we):
		e.Kind = ErrProtocol
	default:
		// The connection failed (the process exited, the HTTP session
		// was lost): drop it, the next call restarts it.
		e.Kind = ErrClosed
		if cn.stderr != nil {
			e.Err = cn.withStderr(err)
		}
		cn.fail()
	}
	return e
}

// fail marks cn broken, for the next call to connect again, and closes
// it.
func (cn *conn) fail() {
	cn.mu.Lock()
	cn.failed = true
	cn.mu.Unlock()
	go func() { _ = cn.close() }()
}

// session returns the live session, connecting again when the server has
// died: up to MaxRestarts attempts, with a doubling backoff, bounded by
// ctx and by Close. One caller restarts; the others wait for it, each no
// longer than its own ctx, and share its outcome (but for a restart its
// caller's ctx cut short: then a waiter whose ctx lives tries itself).
func (c *Client) session(ctx context.Context, toolName string) (*conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, &Error{Server: c.cfg.Name, Tool: toolName, Op: "call", Kind: ErrClosed, Err: errors.New("the client is closed")}
		}
		if c.conn != nil && !c.conn.dead() {
			cn := c.conn
			c.mu.Unlock()
			return cn, nil
		}
		if r := c.restarting; r != nil {
			c.mu.Unlock()
			select {
			case <-r.done:
			case <-ctx.Done():
				return nil, &Error{Server: c.cfg.Name, Tool: toolName, Op: "restart", Kind: ErrConnect, Err: fmt.Errorf("waiting for the server's restart: %w", ctx.Err())}
			}
			if r.err != nil && !(errors.Is(r.err, context.Canceled) || errors.Is(r.err, context.DeadlineExceeded)) {
				return nil, r.err
			}
			continue // restarted, or its caller gave up: look again
		}
		if c.conn != nil {
			go func(cn *conn) { _ = cn.close() }(c.conn)
			c.conn = nil
		}
		r := &restart{done: make(chan struct{})}
		c.restarting = r
		c.mu.Unlock()
		cn, ts, err := c.restart(ctx, toolName)
		c.mu.Lock()
		c.restarting = nil
		if err == nil && c.closed {
			_ = cn.close()
			cn, err = nil, &Error{Server: c.cfg.Name, Tool: toolName, Op: "restart", Kind: ErrClosed, Err: errors.New("the client was closed during the restart")}
		}
		if err == nil {
			c.conn, c.tools = cn, ts
		}
		r.err = err
		close(r.done)
		c.mu.Unlock()
		return cn, err
	}
}

// restart connects to the server again and lists its tools: up to
// MaxRestarts attempts, with a doubling backoff, until ctx ends or Close
// is called.
func (c *Client) restart(ctx context.Context, toolName string) (*conn, []*tool.Tool, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	unhook := context.AfterFunc(c.ctx, stop) // Close ends the restart
	defer unhook()
	c.log.Warn("mcp: restarting the server", "tool", toolName, "max_attempts", c.cfg.MaxRestarts)
	var last error
	wait := firstBackoff
	for attempt := 1; attempt <= c.cfg.MaxRestarts; attempt++ {
		if attempt > 1 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, nil, &Error{Server: c.cfg.Name, Tool: toolName, Op: "restart", Kind: ErrConnect, Err: fmt.Errorf("cancelled after %d attempts: %w", attempt-1, errors.Join(ctx.Err(), last))}
			}
			wait *= 2
		}
		cn, err := c.dial(ctx)
		if err == nil {
			ts, lerr := c.list(ctx, cn)
			if lerr == nil {
				c.log.Warn("mcp: the server was restarted", "attempt", attempt)
				return cn, ts, nil
			}
			_ = cn.close()
			err = lerr
		}
		last = err
		c.log.Error("mcp: restarting the server failed", "attempt", attempt, "err", err)
		if ctx.Err() != nil {
			return nil, nil, &Error{Server: c.cfg.Name, Tool: toolName, Op: "restart", Kind: ErrConnect, Err: fmt.Errorf("cancelled after %d attempts: %w", attempt, errors.Join(ctx.Err(), last))}
		}
	}
	return nil, nil, &Error{Server: c.cfg.Name, Tool: toolName, Op: "restart", Kind: ErrConnect, Err: fmt.Errorf("%d attempts failed, the last: %w", c.cfg.MaxRestarts, last)}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// tail keeps the last bytes written to it: a server's standard error.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = slices.Clone(t.buf[len(t.buf)-tailMax:])
	}
	return len(p), nil
}

// String returns what was kept, trimmed; "" for a nil tail.
func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
