package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/internal/napper"
	"github.com/weftlang/weft/mcpserver"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
)

const calcWF = `workflow Calc {
  description: "Echo typed parameters."
  parameters {
    input_text: String
    limit: Int
    tags: List[String] = []
  }
  nodes {
    node echo {
      action: "pass"
      inputs {
        limit: limit
        tags: tags
      }
      outputs {
        n: Int
        t: List[String]
      }
    }
  }
  initial: echo
  finals: [ echo ]
}
`

const boomWF = `workflow Boom {
  nodes {
    node fail {
      action: "boom"
      inputs {
        text: input_text
      }
      outputs {
        out: String
      }
    }
  }
  initial: fail
  finals: [ fail ]
}
`

// fixture is a service serving Calc, Approval, Boom and Sleepy as MCP
// tools, and a client connected to it in memory.
type fixture struct {
	svc *service.Service
	nap *napper.Napper
	cs  *sdk.ClientSession
	srv *mcpserver.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	nap := napper.New()
	reg := nap.Registry()
	reg.Replace("boom", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		return errors.New("the boom action always fails")
	}))
	svc, err := service.New(service.Options{Store: memory.New(), Actions: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	var wfs []mcpserver.Workflow
	for _, src := range []service.Source{
		service.Bytes("calc.wf", []byte(calcWF)),
		service.File("../server/testdata/approval.wf"),
		service.Bytes("boom.wf", []byte(boomWF)),
		service.File("../server/testdata/sleepy.wf"),
	} {
		wf, err := svc.Open(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		wfs = append(wfs, mcpserver.Workflow{Workflow: wf})
	}
	srv, err := mcpserver.New(mcpserver.Options{Service: svc, Workflows: wfs, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &fixture{svc: svc, nap: nap, cs: cs, srv: srv}
}

// call calls a tool and returns its result with its structured content
// decoded, checked against the tool's output schema.
func (f *fixture) call(t *testing.T, ctx context.Context, name string, args any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	res, err := f.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sc := structured(t, res)
	f.checkOutput(t, name, sc)
	return res, sc
}

// checkOutput validates a result's structured content against the output
// schema the tool lists.
func (f *fixture) checkOutput(t *testing.T, name string, sc map[string]any) {
	t.Helper()
	lt, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name != name {
			continue
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("out.json", asJSON(t, tl.OutputSchema)); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("out.json")
		if err != nil {
			t.Fatalf("%s's output schema: %v", name, err)
		}
		if err := sch.Validate(asJSON(t, sc)); err != nil {
			t.Errorf("%s's result does not fit its output schema: %v\n%v", name, err, sc)
		}
		return
	}
	t.Fatalf("no tool %s", name)
}

// structured is a result's structured content as JSON values, checked to
// be what its text content holds.
func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var sc map[string]any
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content: %d items, want 1", len(res.Content))
	}
	text := res.Content[0].(*sdk.TextContent).Text
	var tc map[string]any
	if err := json.Unmarshal([]byte(text), &tc); err != nil {
		t.Fatalf("text content %q: %v", text, err)
	}
	if d := cmp.Diff(sc, tc); d != "" {
		t.Errorf("text content differs from the structured content (-structured +text):\n%s", d)
	}
	return sc
}

// asJSON is v as generic JSON values.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestListTools(t *testing.T) {
	f := newFixture(t)
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		byName[tl.Name] = tl
	}
	if d := cmp.Diff([]string{"Approval", "Boom", "Calc", "Sleepy", "weft_resume"}, names); d != "" {
		t.Fatalf("tools (-want +got):\n%s", d)
	}
	calc := byName["Calc"]
	if calc.Description != "Echo typed parameters." {
		t.Errorf("Calc description = %q", calc.Description)
	}
	if got := byName["Boom"].Description; got != "Runs the weft workflow Boom." {
		t.Errorf("Boom description = %q", got)
	}
	wantIn := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"input_text": map[string]any{"type": "string"},
			"limit":      map[string]any{"type": "integer"},
			"tags":       map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"thread_id":  map[string]any{"type": "string", "description": "continue this thread (its variables carry over) instead of starting a new one"},
		},
		"required":             []any{"limit"},
		"additionalProperties": false,
	}
	if d := cmp.Diff(wantIn, asJSON(t, calc.InputSchema)); d != "" {
		t.Errorf("Calc input schema (-want +got):\n%s", d)
	}
	out := asJSON(t, calc.OutputSchema).(map[string]any)
	props := out["properties"].(map[string]any)
	wantOuts := map[string]any{
		"type": "object", "title": "echo",
		"properties":           map[string]any{"n": map[string]any{"type": "integer"}, "t": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
		"required":             []any{"n", "t"},
		"additionalProperties": false,
	}
	if d := cmp.Diff(wantOuts, props["outputs"]); d != "" {
		t.Errorf("Calc output schema's outputs (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"type": "string", "description": "the final node that ended the run", "enum": []any{"echo"}}, props["final"]); d != "" {
		t.Errorf("Calc output schema's final (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{"status", "thread_id"}, out["required"]); d != "" {
		t.Errorf("output schema's required (-want +got):\n%s", d)
	}
	// weft_resume's answer: text, or the outputs of Approval's review.
	rs := asJSON(t, byName["weft_resume"].InputSchema).(map[string]any)
	answer := rs["properties"].(map[string]any)["answer"].(map[string]any)["anyOf"].([]any)
	wantReview := map[string]any{
		"type": "object", "title": "Approval.review",
		"properties":           map[string]any{"verdict": map[string]any{"type": "string", "enum": []any{"yes", "no"}}},
		"required":             []any{"verdict"},
		"additionalProperties": false,
	}
	if len(answer) != 2 || cmp.Diff(wantReview, answer[1]) != "" {
		t.Errorf("weft_resume answer schema: %v", answer)
	}
}

func TestCallCompletes(t *testing.T) {
	f := newFixture(t)
	res, sc := f.call(t, context.Background(), "Calc", map[string]any{"limit": 3, "tags": []string{"a", "b"}})
	if res.IsError {
		t.Fatalf("isError: %v", sc)
	}
	if sc["status"] != "completed" || sc["final"] != "echo" || sc["thread_id"] == "" {
		t.Errorf("result %v", sc)
	}
	if d := cmp.Diff(map[string]any{"n": float64(3), "t": []any{"a", "b"}}, sc["outputs"]); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}
	// The run is a thread of the store.
	st, err := f.svc.State(context.Background(), sc["thread_id"].(string))
	if err != nil || st.Status != "completed" {
		t.Errorf("thread state %+v, %v", st, err)
	}
}

func TestWaitingThenResume(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	res, sc := f.call(t, ctx, "Approval", map[string]any{"input_text": "a draft"})
	if res.IsError || sc["status"] != "waiting" {
		t.Fatalf("result %v", sc)
	}
	thread := sc["thread_id"].(string)
	qs := sc["questions"].([]any)
	if len(qs) != 1 {
		t.Fatalf("questions %v", qs)
	}
	q := qs[0].(map[string]any)
	if q["node"] != "review" || q["question"] != "Approve this draft?" {
		t.Errorf("question %v", q)
	}
	if next, _ := sc["next"].(string); !strings.Contains(next, "weft_resume") || !strings.Contains(next, thread) {
		t.Errorf("next does not say how to answer: %q", next)
	}
	// A waiting thread takes no new run.
	res, sc = f.call(t, ctx, "Approval", map[string]any{"input_text": "another", "thread_id": thread})
	if !res.IsError || sc["error"].(map[string]any)["kind"] != "waiting" {
		t.Errorf("a new run in the waiting thread: %v", sc)
	}
	// A wrong answer is a tool error, and the run keeps waiting.
	res, sc = f.call(t, ctx, "weft_resume", map[string]any{"thread_id": thread, "answer": map[string]any{"verdict": "maybe"}})
	if !res.IsError || sc["error"].(map[string]any)["kind"] != "mismatch" {
		t.Errorf("wrong answer: %v", sc)
	}
	// "no" goes round once; then an object answer publishes.
	res, sc = f.call(t, ctx, "weft_resume", map[string]any{"thread_id": thread, "answer": "no"})
	if res.IsError || sc["status"] != "waiting" {
		t.Fatalf("after no: %v", sc)
	}
	res, sc = f.call(t, ctx, "weft_resume", map[string]any{"thread_id": thread, "answer": map[string]any{"verdict": "yes"}})
	if res.IsError || sc["status"] != "completed" || sc["final"] != "publish" {
		t.Fatalf("after yes: %v", sc)
	}
	if d := cmp.Diff(map[string]any{"published": "a draft", "revisions": float64(1)}, sc["outputs"]); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}
}

