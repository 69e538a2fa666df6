package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// The --trace modes.
const (
	traceSteps = "steps" // one line per node step, values clipped (--trace)
	traceFull  = "full"  // every event, values whole (--trace=full)
)

// traceValue is the --trace flag: without a value it is "steps"; with
// --trace=full, every event.
type traceValue struct {
	on   *bool
	mode *string
}

func (v traceValue) String() string {
	if v.mode == nil {
		return ""
	}
	return *v.mode
}

func (v traceValue) Set(s string) error {
	switch s {
	case traceSteps, traceFull:
	case "true":
		s = traceSteps
	case "false":
		*v.on, *v.mode = false, ""
		return nil
	default:
		return fmt.Errorf("want --trace (a line per step) or --trace=full (every event), got %q", s)
	}
	*v.on, *v.mode = true, s
	return nil
}

func (v traceValue) Type() string { return "" }

// traceClip is the most runes of one value a step line shows.
const traceClip = 80

// stepTracer prints a run's trace as one line per node step: its inputs,
// its outputs or error, what its action reported (tokens counted, tool
// calls named) and the edge routing took from it, each value clipped. The
// run's start and end, and a question it waits on, are printed by the
// command itself, once.
type stepTracer struct {
	w       io.Writer
	pending string // the last step's line, until the edge from it is known
	from    string // the node of pending
	acts    map[stepKey]*stepActs
	inputs  map[stepKey][]engine.NamedValue
}

type stepKey struct{ step, item int }

// stepActs gathers what a step's action reported.
type stepActs struct {
	tokens, toolCalls int
	tools             []string
	usage             string
	other             map[string]int
}

func newStepTracer(w io.Writer) *stepTracer {
	return &stepTracer{w: w, acts: map[stepKey]*stepActs{}, inputs: map[stepKey][]engine.NamedValue{}}
}

func (t *stepTracer) flush() {
	if t.pending != "" {
		fmt.Fprintln(t.w, termSafe(t.pending, false))
		t.pending, t.from = "", ""
	}
}

// Observe implements engine.Observer.
func (t *stepTracer) Observe(ev engine.Event) {
	k := stepKey{ev.Step, ev.Item}
	switch ev.Type {
	case engine.NodeStarted:
		t.inputs[k] = ev.Inputs
	case engine.ActionEvent:
		a := t.acts[k]
		if a == nil {
			a = &stepActs{}
			t.acts[k] = a
		}
		switch ev.Kind {
		case "token":
			a.tokens++
		case "tool_call":
			a.toolCalls++
			if name := ev.Data.Object()["name"].Text(); name != "" && !slices.Contains(a.tools, name) {
				a.tools = append(a.tools, name)
			}
		case "tool_result":
		case "usage":
			u := ev.Data.Object()
			a.usage = fmt.Sprintf("%s in, %s out", u["input_tokens"].Text(), u["output_tokens"].Text())
		default:
			if a.other == nil {
				a.other = map[string]int{}
			}
			a.other[ev.Kind]++
		}
	case engine.NodeFinished:
		t.flush()
		t.pending = t.stepLine(ev, k, "-> "+clipNamed(ev.Outputs))
		if len(ev.Changes) > 0 {
			t.pending += " set " + clipNamed(ev.Changes)
		}
		t.from = ev.Node
	case engine.NodeFailed:
		t.flush()
		t.pending = t.stepLine(ev, k, "failed: "+clipText(ev.Error, 4*traceClip))
		t.from = ev.Node
	case engine.NodeRetrying:
		t.flush()
		fmt.Fprintln(t.w, termSafe(fmt.Sprintf("step %d: %s%s attempt %d failed: %s; retrying in %s", ev.Step, ev.Node, itemTag(ev.Item), ev.Attempt, clipText(ev.Error, 4*traceClip), ev.Delay), false))
	case engine.EdgeTaken:
		edge := "→ " + strings.Join(ev.To, ", ")
		if ev.OnError {
			edge += " on error"
		}
		if ev.Cond != "" {
			edge += " [" + clipText(ev.Cond, traceClip) + "]"
		}
		if len(ev.Changes) > 0 {
			edge += " set " + clipNamed(ev.Changes)
		}
		if t.pending != "" && t.from == ev.From {
			t.pending += "  " + edge
			t.flush()
			return
		}
		t.flush()
		fmt.Fprintln(t.w, termSafe(ev.From+" "+edge, false))
	default:
		// run_started, run_waiting, run_finished, run_failed: the
		// command prints the outcome itself.
		t.flush()
	}
}

// stepLine is "step N: node {inputs} rest [what the action reported]".
func (t *stepTracer) stepLine(ev engine.Event, k stepKey, rest string) string {
	s := fmt.Sprintf("step %d: %s%s %s %s", ev.Step, ev.Node, itemTag(ev.Item), clipNamed(t.inputs[k]), rest)
	delete(t.inputs, k)
	if a := t.acts[k]; a != nil {
		var parts []string
		if a.tokens > 0 {
			parts = append(parts, plural(a.tokens, "token chunk"))
		}
		if a.usage != "" {
			parts = append(parts, "tokens "+a.usage)
		}
		if a.toolCalls > 0 {
			parts = append(parts, plural(a.toolCalls, "tool call")+": "+strings.Join(a.tools, ", "))
		}
		for _, kind := range slices.Sorted(maps.Keys(a.other)) {
			parts = append(parts, fmt.Sprintf("%d %s", a.other[kind], kind))
		}
		if len(parts) > 0 {
			s += " (" + strings.Join(parts, "; ") + ")"
		}
		delete(t.acts, k)
	}
	return s
}

func itemTag(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf("[%d]", i)
}

// clipNamed renders values as {name: value, ...}, each value clipped.
func clipNamed(vs []engine.NamedValue) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.Name)
		b.WriteString(": ")
		b.WriteString(clipValue(v.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// clipValue is v's trace form, at most traceClip runes, a cut one ending
// in "…(N bytes)" so that the cut is visible.
func clipValue(v flow.Value) string { return clipText(v.String(), traceClip) }

func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for i := range s {
		if n == 0 {
			cut = i
			break
		}
		n--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}
