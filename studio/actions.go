package studio

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// The thread page's actions, each a plain form POST that works without
// JavaScript and sends the browser back to a page: a failure the person
// can fix comes back as ?error= on that page.

// back sends the browser to the studio page at path, with msg as its
// error when there is one.
func (s *Studio) back(w http.ResponseWriter, r *http.Request, path, msg string) {
	if msg != "" {
		path += "?error=" + url.QueryEscape(msg)
	}
	http.Redirect(w, r, s.prefix+path, http.StatusSeeOther)
}

// threadOf reads the thread the request names and its workflow's page.
func (s *Studio) threadOf(r *http.Request) (*threadJSON, *flowPage, error) {
	var th threadJSON
	if err := s.get(r.Context(), "GET", "/threads/"+url.PathEscape(r.PathValue("id")), nil, &th); err != nil {
		return nil, nil, err
	}
	graph, _ := th.Metadata["graph_id"].(string)
	fp := s.flow(graph)
	if fp == nil || fp.plan == nil {
		return &th, nil, notFound("thread %s names no workflow served here", th.ID)
	}
	return &th, fp, nil
}

// threadNow is threadOf and the thread's state now.
func (s *Studio) threadNow(r *http.Request) (*threadJSON, *flowPage, *stateJSON, error) {
	th, fp, err := s.threadOf(r)
	if err != nil {
		return nil, nil, nil, err
	}
	var st stateJSON
	if err := s.get(r.Context(), "GET", "/threads/"+url.PathEscape(th.ID)+"/state", nil, &st); err != nil {
		return nil, nil, nil, err
	}
	return th, fp, &st, nil
}

// apiError is the message of an API answer that is not 2xx, or "".
func apiError(code int, body []byte) string {
	if code >= 200 && code < 300 {
		return ""
	}
	var e struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil && e.Detail != "" {
		return e.Detail
	}
	return fmt.Sprintf("%d %s", code, body)
}

