package main

import (
	"context"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/redact"
)

// runRedactor returns the redactor of every credential a run is
// configured with: the API keys in the environment, and the users,
// passwords and secret query values of the base URLs and of the --store,
// --db and --es connection URLs (or the environment's defaults).
func runRedactor(e env, o *runOptions) *redact.Redactor {
	getenv := getenvOf(e)
	var keys []string
	// The environment variables weft reads credentials from.
	for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_API_KEY", "JINA_API_KEY", "SERPER_API_KEY", "BROWSERLESS_TOKEN", "API_KEY"} {
		keys = append(keys, getenv(name))
	}
	urls := []string{o.store, o.db, o.es, getenv(envStore), getenv(envDB), getenv(envES),
		getenv("OPENAI_BASE_URL"), getenv("ANTHROPIC_BASE_URL"), getenv("OLLAMA_HOST")}
	return redact.Of(urls, keys)
}

// redactActions makes every action of reg, and every action bind makes,
// return its errors with red's credentials redacted, whatever the action
// (a tool quoting a server's reply, an action of an ollama-workflows
// document): node errors reach stderr, --json, traces and the store's run
// rows, and none of them may show a credential.
func redactActions(reg *engine.Registry, bind engine.BindFunc, red *redact.Redactor) engine.BindFunc {
	for _, name := range reg.Names() {
		a, _ := reg.Lookup(name)
		reg.Replace(name, redactingAction{a, red})
	}
	if bind == nil {
		return nil
	}
	return func(b *flow.Binding) (engine.Action, error) {
		a, err := bind(b)
		if err != nil || a == nil {
			return a, red.Error(err)
		}
		return redactingAction{a, red}, nil
	}
}

// redactingAction is an action whose errors are redacted.
type redactingAction struct {
	a   engine.Action
	red *redact.Redactor
}

// Run runs the action and redacts its error.
func (r redactingAction) Run(ctx context.Context, c *engine.Call) error {
	return r.red.Error(r.a.Run(ctx, c))
}
