package studio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// pageSize is how many threads a page of the threads list shows.
const pageSize = 50

// threadStatuses are the LangGraph thread statuses, the list's filter.
var threadStatuses = []string{"idle", "busy", "interrupted", "error"}

// threadFilter is what the threads list's form asks for: each field a
// query parameter of GET /studio/threads.
type threadFilter struct {
	Status   string // one of threadStatuses, or "": any
	Workflow string // a graph_id, or "": any
	Meta     string // "key=value", or ""
	Q        string // a whole thread id, or ""
	Offset   int
	Count    bool // count the threads (POST /threads/count)
}

// filterOf reads the list's filter from a request's query; a bad value is
// an error the page shows above the list.
func filterOf(q url.Values) (threadFilter, error) {
	f := threadFilter{
		Status:   strings.TrimSpace(q.Get("status")),
		Workflow: strings.TrimSpace(q.Get("workflow")),
		Meta:     strings.TrimSpace(q.Get("meta")),
		Q:        strings.TrimSpace(q.Get("q")),
		Count:    q.Get("count") != "",
	}
	if o := q.Get("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 {
			return f, fmt.Errorf("offset %q: want a whole number, 0 or more", o)
		}
		f.Offset = n
	}
	if f.Status != "" && !contains(threadStatuses, f.Status) {
		return f, fmt.Errorf("status %q: want idle, busy, interrupted or error", f.Status)
	}
	return f, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// query is the filter as the body of POST /threads/search (and
// /threads/count): the workflow is the metadata graph_id, the
// metadata's value is JSON when it parses as JSON (n=3, ok=true,
// s="3") else text, and the search box is the ids filter (the API
// matches a whole thread id).
func (f threadFilter) query() (map[string]any, error) {
	body := map[string]any{}
	meta := map[string]any{}
	if f.Status != "" {
		body["status"] = f.Status
	}
	if f.Workflow != "" {
		meta["graph_id"] = f.Workflow
	}
	if f.Meta != "" {
		k, v, ok := strings.Cut(f.Meta, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("metadata %q: want key=value", f.Meta)
		}
		var x any
		if json.Unmarshal([]byte(v), &x) != nil {
			x = v
		}
		if prev, dup := meta[k]; dup && prev != x {
			return nil, fmt.Errorf("metadata %s=%s contradicts the workflow filter", k, v)
		}
		meta[k] = x
	}
	if len(meta) > 0 {
		body["metadata"] = meta
	}
	if f.Q != "" {
		body["ids"] = []string{f.Q}
	}
	return body, nil
}

