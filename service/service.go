package service

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tool"
	"github.com/weftlang/weft/store"
)

// Spec is what a thread's runs need besides their inputs: the workflow
// (by the digest of its canonical source, which the store keeps) and the
// components the runs use, by module id and config, with secrets by
// reference only. The store keeps it with the thread (store.Thread.Spec),
// so any process sharing the store rebuilds a thread's runtime from the
// store alone.
type Spec struct {
	// Workflow is the digest of the workflow's canonical source
	// (Workflow.Digest).
	Workflow string `json:"workflow"`
	// Components are the components of the runs, loaded in order from
	// the Service's component registry.
	Components []component.Spec `json:"components,omitempty"`
	// ContextTokens is the context window of LLM actions that set none
	// (action.Binder.ContextTokens); 0 leaves it to the server.
	ContextTokens int `json:"context_tokens,omitempty"`
}

// Options configure a Service. Store is required.
type Options struct {
	// Store keeps the threads, their runs and the workflows' sources.
	// The Service does not close it.
	Store store.Store
	// Components makes the components a Spec names; nil allows specs
	// without components only.
	Components *component.Registry
	// Env resolves the secrets components reference, and takes their
	// warnings; nil: the process environment, no warnings.
	Env *component.Env
	// Actions are actions implemented in Go by the embedding program
	// (the functions of a Go agent), available to every run besides
	// weft's built-in actions and those of the components. They win
	// over both.
	Actions *engine.Registry
	// Workflows are the workflows built in Go that threads may run,
	// by the name Go gave them (Source Go): a thread of one names it
	// in its spec ("go:NAME"), and is resumed with the one registered
	// here under that name.
	Workflows map[string]*flow.Workflow
	// LeaseTTL is the lease a run takes on its thread (see
	// engine.Threads.LeaseTTL): 0 means 30s, a negative value no lease.
	LeaseTTL time.Duration
	// ClaimWait is how long a run waits for another driver's lease on
	// its thread to run out (engine.Threads.ClaimWait); 0: no wait.
	ClaimWait time.Duration
	// Owner names this process in leases; "" chooses a random id.
	Owner string
	// Durability is when step records reach the store.
	Durability engine.Durability
	// EventsKept is how many recent events of each thread are kept for
	// subscribers that reconnect (0: 4096; negative: none, for a process
	// whose runs nobody subscribes to: Subscribe then yields only the
	// events to come, and with a cursor a *CursorExpiredError first);
	// ThreadsKept how many threads' events (0: 1024; idle threads seen
	// longest ago go first).
	EventsKept, ThreadsKept int
	// WrapAction, when set, wraps every action a run carries out
	// (registered, bound in the source, of a component): an interceptor
	// that redacts errors, traces attempts or counts calls. It is called
	// once per action, when the runtime is built or the action bound.
	WrapAction func(name string, a engine.Action) engine.Action
	// WrapModel, when set, wraps every model a run opens (recording its
	// exchanges, say); spec is the model's "PROVIDER:MODEL".
	WrapModel func(spec string, m llm.Model) llm.Model
	// WrapTool, when set, wraps every tool the runs' components give
	// (offered to LLM actions and called by TOOL nodes): tracing each
	// call, say. It is called once per tool, when the runtime is built.
	WrapTool func(t *tool.Tool) *tool.Tool
	// Tracer, when set, follows every run and every attempt of its
	// nodes (see engine.Tracer; package telemetry traces them with
	// OpenTelemetry).
	Tracer engine.Tracer
	// WorkflowsKept is how many opened workflows are kept by digest, so
	// that resuming a thread need not compile its source again (0: 256);
	// the one used longest ago goes first, and is opened again from the
	// store when a thread needs it.
	WorkflowsKept int
	// RuntimesKept is how many idle runtimes (the loaded components of
	// one spec, shared by the runs that use it) stay open for later runs
	// (0: 16); the one used longest ago is closed first.
	RuntimesKept int
	// SubscriberBuffer is how many events a subscriber may fall behind
	// before it is dropped with ErrSlowSubscriber (0: 1024).
	SubscriberBuffer int
}

// Service runs workflows in durable threads: it opens workflows, keeps
// their sources and run specs in the store, builds each run's components,
// drives runs under a lease, and fans their events out to subscribers.
// It is safe for concurrent use. Close releases the components it built.
type Service struct {
	opts   Options
	hub    *hub[engine.Event]
	plans  workflowCache // opened workflows by digest
	owner  string
	closed bool

	mu       sync.Mutex
	runtimes map[string]*runtime // by spec, without the workflow
	clock    uint64
	active   map[string]*activeRun
	states   engine.StateCache // the thread states decoded, shared by every Threads of the Service
}

// activeRun is a run this process drives.
type activeRun struct {
	cancel context.CancelCauseFunc
}

