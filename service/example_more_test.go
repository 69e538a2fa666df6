package service_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"testing/fstest"
	"time"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/replay"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// Open compiles a workflow from any source with weft's standard options.
// The same module gives the same digest from a file, an fs.FS or its
// canonical source (Stored), which is what a store keeps.
func ExampleOpen() {
	ctx := context.Background()
	fsys := fstest.MapFS{
		"flows/main.wf":      {Data: []byte("import \"lib/hello.wf\"\n\nworkflow Main {\n  nodes {\n    node sub {\n      type: WORKFLOW\n      workflow: Hello\n      outputs { text: String }\n    }\n  }\n  initial: sub\n  finals: [ sub ]\n}\n")},
		"flows/lib/hello.wf": {Data: []byte("workflow Hello {\n  nodes {\n    node say {\n      type: FUNCTION\n      action: \"pass\"\n      inputs { greeting: \"hello\" }\n      outputs { text: String }\n    }\n  }\n  initial: say\n  finals: [ say ]\n}\n")},
	}
	wf, err := service.Open(ctx, service.FS(fsys, "flows/main.wf"), nil)
	if err != nil {
		var de *service.DiagnosticsError
		if errors.As(err, &de) {
			fmt.Println(de.Diagnostics) // every finding, with file and line
		}
		log.Fatal(err)
	}
	again, err := service.Open(ctx, service.Stored(wf.Source), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(wf.Name, wf.Format, strings.HasPrefix(wf.Digest, "sha256:"), again.Digest == wf.Digest)
	// Output:
	// Main wf true true
}

// counter is the state of the Go graph below.
type counter struct {
	Count int      `weft:"count"`
	Log   []string `weft:"log,append"`
}

// step is the update of its node.
type step struct {
	Count int
	Log   string // one element appended to counter.Log
}

// A workflow built in Go with package graph runs in a Service's threads
// like a .wf workflow: the Service gets the graph's workflow by name
// (Options.Workflows, so that any Service with it resumes the thread)
// and its node functions (Options.Actions); Compiled.Input turns a state
// into a run's input, Compiled.State a result back into a state.
func Example_graph() {
	ctx := context.Background()
	g := graph.New[counter]("counter")
	graph.AddNode(g, "inc", func(_ context.Context, s counter) (step, error) {
		return step{Count: s.Count + 1, Log: fmt.Sprint("inc ", s.Count+1)}, nil
	})
	g.SetEntry("inc")
	g.AddConditionalEdges("inc", func(s counter) string {
		if s.Count < 3 {
			return "inc"
		}
		return graph.END
	}, "inc", graph.END)
	c, err := g.Compile(graph.Options{MaxSteps: 100})
	if err != nil {
		log.Fatal(err)
	}

	st, cleanup := tempStore(ctx)
	defer cleanup()
	svc, err := service.New(service.Options{
		Store:     st,
		Actions:   c.Actions(),
		Workflows: map[string]*flow.Workflow{"counter": c.Workflow()},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Go("counter", c.Workflow()))
	if err != nil {
		log.Fatal(err)
	}
	input, update, err := c.Input(counter{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: "count-1", Input: input, Update: update})
	if err != nil {
		log.Fatal(err)
	}
	out, err := c.State(&engine.Result{Vars: res.Vars})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(wf.Digest, res.Status, out.Count, out.Log)
	// Output:
	// go:counter completed 3 [inc 1 inc 2 inc 3]
}

// Cancel stops a run this process drives: the run ends "cancelled", the
// thread records it so, and its error wraps ErrCancelled (kind
// cancelled).
func ExampleService_Cancel() {
	ctx := context.Background()
	st, cleanup := tempStore(ctx)
	defer cleanup()
	started := make(chan struct{})
	acts := engine.NewRegistry()
	if err := acts.Register("wait", engine.Func(func(ctx context.Context, _ map[string]flow.Value) (map[string]flow.Value, error) {
		close(started)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})); err != nil {
		log.Fatal(err)
	}
	svc, err := service.New(service.Options{Store: st, Actions: acts})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Bytes("wait.wf", []byte("workflow Wait {\n  nodes {\n    node w {\n      type: FUNCTION\n      action: \"wait\"\n      outputs { x: String }\n    }\n  }\n  initial: w\n  finals: [ w ]\n}\n")))
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		<-started
		if err := svc.Cancel(ctx, "long"); err != nil {
			log.Print(err)
		}
	}()
	res, err := svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: "long"})
	fmt.Println(res.Status, errors.Is(err, service.ErrCancelled), engine.KindOf(err))
	threads, _ := svc.Threads(ctx, store.ListOptions{Status: []store.Status{store.Cancelled}})
	fmt.Println(len(threads), threads[0].ID, threads[0].Status)
	// Output:
	// cancelled true cancelled
	// 1 long cancelled
}

