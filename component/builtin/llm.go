package builtin

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/anthropic"
	"github.com/weftlang/weft/llm/ollama"
	"github.com/weftlang/weft/llm/openai"
	"github.com/weftlang/weft/llm/replay"
)

// Policy is how a model's calls are timed out, retried and limited
// (llm.Reliable); see llm.Policy for each field. A model whose config has
// no policy is called as it is, without retries.
type Policy struct {
	Timeout     component.Duration `json:"timeout,omitempty"`      // bound of each attempt
	MaxAttempts int                `json:"max_attempts,omitempty"` // attempts in all; 0: 3
	Jitter      float64            `json:"jitter,omitempty"`       // in [0, 1]
	Concurrency int                `json:"concurrency,omitempty"`  // calls in flight at most; 0: no limit
}

func (p *Policy) validate() error {
	if p == nil {
		return nil
	}
	if p.MaxAttempts < 0 || p.Concurrency < 0 {
		return errors.New("policy: max_attempts and concurrency must not be negative")
	}
	if p.Jitter < 0 || p.Jitter > 1 {
		return fmt.Errorf("policy: jitter %v is not in [0, 1]", p.Jitter)
	}
	return nil
}

func (p *Policy) wrap(m llm.Model) llm.Model {
	if p == nil {
		return m
	}
	return llm.Reliable(m, llm.Policy{Timeout: p.Timeout.D(), MaxAttempts: p.MaxAttempts, Jitter: p.Jitter, Concurrency: p.Concurrency})
}

// Ollama is the config of llm.ollama.
type Ollama struct {
	// BaseURL is the server's root URL; empty means ollama.DefaultHost.
	// Any form OLLAMA_HOST takes is accepted ("host:port", ":port").
	BaseURL string `json:"base_url,omitempty"`
	// APIKey is sent as a Bearer token (ollama.com, a proxy); by default
	// $OLLAMA_API_KEY, sent only when it is set.
	APIKey component.Secret `json:"api_key,omitzero"`
	// Model is the default model ("llama3.1").
	Model string `json:"model,omitempty"`
	// KeepAlive is how long Ollama keeps the model loaded ("10m").
	KeepAlive string `json:"keep_alive,omitempty"`
	// Options are Ollama options sent with every request (num_ctx, ...).
	Options map[string]any `json:"options,omitempty"`
	// MaxReplyBytes bounds one reply (0: llm.DefaultMaxReplyBytes).
	MaxReplyBytes int64 `json:"max_reply_bytes,omitempty"`
	// Policy, when set, retries and limits the model's calls.
	Policy *Policy `json:"policy,omitempty"`

	cfg ollama.Config
}

func newOllama() *Ollama { return &Ollama{APIKey: component.Secret{Env: "OLLAMA_API_KEY"}} }

// Provision resolves the server's URL and key.
func (o *Ollama) Provision(_ context.Context, c *component.Context) error {
	base, err := ollama.ParseHost(o.BaseURL)
	if err != nil {
		return err
	}
	key, err := optionalSecret(c, o.APIKey)
	if err != nil {
		return err
	}
	o.cfg = ollama.Config{BaseURL: base, APIKey: key, Model: o.Model, KeepAlive: o.KeepAlive, Options: o.Options, MaxReplyBytes: o.MaxReplyBytes, HTTPClient: c.HTTPClient()}
	return nil
}

// Validate checks the policy.
func (o *Ollama) Validate() error { return o.Policy.validate() }

// Provider returns "ollama".
func (o *Ollama) Provider() string { return "ollama" }

// DefaultModel returns the configured model.
func (o *Ollama) DefaultModel() string { return o.Model }

// Open returns the model name (empty: the configured one).
func (o *Ollama) Open(name string) (llm.Model, error) {
	cfg := o.cfg
	if name != "" {
		cfg.Model = name
	}
	if cfg.Model == "" {
		return nil, errors.New("ollama: no model named")
	}
	return o.Policy.wrap(ollama.New(cfg)), nil
}

// OpenAI is the config of llm.openai.
type OpenAI struct {
	// BaseURL is the API's base URL, the one before /chat/completions;
	// empty means openai.DefaultBaseURL.
	BaseURL string `json:"base_url,omitempty"`
	// APIKey is the key, by default $OPENAI_API_KEY; required for
	// api.openai.com, sent to other servers when set.
	APIKey component.Secret `json:"api_key,omitzero"`
	// Model is the default model ("gpt-4o-mini").
	Model string `json:"model,omitempty"`
	// MaxTokensField is "max_tokens" or "max_completion_tokens" (empty:
	// chosen by server, see openai.Config).
	MaxTokensField string `json:"max_tokens_field,omitempty"`
	// NonStrict sends json_schema with strict: false.
	NonStrict bool `json:"non_strict,omitempty"`
	// MaxReplyBytes bounds one reply (0: llm.DefaultMaxReplyBytes).
	MaxReplyBytes int64 `json:"max_reply_bytes,omitempty"`
	// Policy, when set, retries and limits the model's calls.
	Policy *Policy `json:"policy,omitempty"`

	cfg openai.Config
}