// runtime is the components of a spec, built once and shared by the runs
// that use the same ones.
type runtime struct {
	key     string
	refs    int    // runs using it; guarded by Service.mu
	used    uint64 // when it was last acquired, by Service.clock
	set     *component.Set
	runner  *engine.Runner
	threads *engine.Threads
	reg     *engine.Registry
	binder  *action.Binder
}

// New makes a Service.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("service: Options.Store is required")
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = 30 * time.Second
	}
	if opts.LeaseTTL < 0 {
		opts.LeaseTTL = 0
	}
	keep, threads, buffer := opts.EventsKept, opts.ThreadsKept, opts.SubscriberBuffer
	switch {
	case keep < 0:
		keep = 0 // none
	case keep == 0:
		keep = 4096
	}
	if threads <= 0 {
		threads = 1024
	}
	if buffer <= 0 {
		buffer = 1024
	}
	if opts.RuntimesKept <= 0 {
		opts.RuntimesKept = 16
	}
	owner := opts.Owner
	if owner == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		owner = "weft-" + hex.EncodeToString(b[:])
	}
	if opts.WorkflowsKept <= 0 {
		opts.WorkflowsKept = 256
	}
	return &Service{
		plans:    workflowCache{max: opts.WorkflowsKept, m: map[string]*cachedWorkflow{}},
		opts:     opts,
		owner:    owner,
		hub:      newHub(func(e engine.Event) int64 { return CursorOf(e).pack() }, follows, keep, buffer, threads),
		runtimes: map[string]*runtime{},
		active:   map[string]*activeRun{},
	}, nil
}

// StateCache is the cache of thread states the Service's runs load
// through (see engine.StateCache): a caller that reads the same threads
// with its own engine.Threads on the Service's store shares it by setting
// its Cache to this.
func (s *Service) StateCache() *engine.StateCache { return &s.states }

// Close closes the components the Service built. Runs in progress fail.
func (s *Service) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	for k, rt := range s.runtimes {
		errs = append(errs, rt.set.Close())
		delete(s.runtimes, k)
	}
	return errors.Join(errs...)
}

// Open opens the workflow src names (see the package function Open) and
// keeps its canonical source in the store, so that a thread of it can be
// resumed by any process sharing the store.
func (s *Service) Open(ctx context.Context, src Source) (*Workflow, error) {
	wf, err := Open(ctx, src, nil)
	if err != nil {
		return wf, err
	}
	if wf.Format == FormatGo {
		return wf, nil
	}
	if err := s.opts.Store.PutSource(ctx, wf.Digest, wf.Source); err != nil {
		return wf, fmt.Errorf("service: keeping the source of %s: %w", wf.Name, err)
	}
	s.plans.put(wf.Digest, wf)
	return wf, nil
}

// workflow returns the workflow a digest names: kept by this process, a
// registered Go workflow, or opened from its source in the store.
func (s *Service) workflow(ctx context.Context, digest string) (*Workflow, error) {
	if w := s.plans.get(digest); w != nil {
		return w, nil
	}
	if name, ok := strings.CutPrefix(digest, "go:"); ok {
		w := s.opts.Workflows[name]
		if w == nil {
			return nil, &SourceError{Digest: digest, Reason: "no Go workflow of that name is registered (Options.Workflows)"}
		}
		wf, err := Open(ctx, Go(name, w), nil)
		if err != nil {
			return nil, err
		}
		s.plans.put(digest, wf)
		return wf, nil
	}
	src, err := s.opts.Store.Source(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("service: the workflow source %s: %w", digest, err)
	}
	wf, err := Open(ctx, Stored(src), nil)
	if err != nil {
		return nil, fmt.Errorf("service: the workflow source %s: %w", digest, err)
	}
	if wf.Digest != digest {
		return nil, &SourceError{Digest: digest, Reason: fmt.Sprintf("the stored source opens as %s", wf.Digest)}
	}
	s.plans.put(digest, wf)
	return wf, nil
}

// runtime returns the runtime of spec's components, built at its first
// use, and holds it for the caller, who releases it when its run is over:
// idle runtimes beyond Options.RuntimesKept are closed, the one used
// longest ago first, so a process that sees many specs does not keep
// every one's components open.
func (s *Service) runtime(ctx context.Context, spec *Spec) (*runtime, error) {
	key, err := json.Marshal(Spec{Components: spec.Components, ContextTokens: spec.ContextTokens})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("service: closed")
	}
	if rt := s.runtimes[string(key)]; rt != nil {
		s.hold(rt)
		s.mu.Unlock()
		return rt, nil
	}
	s.mu.Unlock()
	// Loading components may take a while (an index, a connection):
	// not under the lock every run takes. Two runs that build the same
	// spec at once keep the first and close the other.
	rt, err := s.build(ctx, spec)
	if err != nil {
		return nil, err
	}
	rt.key = string(key)
	s.mu.Lock()
	other := s.runtimes[rt.key]
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, errors.Join(errors.New("service: closed"), rt.set.Close())
	case other != nil:
		s.hold(other)
		s.mu.Unlock()
		if err := rt.set.Close(); err != nil {
			s.warn("closing the components of a runtime built twice", err)
		}
		return other, nil
	}
	s.runtimes[rt.key] = rt
	s.hold(rt)
	s.mu.Unlock()
	return rt, nil
}

