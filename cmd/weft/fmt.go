package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/lang"
)

// newFmtCmd builds `weft fmt`.
func newFmtCmd(e env) *cobra.Command {
	var write, list bool
	cmd := &cobra.Command{
		Use:   "fmt [-w] [-l] FILE|DIR...",
		Short: "Print workflow files in canonical form",
		Long: `Fmt prints each file (the .wf files under each DIR; ollama-workflows
JSON files are left alone) in canonical form.
With -w it rewrites the files whose formatting differs, atomically (a temporary
file in the same directory renamed over the original, keeping its
permissions). With -l it lists the files whose formatting differs instead of
printing them, and exits 1 if there are any (with -w too, it lists the files
it rewrote and exits 0). A file with syntax errors is never rewritten: its
errors are printed and weft exits 1.`,
		Example: `  weft fmt flow.wf
  weft fmt -l .
  weft fmt -w examples/`,
		Args: minFiles("at least one workflow file"),
		RunE: func(_ *cobra.Command, args []string) error {
			return fmtFiles(e, args, write, list)
		},
	}
	cmd.Flags().BoolVarP(&write, "write", "w", false, "rewrite files whose formatting differs")
	cmd.Flags().BoolVarP(&list, "list", "l", false, "list files whose formatting differs")
	return cmd
}

func fmtFiles(e env, args []string, write, list bool) error {
	files, err := expandFiles(args)
	if err != nil {
		return err
	}
	named := map[string]bool{}
	for _, a := range args {
		named[a] = true
	}
	bad, differ := false, false
	for _, path := range files {
		if isOWF(path) {
			// Under a DIR, ollama-workflows JSON is not .wf source: skip
			// it; named on the command line, say why not.
			if named[path] {
				return usageErrorf("%s: fmt formats .wf files; this is an ollama-workflows JSON file (weft convert prints it as .wf)", path)
			}
			continue
		}
		src, err := readSource(path)
		if err != nil {
			return err
		}
		f, ds := lang.ParseFile(path, src)
		if ds.HasErrors() {
			printDiagsSrc(e.stderr, ds, func(string) []byte { return src })
			bad = true
			continue
		}
		out := lang.Format(f)
		changed := !bytes.Equal(src, out)
		if changed {
			differ = true
		}
		if list && changed {
			fmt.Fprintln(e.stdout, termSafe(path, false))
		}
		if write {
			if changed {
				if err := writeFileAtomic(path, out); err != nil {
					return internal(err)
				}
			}
			continue
		}
		if !list {
			if _, err := e.stdout.Write(out); err != nil {
				return internal(err)
			}
		}
	}
	if bad || (list && !write && differ) {
		return silent(exitFailed)
	}
	return nil
}

// writeFileAtomic replaces the file at path by data: it writes a temporary
// file in the same directory, gives it the original's permissions, syncs
// it and renames it over the original, so a crash leaves either the old
// or the new file, never a partial one. A symbolic link is followed: the
// file it points to is replaced, and the link kept.
func writeFileAtomic(path string, data []byte) (err error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}
