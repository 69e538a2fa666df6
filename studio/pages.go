package studio

import (
	"bytes"
	"html/template"
	"net/http"
	"sort"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/viz"
	"github.com/weftlang/weft/viz/flowviz"
)

// flowPage is what the studio shows of a served workflow, made once.
type flowPage struct {
	ID          string // the graph id clients name it by
	Name        string
	Description string
	Format      string
	Nodes       int
	Graph       template.HTML // the SVG drawing
	Files       []sourceFile
	Inputs      []field
	Outputs     []field
	plan        *flow.Plan
}

// sourceFile is one file of a workflow's source, coloured.
type sourceFile struct {
	Name string
	HTML template.HTML
}

// field is a typed value a form asks for or a run gives.
type field struct {
	Name     string
	Type     string
	Kind     string   // the type's kind: String, Int, Float, Bool, Enum, ...
	Choices  []string // an Enum's values
	Required bool
	Node     string // for an output: its node
}

func newFlowPage(a *server.Assistant) (*flowPage, error) {
	w := a.Workflow
	id := a.GraphID
	if id == "" {
		id = w.Name
	}
	fp := &flowPage{ID: id, Name: w.Name, Format: string(w.Format), plan: w.Plan, Description: a.Description}
	if w.Plan == nil {
		return fp, nil
	}
	p := w.Plan
	if fp.Description == "" {
		fp.Description = p.Workflow.Description
	}
	fp.Nodes = len(p.Nodes)
	var svg bytes.Buffer
	if err := viz.SVG(&svg, flowviz.Graph(p.Workflow, p)); err != nil {
		return nil, err
	}
	fp.Graph = template.HTML(svg.String()) // viz escapes every text it writes
	for _, pv := range p.Params {
		fp.Inputs = append(fp.Inputs, fieldOf(pv.Name, pv.Type, pv.Default == nil && pv.Name != "input_text", ""))
	}
	for _, pn := range p.Nodes {
		if !pn.Final {
			continue
		}
		for _, o := range pn.Outputs {
			fp.Outputs = append(fp.Outputs, fieldOf(o.Name, o.Type, false, pn.Name))
		}
	}
	if w.Module != nil {
		names := make([]string, 0, len(w.Module.Sources))
		for n := range w.Module.Sources {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fp.Files = append(fp.Files, sourceFile{Name: n, HTML: colour(n, w.Module.Sources[n])})
		}
	}
	return fp, nil
}

func fieldOf(name string, t flow.Type, required bool, node string) field {
	return field{Name: name, Type: t.String(), Kind: t.Kind.String(), Choices: t.Values, Required: required, Node: node}
}

// colour renders source as HTML with its tokens in classed spans: .wf
// source by lang.Highlight, other files (JSON) as plain text.
func colour(name string, src []byte) template.HTML {
	var b strings.Builder
	if !strings.HasSuffix(name, ".wf") {
		template.HTMLEscape(&b, src)
		return template.HTML(b.String())
	}
	at := 0
	for _, sp := range lang.Highlight(src) {
		template.HTMLEscape(&b, src[at:sp.Start])
		b.WriteString(`<span class="tok-` + string(sp.Class) + `">`)
		template.HTMLEscape(&b, src[sp.Start:sp.End])
		b.WriteString(`</span>`)
		at = sp.End
	}
	template.HTMLEscape(&b, src[at:])
	return template.HTML(b.String())
}

// flow returns the served workflow id, or nil.
func (s *Studio) flow(id string) *flowPage {
	for _, fp := range s.flows {
		if fp.ID == id {
			return fp
		}
	}
	return nil
}

// home lists the served workflows.
func (s *Studio) home(r *http.Request) (string, any, error) {
	return "home", map[string]any{"Title": "Workflows", "Flows": s.flows}, nil
}

// workflow shows one workflow: graph, source, inputs and outputs, and
// the form that starts a run.
func (s *Studio) workflow(r *http.Request) (string, any, error) {
	fp := s.flow(r.PathValue("name"))
	if fp == nil {
		return "", nil, notFound("no workflow %q is served here", r.PathValue("name"))
	}
	return "workflow", map[string]any{"Title": fp.ID, "Flow": fp}, nil
}

// startRun starts a run of a workflow from its form, on a new thread,
// and sends the browser to the thread's page.
func (s *Studio) startRun(w http.ResponseWriter, r *http.Request) {
	fp := s.flow(r.PathValue("name"))
	if fp == nil || fp.plan == nil {
		s.page(func(*http.Request) (string, any, error) {
			return "", nil, notFound("no workflow %q is served here", r.PathValue("name"))
		}).ServeHTTP(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		s.render(w, http.StatusBadRequest, "error", map[string]any{"Title": "Bad form", "Status": 400, "Message": err.Error()})
		return
	}
	input, err := formInput(fp.Inputs, r.PostForm)
	if err != nil {
		s.render(w, http.StatusUnprocessableEntity, "workflow", map[string]any{"Title": fp.ID, "Flow": fp, "Error": err.Error()})
		return
	}
	var thread struct {
		ID string `json:"thread_id"`
	}
	if err := s.get(r.Context(), "POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": fp.ID}}, &thread); err != nil {
		s.fail(w, r, err)
		return
	}
	var run struct {
		ID string `json:"run_id"`
	}
	if err := s.get(r.Context(), "POST", "/threads/"+thread.ID+"/runs", map[string]any{"assistant_id": fp.ID, "input": input, "stream_mode": liveModes}, &run); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, s.prefix+"threads/"+thread.ID+"?run="+run.ID, http.StatusSeeOther)
}

// liveModes are the stream modes of the runs the studio starts: what the
// thread page's live view reads (studio.js). Not debug nor checkpoints:
// with them a task's start waits for its step's checkpoint, sent when
// the step ends.
var liveModes = []string{"values", "updates", "messages-tuple", "custom", "tasks"}

// fail answers a request whose work failed with the error page.
func (s *Studio) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.page(func(*http.Request) (string, any, error) { return "", nil, err }).ServeHTTP(w, r)
}