// httpStatus maps an error of a call to the status a server answers, by
// its kind (docs/ARCHITECTURE.md, "Error kinds").
func httpStatus(err error) int {
	switch engine.KindOf(err) {
	case engine.KindWaiting, engine.KindEnded, engine.KindConflict:
		return http.StatusConflict
	case engine.KindNotFound:
		return http.StatusNotFound
	case engine.KindMismatch:
		return http.StatusUnprocessableEntity
	case engine.KindInvalidInput:
		return http.StatusBadRequest
	case engine.KindCancelled:
		return 499 // client closed request
	case engine.KindLimit:
		return http.StatusRequestTimeout
	}
	return http.StatusInternalServerError
}

// Errors carry a machine-readable kind that engine.KindOf finds through
// any wrapping: a server maps it to an HTTP status without reading text.
func Example_errorKinds() {
	ctx := context.Background()
	st, cleanup := tempStore(ctx)
	defer cleanup()
	svc, err := service.New(service.Options{Store: st, Actions: greetActions()})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Bytes("greet.wf", []byte(greetWF)))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: "k"}); err != nil {
		log.Fatal(err)
	}
	_, err = svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: "k"}) // it waits for an answer
	fmt.Println(engine.KindOf(err), httpStatus(err))
	_, err = svc.Resume(ctx, service.ResumeRequest{Thread: "nobody"})
	fmt.Println(engine.KindOf(err), httpStatus(err), errors.Is(err, store.ErrNotFound))
	if _, err := svc.Resume(ctx, service.ResumeRequest{Thread: "k", Answers: []service.Answer{{Text: "Ada"}}}); err != nil {
		log.Fatal(err)
	}
	_, err = svc.Resume(ctx, service.ResumeRequest{Thread: "k"}) // the run has ended
	var te *engine.ThreadError
	fmt.Println(engine.KindOf(err), httpStatus(err), errors.As(err, &te))
	// Output:
	// waiting 409
	// not_found 404 true
	// ended 409 true
}

// The options of a Service an embedding program typically sets: the
// component registry and where secrets come from, Go actions, a lease,
// and wrappers that see every action and model of every run. (This
// example is compiled, not run.)
func ExampleNew() {
	var st store.Store // sqlite.Open, postgres.Open, memory.New
	components, err := builtin.New()
	if err != nil {
		log.Fatal(err)
	}
	rec, err := os.Create("exchanges.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer rec.Close()
	svc, err := service.New(service.Options{
		Store:      st,
		Components: components,
		Env: &component.Env{
			Getenv: os.Getenv,                                        // secrets by reference: {"env": "OPENAI_API_KEY"}
			Warn:   func(msg string) { log.Print("warning: ", msg) }, // a database role that may write, ...
		},
		Actions:  greetActions(),
		LeaseTTL: time.Minute,
		WrapModel: func(spec string, m llm.Model) llm.Model {
			return replay.NewRecorder(m, rec) // for --llm replay:exchanges.jsonl
		},
		WrapAction: func(name string, a engine.Action) engine.Action {
			return engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
				start := time.Now()
				err := a.Run(ctx, c)
				log.Printf("action %s: %v (%s)", name, err, time.Since(start))
				return err
			})
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
}

// Check finds, before a run, every problem of the components against the
// workflow: here an action nothing provides and a tool no component
// serves, each with its node and position.
func ExampleService_Check() {
	ctx := context.Background()
	reg, err := builtin.New()
	if err != nil {
		log.Fatal(err)
	}
	svc, err := service.New(service.Options{Store: memory.New(), Components: reg})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Bytes("orders.wf", []byte(`workflow Orders {
  nodes {
    node find {
      type: FUNCTION
      action: "lookup_order"
      outputs { order: String }
    }
    node search {
      type: TOOL
      action: "es_search"
      inputs { index: "orders" }
      outputs { hits: String }
    }
  }
  edges {
    edge { from: find; to: search }
  }
  initial: find
  finals: [ search ]
}
`)))
	if err != nil {
		log.Fatal(err)
	}
	err = svc.Check(ctx, service.StartRequest{Workflow: wf, Components: []component.Spec{{ID: "tool.http"}}})
	var ce *service.CheckError
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Printf("%s %s at %s: %s (%s)\n", p.What, p.Name, p.Pos, p.Node, p.Kind)
		}
	}
	// Output:
	// action lookup_order at orders.wf:3:5: find (invalid_input)
	// tool es_search at orders.wf:8:5: search (invalid_input)
}
