// Package napper is a Go action for tests that hold a run at a node: the
// action "nap" says it started (with its input), then waits until the
// test lets it go, or its run is cancelled, and answers "slept INPUT".
package napper

import (
	"context"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// Napper is the state of the nap action: Started receives each nap's
// input as it starts, and a send on Gate lets one nap end.
type Napper struct {
	Started chan string
	Gate    chan struct{}
}

// New returns a Napper whose Started holds up to 16 starts.
func New() *Napper {
	return &Napper{Started: make(chan string, 16), Gate: make(chan struct{})}
}

// Registry is a registry of the nap action (named "nap"), on the
// Napper. A nap's first input's text is what Started receives.
func (n *Napper) Registry() *engine.Registry {
	reg := engine.NewRegistry()
	reg.Replace("nap", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		text := c.Inputs[0].Text()
		n.Started <- text
		select {
		case <-n.Gate:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		c.Outputs[0] = flow.StringValue("slept " + text)
		return nil
	}))
	return reg
}

// WaitStarted waits (up to 10 s) for a nap to start, and fails t unless
// its input is text ("" takes any).
func (n *Napper) WaitStarted(t testing.TB, text string) {
	t.Helper()
	select {
	case got := <-n.Started:
		if text != "" && got != text {
			t.Fatalf("nap %q started, want %q", got, text)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("nap %q never started", text)
	}
}

// Let lets one nap end.
func (n *Napper) Let() { n.Gate <- struct{}{} }