// hold counts a run of rt. s.mu is held.
func (s *Service) hold(rt *runtime) {
	s.clock++
	rt.refs++
	rt.used = s.clock
}

// warn reports a failure nothing returns to, through Options.Env.
func (s *Service) warn(what string, err error) {
	if s.opts.Env != nil && s.opts.Env.Warn != nil {
		s.opts.Env.Warn(fmt.Sprintf("service: %s: %v", what, err))
	}
}

// release gives back a runtime runtime returned, and closes the idle ones
// beyond Options.RuntimesKept.
func (s *Service) release(rt *runtime) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt.refs--
	for {
		var idle []*runtime
		for _, r := range s.runtimes {
			if r.refs == 0 {
				idle = append(idle, r)
			}
		}
		if len(idle) <= s.opts.RuntimesKept {
			return
		}
		oldest := slices.MinFunc(idle, func(a, b *runtime) int { return cmp.Compare(a.used, b.used) })
		delete(s.runtimes, oldest.key)
		if err := oldest.set.Close(); err != nil {
			s.warn("closing the components of an idle runtime", err)
		}
	}
}

// build loads spec's components and makes the runner of its runs.
func (s *Service) build(ctx context.Context, spec *Spec) (*runtime, error) {
	var set *component.Set
	if len(spec.Components) > 0 {
		if s.opts.Components == nil {
			return nil, errors.New("service: the spec names components and Options.Components is nil")
		}
		var err error
		if set, err = s.opts.Components.LoadAll(ctx, spec.Components, s.opts.Env); err != nil {
			return nil, err
		}
	} else {
		set = &component.Set{}
	}
	rt, err := s.assemble(ctx, set, spec)
	if err != nil {
		return nil, errors.Join(err, set.Close())
	}
	return rt, nil
}

// assemble makes the runner of set's components.
func (s *Service) assemble(ctx context.Context, set *component.Set, spec *Spec) (*runtime, error) {
	reg := engine.NewRegistry()
	action.Register(reg)
	ts, err := set.Tools(ctx)
	if err != nil {
		return nil, err
	}
	if wrap := s.opts.WrapTool; wrap != nil {
		for i, t := range ts {
			ts[i] = wrap(t)
		}
	}
	treg, err := tool.NewRegistry(ts...)
	if err != nil {
		return nil, err
	}
	action.RegisterTools(reg, treg)
	if s.opts.Actions != nil {
		for _, name := range s.opts.Actions.Names() {
			if a, ok := s.opts.Actions.Lookup(name); ok {
				reg.Replace(name, a)
			}
		}
	}
	for _, ap := range component.Of[component.ActionProvider](set) {
		// Last: a component's actions (stubs) answer in place of the
		// others.
		if err := ap.RegisterActions(reg); err != nil {
			return nil, err
		}
	}
	// HTTPClient: nil (the actions' shared client) unless Env wraps
	// transports.
	binder := &action.Binder{Tools: treg, ContextTokens: spec.ContextTokens, HTTPClient: s.opts.Env.HTTPClient()}
	models, err := set.Models()
	if err != nil {
		return nil, err
	}
	binder.Open, binder.Default = models.Open, models.Default()
	if wrap := s.opts.WrapModel; wrap != nil {
		binder.Open = func(spec string) (llm.Model, error) {
			m, err := models.Open(spec)
			if err != nil {
				return nil, err
			}
			return wrap(spec, m), nil
		}
	}
	bind := binder.Bind
	if wrap := s.opts.WrapAction; wrap != nil {
		for _, name := range reg.Names() {
			a, _ := reg.Lookup(name)
			reg.Replace(name, wrap(name, a))
		}
		bind = func(b *flow.Binding) (engine.Action, error) {
			a, err := binder.Bind(b)
			if err != nil || a == nil {
				return a, err
			}
			return wrap(b.Name, a), nil
		}
	}
	runner := &engine.Runner{Registry: reg, Bind: bind, Tracer: s.opts.Tracer}
	th := &engine.Threads{Runner: runner, Store: s.opts.Store, LeaseTTL: s.opts.LeaseTTL, ClaimWait: s.opts.ClaimWait, Owner: s.owner, Durability: s.opts.Durability, Cache: &s.states}
	return &runtime{set: set, runner: runner, threads: th, reg: reg, binder: binder}, nil
}

