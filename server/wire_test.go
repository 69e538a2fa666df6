package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
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

// frameKind classifies a frame of the checkpoints, debug, tasks and
// events modes as testdata/lg-shapes.json does.
func frameKind(event string, d map[string]any) string {
	switch event {
	case "checkpoints":
		return "checkpoints"
	case "debug":
		return "debug/" + fmt.Sprint(d["type"])
	case "tasks":
		if _, ok := d["input"]; ok {
			return "tasks/start"
		}
		return "tasks/result"
	case "events":
		k := "events/" + fmt.Sprint(d["event"])
		if d["name"] == "LangGraph" {
			k += "/graph"
		}
		return k
	}
	return ""
}

// shapeStops are the keys whose values are graph-specific content, not
// looked into; shapeDrops are LangGraph deployment keys weft leaves out.
var (
	shapeStops = map[string]bool{"values": true, "input": true, "output": true, "result": true, "parents": true, "chunk": true, "writes": true}
	shapeDrops = map[string]bool{"user-agent": true, "langgraph_version": true, "langgraph_plan": true, "langgraph_host": true, "langgraph_api_url": true, "ls_integration": true, "ls_model_type": true, "ls_provider": true, "versions": true, "recursion_limit": true, "ls_stop": true, "ls_model_name": true}
)

// jsonType is the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// flatten adds the key paths of v, with their types, to out.
func flatten(v any, path string, out map[string]string) {
	if path != "" {
		out[path] = jsonType(v)
	}
	last := path[strings.LastIndexByte(path, '.')+1:]
	if shapeStops[last] {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if shapeDrops[k] {
				continue
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(e, p, out)
		}
	case []any:
		if len(x) > 0 {
			if _, ok := x[0].(map[string]any); ok {
				flatten(x[0], path+"[]", out)
			}
		}
	}
}

