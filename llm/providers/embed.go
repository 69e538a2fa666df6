package providers

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/llm/openai"
)

// EmbedEnvVar is the environment variable read when an embedder's spec is
// empty, e.g. WEFT_EMBED=ollama:nomic-embed-text.
const EmbedEnvVar = "WEFT_EMBED"

// EmbedOpener opens an embedding model by name, reading its configuration
// through getenv.
type EmbedOpener func(model string, getenv func(string) string) (llm.Embedder, error)

// EmbedOpeners returns a new map of the built-in embedding providers:
// "ollama" (POST /api/embed) and "openai" (POST {base}/embeddings).
// Anthropic has no embeddings API. Add to the map and pass it to
// OpenEmbedderWith.
func EmbedOpeners() map[string]EmbedOpener {
	return map[string]EmbedOpener{
		"ollama": func(model string, getenv func(string) string) (llm.Embedder, error) {
			return ollama.FromEnv(getenv, model)
		},
		"openai": func(model string, getenv func(string) string) (llm.Embedder, error) {
			return openai.FromEnv(getenv, model)
		},
	}
}

// KnownEmbedders returns the names of the built-in embedding providers,
// sorted.
func KnownEmbedders() []string {
	return sortedKeys(EmbedOpeners())
}

// OpenEmbedder opens the embedding model spec names, with the built-in
// providers: a spec is PROVIDER:MODEL, as for Open, e.g.
// "ollama:nomic-embed-text" or "openai:text-embedding-3-small". An empty
// spec is read from WEFT_EMBED. getenv reads the environment (the
// provider's variables, as for Open); nil means os.Getenv. Provider
// configuration errors are *llm.Error; a malformed spec, an unknown
// provider or one without embeddings is a *SpecError listing the known
// ones.
func OpenEmbedder(spec string, getenv func(string) string) (llm.Embedder, error) {
	return OpenEmbedderWith(spec, getenv, EmbedOpeners())
}

// OpenEmbedderWith is OpenEmbedder with a given set of providers.
func OpenEmbedderWith(spec string, getenv func(string) string, openers map[string]EmbedOpener) (llm.Embedder, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = strings.TrimSpace(getenv(EmbedEnvVar))
	}
	known := sortedKeys(openers)
	if spec == "" {
		return nil, &SpecError{Msg: "no embedding model given: name one as PROVIDER:MODEL or set " + EmbedEnvVar, Known: known}
	}
	name, model, ok := strings.Cut(spec, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	open := openers[name]
	if open == nil {
		msg := fmt.Sprintf("unknown provider %q", name)
		if _, chat := Openers()[name]; chat {
			msg = fmt.Sprintf("provider %q has no embeddings", name)
		}
		return nil, &SpecError{Spec: spec, Msg: msg, Known: known}
	}
	model = strings.TrimSpace(model)
	if !ok || model == "" {
		return nil, &SpecError{Spec: spec, Msg: "no model after the provider: want PROVIDER:MODEL, e.g. " + name + ":NAME"}
	}
	return open(model, getenv)
}

func sortedKeys[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
