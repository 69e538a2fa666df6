package server

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
)

// The thread statuses of the LangGraph API.
const (
	threadIdle        = "idle"
	threadBusy        = "busy"
	threadInterrupted = "interrupted"
	threadError       = "error"
)

// threadJSON is a thread as the LangGraph API shows it.
type threadJSON struct {
	ThreadID   string                     `json:"thread_id"`
	CreatedAt  time.Time                  `json:"created_at"`
	UpdatedAt  time.Time                  `json:"updated_at"`
	Metadata   map[string]any             `json:"metadata"`
	Status     string                     `json:"status"`
	Config     map[string]any             `json:"config"`
	Values     *Values                    `json:"values,omitempty"`
	Interrupts map[string][]interruptJSON `json:"interrupts,omitempty"`
	Error      *string                    `json:"error,omitempty"`
}

// interruptJSON is a question a waiting run asks: LangGraph's interrupt.
type interruptJSON struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// metaOf decodes a thread's labels into LangGraph metadata: each label
// the server wrote is a value's JSON; one another tool wrote (a plain
// text label) is that text.
func metaOf(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			x = v
		}
		out[k] = x
	}
	return out
}

// labelsOf encodes LangGraph metadata as thread labels, each value as
// canonical JSON (object keys sorted, numbers as Go prints a float64), so
// that equal values have equal labels and the store's label filter is the
// metadata filter.
func labelsOf(path string, md map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(md))
	for k, v := range md {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, invalid(path+"."+k, "%v", err)
		}
		out[k] = string(b)
	}
	return out, nil
}

// canonical re-encodes raw JSON canonically (see labelsOf).
func canonical(raw json.RawMessage) (string, error) {
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		return "", err
	}
	b, err := json.Marshal(x)
	return string(b), err
}

// threadView reads what a thread's JSON shows: its row, its state, its
// status, its questions.
func (s *Server) threadJSON(ctx context.Context, thr *store.Thread) (*threadJSON, error) {
	ts, err := s.threadState(ctx, thr.ID)
	if err != nil {
		return nil, err
	}
	vals, err := ValuesOf(ts)
	if err != nil {
		return nil, err
	}
	out := newThreadJSON(thr)
	if ts != nil && ts.State != nil {
		// As LangGraph: a thread shows values and interrupts from its
		// first run on.
		out.Values, out.Interrupts = vals, map[string][]interruptJSON{}
	}
	if out.Status, err = s.threadStatus(ctx, thr, ts); err != nil {
		return nil, err
	}
	if out.Status == threadInterrupted {
		qs, err := s.interrupts(ctx, thr)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			out.Interrupts[q.ID] = append(out.Interrupts[q.ID], q)
		}
	}
	if ts != nil && ts.State != nil && ts.State.Control.Err != "" && out.Status == threadError {
		e := ts.State.Control.Err
		out.Error = &e
	}
	return out, nil
}

// newThreadJSON is the JSON of a thread without runs: idle.
func newThreadJSON(thr *store.Thread) *threadJSON {
	return &threadJSON{
		ThreadID:  thr.ID,
		CreatedAt: thr.Created,
		UpdatedAt: thr.Updated,
		Metadata:  metaOf(thr.Meta),
		Config:    map[string]any{},
		Status:    threadIdle,
	}
}

// loadThread reads a thread's row and its latest state (nil before its
// first run); a thread that does not exist is a 404.
func (s *Server) loadThread(ctx context.Context, id string) (*store.Thread, *engine.ThreadState, error) {
	thr, err := s.opts.Store.Thread(ctx, id)
	if err != nil {
		return nil, nil, threadErr(id, err)
	}
	ts, err := s.threadState(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return thr, ts, nil
}

// threadState loads a thread's latest state; nil for a thread without
// records yet.
func (s *Server) threadState(ctx context.Context, id string) (*engine.ThreadState, error) {
	th := &engine.Threads{Store: s.opts.Store, Cache: s.opts.Service.StateCache()}
	ts, err := th.Load(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			if _, terr := s.opts.Store.Thread(ctx, id); terr == nil {
				return nil, nil // a thread with no run yet
			}
			return nil, notFound("thread", id)
		}
		return nil, err
	}
	return ts, nil
}

