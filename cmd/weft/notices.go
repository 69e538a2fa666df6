package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/service"
)

// modelFlags adds the flags that tune every LLM action's requests.
func modelFlags(f *pflag.FlagSet, o *runOptions) {
	f.IntVar(&o.contextTokens, "context-tokens", 0, "the context window, in `TOKENS`, of LLM actions whose node, action and workflow set no context_tokens (Ollama's num_ctx; 0: the server's default)")
}

// printNotices writes a line on w for each fallback and warning of a
// run, so that no fallback is silent:
//
//	weft: node classify fell back to {intent: "not_clear"}: ollama: HTTP 500: ...
//	weft: warning: node reply: the reply was cut at the token limit ...
//
// Their text may come from a model or a server: it is escaped.
func printNotices(w io.Writer, res *service.Result) {
	if res == nil {
		return
	}
	for _, n := range res.Notices {
		if n.Kind == string(engine.NoticeFallback) {
			fmt.Fprintf(w, "weft: %s\n", termSafe(n.String(), false))
			continue
		}
		fmt.Fprintf(w, "weft: warning: %s\n", termSafe(n.String(), false))
	}
}