// shapeParent is the path a path's presence depends on.
func shapeParent(p string) string {
	if strings.HasSuffix(p, "[]") {
		return p[:len(p)-2]
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// The frames of the checkpoints, debug, tasks and events modes have
// every field the reference server's have, with the same JSON types:
// checked path by path against the shapes of its frames
// (testdata/lg-shapes.json, made from a capture of it), so that a drift
// on either side is caught.
func TestStreamShapesMatchReference(t *testing.T) {
	raw, err := os.ReadFile("testdata/lg-shapes.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	f := nestFixture(t)
	f.json("POST", "/threads", `{"thread_id":"g1"}`, 200, nil)
	_, evs := f.stream("/threads/g1/runs/stream", `{"assistant_id":"Nest","input":{"input_text":"x"},"stream_mode":["checkpoints","debug","tasks","events"]}`)
	got := map[string][]map[string]string{}
	for _, e := range evs[1:] {
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("%s: %v", e.Event, err)
		}
		k := frameKind(e.Event, d)
		if k == "" {
			t.Fatalf("unexpected event %s %s", e.Event, e.Data)
		}
		shape := map[string]string{}
		flatten(d, "", shape)
		got[k] = append(got[k], shape)
	}
	// The kinds weft sends; the reference's on_chat_model_start/end
	// need the model's prompt, which a weft action does not report.
	for _, k := range []string{"checkpoints", "debug/checkpoint", "debug/task", "debug/task_result", "tasks/start", "tasks/result",
		"events/on_chain_start/graph", "events/on_chain_end/graph", "events/on_chain_start", "events/on_chain_end", "events/on_chat_model_stream"} {
		var want map[string][]string
		if err := json.Unmarshal(ref[k], &want); err != nil || len(want) == 0 {
			t.Fatalf("%s: no shape in the fixture (%v)", k, err)
		}
		if len(got[k]) == 0 {
			t.Errorf("%s: weft sent no such frame", k)
			continue
		}
		for i, shape := range got[k] {
			for p, types := range want {
				if pp := shapeParent(p); pp != "" && shape[pp] == "" {
					continue // its parent is not in this frame
				}
				typ, ok := shape[p]
				if !ok && strings.HasSuffix(p, "[]") {
					continue // an empty array
				}
				if !ok {
					t.Errorf("%s frame %d: no %s (the reference's is %v)", k, i, p, types)
				} else if !slices.Contains(types, typ) {
					t.Errorf("%s frame %d: %s is %s, the reference's %v", k, i, p, typ, types)
				}
			}
		}
	}
}

// The checkpoints a run streams are the thread's: each names the record
// GET /threads/{id}/state/{checkpoint_id} reads, with the values
// streamed, and its parent is the one streamed before it; the input
// checkpoint comes first (step -1), and each lists the tasks that start
// after it, with the ids the tasks mode gives them.
func TestStreamedCheckpointsAreTheThreads(t *testing.T) {
	f := newFixture(t, nil)
	f.json("POST", "/threads", `{"thread_id":"c1"}`, 200, nil)
	_, evs := f.stream("/threads/c1/runs/stream", `{"assistant_id":"Approval","input":{"input_text":"doc"},"stream_mode":["checkpoints","tasks"]}`)
	_, evs2 := f.stream("/threads/c1/runs/stream", `{"assistant_id":"Approval","command":{"resume":"yes"},"stream_mode":["checkpoints","tasks"]}`)
	type cpFrame struct {
		Config       struct{ Configurable map[string]any }
		ParentConfig *struct{ Configurable map[string]any } `json:"parent_config"`
		Values       json.RawMessage
		Metadata     struct {
			Source string
			Step   int
		}
		Next  []string
		Tasks []struct{ ID, Name string }
	}
	var got []string
	prev := 0
	started := map[string]string{} // task id -> name, from the tasks mode
	for _, e := range append(evs[1:], evs2[1:]...) {
		switch e.Event {
		case "tasks":
			var tk struct {
				ID, Name string
				Input    json.RawMessage
			}
			if err := json.Unmarshal(e.Data, &tk); err != nil {
				t.Fatal(err)
			}
			if tk.Input != nil {
				started[tk.ID] = tk.Name
			} else if started[tk.ID] != tk.Name {
				// The answer's run ends the task the question's run
				// started: one id.
				t.Errorf("task result %s %s: no start of that id (%v)", tk.Name, tk.ID, started)
			}
			continue
		case "checkpoints":
		default:
			continue
		}
		var cp cpFrame
		if err := json.Unmarshal(e.Data, &cp); err != nil {
			t.Fatal(err)
		}
		id, _ := cp.Config.Configurable["checkpoint_id"].(string)
		if id == "" || cp.Config.Configurable["thread_id"] != "c1" || cp.Config.Configurable["checkpoint_ns"] != "" {
			t.Fatalf("checkpoint config %v", cp.Config.Configurable)
		}
		if n, _ := strconv.Atoi(id); n <= prev {
			t.Fatalf("checkpoint %s after %d", id, prev)
		} else {
			prev = n
		}
		var st struct {
			Values           json.RawMessage
			ParentCheckpoint *struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"parent_checkpoint"`
		}
		f.json("GET", "/threads/c1/state/"+id, "", 200, &st)
		if string(st.Values) != string(cp.Values) {
			t.Fatalf("checkpoint %s streamed %s, the thread's is %s", id, cp.Values, st.Values)
		}
		switch {
		case st.ParentCheckpoint == nil && cp.ParentConfig != nil,
			st.ParentCheckpoint != nil && (cp.ParentConfig == nil || cp.ParentConfig.Configurable["checkpoint_id"] != st.ParentCheckpoint.CheckpointID):
			t.Fatalf("checkpoint %s: parent config %v, the thread's parent %v", id, cp.ParentConfig, st.ParentCheckpoint)
		}
		var tasks []string
		for _, tk := range cp.Tasks {
			tasks = append(tasks, tk.Name+"="+tk.ID)
		}
		got = append(got, fmt.Sprintf("%s %d %v %d", cp.Metadata.Source, cp.Metadata.Step, cp.Next, len(tasks)))
		for _, tk := range cp.Tasks {
			defer func() {
				if started[tk.ID] != tk.Name {
					t.Errorf("checkpoint %s lists task %s %s, which the tasks mode did not start", id, tk.Name, tk.ID)
				}
			}()
		}
	}
	want := []string{"input -1 [draft] 1", "loop 1 [review] 1", "loop 2 [publish] 1", "loop 3 [] 0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("checkpoints:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A question inside a subworkflow: the run that answers it names the
// subworkflow's events with the task id the question's run gave it (the
// WORKFLOW node's execution is the same one, resumed).
func TestSubgraphNamespaceAcrossResume(t *testing.T) {
	st := memory.New()
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(context.Background(), service.Source{Name: "testdata/sub_ask.wf"})
	if err != nil {
		t.Fatal(err)
	}
	f := serve(t, svc, st, wf, nil)
	f.json("POST", "/threads", `{"thread_id":"q"}`, 200, nil)
	names := func(body string) []string {
		_, evs := f.stream("/threads/q/runs/stream", body)
		var out []string
		for _, e := range evs[1:] {
			out = append(out, e.Event)
		}
		return out
	}
	asked := names(`{"assistant_id":"Publish","input":{},"stream_mode":["tasks"],"stream_subgraphs":true}`)
	answered := names(`{"assistant_id":"Publish","command":{"resume":{"year":1969}},"stream_mode":["tasks","updates"],"stream_subgraphs":true}`)
	var inner []string
	for _, e := range append(asked, answered...) {
		if _, nodes, ids := namespace(t, e); len(nodes) == 1 && nodes[0] == "review" {
			inner = append(inner, ids[0])
		}
	}
	if len(inner) < 3 {
		t.Fatalf("subworkflow events: asked %v, answered %v", asked, answered)
	}
	for _, id := range inner {
		if id != inner[0] {
			t.Fatalf("the subworkflow's task id changed across the resume: asked %v, answered %v", asked, answered)
		}
	}
}
