package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/propagation"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
)

// DefaultMaxBody is the largest request body a Server reads when
// Options.MaxBody is 0: 4 MiB.
const DefaultMaxBody = 4 << 20

// DefaultPoolSize is how many runs the default Pool runs at once.
const DefaultPoolSize = 64

// Options configure a Server. Only Service and Assistants are required.
type Options struct {
	// Service runs the workflows; its store keeps threads and
	// checkpoints, and must also keep jobs (store.Jobs) for the runs
	// endpoints and items (store.Items) for the /store endpoints.
	Service *service.Service
	// Store is the service's store (service.Options.Store).
	Store store.Store
	// Assistants are the workflows served, one assistant each.
	Assistants []Assistant
	// APIKey, when not empty, is the key every request but GET /ok must
	// carry in its x-api-key header (compared in constant time).
	APIKey string
	// CORSOrigins are the origins a browser may call the server from
	// ("*" for any); none: no CORS headers, so browsers on other origins
	// are refused.
	CORSOrigins []string
	// MaxBody is the largest request body read, in bytes; 0 is
	// DefaultMaxBody. A larger body is refused with 413.
	MaxBody int64
	// Executor carries out runs; nil is a Pool of DefaultPoolSize.
	Executor Executor
	// Durability is when the step records of a run whose request names
	// no durability reach the store; engine.DefaultDurability is
	// engine.Async, LangGraph's default. A request's "durability"
	// ("sync", "async", "exit"), or its deprecated "checkpoint_during"
	// (false: "exit"), chooses its own.
	Durability engine.Durability
	// Version is what GET /info reports as the server's version; ""
	// is "weft".
	Version string
	// Mounts are more handlers the server serves, each under its path
	// prefix ("/riverui/"), behind the same API key and CORS as the
	// API's endpoints.
	Mounts []Mount
	// Logger logs requests that fail on the server's side and runs'
	// ends; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Propagator, when set, takes the trace context of each request
	// from its headers (propagation.TraceContext: W3C traceparent and
	// tracestate), and a run the request creates keeps it with its job,
	// so that the run's trace (Service's Tracer) is a child of the
	// client's span in whichever process carries the job out; a resume
	// is also linked to the trace of its run's first drive. Nil takes
	// none, and no global is read.
	Propagator propagation.TextMapPropagator
}

// Mount is a handler served under a path prefix (a pattern of
// net/http's ServeMux ending in "/"), or at one path (one not ending in
// "/": "/mcp").
type Mount struct {
	Prefix  string
	Handler http.Handler
}

// Assistant is a workflow served as a LangGraph assistant.
type Assistant struct {
	// GraphID names the graph; "" is the workflow's declared name.
	GraphID string
	// ID is the assistant's id; "" is the UUID (version 5) that LangGraph
	// derives from the graph id, so that clients that kept it find it
	// again after a restart.
	ID string
	// Name and Description describe it; Name "" is the graph id,
	// Description "" the workflow's description.
	Name        string
	Description string
	// Workflow is the workflow, from Service.Open.
	Workflow *service.Workflow
	// Components and ContextTokens are the run spec of its runs.
	Components    []component.Spec
	ContextTokens int
	// Created is when the assistant was defined; zero is when the
	// Server was made.
	Created time.Time
}

