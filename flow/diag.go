package flow

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a position in a source file. Line and Col are 1-based; Col counts
// bytes, as go/token does. The zero Pos is "unknown" and prints as "-".
type Pos struct {
	File string // file name as given to the front-end; may be empty
	Line int    // 1-based line, 0 if unknown
	Col  int    // 1-based byte column, 0 if unknown
}

// IsValid reports whether the position carries a line number.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String formats the position as file:line:col, omitting the parts that are
// unknown.
func (p Pos) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.IsValid() {
		if p.File != "" {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%d", p.Line)
		if p.Col > 0 {
			fmt.Fprintf(&b, ":%d", p.Col)
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// Before reports whether p sorts before q (by file, line, then column).
func (p Pos) Before(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// Severity grades a Diagnostic.
type Severity int

const (
	// Error makes a workflow unusable: it is not run.
	Error Severity = iota
	// Warning points at something likely wrong; the workflow still runs.
	Warning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one finding of a front-end or of the static checker. It
// names the place twice where it can: by source position, and by the
// workflow element (node, edge, field) it concerns, so that workflows built
// in Go, which have no positions, still get precise messages.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Code     string // stable short identifier, e.g. "unknown-name"; see checks.go
	Msg      string
}

// Error formats the diagnostic as "file:line:col: severity: message"; the
// severity word is left out for errors, as go vet and the Go compiler do.
func (d Diagnostic) Error() string {
	var b strings.Builder
	if d.Pos.IsValid() || d.Pos.File != "" {
		b.WriteString(d.Pos.String())
		b.WriteString(": ")
	}
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(d.Msg)
	return b.String()
}

// Diagnostics is a list of findings. As an error it reports every entry, one
// a line; errors.As finds it through any wrapping.
type Diagnostics []Diagnostic

// Error lists every diagnostic, one per line.
func (ds Diagnostics) Error() string {
	switch len(ds) {
	case 0:
		return "no errors"
	case 1:
		return ds[0].Error()
	}
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.Error())
	}
	return b.String()
}

// HasErrors reports whether any entry has Severity Error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the entries with Severity Error.
func (ds Diagnostics) Errors() Diagnostics { return ds.filter(Error) }

// Warnings returns only the entries with Severity Warning.
func (ds Diagnostics) Warnings() Diagnostics { return ds.filter(Warning) }

func (ds Diagnostics) filter(s Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// Sort orders the list by position, keeping the order of entries at the same
// position.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Pos.Before(ds[j].Pos) })
}

// Err returns the list as an error if it holds any Error-severity entry, and
// nil otherwise. Warnings alone never make an error.
func (ds Diagnostics) Err() error {
	if ds.HasErrors() {
		return ds
	}
	return nil
}
