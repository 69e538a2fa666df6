package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/service"
)

// readSource reads a file named on the command line. A file that cannot be
// read is a usage error (exit 2).
func readSource(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return src, nil
}

// loadModule reads and compiles the .wf file at path and the files it
// imports, or the ollama-workflows document at path (a .json file). The Module comes back even with errors, for printing them.
func loadModule(path string) (*lang.Module, flow.Diagnostics, error) {
	src, err := readSource(path)
	if err != nil {
		return nil, nil, err
	}
	m, _, ds, err := service.LoadModule(context.Background(), service.Source{Name: path, Data: src})
	if err != nil {
		return nil, nil, failed(err)
	}
	return m, ds, nil
}

// pickWorkflow returns the workflow called name, or the module's main
// workflow when name is empty.
func pickWorkflow(m *lang.Module, name string) (*flow.Workflow, error) {
	if name == "" {
		if w := m.Main(); w != nil {
			return w, nil
		}
		return nil, failed(fmt.Errorf("%s declares no workflow", rootFile(m)))
	}
	if w := m.Workflow(name); w != nil {
		return w, nil
	}
	var names []string
	for _, w := range m.Workflows {
		names = append(names, w.Name)
	}
	return nil, usageErrorf("no workflow %s in %s%s (have: %s)", name, rootFile(m), flow.Suggest(name, names), strings.Join(names, ", "))
}

func rootFile(m *lang.Module) string {
	if len(m.Files) > 0 {
		return m.Files[0].Name
	}
	return "the file"
}

// printDiags writes diagnostics with the source line and a caret under the
// column. m may be nil.
func printDiags(w io.Writer, ds flow.Diagnostics, m *lang.Module) {
	var src func(string) []byte
	if m != nil {
		src = m.Source
	}
	printDiagsSrc(w, ds, src)
}

// printDiagsSrc is printDiags with the sources given by a function.
func printDiagsSrc(w io.Writer, ds flow.Diagnostics, src func(string) []byte) {
	_ = lang.FormatDiagnostics(w, ds, src)
}

// dedupe drops diagnostics that repeat an earlier one exactly.
func dedupe(ds flow.Diagnostics) flow.Diagnostics { return service.Dedupe(ds) }

// expandFiles replaces each directory among args by the .wf files under it
// and the .json files that look like ollama-workflows documents (an object
// with "tasks" and "steps"), sorted; files are kept as given.
func expandFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != a && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".wf") || isOWF(p) && looksLikeOWF(p)) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}

// plural formats "1 error", "3 errors".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// looksLikeOWF reports whether the JSON file at path is an object with
// "tasks" and "steps", as ollama-workflows documents are.
func looksLikeOWF(path string) bool {
	src, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(src, &top) != nil {
		return false
	}
	_, tasks := top["tasks"]
	_, steps := top["steps"]
	return tasks && steps
}
