package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
)

// Result is a call's structured content (and, as JSON, its text
// content): how the run ended, its thread, the final node's outputs when
// it completed, the questions when it waits, the error when it failed.
type Result struct {
	Status    string             `json:"status"`
	ThreadID  string             `json:"thread_id"`
	Final     string             `json:"final,omitempty"`
	Outputs   map[string]any     `json:"outputs,omitempty"`
	Questions []Question         `json:"questions,omitempty"`
	Error     *service.ErrorInfo `json:"error,omitempty"`
	// Next, for a waiting run, says how to answer.
	Next string `json:"next,omitempty"`
}

// Question is a question a waiting run asks, with the schema of an
// answer given as an object.
type Question struct {
	ID       string     `json:"id"`
	Node     string     `json:"node"`
	Question flow.Value `json:"question"`
	Answer   Schema     `json:"answer,omitempty"`
}

// ArgumentError is a call's arguments that do not fit its tool's input
// schema: Path is where ("$.limit"), in JSONPath.
type ArgumentError struct {
	Path   string
	Reason string
}

// Error names the path.
func (e *ArgumentError) Error() string { return e.Path + ": " + e.Reason }

// Is makes an ArgumentError of kind invalid_input (engine.KindOf).
func (e *ArgumentError) Is(target error) bool { return target == engine.ErrInvalidInput }

// handler is the tool's handler: a run of its workflow.
func (t *tool) handler(s *Server) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		input, thread, err := s.arguments(t.wf.Workflow.Plan, req.Params.Arguments)
		if err != nil {
			return failed(thread, err), nil
		}
		return s.drive(ctx, req, thread, func(ctx context.Context, obs engine.Observer) (*service.Result, error) {
			return s.opts.Service.Start(ctx, service.StartRequest{
				Workflow: t.wf.Workflow, Thread: thread, Components: t.wf.Components, ContextTokens: t.wf.ContextTokens,
				Input: input, Observer: obs, Meta: map[string]string{"mcp_tool": quote(t.name)},
			})
		})
	}
}

// resume is weft_resume's handler.
func (s *Server) resume(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var args struct {
		ThreadID   string          `json:"thread_id"`
		QuestionID string          `json:"question_id"`
		Answer     json.RawMessage `json:"answer"`
	}
	if err := s.decode(req.Params.Arguments, &args, "thread_id", "question_id", "answer"); err != nil {
		return failed("", err), nil
	}
	if args.ThreadID == "" {
		return failed("", &ArgumentError{Path: "$.thread_id", Reason: "required: the thread_id a waiting result gave"}), nil
	}
	if len(args.Answer) == 0 || string(args.Answer) == "null" {
		return failed(args.ThreadID, &ArgumentError{Path: "$.answer", Reason: "required: a text, or an object of the asking node's outputs"}), nil
	}
	a := service.Answer{ID: args.QuestionID}
	var text string
	if json.Unmarshal(args.Answer, &text) == nil {
		a.Text = text
	} else {
		var obj map[string]flow.Value
		if err := json.Unmarshal(args.Answer, &obj); err != nil {
			return failed(args.ThreadID, &ArgumentError{Path: "$.answer", Reason: "must be a string or an object of the asking node's outputs"}), nil
		}
		a.Values = obj
	}
	return s.drive(ctx, req, args.ThreadID, func(ctx context.Context, obs engine.Observer) (*service.Result, error) {
		return s.opts.Service.Resume(ctx, service.ResumeRequest{Thread: args.ThreadID, Answers: []service.Answer{a}, Observer: obs})
	})
}

// drive carries out a run (fn) under the concurrency bound: the client's
// cancellation, or Close, cancels it (recorded cancelled), and when the client gave
// a progress token each node's start and end is a progress notification.
func (s *Server) drive(ctx context.Context, req *sdk.CallToolRequest, thread string, fn func(context.Context, engine.Observer) (*service.Result, error)) (*sdk.CallToolResult, error) {
	if s.closed.Err() != nil {
		return failed(thread, fmt.Errorf("mcpserver: the server is closing: %w", service.ErrCancelled)), nil
	}
	var release func()
	select {
	case s.slots <- struct{}{}:
		release = sync.OnceFunc(func() { <-s.slots })
		defer release()
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-s.closed.Done():
		return failed(thread, fmt.Errorf("mcpserver: the server is closing: %w", service.ErrCancelled)), nil
	}
	// The run's context is not the request's: a cancelled request cancels
	// the run with service.ErrCancelled, so that the thread records it.
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(service.ErrCancelled) })
	defer stop()
	stopClosed := context.AfterFunc(s.closed, func() { cancel(service.ErrCancelled) })
	defer stopClosed()
	var obs engine.Observer
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		p := newProgress(ctx, req.Session, tok)
		defer p.close()
		obs = p
	}
	res, err := fn(rctx, obs)
	release() // the run is over: its slot goes before the progress drains
	if res == nil {
		if err == nil {
			err = errors.New("mcpserver: the run returned nothing")
		}
		return failed(thread, err), nil
	}
	return resultOf(res, s.plans), nil
}

