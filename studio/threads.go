package studio

import "net/http"

// threads lists the threads. (Owned by the threads-list work: filters,
// search, pagination, live.)
func (s *Studio) threads(r *http.Request) (string, any, error) {
	return "threads", map[string]any{"Title": "Threads"}, nil
}