func TestFailingRun(t *testing.T) {
	f := newFixture(t)
	res, sc := f.call(t, context.Background(), "Boom", map[string]any{"input_text": "x"})
	if !res.IsError || sc["status"] != "failed" {
		t.Fatalf("result %v", sc)
	}
	e := sc["error"].(map[string]any)
	if !strings.Contains(e["message"].(string), "the boom action always fails") || e["kind"] != "internal" {
		t.Errorf("error %v", e)
	}
}

func TestBadArguments(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		args any
		want string
	}{
		{map[string]any{"limit": "three"}, `$.limit: want Int, got String "three"`},
		{map[string]any{"limit": 1, "tags": []any{"a", 2}}, "$.tags[1]: want String, got Int 2"},
		{map[string]any{}, "$.limit: required (Int)"},
		{map[string]any{"limit": 1, "nope": true}, "$.nope: no such argument"},
		{map[string]any{"limit": 1, "thread_id": 7}, "$.thread_id: "},
	} {
		res, sc := f.call(t, context.Background(), "Calc", c.args)
		if !res.IsError {
			t.Errorf("%v: not an error: %v", c.args, sc)
			continue
		}
		e := sc["error"].(map[string]any)
		if msg := e["message"].(string); !strings.HasPrefix(msg, c.want) || strings.Contains(msg, " at [") || e["kind"] != "invalid_input" {
			t.Errorf("%v: error %v, want it to start %q", c.args, e, c.want)
		}
	}
	res, sc := f.call(t, context.Background(), "Calc", map[string]any{"limit": 1, "input_text": strings.Repeat("x", mcpserver.DefaultMaxArgumentBytes)})
	if !res.IsError || !strings.Contains(sc["error"].(map[string]any)["message"].(string), "more than the 1048576 allowed") {
		t.Errorf("huge arguments: %v", sc)
	}
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.cs.CallTool(ctx, &sdk.CallToolParams{Name: "Sleepy", Arguments: map[string]any{"input_text": "zz", "thread_id": "t-cancel"}})
		done <- err
	}()
	f.nap.WaitStarted(t, "zz")
	sctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	// From the thread's first event: the subscription starts with the
	// iteration, after the cancel.
	events := f.svc.Subscribe(sctx, "t-cancel", &service.Cursor{})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("call: %v, want context.Canceled", err)
	}
	ended := false
	for e, err := range events {
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		if e.Type == engine.RunCancelled {
			ended = true
			break
		}
		if e.Type == engine.RunFinished || e.Type == engine.RunFailed {
			t.Fatalf("run ended %v, want cancelled", e.Type)
		}
	}
	if !ended {
		t.Fatal("no run_cancelled event")
	}
	// The event comes before the run's end reaches the store (async
	// durability): wait for the run to leave "running".
	var st *service.State
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st, err = f.svc.State(context.Background(), "t-cancel"); err != nil || st.Status != "running" {
			break
		}
	}
	if err != nil || st.Status != "cancelled" {
		t.Errorf("thread %+v, %v; want cancelled", st, err)
	}
}

