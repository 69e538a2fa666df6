package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/owf"
	"github.com/weftlang/weft/owf/tools"
)

// isOWF reports whether path names an ollama-workflows JSON document: the
// CLI tells the formats apart by extension (.json; everything else is .wf).
func isOWF(path string) bool { return strings.EqualFold(filepath.Ext(path), ".json") }

// registerOWF adds the owf.* actions to reg: the model of --llm (or
// WEFT_LLM), the embedder of --embed (or WEFT_EMBED; by default the
// reference's: OpenAI's text-embedding-ada-002 when OPENAI_API_KEY is set,
// else mxbai-embed-large on Ollama), and the tools' keys and endpoints
// from the environment.
func registerOWF(e env, o *runOptions, w *flow.Workflow, reg *engine.Registry, open func(string) (llm.Model, error)) error {
	getenv := getenvOf(e)
	opts := owf.Options{Tools: toolOptions(getenv)}
	spec := o.llm
	if spec == "" {
		spec = getenv(providers.EnvVar)
	}
	if spec == "" {
		for _, n := range w.Nodes {
			if n.Type == flow.LLM {
				fmt.Fprintf(e.stderr, "weft: no model: task %s and the other generation and function-calling tasks fail (pass --llm SPEC or set %s)\n", n.Name, providers.EnvVar)
				break
			}
		}
	} else {
		m, err := open(spec)
		if err != nil {
			return usageErrorf("--llm %s: %v", spec, err)
		}
		opts.Model = m
		switch {
		case strings.HasPrefix(spec, "ollama:"):
			opts.Dialect = owf.DialectOllama
		case strings.HasPrefix(spec, "openai:"):
			opts.Dialect = owf.DialectOpenAI
		}
	}
	embed := o.embed
	if embed == "" {
		embed = getenv(providers.EmbedEnvVar)
	}
	if embed == "" {
		embed = "ollama:hellord/mxbai-embed-large-v1:f16"
		if getenv("OPENAI_API_KEY") != "" {
			embed = "openai:text-embedding-ada-002"
		}
	}
	em, err := providers.OpenEmbedder(embed, getenv)
	if err != nil {
		return usageErrorf("--embed %s: %v", embed, err)
	}
	opts.Embedder = em
	if strings.HasPrefix(embed, "ollama:") {
		opts.QueryPrefix = owf.OllamaQueryPrefix
	}
	return owf.Register(reg, opts)
}

// toolOptions reads the predefined tools' keys, as the reference does, and
// endpoints (WEFT_JINA_URL, WEFT_SERPER_URL, WEFT_BROWSERLESS_URL,
// WEFT_DUCKDUCKGO_URL, WEFT_STOCK_URL) from the environment.
func toolOptions(getenv func(string) string) tools.Options {
	return tools.Options{
		JinaURL:          getenv("WEFT_JINA_URL"),
		SerperURL:        getenv("WEFT_SERPER_URL"),
		BrowserlessURL:   getenv("WEFT_BROWSERLESS_URL"),
		DuckDuckGoURL:    getenv("WEFT_DUCKDUCKGO_URL"),
		StockURL:         getenv("WEFT_STOCK_URL"),
		JinaKey:          getenv("JINA_API_KEY"),
		SerperKey:        getenv("SERPER_API_KEY"),
		BrowserlessToken: getenv("BROWSERLESS_TOKEN"),
		APIKey:           getenv("API_KEY"),
		// An empty SERPER_API_KEY counts as unset here; the reference's
		// "ALL" looks at its presence only (docs/ollama-workflows.md).
		SerperKeySet: getenv("SERPER_API_KEY") != "",
	}
}

// usesOWF reports whether w calls owf.* actions: an ollama-workflows
// document, or the .wf file weft convert printed from one.
func usesOWF(w *flow.Workflow) bool {
	for _, n := range w.Nodes {
		if strings.HasPrefix(n.Action, "owf.") {
			return true
		}
	}
	return false
}
