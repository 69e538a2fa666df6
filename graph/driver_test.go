package graph_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/sqlite"
)

// A compiled graph runs in a service.Service's threads with its Workflow,
// Actions and Input: state carries over through the reducers as with
// Threads, a run waits for a person, and a second Service sharing the
// store resumes it.
func TestGraphRunsInAService(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := chatGraph(t)
	newSvc := func() *service.Service {
		s, err := service.New(service.Options{Store: st, Actions: c.Actions(), Workflows: map[string]*flow.Workflow{"chat": c.Workflow()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	svc := newSvc()
	wf, err := svc.Open(ctx, service.Go("chat", c.Workflow()))
	if err != nil {
		t.Fatal(err)
	}
	turn := func(in chat) (*service.Result, chat) {
		t.Helper()
		params, update, err := c.Input(in)
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Start(ctx, service.StartRequest{Workflow: wf, Thread: "c1", Input: params, Update: update})
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.State(&engine.Result{Vars: res.Vars})
		if err != nil {
			t.Fatal(err)
		}
		return res, out
	}
	res, out := turn(chat{Turns: 5, Messages: []string{"hello"}})
	if res.Status != engine.Completed || out.Turns != 6 || !slices.Equal(out.Messages, []string{"hello", "reply to hello"}) {
		t.Fatalf("first run: %s %+v", res.Status, out)
	}
	res, out = turn(chat{Messages: []string{"please approve"}})
	want := []string{"hello", "reply to hello", "please approve", "reply to please approve"}
	if res.Status != engine.Waiting || res.Waiting[0].Node != "approve" || out.Turns != 1 || !slices.Equal(out.Messages, want) {
		t.Fatalf("second run: %s %+v", res.Status, out)
	}
	res, err = newSvc().Resume(ctx, service.ResumeRequest{Thread: "c1", Answers: []service.Answer{{Values: map[string]flow.Value{"approved": flow.BoolValue(true)}}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err = c.State(&engine.Result{Vars: res.Vars})
	if err != nil || res.Status != engine.Completed || !out.Approved || !slices.Equal(out.Messages, want) {
		t.Fatalf("resumed: %s %+v %v", res.Status, out, err)
	}
}

// Actions returns a copy: what a caller adds does not reach the graph.
func TestActionsIsACopy(t *testing.T) {
	c := chatGraph(t)
	reg := c.Actions()
	if !reg.Has("go:reply") || !reg.Has("go:approve") {
		t.Fatalf("actions %v", reg.Names())
	}
	if err := reg.Register("extra", engine.Func(nil)); err != nil {
		t.Fatal(err)
	}
	if c.Actions().Has("extra") {
		t.Error("an action added to the copy reached the graph")
	}
}
