package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpCall calls a tool and returns the result's structured content as
// JSON values, checking that its text content is the same JSON.
func mcpCall(t *testing.T, cs *sdk.ClientSession, name string, args any) (bool, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var sc, tc map[string]any
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", name, len(res.Content))
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &tc); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(sc, tc); d != "" {
		t.Errorf("%s: text content differs from structured content:\n%s", name, d)
	}
	return res.IsError, sc
}

// checkMCPTools runs the calls both transports must answer alike, on the
// workflows of testdata/mcp.
func checkMCPTools(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Name == "Params" {
			b, _ := json.Marshal(tl.InputSchema)
			want := `{"additionalProperties":false,"properties":{"input_text":{"type":"string"},"limit":{"type":"integer"},"name":{"type":"string"},"strict":{"type":"boolean"},"tags":{"items":{"type":"string"},"type":"array"},"thread_id":{"description":"continue this thread (its variables carry over) instead of starting a new one","type":"string"}},"required":["limit"],"type":"object"}`
			if string(b) != want {
				t.Errorf("Params input schema:\n%s\nwant\n%s", b, want)
			}
		}
	}
	if d := cmp.Diff([]string{"Approval", "Boom", "Params", "weft_resume"}, names); d != "" {
		t.Fatalf("tools (-want +got):\n%s", d)
	}

	isErr, sc := mcpCall(t, cs, "Params", map[string]any{"limit": 2})
	if isErr || sc["status"] != "completed" || cmp.Diff(map[string]any{"out": "done"}, sc["outputs"]) != "" {
		t.Errorf("Params: %v", sc)
	}
	isErr, sc = mcpCall(t, cs, "Params", map[string]any{"limit": 2.5})
	if !isErr || !strings.HasPrefix(sc["error"].(map[string]any)["message"].(string), "$.limit: ") {
		t.Errorf("Params with a bad limit: %v", sc)
	}
	isErr, sc = mcpCall(t, cs, "Boom", map[string]any{"input_text": "x"})
	if !isErr || sc["status"] != "failed" || !strings.Contains(sc["error"].(map[string]any)["message"].(string), "the boom action always fails") {
		t.Errorf("Boom: %v", sc)
	}
	isErr, sc = mcpCall(t, cs, "Approval", map[string]any{"input_text": "a draft"})
	if isErr || sc["status"] != "waiting" {
		t.Fatalf("Approval: %v", sc)
	}
	thread := sc["thread_id"].(string)
	isErr, sc = mcpCall(t, cs, "weft_resume", map[string]any{"thread_id": thread, "answer": map[string]any{"verdict": "yes"}})
	if isErr || sc["status"] != "completed" || cmp.Diff(map[string]any{"published": "a draft", "revisions": float64(0)}, sc["outputs"]) != "" {
		t.Errorf("weft_resume: %v", sc)
	}
}

// TestMCPStdio: weft mcp serves the workflows of a directory as tools
// over stdio, to the Go SDK's client, logging on stderr only.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft")
	}
	bin := buildWeft(t)
	cmd := exec.Command(bin, "mcp", "testdata/mcp", "--stubs", "testdata/mcp/stubs.yaml", "--store", filepath.Join(t.TempDir(), "s.db"))
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	checkMCPTools(t, cs)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr.String(), `msg="serving MCP on stdio" tools=Approval,Boom,Params,weft_resume`) {
		t.Errorf("stderr: %s", stderr)
	}
}

// apiKeyTransport adds the x-api-key header.
type apiKeyTransport struct{ key string }

func (a apiKeyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Api-Key", a.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeMCP: weft serve serves the same tools at /mcp over streamable
// HTTP, behind its API key.
func TestServeMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft")
	}
	bin := buildWeft(t)
	s := startServe(t, bin, []string{"WEFT_TEST_KEY=s3cret"}, "testdata/mcp", "--stubs", "testdata/mcp/stubs.yaml", "--store", filepath.Join(t.TempDir(), "s.db"), "--api-key-env", "WEFT_TEST_KEY")
	resp, err := http.Post(s.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without the key: %d", resp.StatusCode)
	}
	// A request to the local server naming another host (DNS rebinding)
	// is refused, even with the key.
	evil, _ := http.NewRequest("POST", s.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	evil.Host = "evil.example.com"
	evil.Header.Set("X-Api-Key", "s3cret")
	evil.Header.Set("Content-Type", "application/json")
	evil.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(evil); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("/mcp with Host evil.example.com: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: apiKeyTransport{"s3cret"}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, s.stderr)
	}
	defer cs.Close()
	checkMCPTools(t, cs)
	// The thread of an MCP call is one of the server's threads.
	var threads []map[string]any
	req, _ := http.NewRequest("POST", s.url+"/threads/search", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "s3cret")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Body.Close()
	if err := json.NewDecoder(r2.Body).Decode(&threads); err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, th := range threads {
		statuses = append(statuses, th["status"].(string))
	}
	slices.Sort(statuses)
	// Params completed, Boom failed (LangGraph: error), Approval resumed
	// and completed; the refused call made no thread.
	if d := cmp.Diff([]string{"error", "idle", "idle"}, statuses); d != "" {
		t.Errorf("threads' statuses after the calls (-want +got):\n%s", d)
	}
}

// TestMCPUsage: weft mcp without workflows, or with a missing file or a
// bad --workers, is a usage error (exit 2) naming the problem, and writes
// nothing on stdout, the protocol's.
func TestMCPUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--store", filepath.Join(t.TempDir(), "s.db")}, "no workflow to serve"},
		{[]string{"mcp", "testdata/mcp/nope.wf", "--store", filepath.Join(t.TempDir(), "s.db")}, "testdata/mcp/nope.wf: no such file or directory"},
		{[]string{"mcp", "testdata/mcp", "--workers", "0"}, "--workers 0: give 1 or more"},
	} {
		r := weft(t, c.args)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("weft %v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
}
