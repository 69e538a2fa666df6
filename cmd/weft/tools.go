package main

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/retrieval"
	"github.com/weftlang/weft/sqltool"
	"github.com/weftlang/weft/tools"
)

// The built-in tools `weft run` offers (package tools), beside
// http_request. Each is always registered, so the static checks know its
// name; it opens what it works on (from its flag or environment variable)
// at its first call.
const (
	toolRetrieve  = tools.Retrieve  // --docs
	toolSQLQuery  = tools.SQLQuery  // --db
	toolSQLSchema = tools.SQLSchema // --db
	toolESSearch  = tools.ESSearch  // --es
)

// Environment variables giving the tools' flags a default.
const (
	envDocs = "WEFT_DOCS"
	envDB   = "WEFT_DB"
	envES   = "WEFT_ES"
)

// toolFlag names the flag (and variable) a built-in tool needs.
func toolFlag(name string) (flag, env string) {
	switch name {
	case toolRetrieve:
		return "--docs PATH", envDocs
	case toolSQLQuery, toolSQLSchema:
		return "--db DSN", envDB
	case toolESSearch:
		return "--es URL|bleve:DIR", envES
	}
	return "", ""
}

// toolset is the settings of the built-in tools of one command, from its
// flags, else the environment: what runSpecs makes their components of.
type toolset struct {
	docs, db, es string
	embed        string // --embed: retrieve searches hybrid (BM25 and vectors)
}

// newToolset reads the tools' settings from o, else the environment.
func newToolset(e env, o *runOptions) *toolset {
	getenv := getenvOf(e)
	ts := &toolset{docs: cmp.Or(o.docs, getenv(envDocs)), db: cmp.Or(o.db, getenv(envDB))}
	// A relative path not in the current directory may name a file of
	// the data directory ("tatqa/tatqa_dataset_dev.json").
	ts.docs, ts.db = resolveData(getenv, ts.docs), resolveData(getenv, ts.db)
	ts.es = cmp.Or(o.es, getenv(envES))
	ts.embed = cmp.Or(o.embed, getenv(providers.EmbedEnvVar))
	return ts
}

// embedOptions are the options of a retrieval index whose documents and
// queries are embedded with spec (none when spec is empty).
func embedOptions(spec string, getenv func(string) string) (*retrieval.Options, error) {
	if spec == "" {
		return nil, nil
	}
	em, err := providers.OpenEmbedder(spec, getenv)
	if err != nil {
		return nil, fmt.Errorf("--embed %s: %w", spec, err)
	}
	return &retrieval.Options{Embedder: em}, nil
}

// toolAdvice is the advice for an error of a built-in tool: which flag
// gives it what it lacks.
func toolAdvice(err error) string {
	var re *tools.ResourceError
	if !errors.As(err, &re) {
		return ""
	}
	switch {
	case errors.Is(err, tools.ErrNotConfigured):
		flag, env := toolFlag(re.Tool)
		return "pass " + flag + " or set $" + env
	case errors.Is(err, sqltool.ErrUnsafeRole):
		return "docs/tools.md gives the SQL of a read-only role; --db-allow-unsafe-role connects anyway, for a throwaway database"
	}
	return ""
}

// usedTools lists the tools a plan calls, each with the first node that
// calls it (the plan's own nodes before its subworkflows'): TOOL nodes by
// name, TOOL bindings by their `tool`, LLM bindings by their `tools`.
func usedTools(p *flow.Plan) (names []string, callers map[string]string) {
	used := map[string]string{}
	var walk func(p *flow.Plan)
	seen := map[*flow.Plan]bool{}
	walk = func(p *flow.Plan) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		use := func(tool, who string) {
			if _, ok := used[tool]; !ok {
				used[tool] = who
				names = append(names, tool)
			}
		}
		for _, pn := range p.Nodes {
			n := pn.Node
			who := "node " + n.Name
			if b := p.Workflow.Binding(n.Action); b != nil {
				who += " (action " + b.Name + ")"
				if t := b.Config["tool"]; b.Type == flow.Tool && t.Kind() == flow.KindString {
					use(t.Str(), who)
				}
				for _, t := range b.Config["tools"].List() {
					use(t.Str(), who)
				}
			} else if n.Type == flow.Tool {
				use(n.Action, who)
			}
		}
		for _, pn := range p.Nodes {
			walk(pn.Sub)
		}
	}
	walk(p)
	return names, used
}

// toolFlags adds the flags of the built-in tools to f.
func toolFlags(f *pflag.FlagSet, o *runOptions) {
	f.StringVar(&o.docs, "docs", "", "the documents of the retrieve tool: a TAT-QA JSON `PATH` (indexed in memory) or a retrieval index file; a relative path not in the current directory is looked up in the data directory (default $"+envDocs+")")
	f.StringVar(&o.es, "es", "", "the search backend of the es_search tool: an Elasticsearch `URL`, or bleve:DIR for the embedded indexes in DIR (default $"+envES+")")
	f.StringVar(&o.db, "db", "", "the database of the sql_query and sql_schema tools, opened read-only: a SQLite file (a relative path not in the current directory is looked up in the data directory) or a postgres:// URL `DSN` (default $"+envDB+")")
	f.BoolVar(&o.dbUnsafe, "db-allow-unsafe-role", false, "let --db connect to PostgreSQL as a role that may do more than read (a superuser, a writer), with a warning; for throwaway databases only")
}
