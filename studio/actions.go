package studio

import "net/http"

// The thread page's actions, each a plain form POST that works without
// JavaScript and sends the browser back to a page (owned by the thread
// view work).

// answer answers the question a waiting thread asks, resuming its run.
func (s *Studio) answer(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "not built yet", http.StatusNotImplemented)
}

// fork copies a thread at a step with edited values into a new thread.
func (s *Studio) fork(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "not built yet", http.StatusNotImplemented)
}

// cancel cancels a thread's run in progress.
func (s *Studio) cancel(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "not built yet", http.StatusNotImplemented)
}
