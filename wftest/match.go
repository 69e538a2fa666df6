package wftest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// check compares a run's result with what the case expects and returns
// one message per mismatch.
func check(e *Expect, res *engine.Result, rec *Recorder) []string {
	var f []string
	got := res.Status.String()
	if got != e.Status {
		msg := fmt.Sprintf("status: want %s, got %s", e.Status, got)
		switch {
		case res.Err != nil:
			msg += ": " + res.Err.Error()
			if errors.Is(res.Err, action.ErrNoProvider) {
				msg += " (stub the action in the case's stubs)"
			}
		case res.Status == engine.Waiting:
			msg += " at " + strings.Join(waitingNodes(res), ", ")
		}
		f = append(f, msg)
	}
	if e.Error != "" {
		switch {
		case res.Err == nil:
			f = append(f, fmt.Sprintf("error: want an error containing %q, got none (status %s)", e.Error, got))
		case !strings.Contains(res.Err.Error(), e.Error):
			f = append(f, fmt.Sprintf("error: want an error containing %q, got: %s", e.Error, res.Err))
		}
	}
	if w := e.Waiting; w != nil {
		f = append(f, checkWaiting(w, res)...)
	}
	if e.Path != nil {
		f = append(f, checkPath(e.Path, res.Path)...)
	}
	if e.Output != nil {
		if res.Status != engine.Completed {
			f = append(f, fmt.Sprintf("output: want %s, got no final outputs (status %s)", flow.ObjectValue(e.Output), got))
		} else {
			f = append(f, matchFields("output", e.Output, namedMap(res.Outputs), "output")...)
		}
	}
	if e.Vars != nil {
		f = append(f, matchFields("vars", e.Vars, namedMap(res.Vars), "variable")...)
	}
	for _, name := range slices.Sorted(maps.Keys(e.Calls)) {
		f = append(f, checkCalls(name, e.Calls[name], rec.Calls(name))...)
	}
	return f
}

func waitingNodes(res *engine.Result) []string {
	var out []string
	for _, p := range res.Waiting {
		out = append(out, p.Node)
	}
	return out
}

func checkWaiting(w *Waiting, res *engine.Result) []string {
	if res.Status != engine.Waiting || len(res.Waiting) == 0 {
		return []string{fmt.Sprintf("waiting: want the run waiting at %s, got none (status %s)", w.Node, res.Status)}
	}
	for _, p := range res.Waiting {
		if p.Node != w.Node {
			continue
		}
		if w.Question == nil {
			return nil
		}
		var f []string
		match(&f, "waiting.question", *w.Question, p.Question)
		return f
	}
	return []string{fmt.Sprintf("waiting.node: want %s, got %s", w.Node, strings.Join(waitingNodes(res), ", "))}
}

// checkPath reports the first step where the paths differ, with both.
func checkPath(want, got []string) []string {
	for i := range max(len(want), len(got)) {
		w, g := "end of path", "end of run"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w == g {
			continue
		}
		return []string{fmt.Sprintf("path: step %d: want %s, got %s\n  want: %s\n  got:  %s", i+1, w, g, formatPath(want), formatPath(got))}
	}
	return nil
}

func formatPath(p []string) string { return "[" + strings.Join(p, ", ") + "]" }

func checkCalls(action string, want, got []map[string]flow.Value) []string {
	prefix := "calls." + action
	if len(want) == 0 {
		if len(got) == 0 {
			return nil
		}
		return []string{fmt.Sprintf("%s: want no calls, got %d: %s", prefix, len(got), formatCalls(got))}
	}
	var f []string
	for i, wc := range want {
		at := fmt.Sprintf("%s[%d]", prefix, i)
		if i >= len(got) {
			f = append(f, fmt.Sprintf("%s: want a call with %s, got %s", at, flow.ObjectValue(wc), countCalls(len(got))))
			break
		}
		f = append(f, matchFields(at, wc, got[i], "input")...)
	}
	return f
}

func countCalls(n int) string {
	switch n {
	case 0:
		return "no calls"
	case 1:
		return "only 1 call"
	}
	return fmt.Sprintf("only %d calls", n)
}

func formatCalls(calls []map[string]flow.Value) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = flow.ObjectValue(c).String()
	}
	return strings.Join(parts, ", ")
}

func namedMap(nv []engine.NamedValue) map[string]flow.Value {
	m := make(map[string]flow.Value, len(nv))
	for _, v := range nv {
		m[v.Name] = v.Value
	}
	return m
}

// matchFields matches want as a subset of got, whose keys are a node's
// outputs or inputs, or the variables (noun says which).
func matchFields(prefix string, want, got map[string]flow.Value, noun string) []string {
	var f []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		at := prefix + "." + k
		g, ok := got[k]
		if !ok {
			f = append(f, fmt.Sprintf("%s: want %s, got no such %s (%ss: %s)", at, want[k], noun, noun, strings.Join(slices.Sorted(maps.Keys(got)), ", ")))
			continue
		}
		match(&f, at, want[k], g)
	}
	return f
}

// match appends to f a message for each place where got does not match
// want: objects match when every expected key matches (got may have more),
// lists element by element and in length, numbers by value (Int and Float
// alike), a Duration against its string form ("5s"), anything else by
// equality.
func match(f *[]string, at string, want, got flow.Value) {
	mismatch := func() { *f = append(*f, fmt.Sprintf("%s: want %s, got %s", at, want, got)) }
	switch want.Kind() {
	case flow.KindObject:
		if got.Kind() != flow.KindObject {
			mismatch()
			return
		}
		g := got.Object()
		for _, k := range slices.Sorted(maps.Keys(want.Object())) {
			gv, ok := g[k]
			if !ok {
				*f = append(*f, fmt.Sprintf("%s.%s: want %s, got no such key in %s", at, k, want.Object()[k], got))
				continue
			}
			match(f, at+"."+k, want.Object()[k], gv)
		}
	case flow.KindList:
		if got.Kind() != flow.KindList {
			mismatch()
			return
		}
		wl, gl := want.List(), got.List()
		if len(wl) != len(gl) {
			*f = append(*f, fmt.Sprintf("%s: want %d elements, got %d: want %s, got %s", at, len(wl), len(gl), want, got))
			return
		}
		for i := range wl {
			match(f, fmt.Sprintf("%s[%d]", at, i), wl[i], gl[i])
		}
	case flow.KindString:
		if got.Kind() == flow.KindDuration {
			if d, err := time.ParseDuration(want.Str()); err == nil && d == got.Duration() {
				return
			}
		}
		if !want.Equal(got) {
			mismatch()
		}
	default:
		if !want.Equal(got) {
			mismatch()
		}
	}
}
