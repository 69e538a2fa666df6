package engine_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/store"
)

const fallbackWF = `
workflow Fb {
  nodes {
    node classify {
      type: FUNCTION
      action: "flaky"
      retry { max: 3; backoff: 1ms }
      fallback: { intent: "not_clear" }
      outputs {
        intent: Enum["qa","not_clear"]
        score: Float
      }
    }
    node note {
      type: FUNCTION
      action: "note"
      map: ["a", "b"]
      parallelism: 1
      fallback: { }
      outputs { text: String }
    }
    node ask {
      type: HUMAN
      question: "Which year?"
      outputs { year: String }
    }
    node done { type: END }
  }
  edges {
    edge { from: classify; to: note }
    edge { from: note; to: ask }
    edge { from: ask; to: done }
  }
  initial: classify
  finals: [ done ]
}
`

func fallbackRunner(t testing.TB, calls *int) *engine.Runner {
	return &engine.Runner{Registry: registry(t, map[string]engine.ActionFunc{
		"flaky": func(_ context.Context, c *engine.Call) error {
			*calls++
			return errors.New("ollama: HTTP 500: model runner has unexpectedly stopped")
		},
		"note": func(_ context.Context, c *engine.Call) error {
			if c.Item == 2 {
				return errors.New("second element failed")
			}
			c.Notice(engine.NoticeTruncated, "the reply was cut")
			return c.SetOutput("text", flow.StringValue("first"))
		},
	}), Sleep: func(context.Context, time.Duration) error { return nil }}
}

// A node whose workflow asks for a fallback falls back only after its
// retries, with the fallback's values and the typed zero of the rest; each
// map element on its own. Every fallback and warning is a notice of the
// run, with its step, kept in the thread: a resume in a new process
// still has them, and a new run in the thread starts without.
func TestNoticesOfFallbacksSurviveAResume(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ctx := context.Background()
		plan := load(t, "fb.wf", fallbackWF)
		calls := 0
		var events []engine.Event
		th := &engine.Threads{Runner: fallbackRunner(t, &calls), Store: open()}
		res, err := th.Run(ctx, plan, "t", nil, engine.ObserverFunc(func(e engine.Event) { events = append(events, e) }), nil)
		if err != nil || res.Status != engine.Waiting {
			t.Fatalf("run: %v, %v", res.Status, err)
		}
		if calls != 3 {
			t.Errorf("flaky ran %d times, want 3 (the retries come first)", calls)
		}
		want := []string{
			`fallback node classify fell back to {intent: "not_clear", score: 0.0}: after 3 attempts: ollama: HTTP 500: model runner has unexpectedly stopped (step 1)`,
			`truncated node note[1]: the reply was cut (step 2)`,
			`fallback node note[2] fell back to {text: ""}: second element failed (step 2)`,
		}
		check := func(what string, ns []engine.Notice) {
			t.Helper()
			var got []string
			for _, n := range ns {
				got = append(got, string(n.Kind)+" "+n.String()+" (step "+itoa(n.Step)+")")
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		check("notices", res.Notices)
		if fb := res.Fallbacks(); len(fb) != 2 || fb[0].Node != "classify" || fb[1].Item != 2 {
			t.Errorf("fallbacks %+v", fb)
		}
		kinds := 0
		for _, e := range events {
			if e.Type == engine.ActionEvent && (e.Kind == "fallback" || e.Kind == "truncated") {
				kinds++
			}
		}
		if kinds != 3 {
			t.Errorf("%d notice events, want 3", kinds)
		}
		if res.Output("intent").IsNull() && res.Status == engine.Completed {
			t.Error("no output")
		}

		th2 := &engine.Threads{Runner: fallbackRunner(t, &calls), Store: open()}
		ts, err := th2.Load(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		check("the thread's notices", ts.Notices())
		res, err = th2.Resume(ctx, plan, "t", []engine.Answer{{Outputs: map[string]flow.Value{"year": flow.StringValue("2019")}}}, nil)
		if err != nil || res.Status != engine.Completed {
			t.Fatalf("resume: %v, %v", res.Status, err)
		}
		check("notices after the resume", res.Notices)
		if v, _ := th2.Load(ctx, "t"); v == nil || len(v.Notices()) != 3 {
			t.Errorf("the thread's notices after the resume: %+v", v)
		}

		// A new run starts with none of the last run's.
		res, err = th2.Run(ctx, plan, "t", nil, nil, nil)
		if err != nil || res.Status != engine.Waiting || len(res.Notices) != 3 {
			t.Fatalf("second run: %v, %v, %+v", res.Status, err, res.Notices)
		}
		if ts, _ := th2.Load(ctx, "t"); len(ts.Notices()) != 3 || ts.RunNumber != 2 {
			t.Errorf("second run's notices in the thread: %+v", ts.Notices())
		}
	})
}

// Without a fallback, nothing changes: the node fails after its retries,
// and a run with no notices has a nil list.
func TestNoFallbackNoNotices(t *testing.T) {
	plan := load(t, "retry.wf", retryWF)
	r := &engine.Runner{Registry: registry(t, map[string]engine.ActionFunc{
		"flaky": func(context.Context, *engine.Call) error { return errors.New("down") },
	}), Sleep: func(context.Context, time.Duration) error { return nil }}
	res, err := r.Run(context.Background(), plan, nil, nil)
	var ne *engine.NodeError
	if !errors.As(err, &ne) || ne.Node != "call" || res.Notices != nil {
		t.Errorf("err %v, notices %+v", err, res.Notices)
	}
	r = &engine.Runner{Registry: registry(t, map[string]engine.ActionFunc{
		"flaky": func(_ context.Context, c *engine.Call) error { return c.SetOutput("ok", flow.BoolValue(true)) },
	})}
	if res, err := r.Run(context.Background(), plan, nil, nil); err != nil || res.Notices != nil {
		t.Errorf("err %v, notices %#v", err, res.Notices)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
