package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftlang/weft/internal/mcptest"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tool"
)

// serverJS returns the path of the entry point of one of the reference
// servers installed in test/mcp, skipping the test without node or them.
func serverJS(t *testing.T, pkg, file string) string {
	t.Helper()
	return mcptest.ServerJS(t, pkg, file)
}

// logBuffer is a slog logger writing into a buffer the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func connect(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func everything(t *testing.T, cfg Config) *Client {
	t.Helper()
	cfg.Command = "node"
	cfg.Args = []string{serverJS(t, "server-everything", "index.js"), "stdio"}
	if cfg.Name == "" {
		cfg.Name = "everything"
	}
	return connect(t, cfg)
}

func find(t *testing.T, c *Client, name string) *tool.Tool {
	t.Helper()
	for _, tl := range c.Tools() {
		if tl.Def.Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range c.Tools() {
		names = append(names, tl.Def.Name)
	}
	t.Fatalf("no tool %s among %v", name, names)
	return nil
}

// call runs the tool as the tool loop does, returning what the model gets.
func call(t *testing.T, tl *tool.Tool, args string) string {
	t.Helper()
	out, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tl.Def.Name, args, err)
	}
	return out
}

func TestEverythingStdio(t *testing.T) {
	c := everything(t, Config{})
	echo := find(t, c, "everything__echo")
	var schema struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(echo.Def.Parameters, &schema); err != nil || schema.Properties["message"] == nil || len(schema.Required) != 1 || schema.Required[0] != "message" {
		t.Errorf("echo's schema = %s (%v), want the server's, with message required", echo.Def.Parameters, err)
	}
	if echo.Def.Description == "" {
		t.Error("echo has no description")
	}
	if _, err := tool.NewRegistry(c.Tools()...); err != nil {
		t.Errorf("the tools do not make a registry: %v", err)
	}

	if got, want := call(t, echo, `{"message":"hello"}`), `"Echo: hello"`; got != want {
		t.Errorf("echo = %s, want %s", got, want)
	}
	if got, want := call(t, find(t, c, "everything__get-sum"), `{"a":2,"b":40}`), `"The sum of 2 and 40 is 42."`; got != want {
		t.Errorf("get-sum = %s, want %s", got, want)
	}

	// An image: inline base64 PNG data.
	var img Result
	if err := json.Unmarshal([]byte(call(t, find(t, c, "everything__get-tiny-image"), `{}`)), &img); err != nil {
		t.Fatal(err)
	}
	var png *Block
	for i := range img.Content {
		if img.Content[i].Type == "image" {
			png = &img.Content[i]
		}
	}
	if png == nil || png.MIMEType != "image/png" || png.Omitted != "" {
		t.Fatalf("get-tiny-image = %+v, want an inline image/png block", img)
	}
	data, err := base64.StdEncoding.DecodeString(png.Data)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || int64(len(data)) != png.Size {
		t.Errorf("the image data is not the PNG of %d bytes: %d bytes, %v", png.Size, len(data), err)
	}

	// Structured content.
	var weather struct {
		Structured struct {
			Temperature float64 `json:"temperature"`
			Conditions  string  `json:"conditions"`
		} `json:"structured"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(call(t, find(t, c, "everything__get-structured-content"), `{"location":"Chicago"}`)), &weather); err != nil {
		t.Fatal(err)
	}
	if weather.Structured.Temperature != 36 || weather.Structured.Conditions != "Light rain / drizzle" || !strings.Contains(weather.Text, "36") {
		t.Errorf("get-structured-content = %+v", weather)
	}

	// Resource links.
	var links Result
	if err := json.Unmarshal([]byte(call(t, find(t, c, "everything__get-resource-links"), `{"count":2}`)), &links); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range links.Content {
		if b.Type == "resource_link" && strings.HasPrefix(b.URI, "demo://") && b.Name != "" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("get-resource-links = %+v, want 2 resource links", links)
	}

	// An embedded text resource, and a blob one.
	var ref Result
	if err := json.Unmarshal([]byte(call(t, find(t, c, "everything__get-resource-reference"), `{"resourceType":"Text","resourceId":3}`)), &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Content) != 1 || ref.Content[0].Type != "resource" || !strings.Contains(ref.Content[0].URI, "3") || ref.Content[0].Text == "" {
		t.Errorf("get-resource-reference (text) = %+v, want one embedded text resource", ref)
	}
	ref = Result{}
	if err := json.Unmarshal([]byte(call(t, find(t, c, "everything__get-resource-reference"), `{"resourceType":"Blob","resourceId":2}`)), &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Content) != 1 || ref.Content[0].Type != "resource" || ref.Content[0].Data == "" || ref.Content[0].Size == 0 {
		t.Errorf("get-resource-reference (blob) = %+v, want one embedded blob", ref)
	}
}

func TestInlineBound(t *testing.T) {
	c := everything(t, Config{MaxInline: 10})
	var img Result
	if err := json.Unmarshal([]byte(call(t, find(t, c, "everything__get-tiny-image"), `{}`)), &img); err != nil {
		t.Fatal(err)
	}
	for _, b := range img.Content {
		if b.Type == "image" {
			if b.Data != "" || !strings.Contains(b.Omitted, "not included") || b.Size <= 10 {
				t.Errorf("an image over the bound = %+v, want a placeholder", b)
			}
			return
		}
	}
	t.Errorf("no image in %+v", img)
}

func TestEnvIsPassedAndWeftsIsNot(t *testing.T) {
	t.Setenv("WEFT_MCP_TEST_LEAK", "should-not-reach-the-server")
	c := everything(t, Config{Env: map[string]string{"WEFT_MCP_TEST_GIVEN": "given-value"}})
	out := call(t, find(t, c, "everything__get-env"), `{}`)
	if !strings.Contains(out, "given-value") {
		t.Errorf("get-env = %.300s, want WEFT_MCP_TEST_GIVEN", out)
	}
	if strings.Contains(out, "should-not-reach-the-server") {
		t.Errorf("get-env shows a variable of weft's environment that was not given: %.300s", out)
	}
}

func TestFilesystem(t *testing.T) {
	js := serverJS(t, "server-filesystem", "index.js")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("weft was here"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := connect(t, Config{Name: "fs", Command: "node", Args: []string{js, root}})
	var r Result
	got := call(t, find(t, c, "fs__read_text_file"), fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "note.txt")))
	if err := json.Unmarshal([]byte(got), &r); err != nil || r.Text != "weft was here" || fmt.Sprint(r.Structured) != "map[content:weft was here]" {
		t.Errorf("read_text_file = %s, want the text and its structured content", got)
	}
	// Outside the allowed root: the server's isError result is a tool
	// error, which the model gets.
	_, err := find(t, c, "fs__read_text_file").Call(context.Background(), json.RawMessage(`{"path":"/etc/hostname"}`))
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrTool || e.Server != "fs" || e.Tool != "read_text_file" || !strings.Contains(strings.ToLower(err.Error()), "denied") {
		t.Errorf("reading outside the root = %v, want an *Error of kind ErrTool naming fs and read_text_file, with the server's message", err)
	}
}

func TestMemory(t *testing.T) {
	js := serverJS(t, "server-memory", "index.js")
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	c := connect(t, Config{Name: "memory", Command: "node", Args: []string{js}, Env: map[string]string{"MEMORY_FILE_PATH": file}})
	call(t, find(t, c, "memory__create_entities"), `{"entities":[{"name":"weft","entityType":"engine","observations":["written in Go"]}]}`)
	out := call(t, find(t, c, "memory__read_graph"), `{}`)
	if !strings.Contains(out, "written in Go") || !strings.Contains(out, "engine") {
		t.Errorf("read_graph = %s, want the entity created", out)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "written in Go") {
		t.Errorf("the memory file (MEMORY_FILE_PATH from env) = %q, %v", b, err)
	}
}

// freePort returns a TCP port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// startHTTPEverything runs server-everything over streamable HTTP and
// returns its /mcp URL once it listens.
func startHTTPEverything(t *testing.T) string {
	t.Helper()
	url, _ := startHTTPEverythingOn(t, freePort(t))
	return url
}

// startHTTPEverythingOn is startHTTPEverything on port; it returns the
// process too.
func startHTTPEverythingOn(t *testing.T, port string) (string, *exec.Cmd) {
	t.Helper()
	js := serverJS(t, "server-everything", "index.js")
	cmd := exec.Command("node", js, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	var out logBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s: %s", port, out.String())
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, not an assertion
	}
	return "http://127.0.0.1:" + port + "/mcp", cmd
}

// TestHTTPServerRestarted kills a streamable HTTP server and starts it
// again: the client, whose session is gone, connects again.
func TestHTTPServerRestarted(t *testing.T) {
	port := freePort(t)
	url, cmd := startHTTPEverythingOn(t, port)
	var logs logBuffer
	c := connect(t, Config{Name: "web", URL: url, Timeout: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	echo := find(t, c, "web__echo")
	call(t, echo, `{"message":"one"}`)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	startHTTPEverythingOn(t, port)
	// The first call may find the session gone (ErrClosed, or the new
	// server's refusal of the old session); the one after it connects
	// again.
	var got string
	for i := range 2 {
		out, err := echo.Call(context.Background(), json.RawMessage(`{"message":"two"}`))
		if err == nil {
			got = out
			break
		}
		if i == 1 {
			t.Fatalf("echo after the server came back: %v", err)
		}
		t.Logf("the first call after the restart: %v", err)
	}
	if got != `"Echo: two"` {
		t.Errorf("echo = %s", got)
	}
	if !strings.Contains(logs.String(), "restarted") {
		t.Errorf("the log does not tell of the reconnection:\n%s", logs.String())
	}
	// Close while the server is still there (its session is deleted).
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestEverythingStreamableHTTP(t *testing.T) {
	url := startHTTPEverything(t)
	c := connect(t, Config{Name: "web", URL: url, Headers: map[string]string{"X-Weft-Test": "1"}})
	if got, want := call(t, find(t, c, "web__echo"), `{"message":"over http"}`), `"Echo: over http"`; got != want {
		t.Errorf("echo = %s, want %s", got, want)
	}
	if got := call(t, find(t, c, "web__get-sum"), `{"a":1,"b":2}`); !strings.Contains(got, "is 3") {
		t.Errorf("get-sum = %s", got)
	}
}

// TestHeaders checks that the configured headers reach the server, on a
// server of the Go SDK behind a handler that records them.
func TestHeaders(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-server", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "answers pong"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the client's Close, which ends its SSE stream
	c := connect(t, Config{Name: "go", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}})
	if got := call(t, find(t, c, "go__ping"), `{}`); got != `"pong"` {
		t.Errorf("ping = %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no request")
	}
	for _, a := range seen {
		if a != "Bearer s3cret" {
			t.Errorf("a request had Authorization %q, want the configured header", a)
		}
	}
}

func TestKilledServerRestarts(t *testing.T) {
	var logs logBuffer
	c := everything(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	echo := find(t, c, "everything__echo")
	call(t, echo, `{"message":"one"}`)
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	pid := cn.cmd.Process.Pid
	if err := cn.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-cn.done // the client saw the session end
	if got := call(t, echo, `{"message":"two"}`); got != `"Echo: two"` {
		t.Errorf("echo after the kill = %s", got)
	}
	c.mu.Lock()
	newPid := c.conn.cmd.Process.Pid
	c.mu.Unlock()
	if newPid == pid {
		t.Errorf("the server was not restarted: pid %d", pid)
	}
	if l := logs.String(); !strings.Contains(l, "connection ended") || !strings.Contains(l, "restarted") {
		t.Errorf("the log does not tell of the death and the restart:\n%s", l)
	}
}

func TestRestartIsBounded(t *testing.T) {
	js := serverJS(t, "server-everything", "index.js")
	flag := filepath.Join(t.TempDir(), "up")
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The server starts while the flag file exists.
	c := connect(t, Config{Name: "flaky", Command: "sh", Args: []string{"-c", `test -f "$1" && exec node "$2" stdio`, "sh", flag, js},
		MaxRestarts: 2, Timeout: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	_ = cn.cmd.Process.Kill()
	<-cn.done
	start := time.Now()
	_, err := find(t, c, "flaky__echo").Call(context.Background(), json.RawMessage(`{"message":"x"}`))
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrConnect || !strings.Contains(err.Error(), "2 attempts failed") {
		t.Errorf("a call to a server that cannot restart = %v, want an *Error of kind ErrConnect after 2 attempts", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the restarts took %s", d)
	}
}

func TestCallTimeout(t *testing.T) {
	// The timeout bounds starting node too: 3s leaves it time on a busy
	// machine.
	c := everything(t, Config{Timeout: 3 * time.Second})
	start := time.Now()
	_, err := find(t, c, "everything__trigger-long-running-operation").Call(context.Background(), json.RawMessage(`{"duration":30,"steps":1}`))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "everything") || !strings.Contains(err.Error(), "trigger-long-running-operation") {
		t.Errorf("a call longer than the timeout = %v, want ErrTimeout naming the server and the tool", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the call returned after %s, want about 3s", d)
	}
	// The session is still usable.
	if got := call(t, find(t, c, "everything__echo"), `{"message":"still here"}`); got != `"Echo: still here"` {
		t.Errorf("echo after a timeout = %s", got)
	}
}

func TestServerThatNeverAnswers(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	start := time.Now()
	_, err := Connect(context.Background(), Config{Name: "mute", Command: "sleep", Args: []string{"60"}, Timeout: 500 * time.Millisecond})
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrTimeout || e.Server != "mute" {
		t.Errorf("Connect to a server that never answers = %v, want an *Error of kind ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Connect returned after %s", d)
	}
}

func TestCommandThatFails(t *testing.T) {
	_, err := Connect(context.Background(), Config{Name: "bad", Command: "sh", Args: []string{"-c", "echo no such server >&2; exit 3"}, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "no such server") {
		t.Errorf("Connect to a command that exits = %v, want ErrConnect with its stderr", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Name: "", Command: "x"},
		{Name: "a.b", Command: "x"},
		{Name: "a__b", Command: "x"},
		{Name: "a_", Command: "x"},
		{Name: "a"},
		{Name: "a", Command: "x", URL: "http://h"},
		{Name: "a", URL: "ftp://h"},
		{Name: "a", URL: "http://h", Args: []string{"x"}},
		{Name: "a", Command: "x", Headers: map[string]string{"A": "b"}},
		{Name: "a", Command: "x", Timeout: -1},
	} {
		if _, err := Connect(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("Connect(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

func TestQualifiedName(t *testing.T) {
	taken := map[string]bool{}
	if got := QualifiedName("fs", "read_file", taken); got != "fs__read_file" {
		t.Errorf("got %s", got)
	}
	if got := QualifiedName("gh", "repo.get/issue", taken); got != "gh__repo_get_issue" {
		t.Errorf("got %s", got)
	}
	// A second tool that sanitises to a name taken gets a hash.
	got := QualifiedName("gh", "repo_get_issue", taken)
	if got == "gh__repo_get_issue" || !strings.HasPrefix(got, "gh__repo_get_issue_") || len(got) != len("gh__repo_get_issue_")+8 {
		t.Errorf("a clash gave %s", got)
	}
	long := QualifiedName("server", strings.Repeat("x", 100), nil)
	if len(long) != 64 || !strings.HasPrefix(long, "server__xxx") {
		t.Errorf("a long name gave %s (%d)", long, len(long))
	}
	for _, n := range []string{"fs__read_file", got, long} {
		if _, err := tool.NewRegistry(&tool.Tool{Def: toolDef(n), Run: func(context.Context, json.RawMessage) (any, error) { return nil, nil }}); err != nil {
			t.Errorf("%s is not a valid tool name: %v", n, err)
		}
	}
}

func TestObjectArgs(t *testing.T) {
	for in, want := range map[string]string{``: `{}`, `null`: `{}`, `{"a":1}`: `{"a":1}`, `"{\"a\":1}"`: `{"a":1}`} {
		m, err := objectArgs(json.RawMessage(in))
		b, _ := json.Marshal(m)
		if err != nil || string(b) != want {
			t.Errorf("objectArgs(%s) = %s, %v; want %s", in, b, err, want)
		}
	}
	for _, in := range []string{`[1]`, `3`, `"x"`, `{`} {
		if _, err := objectArgs(json.RawMessage(in)); err == nil {
			t.Errorf("objectArgs(%s) = nil error", in)
		}
	}
}

func toolDef(name string) llm.Tool { return llm.Tool{Name: name} }

// TestToolListChanged adds a tool to a running server (of the Go SDK, over
// streamable HTTP): the server's tools/list_changed makes the client list
// the tools again.
func TestToolListChanged(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-server", Version: "1"}, nil)
	handler := func(text string) func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		}
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "one"}, handler("1"))
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	c := connect(t, Config{Name: "go", URL: ts.URL})
	if n := len(c.Tools()); n != 1 {
		t.Fatalf("%d tools, want 1", n)
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "two"}, handler("2"))
	deadline := time.Now().Add(10 * time.Second)
	for len(c.Tools()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the tools after the server added one: %d, want 2", len(c.Tools()))
		}
		time.Sleep(20 * time.Millisecond) // waiting for the notification, not an assertion
	}
	if got := call(t, find(t, c, "go__two"), `{}`); got != `"2"` {
		t.Errorf("two = %s", got)
	}
}

// ctxKey carries a value from a tool call's context to its HTTP request.
type ctxKey struct{}

// ctxHeader sends the ctxKey value of a request's context as X-Ctx: what a
// tracing transport does with the call's span (telemetry.Transport).
type ctxHeader struct{}

func (ctxHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	if v, ok := r.Context().Value(ctxKey{}).(string); ok {
		r = r.Clone(r.Context())
		r.Header.Set("X-Ctx", v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestCallContextReachesHTTP: over streamable HTTP, a tool call's request
// is made with the call's context, through the configured HTTPClient, so
// a tracing transport puts the caller's span in its traceparent.
func TestCallContextReachesHTTP(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-server", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "answers pong"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var mu sync.Mutex
	var calls []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			mu.Lock()
			calls = append(calls, r.Header.Get("X-Ctx"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	c := connect(t, Config{Name: "go", URL: ts.URL, HTTPClient: &http.Client{Transport: ctxHeader{}}})
	ctx := context.WithValue(context.Background(), ctxKey{}, "span-of-the-call")
	if out, err := find(t, c, "go__ping").Call(ctx, json.RawMessage(`{}`)); err != nil || out != `"pong"` {
		t.Fatalf("ping = %s, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || calls[0] != "span-of-the-call" {
		t.Errorf("the tools/call requests carried X-Ctx %q; want one with the call's value", calls)
	}
}

// While one call restarts a dead server that hangs (here: its HTTP
// endpoint stops answering), another call gives up at its own deadline,
// Tools answers at once, and Close ends the restart: nothing waits on the
// restart's lock.
func TestRestartHoldsNoOneElse(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-server", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "answers pong"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var hang atomic.Bool
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { close(release); ts.Close() })
	c, err := Connect(context.Background(), Config{Name: "go", URL: ts.URL, Timeout: 20 * time.Second, MaxRestarts: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ping := find(t, c, "go__ping")
	hang.Store(true)
	c.mu.Lock()
	c.conn.fail() // the server died: the next call restarts it
	c.mu.Unlock()
	first := make(chan error, 1)
	go func() {
		_, err := ping.Call(context.Background(), json.RawMessage(`{}`))
		first <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c.mu.Lock()
		r := c.restarting
		c.mu.Unlock()
		if r != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no restart began")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err = ping.Call(ctx, json.RawMessage(`{}`))
	if took := time.Since(began); err == nil || took > 3*time.Second {
		t.Fatalf("a second call during the restart: %v after %v; want its deadline's error at about 300ms", err, took)
	}
	began = time.Now()
	if n := len(c.Tools()); n != 1 || time.Since(began) > time.Second {
		t.Fatalf("Tools during the restart: %d tools after %v", n, time.Since(began))
	}
	began = time.Now()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-first:
		if err == nil {
			t.Fatal("the restarting call succeeded against a hung server")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the restarting call still waits 5 s after Close")
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("Close took %v during a restart", took)
	}
}

// A server that takes every request and never answers: a connect ends
// when its context does, at whatever point of the handshake, however long
// the SDK takes to close the half-made session (about 5 s when the
// context ends while its first request is in flight).
func TestConnectToAHungServerEndsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); ts.Close() })
	for _, d := range []time.Duration{0, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, 8 * time.Millisecond, 13 * time.Millisecond, 20 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(d, cancel)
		began := time.Now()
		_, err := Connect(ctx, Config{Name: "hung", URL: ts.URL, Timeout: 20 * time.Second, Logger: slog.New(slog.DiscardHandler)})
		took := time.Since(began)
		cancel()
		var me *Error
		if !errors.As(err, &me) || !errors.Is(err, context.Canceled) {
			t.Fatalf("connect cancelled after %v: %v, want an *Error wrapping context.Canceled", d, err)
		}
		if took > 2*time.Second {
			t.Fatalf("connect cancelled after %v returned after %v", d, took)
		}
	}
}
