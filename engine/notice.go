package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weftlang/weft/flow"
)

// NoticeKind says what a Notice reports.
type NoticeKind string

// The kinds of Notice.
const (
	// NoticeFallback is a node that failed after its retries and
	// completed with the fallback values its workflow asked for
	// (flow.PlanFallback) instead: Message is the error, Values the
	// outputs it took.
	NoticeFallback NoticeKind = "fallback"
	// NoticeTruncated is an output that is not the whole of what was
	// asked for: a model's reply cut at the token limit. Message says
	// what was cut.
	NoticeTruncated NoticeKind = "truncated"
)

// Notice is something a run did that its outputs alone would hide: a
// node that fell back, a reply cut at the token limit. A run's notices
// are in its Result, in order, each with the step that made it; a run
// kept in a thread records them with that step, so they survive a
// resume. A run without any costs nothing.
type Notice struct {
	Kind    NoticeKind   `json:"kind"`
	Node    string       `json:"node"` // "sub/inner" inside a subworkflow
	Step    int          `json:"step"`
	Item    int          `json:"item,omitempty"`   // 1-based element of a map node, 0 otherwise
	Message string       `json:"message"`          // the error a fallback stands for; what was cut
	Values  []NamedValue `json:"values,omitempty"` // NoticeFallback: the outputs the node took
}

// String renders the notice as one line: "node classify fell back to
// {intent: not_clear}: ollama: HTTP 500: ...", "node reply: the reply was
// cut ...".
func (n Notice) String() string {
	if n.Kind == NoticeFallback && n.Values != nil {
		return fmt.Sprintf("node %s%s fell back to %s: %s", n.Node, itemSuffix(n.Item), formatNamed(n.Values), n.Message)
	}
	if n.Kind == NoticeFallback {
		return fmt.Sprintf("node %s%s fell back: %s", n.Node, itemSuffix(n.Item), n.Message)
	}
	return fmt.Sprintf("node %s%s: %s", n.Node, itemSuffix(n.Item), n.Message)
}

// value is the notice as an event's data.
func (n Notice) value() flow.Value {
	m := map[string]flow.Value{"message": flow.StringValue(n.Message)}
	if n.Kind == NoticeFallback {
		vs := make(map[string]flow.Value, len(n.Values))
		for _, v := range n.Values {
			vs[v.Name] = v.Value
		}
		m["values"] = flow.ObjectValue(vs)
		m["error"] = flow.StringValue(n.Message)
	}
	return flow.ObjectValue(m)
}

// Notice records a notice of kind about this call's step (a reply cut at
// the token limit, an action that took a fallback path of its own), kept
// in the run's Result if the attempt succeeds, and reported as an
// ActionEvent of that kind. The fallbacks a workflow declares
// (flow.PlanFallback) are the engine's to report.
func (c *Call) Notice(kind NoticeKind, message string) {
	c.addNotice(Notice{Kind: kind, Node: c.nodeName(), Step: c.Step, Item: c.Item, Message: message})
}

func (c *Call) addNotice(n Notice) {
	c.notices = append(c.notices, n)
	if c.emit != nil {
		c.emit(string(n.Kind), n.value())
	}
}

// fallBack completes a task that failed after its retries with its node's
// fallback values, when the workflow asked for them and the run goes on
// (not for a person's question, nor when the run is stopped, nor for an
// error marked ErrMisuse). It reports
// whether it did.
func (st *runState) fallBack(ctx context.Context, t *Task, c *Call, err error) bool {
	fb := t.Node.Fallback
	if fb == nil || ctx.Err() != nil {
		return false
	}
	if _, ok := isInterrupt(err); ok {
		return false
	}
	if errors.Is(err, ErrMisuse) {
		return false
	}
	copy(c.Outputs, fb.Outputs)
	c.notices = nil // of failed attempts
	c.addNotice(Notice{Kind: NoticeFallback, Node: t.Name, Step: t.Step, Item: t.Item, Message: err.Error(),
		Values: named(outputNames(t.Node), slices.Clone(fb.Outputs))})
	return true
}

// Fallbacks returns the run's notices of kind NoticeFallback.
func (r *Result) Fallbacks() []Notice {
	var out []Notice
	for _, n := range r.Notices {
		if n.Kind == NoticeFallback {
			out = append(out, n)
		}
	}
	return out
}

// Notices returns the notices of the thread's last run, in order.
func (ts *ThreadState) Notices() []Notice {
	if ts.State == nil {
		return nil
	}
	return ts.State.Control.Notices
}
