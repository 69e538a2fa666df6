package studio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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

// threadFilter is what the threads list's form asks for, and the page:
// each field a query parameter of GET /studio/threads.
type threadFilter struct {
	Status   string // one of threadStatuses, or "": any
	Workflow string // a graph_id, or "": any
	Meta     string // "key=value", or ""
	Q        string // a part of a thread id or of a metadata value, or ""
	// After and Before are the API's cursors (X-Weft-Next-Cursor,
	// X-Weft-Prev-Cursor): the page after or before one; both "": the
	// first page.
	After, Before string
	Page          int  // the page's number, 1 for the first: for "Threads 51–100" only
	Count         bool // count the threads (POST /threads/count)
}

// filterOf reads the list's filter from a request's query; a bad value is
// an error the page shows above the list.
func filterOf(q url.Values) (threadFilter, error) {
	f := threadFilter{
		Status:   strings.TrimSpace(q.Get("status")),
		Workflow: strings.TrimSpace(q.Get("workflow")),
		Meta:     strings.TrimSpace(q.Get("meta")),
		Q:        strings.TrimSpace(q.Get("q")),
		After:    q.Get("after"),
		Before:   q.Get("before"),
		Page:     1,
		Count:    q.Get("count") != "",
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return f, fmt.Errorf("page %q: want a whole number, 1 or more", p)
		}
		f.Page = n
	}
	if f.After != "" && f.Before != "" {
		return f, errors.New("after and before: one at a time")
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
// s="3") else text, and the search box is weft's query (a part of an
// id or of a metadata value).
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
		body["query"] = f.Q
	}
	return body, nil
}

// link is the list's URL for the filter at a page: after or before a
// cursor (at most one), numbered page.
func (s *Studio) link(f threadFilter, after, before string, page int) string {
	v := url.Values{}
	for k, x := range map[string]string{"status": f.Status, "workflow": f.Workflow, "meta": f.Meta, "q": f.Q, "after": after, "before": before} {
		if x != "" {
			v.Set(k, x)
		}
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	u := s.prefix + "threads"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// here is the list's URL for the page f is.
func (s *Studio) here(f threadFilter) string { return s.link(f, f.After, f.Before, f.Page) }

// search reads a page of POST /threads/search, with the cursors of the
// pages before and after it; a 422 (a cursor the API does not take) is
// errBadPage.
func (s *Studio) search(ctx context.Context, body map[string]any) (list []listThread, prev, next string, err error) {
	rec, err := s.do(ctx, "POST", "/threads/search", body)
	if err != nil {
		return nil, "", "", err
	}
	b := rec.Body.Bytes()
	switch rec.Code {
	case http.StatusOK:
	case http.StatusUnprocessableEntity:
		return nil, "", "", fmt.Errorf("%w: %s", errBadPage, bytes.TrimSpace(b))
	default:
		return nil, "", "", fmt.Errorf("POST /threads/search: %d %s", rec.Code, bytes.TrimSpace(b))
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, "", "", fmt.Errorf("POST /threads/search: %w", err)
	}
	return list, rec.Header().Get("X-Weft-Prev-Cursor"), rec.Header().Get("X-Weft-Next-Cursor"), nil
}

// errBadPage is a search the API refused: a cursor in the URL that it
// does not take.
var errBadPage = errors.New("the API refused the search")

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
// metadata and a part of an id or metadata value, newest update first;
// the pages go by the API's cursors (weft's after and before), so a page
// far in costs what the first does. With ?partial=1 it is the list alone
// (the table and its pagination), which assets/threads.js re-fetches
// every 2 s to keep the list live.
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
	page := maps.Clone(body)
	page["limit"] = pageSize
	if f.After != "" {
		page["after"] = f.After
	}
	if f.Before != "" {
		page["before"] = f.Before
	}
	list, prev, next, err := s.search(r.Context(), page)
	if errors.Is(err, errBadPage) {
		p.Error = err.Error() + " (start again from the first page)"
		return "threads", p, nil
	}
	if err != nil {
		return "", nil, err
	}
	first := f.After == "" && (f.Before == "" || prev == "")
	if first {
		f.Page = 1 // back at the start, whatever the URL said
	}
	// The total: known when the page is the last; else counted only when
	// asked (?count=1, not by the live refresh): POST /threads/count
	// lists every thread the filter selects, and with a status reads
	// each one's state, too slow at 10,000 threads to do every 2 s.
	switch {
	case next == "" && (len(list) > 0 || first):
		p.Total = (f.Page-1)*pageSize + len(list)
	case f.Count && r.URL.Query().Get("partial") == "":
		if err := s.get(r.Context(), "POST", "/threads/count", body, &p.Total); err != nil {
			return "", nil, err
		}
		p.Counted = time.Now().Format("15:04:05")
	}
	if p.Total < 0 || p.Counted != "" {
		p.CountURL = withParam(s.here(f), "count=1")
	}
	now := time.Now()
	for _, th := range list {
		p.Rows = append(p.Rows, s.rowOf(th, now))
	}
	if len(list) > 0 {
		p.From = (f.Page-1)*pageSize + 1
		p.To = p.From + len(list) - 1
	}
	if prev != "" && !first {
		p.Prev = s.link(f, "", prev, f.Page-1)
	}
	if next != "" {
		p.Next = s.link(f, next, "", f.Page+1)
	}
	p.Live = withParam(s.here(f), "partial=1")
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
	s.fragment(w, "threads", "list", data, err)
}

// fragment writes the part tmpl of page name with data (a part a page's
// script fetches to replace its own), or err.
func (s *Studio) fragment(w http.ResponseWriter, name, tmpl string, data any, err error) {
	if err != nil {
		status := http.StatusBadGateway
		if he := (*httpError)(nil); errors.As(err, &he) {
			status = he.status
		}
		http.Error(w, err.Error(), status)
		return
	}
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, tmpl, data); err != nil {
		s.log.Error("studio: rendering a part of a page", "page", name, "part", tmpl, "err", err)
		http.Error(w, "rendering the page's "+tmpl+" failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(buf.Bytes())
}

// threadPage serves a thread's page, or with ?partial=graph its graph
// alone: the part a thread page opened before the thread named its
// workflow fetches once a run shows it.
func (s *Studio) threadPage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("partial") != "graph" {
		s.page(s.thread).ServeHTTP(w, r)
		return
	}
	_, data, err := s.thread(r)
	s.fragment(w, "thread", "graph", data, err)
}
