package engine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

// countWF counts n up to 3 with the action inc, one step at a time.
const countWF = `
workflow Count {
  variables {
    n: Int = 0
  }
  nodes {
    node inc {
      type: FUNCTION
      action: "inc"
      inputs {
        n: n
      }
      outputs {
        next: Int
      }
    }
    node done {
      type: END
    }
  }
  edges {
    edge { from: inc; to: inc; condition: inc.next < 3; update: { n = inc.next } }
    edge { from: inc; to: done; update: { n = inc.next } }
  }
  initial: inc
  finals: [ done ]
}
`

// planOf compiles a workflow written in the .wf language.
func planOf(name, src string) *flow.Plan {
	mod, ds := lang.LoadSource(name, []byte(src), nil)
	if ds.HasErrors() {
		log.Fatal(ds)
	}
	plan, ds := flow.Compile(mod.Main(), nil)
	if ds.HasErrors() {
		log.Fatal(ds)
	}
	return plan
}

// A driver outside the package runs a Machine with Ready and Advance: it
// persists each step's delta (here folded into a State, as a store would
// keep it), emits the events, carries out the tasks and acknowledges the
// Ready, until the run no longer runs.
func ExampleMachine_Ready() {
	plan := planOf("count.wf", countWF)
	m, err := engine.NewMachine(plan, nil, true)
	if err != nil {
		log.Fatal(err)
	}
	kept := &engine.State{Workflow: plan.Workflow.Name} // what a store holds
	for {
		rd := m.Ready()
		// 1. Persist the step, before anything it started takes effect.
		if err := kept.Fold(rd.Delta.Cells, rd.Delta.Control); err != nil {
			m.Fail(err) // the driver cannot keep the run: it ends Failed
		}
		// 2. Emit the events.
		for _, e := range rd.Events {
			fmt.Printf("%d %s\n", e.Seq, e)
		}
		// 3. Carry out the tasks (concurrently if you like: Complete
		// calls must be serialised with the machine's other calls).
		for _, t := range rd.Tasks {
			out := []flow.Value{flow.IntValue(t.Input("n").Int() + 1)}
			if err := m.Complete(t.ID, out, nil); err != nil {
				log.Fatal(err)
			}
		}
		// 4. Acknowledge: the next Ready lists what changed since.
		m.Advance(rd)
		if rd.Status != engine.Running {
			break
		}
	}
	fmt.Println(m.Status(), kept.Control.Status, kept.Control.Step, len(kept.Control.Path))
	// Output:
	// 1 run started
	// 2 step 1: inc {n: 0, input_text: ""}
	// 3 step 1: inc -> {next: 1}
	// 4 inc -> inc [inc.next < 3] set {n: 1}
	// 5 step 2: inc {n: 1, input_text: ""}
	// 6 step 2: inc -> {next: 2}
	// 7 inc -> inc [inc.next < 3] set {n: 2}
	// 8 step 3: inc {n: 2, input_text: ""}
	// 9 step 3: inc -> {next: 3}
	// 10 inc -> done set {n: 3}
	// 11 step 4: done {}
	// 12 step 4: done -> {}
	// 13 finished at done: {}
	// completed completed 4 4
}

// A Runner carries out a plan's tasks with the actions of its Registry and
// streams the run's events to an Observer.
func ExampleRunner_Run() {
	reg := engine.NewRegistry()
	if err := reg.Register("inc", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		return c.SetOutput("next", flow.IntValue(c.Input("n").Int()+1))
	})); err != nil {
		log.Fatal(err)
	}
	r := &engine.Runner{Registry: reg}
	steps := 0
	obs := engine.ObserverFunc(func(e engine.Event) {
		if e.Type == engine.NodeFinished {
			steps++
		}
	})
	res, err := r.Run(context.Background(), planOf("count.wf", countWF), nil, obs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Final, res.Path, res.Vars[0].Name, res.Vars[0].Value, steps)
	// Output:
	// completed done [inc inc inc done] n 3 4
}
