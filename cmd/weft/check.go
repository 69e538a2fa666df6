package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/mcp"
	"github.com/weftlang/weft/service"
)

// check checks, before the first step, what the run needs from its flags
// and environment (service.Check against the components the flags
// configure), so that a mistake is a usage error (exit 2) before any
// model is called rather than a failure halfway through:
//
//   - the model of every LLM action the plan binds (its own `model`, else
//     --llm or $WEFT_LLM): a known provider, its configuration, and for
//     replay:FILE a recording that exists and parses;
//   - --docs, --db and --es: files that exist (a --db URL is left to the
//     database), an http(s) URL or bleve:DIR with DIR present; a value
//     from the environment rather than a flag only when the plan uses
//     the tools it configures;
//   - the built-in tools the plan calls: their flag is set.
//
// Actions the workflow calls that the run lacks are printed as
// diagnostics with advice on stubs (exit 1), as a compile error would be.
// The runtime Check builds is the one the run then uses.
func (p *prepared) check(ctx context.Context, e env, o *runOptions, svc *service.Service, specs *cliSpecs) error {
	err := svc.Check(ctx, service.StartRequest{Workflow: p.wf, Components: specs.components, ContextTokens: o.contextTokens})
	if err == nil {
		return nil
	}
	var ce *service.CheckError
	if !errors.As(err, &ce) {
		return exitFor(err, internal)
	}
	if missing := p.missingActions(e, o, ce); missing != nil {
		return missing
	}
	var msgs []string
	for _, pr := range ce.Problems {
		if msg := p.problemMessage(e, o, specs, &pr); msg != "" {
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	for _, m := range msgs[:len(msgs)-1] {
		fmt.Fprintf(e.stderr, "weft: %s\n", termSafe(m, true))
	}
	return usageErrorf("%s", msgs[len(msgs)-1])
}

// missingActions prints the actions the run lacks as the compiler's
// diagnostics, with advice on stubs, and returns the exit error; nil when
// none is missing. A TOOL node naming a tool that is not built in counts
// as one.
func (p *prepared) missingActions(e env, o *runOptions, ce *service.CheckError) error {
	var ds flow.Diagnostics
	var names []string
	for _, pr := range ce.Problems {
		isAction := pr.What == service.ProblemAction
		if pr.What == service.ProblemTool && pr.Name == pr.Action {
			flag, _ := toolFlag(pr.Name)
			isAction = flag == ""
		}
		if !isAction {
			continue
		}
		ds = append(ds, flow.Diagnostic{Pos: pr.Pos, Severity: flow.Error, Code: "unknown-action",
			Msg: fmt.Sprintf("node %s: unknown action %q; bind it with an action block or register it in Go", pr.Node, pr.Name)})
		if !slices.Contains(names, pr.Name) {
			names = append(names, pr.Name)
		}
	}
	if len(ds) == 0 {
		return nil
	}
	printDiags(e.stderr, ds, p.mod)
	slices.Sort(names)
	if o.stubs == "" {
		fmt.Fprintln(e.stderr, "weft: to run without the real actions, answer them from a stubs file: --stubs FILE (see docs/cli.md)")
	} else {
		fmt.Fprintf(e.stderr, "weft: %s has no stub for %s; add one for each (an empty list, as in `%s: []`, is enough for an action this run does not call)\n", o.stubs, strings.Join(names, ", "), names[0])
	}
	return silent(exitFailed)
}

// problemMessage words a problem Check found in the flags' terms, or
// returns "" for one the CLI does not hold against the run: a resource
// configured from the environment, not a flag, that the plan does not use.
func (p *prepared) problemMessage(e env, o *runOptions, specs *cliSpecs, pr *service.Problem) string {
	who := "node " + pr.Node
	if pr.Action != "" && pr.Action != pr.Name && pr.Action != pr.Node {
		who += " (action " + pr.Action + ")"
	}
	switch pr.What {
	case service.ProblemTool:
		if flag, env := toolFlag(pr.Name); flag != "" {
			return fmt.Sprintf("%s calls the %s tool, which needs %s (or $%s)", who, pr.Name, flag, env)
		}
		return fmt.Sprintf("%s calls the %s tool, which weft run does not have", who, pr.Name)
	case service.ProblemNoModel:
		return fmt.Sprintf("%s calls a model and none is given: pass --llm PROVIDER:MODEL or set %s (known providers: %s)",
			who, providers.EnvVar, strings.Join(providers.Known(), ", "))
	case service.ProblemModel:
		if specs.model != "" && normModel(pr.Name) == specs.model {
			return fmt.Sprintf("%s %s: %v", flagOrEnv(o.llm, "--llm", providers.EnvVar), specs.modelFlag, pr.Err)
		}
		cause := pr.Err
		if err := specs.modelErrs[pr.Name]; err != nil {
			cause = err // why no component serves its provider
		}
		return fmt.Sprintf("%s: model %s: %v", who, pr.Name, cause)
	}
	// A component that does not load, or a resource of one.
	ts := p.tools
	var flagValue, flag, env, value string
	var uses []string
	switch pr.Component {
	case "tool.retrieve":
		flagValue, flag, env, value, uses = o.docs, "--docs", envDocs, ts.docs, []string{toolRetrieve}
	case "tool.sql":
		flagValue, flag, env, value, uses = o.db, "--db", envDB, redact.DSN(ts.db), []string{toolSQLQuery, toolSQLSchema}
	case "tool.es":
		flagValue, flag, env, value, uses = o.es, "--es", envES, redact.DSN(ts.es), []string{toolESSearch}
	default:
		if specs.model != "" && pr.Component == specs.modelComponent {
			return fmt.Sprintf("%s %s: %v", flagOrEnv(o.llm, "--llm", providers.EnvVar), specs.modelFlag, pr.Err)
		}
		var me *mcp.Error
		if pr.Component == service.MCPModule && errors.As(pr.Err, &me) && p.plan != nil {
			// A server the file declares: where.
			for _, s := range p.plan.Workflow.MCPServers {
				if s.Name == me.Server {
					return fmt.Sprintf("%s: mcp %s: %v", s.Pos, s.Name, pr.Err)
				}
			}
		}
		return pr.Error()
	}
	if pr.What == service.ProblemResource && flagValue == "" {
		names, _ := usedTools(p.plan)
		if o.stubs != "" || !slices.ContainsFunc(names, func(n string) bool { return slices.Contains(uses, n) }) {
			return "" // the tool actions may be stubbed, or are not called
		}
	}
	cause := pr.Err
	var re *builtin.ResourceError
	if errors.As(cause, &re) {
		cause = re.Err
	}
	return fmt.Sprintf("%s %s: %v", flagOrEnv(flagValue, flag, env), value, cause)
}

// flagOrEnv names where a value came from: the flag when it was given,
// else the environment variable.
func flagOrEnv(flagValue, flag, env string) string {
	if flagValue != "" {
		return flag
	}
	return "$" + env
}

// boundModels lists the models the LLM actions of plan and its
// subworkflows name (a binding's `model`, or a node's own), each once, in
// order; runSpecs gives each provider among them a component.
func boundModels(plan *flow.Plan) []string {
	var out []string
	seen := map[*flow.Plan]bool{}
	var walk func(*flow.Plan)
	walk = func(p *flow.Plan) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		for _, pn := range p.Nodes {
			n := pn.Node
			cfg := n.Config
			typ := n.Type
			if b := p.Workflow.Binding(n.Action); b != nil {
				cfg, typ = b.Config, b.Type
			}
			if typ == flow.LLM {
				if m := strings.TrimSpace(cfg["model"].Str()); m != "" && !slices.Contains(out, m) {
					out = append(out, m)
				}
			}
			walk(pn.Sub)
		}
	}
	walk(plan)
	return out
}
