package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tool"
)

// reply is one scripted model turn: it sees the request and answers.
type reply func(req *llm.Request) (*llm.Response, error)

// fakeModel answers with its script, one reply per call, and records every
// request it got (deep enough copies to survive the loop's appends).
type fakeModel struct {
	mu     sync.Mutex
	script []reply
	reqs   []llm.Request
}

func newModel(script ...reply) *fakeModel { return &fakeModel{script: script} }

func (f *fakeModel) Chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	n := len(f.reqs)
	cp := *req
	cp.Messages = slices.Clone(req.Messages)
	cp.Tools = slices.Clone(req.Tools)
	f.reqs = append(f.reqs, cp)
	f.mu.Unlock()
	if n >= len(f.script) {
		return nil, fmt.Errorf("fake model: no reply scripted for call %d", n+1)
	}
	resp, err := f.script[n](&cp)
	if err != nil {
		return nil, err
	}
	if onChunk != nil && resp.Message.Content != "" {
		for _, w := range strings.SplitAfter(resp.Message.Content, " ") {
			if err := onChunk(llm.Chunk{Text: w}); err != nil {
				return nil, err
			}
		}
	}
	return resp, nil
}

func (f *fakeModel) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func answer(text string) reply {
	return func(*llm.Request) (*llm.Response, error) {
		return &llm.Response{
			Message:      llm.Message{Role: llm.Assistant, Content: text},
			Usage:        llm.Usage{InputTokens: 10, OutputTokens: 3},
			FinishReason: "stop",
		}, nil
	}
}

func callTools(calls ...llm.ToolCall) reply {
	return func(*llm.Request) (*llm.Response, error) {
		return &llm.Response{
			Message:      llm.Message{Role: llm.Assistant, ToolCalls: calls},
			Usage:        llm.Usage{InputTokens: 10, OutputTokens: 5},
			FinishReason: "tool_calls",
		}, nil
	}
}

