package studio

import (
	"encoding/json"
	"net/http"
	"net/url"
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

// thread shows a thread: its status and state.
func (s *Studio) thread(r *http.Request) (string, any, error) {
	id := r.PathValue("id")
	var th threadJSON
	if err := s.get(r.Context(), "GET", "/threads/"+url.PathEscape(id), nil, &th); err != nil {
		return "", nil, err
	}
	graph, _ := th.Metadata["graph_id"].(string)
	return "thread", map[string]any{"Title": "Thread " + id, "Thread": th, "Flow": s.flow(graph), "Run": r.URL.Query().Get("run"), "Values": pretty(th.Values)}, nil
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