// threadStatus is a thread's LangGraph status: busy while a job of it
// runs, else from its last weft run.
func (s *Server) threadStatus(ctx context.Context, thr *store.Thread, ts *engine.ThreadState) (string, error) {
	busy, err := s.busy(ctx, thr.ID)
	switch {
	case err != nil:
		return "", err
	case busy:
		return threadBusy, nil
	case ts == nil || ts.State == nil:
		return threadIdle, nil
	}
	switch ts.Status() {
	case engine.Waiting:
		return threadInterrupted, nil
	case engine.Running:
		if len(ts.Paused) > 0 {
			return threadInterrupted, nil // stopped at a breakpoint
		}
	case engine.Failed:
		return threadError, nil
	}
	return threadIdle, nil
}

// busy reports whether a run of the thread is running.
func (s *Server) busy(ctx context.Context, thread string) (bool, error) {
	js, err := s.jobs.Jobs(ctx, store.JobQuery{ThreadID: thread, Status: []store.JobStatus{store.JobRunning}, Limit: 1})
	return len(js) > 0, err
}

// interrupts lists the questions a waiting thread asks, each with its
// question and the shape of the answer the human node takes.
func (s *Server) interrupts(ctx context.Context, thr *store.Thread) ([]interruptJSON, error) {
	pend, err := s.opts.Store.Pending(ctx, thr.ID)
	if err != nil {
		return nil, err
	}
	plan := s.planOf(thr)
	var out []interruptJSON
	for _, p := range pend {
		var q any
		if len(p.Question) > 0 {
			if err := json.Unmarshal(p.Question, &q); err != nil {
				q = string(p.Question)
			}
		}
		out = append(out, interruptOf(plan, p.ID, p.Node, q))
	}
	return out, nil
}

// interruptOf is a question as LangGraph's interrupt: its value holds the
// question, the node that asks and, with the plan, the JSON Schema of
// each output the answer fills.
func interruptOf(plan *flow.Plan, id, node string, question any) interruptJSON {
	v := map[string]any{"node": node, "question": question}
	if plan != nil {
		if pn := service.FindNode(plan, node); pn != nil {
			outs := map[string]any{}
			for _, o := range pn.Outputs {
				outs[o.Name] = TypeSchema(o.Type)
			}
			v["outputs"] = outs
		}
	}
	return interruptJSON{ID: id, Value: v}
}

// planOf is the plan of the assistant a thread runs, or nil.
func (s *Server) planOf(thr *store.Thread) *flow.Plan {
	for _, a := range s.assistants {
		if a.Workflow.Name == thr.Workflow && (thr.Source == "" || thr.Source == a.Workflow.Digest) {
			return a.Workflow.Plan
		}
	}
	for _, a := range s.assistants {
		if a.Workflow.Name == thr.Workflow {
			return a.Workflow.Plan
		}
	}
	return nil
}

// createThreadBody is POST /threads.
type createThreadBody struct {
	ThreadID string         `json:"thread_id"`
	Metadata map[string]any `json:"metadata"`
	IfExists string         `json:"if_exists"`
}

// createThread is POST /threads.
func (s *Server) createThread(w http.ResponseWriter, r *http.Request) error {
	var b createThreadBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.IfExists != "" && b.IfExists != "raise" && b.IfExists != "do_nothing" {
		return invalid("$.if_exists", "must be \"raise\" or \"do_nothing\", not %q", b.IfExists)
	}
	id := b.ThreadID
	if id == "" {
		id = uuid.NewString()
	}
	meta, err := labelsOf("$.metadata", b.Metadata)
	if err != nil {
		return err
	}
	ctx := r.Context()
	thr := &store.Thread{ID: id, Meta: meta}
	err = s.opts.Store.CreateThread(ctx, thr)
	switch {
	case err == nil:
		// New: no runs, no state, idle, as the store made it.
		writeJSON(w, http.StatusOK, newThreadJSON(thr))
		return nil
	case !errors.Is(err, store.ErrExists):
		return err
	case b.IfExists != "do_nothing":
		return errorf(http.StatusConflict, "thread %s already exists", id)
	}
	return s.replyThread(w, r, id, http.StatusOK)
}

