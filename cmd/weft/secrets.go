package main

import (
	"context"

	"github.com/weftlang/weft/engine"
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

// redactingAction is an action whose errors are redacted.
type redactingAction struct {
	a   engine.Action
	red *redact.Redactor
}

// Run runs the action and redacts its error.
func (r redactingAction) Run(ctx context.Context, c *engine.Call) error {
	return r.red.Error(r.a.Run(ctx, c))
}