// StartRequest is a run to start.
type StartRequest struct {
	// Workflow is the workflow to run, from Service.Open. Required.
	Workflow *Workflow
	// Thread is the thread to run in: an existing one (its variables
	// carry over) or a new one of that id; "" makes a new thread with a
	// random id.
	Thread string
	// Components and ContextTokens are the run's components (see Spec).
	Components    []component.Spec
	ContextTokens int
	// Input are the run's parameters (input_text among them) and the
	// starting values of variables, by name (SplitInput sorts them).
	Input map[string]flow.Value
	// Update writes to variables through their reducers before the
	// first step (engine.RunOptions.Update): a new message appended to
	// a conversation.
	Update map[string]flow.Value
	// Meta labels a new thread.
	Meta map[string]string
	// Breakpoints, when set, stop the run once before or after nodes
	// (engine.Breakpoints); Resume without answers continues it.
	Breakpoints *engine.Breakpoints
	// Durability, when not engine.DefaultDurability, is the run's in
	// place of Options.Durability.
	Durability engine.Durability
	// OnEnd, when set, adds a job change to the transaction that records
	// the run's end (engine.RunOptions.OnEnd).
	OnEnd func(status engine.Status, err error) *store.JobChange
	// OnCheckpoint, when set, is told of each checkpoint the run adds to
	// its thread (engine.RunOptions.OnCheckpoint).
	OnCheckpoint func(engine.CheckpointRef)
	// Observer, when set, sees the run's events as they happen, besides
	// the Service's subscribers.
	Observer engine.Observer
}

// Start runs a workflow in a thread until it ends or waits for people.
// The thread keeps the run's Spec, so that Resume, from this process or
// another, rebuilds the same runtime. A failed run is a Result with
// Status "failed" and its error (also returned).
func (s *Service) Start(ctx context.Context, req StartRequest) (*Result, error) {
	wf := req.Workflow
	if wf == nil || wf.Plan == nil {
		return nil, errors.New("service: Start needs an opened workflow")
	}
	if wf.Format == FormatGo {
		if s.opts.Workflows[wf.Digest[len("go:"):]] == nil {
			return nil, &SourceError{Digest: wf.Digest, Reason: "a Go workflow must be registered in Options.Workflows to run in a thread"}
		}
	} else if err := s.keepSource(ctx, wf); err != nil {
		return nil, err
	}
	spec := &Spec{Workflow: wf.Digest, Components: req.Components, ContextTokens: req.ContextTokens}
	rt, err := s.runtime(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer s.release(rt)
	if err := checkActions(wf.Plan, rt); err != nil {
		return nil, err
	}
	id := req.Thread
	if id == "" {
		id = NewThreadID()
	}
	if err := s.keepSpec(ctx, id, wf, spec, req.Meta); err != nil {
		return nil, err
	}
	params, init := SplitInput(wf.Plan, req.Input)
	return s.drive(ctx, id, req.Observer, func(ctx context.Context, obs engine.Observer) (*engine.Result, error) {
		return rt.threads.Run(ctx, wf.Plan, id, params, obs, &engine.RunOptions{Meta: req.Meta, Init: init, Update: req.Update, Breakpoints: req.Breakpoints, Durability: req.Durability, OnEnd: req.OnEnd, OnCheckpoint: req.OnCheckpoint})
	})
}

// keepSource stores the source of a workflow opened with the package's
// Open, unless this Service kept it already.
func (s *Service) keepSource(ctx context.Context, wf *Workflow) error {
	if wf.Format == FormatGo {
		return nil
	}
	if s.plans.get(wf.Digest) != nil {
		return nil
	}
	if err := s.opts.Store.PutSource(ctx, wf.Digest, wf.Source); err != nil {
		return fmt.Errorf("service: keeping the source of %s: %w", wf.Name, err)
	}
	s.plans.put(wf.Digest, wf)
	return nil
}

// Run runs a workflow in memory, in no thread: nothing is stored, and a
// run that waits for people is continued with Continue on the Result it
// returned, in this process. req.Thread and req.Meta must be empty. Events
// reach req.Observer only (Subscribe is for threads).
func (s *Service) Run(ctx context.Context, req StartRequest) (*Result, error) {
	wf := req.Workflow
	if wf == nil || wf.Plan == nil {
		return nil, errors.New("service: Run needs an opened workflow")
	}
	if req.Thread != "" || req.Meta != nil {
		return nil, engine.Misuse(errors.New("service: Run keeps no thread: use Start to run in one"))
	}
	rt, err := s.runtime(ctx, &Spec{Components: req.Components, ContextTokens: req.ContextTokens})
	if err != nil {
		return nil, err
	}
	if err := checkActions(wf.Plan, rt); err != nil {
		s.release(rt)
		return nil, err
	}
	params, init := SplitInput(wf.Plan, req.Input)
	res, err := rt.runner.RunWith(ctx, wf.Plan, params, req.Observer, &engine.RunOptions{Init: init, Update: req.Update})
	return s.memResult(res, rt, wf.Plan), err
}

// Continue continues an in-memory run of Run (or of an earlier Continue)
// that waits for people, with their answers, typed against the nodes that
// ask. The Result is spent once a Continue takes it: a later one is an
// error that errors.Is finds engine.ErrStale. obs, when set, sees the
// events.
func (s *Service) Continue(ctx context.Context, res *Result, answers []Answer, obs engine.Observer) (*Result, error) {
	if res == nil || res.mem == nil {
		return res, engine.Misuse(errors.New("service: Continue needs a waiting Result of Run or Continue"))
	}
	typed, err := typeAnswers(res.mem.plan, res.Waiting, answers, "the run")
	if err != nil {
		return res, err
	}
	byID := make(map[string]map[string]flow.Value, len(typed))
	for _, a := range typed {
		byID[a.ID] = a.Outputs
	}
	next, err := res.mem.rt.runner.Resume(ctx, res.mem.res, byID, obs)
	if next == res.mem.res {
		return res, err // refused or stale: res stays as it was
	}
	return s.memResult(next, res.mem.rt, res.mem.plan), err
}

// memResult converts the result of an in-memory run, keeping what
// Continue needs while the run waits; the runtime the run holds is
// released once it has ended. A waiting Result that is dropped without
// being continued keeps its runtime open until the Service closes.
func (s *Service) memResult(res *engine.Result, rt *runtime, plan *flow.Plan) *Result {
	if res == nil || res.Status != engine.Waiting {
		s.release(rt)
		if res == nil {
			return nil
		}
		return NewResult(res)
	}
	out := NewResult(res)
	out.mem = &memRun{res: res, rt: rt, plan: plan}
	return out
}

// NewThreadID returns a random thread id, "t-" and 12 hex digits.
func NewThreadID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t-" + hex.EncodeToString(b[:])
}

