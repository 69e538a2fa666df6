package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/providers"
)

// onceEach wraps a model opener so that each spec is opened once: the
// model checkConfig opens is the one the run's LLM actions then use (a
// replay file is read once, a recorder writes one stream).
func onceEach(open func(string) (llm.Model, error)) func(string) (llm.Model, error) {
	var mu sync.Mutex
	opened := map[string]llm.Model{}
	return func(spec string) (llm.Model, error) {
		mu.Lock()
		defer mu.Unlock()
		if m, ok := opened[spec]; ok {
			return m, nil
		}
		m, err := open(spec)
		if err != nil {
			return nil, err
		}
		opened[spec] = m
		return m, nil
	}
}

// checkConfig checks, before the first step, what a run needs from its
// flags and environment, so that a mistake is a usage error (exit 2)
// before any model is called rather than a failure halfway through:
//
//   - the model of every LLM action the plan binds (its own `model`, else
//     --llm or $WEFT_LLM): a known provider, its configuration, and for
//     replay:FILE a recording that exists and parses; --llm itself even
//     when no action uses it;
//   - --embed: a known embedding provider;
//   - --docs and --db: files that exist (a --db URL is left to the
//     database), and --es: an http(s) URL or bleve:DIR with DIR present.
//
// A value from the environment rather than a flag is checked when the
// plan uses what it configures.
func (p *prepared) checkConfig(e env, o *runOptions) error {
	if !o.owf { // ollama-workflows documents check their model in registerOWF
		if err := p.checkModels(o); err != nil {
			return err
		}
	}
	ts := p.tools
	names, _ := usedTools(p.plan)
	uses := func(tools ...string) bool {
		if o.stubs != "" {
			return false // the tool actions may be stubbed: only flags are checked
		}
		for _, n := range names {
			for _, t := range tools {
				if n == t {
					return true
				}
			}
		}
		return false
	}
	if ts.embed != "" && !o.owf && (o.embed != "" || uses(toolRetrieve)) {
		if _, err := embedOptions(ts.embed, getenvOf(e)); err != nil {
			return usageErrorf("%v", err)
		}
	}
	if ts.docs != "" && (o.docs != "" || uses(toolRetrieve)) {
		if err := fileExists(ts.docs); err != nil {
			return usageErrorf("%s %s: %v", flagOrEnv(o.docs, "--docs", envDocs), ts.docs, err)
		}
	}
	if ts.db != "" && (o.db != "" || uses(toolSQLQuery, toolSQLSchema)) && !strings.Contains(ts.db, "://") && !strings.HasPrefix(ts.db, "file:") {
		if err := fileExists(ts.db); err != nil {
			return usageErrorf("%s %s: %v", flagOrEnv(o.db, "--db", envDB), ts.db, err)
		}
	}
	if ts.es != "" && (o.es != "" || uses(toolESSearch)) {
		if err := checkES(ts.es); err != nil {
			return usageErrorf("%s %s: %v", flagOrEnv(o.es, "--es", envES), redact.DSN(ts.es), err)
		}
	}
	return nil
}

// checkModels opens the model of every LLM action the plan binds, and
// --llm.
func (p *prepared) checkModels(o *runOptions) error {
	if o.llm != "" {
		if _, err := p.binder.Open(o.llm); err != nil {
			return usageErrorf("--llm %s: %v", o.llm, err)
		}
	}
	var err error
	walkPlans(p.plan, func(plan *flow.Plan, pn *flow.PlanNode) bool {
		n := pn.Node
		if p.reg.Has(n.Action) {
			return true // a built-in or stubbed action, not bound
		}
		b := plan.Workflow.Binding(n.Action)
		if b == nil || b.Type != flow.LLM {
			return true
		}
		spec := b.Config["model"].Str()
		switch {
		case spec != "":
			if _, oerr := p.binder.Open(spec); oerr != nil {
				err = usageErrorf("node %s (action %s): model %s: %v", n.Name, b.Name, spec, oerr)
			}
		case p.binder.Default == "":
			err = usageErrorf("node %s (action %s) calls a model and none is given: pass --llm PROVIDER:MODEL or set %s (known providers: %s)",
				n.Name, b.Name, providers.EnvVar, strings.Join(providers.Known(), ", "))
		default:
			if _, oerr := p.binder.Open(p.binder.Default); oerr != nil {
				err = usageErrorf("$%s %s: %v", providers.EnvVar, p.binder.Default, oerr)
			}
		}
		return err == nil
	})
	return err
}

// walkPlans calls fn for every node of plan and of its subworkflows, the
// plan's own nodes first, until fn returns false.
func walkPlans(plan *flow.Plan, fn func(*flow.Plan, *flow.PlanNode) bool) {
	seen := map[*flow.Plan]bool{}
	var walk func(*flow.Plan) bool
	walk = func(p *flow.Plan) bool {
		if p == nil || seen[p] {
			return true
		}
		seen[p] = true
		for _, pn := range p.Nodes {
			if !fn(p, pn) {
				return false
			}
		}
		for _, pn := range p.Nodes {
			if !walk(pn.Sub) {
				return false
			}
		}
		return true
	}
	walk(plan)
}

// flagOrEnv names where a value came from: the flag when it was given,
// else the environment variable.
func flagOrEnv(flagValue, flag, env string) string {
	if flagValue != "" {
		return flag
	}
	return "$" + env
}

// fileExists reports a path that is missing ("no such file or
// directory") or cannot be looked at.
func fileExists(path string) error {
	_, err := os.Stat(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkES checks an --es value: bleve:DIR with DIR present, or an http or
// https URL with a host.
func checkES(v string) error {
	if dir, ok := strings.CutPrefix(v, "bleve:"); ok {
		return fileExists(dir)
	}
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want an Elasticsearch http:// or https:// URL, or bleve:DIR")
	}
	return nil
}
