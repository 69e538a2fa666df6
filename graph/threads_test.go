package graph_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/store/sqlite"
)

type chat struct {
	Turns    int      `weft:"turns"`
	Messages []string `weft:"messages,append"`
	Approved bool     `weft:"approved"`
}

type said struct {
	Turns    int
	Messages string
}

type approval struct {
	Approved bool
}

// chatGraph answers the last message, then asks a person to approve when
// the message asks for it.
func chatGraph(t *testing.T) *graph.Compiled[chat] {
	g := graph.New[chat]("chat")
	graph.AddNode(g, "reply", func(_ context.Context, s chat) (said, error) {
		return said{Turns: s.Turns + 1, Messages: "reply to " + s.Messages[len(s.Messages)-1]}, nil
	})
	graph.AddNode(g, "approve", func(context.Context, chat) (approval, error) {
		return approval{}, &engine.Interrupt{Question: flow.StringValue("approve?")}
	})
	g.SetEntry("reply")
	g.AddConditionalEdges("reply", func(s chat) string {
		if slices.Contains(s.Messages, "please approve") {
			return "approve"
		}
		return graph.END
	}, "approve", graph.END)
	g.AddEdge("approve", graph.END)
	c, err := g.Compile(graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestThreadsCarryStateAndWaitAcrossProcesses(t *testing.T) {
	for _, kind := range []string{"memory", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			open := func() store.Store { return memory.New() }
			var mem store.Store
			if kind == "memory" {
				mem = memory.New()
				open = func() store.Store { return mem }
			} else {
				path := filepath.Join(t.TempDir(), "chat.db")
				open = func() store.Store {
					s, err := sqlite.Open(ctx, path)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					return s
				}
			}
			c := chatGraph(t)
			th := c.Threads(open(), &graph.ThreadOptions{Durability: engine.Async})
			out, err := th.Invoke(ctx, "c1", chat{Messages: []string{"hello"}})
			if err != nil || out.Turns != 1 || !slices.Equal(out.Messages, []string{"hello", "reply to hello"}) {
				t.Fatalf("first run: %+v, %v", out, err)
			}
			// The messages carry over (they have a reducer); the turn
			// counter starts from what Invoke is given.
			out, err = th.Invoke(ctx, "c1", chat{Messages: []string{"please approve"}})
			var we *graph.WaitingError
			if !errors.As(err, &we) || len(we.Pending) != 1 || we.Pending[0].Node != "approve" {
				t.Fatalf("second run: %+v, %v; want it waiting at approve", out, err)
			}
			want := []string{"hello", "reply to hello", "please approve", "reply to please approve"}
			if !slices.Equal(out.Messages, want) || out.Turns != 1 {
				t.Errorf("waiting state: %+v", out)
			}
			// A new run in a waiting thread is refused.
			var te *engine.ThreadError
			if _, err := th.Invoke(ctx, "c1", chat{}); !errors.As(err, &te) {
				t.Errorf("run on a waiting thread: %v", err)
			}
			// Another process answers.
			other := c.Threads(open(), nil)
			st, err := other.State(ctx, "c1")
			if err != nil || !slices.Equal(st.Messages, want) {
				t.Fatalf("State: %+v, %v", st, err)
			}
			out, err = other.Resume(ctx, "c1", engine.Answer{Outputs: map[string]flow.Value{"approved": flow.BoolValue(true)}})
			if err != nil || !out.Approved || !slices.Equal(out.Messages, want) {
				t.Fatalf("resume: %+v, %v", out, err)
			}
			hist, err := other.Engine().History(ctx, "c1", 1)
			if err != nil || len(hist) == 0 {
				t.Errorf("history: %d records, %v", len(hist), err)
			}
		})
	}
}

// Threads.Run is Invoke with an observer and the engine's result: the
// events of the run as they happen, its thread, run number and path.
func TestThreadsRunObserves(t *testing.T) {
	ctx := context.Background()
	c := chatGraph(t)
	th := c.Threads(memory.New(), nil)
	if _, err := th.Invoke(ctx, "t1", chat{Messages: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	res, err := th.Run(ctx, "t1", chat{Messages: []string{"again"}}, engine.ObserverFunc(func(e engine.Event) {
		if e.Type == engine.NodeStarted {
			nodes = append(nodes, e.Node)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Thread != "t1" || res.Run != 2 || res.Status != engine.Completed || !slices.Contains(res.Path, "reply") {
		t.Errorf("result: thread %q run %d status %v path %v", res.Thread, res.Run, res.Status, res.Path)
	}
	if !slices.Equal(nodes, []string{"reply", "__end__"}) {
		t.Errorf("observed nodes %v, want [reply __end__]", nodes)
	}
	out, err := c.State(res)
	if err != nil || out.Turns != 1 || !slices.Equal(out.Messages, []string{"hi", "reply to hi", "again", "reply to again"}) {
		t.Errorf("state = %+v, %v", out, err)
	}
	if _, err := th.Run(ctx, "t2", chat{}, nil); err == nil {
		t.Error("a run whose node fails (no message to reply to) returned no error")
	}
}