// answer answers the questions a waiting thread asks, resuming its run:
// the form's fields are the HUMAN node's outputs, typed.
func (s *Studio) answer(w http.ResponseWriter, r *http.Request) {
	th, fp, st, err := s.threadNow(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page := "threads/" + url.PathEscape(th.ID)
	qs := questions(fp.plan, st)
	if len(qs) == 0 {
		s.back(w, r, page, "this thread asks no question now")
		return
	}
	if err := r.ParseForm(); err != nil {
		s.back(w, r, page, err.Error())
		return
	}
	// One question: its outputs. Several: the one the form answers, by id.
	q := qs[0]
	if len(qs) > 1 {
		found := false
		for _, x := range qs {
			if x.ID == r.PostForm.Get("question") {
				q, found = x, true
			}
		}
		if !found {
			s.back(w, r, page, "which question does this answer? the form names none the thread asks")
			return
		}
	}
	vals, err := formInput(q.Fields, r.PostForm)
	if err != nil {
		s.back(w, r, page, err.Error())
		return
	}
	var resume any = vals
	if len(qs) > 1 {
		resume = map[string]any{q.ID: vals}
	}
	s.runAndFollow(w, r, page, th.ID, map[string]any{"assistant_id": fp.ID, "command": map[string]any{"resume": resume}}, "the answer was refused: ")
}

// runAndFollow starts a run of thread with the request body and sends the
// browser to page, following it; a refusal goes back to page, saying
// why (refused, then the API's words).
func (s *Studio) runAndFollow(w http.ResponseWriter, r *http.Request, page, thread string, body map[string]any, refused string) {
	code, reply, err := s.call(r.Context(), "POST", "/threads/"+url.PathEscape(thread)+"/runs", body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if msg := apiError(code, reply); msg != "" {
		s.back(w, r, page, refused+msg)
		return
	}
	var run struct {
		ID string `json:"run_id"`
	}
	if err := json.Unmarshal(reply, &run); err != nil || run.ID == "" {
		// Started, but its id is not known: the page finds the
		// thread's run in progress itself.
		s.log.Warn("studio: a started run's reply names no run", "thread", thread, "reply", string(reply), "err", err)
		http.Redirect(w, r, s.prefix+page, http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, s.prefix+page+"?run="+url.QueryEscape(run.ID), http.StatusSeeOther)
}

// fork copies a thread, as it was at one of its steps, into a new one
// with edited values: the API copies the thread at the checkpoint (POST
// /threads/{id}/copy {checkpoint_id}), then writes the parameters and
// variables as the form edited them (POST /threads/{new}/state). The copy
// keeps its parent in its metadata (forked_from, forked_at).
func (s *Studio) fork(w http.ResponseWriter, r *http.Request) {
	th, fp, err := s.threadOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, &httpError{http.StatusBadRequest, err.Error()})
		return
	}
	cp := r.PostForm.Get("checkpoint_id")
	esc := "/threads/" + url.PathEscape(th.ID)
	stepPath := "threads/" + url.PathEscape(th.ID) + "/steps/" + url.PathEscape(cp)
	var st stateJSON
	if err := s.get(r.Context(), "GET", esc+"/state/"+url.PathEscape(cp), nil, &st); err != nil {
		s.fail(w, r, err)
		return
	}
	var fields []field
	for _, e := range editable(fp.plan, st.Values) {
		fields = append(fields, e.field)
	}
	edited, err := formInput(fields, r.PostForm)
	if err != nil {
		s.back(w, r, stepPath, err.Error())
		return
	}
	values := map[string]any{}
	for k, v := range edited {
		values[k] = v
	}
	var copied threadJSON
	if err := s.get(r.Context(), "POST", esc+"/copy", map[string]any{"checkpoint_id": cp}, &copied); err != nil {
		s.fail(w, r, err)
		return
	}
	md := map[string]any{"forked_from": th.ID, "forked_at": cp}
	if err := s.get(r.Context(), "PATCH", "/threads/"+url.PathEscape(copied.ID), map[string]any{"metadata": md}, &copied); err != nil {
		s.fail(w, r, err)
		return
	}
	newPath := "threads/" + url.PathEscape(copied.ID)
	code, body, err := s.call(r.Context(), "POST", "/threads/"+url.PathEscape(copied.ID)+"/state", map[string]any{"values": values})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if msg := apiError(code, body); msg != "" {
		s.back(w, r, newPath, "the step's values were not written to the copy: "+msg)
		return
	}
	http.Redirect(w, r, s.prefix+newPath, http.StatusSeeOther)
}

// runOn runs a thread on (a fork): a thread stopped in the middle of a
// run (its state names nodes to run next) continues with a run of input
// null; one whose run had ended starts a new run from its parameters and
// variables as they are now.
func (s *Studio) runOn(w http.ResponseWriter, r *http.Request) {
	th, fp, st, err := s.threadNow(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page := "threads/" + url.PathEscape(th.ID)
	var input any // null: continue
	if len(st.Next) == 0 {
		in := map[string]any{}
		for _, e := range editable(fp.plan, st.Values) {
			if v, ok := st.Values[e.Name]; ok {
				in[e.Name] = v
			}
		}
		input = in
	}
	s.runAndFollow(w, r, page, th.ID, map[string]any{"assistant_id": fp.ID, "input": input}, "the run was refused: ")
}

// cancel cancels a thread's runs in progress (GET /threads/{id}/runs,
// then POST …/cancel on each that is pending or running).
func (s *Studio) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	esc := "/threads/" + url.PathEscape(id)
	var runs []struct {
		ID     string `json:"run_id"`
		Status string `json:"status"`
	}
	if err := s.get(r.Context(), "GET", esc+"/runs", nil, &runs); err != nil {
		s.fail(w, r, err)
		return
	}
	var errs []error
	n := 0
	for _, run := range runs {
		if run.Status != "running" && run.Status != "pending" {
			continue
		}
		n++
		code, body, err := s.call(r.Context(), "POST", esc+"/runs/"+url.PathEscape(run.ID)+"/cancel?wait=1", nil)
		if err == nil {
			if msg := apiError(code, body); msg != "" {
				err = fmt.Errorf("run %s: %s", run.ID, msg)
			}
		}
		errs = append(errs, err)
	}
	msg := ""
	if err := errors.Join(errs...); err != nil {
		msg = "cancelling failed: " + err.Error()
	} else if n == 0 {
		msg = "no run of this thread is in progress"
	}
	s.back(w, r, "threads/"+url.PathEscape(id), msg)
}
