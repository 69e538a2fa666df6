package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/weftlang/weft/flow"
)

// assistantJSON is an assistant as LangGraph's API shows it.
type assistantJSON struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

func (a *Assistant) json() assistantJSON {
	var desc *string
	if a.Description != "" {
		desc = &a.Description
	}
	return assistantJSON{
		AssistantID: a.ID,
		GraphID:     a.GraphID,
		Config:      map[string]any{},
		Context:     map[string]any{},
		Metadata:    map[string]any{"created_by": "system"},
		Name:        a.Name,
		Description: desc,
		Version:     1,
		CreatedAt:   a.Created,
		UpdatedAt:   a.Created,
	}
}

// assistant finds an assistant by its id or its graph id (LangGraph's
// clients pass either where an assistant_id is asked for).
func (s *Server) assistant(id string) (*Assistant, error) {
	for _, a := range s.assistants {
		if a.ID == id || a.GraphID == id {
			return a, nil
		}
	}
	return nil, notFound("assistant", id)
}

// assistantQuery is the body of POST /assistants/search and /count.
type assistantQuery struct {
	GraphID  string         `json:"graph_id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
	Limit    *int           `json:"limit"`
	Offset   int            `json:"offset"`
}

// matches reports whether a matches the query's filters.
func (q *assistantQuery) matches(a *Assistant) bool {
	if q.GraphID != "" && q.GraphID != a.GraphID {
		return false
	}
	if q.Name != "" && !strings.Contains(strings.ToLower(a.Name), strings.ToLower(q.Name)) {
		return false
	}
	for k, v := range q.Metadata {
		if !(k == "created_by" && v == "system") {
			return false
		}
	}
	return true
}

func (s *Server) filterAssistants(r *http.Request) ([]*Assistant, *assistantQuery, error) {
	var q assistantQuery
	if err := decode(r, &q); err != nil {
		return nil, nil, err
	}
	if q.Offset < 0 {
		return nil, nil, invalid("$.offset", "must not be negative")
	}
	if q.Limit != nil && *q.Limit < 0 {
		return nil, nil, invalid("$.limit", "must not be negative")
	}
	var out []*Assistant
	for _, a := range s.assistants {
		if q.matches(a) {
			out = append(out, a)
		}
	}
	return out, &q, nil
}

// searchAssistants is POST /assistants/search.
func (s *Server) searchAssistants(w http.ResponseWriter, r *http.Request) error {
	found, q, err := s.filterAssistants(r)
	if err != nil {
		return err
	}
	limit := 10
	if q.Limit != nil {
		limit = *q.Limit
	}
	out := []assistantJSON{}
	for i, a := range found {
		if i < q.Offset {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, a.json())
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// countAssistants is POST /assistants/count.
func (s *Server) countAssistants(w http.ResponseWriter, r *http.Request) error {
	found, _, err := s.filterAssistants(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, len(found))
	return nil
}

// getAssistant is GET /assistants/{id}.
func (s *Server) getAssistant(w http.ResponseWriter, r *http.Request) error {
	a, err := s.assistant(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.json())
	return nil
}

// assistantGraph is GET /assistants/{id}/graph.
func (s *Server) assistantGraph(w http.ResponseWriter, r *http.Request) error {
	a, err := s.assistant(r.PathValue("id"))
	if err != nil {
		return err
	}
	xray := r.URL.Query().Get("xray")
	writeJSON(w, http.StatusOK, GraphOf(a.Workflow.Plan, xray != "" && xray != "false" && xray != "0"))
	return nil
}

// assistantSchemas is GET /assistants/{id}/schemas.
func (s *Server) assistantSchemas(w http.ResponseWriter, r *http.Request) error {
	a, err := s.assistant(r.PathValue("id"))
	if err != nil {
		return err
	}
	sc := SchemasOf(a.Workflow.Plan)
	sc.GraphID = a.GraphID
	writeJSON(w, http.StatusOK, sc)
	return nil
}

// assistantSubgraphs is GET /assistants/{id}/subgraphs[/{ns}]: the
// schemas of the workflow's subworkflows by namespace (the WORKFLOW
// node's path, "outer|inner" when nested, with ?recurse).
func (s *Server) assistantSubgraphs(w http.ResponseWriter, r *http.Request) error {
	a, err := s.assistant(r.PathValue("id"))
	if err != nil {
		return err
	}
	ns := r.PathValue("ns")
	recurse := r.URL.Query().Get("recurse") == "true"
	out := map[string]Schemas{}
	var walk func(p *flow.Plan, prefix string, deep bool)
	walk = func(p *flow.Plan, prefix string, deep bool) {
		for _, pn := range p.Nodes {
			if pn.Sub == nil {
				continue
			}
			name := prefix + pn.Name
			if ns == "" || ns == name {
				sc := SchemasOf(pn.Sub)
				sc.GraphID = pn.Sub.Workflow.Name
				out[name] = sc
			}
			if deep {
				walk(pn.Sub, name+"|", deep)
			}
		}
	}
	walk(a.Workflow.Plan, "", recurse || ns != "")
	writeJSON(w, http.StatusOK, out)
	return nil
}
