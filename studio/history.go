package studio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// historyPage is how many steps the thread page shows at once.
const historyPage = 100

// stateJSON is a thread's state at a checkpoint, as the API gives it
// (GET /threads/{id}/state, the history's entries).
type stateJSON struct {
	Values     map[string]json.RawMessage `json:"values"`
	Next       []string                   `json:"next"`
	Tasks      []taskJSON                 `json:"tasks"`
	Metadata   map[string]any             `json:"metadata"`
	CreatedAt  string                     `json:"created_at"`
	Checkpoint *struct {
		ID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	Parent *struct {
		ID string `json:"checkpoint_id"`
	} `json:"parent_checkpoint"`
}

// taskJSON is a task of a state: a node that runs next or waits.
type taskJSON struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Error      *string         `json:"error"`
	Interrupts []interruptJSON `json:"interrupts"`
}

// interruptJSON is a question a waiting node asks.
type interruptJSON struct {
	ID    string `json:"id"`
	Value struct {
		Question string `json:"question"`
		Node     string `json:"node"`
	} `json:"value"`
}

// cpID is the state's checkpoint id, or "".
func (st *stateJSON) cpID() string {
	if st.Checkpoint == nil {
		return ""
	}
	return st.Checkpoint.ID
}

// step is one row of a thread's history: a checkpoint and what it
// changed.
type step struct {
	ID      string // checkpoint id
	Node    string // the node that wrote it, if any
	Source  string // input, loop, update, ...
	Step    string
	Run     string
	Time    string
	Changes []change
}

// change is one key of the state a step added, removed or changed.
type change struct {
	Key, Kind string // Kind: added, removed, changed
	Old, New  string // compact JSON, cut short with "…"
	Cut       bool   // a value was cut short
}

// shortLen is how many characters of a value the history shows.
const shortLen = 80

// short is raw as compact JSON, cut to shortLen characters with "…".
func short(raw json.RawMessage) (string, bool) {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if utf8.RuneCountInString(s) <= shortLen {
		return s, false
	}
	r := []rune(s)
	return string(r[:shortLen]) + "…", true
}

// flat is a state's values one level down: a value that is an object (a
// node's outputs) gives one key per field, "node.field".
func flat(vals map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(vals))
	for k, v := range vals {
		var obj map[string]json.RawMessage
		if bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")) && json.Unmarshal(v, &obj) == nil && len(obj) > 0 {
			for f, fv := range obj {
				out[k+"."+f] = fv
			}
			continue
		}
		out[k] = v
	}
	return out
}

// diff lists what after changed of before, by key.
func diff(before, after map[string]json.RawMessage) []change {
	b, a := flat(before), flat(after)
	var out []change
	for k, v := range a {
		old, had := b[k]
		switch {
		case !had:
			n, cut := short(v)
			out = append(out, change{Key: k, Kind: "added", New: n, Cut: cut})
		case !jsonEqual(old, v):
			o, cut1 := short(old)
			n, cut2 := short(v)
			out = append(out, change{Key: k, Kind: "changed", Old: o, New: n, Cut: cut1 || cut2})
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			o, cut := short(v)
			out = append(out, change{Key: k, Kind: "removed", Old: o, Cut: cut})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// jsonEqual compares two JSON texts, ignoring spaces.
func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// metaString is md[key] as text.
func metaString(md map[string]any, key string) string {
	switch v := md[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// history reads a page of a thread's steps, newest first, each with its
// changes against the step before; older is the checkpoint id to read on
// from ("" when this page reaches the thread's start).
func (s *Studio) history(r *http.Request, id, before string) (steps []step, older string, err error) {
	body := map[string]any{"limit": historyPage + 1}
	if before != "" {
		body["before"] = before
	}
	var states []stateJSON
	if err := s.get(r.Context(), "POST", "/threads/"+url.PathEscape(id)+"/history", body, &states); err != nil {
		return nil, "", err
	}
	n := len(states)
	if n > historyPage {
		n = historyPage
	}
	for i := 0; i < n; i++ {
		st := &states[i]
		var prev map[string]json.RawMessage
		if i+1 < len(states) {
			prev = states[i+1].Values
		}
		steps = append(steps, step{
			ID:      st.cpID(),
			Node:    metaString(st.Metadata, "node"),
			Source:  metaString(st.Metadata, "source"),
			Step:    metaString(st.Metadata, "step"),
			Run:     metaString(st.Metadata, "run"),
			Time:    shortTime(st.CreatedAt),
			Changes: diff(prev, st.Values),
		})
	}
	if len(states) > historyPage {
		older = steps[len(steps)-1].ID
	}
	return steps, older, nil
}

// shortTime drops the date's T and the sub-seconds, for reading.
func shortTime(t string) string {
	t = strings.Replace(t, "T", " ", 1)
	if i := strings.IndexByte(t, '.'); i > 0 {
		end := strings.IndexAny(t[i:], "Z+-")
		if end < 0 {
			return t[:i]
		}
		return t[:i] + t[i+end:]
	}
	return t
}

// marked is a workflow's SVG with the thread's progress on it: classes on
// the nodes done, waiting and failed, and the edges taken.
func marked(svg template.HTML, nodes map[string]string, edges [][2]string) template.HTML {
	if len(nodes) == 0 && len(edges) == 0 {
		return svg
	}
	var pairs []string
	for n, class := range nodes {
		a := fmt.Sprintf(`<g data-node="%s"`, template.HTMLEscapeString(n))
		pairs = append(pairs, a, fmt.Sprintf(`<g class="%s" data-node="%s"`, class, template.HTMLEscapeString(n)))
	}
	seen := map[[2]string]bool{}
	for _, e := range edges {
		if seen[e] {
			continue
		}
		seen[e] = true
		a := fmt.Sprintf(` data-from="%s" data-to="%s"`, template.HTMLEscapeString(e[0]), template.HTMLEscapeString(e[1]))
		pairs = append(pairs, a, ` class="taken"`+a)
	}
	return template.HTML(strings.NewReplacer(pairs...).Replace(string(svg)))
}
