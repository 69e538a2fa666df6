package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/internal/datadir"
)

// newDataCmd builds `weft data`: the public datasets of the examples.
func newDataCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Fetch and list the public datasets the examples use",
		Long: `Data fetches the public datasets weft's examples, evaluations and tests use,
from pinned commits, verifying every file's SHA-256:

  tatqa    the TAT-QA dev set (financial reports; CC BY 4.0)
  chinook  the Chinook database, SQLite and PostgreSQL (MIT)
  spider   the Spider questions for Chinook (CC BY-SA 4.0)

They go into the data directory: --data DIR, else $WEFT_DATA, else
` + "~/.cache/weft/data" + ` (the per-user cache directory). Every command that
takes data finds it there: eval recall and eval spider by default, and a
relative --docs, --db or index path that is not in the current directory.`,
	}
	cmd.AddCommand(newDataFetchCmd(e), newDataListCmd(e), newDataStatusCmd(e))
	return cmd
}

// dataFetchOptions are the flags of `weft data fetch`.
type dataFetchOptions struct {
	dir  string
	base string
}

func newDataFetchCmd(e env) *cobra.Command {
	var o dataFetchOptions
	cmd := &cobra.Command{
		Use:   "fetch NAME...|all",
		Short: "Download datasets into the data directory, checksum-verified",
		Long: `Fetch downloads the files of each dataset named (tatqa, chinook, spider, or
all) into the data directory. Every file is written to a temporary file,
checked against its pinned SHA-256, and renamed into place only when it
matches: a mismatch is refused loudly and leaves nothing half-written.
Files already there and verified are not fetched again.`,
		Example: `  weft data fetch tatqa
  WEFT_DATA=$HOME/weft-data weft data fetch all`,
		Args: minFiles("a dataset name (tatqa, chinook, spider) or all"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return dataFetch(cmd.Context(), e, args, &o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "data", "", "the data `DIR` (default $WEFT_DATA, else ~/.cache/weft/data)")
	cmd.Flags().StringVar(&o.base, "base-url", datadir.DefaultBaseURL, "fetch from a mirror of `URL` that keeps its paths")
	return cmd
}

// dataDir is the data directory fetch writes to and status looks at
// first: dir, else $WEFT_DATA, else the per-user default.
func dataDir(e env, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	d, err := datadir.Dir(getenvOf(e))
	if err != nil {
		return "", usageErrorf("%v", err)
	}
	return d, nil
}

// pickDatasets returns the datasets names name ("all": every one).
func pickDatasets(names []string) ([]datadir.Dataset, error) {
	all := datadir.Datasets()
	var out []datadir.Dataset
	for _, n := range names {
		if strings.EqualFold(n, "all") {
			return all, nil
		}
		d, ok := datadir.Lookup(all, n)
		if !ok {
			known := make([]string, len(all))
			for i, d := range all {
				known[i] = d.Name
			}
			return nil, usageErrorf("no dataset %q (have: %s, or all)", n, strings.Join(known, ", "))
		}
		out = append(out, d)
	}
	return out, nil
}

func dataFetch(ctx context.Context, e env, names []string, o *dataFetchOptions) error {
	ds, err := pickDatasets(names)
	if err != nil {
		return err
	}
	dir, err := dataDir(e, o.dir)
	if err != nil {
		return err
	}
	for _, d := range ds {
		var fetched, present int
		fc := &datadir.Fetcher{Dir: dir, BaseURL: o.base, Client: http.DefaultClient, Progress: func(_ datadir.File, what string) {
			if what == "present" {
				present++
			} else {
				fetched++
			}
		}}
		if err := fc.Fetch(ctx, d); err != nil {
			var ce *datadir.ChecksumError
			if errors.As(err, &ce) {
				return failed(fmt.Errorf("data fetch %s: %w; the file was not written (a mirror or a proxy changed it, or the source moved)", d.Name, err))
			}
			return failed(fmt.Errorf("data fetch %s: %w", d.Name, err))
		}
		fmt.Fprintf(e.stdout, "%s: %s fetched, %d already present, all verified, in %s\n", d.Name, plural(fetched, "file"), present, dir)
	}
	return nil
}

func newDataListCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the datasets fetch knows, their sources and licenses",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tFILES\tSIZE\tLICENSE\tSOURCE")
			for _, d := range datadir.Datasets() {
				var size int64
				for _, f := range d.Files {
					size += f.Size
				}
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\n", d.Name, len(d.Files), byteSize(size), d.License, d.Source)
			}
			if err := w.Flush(); err != nil {
				return internal(err)
			}
			return nil
		},
	}
}

func newDataStatusCmd(e env) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show which datasets are present, where, and whether they verify",
		Long: `Status shows, for each dataset, where the commands find it (--data DIR,
$WEFT_DATA, ../shared/data beside the checkout, or ~/.cache/weft/data) and
whether its files have their pinned checksums.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return dataStatus(e, dir)
		},
	}
	cmd.Flags().StringVar(&dir, "data", "", "the data `DIR` (default $WEFT_DATA, else ../shared/data, else ~/.cache/weft/data)")
	return cmd
}

func dataStatus(e env, dir string) error {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSTATE\tWHERE")
	for _, d := range datadir.Datasets() {
		root, where := "", ""
		if p, err := findData(e, dir, d.Files[0].Path); err == nil {
			root = strings.TrimSuffix(p, filepath.FromSlash(d.Files[0].Path))
			where = filepath.Clean(root)
		}
		if root == "" {
			state := "missing: weft data fetch " + d.Name
			if d.Name == "spider" {
				if p, err := findData(e, dir, datadir.SpiderGoldJSON); err == nil {
					state, where = "present as one JSON list (not verified)", p
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", d.Name, state, where)
			continue
		}
		counts := map[datadir.State]int{}
		for _, f := range d.Files {
			st, err := datadir.Check(root, f)
			if err != nil {
				return failed(err)
			}
			counts[st]++
		}
		state := "verified"
		if counts[datadir.Verified] != len(d.Files) {
			state = fmt.Sprintf("%d of %d files verified, %d missing, %d corrupt: weft data fetch %s",
				counts[datadir.Verified], len(d.Files), counts[datadir.Missing], counts[datadir.Corrupt], d.Name)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", d.Name, state, where)
	}
	if err := w.Flush(); err != nil {
		return internal(err)
	}
	return nil
}

// findData returns the path of sub under dir when dir is given, else
// where datadir finds it ($WEFT_DATA, ../shared/data, the per-user
// default).
func findData(e env, dir, sub string) (string, error) {
	if dir != "" {
		p := filepath.Join(dir, filepath.FromSlash(sub))
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		return p, nil
	}
	return datadir.FindWith(getenvOf(e), filepath.FromSlash(sub))
}

// resolveData returns path as a command reads a --docs, --db or index
// path: as given when it exists, is absolute, starts with "." or is a URL;
// else, when the data directory holds it, its path there
// ("tatqa/tatqa_dataset_dev.json"). A path found nowhere is returned
// unchanged, for the caller to report.
func resolveData(getenv func(string) string, path string) string {
	if path == "" || filepath.IsAbs(path) || strings.HasPrefix(path, ".") || strings.Contains(path, "://") || strings.HasPrefix(path, "file:") || strings.HasPrefix(path, "bleve:") {
		return path
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if p, err := datadir.FindWith(getenv, path); err == nil {
		return p
	}
	return path
}

// byteSize formats n bytes as "1.6 MB" or "25 KB".
func byteSize(n int64) string {
	if n >= 1e6 {
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.0f KB", float64(n)/1e3)
}