// specOf returns the source digest and the spec JSON a thread of wf
// keeps.
func specOf(wf *Workflow, spec *Spec) (source string, raw json.RawMessage, err error) {
	raw, err = json.Marshal(spec)
	if err != nil {
		return "", nil, err
	}
	source = wf.Digest
	if wf.Format == FormatGo {
		source = ""
	}
	return source, raw, nil
}

// ThreadSpec sets on thr the Workflow, Source and Spec that Start, given
// req, keeps on its thread, after storing the workflow's source as Start
// does; it does not write thr. A caller that writes the thread anyway
// (the server labels a thread when it queues a run) saves Start a write
// of its own: Start finds them unchanged. Of req, only Workflow,
// Components and ContextTokens are used.
func (s *Service) ThreadSpec(ctx context.Context, thr *store.Thread, req StartRequest) error {
	wf := req.Workflow
	if wf == nil || wf.Plan == nil {
		return errors.New("service: ThreadSpec needs an opened workflow")
	}
	if err := s.keepSource(ctx, wf); err != nil {
		return err
	}
	source, raw, err := specOf(wf, &Spec{Workflow: wf.Digest, Components: req.Components, ContextTokens: req.ContextTokens})
	if err != nil {
		return err
	}
	thr.Workflow, thr.Source, thr.Spec = wf.Name, source, raw
	return nil
}

// keepSpec writes the thread's workflow and spec: a new thread is created
// with them, an existing one updated when they changed.
func (s *Service) keepSpec(ctx context.Context, id string, wf *Workflow, spec *Spec, meta map[string]string) error {
	source, raw, err := specOf(wf, spec)
	if err != nil {
		return err
	}
	st := s.opts.Store
	thr, err := st.Thread(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		err = st.CreateThread(ctx, &store.Thread{ID: id, Workflow: wf.Name, Source: source, Spec: raw, Meta: meta})
		if !errors.Is(err, store.ErrExists) {
			return err
		}
		// Another process created it meanwhile: update it as found.
		thr, err = st.Thread(ctx, id)
	}
	if err != nil {
		return err
	}
	if thr.Workflow == wf.Name && thr.Source == source && bytes.Equal(thr.Spec, raw) {
		return nil
	}
	thr.Workflow, thr.Source, thr.Spec = wf.Name, source, raw
	return st.UpdateThread(ctx, thr)
}

// checkActions finds the actions plan calls that the runtime cannot carry
// out: neither registered nor bound in the source.
func checkActions(plan *flow.Plan, rt *runtime) error {
	var missing []string
	walk(plan, func(p *flow.Plan, pn *flow.PlanNode) {
		n := pn.Node
		if n.Type == flow.Subflow || n.Action == "" || p.Workflow.Binding(n.Action) != nil || rt.reg.Has(n.Action) {
			return
		}
		if !slices.Contains(missing, n.Action) {
			missing = append(missing, n.Action)
		}
	})
	if len(missing) > 0 {
		return &MissingActionsError{Actions: missing}
	}
	return nil
}

