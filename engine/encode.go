package engine

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
)

// The step records are written once per step, so they are encoded by hand
// into a reused buffer, without reflection. The output is the JSON that
// encoding/json writes for the same structs (which is how they are read
// back); TestEncodeStepMatchesJSON checks the two agree.

func appendStep(b []byte, sd *stepData) ([]byte, error) {
	b = append(b, '{')
	if s := sd.Start; s != nil {
		b = append(b, `"start":{"run":`...)
		b = appendString(b, s.ID)
		b = append(b, `,"number":`...)
		b = strconv.AppendInt(b, int64(s.Number), 10)
		b = append(b, `,"plan":`...)
		b = appendString(b, s.Plan)
		b = append(b, "},"...)
	}
	if sd.Task != 0 {
		b = appendIntField(b, "task", sd.Task)
	}
	if sd.Node != "" {
		b = append(b, `"node":`...)
		b = appendString(b, sd.Node)
		b = append(b, ',')
	}
	if sd.Item != 0 {
		b = appendIntField(b, "item", sd.Item)
	}
	if sd.Answer {
		b = append(b, `"answer":true,`...)
	}
	if sd.Error != "" {
		b = append(b, `"error":`...)
		b = appendString(b, sd.Error)
		b = append(b, ',')
	}
	var err error
	if len(sd.Delta) > 0 {
		b = append(b, `"delta":`...)
		if b, err = appendCells(b, sd.Delta); err != nil {
			return nil, err
		}
		b = append(b, ',')
	}
	b = append(b, `"control":`...)
	if b, err = appendControl(b, &sd.Control); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendSnapshot encodes a snapshot whose Cells and Nodes are given
// encoded in sd.names.
func appendSnapshot(b []byte, sd *snapshotData) ([]byte, error) {
	if sd.names == nil {
		j, err := json.Marshal(sd)
		return append(b, j...), err
	}
	b = append(b, `{"run":`...)
	b = appendString(b, sd.ID)
	b = append(b, `,"number":`...)
	b = strconv.AppendInt(b, int64(sd.Number), 10)
	b = append(b, `,"plan":`...)
	b = appendString(b, sd.Plan)
	b = append(b, ',')
	b = append(b, sd.names...)
	if sd.From != nil {
		b = append(b, `,"from":{"thread":`...)
		b = appendString(b, sd.From.Thread)
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, sd.From.Seq, 10)
		b = append(b, '}')
	}
	if sd.Update {
		b = append(b, `,"update":true`...)
	}
	if sd.Node != "" {
		b = append(b, `,"node":`...)
		b = appendString(b, sd.Node)
	}
	b = append(b, `,"state":{"workflow":`...)
	b = appendString(b, sd.State.Workflow)
	b = append(b, `,"cells":`...)
	var err error
	if sd.State.Cells == nil {
		b = append(b, "null"...)
	} else if b, err = appendCells(b, sd.State.Cells); err != nil {
		return nil, err
	}
	b = append(b, `,"control":`...)
	if b, err = appendControl(b, &sd.State.Control); err != nil {
		return nil, err
	}
	return append(b, "}}"...), nil
}

func appendIntField(b []byte, name string, n int) []byte {
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ',')
}

func appendCells(b []byte, cvs []CellValue) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i, cv := range cvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"c":`...)
		b = strconv.AppendInt(b, int64(cv.Cell), 10)
		b = append(b, `,"v":`...)
		if b, err = cv.Value.AppendJSON(b); err != nil {
			return nil, err
		}
		if cv.Append {
			b = append(b, `,"a":true`...)
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

func appendValues(b []byte, vs []flow.Value) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = v.AppendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func appendInts(b []byte, ns []int) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}

func appendControl(b []byte, c *Control) ([]byte, error) {
	var err error
	b = append(b, `{"status":"`...)
	b = append(b, c.Status.String()...)
	b = append(b, `",`...)
	if c.Err != "" {
		b = append(b, `"error":`...)
		b = appendString(b, c.Err)
		b = append(b, ',')
	}
	b = appendIntField(b, "step", c.Step)
	b = appendIntField(b, "next_id", c.NextID)
	if c.Events != 0 {
		b = append(b, `"events":`...)
		b = strconv.AppendInt(b, c.Events, 10)
		b = append(b, ',')
	}
	if len(c.Path) > 0 {
		b = append(b, `"path":`...)
		b = appendInts(b, c.Path)
		b = append(b, ',')
	}
	b = append(b, `"final":`...)
	b = strconv.AppendInt(b, int64(c.Final), 10)
	if len(c.Outputs) > 0 {
		b = append(b, `,"outputs":`...)
		if b, err = appendValues(b, c.Outputs); err != nil {
			return nil, err
		}
	}
	if len(c.Tasks) > 0 {
		b = append(b, `,"tasks":[`...)
		for i, t := range c.Tasks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = strconv.AppendInt(b, int64(t.ID), 10)
			b = append(b, `,"token":`...)
			b = strconv.AppendInt(b, int64(t.Token), 10)
			b = append(b, `,"step":`...)
			b = strconv.AppendInt(b, int64(t.Step), 10)
			if t.Item != 0 {
				b = append(b, `,"item":`...)
				b = strconv.AppendInt(b, int64(t.Item), 10)
			}
			if len(t.Inputs) > 0 {
				b = append(b, `,"inputs":`...)
				if b, err = appendValues(b, t.Inputs); err != nil {
					return nil, err
				}
			}
			if t.Waiting {
				b = append(b, `,"waiting":true`...)
			}
			if t.Path != "" {
				b = append(b, `,"path":`...)
				b = appendString(b, t.Path)
			}
			if t.Sub != nil {
				// A subworkflow frame: encoding/json writes it.
				sj, err := json.Marshal(t.Sub)
				if err != nil {
					return nil, err
				}
				b = append(b, `,"sub":`...)
				b = append(b, sj...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(c.Tokens) > 0 {
		b = append(b, `,"tokens":[`...)
		for i, t := range c.Tokens {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"node":`...)
			b = strconv.AppendInt(b, int64(t.Node), 10)
			b = append(b, `,"frame":`...)
			b = strconv.AppendInt(b, int64(t.Frame), 10)
			b = append(b, `,"step":`...)
			b = strconv.AppendInt(b, int64(t.Step), 10)
			if t.Map != nil {
				// Rare and larger: leave it to encoding/json.
				mj, err := json.Marshal(t.Map)
				if err != nil {
					return nil, err
				}
				b = append(b, `,"map":`...)
				b = append(b, mj...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(c.Frames) > 0 || len(c.Fanouts) > 0 {
		// Parallel branches in flight: encoding/json writes the rest.
		rest := struct {
			Frames  []FrameState  `json:"frames,omitempty"`
			Fanouts []FanoutState `json:"fanouts,omitempty"`
		}{c.Frames, c.Fanouts}
		rj, err := json.Marshal(rest)
		if err != nil {
			return nil, err
		}
		b = append(b, ',')
		b = append(b, rj[1:len(rj)-1]...)
	}
	if len(c.Notices) > 0 {
		// Rare: encoding/json writes them.
		nj, err := json.Marshal(c.Notices)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"notices":`...)
		b = append(b, nj...)
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, escaped as encoding/json does.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			j, _ := json.Marshal(s) // a string always encodes
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
