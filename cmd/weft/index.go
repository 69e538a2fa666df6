package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/retrieval"
	"github.com/weftlang/weft/tools"
)

// newIndexCmd builds `weft index`: a retrieval index file for --docs.
func newIndexCmd(e env) *cobra.Command {
	var out, embed string
	cmd := &cobra.Command{
		Use:   "index FILE",
		Short: "Build a retrieval index file from documents, for --docs",
		Long: `Index reads the documents of FILE (a TAT-QA JSON file) and writes them into a
retrieval index, a SQLite file with a full-text (FTS5) index, at --output.
A relative FILE not in the current directory is looked up in the data
directory ($WEFT_DATA, see weft data). A
run given --docs with that file opens it instead of indexing the documents
again. An existing index is updated: documents with the same id are replaced.
With --embed, every document's vector is stored too, for hybrid searches
(the run then needs the same --embed).`,
		Example: `  weft index tatqa/tatqa_dataset_dev.json -o tatqa.db    # found in the data directory
  weft run examples/intentqa/app.wf --docs tatqa.db --llm ollama:llama3.1 --input "..."`,
		Args: exactFiles(1, "one documents file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return buildIndex(cmd.Context(), e, resolveData(getenvOf(e), args[0]), out, embed)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the index `FILE` to write (required)")
	cmd.Flags().StringVar(&embed, "embed", "", "embed the documents with `SPEC` (ollama:MODEL or openai:MODEL) for hybrid search (default $WEFT_EMBED)")
	return cmd
}

func buildIndex(ctx context.Context, e env, path, out, embed string) error {
	if out == "" {
		return usageErrorf("--output FILE is required")
	}
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return usageErrorf("%s: only TAT-QA JSON files can be indexed", path)
	}
	if _, err := os.Stat(path); err != nil {
		return usageErrorf("%v", err)
	}
	start := time.Now()
	data, err := retrieval.LoadTATQA(path)
	if err != nil {
		return failed(err)
	}
	opts, err := embedOptions(cmp.Or(embed, getenvOf(e)(providers.EmbedEnvVar)), getenvOf(e))
	if err != nil {
		return usageErrorf("%v", err)
	}
	ix, err := tools.IndexDocuments(ctx, out, opts, data.Documents)
	if err != nil {
		return failed(fmt.Errorf("--output %s: %w", out, err))
	}
	n, err := ix.Len(ctx)
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return failed(err)
	}
	fmt.Fprintf(e.stdout, "%s: %d documents (%d added) in %s\n", out, n, len(data.Documents), time.Since(start).Round(time.Millisecond))
	return nil
}