func tc(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// checkLast wraps r with a check of the last message the model was sent.
func checkLast(t *testing.T, want llm.Message, r reply) reply {
	return func(req *llm.Request) (*llm.Response, error) {
		t.Helper()
		last := req.Messages[len(req.Messages)-1]
		if last.Role != want.Role || last.ToolCallID != want.ToolCallID || last.Name != want.Name || !strings.Contains(last.Content, want.Content) {
			t.Errorf("last message sent to the model = %+v, want %+v (content containing)", last, want)
		}
		return r(req)
	}
}

type addArgs struct {
	A int `json:"a" desc:"the first term"`
	B int `json:"b" desc:"the second term"`
}

type weatherArgs struct {
	City string `json:"city" enum:"paris,rome"`
}

type weather struct {
	City  string  `json:"city"`
	TempC float64 `json:"temp_c"`
}

func registry(t *testing.T, extra ...*tool.Tool) *tool.Registry {
	t.Helper()
	add, err := tool.Func("add", "Add two integers.", func(_ context.Context, a addArgs) (int, error) {
		return a.A + a.B, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wx, err := tool.Func("weather", "Current weather of a city.", func(_ context.Context, a weatherArgs) (*weather, error) {
		if a.City == "rome" {
			return nil, errors.New("no station reports for rome")
		}
		return &weather{City: a.City, TempC: 21.5}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(append([]*tool.Tool{wx, add}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func user(text string) *llm.Request {
	return &llm.Request{Model: "fake", Messages: []llm.Message{{Role: llm.User, Content: text}}}
}

func TestLoopOneCallThenAnswer(t *testing.T) {
	reg := registry(t)
	m := newModel(
		callTools(tc("c1", "add", `{"a":2,"b":3}`)),
		checkLast(t, llm.Message{Role: llm.ToolRole, Content: "5", ToolCallID: "c1", Name: "add"}, answer("The sum is 5.")),
	)
	req := user("What is 2+3?")
	var events []tool.Event
	var text strings.Builder
	res, err := tool.Loop(context.Background(), m, req, reg, tool.LoopOptions{
		Observe: func(e tool.Event) { events = append(events, e) },
		OnChunk: func(c llm.Chunk) error { text.WriteString(c.Text); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Response.Message.Content != "The sum is 5." || res.Steps != 2 {
		t.Errorf("response %q after %d steps", res.Response.Message.Content, res.Steps)
	}
	if res.Usage != (llm.Usage{InputTokens: 20, OutputTokens: 8}) {
		t.Errorf("usage = %+v", res.Usage)
	}
	roles := []llm.Role{}
	for _, msg := range res.Messages {
		roles = append(roles, msg.Role)
	}
	if !slices.Equal(roles, []llm.Role{llm.User, llm.Assistant, llm.ToolRole, llm.Assistant}) {
		t.Errorf("roles = %v", roles)
	}
	if text.String() != "The sum is 5." {
		t.Errorf("streamed %q", text.String())
	}
	// The request sent carries the registry's tools, sorted; the caller's
	// request is untouched.
	if got := m.reqs[0].Tools; len(got) != 2 || got[0].Name != "add" || got[1].Name != "weather" {
		t.Errorf("tools sent = %+v", got)
	}
	if req.Tools != nil || len(req.Messages) != 1 {
		t.Errorf("the caller's request was modified: %+v", req)
	}
	if len(events) != 2 {
		t.Fatalf("events = %+v", events)
	}
	call, result := events[0], events[1]
	if call.Kind != tool.EventCall || call.Name != "add" || call.ID != "c1" || string(call.Arguments) != `{"a":2,"b":3}` || call.Step != 1 {
		t.Errorf("call event = %+v", call)
	}
	if result.Kind != tool.EventResult || result.Content != "5" || result.Err != nil || result.Duration <= 0 || result.ID != "c1" {
		t.Errorf("result event = %+v", result)
	}
}

func TestLoopParallelCallsInCallOrder(t *testing.T) {
	type waitArgs struct {
		Tag   string `json:"tag"`
		Delay int    `json:"delay_ms"`
	}
	var started atomic.Int32
	both := make(chan struct{})
	wait, err := tool.Func("wait", "", func(ctx context.Context, a waitArgs) (string, error) {
		if started.Add(1) == 2 {
			close(both)
		}
		select { // both calls must be running at the same time
		case <-both:
		case <-time.After(5 * time.Second):
			return "", errors.New("the calls did not run concurrently")
		}
		time.Sleep(time.Duration(a.Delay) * time.Millisecond)
		return a.Tag, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := registry(t, wait)
	m := newModel(
		callTools(tc("slow", "wait", `{"tag":"first","delay_ms":60}`), tc("fast", "wait", `{"tag":"second","delay_ms":0}`)),
		func(req *llm.Request) (*llm.Response, error) {
			n := len(req.Messages)
			got := req.Messages[n-2:]
			if got[0].ToolCallID != "slow" || got[0].Content != `"first"` || got[1].ToolCallID != "fast" || got[1].Content != `"second"` {
				t.Errorf("tool messages not in call order: %+v", got)
			}
			return answer("done")(req)
		},
	)
	var mu sync.Mutex
	var results []string
	res, err := tool.Loop(context.Background(), m, user("go"), reg, tool.LoopOptions{Observe: func(e tool.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == tool.EventResult {
			results = append(results, e.ID)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 {
		t.Errorf("steps = %d", res.Steps)
	}
	// Results are observed as they complete: the fast one first.
	if !slices.Equal(results, []string{"fast", "slow"}) {
		t.Errorf("result events = %v, want completion order [fast slow]", results)
	}
}

func TestLoopSequential(t *testing.T) {
	var order []string
	var mu sync.Mutex
	rec, err := tool.Func("rec", "", func(_ context.Context, a weatherArgs) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, a.City)
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(
		callTools(tc("1", "rec", `{"city":"rome"}`), tc("2", "rec", `{"city":"paris"}`)),
		answer("ok"),
	)
	if _, err := tool.Loop(context.Background(), m, user("x"), registry(t, rec), tool.LoopOptions{Sequential: true}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []string{"rome", "paris"}) {
		t.Errorf("order = %v", order)
	}
}

func TestLoopToolErrorRecovers(t *testing.T) {
	m := newModel(
		callTools(tc("c1", "weather", `{"city":"rome"}`)),
		checkLast(t, llm.Message{Role: llm.ToolRole, Content: "error: no station reports for rome", ToolCallID: "c1", Name: "weather"},
			callTools(tc("c2", "weather", `{"city":"paris"}`))),
		checkLast(t, llm.Message{Role: llm.ToolRole, Content: `{"city":"paris","temp_c":21.5}`, ToolCallID: "c2", Name: "weather"},
			answer("Rome is unknown; Paris is 21.5 C.")),
	)
	var errs []error
	res, err := tool.Loop(context.Background(), m, user("weather?"), registry(t), tool.LoopOptions{Observe: func(e tool.Event) {
		if e.Kind == tool.EventResult {
			errs = append(errs, e.Err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 3 {
		t.Errorf("steps = %d", res.Steps)
	}
	if len(errs) != 2 || errs[0] == nil || errs[1] != nil {
		t.Errorf("result errors = %v", errs)
	}
}

func TestLoopUnknownTool(t *testing.T) {
	m := newModel(
		callTools(tc("c1", "search", `{"q":"x"}`)),
		checkLast(t, llm.Message{Role: llm.ToolRole, Content: `error: unknown tool "search" (the tools are "add", "weather")`, ToolCallID: "c1", Name: "search"},
			answer("I cannot search.")),
	)
	var resultErr error
	_, err := tool.Loop(context.Background(), m, user("find x"), registry(t), tool.LoopOptions{Observe: func(e tool.Event) {
		if e.Kind == tool.EventResult {
			resultErr = e.Err
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	var ut *tool.UnknownToolError
	if !errors.As(resultErr, &ut) || ut.Name != "search" {
		t.Errorf("result error = %v, want an *UnknownToolError", resultErr)
	}
}

func TestLoopBadArguments(t *testing.T) {
	m := newModel(
		callTools(tc("c1", "add", `{"a":"two","b":3,"c":1}`)),
		func(req *llm.Request) (*llm.Response, error) {
			got := req.Messages[len(req.Messages)-1].Content
			for _, want := range []string{`error: invalid arguments for tool "add"`, `field "a": expected an integer, got string`, `field "c": unknown field`} {
				if !strings.Contains(got, want) {
					t.Errorf("tool message %q does not contain %q", got, want)
				}
			}
			return callTools(tc("c2", "add", `{"a":2,"b":3}`))(req)
		},
		checkLast(t, llm.Message{Role: llm.ToolRole, Content: "5", ToolCallID: "c2", Name: "add"}, answer("5")),
	)
	var resultErr error
	res, err := tool.Loop(context.Background(), m, user("2+3"), registry(t), tool.LoopOptions{Observe: func(e tool.Event) {
		if e.Kind == tool.EventResult && resultErr == nil {
			resultErr = e.Err
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Response.Message.Content != "5" {
		t.Errorf("answer = %q", res.Response.Message.Content)
	}
	var ae *tool.ArgsError
	if !errors.As(resultErr, &ae) || len(ae.Problems) != 2 || ae.Problems[0].Field != "a" || ae.Problems[1].Field != "c" {
		t.Errorf("result error = %#v", resultErr)
	}
}

func TestLoopPanickingTool(t *testing.T) {
	boom, err := tool.Func("boom", "", func(context.Context, struct{}) (int, error) {
		var m map[string]int
		m["x"] = 1 // panics: assignment to entry in nil map
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(
		callTools(tc("c1", "boom", `{}`), tc("c2", "add", `{"a":1,"b":1}`)),
		func(req *llm.Request) (*llm.Response, error) {
			msgs := req.Messages[len(req.Messages)-2:]
			if !strings.HasPrefix(msgs[0].Content, `error: tool "boom" panicked: assignment to entry in nil map`) {
				t.Errorf("panic message = %q", msgs[0].Content)
			}
			if msgs[1].Content != "2" {
				t.Errorf("the other call's result = %q", msgs[1].Content)
			}
			return answer("recovered")(req)
		},
	)
	var pe *tool.PanicError
	_, err = tool.Loop(context.Background(), m, user("x"), registry(t, boom), tool.LoopOptions{Observe: func(e tool.Event) {
		if e.Kind == tool.EventResult && e.Name == "boom" {
			errors.As(e.Err, &pe)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if pe == nil || len(pe.Stack) == 0 {
		t.Errorf("no *PanicError with a stack observed: %v", pe)
	}
}

func TestLoopStepLimit(t *testing.T) {
	var script []reply
	for i := range 3 {
		script = append(script, callTools(tc(fmt.Sprint(i), "add", `{"a":1,"b":1}`)))
	}
	m := newModel(script...)
	_, err := tool.Loop(context.Background(), m, user("loop"), registry(t), tool.LoopOptions{MaxSteps: 3})
	var sl *tool.StepLimitError
	if !errors.As(err, &sl) {
		t.Fatalf("err = %v, want a *StepLimitError", err)
	}
	if m.calls() != 3 || sl.MaxSteps != 3 {
		t.Errorf("%d model calls, MaxSteps %d", m.calls(), sl.MaxSteps)
	}
	// user, then (assistant, tool) for the two steps whose calls ran.
	if len(sl.Messages) != 5 || sl.Messages[4].Role != llm.ToolRole {
		t.Errorf("messages = %+v", sl.Messages)
	}
	if sl.Last == nil || len(sl.Last.Message.ToolCalls) != 1 || sl.Usage.OutputTokens != 15 {
		t.Errorf("last = %+v, usage %+v", sl.Last, sl.Usage)
	}
	if !strings.Contains(err.Error(), "after 3 steps") {
		t.Errorf("error = %v", err)
	}

	// The default bound is 8 model calls.
	script = nil
	for i := range 10 {
		script = append(script, callTools(tc(fmt.Sprint(i), "add", `{"a":1,"b":1}`)))
	}
	m = newModel(script...)
	_, err = tool.Loop(context.Background(), m, user("loop"), registry(t), tool.LoopOptions{})
	if !errors.As(err, &sl) || m.calls() != tool.DefaultMaxSteps {
		t.Errorf("err = %v after %d calls", err, m.calls())
	}
}

func TestLoopModelError(t *testing.T) {
	m := newModel(
		callTools(tc("c1", "add", `{"a":1,"b":1}`)),
		func(*llm.Request) (*llm.Response, error) {
			return nil, &llm.Error{Provider: "fake", Status: 503, Message: "overloaded", Retryable: true}
		},
	)
	_, err := tool.Loop(context.Background(), m, user("x"), registry(t), tool.LoopOptions{})
	var le *tool.LoopError
	var pe *llm.Error
	if !errors.As(err, &le) || !errors.As(err, &pe) || pe.Status != 503 {
		t.Fatalf("err = %v, want a *LoopError wrapping an *llm.Error", err)
	}
	if le.Step != 2 || len(le.Messages) != 3 || le.Usage.OutputTokens != 5 {
		t.Errorf("loop error = %+v", le)
	}
}

func TestLoopCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := tool.Func("stop", "", func(ctx context.Context, _ struct{}) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(callTools(tc("c1", "stop", `{}`)), answer("never"))
	_, err = tool.Loop(ctx, m, user("x"), registry(t, stop), tool.LoopOptions{})
	var le *tool.LoopError
	if !errors.As(err, &le) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a *LoopError wrapping context.Canceled", err)
	}
	if m.calls() != 1 {
		t.Errorf("model called %d times after the cancel", m.calls())
	}
}

func TestLoopMissingIDsAndNilRegistry(t *testing.T) {
	m := newModel(
		callTools(tc("", "anything", `{}`)),
		checkLast(t, llm.Message{Role: llm.ToolRole, Content: `error: unknown tool "anything" (the tools are none)`, ToolCallID: "call_1_0", Name: "anything"}, answer("ok")),
	)
	res, err := tool.Loop(context.Background(), m, user("x"), nil, tool.LoopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id := res.Messages[1].ToolCalls[0].ID; id != "call_1_0" {
		t.Errorf("assistant call ID = %q", id)
	}
	if m.reqs[0].Tools != nil {
		t.Errorf("tools sent = %v", m.reqs[0].Tools)
	}
}

func TestLoopConfig(t *testing.T) {
	var ce *tool.ConfigError
	if _, err := tool.Loop(context.Background(), nil, user("x"), nil, tool.LoopOptions{}); !errors.As(err, &ce) {
		t.Errorf("nil model: %v", err)
	}
	if _, err := tool.Loop(context.Background(), newModel(), nil, nil, tool.LoopOptions{}); !errors.As(err, &ce) {
		t.Errorf("nil request: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	reg := &tool.Registry{} // the zero value is ready
	add, _ := tool.Func("add", "", func(_ context.Context, a addArgs) (int, error) { return a.A + a.B, nil })
	if err := reg.Add(add); err != nil {
		t.Fatal(err)
	}
	var de *tool.DuplicateError
	if err := reg.Add(add); !errors.As(err, &de) || de.Name != "add" {
		t.Errorf("duplicate: %v", err)
	}
	var ie *tool.InvalidToolError
	for name, bad := range map[string]*tool.Tool{
		"nil":      nil,
		"no run":   {Def: llm.Tool{Name: "x"}},
		"bad name": {Def: llm.Tool{Name: "two words"}, Run: add.Run},
		"no name":  {Run: add.Run},
		"params":   {Def: llm.Tool{Name: "p", Parameters: json.RawMessage(`[1]`)}, Run: add.Run},
	} {
		if err := reg.Add(bad); !errors.As(err, &ie) {
			t.Errorf("%s: err = %v, want an *InvalidToolError", name, err)
		}
	}
	if _, err := tool.Func[addArgs, int]("ok", "", nil); !errors.As(err, &ie) {
		t.Errorf("nil function: %v", err)
	}
	raw := &tool.Tool{Def: llm.Tool{Name: "ping", Description: "no parameters"}, Run: func(context.Context, json.RawMessage) (any, error) { return "pong", nil }}
	if err := reg.Add(raw); err != nil {
		t.Fatal(err)
	}
	if got, ok := reg.Get("ping"); !ok || got != raw {
		t.Errorf("Get(ping) = %v, %v", got, ok)
	}
	if _, ok := reg.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}
	defs := reg.Defs()
	if len(defs) != 2 || defs[0].Name != "add" || defs[1].Name != "ping" || string(defs[1].Parameters) != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("defs = %+v", defs)
	}
	defs[0].Parameters[0] = 'X' // a copy
	if d := reg.Defs(); d[0].Parameters[0] != '{' {
		t.Error("Defs shares its Parameters with the registry")
	}
	if !slices.Equal(reg.Names(), []string{"add", "ping"}) {
		t.Errorf("names = %v", reg.Names())
	}
}

func TestCallResultErrors(t *testing.T) {
	ch, _ := tool.Func("ch", "", func(context.Context, struct{}) (chan int, error) { return make(chan int), nil })
	var re *tool.ResultError
	if _, err := ch.Call(context.Background(), nil); !errors.As(err, &re) {
		t.Errorf("err = %v, want a *ResultError", err)
	}
	html, _ := tool.Func("html", "", func(context.Context, struct{}) (string, error) { return "<a & b>", nil })
	if got, err := html.Call(context.Background(), nil); err != nil || got != `"<a & b>"` {
		t.Errorf("got %s, %v", got, err)
	}
}

// A tool that Loop runs finds its call's ID in its context (CallID), the
// generated one for a call the model sent without; called directly, none.
func TestCallIDInTheToolsContext(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	echo := &tool.Tool{Def: llm.Tool{Name: "echo"}, Run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, tool.CallID(ctx))
		return "ok", nil
	}}
	reg, err := tool.NewRegistry(echo)
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(func(*llm.Request) (*llm.Response, error) {
		return &llm.Response{Message: llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{
			{ID: "call_a", Name: "echo", Arguments: json.RawMessage(`{}`)},
			{Name: "echo", Arguments: json.RawMessage(`{}`)},
		}}}, nil
	}, answer("done"))
	if _, err := tool.Loop(context.Background(), m, &llm.Request{}, reg, tool.LoopOptions{Sequential: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := echo.Call(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, ","); got != "call_a,call_1_1," {
		t.Errorf("call IDs seen %q", got)
	}
}