// walk calls fn for every node of plan and of its subworkflows.
func walk(plan *flow.Plan, fn func(*flow.Plan, *flow.PlanNode)) {
	for _, pn := range plan.Nodes {
		fn(plan, pn)
		if pn.Sub != nil {
			walk(pn.Sub, fn)
		}
	}
}

// MissingActionsError is a run whose workflow calls actions that neither
// its components, weft's built-ins nor Options.Actions provide.
type MissingActionsError struct {
	Actions []string
}

// Is reports the invalid-input kind (engine.KindOf): the run's
// components do not fit its workflow.
func (e *MissingActionsError) Is(target error) bool { return target == engine.ErrInvalidInput }

// Error lists the actions.
func (e *MissingActionsError) Error() string {
	return fmt.Sprintf("no implementation of action %s: no component, built-in or Go action provides it", joinQuoted(e.Actions))
}

func joinQuoted(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", n)
	}
	return b.String()
}

// Answer answers a question a waiting run asks.
type Answer struct {
	// ID is the question's id (Question.ID); "" when the run asks one
	// question only.
	ID string `json:"id,omitempty"`
	// Values are the human node's outputs by name, each converted to its
	// output's type; when nil, Text is the answer.
	Values map[string]flow.Value `json:"values,omitempty"`
	// Text is the answer as a person types it (ParseAnswer reads it).
	Text string `json:"text,omitempty"`
}

// ResumeRequest continues a thread's run.
type ResumeRequest struct {
	Thread string
	// Workflow, when set, is the workflow to resume with instead of the
	// one the thread's spec names: it must have the same plan structure
	// (engine.PlanChangedError otherwise). The thread's spec then names
	// it.
	Workflow *Workflow
	// Components, when not nil, replace the components of the thread's
	// spec (a model moved to another server, say); the thread keeps
	// them for later resumes.
	Components []component.Spec
	// Answers answer the questions of a waiting run; none continues a
	// run whose process stopped before it ended, or that a breakpoint
	// stopped.
	Answers []Answer
	// State, when set, is the thread's state as the caller just loaded
	// it (engine.Threads.Load, not changed since): Answers are typed
	// against its questions instead of a state loaded again. The engine
	// checks the answers against the state it loads under the thread's
	// lease all the same.
	State *engine.ThreadState
	// Breakpoints, when set, stop the resumed run once before or after
	// nodes (engine.Breakpoints).
	Breakpoints *engine.Breakpoints
	// Durability, OnEnd and OnCheckpoint are as in StartRequest.
	Durability   engine.Durability
	OnEnd        func(status engine.Status, err error) *store.JobChange
	OnCheckpoint func(engine.CheckpointRef)
	// Observer, when set, sees the run's events as they happen.
	Observer engine.Observer
}

// Resume continues the last run of a thread: a waiting run takes the
// answers (each parsed and typed against the human node that asks); a run
// whose process stopped continues from its last recorded step. The
// workflow and components come from the thread's spec in the store.
func (s *Service) Resume(ctx context.Context, req ResumeRequest) (*Result, error) {
	thr, wf, rt, err := s.thread(ctx, req.Thread)
	if err != nil {
		return nil, err
	}
	defer func() { s.release(rt) }()
	if req.Workflow != nil || req.Components != nil {
		var spec Spec
		if err := json.Unmarshal(thr.Spec, &spec); err != nil {
			return nil, &SpecError{Thread: thr.ID, Reason: err.Error()}
		}
		if req.Workflow != nil {
			if req.Workflow.Plan == nil {
				return nil, errors.New("service: Resume needs an opened workflow")
			}
			if err := s.keepSource(ctx, req.Workflow); err != nil {
				return nil, err
			}
			wf = req.Workflow
			spec.Workflow = wf.Digest
		}
		if req.Components != nil {
			spec.Components = req.Components
		}
		over, err := s.runtime(ctx, &spec)
		if err != nil {
			return nil, err
		}
		s.release(rt)
		rt = over
		if err := s.keepSpec(ctx, thr.ID, wf, &spec, nil); err != nil {
			return nil, err
		}
	}
	var answers []engine.Answer
	if len(req.Answers) > 0 {
		ts := req.State
		if ts == nil || ts.Thread != thr.ID {
			var err error
			if ts, err = rt.threads.Load(ctx, thr.ID); err != nil {
				return nil, err
			}
		}
		if ts.Status() == engine.Waiting {
			if answers, err = typedAnswers(wf.Plan, ts, req.Answers); err != nil {
				return nil, err
			}
		} else {
			// No question waits: the engine says why (the run ended,
			// or another process took the answers) with its kind.
			for _, a := range req.Answers {
				answers = append(answers, engine.Answer{ID: a.ID, Outputs: a.Values})
			}
		}
	}
	return s.drive(ctx, thr.ID, req.Observer, func(ctx context.Context, obs engine.Observer) (*engine.Result, error) {
		return rt.threads.ResumeWith(ctx, wf.Plan, thr.ID, answers, obs, &engine.ResumeOptions{Breakpoints: req.Breakpoints, Durability: req.Durability, OnEnd: req.OnEnd, OnCheckpoint: req.OnCheckpoint})
	})
}

