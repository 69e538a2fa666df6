package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/llm/replay"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/telemetry"
)

// Environment variables the CLI answers for the components it configures
// from flags, when a flag held a secret: a password in --db's or --es's
// URL is not stored with the thread; the spec names these instead, and a
// later resume reads them from its environment.
const (
	envPGPassword = "PGPASSWORD"
	envESPassword = "WEFT_ES_PASSWORD"
)

// cliSpecs are the components of a run as the flags configure them, and
// the secrets the flags held, by the variable the specs name them with.
type cliSpecs struct {
	components []component.Spec
	secrets    map[string]string
	// flags names, by component id, the flag that configured it, for
	// the components' warnings.
	flags map[string]string
	// quiet are the components whose warnings the CLI gave already, in
	// its own words (an ollama-workflows run without a model).
	quiet map[string]bool
	// model is the default model's spec as the components serve it
	// (normalised, a replay file made absolute), modelFlag as --llm or
	// $WEFT_LLM gave it, modelComponent the id of its component.
	model, modelFlag, modelComponent string
	// modelErrs are the models the workflow's actions name whose
	// provider no component serves, and why (an unknown provider).
	modelErrs map[string]error
}

// runSpecs turns the run's flags and environment into the components of
// its spec, in the order they load: the model, the tools, the
// ollama-workflows actions, then the stubs (last: they answer in place of
// the others). Paths are absolute, so the thread can be resumed from
// another directory; credentials are references, never values.
//
// envModel says whether $WEFT_LLM names the model when --llm does not
// (run); resume replaces only what its flags give.
func runSpecs(e env, o *runOptions, ts *toolset, owfDoc, envModel bool) (*cliSpecs, error) {
	getenv := getenvOf(e)
	out := &cliSpecs{secrets: map[string]string{}, flags: map[string]string{}, quiet: map[string]bool{}, modelErrs: map[string]error{}}
	add := func(id string, cfg any) error {
		sp, err := component.SpecOf(id, cfg)
		if err != nil {
			return internal(err)
		}
		out.components = append(out.components, sp)
		return nil
	}
	policy := cliPolicy(o)
	model := o.llm
	if model == "" && envModel {
		model = getenv(providers.EnvVar)
	}
	modelFlag := model
	model = absReplay(model)
	if model != "" && !owfDoc {
		sp, err := builtin.ModelSpec(model, getenv, policy)
		if err != nil {
			return nil, usageErrorf("--llm %s: %v", model, err)
		}
		out.components = append(out.components, sp)
		out.model, out.modelFlag, out.modelComponent = normModel(model), modelFlag, sp.ID
	}
	if !owfDoc {
		// The providers of the models the workflow's actions name.
		served := map[string]bool{}
		if model != "" {
			served[providerOf(model)] = true
		}
		for _, m := range o.bound {
			if served[providerOf(m)] {
				continue
			}
			served[providerOf(m)] = true
			sp, err := builtin.ProviderSpec(m, getenv, policy)
			if err != nil {
				out.modelErrs[m] = err // Check reports the model
				continue
			}
			out.components = append(out.components, sp)
		}
	}
	if ts.docs != "" {
		cfg := map[string]any{"docs": absPath(ts.docs)}
		if ts.embed != "" {
			sp, err := builtin.EmbedSpec(ts.embed, getenv)
			if err != nil {
				return nil, usageErrorf("--embed %s: %v", ts.embed, err)
			}
			cfg["embed"] = sp
		}
		out.flags["tool.retrieve"] = "--docs " + ts.docs
		if err := add("tool.retrieve", cfg); err != nil {
			return nil, err
		}
	}
	if ts.db != "" {
		cfg := map[string]any{"db": ts.db}
		if dsn, pw, ok := splitPassword(ts.db); ok {
			cfg["db"] = dsn
			cfg["password"] = component.Secret{Env: envPGPassword}
			if getenv(envPGPassword) == "" {
				out.secrets[envPGPassword] = pw
			}
		} else if !strings.Contains(ts.db, "://") && !strings.Contains(ts.db, "=") {
			cfg["db"] = absPath(strings.TrimPrefix(ts.db, "sqlite:"))
		}
		if o.dbUnsafe {
			cfg["allow_unsafe_role"] = true
		}
		out.flags["tool.sql"] = "--db " + redact.DSN(ts.db)
		if err := add("tool.sql", cfg); err != nil {
			return nil, err
		}
	}
	if ts.es != "" {
		var cfg map[string]any
		switch dir, isBleve := strings.CutPrefix(ts.es, "bleve:"); {
		case isBleve:
			cfg = map[string]any{"backend": "bleve:" + absPath(dir)}
		default:
			u, err := url.Parse(ts.es)
			if err != nil || u.User == nil {
				cfg = map[string]any{"backend": ts.es}
				break
			}
			es := map[string]any{"username": u.User.Username()}
			if pw, ok := u.User.Password(); ok {
				es["password"] = component.Secret{Env: envESPassword}
				if getenv(envESPassword) == "" {
					out.secrets[envESPassword] = pw
				}
			}
			u.User = nil
			es["addresses"] = []string{u.String()}
			sp, err := component.SpecOf("search.elasticsearch", es)
			if err != nil {
				return nil, internal(err)
			}
			cfg = map[string]any{"search": sp}
		}
		out.flags["tool.es"] = "--es " + redact.DSN(ts.es)
		if err := add("tool.es", cfg); err != nil {
			return nil, err
		}
	}
	if envModel { // run: every run has http_request
		if err := add("tool.http", struct{}{}); err != nil {
			return nil, err
		}
	}
	if o.mcp != nil {
		// The MCP servers the source declares: a tool.mcp component
		// each, before the stubs.
		sps, err := service.MCPSpecs(o.mcp, getenv, out.components)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		out.components = append(out.components, sps...)
	}
	if owfDoc {
		out.quiet["action.owf"] = model == "" // prepare warned: "no model: task ..."
		sp, err := builtin.OWFSpec(model, o.embed, getenv, policy)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		out.components = append(out.components, sp)
	}
	if o.stubs != "" {
		if err := add("action.stubs", map[string]string{"file": absPath(o.stubs)}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// providerOf is the provider of a model spec, "ollama" of
// "ollama:llama3.1".
func providerOf(spec string) string {
	name, _, _ := strings.Cut(spec, ":")
	return strings.ToLower(strings.TrimSpace(name))
}

// normModel is a model spec as component.Models names the default model:
// the provider in lower case, no spaces around the parts.
func normModel(spec string) string {
	_, model, _ := strings.Cut(spec, ":")
	return providerOf(spec) + ":" + strings.TrimSpace(model)
}

// cliPolicy is the retry policy of the models the flags name.
func cliPolicy(o *runOptions) *builtin.Policy {
	p := defaultPolicy
	if o.llmTimeout > 0 {
		p.Timeout = o.llmTimeout
	}
	return &builtin.Policy{Timeout: component.Duration(p.Timeout), MaxAttempts: p.MaxAttempts, Jitter: p.Jitter, Concurrency: p.Concurrency}
}

// absReplay makes the file of a "replay:FILE" spec absolute.
func absReplay(spec string) string {
	if path, ok := strings.CutPrefix(spec, "replay:"); ok {
		return "replay:" + absPath(path)
	}
	return spec
}

// absPath returns path made absolute, or as it is when that fails.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// splitPassword takes the password out of a postgres URL.
func splitPassword(dsn string) (string, string, bool) {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return dsn, "", false
	}
	pw, ok := u.User.Password()
	if !ok {
		return dsn, "", false
	}
	u.User = url.User(u.User.Username())
	return u.String(), pw, true
}

// newService makes the Service of run and resume on st: weft's built-in
// components, credentials from the environment (and the flags' secrets),
// leases of $WEFT_LEASE_TTL, errors redacted of every credential the run
// is configured with, and --record's recording; actions, when not nil, are
// Go actions besides the components' (serve's kv.* actions).
func newService(e env, o *runOptions, st store.Store, specs *cliSpecs, actions *engine.Registry) (*service.Service, func(), error) {
	reg, err := builtin.New()
	if err != nil {
		return nil, nil, internal(err)
	}
	ttl, err := leaseTTL(e)
	if err != nil {
		return nil, nil, err
	}
	getenv := getenvOf(e)
	cenv := &component.Env{
		Getenv: func(k string) string {
			if v := getenv(k); v != "" {
				return v
			}
			return specs.secrets[k]
		},
		Warn: func(msg string) {
			// "tool.sql: ..." names the flag that configured it.
			id, rest, ok := strings.Cut(msg, ": ")
			if ok && specs.quiet[id] {
				return
			}
			if ok && specs.flags[id] != "" {
				msg = specs.flags[id] + ": " + rest
			}
			fmt.Fprintf(e.stderr, "weft: warning: %s\n", termSafe(msg, false))
		},
	}
	red := runRedactor(e, o)
	opts := service.Options{
		Store: st, Components: reg, Env: cenv, LeaseTTL: ttl, ClaimWait: ttl + ttl/2,
		// No command subscribes to a thread's events (weft serve
		// keeps its own run streams): none are kept for reconnecting
		// subscribers (at 1024 threads, megabytes of a server's heap).
		EventsKept: -1,
		WrapAction: func(_ string, a engine.Action) engine.Action { return redactingAction{a, red} },
	}
	if actions != nil {
		opts.Actions = actions
	}
	closeRec := func() {}
	if o.record != "" {
		f, err := os.Create(o.record)
		if err != nil {
			return nil, nil, usageErrorf("--record: %v", err)
		}
		var mu sync.Mutex
		opts.WrapModel = func(spec string, m llm.Model) llm.Model {
			return replay.NewRecorder(m, lockedWriter{&mu, f})
		}
		closeRec = func() {
			mu.Lock()
			defer mu.Unlock()
			if err := f.Close(); err != nil {
				fmt.Fprintf(e.stderr, "weft: closing %s: %v\n", o.record, err)
			}
		}
	}
	tel, err := telemetry.Setup(context.Background(), getenv, e.stderr)
	if err != nil {
		closeRec()
		return nil, nil, usageErrorf("%v", err)
	}
	closeTel := func() {}
	if tel != nil {
		opts.Tracer, opts.WrapTool = tel.Tracer, tel.Tracer.WrapTool
		// Outgoing requests (LLM providers, http_request, HTTP
		// actions, Elasticsearch) carry the trace context.
		cenv.Transport = telemetry.Transport
		o.otel = true
		inner := opts.WrapModel
		opts.WrapModel = func(spec string, m llm.Model) llm.Model {
			if inner != nil {
				m = inner(spec, m)
			}
			return tel.Tracer.WrapModel(spec, m)
		}
		closeTel = func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				fmt.Fprintf(e.stderr, "weft: warning: %v\n", termSafe(err.Error(), false))
			}
		}
	}
	s, err := service.New(opts)
	if err != nil {
		closeRec()
		closeTel()
		return nil, nil, internal(err)
	}
	return s, func() {
		if err := s.Close(); err != nil {
			fmt.Fprintf(e.stderr, "weft: warning: %v\n", termSafe(red.Error(err).Error(), false))
		}
		closeRec()
		closeTel()
	}, nil
}
