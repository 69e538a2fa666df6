package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/retrieval"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/sqltool"
	"github.com/weftlang/weft/sqltool/spider"
	"github.com/weftlang/weft/store/memory"
	"github.com/weftlang/weft/tools"
)

// newEvalCmd builds `weft eval`: measurements of the examples on public
// datasets.
func newEvalCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure a workflow or a component on a dataset",
		Long: `Eval measures an agent or one of its components on a public dataset:

  weft eval spider FILE   execution accuracy of the SQL a workflow writes, on
                          the Spider questions for Chinook
  weft eval recall        recall@k of the retrieve tool on TAT-QA (no model)

The datasets are found under --data DIR, else $WEFT_DATA, else ../shared/data
beside the checkout, else ~/.cache/weft/data: weft data fetch puts them there.`,
	}
	cmd.AddCommand(newEvalSpiderCmd(e), newEvalRecallCmd(e))
	return cmd
}

// evalSpiderOptions are the flags of `weft eval spider`.
type evalSpiderOptions struct {
	runOptions
	data      string
	questions string
	output    string
	limit     int
	verbose   bool
}

func newEvalSpiderCmd(e env) *cobra.Command {
	var o evalSpiderOptions
	cmd := &cobra.Command{
		Use:   "spider FILE",
		Short: "Execution accuracy of a text-to-SQL workflow on the Spider questions for Chinook",
		Long: `Spider runs the workflow of FILE once per Spider question (its input_text is
the question), takes the first SQL query of its output --output (a String or
a List of Strings), runs it and the question's gold SQL read-only on --db,
and compares their result sets as Spider's execution accuracy does: rows as
a multiset, in order only when the gold query has a top-level ORDER BY,
column names ignored, numbers equal within 1e-6. A run that fails or writes
no SQL is scored as such. The report lists every question and the totals.`,
		Example: `  weft eval spider examples/sqlanalyst/sqlanalyst.wf --llm ollama:qwen2.5-coder
  weft eval spider examples/sqlanalyst/sqlanalyst.wf --llm replay:run.jsonl --limit 10 -v`,
		Args: exactFiles(1, "one workflow file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return evalSpider(cmd.Context(), e, args[0], &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "the data `DIR` (default $WEFT_DATA, else ../shared/data, else ~/.cache/weft/data)")
	f.StringVar(&o.questions, "questions", "", "the questions: a JSON `FILE` of {id, question, gold_sql}, or a directory of N.sql files with a \"-- question:\" line (default DATA/spider-chinook/queries, as weft data fetch spider makes it, else DATA/spider-chinook/chinook_spider_gold.json)")
	f.StringVar(&o.output, "output", "sql", "the final output holding the SQL (`NAME`)")
	f.IntVar(&o.limit, "limit", 0, "evaluate only the first `N` questions (0: all)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every question's outcome")
	f.StringVar(&o.llm, "llm", "", "the model of LLM actions that name none: `SPEC` (default $WEFT_LLM)")
	f.StringVar(&o.record, "record", "", "record every LLM exchange to `FILE`")
	f.DurationVar(&o.llmTimeout, "llm-timeout", defaultPolicy.Timeout, "bound on each LLM call (`DURATION`)")
	f.StringVar(&o.workflow, "workflow", "", "evaluate the workflow called `NAME` instead of the file's first")
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	toolFlags(f, &o.runOptions)
	modelFlags(f, &o.runOptions)
	return cmd
}

// dataPath finds sub under dir, else where datadir finds it ($WEFT_DATA,
// ../shared/data beside the checkout, the per-user default); a missing
// dataset is a usage error saying how to fetch it.
func dataPath(e env, dir, sub string) (string, error) {
	p, err := findData(e, dir, sub)
	if err != nil {
		if dir != "" {
			return "", usageErrorf("%v; %s", err, datadir.Fetch)
		}
		return "", usageErrorf("%v", err)
	}
	return p, nil
}

// spiderQuestions finds the Spider questions: the directory of N.sql files
// `weft data fetch spider` makes, else the JSON list the project's
// machines keep.
func spiderQuestions(e env, dir string) (string, error) {
	p, err := dataPath(e, dir, datadir.SpiderQueries)
	if err == nil {
		return p, nil
	}
	if q, jerr := findData(e, dir, datadir.SpiderGoldJSON); jerr == nil {
		return q, nil
	}
	return "", err
}

func evalSpider(ctx context.Context, e env, path string, o *evalSpiderOptions) error {
	qpath := resolveData(getenvOf(e), o.questions)
	var err error
	if qpath == "" {
		if qpath, err = spiderQuestions(e, o.data); err != nil {
			return err
		}
	}
	qs, err := spider.Load(qpath)
	if err != nil {
		return usageErrorf("--questions: %v", err)
	}
	if o.limit > 0 && o.limit < len(qs) {
		qs = qs[:o.limit]
	}
	o.db = resolveData(getenvOf(e), cmp.Or(o.db, getenvOf(e)(envDB)))
	if o.db == "" {
		if o.db, err = dataPath(e, o.data, datadir.ChinookSQLite); err != nil {
			return err
		}
	}
	p, err := prepare(e, path, &o.runOptions)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(p.plan.Nodes, func(pn *flow.PlanNode) bool {
		return pn.Final && slices.ContainsFunc(pn.Outputs, func(out flow.PlanOutput) bool { return out.Name == o.output })
	}) {
		return usageErrorf("no final node of %s has an output %q (set --output)", path, o.output)
	}
	specs, err := runSpecs(e, &o.runOptions, p.tools, p.owfActions, true)
	if err != nil {
		return err
	}
	svc, closeSvc, err := newService(e, &o.runOptions, memory.New(), specs, nil)
	if err != nil {
		return err
	}
	defer closeSvc()
	if err := p.check(ctx, e, &o.runOptions, svc, specs); err != nil {
		return err
	}
	wf := p.wf
	db, err := sqltool.Open(ctx, o.db, nil)
	if err != nil {
		return failed(fmt.Errorf("--db %s: %w", redact.DSN(o.db), err))
	}
	defer db.Close()
	predict := func(ctx context.Context, q spider.Question) (string, error) {
		res, err := svc.Run(ctx, service.StartRequest{Workflow: wf, Components: specs.components, ContextTokens: o.contextTokens, Input: map[string]flow.Value{flow.InputText: flow.StringValue(q.Question)}})
		if err != nil {
			return "", err
		}
		if res.Status != engine.Completed {
			return "", fmt.Errorf("the run ended %s", res.Status)
		}
		out := res.Output(o.output)
		var sql string
		switch out.Kind() {
		case flow.KindString:
			sql = out.Str()
		case flow.KindList:
			if l := out.List(); len(l) > 0 {
				sql = l[0].Str()
			}
		}
		if strings.TrimSpace(sql) == "" {
			why := ""
			if s := res.Output("scenario").Str(); s != "" {
				why = " (scenario " + s + ")"
			}
			return "", errors.New("the workflow wrote no SQL" + why)
		}
		return sql, nil
	}
	start := time.Now()
	rep, err := spider.Evaluate(ctx, db, qs, predict)
	if err != nil {
		return failed(err)
	}
	elapsed := time.Since(start)
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return internal(err)
		}
		return nil
	}
	if o.verbose {
		if err := rep.WriteText(e.stdout); err != nil {
			return internal(err)
		}
		fmt.Fprintln(e.stdout)
	}
	fmt.Fprintf(e.stdout, "execution accuracy: %d/%d = %.3f (wrong %d, SQL errors %d, no SQL %d, gold failed %d) in %s, %.2f s per question\n",
		rep.Correct, rep.Total, rep.Accuracy(), rep.Wrong, rep.Errors, rep.PredictFailed, rep.GoldFailed,
		elapsed.Round(time.Millisecond), elapsed.Seconds()/float64(max(rep.Total, 1)))
	return nil
}

