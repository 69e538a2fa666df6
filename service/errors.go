package service

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// errNoName is a Source without a name.
var errNoName = errors.New("the source has no name")

// DiagnosticsError is a workflow that does not compile: its errors, and
// the warnings found with them, in order.
type DiagnosticsError struct {
	Name        string // the root file, or the Go workflow's name
	Diagnostics flow.Diagnostics
}

// Error names the first error and how many more there are.
func (e *DiagnosticsError) Error() string {
	var first *flow.Diagnostic
	n := 0
	for i := range e.Diagnostics {
		if e.Diagnostics[i].Severity == flow.Error {
			if first == nil {
				first = &e.Diagnostics[i]
			}
			n++
		}
	}
	if first == nil {
		return fmt.Sprintf("%s does not compile", e.Name)
	}
	msg := fmt.Sprintf("%s: %s", first.Pos, first.Msg)
	switch {
	case n == 2:
		msg += " (and 1 more error)"
	case n > 2:
		msg += fmt.Sprintf(" (and %d more errors)", n-1)
	}
	return msg
}

// NoWorkflowError is a module without the workflow asked for: none at all
// (Name is ""), or none of that name.
type NoWorkflowError struct {
	File string
	Name string   // the workflow asked for; "" for the main one
	Have []string // the workflows the module declares
}

// Error names the file, the workflow and the ones there are.
func (e *NoWorkflowError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("%s declares no workflow", e.File)
	}
	return fmt.Sprintf("no workflow %s in %s%s (have: %s)", e.Name, e.File, flow.Suggest(e.Name, e.Have), strings.Join(e.Have, ", "))
}

// SourceError is a canonical source (Stored) that cannot be opened: not
// one that Workflow.Source made, or damaged.
type SourceError struct {
	Digest string // when known
	Reason string
}

// Error says why.
func (e *SourceError) Error() string {
	if e.Digest != "" {
		return fmt.Sprintf("workflow source %s: %s", e.Digest, e.Reason)
	}
	return "workflow source: " + e.Reason
}

// Is reports the invalid-input kind (engine.KindOf): the workflow given
// does not compile.
func (e *DiagnosticsError) Is(target error) bool { return target == engine.ErrInvalidInput }

// Is reports the not-found kind: the module has no such workflow.
func (e *NoWorkflowError) Is(target error) bool { return target == engine.ErrNotFound }

// Is reports the internal kind: a stored source that does not open is
// damage, not a caller's mistake.
func (e *SourceError) Is(target error) bool { return target == engine.ErrInternal }
