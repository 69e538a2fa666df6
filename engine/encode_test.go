package engine

import (
	"encoding/json"
	"testing"

	"github.com/weftlang/weft/flow"
)

// TestEncodeStepMatchesJSON checks the hand-written encoder of step records
// against encoding/json: both must decode to the same record.
func TestEncodeStepMatchesJSON(t *testing.T) {
	obj := flow.ObjectValue(map[string]flow.Value{"k": flow.StringValue("<v>&\"q\"\n"), "n": flow.FloatValue(2)})
	cases := []*stepData{
		{Control: Control{Final: -1}},
		{
			Start: &runInfo{ID: "abc", Number: 3, Plan: "ff00"},
			Delta: []CellValue{{Cell: 0, Value: flow.StringValue("hi")}, {Cell: 4, Value: flow.Null}},
			Control: Control{Status: Running, Step: 1, NextID: 1, Path: []int{0}, Final: -1,
				Tasks:  []TaskState{{ID: 1, Token: 0, Step: 1, Inputs: []flow.Value{flow.IntValue(7), flow.Null}}},
				Tokens: []TokenState{{Node: 0, Frame: 0, Step: 1}}},
		},
		{
			Task: 12, Node: "ask_ü \"x\"", Item: 2, Answer: true, Error: "boom: <tag> & \"quote\"\n\ttab \x01",
			Delta: []CellValue{{Cell: 3, Value: flow.ListValue(flow.StringValue("m1"), obj), Append: true}, {Cell: 9, Value: flow.DurationValue(90e9)}},
			Control: Control{Status: Waiting, Err: "e", Step: 5, NextID: 9, Events: 42, Path: []int{1, 2, 3}, Final: 2,
				Outputs: []flow.Value{flow.BoolValue(true), obj},
				Tasks:   []TaskState{{ID: 8, Token: 1, Step: 5, Item: 1, Waiting: true}, {ID: 9, Token: 0, Step: 4}},
				Tokens: []TokenState{{Node: 1, Frame: 1, Step: 4}, {Node: 2, Frame: 2, Step: 5, Map: &MapState{
					Items: []flow.Value{flow.IntValue(1)}, Inputs: [][]flow.Value{{flow.IntValue(1)}}, Outs: [][]flow.Value{nil}, Next: 1, Done: 0, Failed: true}}},
				Frames:  []FrameState{{Parent: 0, Fanout: 0, Raw: []CellValue{{Cell: 2, Value: flow.StringValue("w")}}}, {Parent: 0, Fanout: 0}},
				Fanouts: []FanoutState{{Edge: 3, Parent: 0, Branches: []int{1, 2}, Pending: 1}}},
		},
		{
			Task: 2, Node: "classify",
			Control: Control{Status: Running, Step: 2, NextID: 3, Final: -1,
				Notices: []Notice{{Kind: NoticeFallback, Node: "classify", Step: 2, Message: "ollama: HTTP 500: <boom>",
					Values: []NamedValue{{Name: "intent", Value: flow.StringValue("not_clear")}}},
					{Kind: NoticeTruncated, Node: "m", Step: 2, Item: 3, Message: "cut"}}},
		},
		{
			// A subworkflow frame, with a waiting task of its own.
			Task: 4, Node: "review/draft",
			Control: Control{Status: Waiting, Step: 2, NextID: 5, Final: -1,
				Tasks: []TaskState{{ID: 2, Token: 0, Step: 2, Inputs: []flow.Value{flow.StringValue("b")}, Sub: &SubState{Attempt: 2,
					Cells: []CellValue{{Cell: 1, Value: flow.StringValue("v\"1")}},
					Control: Control{Status: Running, Step: 2, Path: []int{0, 1}, Final: -1,
						Tasks:  []TaskState{{ID: 5, Token: 0, Step: 2, Waiting: true, Path: "review/ask \"q\""}},
						Tokens: []TokenState{{Node: 1, Frame: 0, Step: 2}}}}}},
				Tokens: []TokenState{{Node: 1, Frame: 0, Step: 2}}},
		},
	}
	for i, sd := range cases {
		mine, err := appendStep(nil, sd)
		if err != nil {
			t.Fatal(err)
		}
		std, err := json.Marshal(sd)
		if err != nil {
			t.Fatal(err)
		}
		var a, b stepData
		if err := json.Unmarshal(mine, &a); err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, mine)
		}
		if err := json.Unmarshal(std, &b); err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("case %d differs\nmine: %s\nstd:  %s", i, mine, std)
		}
	}
}

// TestEncodeSnapshotMatchesJSON does the same for snapshots.
func TestEncodeSnapshotMatchesJSON(t *testing.T) {
	cells := []CellInfo{{Name: "input_text", Kind: flow.CellParam}, {Name: "n.out", Kind: flow.CellOutput}}
	names, _ := json.Marshal(struct {
		Cells []CellInfo `json:"cells"`
		Nodes []string   `json:"nodes"`
	}{cells, []string{"n", "done"}})
	for i, from := range []*ForkOrigin{nil, {Thread: "src\"", Seq: 12}, nil} {
		sd := &snapshotData{runInfo: runInfo{ID: "r", Number: 2, Plan: "p"}, Cells: cells, Nodes: []string{"n", "done"}, From: from,
			Update: i == 2, Node: map[bool]string{true: "n\"x"}[i == 2],
			State: &State{Workflow: "W", Cells: []CellValue{{Cell: 0, Value: flow.StringValue("q")}}, Control: Control{Status: Completed, Step: 2, Final: 1, Path: []int{0, 1}}}}
		std, _ := json.Marshal(sd)
		sd.names = names[1 : len(names)-1]
		mine, err := appendSnapshot(nil, sd)
		if err != nil {
			t.Fatal(err)
		}
		var a, b snapshotData
		if err := json.Unmarshal(mine, &a); err != nil {
			t.Fatalf("%v\n%s", err, mine)
		}
		json.Unmarshal(std, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("differs\nmine: %s\nstd:  %s", mine, std)
		}
	}
}