// evalRecallOptions are the flags of `weft eval recall`.
type evalRecallOptions struct {
	data  string
	docs  string
	embed string
	ks    []int
}

func newEvalRecallCmd(e env) *cobra.Command {
	var o evalRecallOptions
	cmd := &cobra.Command{
		Use:   "recall",
		Short: "Recall@k of the retrieve tool on the TAT-QA questions (no model needed)",
		Long: `Recall indexes the TAT-QA contexts as the retrieve tool does (--docs, default
DATA/tatqa/tatqa_dataset_dev.json) and searches every question: recall@k is
the share of questions whose gold context is among the first k contexts.
With --embed, searches are hybrid: BM25 and the cosine of the embedding
model's vectors, fused by reciprocal rank.`,
		Example: `  weft eval recall
  weft eval recall --docs tatqa_dataset_dev.json -k 1,5,10,20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return evalRecall(cmd.Context(), e, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "the data `DIR` (default $WEFT_DATA, else ../shared/data, else ~/.cache/weft/data)")
	f.StringVar(&o.docs, "docs", "", "a TAT-QA JSON `FILE` (default DATA/tatqa/tatqa_dataset_dev.json)")
	f.IntSliceVarP(&o.ks, "k", "k", []int{1, 5, 10}, "the cut-offs `K,...`")
	f.StringVar(&o.embed, "embed", "", "search by BM25 and vectors of the embedding model `SPEC` (ollama:MODEL or openai:MODEL; default $WEFT_EMBED)")
	return cmd
}

func evalRecall(ctx context.Context, e env, o *evalRecallOptions) error {
	path := resolveData(getenvOf(e), o.docs)
	var err error
	if path == "" {
		if path, err = dataPath(e, o.data, datadir.TATQADev); err != nil {
			return err
		}
	}
	data, err := retrieval.LoadTATQA(path)
	if err != nil {
		return usageErrorf("--docs: %v", err)
	}
	start := time.Now()
	opts, err := embedOptions(cmp.Or(o.embed, getenvOf(e)(providers.EmbedEnvVar)), getenvOf(e))
	if err != nil {
		return usageErrorf("%v", err)
	}
	ix, err := tools.IndexDocuments(ctx, ":memory:", opts, data.Documents)
	if err != nil {
		return failed(err)
	}
	defer ix.Close()
	indexed := time.Since(start)
	start = time.Now()
	rec, err := retrieval.Recall(ctx, ix, data.Questions, o.ks)
	if err != nil {
		return failed(err)
	}
	searched := time.Since(start)
	ks := slices.Clone(o.ks)
	slices.Sort(ks)
	parts := make([]string, 0, len(ks))
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("recall@%d %.3f", k, rec[k]))
	}
	fmt.Fprintf(e.stdout, "%s over %d questions, %d contexts (indexed in %s, %.2f ms per search)\n",
		strings.Join(parts, ", "), len(data.Questions), len(data.Documents), indexed.Round(time.Millisecond),
		float64(searched.Microseconds())/1000/float64(max(len(data.Questions), 1)))
	return nil
}
