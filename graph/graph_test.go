package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
)

type S struct {
	Count int      `weft:"count"`
	Log   []string `weft:"log,append"`
	Name  string
	Total int `weft:"total,sum"`
	Best  int `weft:"best,max"`
}

type logOnly struct{ Log []string }

type countOnly struct{ Count int }

func compile[T any](t *testing.T, g *graph.Graph[T], opts graph.Options) *graph.Compiled[T] {
	t.Helper()
	c, err := g.Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// compileErr compiles g, expecting errors, and returns them as one text.
func compileErr[T any](t *testing.T, g *graph.Graph[T]) string {
	t.Helper()
	c, err := g.Compile(graph.Options{})
	if err == nil {
		t.Fatalf("Compile succeeded: %v", c.Workflow().Nodes)
	}
	var ds flow.Diagnostics
	if !errors.As(err, &ds) || !ds.HasErrors() {
		t.Fatalf("error %T is not flow.Diagnostics: %v", err, err)
	}
	return err.Error()
}

func wantIn(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%q does not contain %q", text, p)
		}
	}
}

func node[U any](u U) func(context.Context, S) (U, error) {
	return func(context.Context, S) (U, error) { return u, nil }
}

func TestPartialUpdatesAndReducers(t *testing.T) {
	g := graph.New[S]("partial")
	graph.AddNode(g, "a", func(_ context.Context, s S) (countOnly, error) { return countOnly{Count: s.Count + 5}, nil })
	graph.AddNode(g, "b", node(logOnly{Log: []string{"b1", "b2"}}))
	graph.AddNode(g, "c", node(struct {
		Total int
		Best  int
		Log   string
	}{Total: 10, Best: 3, Log: "c"}))
	graph.AddNode(g, "d", node(struct {
		Total int
		Best  int
	}{Total: 7, Best: 1}))
	g.SetEntry("a")
	g.AddEdge("a", "b")
	g.AddEdge("b", "c")
	g.AddEdge("c", "d")
	g.AddEdge("d", graph.END)
	c := compile(t, g, graph.Options{})
	out, err := c.Invoke(context.Background(), S{Count: 1, Log: []string{"x"}, Name: "keep", Total: 1, Best: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := S{Count: 6, Log: []string{"x", "b1", "b2", "c"}, Name: "keep", Total: 18, Best: 3}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Errorf("got %+v, want %+v", out, want)
	}
}

func TestOptionalUpdates(t *testing.T) {
	type opt struct {
		Count *int
		Name  *string
		Log   *[]string
		Total *int
		Best  *int
	}
	seven, name := 7, "set"
	g := graph.New[S]("optional")
	graph.AddNode(g, "none", node(opt{}))
	graph.AddNode(g, "some", node(opt{Count: &seven, Name: &name, Log: &[]string{"l"}, Total: &seven, Best: &seven}))
	g.SetEntry("none")
	g.AddConditionalEdges("none", func(s S) string {
		if s.Count != 1 || s.Name != "n" || len(s.Log) != 1 || s.Total != 2 || s.Best != 3 {
			return "wrong"
		}
		return "some"
	}, "some", graph.END)
	g.AddEdge("some", graph.END)
	c := compile(t, g, graph.Options{})
	out, err := c.Invoke(context.Background(), S{Count: 1, Name: "n", Log: []string{"a"}, Total: 2, Best: 3})
	var re *graph.RouteError
	if errors.As(err, &re) {
		t.Fatalf("nil pointers changed the state: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := S{Count: 7, Name: "set", Log: []string{"a", "l"}, Total: 9, Best: 7}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Errorf("got %+v, want %+v", out, want)
	}
}

func TestRouteOutsideTargets(t *testing.T) {
	g := graph.New[S]("route")
	graph.AddNode(g, "a", node(graph.Nothing{}))
	graph.AddNode(g, "b", node(graph.Nothing{}))
	g.SetEntry("a")
	g.AddConditionalEdges("a", func(S) string { return "nowhere" }, "b", graph.END)
	g.AddEdge("b", graph.END)
	c := compile(t, g, graph.Options{})
	_, err := c.Invoke(context.Background(), S{})
	var re *graph.RouteError
	if !errors.As(err, &re) || re.Node != "a" || re.Route != "nowhere" || !slices.Equal(re.Targets, []string{"b", graph.END}) {
		t.Fatalf("error %v", err)
	}
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "a" {
		t.Fatalf("error %v is no NodeError for a", err)
	}
	wantIn(t, err.Error(), "node a", `"nowhere"`)
}

func TestUnknownUpdateField(t *testing.T) {
	type bad struct {
		Count  int
		Colour string
	}
	g := graph.New[S]("unknown")
	graph.AddNode(g, "paint", node(bad{}))
	g.SetEntry("paint")
	g.AddEdge("paint", graph.END)
	wantIn(t, compileErr(t, g), "node paint", "Colour", "graph_test.go:")
}

func TestUpdateTypeMismatch(t *testing.T) {
	type bad struct {
		Count string
		Log   int
	}
	g := graph.New[S]("mismatch")
	graph.AddNode(g, "a", node(bad{}))
	g.SetEntry("a")
	g.AddEdge("a", graph.END)
	msg := compileErr(t, g)
	wantIn(t, msg, "node a", "field Count has type string", "state field Count has type int", "field Log has type int")
}

func TestParallelWriteWithoutReducer(t *testing.T) {
	g := graph.New[S]("race")
	graph.AddNode(g, "p1", node(countOnly{Count: 1}))
	graph.AddNode(g, "p2", node(countOnly{Count: 2}))
	graph.AddNode(g, "join", node(graph.Nothing{}))
	g.AddEdge(graph.START, "p1")
	g.AddEdge(graph.START, "p2")
	g.AddJoin([]string{"p1", "p2"}, "join")
	g.AddEdge("join", graph.END)
	wantIn(t, compileErr(t, g), "p1 and p2", "variable count", "reducer", `weft:"count,sum"`)
}

func TestParallelAppendOrder(t *testing.T) {
	g := graph.New[S]("fan")
	slow := func(name string, d time.Duration) func(context.Context, S) (logOnly, error) {
		return func(ctx context.Context, s S) (logOnly, error) {
			if len(s.Log) != 1 {
				return logOnly{}, fmt.Errorf("%s sees %v: a sibling's write leaked", name, s.Log)
			}
			time.Sleep(d)
			return logOnly{Log: []string{name}}, nil
		}
	}
	graph.AddNode(g, "fork", node(logOnly{Log: []string{"fork"}}))
	graph.AddNode(g, "p1", slow("p1", 60*time.Millisecond))
	graph.AddNode(g, "p2", slow("p2", 0))
	graph.AddNode(g, "p2b", node(logOnly{Log: []string{"p2b"}}))
	graph.AddNode(g, "p3", slow("p3", 10*time.Millisecond))
	graph.AddNode(g, "join", func(_ context.Context, s S) (countOnly, error) { return countOnly{Count: len(s.Log)}, nil })
	g.SetEntry("fork")
	g.AddEdge("fork", "p1")
	g.AddEdge("fork", "p2")
	g.AddEdge("fork", "p3")
	g.AddEdge("p2", "p2b")
	g.AddJoin([]string{"p1", "p2b", "p3"}, "join")
	g.AddEdge("join", graph.END)
	c := compile(t, g, graph.Options{})
	for range 3 {
		out, err := c.Invoke(context.Background(), S{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"fork", "p1", "p2", "p2b", "p3"}; !slices.Equal(out.Log, want) || out.Count != 5 {
			t.Fatalf("log %v count %d, want %v", out.Log, out.Count, want)
		}
	}
	e := c.Workflow().Edges[0]
	if e.From != "fork" || e.Join != "join" || !slices.Equal(e.To, []string{"p1", "p2", "p3"}) {
		t.Errorf("fan-out edge %+v", e)
	}
}

func TestJoinInferred(t *testing.T) {
	g := graph.New[S]("inferred")
	graph.AddNode(g, "a", node(logOnly{Log: []string{"a"}}))
	graph.AddNode(g, "b", node(logOnly{Log: []string{"b"}}))
	graph.AddNode(g, "b2", node(logOnly{Log: []string{"b2"}}))
	graph.AddNode(g, "meet", node(graph.Nothing{}))
	g.AddEdge(graph.START, "a")
	g.AddEdge(graph.START, "b")
	g.AddEdge("a", "meet")
	g.AddEdge("b", "b2")
	g.AddEdge("b2", "meet")
	g.AddEdge("meet", graph.END)
	c := compile(t, g, graph.Options{})
	res, err := c.Run(context.Background(), S{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := c.State(res)
	if !slices.Equal(out.Log, []string{"a", "b", "b2"}) {
		t.Errorf("log %v", out.Log)
	}
	if n := strings.Count(strings.Join(res.Path, " "), "meet"); n != 1 {
		t.Errorf("meet ran %d times: %v", n, res.Path)
	}
	w := c.Workflow()
	if w.Initial != graph.START || w.Edges[0].Join != "meet" {
		t.Errorf("initial %s, edge %+v", w.Initial, w.Edges[0])
	}
}

func TestNoJoin(t *testing.T) {
	g := graph.New[S]("nojoin")
	graph.AddNode(g, "a", node(graph.Nothing{}))
	graph.AddNode(g, "b", node(graph.Nothing{}))
	graph.AddNode(g, "c", node(graph.Nothing{}))
	g.SetEntry("a")
	g.AddEdge("a", "b")
	g.AddEdge("a", "c")
	g.AddConditionalEdges("b", func(S) string { return "b" }, "b")
	g.AddConditionalEdges("c", func(S) string { return "c" }, "c")
	wantIn(t, compileErr(t, g), "parallel edges from a to b, c", "never meet")
}

var errBoom = errors.New("boom")

func TestNodeError(t *testing.T) {
	g := graph.New[S]("fail")
	graph.AddNode(g, "ok", node(countOnly{Count: 3}))
	graph.AddNode(g, "bad", func(context.Context, S) (countOnly, error) { return countOnly{}, errBoom })
	g.SetEntry("ok")
	g.AddEdge("ok", "bad")
	g.AddEdge("bad", graph.END)
	c := compile(t, g, graph.Options{})
	out, err := c.Invoke(context.Background(), S{})
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "bad" || ne.Step != 2 || !errors.Is(err, errBoom) {
		t.Fatalf("error %v", err)
	}
	if out.Count != 3 {
		t.Errorf("the state at the failure: %+v", out)
	}
}

func TestPanickingNode(t *testing.T) {
	g := graph.New[S]("panic")
	graph.AddNode(g, "p", func(_ context.Context, s S) (countOnly, error) {
		var m map[string]int
		m["x"] = s.Count // assignment to a nil map
		return countOnly{}, nil
	})
	g.SetEntry("p")
	g.AddEdge("p", graph.END)
	c := compile(t, g, graph.Options{})
	_, err := c.Invoke(context.Background(), S{})
	var pe *engine.PanicError
	var ne *engine.NodeError
	if !errors.As(err, &pe) || !errors.As(err, &ne) || ne.Node != "p" {
		t.Fatalf("error %v", err)
	}
	// A panicking routing function fails the node too.
	g = graph.New[S]("panic_route")
	graph.AddNode(g, "r", node(graph.Nothing{}))
	g.SetEntry("r")
	g.AddConditionalEdges("r", func(s S) string { return s.Log[5] }, graph.END)
	c = compile(t, g, graph.Options{})
	if _, err := c.Invoke(context.Background(), S{}); !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
}

func TestCancellation(t *testing.T) {
	g := graph.New[S]("cancel")
	started := make(chan struct{})
	graph.AddNode(g, "wait", func(ctx context.Context, s S) (graph.Nothing, error) {
		close(started)
		<-ctx.Done()
		return graph.Nothing{}, ctx.Err()
	})
	g.SetEntry("wait")
	g.AddEdge("wait", graph.END)
	c := compile(t, g, graph.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := c.Invoke(ctx, S{})
	var ne *engine.NodeError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &ne) || ne.Node != "wait" {
		t.Fatalf("error %v", err)
	}
	// A context cancelled before the run starts.
	if _, err := c.Invoke(ctx, S{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
}

func TestTimeoutAndRetry(t *testing.T) {
	g := graph.New[S]("retry")
	var mu sync.Mutex
	calls := 0
	graph.AddNode(g, "flaky", func(ctx context.Context, s S) (countOnly, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n < 3 {
			return countOnly{}, errBoom
		}
		return countOnly{Count: n}, nil
	}, graph.WithRetry(flow.RetryPolicy{MaxAttempts: 3}), graph.WithDescription("fails twice"))
	graph.AddNode(g, "slow", func(ctx context.Context, s S) (graph.Nothing, error) {
		select {
		case <-ctx.Done():
			return graph.Nothing{}, ctx.Err()
		case <-time.After(5 * time.Second):
			return graph.Nothing{}, nil
		}
	}, graph.WithTimeout(20*time.Millisecond))
	g.SetEntry("flaky")
	g.AddEdge("flaky", "slow")
	g.AddEdge("slow", graph.END)
	c := compile(t, g, graph.Options{})
	if c.Workflow().Node("flaky").Description != "fails twice" {
		t.Error("description lost")
	}
	out, err := c.Invoke(context.Background(), S{})
	var te *engine.TimeoutError
	if !errors.As(err, &te) || te.Node != "slow" || out.Count != 3 {
		t.Fatalf("error %v, state %+v", err, out)
	}
}

func TestMaxSteps(t *testing.T) {
	g := graph.New[S]("forever")
	graph.AddNode(g, "spin", func(_ context.Context, s S) (countOnly, error) { return countOnly{Count: s.Count + 1}, nil })
	g.SetEntry("spin")
	g.AddConditionalEdges("spin", func(S) string { return "spin" }, "spin", graph.END)
	c := compile(t, g, graph.Options{MaxSteps: 25})
	out, err := c.Invoke(context.Background(), S{})
	var le *engine.LimitError
	if !errors.As(err, &le) || le.Limit != engine.LimitMaxSteps || out.Count != 25 {
		t.Fatalf("error %v, count %d", err, out.Count)
	}
}

func TestConditionalEntry(t *testing.T) {
	g := graph.New[S]("entry")
	graph.AddNode(g, "small", node(logOnly{Log: []string{"small"}}))
	graph.AddNode(g, "big", node(logOnly{Log: []string{"big"}}))
	g.AddConditionalEdges(graph.START, func(s S) string {
		if s.Count > 10 {
			return "big"
		}
		return "small"
	}, "small", "big")
	g.AddEdge("small", graph.END)
	g.AddEdge("big", graph.END)
	c := compile(t, g, graph.Options{})
	for in, want := range map[int]string{1: "small", 11: "big"} {
		out, err := c.Invoke(context.Background(), S{Count: in})
		if err != nil || !slices.Equal(out.Log, []string{want}) {
			t.Errorf("count %d: %v, %v", in, out.Log, err)
		}
	}
	if c.Workflow().Initial != graph.START {
		t.Errorf("initial %s", c.Workflow().Initial)
	}
}

func TestBuildMistakes(t *testing.T) {
	g := graph.New[S]("mistakes")
	graph.AddNode(g, "a", node(graph.Nothing{}))
	graph.AddNode(g, "a", node(graph.Nothing{}))
	graph.AddNode(g, graph.END, node(graph.Nothing{}))
	graph.AddNode[S, graph.Nothing](g, "nilfn", nil)
	graph.AddNode(g, "both", node(graph.Nothing{}))
	graph.AddNode(g, "two words", node(graph.Nothing{}))
	g.AddEdge("a", "nope")
	g.AddEdge("ghost", "a")
	g.AddEdge(graph.END, "a")
	g.AddEdge("a", graph.START)
	g.AddEdge("both", "a")
	g.AddConditionalEdges("both", func(S) string { return "a" }, "a")
	g.AddConditionalEdges("a", func(S) string { return "a" })
	msg := compileErr(t, g)
	wantIn(t, msg,
		"node a is added twice",
		`node name "two words" is not an identifier`,
		"__end__ is reserved",
		"node nilfn: the node function is nil",
		`unknown node "nope"`,
		`unknown node "ghost"`,
		"END cannot be the source",
		"START cannot be the target",
		"both has both edges",
		"conditional edges from a: no targets",
		"has no entry",
	)
}

func TestStateMistakes(t *testing.T) {
	type bad struct {
		Ch    chan int
		Red   int    `weft:"red,append"`
		Oops  string `weft:"oops,nosuch"`
		Named int    `weft:"bad name"`
		Dup   int    `weft:"count"`
		Count int
		Fn    func()
		input int    `weft:"input"`
		Skip  func() `weft:"-"`
	}
	g := graph.New[bad]("bad")
	graph.AddNode(g, "a", func(context.Context, bad) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.SetEntry("a")
	g.AddEdge("a", graph.END)
	msg := compileErr(t, g)
	wantIn(t, msg, "field Ch", "chan int", "reducer append needs a slice", `unknown reducer "nosuch"`, `"bad name" is not an identifier`,
		"fields Dup and Count are both named", "field Fn", "field input is unexported")
	if strings.Contains(msg, "Skip") {
		t.Errorf("skipped field reported: %s", msg)
	}
	_ = bad{}.input
}

func TestFlowNode(t *testing.T) {
	reg := engine.NewRegistry()
	reg.Register("double", engine.Func(func(_ context.Context, in map[string]flow.Value) (map[string]flow.Value, error) {
		return map[string]flow.Value{"n": flow.IntValue(in["x"].Int() * 2)}, nil
	}))
	g := graph.New[S]("mixed")
	graph.AddNode(g, "inc", func(_ context.Context, s S) (countOnly, error) { return countOnly{Count: s.Count + 1}, nil })
	g.AddFlowNode(&flow.Node{
		Name: "double", Type: flow.Function, Action: "double",
		Inputs:  []*flow.Input{{Name: "x", Expr: &flow.Ident{Name: "count"}}},
		Outputs: []*flow.Field{{Name: "n", Type: flow.TInt}},
		Set:     []*flow.Assign{{Name: "count", Expr: &flow.Ident{Name: "n"}}},
	})
	g.SetEntry("inc")
	g.AddEdge("inc", "double")
	g.AddEdge("double", graph.END)
	c := compile(t, g, graph.Options{Registry: reg})
	out, err := c.Invoke(context.Background(), S{Count: 4})
	if err != nil || out.Count != 10 {
		t.Fatalf("count %d, %v", out.Count, err)
	}
	// Without the registry, the action is unknown at Compile.
	_, err = g.Compile(graph.Options{})
	if err == nil {
		t.Fatal("compiled")
	}
	wantIn(t, err.Error(), `unknown action "double"`)
	g.AddConditionalEdges("double", func(S) string { return graph.END }, graph.END)
	_, err = g.Compile(graph.Options{Registry: reg})
	if err == nil {
		t.Fatal("compiled")
	}
	wantIn(t, err.Error(), "double is a flow node")
}

func TestConcurrentInvokes(t *testing.T) {
	g := graph.New[S]("concurrent")
	for _, name := range []string{"a", "b", "c"} {
		graph.AddNode(g, name, func(_ context.Context, s S) (struct {
			Count int
			Log   string
		}, error) {
			return struct {
				Count int
				Log   string
			}{s.Count + 1, fmt.Sprint(name, s.Count)}, nil
		})
	}
	graph.AddNode(g, "j", node(graph.Nothing{}))
	g.AddEdge(graph.START, "a")
	g.AddEdge("a", "b")
	g.AddEdge("a", "c")
	g.AddJoin([]string{"b", "c"}, "j")
	g.AddEdge("j", graph.END)
	// b and c both write count: with a replace reducer that is an error.
	if _, err := g.Compile(graph.Options{}); err == nil || !strings.Contains(err.Error(), "count") {
		t.Fatalf("error %v", err)
	}
	type T struct {
		Count int      `weft:"count,sum"`
		Log   []string `weft:"log,append"`
	}
	g2 := graph.New[T]("concurrent")
	for _, name := range []string{"a", "b", "c"} {
		graph.AddNode(g2, name, func(_ context.Context, s T) (T, error) {
			return T{Count: 1, Log: []string{fmt.Sprint(name, len(s.Log))}}, nil
		})
	}
	graph.AddNode(g2, "j", func(context.Context, T) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g2.AddEdge(graph.START, "a")
	g2.AddEdge("a", "b")
	g2.AddEdge("a", "c")
	g2.AddJoin([]string{"b", "c"}, "j")
	g2.AddEdge("j", graph.END)
	c := compile(t, g2, graph.Options{})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := c.Invoke(context.Background(), T{Count: i, Log: []string{"in"}})
			if err != nil || out.Count != i+3 || !slices.Equal(out.Log, []string{"in", "a1", "b2", "c2"}) {
				t.Errorf("run %d: %+v, %v", i, out, err)
			}
		}()
	}
	wg.Wait()
}

func TestSnakeCaseNames(t *testing.T) {
	type st struct {
		UserID        string
		HTTPStatus    int
		RetrievedDocs []string
		A1B           bool
		X             int `weft:",sum"`
	}
	g := graph.New[st]("names")
	graph.AddNode(g, "a", func(context.Context, st) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.SetEntry("a")
	g.AddEdge("a", graph.END)
	c := compile(t, g, graph.Options{})
	var names []string
	for _, v := range c.Workflow().Vars {
		names = append(names, v.Name+":"+v.Reducer.String())
	}
	if got := strings.Join(names, " "); got != "user_id:replace http_status:replace retrieved_docs:replace a1_b:replace x:sum" {
		t.Errorf("names %s", got)
	}
}

func TestRouteOutputClash(t *testing.T) {
	type st struct{ Route string }
	g := graph.New[st]("clash")
	graph.AddNode(g, "a", func(context.Context, st) (st, error) { return st{}, nil })
	g.SetEntry("a")
	g.AddConditionalEdges("a", func(st) string { return graph.END }, graph.END)
	wantIn(t, compileErr(t, g), `node a routes with a function`, `"route"`)
}

func TestUnusedJoin(t *testing.T) {
	g := graph.New[S]("unused")
	graph.AddNode(g, "a", node(graph.Nothing{}))
	graph.AddNode(g, "b", node(graph.Nothing{}))
	graph.AddNode(g, "j", node(graph.Nothing{}))
	g.SetEntry("a")
	g.AddEdge("a", "b")
	g.AddJoin([]string{"b"}, "j")
	g.AddEdge("j", graph.END)
	wantIn(t, compileErr(t, g), "join at j from b: no fan-out")
}

func TestInterruptedInvoke(t *testing.T) {
	g := graph.New[S]("ask")
	graph.AddNode(g, "ask", func(context.Context, S) (countOnly, error) {
		return countOnly{}, &engine.Interrupt{Question: flow.StringValue("sure?")}
	})
	g.SetEntry("ask")
	g.AddEdge("ask", graph.END)
	c := compile(t, g, graph.Options{})
	_, err := c.Invoke(context.Background(), S{})
	var we *graph.WaitingError
	if !errors.As(err, &we) || len(we.Pending) != 1 || we.Pending[0].Node != "ask" {
		t.Fatalf("error %v", err)
	}
	if !errors.Is(err, engine.ErrWaiting) || engine.KindOf(fmt.Errorf("invoke: %w", err)) != engine.KindWaiting {
		t.Errorf("error %v: kind %q, want %q", err, engine.KindOf(err), engine.KindWaiting)
	}
	res, err := c.Run(context.Background(), S{}, nil)
	if err != nil || res.Status != engine.Waiting {
		t.Fatalf("%v %v", res.Status, err)
	}
}

func TestIRParamsDefault(t *testing.T) {
	c := compile(t, func() *graph.Graph[S] {
		g := graph.New[S]("defaults")
		graph.AddNode(g, "a", node(graph.Nothing{}))
		g.SetEntry("a")
		g.AddEdge("a", graph.END)
		return g
	}(), graph.Options{})
	var got []string
	for _, p := range c.Workflow().Params {
		got = append(got, p.Name+"="+p.Default.String())
	}
	if s := strings.Join(got, " "); s != `init_count=0 init_log=[] init_name="" init_total=0 init_best=0` {
		t.Errorf("params %s", s)
	}
	for _, v := range c.Workflow().Vars {
		if v.Default.String() != "init_"+v.Name {
			t.Errorf("variable %s starts at %s", v.Name, v.Default)
		}
	}
}

func TestBranchEndsBeforeJoin(t *testing.T) {
	g := graph.New[S]("early")
	graph.AddNode(g, "a", node(logOnly{Log: []string{"a"}}))
	graph.AddNode(g, "b", node(logOnly{Log: []string{"b"}}))
	graph.AddNode(g, "j", node(graph.Nothing{}))
	g.AddEdge(graph.START, "a")
	g.AddEdge(graph.START, "b")
	g.AddConditionalEdges("a", func(S) string { return graph.END }, "j", graph.END)
	g.AddJoin([]string{"a", "b"}, "j")
	g.AddEdge("j", graph.END)
	wantIn(t, compileErr(t, g), "parallel branch a (from __start__) can reach END before its join j")

	// A branch that routes to the join is fine.
	g = graph.New[S]("routed")
	graph.AddNode(g, "a", node(logOnly{Log: []string{"a"}}))
	graph.AddNode(g, "b", node(logOnly{Log: []string{"b"}}))
	graph.AddNode(g, "j", node(graph.Nothing{}))
	g.AddEdge(graph.START, "a")
	g.AddEdge(graph.START, "b")
	g.AddConditionalEdges("a", func(S) string { return "j" }, "j")
	g.AddJoin([]string{"a", "b"}, "j")
	g.AddEdge("j", graph.END)
	c := compile(t, g, graph.Options{})
	out, err := c.Invoke(context.Background(), S{})
	if err != nil || !slices.Equal(out.Log, []string{"a", "b"}) {
		t.Fatalf("%v %v", out.Log, err)
	}
}

func TestNodeStateIsACopy(t *testing.T) {
	g := graph.New[S]("copy")
	graph.AddNode(g, "vandal", func(_ context.Context, s S) (graph.Nothing, error) {
		s.Log[0] = "changed"
		s.Count = 99
		return graph.Nothing{}, nil
	})
	graph.AddNode(g, "check", func(_ context.Context, s S) (graph.Nothing, error) {
		if s.Log[0] != "orig" || s.Count != 1 {
			return graph.Nothing{}, fmt.Errorf("the state changed: %+v", s)
		}
		return graph.Nothing{}, nil
	})
	g.SetEntry("vandal")
	g.AddEdge("vandal", "check")
	g.AddEdge("check", graph.END)
	c := compile(t, g, graph.Options{})
	in := S{Count: 1, Log: []string{"orig"}}
	if _, err := c.Invoke(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if in.Log[0] != "orig" {
		t.Error("the caller's slice changed")
	}
}