func newOpenAI() *OpenAI { return &OpenAI{APIKey: component.Secret{Env: "OPENAI_API_KEY"}} }

// Provision resolves the key.
func (o *OpenAI) Provision(_ context.Context, c *component.Context) error {
	base := strings.TrimRight(o.BaseURL, "/")
	if base == "" {
		base = openai.DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("base_url: not an http(s) URL")
	}
	if u.User != nil {
		return errors.New("base_url: holds credentials: give the key as api_key")
	}
	key, err := optionalSecret(c, o.APIKey)
	if err != nil {
		return err
	}
	if key == "" && u.Hostname() == "api.openai.com" {
		return fmt.Errorf("api_key: needed for api.openai.com: %w", missingSecret(c, o.APIKey))
	}
	o.cfg = openai.Config{BaseURL: base, APIKey: key, Model: o.Model, MaxTokensField: o.MaxTokensField, NonStrict: o.NonStrict, MaxReplyBytes: o.MaxReplyBytes, HTTPClient: c.HTTPClient()}
	return nil
}

// Validate checks the fields.
func (o *OpenAI) Validate() error {
	switch o.MaxTokensField {
	case "", "max_tokens", "max_completion_tokens":
	default:
		return fmt.Errorf("max_tokens_field: %q is neither max_tokens nor max_completion_tokens", o.MaxTokensField)
	}
	return o.Policy.validate()
}

// Provider returns "openai".
func (o *OpenAI) Provider() string { return "openai" }

// DefaultModel returns the configured model.
func (o *OpenAI) DefaultModel() string { return o.Model }

// Open returns the model name (empty: the configured one).
func (o *OpenAI) Open(name string) (llm.Model, error) {
	cfg := o.cfg
	if name != "" {
		cfg.Model = name
	}
	if cfg.Model == "" {
		return nil, errors.New("openai: no model named")
	}
	return o.Policy.wrap(openai.New(cfg)), nil
}

// Anthropic is the config of llm.anthropic.
type Anthropic struct {
	// BaseURL is the API's root; empty means anthropic.DefaultBaseURL.
	BaseURL string `json:"base_url,omitempty"`
	// APIKey is the key, by default $ANTHROPIC_API_KEY; required.
	APIKey component.Secret `json:"api_key,omitzero"`
	// Model is the default model ("claude-sonnet-4-5").
	Model string `json:"model,omitempty"`
	// MaxTokens is max_tokens of requests that set none (0: the
	// package's default).
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxReplyBytes bounds one reply (0: llm.DefaultMaxReplyBytes).
	MaxReplyBytes int64 `json:"max_reply_bytes,omitempty"`
	// Policy, when set, retries and limits the model's calls.
	Policy *Policy `json:"policy,omitempty"`

	cfg anthropic.Config
}

func newAnthropic() *Anthropic { return &Anthropic{APIKey: component.Secret{Env: "ANTHROPIC_API_KEY"}} }

// Provision resolves the key.
func (a *Anthropic) Provision(_ context.Context, c *component.Context) error {
	base := strings.TrimRight(a.BaseURL, "/")
	if base == "" {
		base = anthropic.DefaultBaseURL
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return errors.New("base_url: not an http(s) URL without credentials")
	}
	key, err := c.Secret(a.APIKey)
	if err != nil {
		return fmt.Errorf("api_key: %w", err)
	}
	a.cfg = anthropic.Config{BaseURL: base, APIKey: key, Model: a.Model, MaxTokens: a.MaxTokens, MaxReplyBytes: a.MaxReplyBytes, HTTPClient: c.HTTPClient()}
	return nil
}

// Validate checks the fields.
func (a *Anthropic) Validate() error {
	if a.MaxTokens < 0 {
		return errors.New("max_tokens: must not be negative")
	}
	return a.Policy.validate()
}

// Provider returns "anthropic".
func (a *Anthropic) Provider() string { return "anthropic" }

// DefaultModel returns the configured model.
func (a *Anthropic) DefaultModel() string { return a.Model }

