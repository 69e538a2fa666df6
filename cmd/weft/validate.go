package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/service"
)

// newValidateCmd builds `weft validate`.
func newValidateCmd(e env) *cobra.Command {
	var asJSON bool
	var stubs string
	cmd := &cobra.Command{
		Use:   "validate FILE|DIR...",
		Short: "Check workflow files without running them",
		Long: `Validate parses and checks each file (under each DIR, the .wf files and
the ollama-workflows .json files, those with "tasks" and "steps") and
prints every error and warning with its source line and a caret, then a
summary line per file. A file that declares no workflow is an error. Action names are not checked, since actions may be
registered in Go, unless --stubs names the actions available.`,
		Example: `  weft validate examples/intentqa/intentqa.wf
  weft validate --json flows/`,
		Args: minFiles("at least one workflow file"),
		RunE: func(_ *cobra.Command, args []string) error {
			return validateFiles(e, args, asJSON, stubs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diagnostics as a JSON array")
	cmd.Flags().StringVar(&stubs, "stubs", "", "check action names against the built-ins and the actions stubbed in `FILE`")
	return cmd
}

// diagJSON is one diagnostic in `weft validate --json`.
type diagJSON struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

func validateFiles(e env, args []string, asJSON bool, stubs string) error {
	files, err := expandFiles(args)
	if err != nil {
		return err
	}
	var hasAction func(string) bool
	if stubs != "" {
		reg := engine.NewRegistry()
		action.Register(reg)
		if reg, _, err = stubRegistry(reg, stubs); err != nil {
			return err
		}
		hasAction = reg.Has
	}
	all := []diagJSON{}
	bad := false
	importers := importersOf(files)
	for _, path := range files {
		shown := termSafe(path, false)
		ds, nodes, edges, err := validateFile(path, importers[cleanAbs(path)], hasAction, func(ds flow.Diagnostics, src func(string) []byte) {
			if !asJSON {
				printDiagsSrc(e.stdout, ds, src)
			}
		})
		if err != nil {
			return err
		}
		errs, warns := len(ds.Errors()), len(ds.Warnings())
		if errs > 0 {
			bad = true
		}
		if asJSON {
			for _, d := range ds {
				file := d.Pos.File
				if file == "" {
					file = path
				}
				all = append(all, diagJSON{File: file, Line: d.Pos.Line, Col: d.Pos.Col, Severity: d.Severity.String(), Code: d.Code, Message: lang.ClipMessage(d.Msg)})
			}
			continue
		}
		switch {
		case errs == 0 && nodes < 0:
			fmt.Fprintf(e.stdout, "%s: ok (actions only, imported by %s)\n", shown, termSafe(importers[cleanAbs(path)], false))
		case errs > 0:
			fmt.Fprintf(e.stdout, "%s: %s, %s\n", shown, plural(errs, "error"), plural(warns, "warning"))
		case warns > 0:
			fmt.Fprintf(e.stdout, "%s: ok, %s (%s, %s)\n", shown, plural(warns, "warning"), plural(nodes, "node"), plural(edges, "edge"))
		default:
			fmt.Fprintf(e.stdout, "%s: ok (%s, %s)\n", shown, plural(nodes, "node"), plural(edges, "edge"))
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return internal(err)
		}
	}
	if bad {
		return silent(exitFailed)
	}
	return nil
}

// validateFile loads path and compiles every workflow it declares. It
// returns the diagnostics (sorted, without repeats), and the number of
// nodes and edges of the workflows declared in the file itself (of those it
// imports, when it declares none). A file that declares and imports no
// workflow is an error, as `weft run` of it is, unless it declares actions
// and importedBy (a file of the same validation) imports it: then nodes is
// -1. show is called with the diagnostics and the sources to print them
// from.
func validateFile(path, importedBy string, hasAction func(string) bool, show func(flow.Diagnostics, func(string) []byte)) (flow.Diagnostics, int, int, error) {
	m, ds, err := loadModule(path)
	if err != nil {
		return nil, 0, 0, err
	}
	nodes, edges := 0, 0
	if !ds.HasErrors() {
		own := 0
		allNodes, allEdges := 0, 0
		for _, w := range m.Workflows {
			_, cds, err := service.Compile(w, &service.OpenOptions{HasAction: hasAction})
			if err != nil {
				return nil, 0, 0, internal(err)
			}
			ds = append(ds, cds...)
			allNodes += len(w.Nodes)
			allEdges += len(w.Edges)
			if w.Pos.File == path || w.Pos.File == "" {
				own++
				nodes += len(w.Nodes)
				edges += len(w.Edges)
			}
		}
		switch {
		case len(m.Workflows) == 0 && len(m.Bindings) > 0 && importedBy != "":
			nodes = -1
		case len(m.Workflows) == 0 && len(m.Bindings) > 0:
			ds = append(ds, flow.Diagnostic{Pos: flow.Pos{File: path}, Severity: flow.Error, Code: "no-workflow", Msg: "declares no workflow, only actions (validate the file that imports them)"})
		case len(m.Workflows) == 0:
			ds = append(ds, flow.Diagnostic{Pos: flow.Pos{File: path}, Severity: flow.Error, Code: "no-workflow", Msg: "declares no workflow"})
		}
		if own == 0 && nodes >= 0 {
			// A file that only binds actions for the workflows it imports
			// (examples/intentqa/app.wf): count what it checked.
			nodes, edges = allNodes, allEdges
		}
	}
	ds = dedupe(ds)
	ds.Sort()
	show(ds, m.Source)
	return ds, nodes, edges, nil
}

// importersOf maps each of files (by cleanAbs) that another of files
// imports to the first file importing it. Files that do not load are left
// out: validateFile reports them.
func importersOf(files []string) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		m, _, err := loadModule(f)
		if err != nil || m == nil {
			continue
		}
		for _, imp := range m.Files {
			if k := cleanAbs(imp.Name); k != cleanAbs(f) {
				if _, ok := out[k]; !ok {
					out[k] = f
				}
			}
		}
	}
	return out
}

// cleanAbs is path made absolute and clean, to compare file names; path
// itself when it cannot be made absolute.
func cleanAbs(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}
