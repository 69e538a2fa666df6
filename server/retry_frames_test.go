package server_test

import (
	"context"
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
	code, body := f.do("POST", "/threads/f/runs/stream", `{"assistant_id":"Flaky","input":{"input_text":"x"},"stream_mode":["tasks"]}`)
	if code != 200 {
		t.Fatalf("stream: %d %s", code, body)
	}
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
	if calls.Load() != 2 {
		t.Fatalf("%d calls", calls.Load())
	}
}