// thread loads a thread with its workflow and runtime, from its spec.
func (s *Service) thread(ctx context.Context, id string) (*store.Thread, *Workflow, *runtime, error) {
	thr, err := s.opts.Store.Thread(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	spec, err := decodeSpec(thr)
	if err != nil {
		return nil, nil, nil, err
	}
	wf, err := s.workflow(ctx, spec.Workflow)
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err := s.runtime(ctx, spec)
	if err != nil {
		return nil, nil, nil, err
	}
	return thr, wf, rt, nil
}

// ThreadView is a thread as the store keeps it, with what its spec names.
type ThreadView struct {
	// Thread is the store's row: id, workflow name, source, labels.
	Thread *store.Thread
	// Spec is the thread's run spec.
	Spec Spec
	// Workflow is the workflow the spec names, opened.
	Workflow *Workflow
	// State is the thread's state: its last run, the questions it
	// waits on (State.Waiting, State.NodeOf), its variables.
	State *engine.ThreadState
}

// Thread reads a thread: its row, its spec, its workflow (from the stored
// source) and its state. A thread that does not exist is an error that
// errors.Is finds store.ErrNotFound (and engine.KindOf says not_found);
// one without a spec a *SpecError.
func (s *Service) Thread(ctx context.Context, id string) (*ThreadView, error) {
	thr, err := s.opts.Store.Thread(ctx, id)
	if err != nil {
		return nil, err
	}
	spec, err := decodeSpec(thr)
	if err != nil {
		return nil, err
	}
	wf, err := s.workflow(ctx, spec.Workflow)
	if err != nil {
		return nil, err
	}
	th := &engine.Threads{Store: s.opts.Store, Cache: &s.states}
	ts, err := th.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	return &ThreadView{Thread: thr, Spec: *spec, Workflow: wf, State: ts}, nil
}

// decodeSpec reads a thread's spec.
func decodeSpec(thr *store.Thread) (*Spec, error) {
	if len(thr.Spec) == 0 {
		return nil, &SpecError{Thread: thr.ID, Reason: "the thread keeps no run spec (it was not started by a Service)"}
	}
	var spec Spec
	dec := json.NewDecoder(bytes.NewReader(thr.Spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return nil, &SpecError{Thread: thr.ID, Reason: err.Error()}
	}
	return &spec, nil
}

// SpecError is a thread whose run spec is missing or does not decode.
type SpecError struct {
	Thread string
	Reason string
}

// Is reports the internal kind: a thread's stored spec that does not
// decode is damage.
func (e *SpecError) Is(target error) bool { return target == engine.ErrInternal }

// Error names the thread.
func (e *SpecError) Error() string {
	return fmt.Sprintf("thread %s: run spec: %s", e.Thread, e.Reason)
}

// typedAnswers checks answers against the questions ts waits on and the
// outputs of the nodes that ask them.
func typedAnswers(plan *flow.Plan, ts *engine.ThreadState, in []Answer) ([]engine.Answer, error) {
	asks := make([]Question, 0, len(ts.Waiting()))
	for _, t := range ts.Waiting() {
		asks = append(asks, Question{ID: t.QuestionID(), Node: ts.NodeOf(t)})
	}
	return typeAnswers(plan, asks, in, "thread "+ts.Thread)
}

// typeAnswers types answers against the questions asks of a run (what
// names it in errors) and the outputs of the nodes of plan that ask them:
// an answer without an id answers the only question; one whose id no
// question has is an *engine.QuestionError; one that does not fit, an
// *AnswerError.
func typeAnswers(plan *flow.Plan, asks []Question, in []Answer, what string) ([]engine.Answer, error) {
	out := make([]engine.Answer, 0, len(in))
	for _, a := range in {
		id := a.ID
		if id == "" {
			if len(asks) != 1 {
				return nil, &AnswerError{Reason: fmt.Sprintf("%s asks %d questions: give each answer its question's id", what, len(asks))}
			}
			id = asks[0].ID
		}
		i := slices.IndexFunc(asks, func(q Question) bool { return q.ID == id })
		if i < 0 {
			qe := &engine.QuestionError{ID: id}
			for _, q := range asks {
				qe.Waiting = append(qe.Waiting, q.ID)
			}
			return nil, qe
		}
		node := asks[i].Node
		pn := FindNode(plan, node)
		if pn == nil {
			return nil, &AnswerError{Node: node, Reason: fmt.Sprintf("%s waits at node %s, which its workflow does not have", what, node)}
		}
		var vals map[string]flow.Value
		var err error
		if a.Values != nil {
			vals, err = AnswerOutputs(pn, a.Values)
		} else {
			vals, err = ParseAnswer(pn, a.Text)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, engine.Answer{ID: id, Outputs: vals})
	}
	return out, nil
}

// ErrCancelled is the cause of a run cancelled with Cancel: the thread
// records the run as cancelled, and it cannot be resumed.
var ErrCancelled = engine.ErrRunCancelled

// ErrNotRunning is Cancel of a thread with no run in progress in this
// process.
var ErrNotRunning = errors.New("service: no run of the thread is in progress here")

// ErrBusy is wrapped by the error of a Start or Resume of a thread whose
// run is in progress in this Service: one run of a thread at a time.
var ErrBusy = errors.New("service: a run of the thread is in progress here")

// Cancel stops the run of a thread that this process drives: its steps
// in flight are abandoned and the run ends with status "cancelled", its
// error wrapping ErrCancelled; the thread records it so, and the run
// cannot be resumed (a new run can start in the thread). A thread with no run in progress here is ErrNotRunning.
func (s *Service) Cancel(ctx context.Context, thread string) error {
	s.mu.Lock()
	a := s.active[thread]
	s.mu.Unlock()
	if a == nil {
		return fmt.Errorf("thread %s: %w", thread, ErrNotRunning)
	}
	a.cancel(ErrCancelled)
	return nil
}

// drive runs fn as the thread's run in progress, with the observers.
func (s *Service) drive(ctx context.Context, thread string, extra engine.Observer, fn func(context.Context, engine.Observer) (*engine.Result, error)) (*Result, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	if s.active[thread] != nil {
		s.mu.Unlock()
		return nil, &engine.ThreadError{Thread: thread, Kind: engine.KindConflict, Err: ErrBusy, Detail: "a run of the thread is in progress in this process"}
	}
	s.active[thread] = &activeRun{cancel: cancel}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.active, thread)
		s.mu.Unlock()
	}()
	obs := engine.ObserverFunc(func(e engine.Event) {
		s.hub.publish(thread, e)
		if extra != nil {
			extra.Observe(e)
		}
	})
	res, err := fn(ctx, obs)
	if res == nil {
		return nil, err
	}
	return NewResult(res), err
}