// graphNamespace is the namespace LangGraph's server derives a graph's
// default assistant id in: uuid5(NAMESPACE_GRAPH, graph_id).
var graphNamespace = uuid.MustParse("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

// AssistantID returns the assistant id LangGraph's server gives the
// default assistant of graphID.
func AssistantID(graphID string) string {
	return uuid.NewSHA1(graphNamespace, []byte(graphID)).String()
}

// Server serves the LangGraph Server API. Make one with New.
type Server struct {
	opts       Options
	assistants []*Assistant // in the order given
	mux        *http.ServeMux
	log        *slog.Logger
	now        func() time.Time
	started    time.Time
	jobs       store.Jobs
	kv         store.Items // nil when the store keeps none
	exec       Executor
	streams    streams
	admit      threadLocks // admits a thread's new runs one at a time (createRun)
	// With a shared executor, runs' streams go through the store's log
	// of run events (eventlog.go); bg lives until Close, for the
	// goroutines that follow it.
	shared bool
	events store.RunEvents
	bg     context.Context
	stop   context.CancelFunc

	// threadWatch wakes thread streams when a run is made or a thread
	// deleted here (threadstream.go).
	threadWatch threadWatch
}

// New makes a Server. It checks the options: a Service, assistants with a
// workflow each and no two of the same id or graph id.
func New(opts Options) (*Server, error) {
	if opts.Service == nil || opts.Store == nil {
		return nil, errors.New("server: Options.Service and Options.Store are required")
	}
	s := &Server{opts: opts, log: opts.Logger, now: opts.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.opts.MaxBody == 0 {
		s.opts.MaxBody = DefaultMaxBody
	}
	s.started = s.now().UTC()
	s.streams.now = s.now
	jobs, ok := opts.Store.(store.Jobs)
	if !ok {
		return nil, fmt.Errorf("server: the store (%T) does not keep jobs (store.Jobs)", opts.Store)
	}
	s.jobs = jobs
	s.kv, _ = opts.Store.(store.Items)
	s.exec = opts.Executor
	if s.exec == nil {
		s.exec = NewPool(DefaultPoolSize)
	}
	if sh, ok := s.exec.(SharedExecutor); ok && sh.Shared() {
		if s.events, ok = opts.Store.(store.RunEvents); !ok {
			return nil, fmt.Errorf("server: the executor is shared by several processes, and the store (%T) keeps no run events (store.RunEvents) to stream runs between them", opts.Store)
		}
		s.shared = true
	}
	s.bg, s.stop = context.WithCancel(context.Background())
	seen := map[string]bool{}
	for i, a := range opts.Assistants {
		if a.Workflow == nil || a.Workflow.Plan == nil {
			return nil, fmt.Errorf("server: assistant %d has no opened workflow", i)
		}
		if a.GraphID == "" {
			a.GraphID = a.Workflow.Name
		}
		if a.ID == "" {
			a.ID = AssistantID(a.GraphID)
		}
		if a.Name == "" {
			a.Name = a.GraphID
		}
		if a.Description == "" {
			a.Description = a.Workflow.Plan.Workflow.Description
		}
		if a.Created.IsZero() {
			a.Created = s.started
		}
		for _, k := range []string{"id " + a.ID, "graph " + a.GraphID} {
			if seen[k] {
				return nil, fmt.Errorf("server: two assistants have the %s", k)
			}
			seen[k] = true
		}
		s.assistants = append(s.assistants, &a)
	}
	s.routes()
	for _, m := range opts.Mounts {
		if !strings.HasPrefix(m.Prefix, "/") || m.Handler == nil {
			return nil, fmt.Errorf("server: mount %q: want a path that starts with / and a handler", m.Prefix)
		}
		s.mux.Handle(m.Prefix, m.Handler)
	}
	if err := s.exec.Start(s.execute); err != nil {
		return nil, err
	}
	if !s.shared {
		if err := s.recover(context.Background()); err != nil {
			_ = s.exec.Close(context.Background())
			return nil, err
		}
	} else {
		go s.pruneEvents()
	}
	return s, nil
}

// JobQueuer is implemented by an Executor that stores a new job and
// queues it in one transaction (riverexec), so that a job is never
// stored without being queued, nor queued without its row: the server
// calls CreateAndSubmit in place of store.Jobs.CreateJob and Submit.
type JobQueuer interface {
	Executor
	// CreateAndSubmit stores j (as store.Jobs.CreateJob does) and
	// queues it, or does neither.
	CreateAndSubmit(ctx context.Context, j *store.Job) error
}

// SharedExecutor is implemented by an Executor whose queue outlives the
// process and is shared by the servers of a deployment (riverexec): at
// start, a server leaves the runs it finds in the store to that queue
// instead of submitting them again (which the in-process Pool needs).
type SharedExecutor interface {
	Executor
	// Shared reports whether the queue is shared.
	Shared() bool
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

// routes registers every endpoint.
func (s *Server) routes() {
	m := http.NewServeMux()
	s.mux = m
	m.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	m.Handle("GET /info", s.handle(s.info))

	m.Handle("POST /assistants/search", s.handle(s.searchAssistants))
	m.Handle("POST /assistants/count", s.handle(s.countAssistants))
	m.Handle("GET /assistants/{id}", s.handle(s.getAssistant))
	m.Handle("GET /assistants/{id}/graph", s.handle(s.assistantGraph))
	m.Handle("GET /assistants/{id}/schemas", s.handle(s.assistantSchemas))
	m.Handle("GET /assistants/{id}/subgraphs", s.handle(s.assistantSubgraphs))
	m.Handle("GET /assistants/{id}/subgraphs/{ns}", s.handle(s.assistantSubgraphs))

	m.Handle("POST /threads", s.handle(s.createThread))
	m.Handle("POST /threads/search", s.handle(s.searchThreads))
	m.Handle("POST /threads/count", s.handle(s.countThreads))
	m.Handle("GET /threads/{id}", s.handle(s.getThread))
	m.Handle("PATCH /threads/{id}", s.handle(s.patchThread))
	m.Handle("DELETE /threads/{id}", s.handle(s.deleteThread))
	m.Handle("POST /threads/{id}/copy", s.handle(s.copyThread))
	m.Handle("GET /threads/{id}/state", s.handle(s.getState))
	m.Handle("POST /threads/{id}/state", s.handle(s.updateState))
	m.Handle("GET /threads/{id}/state/{cp}", s.handle(s.getStateAt))
	m.Handle("POST /threads/{id}/state/checkpoint", s.handle(s.postStateAt))
	m.Handle("POST /threads/{id}/history", s.handle(s.history))
	m.Handle("GET /threads/{id}/stream", s.handle(s.threadStream))

	m.Handle("POST /threads/{id}/runs", s.handle(s.createBackgroundRun))
	m.Handle("GET /threads/{id}/runs", s.handle(s.listRuns))
	m.Handle("POST /threads/{id}/runs/stream", s.handle(s.createStreamRun))
	m.Handle("POST /threads/{id}/runs/wait", s.handle(s.createWaitRun))
	m.Handle("GET /threads/{id}/runs/{rid}", s.handle(s.getRun))
	m.Handle("DELETE /threads/{id}/runs/{rid}", s.handle(s.deleteRun))
	m.Handle("GET /threads/{id}/runs/{rid}/join", s.handle(s.joinRun))
	m.Handle("GET /threads/{id}/runs/{rid}/stream", s.handle(s.joinStream))
	m.Handle("POST /threads/{id}/runs/{rid}/cancel", s.handle(s.cancelRun))
	m.Handle("POST /runs/stream", s.handle(s.createStreamRun))
	m.Handle("POST /runs/wait", s.handle(s.createWaitRun))

	m.Handle("PUT /store/items", s.handle(s.putItem))
	m.Handle("GET /store/items", s.handle(s.getItem))
	m.Handle("DELETE /store/items", s.handle(s.deleteItem))
	m.Handle("POST /store/items/search", s.handle(s.searchItems))
	m.Handle("POST /store/namespaces", s.handle(s.listNamespaces))

	m.Handle("/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return errorf(http.StatusNotFound, "no endpoint %s %s", r.Method, r.URL.Path)
	}))
}

// recover submits the jobs a stopped process left: pending ones, and
// running ones (their process died mid-run; the engine recorded every
// step, so they resume from the last). The in-process Pool assumes one
// server per store; servers that share a PostgreSQL store need an
// Executor that coordinates them (River).
func (s *Server) recover(ctx context.Context) error {
	left, err := s.jobs.Jobs(ctx, store.JobQuery{Status: []store.JobStatus{store.JobRunning}})
	if err != nil {
		return err
	}
	for _, j := range left {
		if _, err := s.jobs.SetJob(ctx, j.ID, []store.JobStatus{store.JobRunning}, store.JobPending, "", ""); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	pend, err := s.jobs.Jobs(ctx, store.JobQuery{Status: []store.JobStatus{store.JobPending}})
	if err != nil {
		return err
	}
	// Oldest first, so that each thread's jobs keep their order.
	for i := len(pend) - 1; i >= 0; i-- {
		j := pend[i]
		s.streams.open(j.ID)
		if err := s.exec.Submit(ctx, JobRef{ID: j.ID, Thread: j.ThreadID}); err != nil {
			return err
		}
	}
	if n := len(pend); n > 0 {
		s.log.Info("runs picked up from the store", "runs", n, "were_running", len(left))
	}
	return nil
}

// guard checks the API key and answers CORS, around every endpoint.
func (s *Server) guard(next http.Handler) http.Handler {
	key := []byte(s.opts.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && s.corsAllowed(origin) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Content-Location, Location, X-Weft-Next-Cursor, X-Weft-Prev-Cursor")
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Content-Type, X-Api-Key, Last-Event-ID, Authorization, Traceparent, Tracestate")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if len(key) > 0 && r.URL.Path != "/ok" && subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Api-Key")), key) != 1 {
			writeJSON(w, http.StatusUnauthorized, errorBody{Detail: "missing or wrong x-api-key"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		next.ServeHTTP(w, s.traceIn(r))
	})
}

// corsAllowed reports whether a browser page of origin may call.
func (s *Server) corsAllowed(origin string) bool {
	return slices.Contains(s.opts.CORSOrigins, "*") || slices.Contains(s.opts.CORSOrigins, origin)
}

// handle adapts an endpoint that returns an error: the error is answered
// with its status (statusOf) and {"detail": ...}; a server-side one is
// logged.
func (s *Server) handle(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := fn(w, r)
		if err == nil {
			return
		}
		s.fail(w, r, err)
	})
}