// link is the list's URL for the filter at offset.
func (s *Studio) link(f threadFilter, offset int) string {
	v := url.Values{}
	for k, x := range map[string]string{"status": f.Status, "workflow": f.Workflow, "meta": f.Meta, "q": f.Q} {
		if x != "" {
			v.Set(k, x)
		}
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	u := s.prefix + "threads"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// listThread is a thread as POST /threads/search gives it, with the
// questions a waiting one asks.
type listThread struct {
	threadJSON
	Interrupts map[string][]struct {
		Value any `json:"value"`
	} `json:"interrupts"`
}

// withParam adds a query parameter (k=v, encoded) to a URL.
func withParam(u, kv string) string {
	if strings.Contains(u, "?") {
		return u + "&" + kv
	}
	return u + "?" + kv
}

// threadRow is a thread as a row of the list.
type threadRow struct {
	ID       string
	Workflow string // the metadata's graph_id, or its assistant_id
	Served   bool   // the workflow is served here (its page exists)
	Status   string
	Updated  string // relative: "3 min ago"
	UpdatedT string // absolute, RFC 3339 in UTC
	Waiting  []string
}

// threadsPage is the list's data.
type threadsPage struct {
	Title    string
	Filter   threadFilter
	Statuses []string
	Flows    []*flowPage
	Rows     []threadRow
	Error    string
	From, To int
	Total    int    // -1: not counted
	Counted  string // when Total was counted on request
	CountURL string // the URL that counts the threads
	Prev     string
	Next     string
	Live     string // the URL the list's script re-fetches
}

// threads lists the threads: a page of 50, filtered by status, workflow,
// metadata and thread id, newest update first. With ?partial=1 it is the
// list alone (the table and its pagination), which assets/threads.js
// re-fetches every 2 s to keep the list live.
func (s *Studio) threads(r *http.Request) (string, any, error) {
	p := &threadsPage{Title: "Threads", Statuses: threadStatuses, Flows: s.flows, Total: -1}
	f, err := filterOf(r.URL.Query())
	p.Filter = f
	if err != nil {
		p.Error = err.Error()
		return "threads", p, nil
	}
	body, err := f.query()
	if err != nil {
		p.Error = err.Error()
		return "threads", p, nil
	}
	var list []listThread
	if f.Q != "" {
		// One id: read that thread (the API's ids filter would list every
		// thread to find it), then check the other filters here.
		list, err = s.byID(r, f, body)
	} else {
		// One more than a page says whether a next page exists.
		body["limit"], body["offset"] = pageSize+1, f.Offset
		err = s.get(r.Context(), "POST", "/threads/search", body, &list)
		delete(body, "limit")
		delete(body, "offset")
	}
	if err != nil {
		return "", nil, err
	}
	more := len(list) > pageSize
	if more {
		list = list[:pageSize]
	}
	// The total: known when the page is the last; else counted only when
	// asked (?count=1, not by the live refresh): POST /threads/count
	// lists every thread the filter selects, and with a status reads
	// each one's state, too slow at 10,000 threads to do every 2 s.
	switch {
	case !more && (len(list) > 0 || f.Offset == 0):
		p.Total = f.Offset + len(list)
	case f.Count && r.URL.Query().Get("partial") == "":
		if err := s.get(r.Context(), "POST", "/threads/count", body, &p.Total); err != nil {
			return "", nil, err
		}
		p.Counted = time.Now().Format("15:04:05")
	}
	if p.Total < 0 || p.Counted != "" {
		p.CountURL = withParam(s.link(f, f.Offset), "count=1")
	}
	now := time.Now()
	for _, th := range list {
		p.Rows = append(p.Rows, s.rowOf(th, now))
	}
	if len(list) > 0 {
		p.From, p.To = f.Offset+1, f.Offset+len(list)
	}
	if f.Offset > 0 {
		p.Prev = s.link(f, max(f.Offset-pageSize, 0))
	}
	if more {
		p.Next = s.link(f, f.Offset+pageSize)
	}
	p.Live = withParam(s.link(f, f.Offset), "partial=1")
	return "threads", p, nil
}

// rowOf is a thread's row in the list.
func (s *Studio) rowOf(th listThread, now time.Time) threadRow {
	row := threadRow{ID: th.ID, Status: th.Status}
	if g, ok := th.Metadata["graph_id"].(string); ok {
		row.Workflow = g
	} else if a, ok := th.Metadata["assistant_id"].(string); ok {
		row.Workflow = a
	}
	row.Served = row.Workflow != "" && s.flow(row.Workflow) != nil
	if t, err := time.Parse(time.RFC3339Nano, th.Updated); err == nil {
		row.Updated = ago(now.Sub(t))
		row.UpdatedT = t.UTC().Format(time.RFC3339)
	} else {
		row.Updated, row.UpdatedT = th.Updated, th.Updated
	}
	for _, qs := range th.Interrupts {
		for _, q := range qs {
			if v, ok := q.Value.(map[string]any); ok {
				if n, ok := v["node"].(string); ok && !contains(row.Waiting, n) {
					row.Waiting = append(row.Waiting, n)
				}
			}
		}
	}
	return row
}

// ago says how long ago d was, roughly.
func ago(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
	}
}

// threadsList serves GET /studio/threads: the page, or with ?partial=1
// the list alone, for threads.js.
func (s *Studio) threadsList(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("partial") == "" {
		s.page(s.threads).ServeHTTP(w, r)
		return
	}
	_, data, err := s.threads(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var buf bytes.Buffer
	if err := s.pages["threads"].ExecuteTemplate(&buf, "list", data); err != nil {
		s.log.Error("studio: rendering the threads list", "err", err)
		http.Error(w, "rendering the list failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(buf.Bytes())
}

// byID is the thread f.Q names, if the rest of the filter (the search
// body) selects it: a list of one or none.
func (s *Studio) byID(r *http.Request, f threadFilter, body map[string]any) ([]listThread, error) {
	var th listThread
	err := s.get(r.Context(), "GET", "/threads/"+url.PathEscape(f.Q), nil, &th)
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if f.Offset > 0 || f.Status != "" && th.Status != f.Status {
		return nil, nil
	}
	meta, _ := body["metadata"].(map[string]any)
	for k, want := range meta {
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(th.Metadata[k])
		if _, ok := th.Metadata[k]; !ok || string(a) != string(b) {
			return nil, nil
		}
	}
	return []listThread{th}, nil
}
