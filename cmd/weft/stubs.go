package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/wftest"
)

// stubRegistry returns base plus the actions stubbed in the YAML file at
// path (the stubs answer in place of base's actions of the same name), and
// the stubbed names, sorted. A stubs file that cannot be read or parsed is
// a usage error.
func stubRegistry(base *engine.Registry, path string) (*engine.Registry, []string, error) {
	stubs, err := wftest.LoadStubs(path)
	if err != nil {
		return nil, nil, usageErrorf("--stubs: %v", err)
	}
	reg, _ := wftest.NewStubRegistry(base, stubs)
	return reg, slices.Sorted(maps.Keys(stubs)), nil
}

// stubTargets returns the names a stub can answer for in w and its
// subworkflows: the actions nodes call, and the names of nodes without an
// action (an LLM prompt or a tool written on the node itself).
func stubTargets(w *flow.Workflow) []string {
	seen := map[string]bool{}
	var visit func(w *flow.Workflow)
	visit = func(w *flow.Workflow) {
		for _, n := range w.Nodes {
			switch {
			case n.Type == flow.Subflow:
				if n.Subflow != nil && !seen["\x00"+n.Subflow.Name] {
					seen["\x00"+n.Subflow.Name] = true
					visit(n.Subflow)
				}
			case n.Action != "":
				seen[n.Action] = true
			default:
				seen[n.Name] = true
			}
		}
	}
	visit(w)
	var out []string
	for k := range seen {
		if !strings.HasPrefix(k, "\x00") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// warnUnusedStubs warns about stubbed names no node of w can call, which
// are most likely typos.
func warnUnusedStubs(w io.Writer, wf *flow.Workflow, stubbed []string) {
	targets := stubTargets(wf)
	for _, s := range stubbed {
		if !slices.Contains(targets, s) {
			fmt.Fprintf(w, "weft: warning: --stubs: no node of %s calls an action %q%s\n", wf.Name, s, flow.Suggest(s, targets))
		}
	}
}