// replyThread answers with the thread's JSON.
func (s *Server) replyThread(w http.ResponseWriter, r *http.Request, id string, status int) error {
	thr, err := s.opts.Store.Thread(r.Context(), id)
	if err != nil {
		return threadErr(id, err)
	}
	tj, err := s.threadJSON(r.Context(), thr)
	if err != nil {
		return err
	}
	writeJSON(w, status, tj)
	return nil
}

// threadErr turns the store's not-found into a 404 naming the thread.
func threadErr(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound("thread", id)
	}
	return err
}

// getThread is GET /threads/{id}.
func (s *Server) getThread(w http.ResponseWriter, r *http.Request) error {
	return s.replyThread(w, r, r.PathValue("id"), http.StatusOK)
}

// patchThread is PATCH /threads/{id}: metadata merged in.
func (s *Server) patchThread(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	id := r.PathValue("id")
	ctx := r.Context()
	thr, err := s.opts.Store.Thread(ctx, id)
	if err != nil {
		return threadErr(id, err)
	}
	meta, err := labelsOf("$.metadata", b.Metadata)
	if err != nil {
		return err
	}
	if thr.Meta == nil {
		thr.Meta = map[string]string{}
	}
	for k, v := range meta {
		thr.Meta[k] = v
	}
	thr.Updated = time.Time{}
	if err := s.opts.Store.UpdateThread(ctx, thr); err != nil {
		return threadErr(id, err)
	}
	return s.replyThread(w, r, id, http.StatusOK)
}

// deleteThread is DELETE /threads/{id}.
func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	ctx := r.Context()
	if _, err := s.opts.Store.Thread(ctx, id); err != nil {
		return threadErr(id, err)
	}
	js, err := s.jobs.Jobs(ctx, store.JobQuery{ThreadID: id, Status: inflight})
	if err != nil {
		return err
	}
	for _, j := range js {
		if err := s.cancelJob(ctx, j, errCancelledByClient, false); err != nil {
			return err
		}
	}
	if err := s.opts.Store.DeleteThread(ctx, id); err != nil {
		return threadErr(id, err)
	}
	s.threadWatch.wake(id) // its thread streams end
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// threadQuery is the body of POST /threads/search and /threads/count.
type threadQuery struct {
	IDs       []string                   `json:"ids"`
	Metadata  map[string]json.RawMessage `json:"metadata"`
	Values    map[string]json.RawMessage `json:"values"`
	Status    string                     `json:"status"`
	Limit     *int                       `json:"limit"`
	Offset    int                        `json:"offset"`
	SortBy    string                     `json:"sort_by"`
	SortOrder string                     `json:"sort_order"`

	// weft's extensions (LangGraph's server has none of these fields;
	// clients that do not know them never send them).

	// Query selects the threads whose id, or one of whose metadata
	// values (its JSON: "u7" is the text `"u7"`), contains it, ASCII
	// letters of either case (store.ListOptions.Search).
	Query string `json:"query"`
	// After is a cursor a search answered in X-Weft-Next-Cursor: the
	// page after it, read from there (keyset paging), not by skipping
	// offset threads. Before, from X-Weft-Prev-Cursor, is the page
	// before it. Both are for sort_by updated_at (the default) only.
	After  string `json:"after"`
	Before string `json:"before"`
}

// The headers of a search's answer with the cursors of the pages next to
// its page: Next when a thread follows it, Prev when it was asked with a
// cursor (after: the page's first thread; before: when a thread precedes
// it). weft's extension.
const (
	hdrNextCursor = "X-Weft-Next-Cursor"
	hdrPrevCursor = "X-Weft-Prev-Cursor"
)

// pageCursors are the cursors of the pages before and after a search's
// page; "": none.
type pageCursors struct{ prev, next string }

// encodeCursor is the text of a listing position: opaque to clients,
// URL-safe.
func encodeCursor(c store.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Updated.UnixNano(), 10) + "." + c.ID))
}

