package main

import (
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/weftlang/weft/engine"
)

// statusLine is the live progress line `weft run` keeps at the bottom of a
// terminal: "▶ step 3 · evaluate · 1.2s". It is fed engine events, redrawn
// in place ("\r", the text, then clear to end of line) on node start and
// finish and on Tick, and erased by Clear. The time shown is how long the
// node on display has been running. When several nodes run at once the
// latest started is shown, with "+N" for the others. A statusLine is safe
// for concurrent use: events and ticks may come from different goroutines.
type statusLine struct {
	w     io.Writer
	now   func() time.Time
	width int // columns; the line is cut to width-1 so it never wraps; 0: no limit

	mu      sync.Mutex
	running []runningNode // in start order
	last    *runningNode  // the last node to finish, shown when none runs
	drawn   bool          // a line is on screen
}

type runningNode struct {
	item  int
	step  int
	node  string
	start time.Time
	took  time.Duration // set when finished
}

// newStatusLine returns a status line writing to w, reading time from now.
func newStatusLine(w io.Writer, now func() time.Time, width int) *statusLine {
	if now == nil {
		now = time.Now
	}
	return &statusLine{w: w, now: now, width: width}
}

// Observe updates the line from a run event.
func (s *statusLine) Observe(e engine.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Type {
	case engine.NodeStarted:
		s.running = append(s.running, runningNode{item: e.Item, step: e.Step, node: e.Node, start: s.now()})
		s.draw()
	case engine.NodeFinished, engine.NodeFailed:
		for i, r := range s.running {
			// Match by step, node and item: every node event carries them.
			if r.step == e.Step && r.node == e.Node && r.item == e.Item {
				r.took = s.now().Sub(r.start)
				s.last = &r
				s.running = append(s.running[:i], s.running[i+1:]...)
				break
			}
		}
		s.draw()
	case engine.RunWaiting, engine.RunFinished, engine.RunFailed:
		s.running = nil
		s.last = nil
		s.clear()
	}
}

// Tick redraws the line so that the time shown advances.
func (s *statusLine) Tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.running) > 0 {
		s.draw()
	}
}

// Clear erases the line and forgets the nodes on display.
func (s *statusLine) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = nil
	s.last = nil
	s.clear()
}

// text returns the line's content; "" when there is nothing to show.
func (s *statusLine) text() string {
	var r runningNode
	var took time.Duration
	switch {
	case len(s.running) > 0:
		r = s.running[len(s.running)-1]
		took = s.now().Sub(r.start)
	case s.last != nil:
		r = *s.last
		took = r.took
	default:
		return ""
	}
	name := r.node
	if r.item > 0 {
		name += fmt.Sprintf("[%d]", r.item)
	}
	if n := len(s.running) - 1; n > 0 {
		name += fmt.Sprintf(" +%d", n)
	}
	return fmt.Sprintf("▶ step %d · %s · %s", r.step, name, formatElapsed(took))
}

func (s *statusLine) draw() {
	t := s.text()
	if t == "" {
		s.clear()
		return
	}
	if s.width > 1 && utf8.RuneCountInString(t) > s.width-1 {
		rs := []rune(t)
		t = string(rs[:s.width-2]) + "…"
	}
	fmt.Fprintf(s.w, "\r%s\x1b[K", t)
	s.drawn = true
}

func (s *statusLine) clear() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
}

// formatElapsed shows a duration the way the status line does: tenths of a
// second under a minute ("1.2s"), minutes and seconds above ("2m05s").
func formatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}
