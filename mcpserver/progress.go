package mcpserver

import (
	"context"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftlang/weft/engine"
)

// progressBuffer is how many progress notifications may wait to be sent;
// past it they are dropped, so a slow client never holds a run up.
const progressBuffer = 64

// progress sends a run's node starts and ends as progress notifications
// of the call whose token it has, from a goroutine of its own: the
// engine's observer never blocks.
type progress struct {
	ch   chan *sdk.ProgressNotificationParams
	done chan struct{}
	mu   sync.Mutex // orders n and the sends of concurrent branches
	n    float64
}

// newProgress starts sending the notifications on ss until close.
func newProgress(ctx context.Context, ss *sdk.ServerSession, token any) *progress {
	p := &progress{ch: make(chan *sdk.ProgressNotificationParams, progressBuffer), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for n := range p.ch {
			n.ProgressToken = token
			// A notification that cannot be sent is no failure of the
			// run: the result still goes back.
			_ = ss.NotifyProgress(ctx, n)
		}
	}()
	return p
}

// Observe turns node events into notifications; parallel branches may
// call it at once.
func (p *progress) Observe(e engine.Event) {
	var msg string
	switch e.Type {
	case engine.NodeStarted:
		msg = "node " + e.Node + " started"
	case engine.NodeFinished:
		msg = "node " + e.Node + " finished"
	case engine.NodeFailed:
		msg = "node " + e.Node + " failed"
	default:
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	select {
	case p.ch <- &sdk.ProgressNotificationParams{Progress: p.n, Message: msg}:
	default:
	}
}

// close sends what waits and stops.
func (p *progress) close() {
	close(p.ch)
	<-p.done
}
