package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/owf"
	owftools "github.com/weftlang/weft/owf/tools"
)

// OWF is the config of action.owf: the owf.* actions that carry out the
// tasks of ollama-workflows documents (owf.Register), with a model, an
// embedder and the predefined tools' endpoints and keys.
//
// Without LLM there is no model: the component warns, and every
// generation and function-calling task fails when it runs, with an error
// matching owf.ErrNoModel. Without Embed, the tasks that embed text fail
// with owf.ErrNoEmbedder (OWFSpec writes the reference's default
// embedder into the spec).
type OWF struct {
	// LLM is an llm.* component: the model of generation and
	// function-calling tasks. Its provider picks the dialect requests are
	// shaped in: the reference's Ollama path for llm.ollama, its OpenAI
	// path for llm.openai, plain messages for the others.
	LLM *component.Spec `json:"llm,omitempty"`
	// Model is the model's name for LLM's Open; empty means its default.
	Model string `json:"model,omitempty"`
	// Embed is an embed.* component: the embeddings of the file system
	// (insert, search). For embed.ollama a search query is prefixed with
	// owf.OllamaQueryPrefix, as the reference's Ollama embedder does.
	Embed *component.Spec `json:"embed,omitempty"`
	// Tools are the predefined tools' endpoints and keys.
	Tools OWFTools `json:"tools"`

	opts owf.Options
	deps []component.Component
}

// OWFTools is where the predefined tools of ollama-workflows send their
// requests (empty: the real services), and their keys. A key whose
// variable is unset or empty is not sent, as in the reference.
type OWFTools struct {
	JinaURL        string `json:"jina_url,omitempty"`
	SerperURL      string `json:"serper_url,omitempty"`
	BrowserlessURL string `json:"browserless_url,omitempty"`
	DuckDuckGoURL  string `json:"duckduckgo_url,omitempty"`
	StockURL       string `json:"stock_url,omitempty"`

	// The keys, by default the variables the reference reads:
	// JINA_API_KEY, SERPER_API_KEY, BROWSERLESS_TOKEN and API_KEY. A
	// SERPER_API_KEY that is set makes config.tools ["ALL"] pick serper
	// rather than duckduckgo.
	JinaKey          component.Secret `json:"jina_key,omitzero"`
	SerperKey        component.Secret `json:"serper_key,omitzero"`
	BrowserlessToken component.Secret `json:"browserless_token,omitzero"`
	APIKey           component.Secret `json:"api_key,omitzero"`
}

func newOWF() *OWF {
	return &OWF{Tools: OWFTools{
		JinaKey:          component.Secret{Env: "JINA_API_KEY"},
		SerperKey:        component.Secret{Env: "SERPER_API_KEY"},
		BrowserlessToken: component.Secret{Env: "BROWSERLESS_TOKEN"},
		APIKey:           component.Secret{Env: "API_KEY"},
	}}
}

// Provision loads the model and the embedder, and reads the keys.
func (o *OWF) Provision(ctx context.Context, c *component.Context) error {
	var keys [4]string
	for i, s := range []component.Secret{o.Tools.JinaKey, o.Tools.SerperKey, o.Tools.BrowserlessToken, o.Tools.APIKey} {
		v, err := optionalSecret(c, s)
		if err != nil {
			return fmt.Errorf("tools: %w", err)
		}
		keys[i] = v
	}
	o.opts = owf.Options{Tools: owftools.Options{
		JinaURL:          o.Tools.JinaURL,
		SerperURL:        o.Tools.SerperURL,
		BrowserlessURL:   o.Tools.BrowserlessURL,
		DuckDuckGoURL:    o.Tools.DuckDuckGoURL,
		StockURL:         o.Tools.StockURL,
		JinaKey:          keys[0],
		SerperKey:        keys[1],
		BrowserlessToken: keys[2],
		APIKey:           keys[3],
		SerperKeySet:     keys[1] != "",
	}}
	if o.LLM == nil {
		if o.Model != "" {
			return errors.New("model: names a model of no llm: give llm too")
		}
		c.Warn("no model (config llm): the generation and function-calling tasks of ollama-workflows documents fail when they run")
	} else {
		x, err := c.Load(ctx, *o.LLM)
		if err != nil {
			return fmt.Errorf("llm: %w", err)
		}
		o.deps = append(o.deps, x)
		mp, ok := x.(component.ModelProvider)
		if !ok {
			return &component.Error{Op: "load", ID: o.LLM.ID, Path: ".llm", Kind: component.ErrWrongKind, Err: errors.New("want an llm.* component")}
		}
		m, err := mp.Open(o.Model)
		if err != nil {
			return fmt.Errorf("llm: %w", err)
		}
		o.opts.Model = m
		switch mp.Provider() {
		case "ollama":
			o.opts.Dialect = owf.DialectOllama
		case "openai":
			o.opts.Dialect = owf.DialectOpenAI
		}
	}
	if o.Embed != nil {
		x, err := c.Load(ctx, *o.Embed)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		o.deps = append(o.deps, x)
		ep, ok := x.(component.EmbedderProvider)
		if !ok {
			return &component.Error{Op: "load", ID: o.Embed.ID, Path: ".embed", Kind: component.ErrWrongKind, Err: errors.New("want an embed.* component")}
		}
		o.opts.Embedder = ep.Embedder()
		if o.Embed.ID == "embed.ollama" {
			o.opts.QueryPrefix = owf.OllamaQueryPrefix
		}
	}
	return nil
}

