package engine

import (
	"fmt"
	"time"

	"github.com/weftlang/weft/flow"
)

// EventType says what an Event reports.
type EventType uint8

// The event types.
const (
	RunStarted   EventType = iota + 1 // a run began
	NodeStarted                       // a node was dispatched, with its inputs
	NodeFinished                      // a node succeeded, with its outputs and the variables it changed
	NodeFailed                        // a node failed after its retries
	NodeRetrying                      // an attempt failed; another follows after Delay
	EdgeTaken                         // routing took an edge, with the variables and slots it changed
	RunWaiting                        // the run is suspended at a human node
	RunFinished                       // the run reached a final node
	RunFailed                         // the run failed
	ActionEvent                       // an action reported progress (tokens, tool calls, logs)
	RunCancelled                      // the run was stopped for good (Machine.Cancel)
)

var eventNames = [...]string{
	RunStarted:   "run_started",
	NodeStarted:  "node_started",
	NodeFinished: "node_finished",
	NodeFailed:   "node_failed",
	NodeRetrying: "node_retrying",
	EdgeTaken:    "edge_taken",
	RunWaiting:   "run_waiting",
	RunFinished:  "run_finished",
	RunFailed:    "run_failed",
	ActionEvent:  "action",
	RunCancelled: "run_cancelled",
}

// String returns the snake_case name used in JSON output.
func (t EventType) String() string {
	if int(t) < len(eventNames) && eventNames[t] != "" {
		return eventNames[t]
	}
	return fmt.Sprintf("EventType(%d)", t)
}

// MarshalText encodes the type by name.
func (t EventType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText decodes a type from its name.
func (t *EventType) UnmarshalText(b []byte) error {
	for i, n := range eventNames {
		if n != "" && n == string(b) {
			*t = EventType(i)
			return nil
		}
	}
	return fmt.Errorf("engine: unknown event type %q", b)
}

// NamedValue is a name and its value, kept in declaration order.
type NamedValue struct {
	Name  string     `json:"name"`
	Value flow.Value `json:"value"`
}

// Event is one entry of a run's event stream. The fields that apply depend
// on Type; the rest are zero.
type Event struct {
	Type    EventType     `json:"type"`
	Seq     int64         `json:"seq"`               // 1-based position in the run's stream, on across resumes
	Thread  string        `json:"thread,omitempty"`  // the thread of a run kept by Threads
	Run     int           `json:"run,omitempty"`     // its number in the thread, from 1
	Time    time.Time     `json:"time"`              // stamped by the runner, not the machine
	Step    int           `json:"step,omitempty"`    // the node execution this event belongs to
	Node    string        `json:"node,omitempty"`    // node name; its path inside a subworkflow: "sub/inner", "each[2]/inner" in a map element's
	Task    int           `json:"task,omitempty"`    // task id, unique within the run
	Item    int           `json:"item,omitempty"`    // 1-based element of a map node, 0 otherwise
	Attempt int           `json:"attempt,omitempty"` // for NodeRetrying and NodeFailed
	Delay   time.Duration `json:"delay,omitempty"`   // for NodeRetrying
	Inputs  []NamedValue  `json:"inputs,omitempty"`
	Outputs []NamedValue  `json:"outputs,omitempty"`
	Changes []NamedValue  `json:"changes,omitempty"` // variables and slots after the change; for RunStarted, the parameters, variables and slots the run starts with
	From    string        `json:"from,omitempty"`    // EdgeTaken
	To      []string      `json:"to,omitempty"`      // EdgeTaken
	Cond    string        `json:"cond,omitempty"`    // EdgeTaken: the condition that held, "" for a default edge
	OnError bool          `json:"on_error,omitempty"`
	Error   string        `json:"error,omitempty"`
	Kind    string        `json:"kind,omitempty"` // ActionEvent: "token", "tool_call", "log", ...
	Data    flow.Value    `json:"data,omitzero"`  // ActionEvent payload
}

// String renders the event as one line of a trace.
func (e Event) String() string {
	switch e.Type {
	case RunStarted:
		return "run started"
	case NodeStarted:
		return fmt.Sprintf("step %d: %s%s %s", e.Step, e.Node, itemSuffix(e.Item), formatNamed(e.Inputs))
	case NodeFinished:
		s := fmt.Sprintf("step %d: %s%s -> %s", e.Step, e.Node, itemSuffix(e.Item), formatNamed(e.Outputs))
		if len(e.Changes) > 0 {
			s += " set " + formatNamed(e.Changes)
		}
		return s
	case NodeFailed:
		return fmt.Sprintf("step %d: %s%s failed: %s", e.Step, e.Node, itemSuffix(e.Item), e.Error)
	case NodeRetrying:
		return fmt.Sprintf("step %d: %s%s attempt %d failed: %s; retrying in %s", e.Step, e.Node, itemSuffix(e.Item), e.Attempt, e.Error, e.Delay)
	case EdgeTaken:
		s := fmt.Sprintf("%s -> %s", e.From, joinNames(e.To))
		if e.OnError {
			s += " [on error]"
		}
		if e.Cond != "" {
			s += " [" + e.Cond + "]"
		}
		if len(e.Changes) > 0 {
			s += " set " + formatNamed(e.Changes)
		}
		return s
	case RunWaiting:
		return fmt.Sprintf("waiting at %s: %s", e.Node, e.Data.Text())
	case RunFinished:
		return fmt.Sprintf("finished at %s: %s", e.Node, formatNamed(e.Outputs))
	case RunFailed:
		return "failed: " + e.Error
	case RunCancelled:
		return "cancelled: " + e.Error
	case ActionEvent:
		return fmt.Sprintf("%s %s: %s", e.Node, e.Kind, e.Data.Text())
	}
	return e.Type.String()
}

func itemSuffix(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf("[%d]", i)
}

func joinNames(ns []string) string {
	if len(ns) == 1 {
		return ns[0]
	}
	s := "["
	for i, n := range ns {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s + "]"
}

func formatNamed(vs []NamedValue) string {
	s := "{"
	for i, v := range vs {
		if i > 0 {
			s += ", "
		}
		s += v.Name + ": " + v.Value.String()
	}
	return s + "}"
}

// Observer receives a run's events in order, from one goroutine at a time,
// outside the run's locks: while it blocks, the run's branches go on and
// its later events wait in memory (the run returns only when they have
// all been delivered). It must not call the Runner that delivers them to
// drive the same run.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }
