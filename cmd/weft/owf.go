package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/providers"
)

// isOWF reports whether path names an ollama-workflows JSON document: the
// CLI tells the formats apart by extension (.json; everything else is .wf).
func isOWF(path string) bool { return strings.EqualFold(filepath.Ext(path), ".json") }

// warnNoModel warns, for a workflow of owf.* actions run without --llm
// (or WEFT_LLM), that its generation tasks fail: the reference runs the
// rest (the action.owf component says it in its own words, quieted).
func warnNoModel(e env, o *runOptions, w *flow.Workflow) {
	if o.llm != "" || getenvOf(e)(providers.EnvVar) != "" {
		return
	}
	for _, n := range w.Nodes {
		if n.Type == flow.LLM {
			fmt.Fprintf(e.stderr, "weft: no model: task %s and the other generation and function-calling tasks fail (pass --llm SPEC or set %s)\n", n.Name, providers.EnvVar)
			return
		}
	}
}

// usesOWF reports whether w calls owf.* actions: an ollama-workflows
// document, or the .wf file weft convert printed from one.
func usesOWF(w *flow.Workflow) bool {
	for _, n := range w.Nodes {
		if strings.HasPrefix(n.Action, "owf.") {
			return true
		}
	}
	return false
}
