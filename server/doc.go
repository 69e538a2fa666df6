// Package server serves weft workflows over the LangGraph Server API, so
// that clients written for LangGraph (the @langchain/langgraph-sdk client,
// agent-chat-ui, LangGraph Studio, plain HTTP) run weft workflows
// unmodified.
//
// A [Server] is an http.Handler over a [service.Service]: each served
// workflow is an assistant, each LangGraph thread a weft thread in the
// service's store, each LangGraph run a job (store.Job) that an [Executor]
// carries out by starting or resuming the thread's weft run. The server
// keeps nothing a restart would lose: threads, jobs and checkpoints are in
// the store, so a process that stops (or is killed) mid-run leaves jobs that
// the next one picks up.
//
// The package is a library: `weft serve` builds one from its flags, and a
// Go program can mount [Server.Handler] in its own mux, with its own
// middleware, next to its own routes.
package server
