package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weftlang/weft/component"
)

// serveConfig is `weft serve --config FILE`: the workflows a server
// serves and their components, the role langgraph.json has for LangGraph.
type serveConfig struct {
	// Graphs are the workflows served, by graph id.
	Graphs map[string]graphConfig `json:"graphs"`
	// Components are the components of every graph that names none.
	Components []component.Spec `json:"components"`
	// Store, Addr, APIKeyEnv and CORS are the flags of the same names;
	// a flag given on the command line wins.
	Store     string   `json:"store"`
	Addr      string   `json:"addr"`
	APIKeyEnv string   `json:"api_key_env"`
	CORS      []string `json:"cors"`

	dir string // the config file's directory: paths are relative to it
}

// graphConfig is one workflow of a serveConfig: a path, or an object.
type graphConfig struct {
	// Path is the workflow's file (.wf or ollama-workflows .json),
	// relative to the config file.
	Path string `json:"path"`
	// Workflow names the workflow in a module of several.
	Workflow string `json:"workflow"`
	// Description describes the assistant.
	Description string `json:"description"`
	// Components, when set, are the graph's own components, in place of
	// the config's.
	Components []component.Spec `json:"components"`
	// ContextTokens is the context window of its LLM actions.
	ContextTokens int `json:"context_tokens"`
}

// UnmarshalJSON takes "path" or an object.
func (g *graphConfig) UnmarshalJSON(b []byte) error {
	var p string
	if json.Unmarshal(b, &p) == nil {
		*g = graphConfig{Path: p}
		return nil
	}
	type plain graphConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var out plain
	if err := dec.Decode(&out); err != nil {
		return err
	}
	*g = graphConfig(out)
	return nil
}

// readServeConfig reads and checks a config file. Errors name the file
// and the field.
func readServeConfig(path string) (*serveConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--config: %v", err)
	}
	var c serveConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, usageErrorf("%s: %s", path, configError(data, err))
	}
	if len(c.Graphs) == 0 {
		return nil, usageErrorf("%s: graphs: no workflow to serve (want {\"graphs\": {\"NAME\": \"path/to/file.wf\"}})", path)
	}
	c.dir = filepath.Dir(path)
	for _, id := range c.graphIDs() {
		g := c.Graphs[id]
		switch {
		case id == "" || strings.ContainsAny(id, "/|:"):
			return nil, usageErrorf("%s: graphs: %q is not a graph id (no /, | or : in it)", path, id)
		case g.Path == "":
			return nil, usageErrorf("%s: graphs.%s.path: required", path, id)
		case g.ContextTokens < 0:
			return nil, usageErrorf("%s: graphs.%s.context_tokens: %d is negative", path, id, g.ContextTokens)
		}
		if !filepath.IsAbs(g.Path) {
			g.Path = filepath.Join(c.dir, g.Path)
			c.Graphs[id] = g
		}
	}
	return &c, nil
}

// graphIDs are the graph ids, sorted.
func (c *serveConfig) graphIDs() []string {
	ids := make([]string, 0, len(c.Graphs))
	for id := range c.Graphs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// configError words a JSON decoding error with the line and column of
// the offset it names, and the field.
func configError(data []byte, err error) string {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Sprintf("%d:%d: %v", line, col, syn)
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset)
		return fmt.Sprintf("%d:%d: %s: want %s, not a JSON %s", line, col, typ.Field, typ.Type, typ.Value)
	}
	return err.Error()
}

// lineCol is the 1-based line and column of byte offset off of data.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