// decodeCursor reads a cursor encodeCursor wrote; else an invalid
// request naming path.
func decodeCursor(path, text string) (store.Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(text)
	if err == nil {
		ns, id, ok := strings.Cut(string(b), ".")
		n, perr := strconv.ParseInt(ns, 10, 64)
		if ok && perr == nil && id != "" {
			return store.Cursor{Updated: time.Unix(0, n).UTC(), ID: id}, nil
		}
	}
	return store.Cursor{}, invalid(path, "%q is not a cursor this server gave (X-Weft-Next-Cursor, X-Weft-Prev-Cursor)", text)
}

// cursorOf is a listed thread's position.
func cursorOf(tj *threadJSON) string {
	return encodeCursor(store.Cursor{Updated: tj.UpdatedAt, ID: tj.ThreadID})
}

// search lists the threads q selects, the page of limit from offset
// (limit < 0: all), after or before q's cursor, with the cursors of the
// pages next to it (none when sorted by another field than updated_at).
func (s *Server) search(ctx context.Context, q *threadQuery, limit int) ([]*threadJSON, pageCursors, error) {
	opts, err := checkSearch(q)
	if err != nil {
		return nil, pageCursors{}, err
	}
	if q.SortBy != "" && q.SortBy != "updated_at" {
		out, err := s.sortedSearch(ctx, q, opts, limit)
		return out, pageCursors{}, err
	}
	var out []*threadJSON
	skip := q.Offset
	want := 0
	if limit >= 0 {
		want = q.Offset + limit + 1 // one more says whether more follow
	}
	// A thread's JSON is read when it is needed to filter (eachThread
	// gives it), or once it is in the page (not for those skipped, nor
	// for the one after the page).
	var jerr error
	more := false
	err = s.eachThread(ctx, q, opts, false, want, func(thr *store.Thread, tj *threadJSON) bool {
		if skip > 0 {
			skip--
			return true
		}
		if limit >= 0 && len(out) == limit {
			more = true
			return false
		}
		if tj == nil {
			tj, jerr = s.threadJSON(ctx, thr)
			if errors.Is(jerr, store.ErrNotFound) || statusOf(jerr) == http.StatusNotFound {
				jerr = nil
				return true // deleted since it was listed
			}
			if jerr != nil {
				return false
			}
		}
		out = append(out, tj)
		return true
	})
	if err == nil {
		err = jerr
	}
	if err != nil {
		return nil, pageCursors{}, err
	}
	var pc pageCursors
	if len(out) == 0 {
		return out, pc, nil
	}
	if q.Before != "" {
		// Listed backwards from the cursor: put in order.
		slices.Reverse(out)
		pc.next = cursorOf(out[len(out)-1])
		if more {
			pc.prev = cursorOf(out[0])
		}
		return out, pc, nil
	}
	if more {
		pc.next = cursorOf(out[len(out)-1])
	}
	if q.After != "" || q.Offset > 0 {
		pc.prev = cursorOf(out[0])
	}
	return out, pc, nil
}

// checkSearch checks a search's status, sort and order, and returns the
// store's listing options for its metadata and order.
func checkSearch(q *threadQuery) (store.ListOptions, error) {
	if q.Offset < 0 {
		return store.ListOptions{}, invalid("$.offset", "must not be negative")
	}
	switch q.Status {
	case "", threadIdle, threadBusy, threadInterrupted, threadError:
	default:
		return store.ListOptions{}, invalid("$.status", "must be idle, busy, interrupted or error, not %q", q.Status)
	}
	opts := store.ListOptions{Meta: map[string]string{}}
	for k, raw := range q.Metadata {
		c, err := canonical(raw)
		if err != nil {
			return store.ListOptions{}, invalid("$.metadata."+k, "%v", err)
		}
		opts.Meta[k] = c
	}
	switch q.SortBy {
	case "", "updated_at", "created_at", "thread_id", "status":
	default:
		return store.ListOptions{}, invalid("$.sort_by", "must be thread_id, status, created_at or updated_at, not %q", q.SortBy)
	}
	switch q.SortOrder {
	case "", "desc":
	case "asc":
		opts.Order = store.OldestFirst
	default:
		return store.ListOptions{}, invalid("$.sort_order", "must be asc or desc, not %q", q.SortOrder)
	}
	opts.Search = q.Query
	switch {
	case q.After != "" && q.Before != "":
		return store.ListOptions{}, invalid("$.before", "cannot go with after: one cursor a page")
	case (q.After != "" || q.Before != "") && q.SortBy != "" && q.SortBy != "updated_at":
		return store.ListOptions{}, invalid("$.sort_by", "cursors page by updated_at only, not %s", q.SortBy)
	case q.After != "":
		c, err := decodeCursor("$.after", q.After)
		if err != nil {
			return store.ListOptions{}, err
		}
		opts.After = c
	case q.Before != "":
		c, err := decodeCursor("$.before", q.Before)
		if err != nil {
			return store.ListOptions{}, err
		}
		// The page before: listed from the cursor in the other order.
		opts.After = c
		if opts.Order == store.NewestFirst {
			opts.Order = store.OldestFirst
		} else {
			opts.Order = store.NewestFirst
		}
	}
	return opts, nil
}

