package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
)

func TestStatusLine(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	s := newStatusLine(&buf, clock.now, 0)
	next := func() string {
		out := buf.String()
		buf.Reset()
		return out
	}

	s.Observe(engine.Event{Type: engine.RunStarted})
	if got := next(); got != "" {
		t.Errorf("run_started drew %q", got)
	}
	s.Tick()
	if got := next(); got != "" {
		t.Errorf("a tick with nothing running drew %q", got)
	}

	s.Observe(engine.Event{Type: engine.NodeStarted, Step: 1, Node: "identify_intent", Task: 1})
	if got, want := next(), "\r▶ step 1 · identify_intent · 0.0s\x1b[K"; got != want {
		t.Errorf("node_started drew %q, want %q", got, want)
	}
	clock.advance(1200 * time.Millisecond)
	s.Tick()
	if got, want := next(), "\r▶ step 1 · identify_intent · 1.2s\x1b[K"; got != want {
		t.Errorf("tick drew %q, want %q", got, want)
	}
	clock.advance(300 * time.Millisecond)
	s.Observe(engine.Event{Type: engine.NodeFinished, Step: 1, Node: "identify_intent"})
	if got, want := next(), "\r▶ step 1 · identify_intent · 1.5s\x1b[K"; got != want {
		t.Errorf("node_finished drew %q, want %q", got, want)
	}
	// The finished node's time stays put.
	clock.advance(time.Second)
	s.Tick()
	if got := next(); got != "" {
		t.Errorf("a tick after the node finished drew %q", got)
	}

	// Parallel branches: the latest started is shown, with a count of the
	// others; map elements are numbered.
	s.Observe(engine.Event{Type: engine.NodeStarted, Step: 2, Node: "search"})
	s.Observe(engine.Event{Type: engine.NodeStarted, Step: 3, Node: "each", Item: 2})
	if got, want := next(), "\r▶ step 2 · search · 0.0s\x1b[K\r▶ step 3 · each[2] +1 · 0.0s\x1b[K"; got != want {
		t.Errorf("parallel nodes drew %q, want %q", got, want)
	}
	clock.advance(65 * time.Second)
	s.Observe(engine.Event{Type: engine.NodeFinished, Step: 3, Node: "each", Item: 2})
	if got, want := next(), "\r▶ step 2 · search · 1m05s\x1b[K"; got != want {
		t.Errorf("after one branch finished: %q, want %q", got, want)
	}

	s.Observe(engine.Event{Type: engine.RunWaiting, Step: 4, Node: "ask_user"})
	if got, want := next(), "\r\x1b[K"; got != want {
		t.Errorf("run_waiting drew %q, want the line cleared", got)
	}
	s.Clear()
	if got := next(); got != "" {
		t.Errorf("clearing a clear line wrote %q", got)
	}
}

func TestStatusLineWidth(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{}
	s := newStatusLine(&buf, clock.now, 20)
	s.Observe(engine.Event{Type: engine.NodeStarted, Step: 12, Node: "a_node_with_a_very_long_name"})
	line := strings.TrimSuffix(strings.TrimPrefix(buf.String(), "\r"), "\x1b[K")
	if n := len([]rune(line)); n != 19 || !strings.HasSuffix(line, "…") {
		t.Errorf("line %q has %d runes, want 19 ending in an ellipsis", line, n)
	}
	s.Observe(engine.Event{Type: engine.RunFailed})
	if !strings.HasSuffix(buf.String(), "\r\x1b[K") {
		t.Errorf("run_failed did not clear the line: %q", buf.String())
	}
}

func TestFormatElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                       "0.0s",
		-time.Second:            "0.0s",
		1249 * time.Millisecond: "1.2s",
		59 * time.Second:        "59.0s",
		time.Minute:             "1m00s",
		3723 * time.Second:      "62m03s",
	} {
		if got := formatElapsed(d); got != want {
			t.Errorf("formatElapsed(%s) = %q, want %q", d, got, want)
		}
	}
}