// Subscribe yields the events of a thread's runs after the cursor after
// (CursorOf an event; the zero Cursor: from the thread's first event),
// then each new one as it happens, until ctx ends. Live, a nil after
// yields only events to come. The subscription starts when
// the iteration does.
//
// Events are kept per thread for reconnecting subscribers
// (Options.EventsKept): when those after the cursor are no longer kept,
// the first yield is an error that errors.Is finds ErrCursorExpired, and
// the oldest kept follow. A subscriber that falls Options.SubscriberBuffer
// events behind is dropped: its last yield is an error that errors.Is
// finds ErrSlowSubscriber (a *SlowSubscriberError with the cursor to
// subscribe again from). A run never waits for a subscriber.
func (s *Service) Subscribe(ctx context.Context, thread string, after *Cursor) iter.Seq2[engine.Event, error] {
	p := int64(-1)
	if after != nil {
		p = after.pack()
	}
	return s.hub.subscribe(ctx, thread, p)
}

// Threads lists the threads opts selects, in one store query.
func (s *Service) Threads(ctx context.Context, opts store.ListOptions) ([]Thread, error) {
	ts, err := s.opts.Store.Threads(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := make([]Thread, len(ts))
	for i, t := range ts {
		out[i] = threadOf(t)
	}
	return out, nil
}

// workflowCache keeps the last workflows opened, by digest, at most max.
type workflowCache struct {
	mu    sync.Mutex
	max   int
	clock uint64
	m     map[string]*cachedWorkflow
}

type cachedWorkflow struct {
	wf   *Workflow
	used uint64
}

// get returns the workflow of digest, or nil.
func (c *workflowCache) get(digest string) *Workflow {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[digest]
	if e == nil {
		return nil
	}
	c.clock++
	e.used = c.clock
	return e.wf
}

// put keeps wf under digest, dropping the one used longest ago when max
// are kept.
func (c *workflowCache) put(digest string, wf *Workflow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	if e := c.m[digest]; e != nil {
		e.wf, e.used = wf, c.clock
		return
	}
	if len(c.m) >= c.max {
		var oldest string
		var at uint64
		for d, e := range c.m {
			if oldest == "" || e.used < at {
				oldest, at = d, e.used
			}
		}
		delete(c.m, oldest)
	}
	c.m[digest] = &cachedWorkflow{wf: wf, used: c.clock}
}
