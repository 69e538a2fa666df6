package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
)

// talkRegistry has the talk action: its reply "Hi you" as three tokens.
func talkRegistry() *engine.Registry {
	reg := engine.NewRegistry()
	reg.Replace("talk", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		if c.Inputs[0].Str() == "fail" {
			return errors.New("talk: asked to fail")
		}
		for _, tok := range []string{"Hi", " ", "you"} {
			c.Emit("token", flow.StringValue(tok))
		}
		c.Emit("progress", flow.StringValue("said"))
		c.Outputs[0] = flow.StringValue("Hi you")
		return nil
	}))
	return reg
}

// nestFixture serves testdata/nest.wf (a subworkflow in a subworkflow).
func nestFixture(t *testing.T) *fixture {
	t.Helper()
	st := memory.New()
	svc, err := service.New(service.Options{Store: st, Actions: talkRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(context.Background(), service.Source{Name: "testdata/nest.wf"})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, svc, st, wf, nil)
}

// nsSegment is one segment of a LangGraph namespace: node:<task id>.
var nsSegment = regexp.MustCompile(`^([a-z]+):([0-9a-f-]{36})$`)

// namespace splits an event name "mode|a:<id>|b:<id>" into its mode and
// its segments' nodes and task ids, checking their form.
func namespace(t *testing.T, event string) (mode string, nodes, ids []string) {
	t.Helper()
	parts := strings.Split(event, "|")
	for _, seg := range parts[1:] {
		m := nsSegment.FindStringSubmatch(seg)
		if m == nil {
			t.Fatalf("event %q: namespace segment %q is not node:<uuid>", event, seg)
		}
		id, err := uuid.Parse(m[2])
		if err != nil || id.Version() != 5 {
			t.Fatalf("event %q: task id %q is not a uuid5 (%v)", event, m[2], err)
		}
		nodes, ids = append(nodes, m[1]), append(ids, m[2])
	}
	return parts[0], nodes, ids
}

// With stream_subgraphs, a subworkflow's events are named as LangGraph
// names a subgraph's: mode|<node>:<task id>, nested segments joined by
// "|", each id a uuid5 the same for every event of one execution of the
// node (and the same when the run's stream is read again); the
// messages' checkpoint_ns is the namespace down to the node that speaks.
func TestSubgraphNamespaces(t *testing.T) {
	f := nestFixture(t)
	f.json("POST", "/threads", `{"thread_id":"n1"}`, 200, nil)
	resp, evs := f.stream("/threads/n1/runs/stream", `{"assistant_id":"Nest","input":{"input_text":"x"},"stream_mode":["updates","messages-tuple","custom"],"stream_subgraphs":true}`)
	var got []string
	taskOf := map[string]string{} // node -> its task id
	for _, e := range evs[1:] {
		mode, nodes, ids := namespace(t, e.Event)
		for i, n := range nodes {
			if prev, ok := taskOf[n]; ok && prev != ids[i] {
				t.Fatalf("%s: task id of %s changed from %s to %s", e.Event, n, prev, ids[i])
			}
			taskOf[n] = ids[i]
		}
		line := mode + " " + strings.Join(nodes, "|")
		switch mode {
		case "updates", "custom":
			line += " " + string(e.Data)
		case "messages":
			var tuple [2]map[string]any
			if err := json.Unmarshal(e.Data, &tuple); err != nil {
				t.Fatal(err)
			}
			ns := strings.TrimPrefix(strings.TrimPrefix(e.Event, "messages"), "|")
			cns, _ := tuple[1]["checkpoint_ns"].(string)
			if !strings.HasPrefix(cns, ns+"|think:") || tuple[1]["langgraph_checkpoint_ns"] != cns {
				t.Fatalf("messages %s: checkpoint_ns %q, want %q|think:<id>", e.Event, cns, ns)
			}
			_, _, own := namespace(t, "m|"+cns)
			taskOf["think"] = own[len(own)-1]
			line += " " + tuple[0]["content"].(string)
		}
		got = append(got, line)
	}
	want := []string{
		`updates  {"prep":{"body":"x"}}`,
		`messages inner Hi`,
		`messages inner  `,
		`messages inner you`,
		`custom inner {"data":"said","kind":"progress","node":"think"}`,
		`updates inner {"think":{"reply":"Hi you"}}`,
		`updates inner|deeper {"leaf":{"reply":"Hi you"}}`,
		`updates inner {"deeper":{"reply":"Hi you"}}`,
		`updates  {"inner":{"reply":"Hi you"}}`,
		`updates  {"fin":{"done":"Hi you"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stream:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(taskOf) != 3 || taskOf["inner"] == taskOf["deeper"] || taskOf["deeper"] == taskOf["think"] {
		t.Fatalf("task ids not distinct: %v", taskOf)
	}
	// Read again: the same names.
	loc := resp.Header.Get("Content-Location")
	_, again := f.stream(loc+"/stream", "")
	if len(again) != len(evs) {
		t.Fatalf("the stream read again has %d events, want %d", len(again), len(evs))
	}
	for i := range evs {
		if again[i].Event != evs[i].Event || string(again[i].Data) != string(evs[i].Data) {
			t.Fatalf("event %d read again: %s %s, first %s %s", i, again[i].Event, again[i].Data, evs[i].Event, evs[i].Data)
		}
	}
	// Another run of the thread: other task ids.
	_, evs2 := f.stream("/threads/n1/runs/stream", `{"assistant_id":"Nest","input":{"input_text":"x"},"stream_mode":["updates"],"stream_subgraphs":true}`)
	for _, e := range evs2 {
		if _, nodes, ids := namespace(t, e.Event); len(nodes) > 0 && ids[0] == taskOf["inner"] {
			t.Fatalf("a second run reuses the task id of the first: %s", e.Event)
		}
	}
}

// Without stream_subgraphs, a subworkflow's steps are not streamed, and
// its nodes' custom events and tokens come under the bare mode name, as
// LangGraph sends a subgraph's custom events.
func TestNoSubgraphsNoNamespaces(t *testing.T) {
	f := nestFixture(t)
	f.json("POST", "/threads", `{"thread_id":"n2"}`, 200, nil)
	_, evs := f.stream("/threads/n2/runs/stream", `{"assistant_id":"Nest","input":{"input_text":"x"},"stream_mode":["updates","custom","messages-tuple"]}`)
	var got []string
	for _, e := range evs[1:] {
		got = append(got, e.Event)
	}
	want := "updates messages messages messages custom updates updates"
	if strings.Join(got, " ") != want {
		t.Fatalf("events %v, want %s", got, want)
	}
}
