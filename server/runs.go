package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
)

// The multitask strategies: what a run does to the runs of its thread
// still pending or running.
const (
	strategyReject    = "reject"    // refuse the new run (409)
	strategyEnqueue   = "enqueue"   // run after them (the default)
	strategyInterrupt = "interrupt" // cancel them, keep what they did
	strategyRollback  = "rollback"  // cancel and delete them, undoing what they did
)

// The causes a job's run is cancelled with. Each wraps
// engine.ErrRunCancelled, so that the thread records its run as
// cancelled (a new run may start there) rather than stopped mid-way; a
// rollback's wraps engine.ErrRunRolledBack, so that the thread goes back
// to the state it had before the job's run began.
var (
	errCancelledByClient   = fmt.Errorf("cancelled by the client: %w", engine.ErrRunCancelled)
	errInterruptedByNewRun = fmt.Errorf("interrupted by a newer run on the thread (multitask_strategy interrupt): %w", engine.ErrRunCancelled)
	errRolledBackByNewRun  = fmt.Errorf("rolled back by a newer run on the thread (multitask_strategy rollback): %w", engine.ErrRunRolledBack)
	errRolledBackByClient  = fmt.Errorf("rolled back by the client: %w", engine.ErrRunRolledBack)
	errClientGone          = fmt.Errorf("the client disconnected (on_disconnect cancel): %w", engine.ErrRunCancelled)
)

// validStreamModes are the stream modes a run may ask for.
var validStreamModes = []string{"values", "updates", "messages", "messages-tuple", "custom", "debug", "tasks", "checkpoints", "events"}

// defaultStreamModes are the modes of a run that names none.
var defaultStreamModes = []string{"values"}

// inflight are the statuses of a job not ended.
var inflight = []store.JobStatus{store.JobPending, store.JobRunning}

// typeOfStrings is the type a stream_mode or interrupt_before list has.
var typeOfStrings = reflect.TypeFor[[]string]()

// runBody is the body of the run endpoints: LangGraph's RunCreate.
type runBody struct {
	AssistantID       string          `json:"assistant_id"`
	Input             json.RawMessage `json:"input,omitempty"`
	Command           *commandBody    `json:"command,omitempty"`
	StreamMode        streamModes     `json:"stream_mode,omitempty"`
	StreamSubgraphs   bool            `json:"stream_subgraphs,omitempty"`
	StreamResumable   bool            `json:"stream_resumable,omitempty"`
	Metadata          map[string]any  `json:"metadata,omitempty"`
	Config            map[string]any  `json:"config,omitempty"`
	Context           map[string]any  `json:"context,omitempty"`
	InterruptBefore   nodeList        `json:"interrupt_before,omitempty"`
	InterruptAfter    nodeList        `json:"interrupt_after,omitempty"`
	MultitaskStrategy string          `json:"multitask_strategy,omitempty"`
	OnDisconnect      string          `json:"on_disconnect,omitempty"`
	IfNotExists       string          `json:"if_not_exists,omitempty"`
	OnCompletion      string          `json:"on_completion,omitempty"`
	Webhook           string          `json:"webhook,omitempty"`
	AfterSeconds      float64         `json:"after_seconds,omitempty"`
	Durability        string          `json:"durability,omitempty"`
	CheckpointDuring  *bool           `json:"checkpoint_during,omitempty"`
	// Trace and Link are the server's, not the client's (createRun
	// sets them): the trace context of the request that created the
	// run, and of its run's first drive for a resume (trace.go).
	Trace map[string]string `json:"weft_trace,omitempty"`
	Link  map[string]string `json:"weft_trace_link,omitempty"`
}

// commandBody is a run's command: resume answers the waiting node.
type commandBody struct {
	Resume json.RawMessage `json:"resume,omitempty"`
	Update json.RawMessage `json:"update,omitempty"`
	Goto   json.RawMessage `json:"goto,omitempty"`
}

// streamModes is stream_mode: one mode or a list.
type streamModes []string

