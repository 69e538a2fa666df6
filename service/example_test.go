package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/sqlite"
)

// summaryWF asks a model for a one-line summary of its input.
const summaryWF = `action summarize {
  type: LLM
  prompt: "Summarise in one line: {{input_text}}"
}

workflow Summary {
  nodes {
    node summary {
      type: LLM
      action: "summarize"
      outputs {
        text: String
      }
    }
  }
  initial: summary
  finals: [ summary ]
}
`

// greetWF asks a person for their name and greets them with the
// variable greeting, through the Go action greet.
const greetWF = `workflow Greet {
  variables {
    greeting: String = "Hello"
  }
  nodes {
    node ask {
      type: HUMAN
      question: "What is your name?"
      outputs {
        name: String
      }
    }
    node greet {
      type: FUNCTION
      action: "greet"
      inputs {
        greeting: greeting
        name: ask.name
      }
      outputs {
        text: String
      }
    }
  }
  edges {
    edge { from: ask; to: greet }
  }
  initial: ask
  finals: [ greet ]
}
`

// greetActions are the Go functions greetWF calls.
func greetActions() *engine.Registry {
	reg := engine.NewRegistry()
	err := reg.Register("greet", engine.Func(func(_ context.Context, in map[string]flow.Value) (map[string]flow.Value, error) {
		return map[string]flow.Value{"text": flow.StringValue(in["greeting"].Str() + ", " + in["name"].Str() + "!")}, nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	return reg
}

// tempStore opens a SQLite thread store in a new temporary directory;
// cleanup closes it and removes the directory.
func tempStore(ctx context.Context) (st store.Store, cleanup func()) {
	dir, err := os.MkdirTemp("", "weft-example-")
	if err != nil {
		log.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "threads.db"))
	if err != nil {
		log.Fatal(err)
	}
	return db, func() {
		db.Close()
		os.RemoveAll(dir)
	}
}

// Run a .wf workflow in a thread with a model of a real provider module,
// llm.ollama, talking Ollama's wire protocol (here to a fake Ollama
// server). The component spec is data the thread keeps: it names the
// module and its config, never a secret's value.
func Example() {
	ctx := context.Background()
	ollama := llmtest.NewOllamaServer(llmtest.Text("Acme's revenue grew 12% in 2023."))
	defer ollama.Close()

	st, cleanup := tempStore(ctx)
	defer cleanup()
	components, err := builtin.New() // weft's built-in modules: llm.*, embed.*, tool.*, ...
	if err != nil {
		log.Fatal(err)
	}
	svc, err := service.New(service.Options{Store: st, Components: components})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()

	wf, err := svc.Open(ctx, service.Bytes("summary.wf", []byte(summaryWF)))
	if err != nil {
		log.Fatal(err)
	}
	// The spec of what `weft run --llm ollama:llama3.1` opens, with the
	// server's URL from OLLAMA_HOST (here the fake's) and the CLI's retry
	// policy. component.SpecOf builds one from a module's config in Go.
	getenv := envMap{"OLLAMA_HOST": ollama.URL}.get
	model, err := builtin.ModelSpec("ollama:llama3.1", getenv, &builtin.Policy{
		Timeout: component.Duration(time.Minute), MaxAttempts: 3, Jitter: 0.2, Concurrency: 8,
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := svc.Start(ctx, service.StartRequest{
		Workflow:   wf,
		Thread:     "report-1",
		Components: []component.Spec{model},
		Input:      map[string]flow.Value{flow.InputText: flow.StringValue("Acme's annual report for 2023 ...")},
	})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(res.Outputs)
	fmt.Println(res.Thread, res.Status, res.Final)
	fmt.Println(string(out))
	fmt.Println("model asked for:", ollama.Requests()[0].Request.Model)

	// The thread keeps the run spec: the workflow's digest and the
	// components, which any process sharing the store rebuilds.
	thr, err := st.Thread(ctx, "report-1")
	if err != nil {
		log.Fatal(err)
	}
	var spec service.Spec
	if err := json.Unmarshal(thr.Spec, &spec); err != nil {
		log.Fatal(err)
	}
	fmt.Println(spec.Workflow == wf.Digest, strings.ReplaceAll(string(spec.Components[0].Config), ollama.URL, "http://OLLAMA"))
	// Output:
	// report-1 completed summary
	// {"text":"Acme's revenue grew 12% in 2023."}
	// model asked for: llama3.1
	// true {"base_url":"http://OLLAMA","api_key":{"env":"OLLAMA_API_KEY"},"model":"llama3.1","policy":{"timeout":"1m0s","max_attempts":3,"jitter":0.2,"concurrency":8}}
}

// A run that reaches a HUMAN node waits: Start returns its questions, and
// Resume answers them, as text a person types (parsed against the node's
// outputs) or as typed Values.
func ExampleService_Resume() {
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

	res, err := svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: "greet-1"})
	if err != nil {
		log.Fatal(err)
	}
	q := res.Waiting[0]
	fmt.Println(res.Status, q.Node, q.Question.Str())

	res, err = svc.Resume(ctx, service.ResumeRequest{
		Thread:  "greet-1",
		Answers: []service.Answer{{ID: q.ID, Text: "Ada"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Outputs.Get("text").Str())
	// Output:
	// waiting ask What is your name?
	// completed Hello, Ada!
}

// Subscribe streams a thread's events from a cursor. The zero Cursor
// starts at the thread's first event (events are kept per thread, so a
// subscriber that comes after the run gets them too); an event's cursor,
// "RUN.SEQ", is where a client that reconnects takes up again.
func ExampleService_Subscribe() {
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
	if _, err := svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: "greet-2"}); err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Resume(ctx, service.ResumeRequest{Thread: "greet-2", Answers: []service.Answer{{Text: "Grace"}}}); err != nil {
		log.Fatal(err)
	}

	// The subscription goes on with live events until ctx ends; this one
	// stops at the end of the run.
	var last service.Cursor
	for e, err := range svc.Subscribe(ctx, "greet-2", &service.Cursor{}) {
		if err != nil {
			log.Fatal(err) // ErrCursorExpired, ErrSlowSubscriber
		}
		last = service.CursorOf(e)
		switch e.Type {
		case engine.RunStarted, engine.RunWaiting, engine.NodeFinished, engine.RunFinished:
			fmt.Println(last, e.Type, orDash(e.Node))
		}
		if e.Type == engine.RunFinished {
			break
		}
	}
	c, err := service.ParseCursor(last.String())
	fmt.Println("reconnect after", c, err)
	// Output:
	// 1.1 run_started -
	// 1.3 run_waiting ask
	// 1.4 node_finished ask
	// 1.7 node_finished greet
	// 1.8 run_finished greet
	// reconnect after 1.8 <nil>
}

// Fork makes a new thread from a record of another's history, with
// variables edited: here, the greeting, right where the run started
// waiting for the name. The new thread then runs on from there; the
// original is unchanged.
func ExampleService_Fork() {
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
	if _, err := svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: "en"}); err != nil {
		log.Fatal(err)
	}
	res, err := svc.Resume(ctx, service.ResumeRequest{Thread: "en", Answers: []service.Answer{{Text: "Ada"}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("en:", res.Outputs.Get("text").Str())

	hist, err := svc.History(ctx, "en", 1)
	if err != nil {
		log.Fatal(err)
	}
	var at int64
	for _, h := range hist {
		fmt.Println(h.Seq, h.Status, orDash(h.Node))
		if h.Status == engine.Waiting && at == 0 {
			at = h.Seq // the first record where the run waits for the name
		}
	}
	fr, err := svc.Fork(ctx, service.ForkRequest{Thread: "en", At: at, To: "fr", Set: map[string]flow.Value{"greeting": flow.StringValue("Bonjour")}})
	if err != nil {
		log.Fatal(err)
	}
	res, err = svc.Resume(ctx, service.ResumeRequest{Thread: fr.Thread, Answers: []service.Answer{{Text: "Ada"}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fr:", res.Outputs.Get("text").Str())
	// Output:
	// en: Hello, Ada!
	// 1 running -
	// 2 waiting ask
	// 3 running ask
	// 4 completed greet
	// fr: Bonjour, Ada!
}

// A worker resumes a thread started by another process: the two share the
// store and nothing else. The workflow comes from the canonical source the
// store keeps, the model from the run spec kept with the thread, and the
// API key from the worker's own environment (the spec holds only the
// variable's name).
func ExampleService_Resume_worker() {
	ctx := context.Background()
	ollama := llmtest.NewOllamaServer(llmtest.Text("Hello, Ada. Your order has shipped."))
	defer ollama.Close()
	st, cleanup := tempStore(ctx)
	defer cleanup()
	components, err := builtin.New()
	if err != nil {
		log.Fatal(err)
	}
	// Each process has its own environment; here, a map.
	env := &component.Env{Getenv: envMap{"OLLAMA_API_KEY": "key-0123"}.get}

	// The process that starts the thread.
	front, err := service.New(service.Options{Store: st, Components: components, Env: env})
	if err != nil {
		log.Fatal(err)
	}
	defer front.Close()
	wf, err := front.Open(ctx, service.Bytes("notify.wf", []byte(notifyWF)))
	if err != nil {
		log.Fatal(err)
	}
	model, err := component.SpecOf("llm.ollama", &builtin.Ollama{
		BaseURL: ollama.URL,
		Model:   "llama3.1",
		APIKey:  component.Secret{Env: "OLLAMA_API_KEY"},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := front.Start(ctx, service.StartRequest{Workflow: wf, Thread: "order-7", Components: []component.Spec{model}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("front:", res.Status, res.Waiting[0].Question.Str())

	// The worker: another Service on the same store.
	worker, err := service.New(service.Options{Store: st, Components: components, Env: env})
	if err != nil {
		log.Fatal(err)
	}
	defer worker.Close()
	res, err = worker.Resume(ctx, service.ResumeRequest{Thread: "order-7", Answers: []service.Answer{{Text: "Ada"}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("worker:", res.Status, res.Outputs.Get("text").Str())
	fmt.Println("sent key:", ollama.Requests()[0].Header.Get("Authorization"))

	threads, err := worker.Threads(ctx, store.ListOptions{Status: []store.Status{store.Completed}})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range threads {
		fmt.Println(t.ID, t.Workflow, t.Runs, t.Status)
	}
	removed, err := worker.Prune(ctx, service.PrunePolicy{Thread: "order-7", KeepRuns: 10})
	fmt.Println("pruned records:", removed.RecordsRemoved, err)
	// Output:
	// front: waiting Who is the customer?
	// worker: completed Hello, Ada. Your order has shipped.
	// sent key: Bearer key-0123
	// order-7 Notify 1 completed
	// pruned records: 0 <nil>
}

// notifyWF asks for a customer's name and has a model write to them.
const notifyWF = `action write {
  type: LLM
  prompt: "Tell {{name}} that the order has shipped."
}

workflow Notify {
  nodes {
    node ask {
      type: HUMAN
      question: "Who is the customer?"
      outputs {
        name: String
      }
    }
    node note {
      type: LLM
      action: "write"
      inputs {
        name: ask.name
      }
      outputs {
        text: String
      }
    }
  }
  edges {
    edge { from: ask; to: note }
  }
  initial: ask
  finals: [ note ]
}
`

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// envMap is an environment as a map.
type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }
