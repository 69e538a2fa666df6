package wftest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// Stubs maps an action name to its replies, consumed one per call, in
// order. For a node with no action (an LLM prompt written on the node) the
// key is the node's name. Each reply is the node's outputs by name, except
// a reply whose only key is "error" with a string value: that call fails
// with the string as its error message.
type Stubs map[string][]map[string]flow.Value

// errorKey marks a reply that fails the call.
const errorKey = "error"

// StubError is the error of a call whose stubbed reply was {error: "..."}.
// Its message is exactly the stubbed string, so that an error edge sees it
// unchanged in `error`.
type StubError struct {
	Action  string
	Message string
}

// Error returns the stubbed message.
func (e *StubError) Error() string { return e.Message }

// ExhaustedError is a call to a stubbed action whose replies were all used
// up by earlier calls.
type ExhaustedError struct {
	Action string
	Calls  int // the calls that consumed the replies
}

// Error says which stub list ran out, and after how many calls.
func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("stub list for action %q ran out after %d calls", e.Action, e.Calls)
}

// Recorder records, per action name, the inputs of every call, in the
// order the calls were made, and hands out stubbed replies. Every attempt
// counts as a call: a retried node is recorded once per attempt. It is safe
// for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	calls   map[string][]map[string]flow.Value
	replies map[string][]map[string]flow.Value // what is left of each stub list
	given   map[string]int                     // the length of each stub list
}

func newRecorder(stubs Stubs) *Recorder {
	r := &Recorder{calls: map[string][]map[string]flow.Value{}, replies: map[string][]map[string]flow.Value{}, given: map[string]int{}}
	for name, list := range stubs {
		r.replies[name] = slices.Clone(list)
		r.given[name] = len(list)
	}
	return r
}

// Calls returns the inputs of every call of action so far, in order. The
// maps must not be changed.
func (r *Recorder) Calls(action string) []map[string]flow.Value {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls[action])
}

// Actions returns the names of the actions called so far, sorted.
func (r *Recorder) Actions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.calls))
}

// Remaining returns, for each stubbed action with replies left unused, how
// many are left.
func (r *Recorder) Remaining() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for name, list := range r.replies {
		if len(list) > 0 {
			out[name] = len(list)
		}
	}
	return out
}

// record notes a call of action with its inputs.
func (r *Recorder) record(action string, in map[string]flow.Value) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[action] = append(r.calls[action], in)
}

// take records a call of a stubbed action and returns its reply; ok is
// false when the list ran out, and n is then the length of the list.
func (r *Recorder) take(action string, in map[string]flow.Value) (reply map[string]flow.Value, n int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[action] = append(r.calls[action], in)
	list := r.replies[action]
	if len(list) == 0 {
		return nil, r.given[action], false
	}
	r.replies[action] = list[1:]
	return list[0], 0, true
}

// stubbed reports whether action has a stub list (even an empty one).
func (r *Recorder) stubbed(action string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.given[action]
	return ok
}

// wrap returns a that records its calls under name.
func (r *Recorder) wrap(name string, a engine.Action) engine.Action {
	return engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		r.record(name, c.InputMap())
		return a.Run(ctx, c)
	})
}

// NewStubRegistry returns a new Registry holding base's actions, wrapped to
// record their calls, and every stubbed action, which replaces a base
// action of the same name. A stubbed action answers each call with the
// next reply of its list; once the list is used up, a call fails with an
// *ExhaustedError ("stub list for action "X" ran out after N calls"). A
// reply {error: "message"} fails the call with a *StubError. The Recorder
// holds the inputs of every call. base may be nil; it is not changed.
//
// The Registry does not hold the built-in actions unless base does: call
// action.Register on it (or on base) for ask_user.
func NewStubRegistry(base *engine.Registry, stubs Stubs) (*engine.Registry, *Recorder) {
	rec := newRecorder(stubs)
	reg := engine.NewRegistry()
	for _, name := range base.Names() {
		if a, ok := base.Lookup(name); ok {
			reg.Replace(name, rec.wrap(name, a))
		}
	}
	for name := range stubs {
		reg.Replace(name, &stubAction{name: name, rec: rec})
	}
	return reg, rec
}

// stubAction answers calls from a stub list.
type stubAction struct {
	name string
	rec  *Recorder
}

// Run sets the node's outputs from the next reply.
func (s *stubAction) Run(ctx context.Context, c *engine.Call) error {
	reply, n, ok := s.rec.take(s.name, c.InputMap())
	if !ok {
		return &ExhaustedError{Action: s.name, Calls: n}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if msg, isErr := errorReply(reply); isErr {
		return &StubError{Action: s.name, Message: msg}
	}
	return c.SetOutputs(reply)
}

// errorReply reports whether reply is {error: "message"}.
func errorReply(reply map[string]flow.Value) (string, bool) {
	v, ok := reply[errorKey]
	if !ok || len(reply) != 1 || v.Kind() != flow.KindString {
		return "", false
	}
	return v.Str(), true
}
