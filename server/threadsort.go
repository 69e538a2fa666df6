package server

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/weftlang/weft/store"
)

// sortedSearch answers a thread search whose sort_by is a field the
// store does not list by (created_at, thread_id, status; the store lists
// by updated_at): every match, sorted by that field in q's order (ties:
// newest created first, then by id), then the page of limit from
// q.Offset (limit < 0: all). The matches are visited as eachThread lists
// them, keeping only the first offset+limit by that order (their rows
// and statuses, not their states): memory grows with the page, not with
// the threads stored; the page's JSON is read at the end.
func (s *Server) sortedSearch(ctx context.Context, q *threadQuery, opts store.ListOptions, limit int) ([]*threadJSON, error) {
	type match struct {
		thr    *store.Thread
		status string
	}
	field := func(a, b match) int {
		switch q.SortBy {
		case "thread_id":
			return cmp.Compare(a.thr.ID, b.thr.ID)
		case "status":
			return cmp.Compare(a.status, b.status)
		}
		return a.thr.Created.Compare(b.thr.Created)
	}
	order := func(a, b match) int {
		c := field(a, b)
		if q.SortOrder != "asc" {
			c = -c
		}
		if c == 0 {
			c = b.thr.Created.Compare(a.thr.Created)
		}
		if c == 0 {
			c = cmp.Compare(a.thr.ID, b.thr.ID)
		}
		return c
	}
	keep := -1 // the matches kept: the first offset+limit
	if limit >= 0 {
		keep = q.Offset + limit
	}
	trim := func(ms []match) []match {
		slices.SortFunc(ms, order)
		if keep >= 0 && len(ms) > keep {
			clear(ms[keep:])
			ms = ms[:keep]
		}
		return ms
	}
	var ms []match
	byStatus := q.SortBy == "status"
	err := s.eachThread(ctx, q, opts, byStatus, 0, func(thr *store.Thread, tj *threadJSON) bool {
		m := match{thr: thr}
		if tj != nil {
			m.status = tj.Status
		}
		ms = append(ms, m)
		if keep >= 0 && len(ms) >= 2*keep+64 {
			ms = trim(ms)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	ms = trim(ms)
	if q.Offset >= len(ms) {
		return nil, nil
	}
	ms = ms[q.Offset:]
	out := make([]*threadJSON, 0, len(ms))
	for _, m := range ms {
		tj, err := s.threadJSON(ctx, m.thr)
		if errors.Is(err, store.ErrNotFound) || statusOf(err) == http.StatusNotFound {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, err
		}
		out = append(out, tj)
	}
	return out, nil
}
