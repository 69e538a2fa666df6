package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/lang"
)

// newConvertCmd builds `weft convert`.
func newConvertCmd(e env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "convert FILE.json",
		Short: "Print an ollama-workflows JSON workflow as .wf source",
		Long: `Convert loads an ollama-workflows document (either format era) and prints
the equivalent .wf workflow: the same IR, so running the .wf file gives the
same result as running the JSON. The tasks keep their ollama-workflows
semantics through the owf.* actions, which take each task and its step as
inputs; the routing between tasks is written out as edges.`,
		Example: `  weft convert workflow.json > workflow.wf
  weft convert workflow.json -o workflow.wf && weft run workflow.wf --input "..."`,
		Args: exactFiles(1, "one ollama-workflows JSON file"),
		RunE: func(_ *cobra.Command, args []string) error {
			return convert(e, args[0], out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the .wf source to `FILE` instead of stdout")
	return cmd
}

func convert(e env, path, out string) error {
	if !isOWF(path) {
		return usageErrorf("%s: convert reads ollama-workflows JSON (a .json file)", path)
	}
	m, ds, err := loadModule(path)
	if err != nil {
		return err
	}
	printDiags(e.stderr, ds, m)
	if ds.HasErrors() {
		return silent(exitFailed)
	}
	src, err := lang.FormatWorkflow(m.Main())
	if err != nil {
		return failed(fmt.Errorf("converting %s: %w", path, err))
	}
	header := fmt.Sprintf("// Converted from %s by weft convert.\n// The owf.* actions carry out each task with ollama-workflows semantics.\n\n", path)
	src = append([]byte(header), src...)
	if out == "" || out == "-" {
		_, err = e.stdout.Write(src)
		if err != nil {
			return internal(err)
		}
		return nil
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return failed(err)
	}
	return nil
}
