package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/llm/llmtest"
)

// weft eval spider scores the SQL the sqlanalyst agent writes: with a
// scripted model writing the gold SQL, a wrong query and a broken one for
// the first three questions, the report says correct, wrong and error.
func TestEvalSpiderScoresRightWrongBroken(t *testing.T) {
	questions, err := datadir.Find(datadir.SpiderQueries) // as weft data fetch spider makes it
	if err != nil {
		questions = datadir.Require(t, datadir.SpiderGoldJSON) // as the project's machines keep it
	}
	db := datadir.Require(t, datadir.ChinookSQLite)
	agent := func(sql string, analysis ...llmtest.Reply) []llmtest.Reply {
		r := []llmtest.Reply{
			llmtest.JSON(map[string]any{"decision": "continue"}),
			llmtest.JSON(map[string]any{"clarity": "clear"}),
			llmtest.Text("count the rows"),
			llmtest.JSON(map[string]any{"queries": []string{sql}}),
		}
		return append(append(r, analysis...), llmtest.Text("the answer"))
	}
	var script []llmtest.Reply
	script = append(script, agent("SELECT count(*) FROM ALBUM", llmtest.Text("insight"), llmtest.Text("explanation"))...)
	script = append(script, agent("SELECT count(*) FROM Artist", llmtest.Text("insight"), llmtest.Text("explanation"))...)
	broken := "SELECT Name FRM Genre"
	script = append(script, agent(broken, llmtest.Text(broken), llmtest.Text(broken), llmtest.Text(broken))...)
	srv := llmtest.NewOpenAIServer(script...)
	defer srv.Close()
	getenv := openAIEnv(srv, "sk-test")
	r := weft(t, []string{"eval", "spider", filepath.Join("..", "..", "examples", "sqlanalyst", "sqlanalyst.wf"),
		"--questions", questions, "--db", db, "--limit", "3", "--llm", "openai:scripted", "--json"}, func(e *env) { e.getenv = getenv })
	r.wantCode(t, 0)
	var rep struct {
		Total, Correct, Wrong, Errors int
		Results                       []struct {
			SQL     string
			Outcome string
			Message string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.Total != 3 || rep.Correct != 1 || rep.Wrong != 1 || rep.Errors != 1 {
		t.Fatalf("report = %+v", rep)
	}
	want := []string{"correct", "wrong", "error"}
	for i, res := range rep.Results {
		if !strings.EqualFold(res.Outcome, want[i]) {
			t.Errorf("question %d: outcome %s (%s), want %s", i, res.Outcome, res.Message, want[i])
		}
	}
	if rep.Results[2].SQL != broken || !strings.Contains(rep.Results[2].Message, "syntax error") {
		t.Errorf("broken SQL result = %+v", rep.Results[2])
	}
	if n := len(srv.Requests()); n != len(script) {
		t.Errorf("%d model calls, want %d", n, len(script))
	}
}

// weft eval recall measures the retrieve tool on TAT-QA without a model.
func TestEvalRecall(t *testing.T) {
	docs := datadir.Require(t, "tatqa/tatqa_dataset_dev.json")
	r := weftProcess(t, []string{"eval", "recall", "--docs", docs, "-k", "1,5,10"})
	r.wantCode(t, 0)
	m := regexp.MustCompile(`^recall@1 (0\.\d{3}), recall@5 (0\.\d{3}), recall@10 (0\.\d{3}) over 1668 questions, 278 contexts`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("stdout = %q", r.stdout)
	}
	// The READMEs quote these figures: they must be what the command prints.
	for file, want := range map[string]string{
		"../../examples/intentqa/README.md":    "| **" + m[1] + "** | **" + m[2] + "** | **" + m[3] + "** |",
		"../../README.md":                      "retrieval recall@10 " + m[3] + " on 1,668 TAT-QA questions",
		"../../examples/adaptiverag/README.md": m[3] + " on the 1,668 TAT-QA dev questions, `weft eval recall`",
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("%s does not quote what weft eval recall prints today: want %q", file, want)
		}
	}
}