// UnmarshalJSON takes a string or a list of strings.
func (m *streamModes) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*m = streamModes{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return &json.UnmarshalTypeError{Value: "other", Type: typeOfStrings, Field: "stream_mode"}
	}
	*m = many
	return nil
}

// nodeList is interrupt_before/after: "*" or a list of node names.
type nodeList []string

// UnmarshalJSON takes "*" or a list of strings.
func (n *nodeList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*n = nodeList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return &json.UnmarshalTypeError{Value: "other", Type: typeOfStrings, Field: "interrupt_before"}
	}
	*n = many
	return nil
}

// runJSON is a run as the LangGraph API shows it.
type runJSON struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	Metadata          map[string]any `json:"metadata"`
	Status            string         `json:"status"`
	Kwargs            map[string]any `json:"kwargs"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
}

// runOf is a job's JSON.
func runOf(j *store.Job) runJSON {
	out := runJSON{RunID: j.ID, ThreadID: j.ThreadID, AssistantID: j.Assistant, Status: string(j.Status), MultitaskStrategy: j.Strategy, CreatedAt: j.Created, UpdatedAt: j.Updated, Metadata: map[string]any{}, Kwargs: map[string]any{}}
	if len(j.Meta) > 0 {
		_ = json.Unmarshal(j.Meta, &out.Metadata)
	}
	var b runBody
	if len(j.Request) > 0 && json.Unmarshal(j.Request, &b) == nil {
		if len(b.Input) > 0 {
			out.Kwargs["input"] = b.Input
		}
		if b.Command != nil {
			out.Kwargs["command"] = b.Command
		}
		cfg := b.Config
		if cfg == nil {
			cfg = map[string]any{}
		}
		out.Kwargs["config"] = cfg
		ctx := b.Context
		if ctx == nil {
			ctx = map[string]any{}
		}
		out.Kwargs["context"] = ctx
		out.Kwargs["stream_mode"] = b.modes()
		out.Kwargs["subgraphs"] = b.StreamSubgraphs
		out.Kwargs["resumable"] = b.StreamResumable
		out.Kwargs["temporary"] = b.OnCompletion == "delete"
		if len(b.InterruptBefore) > 0 {
			out.Kwargs["interrupt_before"] = b.InterruptBefore
		}
		if len(b.InterruptAfter) > 0 {
			out.Kwargs["interrupt_after"] = b.InterruptAfter
		}
	}
	return out
}

// breakpoints are the run's interrupt_before and interrupt_after, or nil.
func (b *runBody) breakpoints() *engine.Breakpoints {
	if len(b.InterruptBefore) == 0 && len(b.InterruptAfter) == 0 {
		return nil
	}
	return &engine.Breakpoints{Before: b.InterruptBefore, After: b.InterruptAfter}
}

// checkBreakpoints checks that interrupt_before and interrupt_after name
// nodes of the plan ("*" names them all): a 422 names the item at fault.
func checkBreakpoints(plan *flow.Plan, b *runBody) error {
	var names []string
	for _, n := range plan.Nodes {
		names = append(names, n.Name)
	}
	for _, l := range []struct {
		path  string
		nodes nodeList
	}{{"$.interrupt_before", b.InterruptBefore}, {"$.interrupt_after", b.InterruptAfter}} {
		for i, n := range l.nodes {
			if n != "*" && !slices.Contains(names, n) {
				return invalid(fmt.Sprintf("%s[%d]", l.path, i), "%s has no node %q (it has %s)%s", plan.Workflow.Name, n, strings.Join(names, ", "), flow.Suggest(n, names))
			}
		}
	}
	return nil
}

// durability is the run's durability as its request names it, or
// DefaultDurability: "durability" (checked), else "checkpoint_during"
// (false is "exit", true "async", as LangGraph maps it).
func (b *runBody) durability() engine.Durability {
	if d, err := engine.ParseDurability(b.Durability); err == nil && d != engine.DefaultDurability {
		return d
	}
	if b.CheckpointDuring != nil {
		if *b.CheckpointDuring {
			return engine.Async
		}
		return engine.Exit
	}
	return engine.DefaultDurability
}

// modes are the stream modes the run streams.
func (b *runBody) modes() []string {
	if len(b.StreamMode) == 0 {
		return defaultStreamModes
	}
	return b.StreamMode
}

// check checks what can be checked of a run body on its own, naming the
// field at fault.
func (b *runBody) check() error {
	if b.AssistantID == "" {
		return invalid("$.assistant_id", "required")
	}
	for i, m := range b.StreamMode {
		if !slices.Contains(validStreamModes, m) {
			return invalid(fmt.Sprintf("$.stream_mode[%d]", i), "%q is not a stream mode (want one of %s)", m, strings.Join(validStreamModes, ", "))
		}
	}
	if _, err := engine.ParseDurability(b.Durability); err != nil {
		return invalid("$.durability", "must be sync, async or exit, not %q", b.Durability)
	}
	switch b.MultitaskStrategy {
	case "", strategyReject, strategyEnqueue, strategyInterrupt, strategyRollback:
	default:
		return invalid("$.multitask_strategy", "must be reject, enqueue, interrupt or rollback, not %q", b.MultitaskStrategy)
	}
	switch b.OnDisconnect {
	case "", "cancel", "continue":
	default:
		return invalid("$.on_disconnect", "must be cancel or continue, not %q", b.OnDisconnect)
	}
	switch b.IfNotExists {
	case "", "create", "reject":
	default:
		return invalid("$.if_not_exists", "must be create or reject, not %q", b.IfNotExists)
	}
	switch b.OnCompletion {
	case "", "delete", "keep":
	default:
		return invalid("$.on_completion", "must be delete or keep, not %q", b.OnCompletion)
	}
	if b.Command != nil && (len(b.Command.Update) > 0 && string(b.Command.Update) != "null" || len(b.Command.Goto) > 0 && string(b.Command.Goto) != "null") {
		return invalid("$.command", "update and goto are not supported by weft; resume answers the waiting node")
	}
	if b.Webhook != "" {
		return invalid("$.webhook", "webhooks are not supported by weft")
	}
	if b.AfterSeconds != 0 {
		return invalid("$.after_seconds", "delayed runs are not supported by weft")
	}
	return nil
}

// input converts a run's input into the workflow's parameters and
// variables, typed: a key that is neither, or a value of the wrong type,
// is a 422 naming "$.input.KEY". A "messages" list becomes input_text:
// the content of its last user message.
func inputOf(plan *flow.Plan, raw json.RawMessage) (map[string]flow.Value, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, invalid("$.input", "must be an object of the workflow's parameters and variables")
	}
	out := make(map[string]flow.Value, len(obj))
	for k, v := range obj {
		path := "$.input." + k
		if k == "messages" {
			text, err := lastUserMessage(v)
			if err != nil {
				return nil, invalid(path, "%v", err)
			}
			if _, set := obj["input_text"]; !set {
				out["input_text"] = flow.StringValue(text)
			}
			continue
		}
		var t flow.Type
		switch {
		case plan.Param(k) != nil:
			t = plan.Param(k).Type
		case plan.Var(k) != nil:
			t = plan.Var(k).Type
		default:
			var names []string
			for _, p := range plan.Params {
				names = append(names, p.Name)
			}
			for _, p := range plan.Vars {
				names = append(names, p.Name)
			}
			return nil, invalid(path, "%s has no parameter or variable %s (it has %s)%s", plan.Workflow.Name, k, strings.Join(names, ", "), flow.Suggest(k, names))
		}
		var fv flow.Value
		if err := json.Unmarshal(v, &fv); err != nil {
			return nil, invalid(path, "%v", err)
		}
		cv, err := flow.Conform(fv, t)
		if err != nil {
			return nil, invalid(path, "%v", err)
		}
		out[k] = cv
	}
	return out, nil
}

// lastUserMessage is the text of the last user message of a LangChain
// message list: {"role": "user"|"human", "content": ...} or {"type":
// "human", "content": ...}; content a string or a list of text parts.
func lastUserMessage(raw json.RawMessage) (string, error) {
	var msgs []struct {
		Role    string          `json:"role"`
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return "", fmt.Errorf("must be a list of messages: %v", err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "user" && m.Role != "human" && m.Type != "human" && m.Type != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s, nil
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return "", fmt.Errorf("message %d: content must be a string or a list of parts", i)
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), nil
	}
	return "", errors.New("has no user message")
}

// answersOf converts command.resume into answers to the questions the
// thread waits on: a string or a value answers the single question (its
// node's single output, or an object of its outputs); an object keyed by
// question ids answers several. Each answer is typed against its human
// node: a misfit is a 422 naming "$.command.resume[.OUTPUT]".
func answersOf(plan *flow.Plan, pend []*store.Pending, raw json.RawMessage) ([]service.Answer, error) {
	const path = "$.command.resume"
	if len(pend) == 0 {
		return nil, errorf(http.StatusConflict, "the thread waits for no answer: command.resume has nothing to resume")
	}
	var byID map[string]json.RawMessage
	if json.Unmarshal(raw, &byID) == nil && len(byID) > 0 {
		all := true
		for k := range byID {
			if !slices.ContainsFunc(pend, func(p *store.Pending) bool { return p.ID == k }) {
				all = false
			}
		}
		if all {
			var out []service.Answer
			for _, p := range pend {
				if v, ok := byID[p.ID]; ok {
					a, err := answerOf(plan, p, v, path+"."+p.ID)
					if err != nil {
						return nil, err
					}
					out = append(out, a)
				}
			}
			return out, nil
		}
	}
	if len(pend) > 1 {
		var ids []string
		for _, p := range pend {
			ids = append(ids, p.ID)
		}
		return nil, invalid(path, "the thread waits on %d questions (%s): resume with an object keyed by their ids", len(pend), strings.Join(ids, ", "))
	}
	a, err := answerOf(plan, pend[0], raw, path)
	if err != nil {
		return nil, err
	}
	return []service.Answer{a}, nil
}

// answerOf types one answer against the human node that asks p.
func answerOf(plan *flow.Plan, p *store.Pending, raw json.RawMessage, path string) (service.Answer, error) {
	pn := service.FindNode(plan, p.Node)
	if pn == nil {
		return service.Answer{}, fmt.Errorf("question %s is asked by node %s, which the workflow lacks", p.ID, p.Node)
	}
	var out map[string]flow.Value
	var err error
	var s string
	if json.Unmarshal(raw, &s) == nil {
		out, err = service.ParseAnswer(pn, s)
	} else {
		var v flow.Value
		if err := json.Unmarshal(raw, &v); err != nil {
			return service.Answer{}, invalid(path, "%v", err)
		}
		switch {
		case len(pn.Outputs) == 1 && v.Kind() != flow.KindObject:
			out, err = service.AnswerOutputs(pn, map[string]flow.Value{pn.Outputs[0].Name: v})
		case v.Kind() == flow.KindObject:
			var obj map[string]flow.Value
			_ = json.Unmarshal(raw, &obj)
			out, err = service.AnswerOutputs(pn, obj)
		default:
			err = &service.AnswerError{Node: pn.Name, Want: service.OutputList(pn), Reason: fmt.Sprintf("node %s has %d outputs (%s): resume with an object of them", pn.Name, len(pn.Outputs), service.OutputList(pn))}
		}
	}
	if err != nil {
		var ae *service.AnswerError
		if errors.As(err, &ae) && ae.Output != "" && len(pn.Outputs) > 1 {
			path += "." + ae.Output
		}
		return service.Answer{}, &Error{Status: http.StatusUnprocessableEntity, Path: path, Detail: err.Error(), Err: err}
	}
	return service.Answer{ID: p.ID, Values: out}, nil
}
