package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
)

// TestTasksFramesSayAttemptsAndTimes: in the tasks mode, a task's start
// and result carry the engine's time of each ("time", weft's key beside
// LangGraph's), and the result of a task retried says how many attempts
// it took ("attempts"); one not retried says nothing of attempts.
func TestTasksFramesSayAttemptsAndTimes(t *testing.T) {
	body, calls := streamFlaky(t, `["tasks"]`)
	var start, result string
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "data: ") || !strings.Contains(line, `"name":"try"`) {
			continue
		}
		if strings.Contains(line, `"triggers"`) {
			start = line
		} else {
			result = line
		}
	}
	if !strings.Contains(start, `"time":"`) || strings.Contains(start, `"attempts"`) {
		t.Fatalf("task start: %s", start)
	}
	if !strings.Contains(result, `"attempts":2`) || !strings.Contains(result, `"time":"`) || !strings.Contains(result, `"result":{"out":"ok x"}`) {
		t.Fatalf("task result: %s", result)
	}
	if calls != 2 {
		t.Fatalf("%d calls", calls)
	}
}

// TestTasksFramesSayRetries: between a task's failed attempt and the
// next, the tasks and debug modes send the task's start again (same id,
// name and input) with the attempt that follows and the failed one's
// error, so that a reader sees the retry as it happens, not only in the
// result's "attempts".
func TestTasksFramesSayRetries(t *testing.T) {
	body, _ := streamFlaky(t, `["tasks","debug"]`)
	type task struct {
		ID      string         `json:"id"`
		Name    string         `json:"name"`
		Input   map[string]any `json:"input"`
		Result  map[string]any `json:"result"`
		Attempt int            `json:"attempt"`
		Retry   *struct {
			Attempt int     `json:"attempt"`
			Error   string  `json:"error"`
			DelayMs float64 `json:"delay_ms"`
		} `json:"retry"`
		Attempts int `json:"attempts"`
	}
	var tasks []task     // the tasks mode's frames, in order
	var debug []string   // the debug mode's frame types
	var debugRetry *task // the debug mode's retry frame's payload
	event := ""
	for _, line := range strings.Split(body, "\n") {
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		switch event {
		case "tasks":
			var tk task
			if err := json.Unmarshal([]byte(data), &tk); err != nil {
				t.Fatalf("tasks frame %s: %v", data, err)
			}
			tasks = append(tasks, tk)
		case "debug":
			var d struct {
				Type    string `json:"type"`
				Payload task   `json:"payload"`
			}
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				t.Fatalf("debug frame %s: %v", data, err)
			}
			if d.Type == "task" || d.Type == "task_result" {
				debug = append(debug, d.Type)
			}
			if d.Payload.Retry != nil {
				debugRetry = &d.Payload
			}
		}
	}
	if len(tasks) != 3 {
		t.Fatalf("tasks frames: %+v, want start, retry, result\n%s", tasks, body)
	}
	start, retry, result := tasks[0], tasks[1], tasks[2]
	if start.Retry != nil || start.Attempt != 0 || start.Input["text"] != "x" {
		t.Fatalf("start: %+v", start)
	}
	if retry.ID != start.ID || retry.Name != "try" || retry.Input["text"] != "x" || retry.Attempt != 2 ||
		retry.Retry == nil || retry.Retry.Attempt != 1 || retry.Retry.Error != "the first attempt fails" || retry.Retry.DelayMs <= 0 {
		t.Fatalf("retry frame: %+v (retry %+v)", retry, retry.Retry)
	}
	if result.ID != start.ID || result.Attempts != 2 || result.Result["out"] != "ok x" {
		t.Fatalf("result: %+v", result)
	}
	if strings.Join(debug, ",") != "task,task,task_result" || debugRetry == nil || debugRetry.Attempt != 2 || debugRetry.Retry.Error != "the first attempt fails" {
		t.Fatalf("debug frames: %v, retry %+v", debug, debugRetry)
	}
}

// streamFlaky streams, in modes (a JSON list), a run of testdata/flaky.wf
// whose action fails its first attempt and succeeds the next, and
// returns the stream's body and how many times the action was called.
func streamFlaky(t *testing.T, modes string) (string, int32) {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	var calls atomic.Int32
	reg := engine.NewRegistry()
	reg.Replace("flaky", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		if calls.Add(1) == 1 {
			return errors.New("the first attempt fails")
		}
		c.Outputs[0] = flow.StringValue("ok " + c.Inputs[0].Text())
		return nil
	}))
	svc, err := service.New(service.Options{Store: st, Actions: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(ctx, service.Source{Name: "testdata/flaky.wf"})
	if err != nil {
		t.Fatal(err)
	}
	f := serve(t, svc, st, wf, nil)
	f.do("POST", "/threads", `{"thread_id":"f"}`)
	code, body := f.do("POST", "/threads/f/runs/stream", `{"assistant_id":"Flaky","input":{"input_text":"x"},"stream_mode":`+modes+`}`)
	if code != 200 {
		t.Fatalf("stream: %d %s", code, body)
	}
	return body, calls.Load()
}