// resultOf turns a run's result into the call's.
func resultOf(res *service.Result, plans map[string]*flow.Plan) *sdk.CallToolResult {
	out := &Result{Status: res.Status.String(), ThreadID: res.Thread}
	switch res.Status {
	case engine.Completed:
		out.Final = res.Final
		out.Outputs = map[string]any{}
		for _, nv := range res.Outputs {
			out.Outputs[nv.Name] = nv.Value
		}
	case engine.Waiting:
		for _, q := range res.Waiting {
			out.Questions = append(out.Questions, Question{ID: q.ID, Node: q.Node, Question: q.Question, Answer: answerOf(plans, q.Node)})
		}
		out.Next = "The run waits for a person: call the tool " + ResumeTool + " with {\"thread_id\": \"" + res.Thread + "\", \"answer\": ...} (and \"question_id\" when several questions wait), the answer as text or as an object of the question's answer schema."
	default:
		msg := "the run ended " + out.Status
		if res.Error != nil {
			msg = *res.Error
		}
		out.Error = &service.ErrorInfo{Message: msg, Kind: kindOf(res.Err, res.Status)}
	}
	r := &sdk.CallToolResult{StructuredContent: out, IsError: out.Error != nil}
	b, err := json.Marshal(out)
	if err != nil {
		return failed(res.Thread, fmt.Errorf("mcpserver: encoding the result: %w", err))
	}
	r.Content = []sdk.Content{&sdk.TextContent{Text: string(b)}}
	return r
}

// answerOf is the schema of an answer to the human node named node (a
// path inside subworkflows), found in any served plan.
func answerOf(plans map[string]*flow.Plan, node string) Schema {
	for _, p := range plans {
		if pn := service.FindNode(p, node); pn != nil && pn.Node != nil && pn.Node.Type == flow.Human {
			return outputsSchema(pn, node)
		}
	}
	return nil
}

// kindOf is the kind of a run's error.
func kindOf(err error, st engine.Status) string {
	if err != nil {
		return string(engine.KindOf(err))
	}
	if st == engine.Cancelled {
		return string(engine.KindCancelled)
	}
	return string(engine.KindInternal)
}

// failed is the result of a call that failed: isError, the error's text
// and kind, as text and as structured content.
func failed(thread string, err error) *sdk.CallToolResult {
	out := &Result{Status: "failed", ThreadID: thread, Error: &service.ErrorInfo{Message: err.Error(), Kind: string(engine.KindOf(err))}}
	b, _ := json.Marshal(out)
	return &sdk.CallToolResult{IsError: true, StructuredContent: out, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}

// arguments reads a workflow tool's arguments into the run's input,
// typed by the plan's parameters, and the thread to continue.
func (s *Server) arguments(plan *flow.Plan, raw json.RawMessage) (map[string]flow.Value, string, error) {
	allowed := []string{"thread_id"}
	for _, p := range plan.Params {
		allowed = append(allowed, p.Name)
	}
	var obj map[string]json.RawMessage
	if err := s.decode(raw, &obj, allowed...); err != nil {
		return nil, "", err
	}
	var thread string
	if v, ok := obj["thread_id"]; ok {
		if err := json.Unmarshal(v, &thread); err != nil || thread == "" {
			return nil, "", &ArgumentError{Path: "$.thread_id", Reason: "must be a thread id (a non-empty string)"}
		}
	}
	input := map[string]flow.Value{}
	for _, p := range plan.Params {
		v, ok := obj[p.Name]
		if !ok {
			if p.Default == nil && p.Name != flow.InputText {
				return nil, thread, &ArgumentError{Path: "$." + p.Name, Reason: "required (" + p.Type.String() + ")"}
			}
			continue
		}
		var fv flow.Value
		if err := json.Unmarshal(v, &fv); err != nil {
			return nil, thread, &ArgumentError{Path: "$." + p.Name, Reason: err.Error()}
		}
		cv, err := flow.Conform(fv, p.Type)
		if err != nil {
			path, reason := "$."+p.Name, err.Error()
			var te *flow.TypeError
			if errors.As(err, &te) && te.Path != "" {
				if strings.HasPrefix(te.Path, "[") {
					path += te.Path
				} else {
					path += "." + te.Path
				}
				// The path is said once, in JSONPath.
				reason = (&flow.TypeError{Want: te.Want, Got: te.Got}).Error()
			}
			return nil, thread, &ArgumentError{Path: path, Reason: reason}
		}
		input[p.Name] = cv
	}
	return input, thread, nil
}

// decode reads raw arguments, bounded, as an object with only the keys
// allowed, into v.
func (s *Server) decode(raw json.RawMessage, v any, allowed ...string) error {
	if len(raw) > s.opts.MaxArgumentBytes {
		return &ArgumentError{Path: "$", Reason: fmt.Sprintf("the arguments are %d bytes, more than the %d allowed", len(raw), s.opts.MaxArgumentBytes)}
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return &ArgumentError{Path: "$", Reason: "must be a JSON object"}
	}
	for k := range obj {
		if !slices.Contains(allowed, k) {
			return &ArgumentError{Path: "$." + k, Reason: "no such argument (want " + strings.Join(allowed, ", ") + ")"}
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &ArgumentError{Path: "$", Reason: err.Error()}
	}
	return nil
}

// quote is s as a JSON string (thread labels are canonical JSON).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