// RegisterActions adds the owf.* actions to reg.
func (o *OWF) RegisterActions(reg *engine.Registry) error {
	return owf.Register(reg, o.opts)
}

// Close closes the model's and the embedder's components.
func (o *OWF) Close() error {
	err := component.CloseAll(o.deps...)
	o.deps = nil
	return err
}

// OWFDefaultEmbed returns the reference's default embedder, the spec
// OWFSpec uses when none is given: OpenAI's text-embedding-ada-002 when
// OPENAI_API_KEY is set, else mxbai-embed-large on Ollama.
func OWFDefaultEmbed(getenv func(string) string) string {
	if getenv("OPENAI_API_KEY") != "" {
		return "openai:text-embedding-ada-002"
	}
	return "ollama:hellord/mxbai-embed-large-v1:f16"
}

// OWFSpec returns the spec of the action.owf component the CLI's flags
// and environment make: the model of llmSpec ("PROVIDER:MODEL"; empty:
// $WEFT_LLM; both empty: no model), the embedder of embedSpec (empty:
// $WEFT_EMBED, else OWFDefaultEmbed), each with what ModelSpec and
// EmbedSpec take from the environment, the tools' endpoints from
// WEFT_JINA_URL, WEFT_SERPER_URL, WEFT_BROWSERLESS_URL,
// WEFT_DUCKDUCKGO_URL and WEFT_STOCK_URL, and their keys as references
// to the reference's variables (never their values). policy is the
// model's retry policy, as for ModelSpec. A malformed or unknown spec is
// a *providers.SpecError.
func OWFSpec(llmSpec, embedSpec string, getenv func(string) string, policy *Policy) (component.Spec, error) {
	c := newOWF()
	c.Tools.JinaURL = strings.TrimSpace(getenv("WEFT_JINA_URL"))
	c.Tools.SerperURL = strings.TrimSpace(getenv("WEFT_SERPER_URL"))
	c.Tools.BrowserlessURL = strings.TrimSpace(getenv("WEFT_BROWSERLESS_URL"))
	c.Tools.DuckDuckGoURL = strings.TrimSpace(getenv("WEFT_DUCKDUCKGO_URL"))
	c.Tools.StockURL = strings.TrimSpace(getenv("WEFT_STOCK_URL"))
	if llmSpec == "" {
		llmSpec = getenv(providers.EnvVar)
	}
	if strings.TrimSpace(llmSpec) != "" {
		s, err := ModelSpec(llmSpec, getenv, policy)
		if err != nil {
			return component.Spec{}, err
		}
		c.LLM = &s
	}
	if embedSpec == "" {
		embedSpec = getenv(providers.EmbedEnvVar)
	}
	if embedSpec == "" {
		embedSpec = OWFDefaultEmbed(getenv)
	}
	s, err := EmbedSpec(embedSpec, getenv)
	if err != nil {
		return component.Spec{}, err
	}
	c.Embed = &s
	return component.SpecOf("action.owf", c)
}
