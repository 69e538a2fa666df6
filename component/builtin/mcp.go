package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/llm/tool"
	"github.com/weftlang/weft/mcp"
)

// MCP is the config of tool.mcp: the tools of one MCP server, named
// NAME__TOOL (see package mcp). Give exactly one of Command and URL.
type MCP struct {
	// Name names the server in its tools' names: letters, digits, '-'
	// and '_' (no "__"), at most 32. Required.
	Name string `json:"name"`
	// Command, Args and Env start a server speaking MCP on stdio. The
	// process gets Env and, of weft's environment, only PATH, HOME and
	// the like (see mcp.Config).
	Command string           `json:"command,omitempty"`
	Args    []string         `json:"args,omitempty"`
	Env     map[string]Value `json:"env,omitempty"`
	// Dir is the server's working directory ("" for weft's).
	Dir string `json:"dir,omitempty"`
	// URL is a streamable HTTP endpoint; Headers go with every request.
	URL     string           `json:"url,omitempty"`
	Headers map[string]Value `json:"headers,omitempty"`
	// Timeout bounds connecting and each call (0: 60s).
	Timeout component.Duration `json:"timeout,omitempty"`
	// MaxRestarts bounds the attempts to restart a server that died
	// (0: 3).
	MaxRestarts int `json:"max_restarts,omitempty"`
	// MaxInline is how many bytes of an image, audio or blob a result
	// carries inline (0: 32 KiB; negative: none).
	MaxInline int `json:"max_inline,omitempty"`

	client *mcp.Client
}

// Value is a string of an MCP server's environment or headers: a literal,
// written as a JSON string, or a secret, {"env": "VARIABLE"}, read from
// weft's environment when the component is provisioned. A config holding
// secrets marshals their references only.
type Value struct {
	Literal string
	Secret  component.Secret
}

// MarshalJSON writes the literal, or the secret's reference.
func (v Value) MarshalJSON() ([]byte, error) {
	if !v.Secret.IsZero() {
		return json.Marshal(v.Secret)
	}
	return json.Marshal(v.Literal)
}

// UnmarshalJSON reads a JSON string or a secret's reference.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*v = Value{}
		return json.Unmarshal(b, &v.Literal)
	}
	var s component.Secret
	if err := s.UnmarshalJSON(b); err != nil {
		return errors.New(`want a string or a secret, {"env": "VARIABLE"}`)
	}
	*v = Value{Secret: s}
	return nil
}

// resolve returns the values of vs, reading the secrets.
func resolve(c *component.Context, field string, vs map[string]Value) (map[string]string, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(vs))
	for k, v := range vs {
		if v.Secret.IsZero() {
			out[k] = v.Literal
			continue
		}
		s, err := c.Secret(v.Secret)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", field, k, err)
		}
		out[k] = s
	}
	return out, nil
}

// Provision connects to the server and lists its tools.
func (m *MCP) Provision(ctx context.Context, c *component.Context) error {
	env, err := resolve(c, "env", m.Env)
	if err != nil {
		return err
	}
	headers, err := resolve(c, "headers", m.Headers)
	if err != nil {
		return err
	}
	cl, err := mcp.Connect(ctx, mcp.Config{
		Name: m.Name, Command: m.Command, Args: m.Args, Env: env, Dir: m.Dir,
		URL: m.URL, Headers: headers, HTTPClient: c.HTTPClient(),
		Timeout: m.Timeout.D(), MaxRestarts: m.MaxRestarts, MaxInline: m.MaxInline,
		Logger: slog.Default().With("component", c.ID()),
	})
	if err != nil {
		return err
	}
	m.client = cl
	return nil
}

// Tools returns the server's tools as last listed: at Provision, after a
// restart, and after the server said its list changed (a caller that
// built a registry keeps the tools it got).
func (m *MCP) Tools(context.Context) ([]*tool.Tool, error) {
	if m.client == nil {
		return nil, errors.New("tools asked of a component that is not provisioned")
	}
	return m.client.Tools(), nil
}

// Close disconnects and stops the server's process.
func (m *MCP) Close() error {
	if m.client == nil {
		return nil
	}
	err := m.client.Close()
	m.client = nil
	return err
}
