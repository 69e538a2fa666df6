package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/viz"
	"github.com/weftlang/weft/viz/flowviz"
)

// newGraphCmd builds `weft graph`.
func newGraphCmd(e env) *cobra.Command {
	var format, out, workflow string
	cmd := &cobra.Command{
		Use:   "graph FILE",
		Short: "Draw a workflow as Mermaid, Graphviz DOT or SVG",
		Long: `Graph draws the workflow of FILE (the first one, or --workflow NAME): nodes
shaped by kind (task, LLM, human, tool, subworkflow, map, join), edges
labelled with their conditions and annotated with the updates and overrides
they apply. The initial node gets a start marker and finals a double border.

A workflow with syntax errors is not drawn. One that fails its static checks
is drawn as written, after its diagnostics are printed to stderr.`,
		Example: `  weft graph examples/intentqa/intentqa.wf                 # Mermaid to stdout
  weft graph examples/intentqa/intentqa.wf --format svg -o intentqa.svg
  weft graph flow.wf --format dot | dot -Tpng -o flow.png`,
		Args: exactFiles(1, "one workflow file"),
		RunE: func(_ *cobra.Command, args []string) error {
			return drawGraph(e, args[0], format, out, workflow)
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "mermaid", "output format: `mermaid`, dot or svg")
	f.StringVarP(&out, "output", "o", "", "write to `FILE` instead of stdout")
	f.StringVar(&workflow, "workflow", "", "draw the workflow called `NAME` instead of the file's first")
	return cmd
}

func drawGraph(e env, path, format, out, workflow string) error {
	var render func(io.Writer, *viz.Graph) error
	switch strings.ToLower(format) {
	case "mermaid", "mmd":
		render = viz.Mermaid
	case "dot", "graphviz":
		render = viz.DOT
	case "svg":
		render = viz.SVG
	default:
		return usageErrorf("--format %q: want mermaid, dot or svg", format)
	}
	m, ds, err := loadModule(path)
	if err != nil {
		return err
	}
	if ds.HasErrors() {
		printDiags(e.stderr, ds, m)
		return silent(exitFailed)
	}
	w, err := pickWorkflow(m, workflow)
	if err != nil {
		return err
	}
	plan, cds, err := service.Compile(w, nil)
	if err != nil {
		return internal(err)
	}
	printDiags(e.stderr, dedupe(append(ds, cds...)), m)
	var buf bytes.Buffer
	if err := render(&buf, flowviz.Graph(w, plan)); err != nil {
		return internal(fmt.Errorf("drawing %s: %w", w.Name, err))
	}
	if out == "" || out == "-" {
		if _, err := e.stdout.Write(buf.Bytes()); err != nil {
			return internal(err)
		}
		return nil
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return internal(err)
	}
	return nil
}
