package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/owf"
)

// TestErrorAdvice: the errors of the library packages name no flag; the
// CLI adds which flag to pass when it prints them, found by errors.Is
// however they are wrapped.
func TestErrorAdvice(t *testing.T) {
	_, noProvider := (&action.Binder{}).Bind(&flow.Binding{Name: "greet", Type: flow.LLM, Config: map[string]flow.Value{"prompt": flow.StringValue("hi")}})
	_, noModel := providers.Open("", func(string) string { return "" })
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"binder", fmt.Errorf("node hello failed: %w", noProvider),
			"node hello failed: LLM action greet names no model and the Binder has no default model: no LLM provider is configured (pass --llm PROVIDER:MODEL or set WEFT_LLM, or stub the action with --stubs FILE)"},
		{"providers", noModel,
			`llm spec "": no model given, and WEFT_LLM is not set (known providers: anthropic, ollama, openai, replay) (pass --llm PROVIDER:MODEL or set WEFT_LLM)`},
		{"owf model", fmt.Errorf("task A: %w", &owf.TaskError{Kind: "GenerationFailed", Msg: "no model is configured", Err: owf.ErrNoModel}),
			`task A: GenerationFailed("no model is configured") (pass --llm SPEC or set WEFT_LLM)`},
		{"owf embedder", fmt.Errorf("search: %w", owf.ErrNoEmbedder),
			`search: no embedder is configured (pass --embed SPEC or set WEFT_EMBED)`},
		{"other", errors.New("boom"), "boom"},
	} {
		if got := withAdvice(c.err); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
