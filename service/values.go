package service

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

// Values are named values in their declared order; their JSON form is an
// object whose keys keep that order.
type Values []engine.NamedValue

// MarshalJSON writes {"name": value, ...} in order; nil is {}.
func (vs Values) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, nv := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(nv.Name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(nv.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nv.Name, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// Get returns the value called name, or null.
func (vs Values) Get(name string) flow.Value {
	for _, nv := range vs {
		if nv.Name == name {
			return nv.Value
		}
	}
	return flow.Null
}

// Question is a question a waiting run asks a person.
type Question struct {
	// ID names the question in an Answer.
	ID string `json:"id"`
	// Node is the human node that asks ("sub/inner" inside a
	// subworkflow).
	Node string `json:"node"`
	// Question is what it asks.
	Question flow.Value `json:"question"`
}

// Notice is something a run did that its outputs alone would hide (a
// node that fell back, a reply cut at the token limit), as --json, the
// server and events show it.
type Notice struct {
	Kind    string `json:"kind"`
	Node    string `json:"node"`
	Step    int    `json:"step"`
	Item    int    `json:"item,omitempty"`
	Message string `json:"message"`
	Values  Values `json:"values,omitempty"`
}

// String renders the notice as one line, as engine.Notice does.
func (n Notice) String() string {
	return engine.Notice{Kind: engine.NoticeKind(n.Kind), Node: n.Node, Step: n.Step, Item: n.Item, Message: n.Message, Values: n.Values}.String()
}

// Output returns the final output called name, or null.
func (r *Result) Output(name string) flow.Value { return r.Outputs.Get(name) }

// ErrorInfo is a failed run's error as a value: its text and its kind.
type ErrorInfo struct {
	Message string `json:"message"`
	Kind    string `json:"kind,omitempty"`
}

// Result is the outcome of a run, or of a run so far when it waits for
// people. Its JSON form is the one `weft run --json` prints and the
// server sends.
type Result struct {
	// Thread and Run name the run: its thread and its number there,
	// from 1. Empty and 0 for a run kept in no thread.
	Thread string `json:"thread,omitempty"`
	Run    int    `json:"run,omitempty"`
	// Status is the run's status; its JSON form is "completed",
	// "failed", "waiting" or "cancelled".
	Status engine.Status `json:"status"`
	// Final is the final node that ended the run; Outputs its outputs.
	Final   string `json:"final"`
	Outputs Values `json:"outputs"`
	// Vars are the variables at the end.
	Vars Values `json:"vars"`
	// Path lists the nodes executed, in order; Steps counts them.
	Path  []string `json:"path"`
	Steps int      `json:"steps"`
	// Waiting are the questions a waiting run asks.
	Waiting []Question `json:"waiting"`
	// Paused names the nodes a breakpoint stopped the run before
	// (StartRequest.Breakpoints); its Status is then "running", and a
	// Resume without answers continues it.
	Paused []string `json:"paused,omitempty"`
	// Error is why a failed run failed, as text; null otherwise.
	Error *string `json:"error"`
	// Fallbacks are the notices of kind fallback; Notices all of them.
	Fallbacks []Notice `json:"fallbacks"`
	Notices   []Notice `json:"notices"`

	// Err is the run's error, for errors.Is and errors.As.
	Err error `json:"-"`

	mem *memRun // a waiting in-memory run (Service.Run), for Continue
}

// memRun is a waiting in-memory run: the engine's Result, which holds the
// machine, and the runtime that continues it.
type memRun struct {
	res  *engine.Result
	rt   *runtime
	plan *flow.Plan
}

// NewResult converts an engine result into a Result: lists empty, never
// null, so that JSON readers need no null checks.
func NewResult(res *engine.Result) *Result {
	out := &Result{
		Thread:    res.Thread,
		Run:       res.Run,
		Status:    res.Status,
		Final:     res.Final,
		Outputs:   Values(res.Outputs),
		Vars:      Values(res.Vars),
		Path:      res.Path,
		Steps:     res.Steps,
		Waiting:   []Question{},
		Paused:    res.Paused,
		Fallbacks: []Notice{},
		Notices:   []Notice{},
		Err:       res.Err,
	}
	if out.Path == nil {
		out.Path = []string{}
	}
	for _, p := range res.Waiting {
		out.Waiting = append(out.Waiting, Question{ID: p.ID, Node: p.Node, Question: p.Question})
	}
	for _, n := range res.Notices {
		j := Notice{Kind: string(n.Kind), Node: n.Node, Step: n.Step, Item: n.Item, Message: n.Message, Values: n.Values}
		out.Notices = append(out.Notices, j)
		if n.Kind == engine.NoticeFallback {
			out.Fallbacks = append(out.Fallbacks, j)
		}
	}
	if res.Err != nil {
		s := res.Err.Error()
		out.Error = &s
	}
	return out
}

// Thread is a thread as listings show it.
type Thread struct {
	ID string `json:"id"`
	// Workflow is the name of the workflow the thread runs, Source the
	// digest of its canonical source.
	Workflow string `json:"workflow"`
	Source   string `json:"source,omitempty"`
	// Runs is the number of its latest run; Status that run's status
	// ("" before the first).
	Runs    int               `json:"runs"`
	Status  string            `json:"status"`
	Created time.Time         `json:"created"`
	Updated time.Time         `json:"updated"`
	Meta    map[string]string `json:"meta,omitempty"`
}

// threadOf converts a store thread.
func threadOf(t *store.Thread) Thread {
	return Thread{ID: t.ID, Workflow: t.Workflow, Source: t.Source, Runs: t.LastRun, Status: string(t.Status), Created: t.Created, Updated: t.Updated, Meta: t.Meta}
}