// candidates are the statuses of a thread's last weft run that a thread
// of each LangGraph status (but busy and idle) may have: the store lists
// those threads only, and each is checked. (A run left running, by a
// process that died or at a breakpoint, may show as either.)
var candidates = map[string][]store.Status{
	threadInterrupted: {store.Waiting, store.Running},
	threadError:       {store.Failed, store.Running},
}

// eachThread calls fn with each thread q selects (but for its offset,
// limit and sort_by), in opts' order of updated_at, until fn returns
// false; want is how many it takes at most (0: unknown), which sizes the
// pages read. Its JSON is given when full, or when reading it is needed to
// select the thread (a status or values filter), else nil. The store
// filters by metadata and, for a status, by the status of the thread's
// last run (see candidates); busy threads are those of the running jobs,
// a few. ids, status and values are then checked on each thread, a page
// of the store's listing at a time: memory does not grow with the
// threads stored.
func (s *Server) eachThread(ctx context.Context, q *threadQuery, opts store.ListOptions, full bool, want int, fn func(thr *store.Thread, tj *threadJSON) bool) error {
	full = full || q.Status != "" || len(q.Values) > 0
	visit := func(thrs []*store.Thread) (bool, error) {
		for _, thr := range thrs {
			if len(q.IDs) > 0 && !slices.Contains(q.IDs, thr.ID) {
				continue
			}
			var tj *threadJSON
			if full {
				var err error
				tj, err = s.threadJSON(ctx, thr)
				if errors.Is(err, store.ErrNotFound) || statusOf(err) == http.StatusNotFound {
					continue // deleted since it was listed
				}
				if err != nil {
					return false, err
				}
				if q.Status != "" && tj.Status != q.Status || !valuesMatch(tj.Values, q.Values) {
					continue
				}
			}
			if !fn(thr, tj) {
				return false, nil
			}
		}
		return true, nil
	}
	if q.Status == threadBusy {
		thrs, err := s.busyThreads(ctx, opts)
		if err != nil {
			return err
		}
		_, err = visit(thrs)
		return err
	}
	opts.Status = candidates[q.Status]
	// Pages start at the threads the caller wants (when each thread
	// listed is one it takes), and double up to maxPage: a search with
	// a limit reads about its limit, not a page of 100.
	const maxPage = 100
	page := maxPage
	if want > 0 {
		page = min(want, maxPage)
	}
	for {
		opts.Limit = page
		thrs, err := s.opts.Store.Threads(ctx, opts)
		if err != nil {
			return err
		}
		more, err := visit(thrs)
		if err != nil || !more || len(thrs) < page {
			return err
		}
		opts.After = thrs[len(thrs)-1].Cursor()
		page = min(2*page, maxPage)
	}
}

// busyThreads lists the threads with a running job that opts selects,
// in its order: what the running jobs name, a few (one per worker), not
// a listing of every thread.
func (s *Server) busyThreads(ctx context.Context, opts store.ListOptions) ([]*store.Thread, error) {
	js, err := s.jobs.Jobs(ctx, store.JobQuery{Status: []store.JobStatus{store.JobRunning}})
	if err != nil {
		return nil, err
	}
	var out []*store.Thread
	seen := map[string]bool{}
	for _, j := range js {
		if seen[j.ThreadID] {
			continue
		}
		seen[j.ThreadID] = true
		thr, err := s.opts.Store.Thread(ctx, j.ThreadID)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			return nil, err
		}
		if opts.Match(thr) && (opts.After.IsZero() || opts.Compare(opts.After, thr.Cursor()) < 0) {
			out = append(out, thr)
		}
	}
	slices.SortFunc(out, func(a, b *store.Thread) int { return opts.Compare(a.Cursor(), b.Cursor()) })
	return out, nil
}

