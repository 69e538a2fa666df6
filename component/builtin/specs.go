package builtin

import (
	"fmt"
	"strings"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/llm/providers"
)

// ModelSpec returns the spec of the llm.* component that serves a model
// spec of llm/providers' syntax, "PROVIDER:MODEL" (the --llm flag,
// WEFT_LLM), with what the provider reads from the environment today
// written into the config: the server's URL (OLLAMA_HOST,
// OPENAI_BASE_URL, ANTHROPIC_BASE_URL) and the key's variable, by name.
// The result can be stored: it holds no secret. policy, when not nil, is
// the model's retry policy (a recording gets none). A malformed spec or an
// unknown provider is a *providers.SpecError.
func ModelSpec(spec string, getenv func(string) string, policy *Policy) (component.Spec, error) {
	name, model, err := splitSpec(spec)
	if err != nil {
		return component.Spec{}, err
	}
	return modelSpec(spec, name, model, getenv, policy)
}

// ProviderSpec is ModelSpec without a default model: the spec of the
// llm.* component that serves the provider of spec, for the models a
// workflow's actions name besides the default one (an action's model
// "replay:FILE" when --llm is "ollama:llama3.1", say). Bindings that name
// no model do not fall back on it.
func ProviderSpec(spec string, getenv func(string) string, policy *Policy) (component.Spec, error) {
	name, _, err := splitSpec(spec)
	if err != nil {
		return component.Spec{}, err
	}
	return modelSpec(spec, name, "", getenv, policy)
}

// modelSpec is ModelSpec of provider name with default model model ("":
// none).
func modelSpec(spec, name, model string, getenv func(string) string, policy *Policy) (component.Spec, error) {
	switch name {
	case "ollama":
		base, err := ollama.ParseHost(getenv("OLLAMA_HOST"))
		if err != nil {
			return component.Spec{}, err
		}
		c := newOllama()
		c.BaseURL, c.Model, c.Policy = base, model, policy
		return component.SpecOf("llm.ollama", c)
	case "openai":
		c := newOpenAI()
		c.BaseURL, c.Model, c.Policy = strings.TrimSpace(getenv("OPENAI_BASE_URL")), model, policy
		return component.SpecOf("llm.openai", c)
	case "anthropic":
		c := newAnthropic()
		c.BaseURL, c.Model, c.Policy = strings.TrimSpace(getenv("ANTHROPIC_BASE_URL")), model, policy
		return component.SpecOf("llm.anthropic", c)
	case "replay":
		return component.SpecOf("llm.replay", &Replay{File: model})
	}
	return component.Spec{}, &providers.SpecError{Spec: spec, Msg: fmt.Sprintf("unknown provider %q", name), Known: providers.Known()}
}

// EmbedSpec is ModelSpec for an embedding model ("--embed",
// WEFT_EMBED): the spec of an embed.ollama or embed.openai component.
func EmbedSpec(spec string, getenv func(string) string) (component.Spec, error) {
	name, model, err := splitSpec(spec)
	if err != nil {
		return component.Spec{}, err
	}
	switch name {
	case "ollama":
		base, err := ollama.ParseHost(getenv("OLLAMA_HOST"))
		if err != nil {
			return component.Spec{}, err
		}
		c := newOllamaEmbed()
		c.BaseURL, c.Model = base, model
		return component.SpecOf("embed.ollama", c)
	case "openai":
		c := newOpenAIEmbed()
		c.BaseURL, c.Model = strings.TrimSpace(getenv("OPENAI_BASE_URL")), model
		return component.SpecOf("embed.openai", c)
	}
	msg := fmt.Sprintf("unknown provider %q", name)
	if name == "anthropic" || name == "replay" {
		msg = fmt.Sprintf("provider %q has no embeddings", name)
	}
	return component.Spec{}, &providers.SpecError{Spec: spec, Msg: msg, Known: providers.KnownEmbedders()}
}

// splitSpec splits "PROVIDER:MODEL" as llm/providers does.
func splitSpec(spec string) (name, model string, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return "", "", &providers.SpecError{Msg: "no model given", Known: providers.Known(), Err: providers.ErrNoModel}
	}
	name, model, ok := strings.Cut(spec, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	model = strings.TrimSpace(model)
	if !ok || model == "" {
		return "", "", &providers.SpecError{Spec: spec, Msg: "no model after the provider: want PROVIDER:MODEL, e.g. " + name + ":NAME"}
	}
	return name, model, nil
}
