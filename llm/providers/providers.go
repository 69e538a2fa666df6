// Package providers opens an llm.Model from a spec such as
// "ollama:llama3.1", "openai:gpt-4o-mini" or
// "anthropic:claude-sonnet-4-5", the syntax of weft's --llm flag and of
// the WEFT_LLM environment variable.
//
// A spec is PROVIDER:MODEL; everything after the first colon is the
// model's name, so Ollama tags work ("ollama:qwen2.5:7b"). Each provider
// reads its own environment variables (see the provider packages).
package providers

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/anthropic"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/llm/openai"
	"github.com/weftlang/weft/llm/replay"
)

// EnvVar is the environment variable read when the spec is empty.
const EnvVar = "WEFT_LLM"

// Opener opens a model by name, reading its configuration through getenv.
type Opener func(model string, getenv func(string) string) (llm.Model, error)

// Openers returns a new map of the built-in providers: "ollama",
// "openai", "anthropic", and "replay", whose model is the path of a
// recording to serve offline (package llm/replay: "replay:run.jsonl").
// Add to it and pass it to OpenWith.
func Openers() map[string]Opener {
	return map[string]Opener{
		"replay": func(path string, _ func(string) string) (llm.Model, error) {
			return replay.OpenFile(path)
		},
		"ollama": func(model string, getenv func(string) string) (llm.Model, error) {
			return ollama.FromEnv(getenv, model)
		},
		"openai": func(model string, getenv func(string) string) (llm.Model, error) {
			return openai.FromEnv(getenv, model)
		},
		"anthropic": func(model string, getenv func(string) string) (llm.Model, error) {
			return anthropic.FromEnv(getenv, model)
		},
	}
}

// Known returns the names of the built-in providers, sorted.
func Known() []string {
	return sortedNames(Openers())
}

// SpecError is a spec that names no model or an unknown provider.
type SpecError struct {
	Spec  string
	Msg   string
	Known []string // the providers that could have been named
	Err   error    // ErrNoModel for an empty spec, else nil
}

// Unwrap returns ErrNoModel for an empty spec, else nil.
func (e *SpecError) Unwrap() error { return e.Err }

// ErrNoModel is matched (errors.Is) by the *SpecError of an empty spec
// with EnvVar unset: no model was named.
var ErrNoModel = errors.New("no model given")

// Error names the spec and the problem.
func (e *SpecError) Error() string {
	s := fmt.Sprintf("llm spec %q: %s", e.Spec, e.Msg)
	if len(e.Known) > 0 {
		s += " (known providers: " + strings.Join(e.Known, ", ") + ")"
	}
	return s
}

// Open opens the model spec names, with the built-in providers. An empty
// spec is read from WEFT_LLM. getenv reads the environment; nil means
// os.Getenv. Provider configuration errors are *llm.Error; a malformed
// spec or an unknown provider is a *SpecError listing the known ones.
func Open(spec string, getenv func(string) string) (llm.Model, error) {
	return OpenWith(spec, getenv, Openers())
}

// OpenWith is Open with a given set of providers.
func OpenWith(spec string, getenv func(string) string, openers map[string]Opener) (llm.Model, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = strings.TrimSpace(getenv(EnvVar))
	}
	known := sortedNames(openers)
	if spec == "" {
		return nil, &SpecError{Msg: "no model given, and " + EnvVar + " is not set", Known: known, Err: ErrNoModel}
	}
	name, model, ok := strings.Cut(spec, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	open := openers[name]
	if open == nil {
		return nil, &SpecError{Spec: spec, Msg: fmt.Sprintf("unknown provider %q", name), Known: known}
	}
	model = strings.TrimSpace(model)
	if !ok || model == "" {
		return nil, &SpecError{Spec: spec, Msg: "no model after the provider: want PROVIDER:MODEL, e.g. " + name + ":NAME"}
	}
	return open(model, getenv)
}

func sortedNames(m map[string]Opener) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