// Open returns the model name (empty: the configured one).
func (a *Anthropic) Open(name string) (llm.Model, error) {
	cfg := a.cfg
	if name != "" {
		cfg.Model = name
	}
	if cfg.Model == "" {
		return nil, errors.New("anthropic: no model named")
	}
	return a.Policy.wrap(anthropic.New(cfg)), nil
}

// Replay is the config of llm.replay: a recording (replay.NewRecorder's
// JSON lines) served offline. The model name of a spec ("replay:FILE") is
// the recording's path; File is the default one.
type Replay struct {
	File string `json:"file,omitempty"`
}

// Provision does nothing: recordings are read when a model is asked for.
func (r *Replay) Provision(context.Context, *component.Context) error { return nil }

// Provider returns "replay".
func (r *Replay) Provider() string { return "replay" }

// DefaultModel returns File.
func (r *Replay) DefaultModel() string { return r.File }

// Open reads the recording at path (empty: File).
func (r *Replay) Open(path string) (llm.Model, error) {
	if path == "" {
		path = r.File
	}
	if path == "" {
		return nil, errors.New("replay: no recording named")
	}
	return replay.OpenFile(path)
}

// optionalSecret resolves s, and returns "" when it is zero or its
// variable is unset.
func optionalSecret(c *component.Context, s component.Secret) (string, error) {
	if s.IsZero() {
		return "", nil
	}
	v, err := c.Secret(s)
	if errors.Is(err, component.ErrSecret) {
		return "", nil
	}
	return v, err
}

// missingSecret is the error of a required secret that is not set.
func missingSecret(c *component.Context, s component.Secret) error {
	_, err := c.Secret(s)
	if err == nil {
		err = component.ErrSecret
	}
	return err
}

// OllamaEmbed is the config of embed.ollama: an embedding model of an
// Ollama server (POST /api/embed).
type OllamaEmbed struct {
	// BaseURL is the server's root URL, as for llm.ollama.
	BaseURL string `json:"base_url,omitempty"`
	// APIKey is sent as a Bearer token; by default $OLLAMA_API_KEY, sent
	// only when it is set.
	APIKey component.Secret `json:"api_key,omitzero"`
	// Model is the embedding model ("nomic-embed-text"). Required.
	Model string `json:"model"`
	// MaxReplyBytes bounds one reply (0: llm.DefaultMaxReplyBytes).
	MaxReplyBytes int64 `json:"max_reply_bytes,omitempty"`

	em llm.Embedder
}

func newOllamaEmbed() *OllamaEmbed {
	return &OllamaEmbed{APIKey: component.Secret{Env: "OLLAMA_API_KEY"}}
}

// Provision resolves the server's URL and key.
func (o *OllamaEmbed) Provision(ctx context.Context, c *component.Context) error {
	if o.Model == "" {
		return errors.New("model: required")
	}
	m := &Ollama{BaseURL: o.BaseURL, APIKey: o.APIKey, Model: o.Model, MaxReplyBytes: o.MaxReplyBytes}
	if err := m.Provision(ctx, c); err != nil {
		return err
	}
	o.em = ollama.New(m.cfg)
	return nil
}

// Embedder returns the embedding model.
func (o *OllamaEmbed) Embedder() llm.Embedder { return o.em }

// OpenAIEmbed is the config of embed.openai: an embedding model of an
// OpenAI-compatible server (POST {base}/embeddings).
type OpenAIEmbed struct {
	// BaseURL is the API's base URL, as for llm.openai.
	BaseURL string `json:"base_url,omitempty"`
	// APIKey is the key, by default $OPENAI_API_KEY; required for
	// api.openai.com.
	APIKey component.Secret `json:"api_key,omitzero"`
	// Model is the embedding model ("text-embedding-3-small"). Required.
	Model string `json:"model"`
	// MaxReplyBytes bounds one reply (0: llm.DefaultMaxReplyBytes).
	MaxReplyBytes int64 `json:"max_reply_bytes,omitempty"`

	em llm.Embedder
}

func newOpenAIEmbed() *OpenAIEmbed {
	return &OpenAIEmbed{APIKey: component.Secret{Env: "OPENAI_API_KEY"}}
}

// Provision resolves the key.
func (o *OpenAIEmbed) Provision(ctx context.Context, c *component.Context) error {
	if o.Model == "" {
		return errors.New("model: required")
	}
	m := &OpenAI{BaseURL: o.BaseURL, APIKey: o.APIKey, Model: o.Model, MaxReplyBytes: o.MaxReplyBytes}
	if err := m.Provision(ctx, c); err != nil {
		return err
	}
	o.em = openai.New(m.cfg)
	return nil
}

// Embedder returns the embedding model.
func (o *OpenAIEmbed) Embedder() llm.Embedder { return o.em }
