package server

import (
	"cmp"
	"context"
	"slices"
)

// sortedSearch answers a thread search whose sort_by is a field the
// store does not list by (created_at, thread_id, status; the store lists
// by updated_at): every match, sorted by that field in q's order (ties:
// newest created first, then by id), then the page of limit from
// q.Offset (limit < 0: all).
func (s *Server) sortedSearch(ctx context.Context, q *threadQuery, limit int) ([]*threadJSON, error) {
	all := *q
	all.SortBy, all.SortOrder, all.Offset = "", "", 0
	out, err := s.search(ctx, &all, -1)
	if err != nil {
		return nil, err
	}
	field := func(a, b *threadJSON) int {
		switch q.SortBy {
		case "thread_id":
			return cmp.Compare(a.ThreadID, b.ThreadID)
		case "status":
			return cmp.Compare(a.Status, b.Status)
		}
		return a.CreatedAt.Compare(b.CreatedAt)
	}
	slices.SortFunc(out, func(a, b *threadJSON) int {
		c := field(a, b)
		if q.SortOrder != "asc" {
			c = -c
		}
		if c == 0 {
			c = b.CreatedAt.Compare(a.CreatedAt)
		}
		if c == 0 {
			c = cmp.Compare(a.ThreadID, b.ThreadID)
		}
		return c
	})
	if q.Offset >= len(out) {
		return nil, nil
	}
	out = out[q.Offset:]
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