// fail answers err, unless the reply has begun (a stream), and logs what
// is the server's fault.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body := errorBody{Detail: err.Error()}
	if k := engine.KindOf(err); k != engine.KindInternal || status >= 500 {
		body.Kind = string(k)
	}
	writeJSON(w, status, body)
}

// writeJSON writes v as the JSON reply with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Detail: "encoding the reply: " + err.Error(), Kind: string(engine.KindInternal)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// decode reads the JSON body of r into v; an empty body leaves v as it
// is. Fields v does not know are ignored (clients send fields newer than
// this server); fields of the wrong type are a 422 naming their path.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return bodyError(err)
	}
	if dec.More() {
		return errorf(http.StatusUnprocessableEntity, "malformed JSON: more than one value in the body")
	}
	return nil
}

// version is the version /info reports.
func (s *Server) version() string {
	if s.opts.Version != "" {
		return s.opts.Version
	}
	return "weft"
}

// info is GET /info.
func (s *Server) info(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{
		"version":              s.version(),
		"langgraph_py_version": nil,
		"flags": map[string]bool{
			"assistants": true,
			"crons":      false,
			"langsmith":  false,
		},
		"metadata": map[string]any{},
	})
	return nil
}

// Close stops the server's runs: its executor stops taking jobs and
// cancels those running with ErrServerClosing, which go back to pending
// with every step they took recorded, for the next process to finish.
// Close waits for them, or for ctx.
func (s *Server) Close(ctx context.Context) error {
	err := s.exec.Close(ctx)
	s.stop()
	// Runs queued here and not started are pending in the store: their
	// clients are told so rather than left waiting.
	s.streams.mu.Lock()
	open := make([]*runStream, 0, len(s.streams.byID))
	for _, st := range s.streams.byID {
		open = append(open, st)
	}
	s.streams.mu.Unlock()
	for _, st := range open {
		st.mu.Lock()
		done := st.done
		st.mu.Unlock()
		if !done {
			s.closing(st)
		}
	}
	return err
}