// valuesMatch reports whether values has each of want's keys with an
// equal value (compared canonically).
func valuesMatch(values *Values, want map[string]json.RawMessage) bool {
	for k, w := range want {
		got := values.Get(k)
		if got == nil {
			return false
		}
		a, err1 := canonical(got)
		b, err2 := canonical(w)
		if err1 != nil || err2 != nil || a != b {
			return false
		}
	}
	return true
}

// searchThreads is POST /threads/search.
func (s *Server) searchThreads(w http.ResponseWriter, r *http.Request) error {
	var q threadQuery
	if err := decode(r, &q); err != nil {
		return err
	}
	limit := 10
	if q.Limit != nil {
		if *q.Limit < 0 {
			return invalid("$.limit", "must not be negative")
		}
		limit = *q.Limit
	}
	out, pc, err := s.search(r.Context(), &q, limit)
	if err != nil {
		return err
	}
	if out == nil {
		out = []*threadJSON{}
	}
	if pc.next != "" {
		w.Header().Set(hdrNextCursor, pc.next)
	}
	if pc.prev != "" {
		w.Header().Set(hdrPrevCursor, pc.prev)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// countThreads is POST /threads/count.
func (s *Server) countThreads(w http.ResponseWriter, r *http.Request) error {
	var q threadQuery
	if err := decode(r, &q); err != nil {
		return err
	}
	q.Offset, q.After, q.Before = 0, "", "" // a count has no page
	opts, err := checkSearch(&q)
	if err != nil {
		return err
	}
	// Counted as listed, nothing kept; a thread's state is read only to
	// check a status or values filter.
	n := 0
	if err := s.eachThread(r.Context(), &q, opts, false, 0, func(*store.Thread, *threadJSON) bool { n++; return true }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, n)
	return nil
}

// copyThread is POST /threads/{id}/copy: a new thread with the same
// state and metadata.
func (s *Server) copyThread(w http.ResponseWriter, r *http.Request) error {
	// weft's extension: {"checkpoint_id": ...} (or a checkpoint, as
	// history's before) copies the thread as it was at that checkpoint.
	var b struct {
		CheckpointID string          `json:"checkpoint_id"`
		Checkpoint   json.RawMessage `json:"checkpoint"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	id := r.PathValue("id")
	ctx := r.Context()
	thr, ts, err := s.loadThread(ctx, id)
	if err != nil {
		return err
	}
	to := uuid.NewString()
	if cp := cmp.Or(b.CheckpointID, checkpointRef(b.Checkpoint)); cp != "" {
		seq, err := parseCheckpoint("$.checkpoint_id", cp)
		if err != nil {
			return err
		}
		if _, _, err := s.checkpoint(ctx, id, seq); err != nil {
			return err
		}
		th := &engine.Threads{Store: s.opts.Store}
		if _, err := th.Fork(ctx, id, seq, to, &engine.ForkOptions{Meta: thr.Meta}); err != nil {
			return err
		}
		return s.replyThread(w, r, to, http.StatusOK)
	}
	if ts == nil || ts.State == nil {
		if err := s.opts.Store.CreateThread(ctx, &store.Thread{ID: to, Meta: thr.Meta}); err != nil {
			return err
		}
		return s.replyThread(w, r, to, http.StatusOK)
	}
	th := &engine.Threads{Store: s.opts.Store}
	if _, err := th.Fork(ctx, id, ts.Seq, to, &engine.ForkOptions{Meta: thr.Meta}); err != nil {
		return err
	}
	return s.replyThread(w, r, to, http.StatusOK)
}

// checkpointJSON names a checkpoint: a record of the thread's log.
type checkpointJSON struct {
	ThreadID      string         `json:"thread_id"`
	CheckpointNS  string         `json:"checkpoint_ns"`
	CheckpointID  string         `json:"checkpoint_id"`
	CheckpointMap map[string]any `json:"checkpoint_map"`
}

// checkpointID is the id of the checkpoint at record seq.
func checkpointID(seq int64) string { return strconv.FormatInt(seq, 10) }

// stateJSON is a thread's state at a checkpoint, as GET
// /threads/{id}/state sends it.
type stateJSON struct {
	Values           *Values         `json:"values"`
	Next             []string        `json:"next"`
	Tasks            []taskJSON      `json:"tasks"`
	Metadata         map[string]any  `json:"metadata"`
	CreatedAt        *time.Time      `json:"created_at"`
	Checkpoint       *checkpointJSON `json:"checkpoint"`
	ParentCheckpoint *checkpointJSON `json:"parent_checkpoint"`
	Interrupts       []interruptJSON `json:"interrupts"`
}

// taskJSON is a task of a state: a node ready to run or waiting.
type taskJSON struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Path       []string        `json:"path"`
	Error      *string         `json:"error"`
	Interrupts []interruptJSON `json:"interrupts"`
	Checkpoint *checkpointJSON `json:"checkpoint"`
	State      any             `json:"state"`
	Result     any             `json:"result"`
}

// stateOf maps a thread state to its JSON; qs are the questions it asks.
func (s *Server) stateOf(thr *store.Thread, ts *engine.ThreadState, qs []interruptJSON, at time.Time, meta map[string]any) (*stateJSON, error) {
	vals, err := ValuesOf(ts)
	if err != nil {
		return nil, err
	}
	out := &stateJSON{Values: vals, Next: []string{}, Tasks: []taskJSON{}, Metadata: meta, Interrupts: []interruptJSON{}}
	if out.Metadata == nil {
		out.Metadata = metaOf(thr.Meta)
	}
	if ts == nil || ts.State == nil {
		return out, nil
	}
	if !at.IsZero() {
		out.CreatedAt = &at
	}
	out.Checkpoint = &checkpointJSON{ThreadID: thr.ID, CheckpointID: checkpointID(ts.Seq)}
	if ts.Seq > 1 {
		out.ParentCheckpoint = &checkpointJSON{ThreadID: thr.ID, CheckpointID: checkpointID(ts.Seq - 1)}
	}
	byNode := map[string][]interruptJSON{}
	for _, q := range qs {
		node, _ := q.Value.(map[string]any)["node"].(string)
		byNode[node] = append(byNode[node], q)
	}
	for _, t := range ts.State.Control.Tasks {
		name := ts.NodeOf(t)
		tj := taskJSON{ID: strconv.Itoa(t.ID), Name: name, Path: []string{"__pregel_pull", name}, Interrupts: []interruptJSON{}}
		for _, wt := range ts.Waiting() {
			if wt.ID == t.ID || t.Sub != nil {
				node := ts.NodeOf(wt)
				tj.Interrupts = append(tj.Interrupts, byNode[node]...)
				delete(byNode, node)
			}
		}
		out.Tasks = append(out.Tasks, tj)
		out.Next = append(out.Next, name)
		out.Interrupts = append(out.Interrupts, tj.Interrupts...)
	}
	return out, nil
}

// getState is GET /threads/{id}/state: the latest state. It loads the
// thread as a run does (from its last snapshot on), not its whole log.
func (s *Server) getState(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	ctx := r.Context()
	thr, ts, err := s.loadThread(ctx, id)
	if err != nil {
		return err
	}
	if ts == nil || ts.State == nil {
		// No run yet: LangGraph's empty state.
		writeJSON(w, http.StatusOK, map[string]any{"values": map[string]any{}, "next": []string{}, "tasks": []any{}, "created_at": nil, "checkpoint": nil, "parent_checkpoint": nil})
		return nil
	}
	cp := &engine.Checkpoint{Seq: ts.Seq, Run: ts.RunNumber, RunID: ts.Run, Step: ts.State.Control.Step, Source: engine.SourceLoop, Time: thr.Updated, State: ts}
	if ts.Seq > 1 {
		cp.Parent = ts.Seq - 1
	}
	st, err := s.stateAt(ctx, thr, cp)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}
