package studio

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"

	"github.com/weftlang/weft/flow"
)

// threadJSON is a thread as the API gives it.
type threadJSON struct {
	ID       string          `json:"thread_id"`
	Status   string          `json:"status"`
	Created  string          `json:"created_at"`
	Updated  string          `json:"updated_at"`
	Metadata map[string]any  `json:"metadata"`
	Values   json.RawMessage `json:"values"`
}

// question is a question a waiting thread asks, with the form that
// answers it.
type question struct {
	ID     string
	Node   string
	Text   string
	Fields []field
}

// thread shows a thread: its graph marked with its progress, the
// questions it asks, its state, and its history, newest first.
func (s *Studio) thread(r *http.Request) (string, any, error) {
	id := r.PathValue("id")
	esc := "/threads/" + url.PathEscape(id)
	var th threadJSON
	if err := s.get(r.Context(), "GET", esc, nil, &th); err != nil {
		return "", nil, err
	}
	var st stateJSON
	if err := s.get(r.Context(), "GET", esc+"/state", nil, &st); err != nil {
		return "", nil, err
	}
	steps, older, err := s.history(r, id, r.URL.Query().Get("before"))
	if err != nil {
		return "", nil, err
	}
	graph, _ := th.Metadata["graph_id"].(string)
	fp := s.flow(graph)
	data := map[string]any{
		"Title": "Thread " + id, "Thread": th, "Flow": fp, "Run": r.URL.Query().Get("run"),
		"Values": pretty(th.Values), "Steps": steps, "Older": older, "Before": r.URL.Query().Get("before"),
		"Busy":       th.Status == "busy",
		"ForkedFrom": metaString(th.Metadata, "forked_from"), "ForkedAt": metaString(th.Metadata, "forked_at"),
		"Error": r.URL.Query().Get("error"), "Next": st.Next,
	}
	if fp != nil {
		data["Graph"] = marked(fp.Graph, progress(fp.plan, th.Status, &st), taken(steps, &st))
		data["Questions"] = questions(fp.plan, &st)
	}
	return "thread", data, nil
}

// progress classes the graph's nodes from a thread's state: done (the
// nodes whose outputs it holds), waiting (asking a person) and failed.
func progress(plan *flow.Plan, status string, st *stateJSON) map[string]string {
	out := map[string]string{}
	if plan == nil {
		return out
	}
	for _, pn := range plan.Nodes {
		if _, ok := st.Values[pn.Name]; ok {
			out[pn.Name] = "done"
		}
	}
	for _, t := range st.Tasks {
		switch {
		case t.Error != nil:
			out[t.Name] = "failed"
		case len(t.Interrupts) > 0:
			out[t.Name] = "waiting"
		case status == "error":
			out[t.Name] = "failed"
		}
	}
	return out
}

// taken lists the edges the steps shown went along, oldest first, and
// the edge into the node that runs or waits next.
func taken(steps []step, st *stateJSON) [][2]string {
	var out [][2]string
	last := ""
	for i := len(steps) - 1; i >= 0; i-- {
		n := steps[i].Node
		if n == "" {
			continue
		}
		if last != "" {
			out = append(out, [2]string{last, n})
		}
		last = n
	}
	if last != "" {
		for _, n := range st.Next {
			out = append(out, [2]string{last, n})
		}
	}
	return out
}

// questions are the questions a state asks, each with the fields of its
// HUMAN node's outputs.
func questions(plan *flow.Plan, st *stateJSON) []question {
	var out []question
	for _, t := range st.Tasks {
		for _, in := range t.Interrupts {
			q := question{ID: in.ID, Node: in.Value.Node, Text: in.Value.Question}
			if q.Node == "" {
				q.Node = t.Name
			}
			q.Fields = outputFields(plan, q.Node)
			out = append(out, q)
		}
	}
	return out
}

// outputFields are the fields of a node's outputs, all required.
func outputFields(plan *flow.Plan, node string) []field {
	if plan == nil {
		return nil
	}
	for _, pn := range plan.Nodes {
		if pn.Name != node {
			continue
		}
		var out []field
		for _, o := range pn.Outputs {
			out = append(out, fieldOf(o.Name, o.Type, o.Type.Kind.String() != "Bool", pn.Name))
		}
		return out
	}
	return nil
}

// stepPage shows a thread's state at one step, with the form that forks
// the thread there with edited values.
func (s *Studio) stepPage(r *http.Request) (string, any, error) {
	id, cp := r.PathValue("id"), r.PathValue("cp")
	esc := "/threads/" + url.PathEscape(id)
	var th threadJSON
	if err := s.get(r.Context(), "GET", esc, nil, &th); err != nil {
		return "", nil, err
	}
	var st stateJSON
	if err := s.get(r.Context(), "GET", esc+"/state/"+url.PathEscape(cp), nil, &st); err != nil {
		return "", nil, err
	}
	graph, _ := th.Metadata["graph_id"].(string)
	fp := s.flow(graph)
	var keys []string
	for k := range st.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type entry struct {
		Key   string
		Value string
	}
	var vals []entry
	for _, k := range keys {
		vals = append(vals, entry{k, pretty(st.Values[k])})
	}
	data := map[string]any{
		"Title": "Thread " + id + " at step " + cp, "Thread": th, "CP": cp, "State": st, "Flow": fp,
		"Values": vals, "Node": metaString(st.Metadata, "node"), "Source": metaString(st.Metadata, "source"),
		"Step": metaString(st.Metadata, "step"), "Time": shortTime(st.CreatedAt),
		"Error": r.URL.Query().Get("error"),
	}
	if st.Parent != nil {
		data["Parent"] = st.Parent.ID
	}
	if fp != nil {
		data["Edits"] = editable(fp.plan, st.Values)
	}
	return "step", data, nil
}

// edit is a value of a state a fork can change: a parameter or variable,
// with its value at the step.
type edit struct {
	field
	Value string // as a form holds it: text, a number, JSON
	On    bool   // a Bool's value
}

// editable lists the parameters and variables of plan with their values
// in vals.
func editable(plan *flow.Plan, vals map[string]json.RawMessage) []edit {
	if plan == nil {
		return nil
	}
	var out []edit
	add := func(name string, t flow.Type) {
		e := edit{field: fieldOf(name, t, false, "")}
		raw, ok := vals[name]
		if ok {
			var v any
			if json.Unmarshal(raw, &v) != nil {
				v = nil // not JSON: the field shows the raw text (below)
			}
			switch x := v.(type) {
			case string:
				e.Value = x
			case bool:
				e.On = x
			default:
				if e.Kind == "Int" || e.Kind == "Float" {
					e.Value = string(raw)
				} else {
					e.Value = pretty(raw)
				}
			}
		}
		out = append(out, e)
	}
	for _, p := range plan.Params {
		add(p.Name, p.Type)
	}
	for _, v := range plan.Vars {
		add(v.Name, v.Type)
	}
	return out
}

// pretty indents JSON for reading; what does not parse is shown as it is.
func pretty(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
