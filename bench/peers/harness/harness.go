// Package harness defines what every engine under comparison provides to
// the side-by-side benchmark (cmd/compare): the shapes of
// ../shared/reference/peers.md, built once and invoked many times, each
// invocation checking its own result so that a broken implementation fails
// instead of measuring nothing.
package harness

import (
	"context"
	"errors"
)

// Shape names one benchmark shape of peers.md.
type Shape string

// The shapes. Each runs trivial node bodies, so what is measured is the
// engine's own overhead.
const (
	// S1 is chain10: 10 nodes in a line; state {count int, log []string
	// (append)}; each node adds 1 to count and appends its name to log.
	S1 Shape = "S1"
	// S2 is loop1000: nodes A and B, A->B, B->A while count < 1000, each
	// adding 1 to count, then the end.
	S2 Shape = "S2"
	// S3 is fanout100: start -> 100 parallel nodes, each appending its
	// name to log -> join -> end.
	S3 Shape = "S3"
	// S4Memory is S1 with a checkpoint after every step in an in-memory
	// checkpointer, a new thread per invocation.
	S4Memory Shape = "S4mem"
	// S4SQLite is S1 with a checkpoint after every step in a SQLite file,
	// a new thread per invocation.
	S4SQLite Shape = "S4sqlite"
)

// Shapes returns every shape, in the order the table prints them.
func Shapes() []Shape { return []Shape{S1, S2, S3, S4Memory, S4SQLite} }

// Steps returns the node-steps one invocation of s runs: the unit of the
// per-step figures.
func Steps(s Shape) int {
	switch s {
	case S2:
		return 1000
	case S3:
		return 102 // start, 100 branches, join
	default:
		return 10
	}
}

// ErrUnsupported is returned by Prepare for a shape the engine has no
// natural way to run (for example, a checkpointer it does not ship).
var ErrUnsupported = errors.New("harness: shape not supported by this engine")

// Run performs one invocation; i numbers the invocations from 0, so that
// S4 can start a new thread for each. It returns an error when the
// invocation fails or its final state is not the shape's expected one
// (S1/S4: count 10 and log n0..n9 in order; S2: count 1000; S3: 100 log
// entries, one per branch).
type Run func(ctx context.Context, i int) error

// Engine is one implementation under comparison.
type Engine struct {
	// Name identifies the engine in the table and on the command line
	// (for example "weft-wf", "eino", "langgraphgo").
	Name string
	// Version is the engine's module version, as printed in the table.
	Version string
	// Prepare builds shape s once. dir is a scratch directory the engine
	// may use for files (S4SQLite). It returns the invocation function and
	// a function that releases what Prepare opened, or ErrUnsupported.
	Prepare func(ctx context.Context, s Shape, dir string) (Run, func() error, error)
}