// TestClose: Close cancels the runs of the calls in progress, which
// return a cancelled result, and refuses new calls.
func TestClose(t *testing.T) {
	f := newFixture(t)
	type out struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := f.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "Sleepy", Arguments: map[string]any{"input_text": "zz", "thread_id": "t-close"}})
		done <- out{res, err}
	}()
	f.nap.WaitStarted(t, "zz")
	f.srv.Close()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if sc := structured(t, o.res); !o.res.IsError || sc["status"] != "cancelled" || sc["error"].(map[string]any)["kind"] != "cancelled" {
		t.Errorf("call cut by Close: %v", sc)
	}
	st, err := f.svc.State(context.Background(), "t-close")
	if err != nil || st.Status != "cancelled" {
		t.Errorf("thread %+v, %v; want cancelled", st, err)
	}
	res, sc := f.call(t, context.Background(), "Calc", map[string]any{"limit": 1})
	if !res.IsError || sc["error"].(map[string]any)["kind"] != "cancelled" {
		t.Errorf("call after Close: %v", sc)
	}
}

func TestProgress(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	got := make(chan string, 16)
	// A second client with a progress handler.
	_ = f
	svc := f.svc
	wf, err := svc.Open(ctx, service.Bytes("calc.wf", []byte(calcWF)))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Service: svc, Workflows: []mcpserver.Workflow{{Name: "calc v2!", Workflow: wf}}})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { got <- r.Params.Message },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p := &sdk.CallToolParams{Name: "calc_v2_", Arguments: map[string]any{"limit": 1}}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, p)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", res, err)
	}
	var msgs []string
	for len(msgs) < 2 {
		select {
		case m := <-got:
			msgs = append(msgs, m)
		case <-time.After(10 * time.Second):
			t.Fatalf("progress: %v", msgs)
		}
	}
	if d := cmp.Diff([]string{"node echo started", "node echo finished"}, msgs); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{"Calc": "Calc", "my flow.v2": "my_flow_v2", "": "workflow", "é": "workflow", strings.Repeat("a", 70): strings.Repeat("a", 64)} {
		if got := mcpserver.ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewRefusesTwoToolsOfOneName(t *testing.T) {
	ctx := context.Background()
	svc, err := service.New(service.Options{Store: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Bytes("calc.wf", []byte(calcWF)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcpserver.New(mcpserver.Options{Service: svc, Workflows: []mcpserver.Workflow{{Workflow: wf}, {Name: "Calc", Workflow: wf}}})
	if !errors.Is(err, mcpserver.ErrConfig) {
		t.Errorf("err = %v, want ErrConfig", err)
	}
}

const twoWF = `workflow Two {
  parameters {
    input_text: String
    pick: Bool = false
  }
  nodes {
    node start {
      action: "pass"
      inputs {
        text: input_text
      }
      outputs {
        x: String
      }
    }
    node a {
      action: "pass"
      inputs {
        x: start.x
      }
      outputs {
        a: String
      }
    }
    node b {
      action: "pass"
      inputs {
        n: 7
      }
      outputs {
        b: Int
      }
    }
  }
  edges {
    edge { from: start; to: a; condition: pick }
    edge { from: start; to: b }
  }
  initial: start
  finals: [ a, b ]
}
`

// TestSeveralFinals: a workflow of two final nodes has outputs anyOf the
// object of each, and final names the one that ended the run.
func TestSeveralFinals(t *testing.T) {
	ctx := context.Background()
	svc, err := service.New(service.Options{Store: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Bytes("two.wf", []byte(twoWF)))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Service: svc, Workflows: []mcpserver.Workflow{{Workflow: wf}}})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	f := &fixture{svc: svc, cs: cs, srv: srv}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	props := asJSON(t, lt.Tools[0].OutputSchema).(map[string]any)["properties"].(map[string]any)
	want := map[string]any{"anyOf": []any{
		map[string]any{"type": "object", "title": "a", "properties": map[string]any{"a": map[string]any{"type": "string"}}, "required": []any{"a"}, "additionalProperties": false},
		map[string]any{"type": "object", "title": "b", "properties": map[string]any{"b": map[string]any{"type": "integer"}}, "required": []any{"b"}, "additionalProperties": false},
	}}
	if d := cmp.Diff(want, props["outputs"]); d != "" {
		t.Errorf("outputs schema (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{"a", "b"}, props["final"].(map[string]any)["enum"]); d != "" {
		t.Errorf("final enum (-want +got):\n%s", d)
	}
	_, sc := f.call(t, ctx, "Two", map[string]any{"input_text": "hi"})
	if sc["final"] != "b" || cmp.Diff(map[string]any{"b": float64(7)}, sc["outputs"]) != "" {
		t.Errorf("Two: %v", sc)
	}
	_, sc = f.call(t, ctx, "Two", map[string]any{"input_text": "hi", "pick": true})
	if sc["final"] != "a" || cmp.Diff(map[string]any{"a": "hi"}, sc["outputs"]) != "" {
		t.Errorf("Two with pick: %v", sc)
	}
}

// An HTTP session that had no request for SessionTimeout is closed: a
// later request with its id is answered 404 (so a client that went away
// without ending its session leaves nothing behind), and a new session
// works.
func TestIdleHTTPSessionIsClosed(t *testing.T) {
	svc, err := service.New(service.Options{Store: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	wf, err := svc.Open(context.Background(), service.Bytes("calc.wf", []byte(calcWF)))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Service: svc, Workflows: []mcpserver.Workflow{{Workflow: wf}}, SessionTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	post := func(session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp, body := post("", initialize)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, id, body)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if resp, body := post(id, ping); resp.StatusCode != 200 {
		t.Fatalf("a ping in the session: %d %s", resp.StatusCode, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body := post(id, ping)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle session still answers after 5 s: %d %s", resp.StatusCode, body)
		}
		time.Sleep(400 * time.Millisecond) // longer than the timeout: idle
	}
	if resp, body := post("", initialize); resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == id {
		t.Fatalf("a new session: %d %s", resp.StatusCode, body)
	}
}
