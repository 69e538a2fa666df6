package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/owf"
	"github.com/weftlang/weft/sqltool"
	"github.com/weftlang/weft/tools"
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

// TestToolErrorAdvice: an error of a built-in tool (package tools) names no
// flag; the CLI adds the flag that gives the tool its resource.
func TestToolErrorAdvice(t *testing.T) {
	set, err := tools.New(tools.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	reg, err := set.Registry()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args, want string }{
		{tools.Retrieve, `{"query":"x"}`, "node find failed: retrieve: documents: not configured (pass --docs PATH or set $WEFT_DOCS)"},
		{tools.SQLSchema, `{}`, "node find failed: sql_schema: database: not configured (pass --db DSN or set $WEFT_DB)"},
		{tools.ESSearch, `{"index":"i","body":{}}`, "node find failed: es_search: search backend: not configured (pass --es URL|bleve:DIR or set $WEFT_ES)"},
	} {
		tl, _ := reg.Get(c.tool)
		_, err := tl.Call(context.Background(), json.RawMessage(c.args))
		if err == nil {
			t.Fatalf("%s: no error", c.tool)
		}
		if got := withAdvice(fmt.Errorf("node find failed: %w", err)); got != c.want {
			t.Errorf("%s:\n got  %q\n want %q", c.tool, got, c.want)
		}
	}
	unsafe := &tools.ResourceError{Tool: tools.SQLQuery, Resource: tools.Database, Name: "postgres://u:xxxxx@h/db", Err: fmt.Errorf("sqltool: %w", sqltool.ErrUnsafeRole)}
	if got := withAdvice(unsafe); !strings.HasSuffix(got, "(docs/tools.md gives the SQL of a read-only role; --db-allow-unsafe-role connects anyway, for a throwaway database)") {
		t.Errorf("unsafe role: %q", got)
	}
}
